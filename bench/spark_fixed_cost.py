"""Benchmark: the fixed cost of ``analyze --engine spark`` on a small input, round 5's way against
analyze_spark's own (spark_engine.prepare), in one Spark session, alternated.

Spark's cost on a few dozen events is not data: it is planning, code generation and one
scheduling round per stage. So this counts what does not depend on the machine's load (Spark
jobs and stages, from the session's status tracker), beside wall time and the JVM's CPU seconds
(which do). The input is seed 002 (tests/corpus: two HiveServer2 threads racing), every detector.

    .venv/bin/python bench/spark_fixed_cost.py --rounds 2
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_detector_cases import load_case, scenario  # noqa: E402 - the tests' own loader

from commitsleuth.forensics import spark_engine  # noqa: E402
from commitsleuth.forensics.analyze import analyze, finish, selected  # noqa: E402
from commitsleuth.store import Store  # noqa: E402


def jvm_cpu(spark) -> float:
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")


def one(spark, store, parquet: str, how: str, group: str) -> dict:
    """One analyze on Spark (``round5`` or ``now``): jobs, stages, wall, JVM CPU, findings."""
    sc = spark.sparkContext
    sc.setJobGroup(group, group)
    detectors = selected(None)
    cpu, t = jvm_cpu(spark), time.perf_counter()
    if how == "round5":  # bench/scale.py's round-5 child: every view checkpointed as rows, 4 partitions
        spark.conf.set("spark.sql.shuffle.partitions", "4")
        kept = spark_engine.register(spark, parquet)
    else:
        spark.conf.unset("spark.sql.shuffle.partitions")
        kept = spark_engine.prepare(spark, parquet, detectors)
    findings = finish(store, spark_engine.run_detectors(spark, store, detectors))
    wall, cpu = time.perf_counter() - t, jvm_cpu(spark) - cpu
    for frame in kept:
        frame.unpersist()
    jobs = sc.statusTracker().getJobIdsForGroup(group)
    stages = sum(len(sc.statusTracker().getJobInfo(j).stageIds) for j in jobs)
    return {"jobs": len(jobs), "stages": stages, "wall": wall, "jvm_cpu": cpu,
            "findings": sorted((f.code, f.summary) for f in findings)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args(argv)
    from commitsleuth.ingest.spark import spark_session

    spark = spark_session(args.master, {**spark_engine.SESSION_CONF, "spark.ui.enabled": "false"})
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "s.duckdb") as store:
        load_case(store, Path(tmp) / "logs", scenario("seed002_lost_partition"))
        local = sorted((f.code, f.summary) for f in analyze(store))
        parquet = spark_engine.export_parquet(store, Path(tmp) / "pq")
        for r in range(args.rounds):
            for how in ("round5", "now"):
                load = "/".join(f"{x:.1f}" for x in os.getloadavg())
                res = one(spark, store, parquet, how, f"{how}-{r}")
                print(f"round {r + 1} {how:6}: {res['jobs']} jobs, {res['stages']} stages, {res['wall']:.1f} s, "
                      f"JVM {res['jvm_cpu']:.1f} CPU-s, {len(res['findings'])} findings "
                      f"(DuckDB's: {res['findings'] == local}); load {load}", flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
