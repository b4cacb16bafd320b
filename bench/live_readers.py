"""Readers during a live capture: `commitsleuth query` calls while a 20,000-task job is captured.

    .venv/bin/python bench/live_readers.py [--tasks 20000] [--calls 50]

One local[2] session runs ``spark.range(0, TASKS, 1, TASKS).count()`` with commitsleuth
attached (again, if the calls outlast it: every call starts while a captured job runs) and this
process fires ``commitsleuth query`` (a separate process each, as a user would) one after the
other at the store. It prints how many calls succeeded, their latency (median, min–max) against
the same calls on the same store with no writer (baseline, measured afterwards), how many said
they waited for the lock, the task ends each call saw (they grow: the store is read live), the
capture's own lock waits, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from pyspark.sql import SparkSession

from commitsleuth.listener import attach

QUERY = "select count(*) AS n from events where kind = 'attempt_end'"


def query(db: Path) -> dict:
    exe = str(Path(sys.executable).with_name("commitsleuth"))
    t0 = time.perf_counter()
    proc = subprocess.run([exe, "query", "--format", "json", "--db", str(db), QUERY],
                          capture_output=True, text=True, timeout=120)
    took = time.perf_counter() - t0
    seen = json.loads(proc.stdout)[0]["n"] if proc.returncode == 0 else None
    return {"rc": proc.returncode, "took": took, "n": seen, "waited": "waiting" in proc.stderr,
            "err": proc.stderr.strip().splitlines()[-1] if proc.returncode else ""}


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} s (min–max {min(values):.2f}–{max(values):.2f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=20_000)
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--baseline", type=int, default=10, help="calls with no writer, afterwards")
    args = ap.parse_args()
    spark = (SparkSession.builder.master("local[2]").appName("live-readers")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.host", "127.0.0.1").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    spark.range(0, 2000, 1, 2000).count()  # JIT and class loading out of the measured job
    db = Path(tempfile.mkdtemp(prefix="live-readers-")) / "live.duckdb"
    load = [os.getloadavg()[0]]
    handle = attach(spark, db=db)
    running, done, jobs = threading.Event(), threading.Event(), []

    def jobs_until_done():
        while not done.is_set():
            running.set()
            t0 = time.perf_counter()
            spark.range(0, args.tasks, 1, args.tasks).count()
            jobs.append(time.perf_counter() - t0)
        running.clear()

    worker = threading.Thread(target=jobs_until_done)
    worker.start()
    running.wait()
    while not db.exists():  # the capture's first batch creates the store
        time.sleep(0.1)
    calls = []
    for i in range(args.calls):
        calls.append(query(db))
        print(f"call {i + 1:2d}: exit {calls[-1]['rc']} {calls[-1]['took']:.2f} s "
              f"task ends seen {calls[-1]['n']} {calls[-1]['err']}", flush=True)
    load.append(os.getloadavg()[0])
    done.set()
    worker.join()
    handle.flush()
    handle.detach()
    baseline = [query(db) for _ in range(args.baseline)]
    load.append(os.getloadavg()[0])

    ok = [c for c in calls if c["rc"] == 0]
    seen = [c["n"] for c in ok]
    print()
    print(f"job: spark.range(0, {args.tasks}, 1, {args.tasks}).count() on local[2], captured live; "
          f"{len(jobs)} job(s) ran, {', '.join(f'{t:.1f} s' for t in jobs)}")
    print(f"query during the capture: {len(ok)} of {len(calls)} succeeded; latency {spread([c['took'] for c in calls])}; "
          f"{sum(c['waited'] for c in calls)} said they waited for the lock")
    print(f"query with no writer (baseline, same store, afterwards): {sum(c['rc'] == 0 for c in baseline)} of "
          f"{len(baseline)}; latency {spread([c['took'] for c in baseline])}")
    if seen:
        print(f"task ends seen by the calls: first {seen[0]}, last {seen[-1]} (growing: read live); "
              f"capture's lock waits {handle.stats.lock_waits}, errors {handle.stats.errors}")
    print(f"load average (1 min) at start, after the calls, at the end: {', '.join(f'{x:.1f}' for x in load)}")
    spark.stop()


if __name__ == "__main__":
    main()
