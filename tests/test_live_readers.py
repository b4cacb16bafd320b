"""Readers during writes: while live capture loads a running job into the store, `commitsleuth
query`, `analyze` and `report` (separate processes, as a user runs them) all succeed, and the
queries see the store grow. Real local PySpark session, real DuckDB file. The full measurement
(50 calls during a 20,000-task job) is bench/live_readers.py, recorded in docs/BENCHMARKS.md."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from commitsleuth.listener import attach

TASKS = 5000  # tiny tasks: the job runs several seconds on local[2], long enough to overlap
MIN_CALLS = 5  # calls that start and end while the job runs
EXE = str(Path(sys.executable).with_name("commitsleuth"))
QUERY = "select count(*) AS n from events where kind = 'attempt_end'"


def commands(db: Path, report: Path):
    query = ("query", "--format", "json", "--db", str(db), QUERY)
    return itertools.cycle([query, query, ("analyze", "--format", "json", "--db", str(db)), query,
                            ("report", "-o", str(report), "--db", str(db))])


def test_query_analyze_and_report_succeed_while_live_capture_writes(spark, db_path, tmp_path):
    # a load every second (not up to max_wait's 5 s), so the queries see the store grow
    handle = attach(spark, db=db_path, max_wait=1.0)
    job = threading.Thread(target=lambda: spark.range(0, TASKS, 1, TASKS).count())
    calls = []
    try:
        job.start()
        deadline = time.monotonic() + 60
        while not db_path.exists() and time.monotonic() < deadline:  # the capture's first batch
            time.sleep(0.05)
        for args in commands(db_path, tmp_path / "report.html"):
            if not job.is_alive():
                break
            proc = subprocess.run([EXE, *args], capture_output=True, text=True, timeout=120)
            calls.append((args[0], proc.returncode, proc.stdout, proc.stderr, job.is_alive()))
    finally:
        job.join()
        handle.detach()
    during = [c for c in calls if c[4]]
    assert len(during) >= MIN_CALLS, f"only {len(during)} calls overlapped the job"
    failed = [(name, rc, err) for name, rc, _, err, _ in calls if rc not in ((0, 1) if name == "analyze" else (0,))]
    assert failed == []
    seen = [json.loads(out)[0]["n"] for name, _, out, _, _ in calls if name == "query"]
    assert seen == sorted(seen) and seen[0] < seen[-1], seen  # read live, while it grew
    assert handle.stats.errors == 0, handle.stats.last_error
