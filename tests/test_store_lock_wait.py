"""Readers during writes: query/analyze/timeline/report wait for a writer's lock with backoff,
saying so once, up to a bound (COMMITSLEUTH_LOCK_WAIT); ingest still fails at once. The writer
is a real second process holding the real DuckDB file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_ingest_text import hive_log  # noqa: E402

HOLD = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
print("held", flush=True)
time.sleep(float(sys.argv[2]))
con.close()
"""


@pytest.fixture
def store_with_events(cli, tmp_path):
    log, db = tmp_path / "hive.log", tmp_path / "store.duckdb"
    log.write_text(hive_log(30))
    assert cli("ingest", log, "--db", db).exit_code == 0
    return db


def hold(db, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(db), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "held\n"
    return proc


@pytest.mark.parametrize("command", [("query", "SELECT count(*) FROM events"), ("analyze",),
                                     ("timeline", "db.t")])
def test_a_reader_waits_for_the_writer_and_says_so_once(cli, store_with_events, monkeypatch, command):
    monkeypatch.setenv("COMMITSLEUTH_LOCK_WAIT", "30")
    writer = hold(store_with_events, 1.5)
    try:
        r = cli(*command, "--db", store_with_events)
    finally:
        writer.wait()
    assert r.exit_code in (0, 1), r.err  # 1: analyze found something
    assert r.err.splitlines() == [
        f"waiting up to 30s: {store_with_events} is locked by another process (process {writer.pid}); "
        "wait for it to finish or use another --db"]


def test_past_the_bound_the_lock_error_and_ingest_never_waits(cli, store_with_events, monkeypatch, tmp_path):
    monkeypatch.setenv("COMMITSLEUTH_LOCK_WAIT", "0.3")
    writer = hold(store_with_events, 20)
    try:
        r = cli("query", "SELECT 1", "--db", store_with_events)
        log = tmp_path / "more.log"
        log.write_text(hive_log(3))
        w = cli("ingest", log, "--db", store_with_events)
    finally:
        writer.kill()
        writer.wait()
    locked = f"{store_with_events} is locked by another process (process {writer.pid}); wait for it to finish or use another --db"
    assert (r.exit_code, r.err.splitlines()) == (2, [f"waiting up to 0.3s: {locked}", f"Error: {locked}"])
    assert (w.exit_code, w.err) == (2, f"Error: {locked}\n")
    assert not Path(f"{store_with_events}.wait").exists()  # the reader gave up: no longer waiting


# A writer that keeps the store open between batches, as live capture does: it lets go when a
# reader waits (store.reader_waiting), else holds it for the whole of its run.
HOLD_UNTIL_WAITED = """
import sys, time, duckdb
from commitsleuth.store import reader_waiting
con = duckdb.connect(sys.argv[1])
print("held", flush=True)
deadline = time.monotonic() + 60
while not reader_waiting(sys.argv[1]) and time.monotonic() < deadline:
    time.sleep(0.1)
con.close()
time.sleep(60)
"""


def test_a_waiting_reader_makes_a_writer_that_keeps_the_store_open_let_go(cli, store_with_events, monkeypatch):
    monkeypatch.setenv("COMMITSLEUTH_LOCK_WAIT", "20")
    writer = subprocess.Popen([sys.executable, "-c", HOLD_UNTIL_WAITED, str(store_with_events)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline() == "held\n"
        r = cli("query", "SELECT count(*) AS n FROM events", "--db", store_with_events)
    finally:
        writer.kill()
        writer.wait()
    assert r.exit_code == 0, r.err
    assert not Path(f"{store_with_events}.wait").exists()  # the reader got in: its marker is gone


def test_a_reader_stopped_while_it_waits_leaves_no_wait_marker(store_with_events):
    """A stale marker would make a live capture let go of the store for nobody."""
    writer = hold(store_with_events, 60)
    marker = Path(f"{store_with_events}.wait")
    try:
        reader = subprocess.Popen([str(Path(sys.executable).with_name("commitsleuth")), "query", "SELECT 1",
                                   "--db", str(store_with_events)], stderr=subprocess.PIPE, text=True,
                                  env={**os.environ, "COMMITSLEUTH_LOCK_WAIT": "60"})
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the reader never waited"
        reader.send_signal(signal.SIGINT)
        _, err = reader.communicate(timeout=30)
    finally:
        writer.kill()
        writer.wait()
    assert reader.returncode != 0 and "waiting up to 60s" in err
    assert not marker.exists()
