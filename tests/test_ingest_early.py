"""One big log named alone: the program hands its workers the first ranges before the store is
open (``local.start_early``), and its events get their source's id once the store gave it. Those
ranges hold only for a fresh read of the same bytes: a re-run of a stored file, a file that grew,
a run stopped and run again each store every event exactly once, as the in-process read does.

Real processes: the CLI program on real DuckDB files, the worker thresholds lowered so the pool
reads; the log is the Hive fixture of test_ingest_text (exact source strings, not a real log).
``COMMITSLEUTH_PHASES=1`` shows which way each run went (its marks are on stderr).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_ingest_text import hive_log  # noqa: E402

CLI = str(Path(sys.executable).with_name("commitsleuth"))
WORKERS = {"COMMITSLEUTH_WORKERS": "2", "COMMITSLEUTH_PARALLEL_MIN": str(1 << 20), "COMMITSLEUTH_RANGE": str(256 << 10),
           "COMMITSLEUTH_PHASES": "1"}
EARLY, DROPPED = "ranges handed out early", "early ranges dropped"


def run(target: Path, db: Path, env: dict) -> subprocess.CompletedProcess:
    out = subprocess.run([CLI, "ingest", str(target), "--db", str(db)], env={**os.environ, **env},
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out


def stored(db: Path) -> list[tuple]:
    """Every event with its source's name and status (a row with no source id would be lost here)."""
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(
            "SELECT regexp_extract(s.uri, '[^/]+$'), s.status, e.byte_offset, e.line_no, e.kind, e.raw, e.path "
            "FROM events e JOIN sources s USING (source_id) ORDER BY e.byte_offset").fetchall()


def sources(db: Path) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT status, bytes_read, size_bytes, lines, events, rejected FROM sources").fetchall()


def events_without_source(db: Path) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT count(*) FROM events WHERE source_id IS NULL").fetchone()[0]


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("early") / "big.log"
    path.write_text(hive_log(15_000))  # ~2.5 MB: 10 ranges of 256 KiB for 2 workers
    return path


@pytest.fixture(scope="module")
def here(log, tmp_path_factory) -> Path:
    """The same log read in the command's own process: what every run below must store."""
    db = tmp_path_factory.mktemp("here") / "here.duckdb"
    out = run(log, db, {"COMMITSLEUTH_WORKERS": "1", "COMMITSLEUTH_PHASES": "1"})
    assert EARLY not in out.stderr
    return db


def test_the_early_ranges_store_what_the_read_in_process_stores(log, here, tmp_path):
    db = tmp_path / "pooled.duckdb"
    out = run(log, db, WORKERS)
    assert EARLY in out.stderr and DROPPED not in out.stderr
    assert len(stored(here)) == 5000
    assert stored(db) == stored(here)
    assert events_without_source(db) == 0
    assert sources(db) == sources(here)


def test_a_directory_or_two_files_wait_for_the_store(log, here, tmp_path):
    """The head start is for one file named alone: a directory's files are planned by the store."""
    out = run(log.parent, tmp_path / "dir.duckdb", WORKERS)
    assert EARLY not in out.stderr
    assert stored(tmp_path / "dir.duckdb") == stored(here)


def test_a_stored_file_named_again_drops_them_and_stays_once(log, here, tmp_path):
    db = tmp_path / "again.duckdb"
    run(log, db, WORKERS)
    began = time.monotonic()
    again = run(log, db, WORKERS)
    assert time.monotonic() - began < 60  # the workers dropped are not waited for
    assert "1 unchanged" in again.stdout
    assert EARLY in again.stderr and DROPPED in again.stderr
    assert stored(db) == stored(here)


def test_a_file_that_grew_is_continued_not_read_again(log, tmp_path):
    grown = tmp_path / "grown.log"
    grown.write_text(hive_log(9_000))
    db = tmp_path / "grown.duckdb"
    run(grown, db, WORKERS)
    with open(grown, "a") as f:
        f.write(hive_log(6_000, offset=9_000))
    out = run(grown, db, WORKERS)
    assert DROPPED in out.stderr  # a continued read starts at its checkpoint, not at 0
    whole = tmp_path / "whole.duckdb"
    run(grown, whole, {"COMMITSLEUTH_WORKERS": "1"})
    assert stored(db) == stored(whole)
    assert len(stored(db)) == 5000


@pytest.mark.parametrize("share", [0.3, 0.5, 0.7, 0.9])
def test_killed_during_the_early_ranges_the_run_again_stores_each_event_once(log, here, tmp_path, share):
    """SIGKILL at a share of a whole run's duration (the first shares land before the store is open
    or during the first ranges), then the same command: every event once, the status the same."""
    db = tmp_path / "killed.duckdb"
    began = time.monotonic()
    run(log, tmp_path / "timed.duckdb", WORKERS)
    duration = time.monotonic() - began
    proc = subprocess.Popen([CLI, "ingest", str(log), "--db", str(db)], env={**os.environ, **WORKERS},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(duration * share)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=120)
    run(log, db, WORKERS)
    assert stored(db) == stored(here)
    assert sources(db) == sources(here)


def test_the_early_ranges_hold_only_for_the_read_they_were_cut_for(tmp_path):
    """Each thing the ranges were cut for, changed alone, leaves them to be dropped: the file's
    bytes, the pool, the format, the number of workers, the source's context."""
    import dataclasses

    from commitsleuth.ingest import local
    from commitsleuth.parsers import ParseStats, SourceContext, get_format

    path = tmp_path / "big.log"
    path.write_text(hive_log(3_000))
    uri = str(path.resolve())
    with local._pool(2) as pool, local._pool(2) as other:
        def read(changed: str = ""):
            ctx = SourceContext(uri=uri, source_id=7, attempt_id=local.attempt_from_path(uri),
                                keep_reads=changed == "context")
            fmt = get_format("hive-log4j2" if changed != "format" else "hdfs-audit")
            r = local.FileRead(path, fmt, ctx, ParseStats(), 0, 1, None, path.stat().st_size,
                               other if changed == "pool" else pool)
            r.workers = 3 if changed == "workers" else 2
            return r

        for changed in ("", "pool", "format", "workers", "context", "bytes"):
            local.start_early(pool, str(path), 2)
            assert uri in local._EARLY
            assert local._EARLY[uri].fmt == "hive-log4j2"
            if changed == "bytes":
                with open(path, "a") as f:
                    f.write(hive_log(1, offset=3_000))
            taken = local._take_early(read(changed))
            assert (taken is not None) == (changed == ""), changed
            if taken is not None:
                assert dataclasses.replace(taken.ctx, source_id=7) == read().ctx
                for _, _, future in taken.futures:
                    assert future.result()[0].num_rows > 0
            else:
                assert uri in local._EARLY  # left to be dropped after the plan
                for _, _, future in local._EARLY[uri].futures:
                    future.result()
                local._EARLY.clear()
