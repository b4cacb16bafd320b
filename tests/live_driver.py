"""Spark drivers for the live-capture scenarios, run by the tests as separate processes.

    python live_driver.py rig MASTER_URL WORKDIR   # speculative double write + protected write
    python live_driver.py sigkill DB               # jobs until the test SIGKILLs this process

A driver process is needed because one Python process holds one SparkContext (the tests'
own local session is another), and because the SIGKILL test must kill a driver, not pytest.
Each prints one JSON line per fact the test checks against the store.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from pyspark import TaskContext
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from commitsleuth.listener import attach

# The slow first attempt waits until the speculative copy has started (all "hosts" of the rig
# share this machine's disk, so a marker file tells), at most this long: speculation starts
# once it has run 1.5 x as long as the median task, which on a loaded machine takes a while.
MAX_STALL = 120.0


def wait_for_marker(path: str, extra: float) -> None:
    import os

    deadline = time.monotonic() + MAX_STALL
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(extra)


def say(**fact) -> None:
    print(json.dumps(fact), flush=True)


def rig_session(master: str, workdir: Path) -> SparkSession:
    return (
        SparkSession.builder.master(master)
        .appName("commitsleuth-rig")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.executor.cores", "1")
        .config("spark.cores.max", "2")
        .config("spark.executor.memory", "512m")
        .config("spark.pyspark.python", sys.executable)
        .config("spark.local.dir", str(workdir / "driver-local"))
        .config("spark.speculation", "true")
        .config("spark.speculation.interval", "100ms")
        .config("spark.speculation.quantile", "0.5")
        .config("spark.speculation.multiplier", "1.5")
        .config("spark.speculation.minTaskRuntime", "500ms")
        .config("spark.speculation.efficiency.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.adaptive.enabled", "false")
        .getOrCreate()
    )


def wait_for_executors(spark: SparkSession, n: int, timeout: float = 60.0) -> None:
    tracker = spark.sparkContext._jsc.sc()
    deadline = time.monotonic() + timeout
    while tracker.getExecutorMemoryStatus().size() < n + 1:  # executors + the driver
        if time.monotonic() > deadline:
            raise TimeoutError(f"fewer than {n} executors registered within {timeout:.0f} s")
        time.sleep(0.2)


def wait_for_stage_quiet(spark: SparkSession, group: str, timeout: float = 30.0) -> None:
    """Until no task of the group's jobs still runs (the losing attempt has been killed)."""
    tracker = spark.sparkContext.statusTracker()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stages = [s for j in tracker.getJobIdsForGroup(group)
                  for s in (tracker.getJobInfo(j).stageIds if tracker.getJobInfo(j) else [])]
        infos = [tracker.getStageInfo(s) for s in stages]
        if all(i is None or i.numActiveTasks == 0 for i in infos):
            return
        time.sleep(0.2)


def warm_up(spark: SparkSession) -> None:
    """Start a Python worker on each executor, so the scenarios' tasks take milliseconds and
    the speculation threshold (1.5 x the median task time, at least 500 ms) is reached fast."""
    spark.sparkContext.setJobGroup("warm-up", "start Python workers")
    spark.sparkContext.parallelize(range(4), 4).foreach(lambda _: None)


def speculative_double_write(spark: SparkSession, workdir: Path) -> None:
    """foreachPartition publishing a file per attempt: attempt 0 of partition 1 writes, then stalls."""
    out = workdir / "side_output" / "dt=2026-11-21"
    out.mkdir(parents=True, exist_ok=True)
    target = str(out)

    def publish(rows):
        ctx = TaskContext.get()
        part, attempt, stage = ctx.partitionId(), ctx.attemptNumber(), ctx.stageId()
        data = "".join(f"{r}\n" for r in rows)
        # Hive-style name: task (partition) and attempt, so the file tells who wrote it.
        with open(f"{target}/{part:06d}_{attempt}.stage{stage}", "w") as fh:
            fh.write(data)
        if part == 1 and attempt == 0:
            wait_for_marker(f"{target}/{part:06d}_1.stage{stage}", extra=3.0)

    with attach(spark, db=workdir / "speculative.duckdb") as handle:
        spark.sparkContext.setJobGroup("double", "speculative double write")
        spark.sparkContext.parallelize(range(20), 2).foreachPartition(publish)
        wait_for_stage_quiet(spark, "double")
        handle.inventory("file://" + target)
        handle.flush()
        say(scenario="speculative", files=sorted(p.name for p in out.iterdir()),
            location="file://" + target, errors=handle.stats.errors)


def protected_write(spark: SparkSession, workdir: Path) -> None:
    """df.write.parquet under speculation: the commit coordinator lets one attempt commit."""
    target = workdir / "protected"
    marker = str(workdir / "protected-speculative-started")

    @F.udf("long")
    def stall_first_attempt(x):
        ctx = TaskContext.get()
        if ctx.partitionId() == 1 and ctx.attemptNumber() == 0:
            wait_for_marker(marker, extra=5.0)  # the copy commits first; this one then loses
        elif ctx.partitionId() == 1:
            open(marker, "w").close()
        return x

    with attach(spark, db=workdir / "protected.duckdb") as handle:
        spark.sparkContext.setJobGroup("protected", "protected write")
        df = spark.range(0, 2, 1, 2).withColumn("v", stall_first_attempt("id"))
        df.write.mode("overwrite").parquet(str(target))
        wait_for_stage_quiet(spark, "protected")
        handle.flush()
        say(scenario="protected", files=sorted(p.name for p in target.iterdir()),
            location="file://" + str(target), errors=handle.stats.errors)


def rig(master: str, workdir: str) -> None:
    work = Path(workdir)
    spark = rig_session(master, work)
    try:
        wait_for_executors(spark, 2)
        warm_up(spark)
        speculative_double_write(spark, work)
        protected_write(spark, work)
    finally:
        spark.stop()


def sigkill(db: str) -> None:
    spark = (SparkSession.builder.master("local[2]").appName("commitsleuth-sigkill")
             .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
             .getOrCreate())
    attach(spark, db=db)
    say(attached=True)
    for job in range(10_000):
        spark.range(0, 40, 1, 8).count()
        say(job=job, done=time.time())


if __name__ == "__main__":
    {"rig": rig, "sigkill": sigkill}[sys.argv[1]](*sys.argv[2:])
