"""Live scenarios run against the loopback rig (listener/rig.py): the tests' and the demo's.

    python -m commitsleuth.listener.scenarios MASTER_URL WORKDIR DB

runs the speculative double write against a running rig into the store DB and prints one
JSON line of facts. The driver is its own process: a Python process holds one SparkContext.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from pyspark import TaskContext
from pyspark.sql import SparkSession

from commitsleuth.listener import attach


def say(**fact) -> None:
    print(json.dumps(fact), flush=True)


# The slow first attempt waits until the speculative copy has started (all "hosts" of the rig
# share this machine's disk, so a marker file tells), at most this long: speculation starts
# once it has run 1.5 x as long as the median task, which on a loaded machine takes a while.
MAX_STALL = 120.0


def wait_for_marker(path: str, extra: float) -> None:
    import os  # runs on the executors' Python workers

    deadline = time.monotonic() + MAX_STALL
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(extra)


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


def speculative_double_write(spark: SparkSession, workdir: Path, db) -> None:
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

    with attach(spark, db=db) as handle:
        spark.sparkContext.setJobGroup("double", "speculative double write")
        spark.sparkContext.parallelize(range(20), 2).foreachPartition(publish)
        wait_for_stage_quiet(spark, "double")
        handle.inventory("file://" + target)
        handle.flush()
        say(scenario="speculative", files=sorted(p.name for p in out.iterdir()),
            location="file://" + target, errors=handle.stats.errors)


def main(master: str, workdir: str, db: str) -> None:
    work = Path(workdir)
    spark = rig_session(master, work)
    try:
        wait_for_executors(spark, 2)
        warm_up(spark)
        speculative_double_write(spark, work, db)
    finally:
        spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:4])
