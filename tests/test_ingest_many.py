"""Many applications: a History Server directory of 1,000 event logs (plain, lz4, snappy, zstd,
lzf, rolling directories, in-progress ones, two real text logs among them) ingested by worker
processes stores exactly what one process stores, and a SIGKILLed run continues to that store.

The directory is made from the real corpus event logs by tests/history_dir.py (each copy under
an application id of its own, rewritten in its content; its docstring says how). Real processes
on a real DuckDB file: the CLI runs as a subprocess, once with ``COMMITSLEUTH_WORKERS=1`` (one
process) and with two workers.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from history_dir import make_history_dir  # noqa: E402
from test_ingest_crash import children, no_process_left  # noqa: E402

from commitsleuth.ingest.eventlogs import IN_PROGRESS_NOTE  # noqa: E402

CLI = str(Path(sys.executable).with_name("commitsleuth"))
SOURCES = 1000
ONE = {**os.environ, "COMMITSLEUTH_WORKERS": "1"}
# two workers whatever the machine's core count and the directory's size
PARALLEL = {**os.environ, "COMMITSLEUTH_WORKERS": "2", "COMMITSLEUTH_SPREAD_MIN": "1"}


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    return make_history_dir(tmp_path_factory.mktemp("history") / "spark-events", SOURCES)


def ingest(history, db, env) -> subprocess.CompletedProcess:
    run = subprocess.run([CLI, "ingest", str(history), "--db", str(db)], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return run


@pytest.fixture(scope="module")
def one_process(history, tmp_path_factory):
    db = tmp_path_factory.mktemp("one") / "one.duckdb"
    began = time.monotonic()
    run = ingest(history, db, ONE)
    return db, run, time.monotonic() - began


def events(db) -> Counter:
    with duckdb.connect(str(db), read_only=True) as con:
        return Counter(con.execute(
            "SELECT s.uri, e.byte_offset, e.line_no, e.kind, e.raw FROM events e JOIN sources s USING (source_id)"
        ).fetchall())


def sources(db) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT uri, format, status, reason, events, bytes_read, lines, rejected "
                           "FROM sources ORDER BY uri").fetchall()


def test_many_logs_read_by_workers_killed_and_continued_store_what_one_process_stores(history, one_process, tmp_path):
    one_db, one_run, one_took = one_process
    expected, expected_sources = events(one_db), sources(one_db)
    assert len(expected_sources) == SOURCES
    assert {s[2] for s in expected_sources} == {"ok"}, [s for s in expected_sources if s[2] != "ok"]
    running = [s for s in expected_sources if s[0].endswith(".inprogress") or Path(s[0]).is_dir() and any(
        p.name.endswith(".inprogress") for p in Path(s[0]).iterdir())]
    assert len(running) == SOURCES // 25 - 1 and all(IN_PROGRESS_NOTE in s[3] for s in running)
    assert not [s for s in expected_sources if s not in running and s[3] and IN_PROGRESS_NOTE in s[3]]
    assert {s[1] for s in expected_sources} == {"spark-eventlog", "spark-log", "mr2-yarn"}
    assert sum(expected.values()) == sum(s[4] for s in expected_sources) > 70_000

    for delay in (0.4 * one_took, 0.15 * one_took):
        db = tmp_path / f"killed-{delay:.0f}.duckdb"
        proc = subprocess.Popen([CLI, "ingest", str(history), "--db", str(db)], env=PARALLEL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + delay
        workers: set[int] = set()
        while time.monotonic() < deadline and proc.poll() is None:  # the workers, seen as they run
            workers.update(children(proc.pid))
            time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        assert len(workers) >= 2, "the directory was not read by worker processes"
        no_process_left(list(workers))
        if proc.returncode != -signal.SIGKILL or not db.exists():
            continue  # ended before the kill, or killed before the store was made: sooner
        with duckdb.connect(str(db), read_only=True) as con:
            done = con.execute("SELECT count(*) FROM sources WHERE status = 'ok'").fetchone()[0]
        if not 0 < done < SOURCES:
            continue
        # a status never claims more than was stored: every source marked ok holds all its events
        ok = {s[0] for s in sources(db) if s[2] == "ok"}
        assert Counter({k: n for k, n in events(db).items() if k[0] in ok}) == Counter(
            {k: n for k, n in expected.items() if k[0] in ok})
        again = subprocess.Popen([CLI, "ingest", str(history), "--db", str(db)], env=PARALLEL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        workers = set()
        while again.poll() is None:
            workers.update(children(again.pid))
            time.sleep(0.1)
        out, err = again.communicate()
        assert again.returncode == 0, err
        no_process_left(list(workers))
        assert events(db) == expected
        assert sources(db) == expected_sources
        assert out.startswith(f"ingested {SOURCES} files (")
        print(f"killed after {delay:.1f}s with {done} sources ok; continued to the one-process store")
        return
    pytest.fail("no SIGKILL landed inside the ingest")


@pytest.mark.parametrize("codec", ["lz4", "snappy", "lzf", "zstd"])
def test_a_compressed_log_stopped_before_its_last_status_continues_instead_of_a_new_version(codec, tmp_path):
    """The state a SIGKILL leaves between a source's last checkpoint and its final status: its
    events stored, status ``running``, ``bytes_read`` a decoded offset past the compressed size.
    Spark's Java streams were taken for plain files and this for a file that shrank (superseded,
    read again); the test above met it."""
    from commitsleuth.ingest import ingest as run_ingest
    from commitsleuth.store import Store

    log = next((Path(__file__).parent / "corpus" / "spark-events" / "codecs").glob(f"*.{codec}"))
    db = tmp_path / "store.duckdb"
    with Store(db) as store:
        first = run_ingest(store, [str(log)]).results[0]
        assert first.status == "ok" and first.events > 0
        store.con.execute("UPDATE sources SET status = 'running', finished_at = NULL")
    before = events(db)
    with Store(db) as store:
        again = run_ingest(store, [str(log)]).results[0]
    assert (again.status, again.source_id) == ("ok", first.source_id)
    assert events(db) == before
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM superseded_events").fetchone()[0] == 0
