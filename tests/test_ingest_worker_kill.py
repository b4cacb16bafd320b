"""A worker process killed mid-ingest (the OOM killer's SIGKILL) is like any other kill: the
run neither exits 3 nor leaves a source that the next run calls ``unchanged``; the sources are
read whole (here, or by the next run), and the store then equals a clean ingest, each event once.

Real processes on real DuckDB files: the CLI runs as a subprocess with the worker thresholds
lowered, and the test SIGKILLs one of its pool's workers (a grandchild: the fork server's child)
while it reads. The logs are the Hive fixture lines of test_ingest_text (exact source strings).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_ingest_crash import children, events  # noqa: E402
from test_ingest_text import hive_log  # noqa: E402

CLI = str(Path(sys.executable).with_name("commitsleuth"))
ENV = {**os.environ, "COMMITSLEUTH_WORKERS": "2", "COMMITSLEUTH_PARALLEL_MIN": str(1 << 20),
       "COMMITSLEUTH_SPREAD_MIN": "1", "COMMITSLEUTH_RANGE": str(128 << 10)}


def workers_of(pid: int) -> list[int]:
    return [w for child in children(pid) for w in children(child)]


def ingest_killing_a_worker(target: Path, db: Path) -> tuple[subprocess.CompletedProcess, int]:
    proc = subprocess.Popen([CLI, "ingest", str(target), "--db", str(db)], env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = 0
    deadline = time.monotonic() + 60
    while proc.poll() is None and not killed and time.monotonic() < deadline:
        found = workers_of(proc.pid)
        if found:
            os.kill(found[0], signal.SIGKILL)
            killed = found[0]
        else:
            time.sleep(0.005)
    out, err = proc.communicate(timeout=300)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), killed


def run(target: Path, db: Path, env=ENV) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, "ingest", str(target), "--db", str(db)], env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("layout", ["one big log", "500 sources"])
def test_a_killed_worker_loses_nothing(layout, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    if layout == "one big log":
        (logs / "big.log").write_text(hive_log(40_000))
    else:
        for i in range(500):
            (logs / f"hs2-{i:03d}.log").write_text(hive_log(60, offset=i * 60))
    clean = run(logs, tmp_path / "clean.duckdb", {**os.environ, "COMMITSLEUTH_WORKERS": "1"})
    assert clean.returncode == 0, clean.stderr
    db = tmp_path / "killed.duckdb"
    first, killed = ingest_killing_a_worker(logs, db)
    assert killed, "no worker process was seen to kill"
    assert first.returncode == 0, first.stderr
    assert "BrokenProcessPool" not in first.stdout + first.stderr
    assert "leaked semaphore" not in first.stderr
    again = run(logs, db)
    assert again.returncode == 0, again.stderr
    expected = events(tmp_path / "clean.duckdb")
    assert len(expected) > 1000
    assert events(db) == expected
    assert set(events(db).values()) == {1}
