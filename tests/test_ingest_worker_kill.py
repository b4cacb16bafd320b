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


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def fork_server_of(pid: int) -> list[int]:
    """The ingest's multiprocessing fork server: its child started with ``-c 'from
    multiprocessing.forkserver import main; ...'`` (the resource tracker is a child too)."""
    return [c for c in children(pid) if b"multiprocessing.forkserver" in cmdline(c)]


def workers_of(pid: int) -> list[int]:
    """The pool's workers: the fork server's children that run what it runs (forked, never
    exec'd), not a program the server's imports may start; or the ingest's own such children
    (a big log named on the command line: the program forks its workers itself)."""
    line = cmdline(pid)
    found = [w for w in children(pid) if line and cmdline(w) == line]
    for server in fork_server_of(pid):
        line = cmdline(server)
        found += [w for w in children(server) if line and cmdline(w) == line]
    return found


def busy_fork_server_of(pid: int) -> list[int]:
    """The fork server once it has forked a worker: killed then, the run is under way."""
    return fork_server_of(pid) if workers_of(pid) else []


def ingest_killing_a_worker(target: Path, db: Path, pick=workers_of) -> tuple[subprocess.CompletedProcess, int]:
    """The ingest run while the first process ``pick`` finds is SIGKILLed."""
    proc = subprocess.Popen([CLI, "ingest", str(target), "--db", str(db)], env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = 0
    deadline = time.monotonic() + 60
    while proc.poll() is None and not killed and time.monotonic() < deadline:
        found = pick(proc.pid)
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


def logs_in(tmp_path: Path, layout: str) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir()
    if layout.startswith("one big log"):
        (logs / "big.log").write_text(hive_log(40_000))
        if layout == "one big log, named":  # the program's own forks read it, no fork server
            return logs / "big.log"
    else:
        for i in range(500):
            (logs / f"hs2-{i:03d}.log").write_text(hive_log(60, offset=i * 60))
    return logs


@pytest.mark.parametrize("layout", ["one big log", "one big log, named", "500 sources"])
def test_a_killed_worker_loses_nothing(layout, tmp_path):
    logs = logs_in(tmp_path, layout)
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


@pytest.mark.parametrize("when", ["before any worker", "while workers read"])
@pytest.mark.parametrize("layout", ["one big log", "500 sources"])
def test_a_killed_fork_server_loses_nothing(layout, when, tmp_path):
    """The fork server the workers come from, SIGKILLed: its workers can no longer report their
    end and new ones cannot start (the server's socket refuses, or closes mid-request). The
    ingest takes that as a lost pool, reads the rest itself, and completes: no exit 3."""
    logs = logs_in(tmp_path, layout)
    clean = run(logs, tmp_path / "clean.duckdb", {**os.environ, "COMMITSLEUTH_WORKERS": "1"})
    assert clean.returncode == 0, clean.stderr
    expected = events(tmp_path / "clean.duckdb")
    db = tmp_path / "killed.duckdb"
    pick = fork_server_of if when == "before any worker" else busy_fork_server_of
    first, killed = ingest_killing_a_worker(logs, db, pick)
    assert killed, "no fork server was seen to kill"
    assert first.returncode == 0, first.stderr
    assert "BrokenProcessPool" not in first.stdout + first.stderr
    assert events(db) == expected  # a run that says it completed stored everything, once
    again = run(logs, db)
    assert again.returncode == 0, again.stderr
    assert events(db) == expected
    assert set(events(db).values()) == {1}
