"""Write errors (disk full, I/O error, read-only filesystem): one `Error:` line, exit 2, the store
consistent, and the same command completes once the cause is gone.

The full disk is a real 8 MB tmpfs (the tests run as root, as CI does); the I/O error is
simulated by a store whose third write fails as DuckDB's own IOException does. The log is
generated from the Hive fixture lines of test_ingest_text (exact source strings, not a real log).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_ingest_text import hive_log, rows  # noqa: E402

from commitsleuth.store import Store

EVENTS = "SELECT byte_offset, line_no, kind, raw FROM events ORDER BY byte_offset, line_no, kind"


@pytest.fixture
def small_fs(tmp_path):
    mnt = tmp_path / "fs"
    mnt.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mnt)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.fail(f"cannot mount a tmpfs (tests run as root in CI): {mounted.stderr.strip()}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_full_disk_is_one_error_and_the_same_command_completes(cli, small_fs, tmp_path):
    log = tmp_path / "hive.log"
    log.write_text(hive_log(60_000))  # ~10 MB of text, 20,000 events: more than the disk holds
    clean = tmp_path / "clean.duckdb"
    assert cli("ingest", log, "--db", clean).exit_code == 0
    filler = small_fs / "filler"
    filler.write_bytes(b"\0" * (3 << 20))
    db = small_fs / "store.duckdb"

    full = cli("ingest", log, "--db", db)
    assert full.exit_code == 2
    assert full.out == ""
    assert len(full.err.splitlines()) == 1
    assert full.err.startswith(f"Error: cannot write to {db}: ") and "No space left on device" in full.err
    status, stored_bytes, counted = rows(db, "SELECT status, bytes_read, events FROM sources")[0]
    assert status == "running" and 0 < stored_bytes < log.stat().st_size  # claims no more than stored
    assert rows(db, "SELECT count(*) FROM events")[0][0] == counted

    filler.unlink()
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_fs)], check=True)
    again = cli("ingest", log, "--db", db)
    assert again.exit_code == 0, again.err
    assert again.out.startswith(f"ingested 1 file (1 ok): {20_000 - counted} events")
    assert rows(db, EVENTS) == rows(clean, EVENTS)
    assert rows(db, "SELECT status, events FROM sources") == [("ok", 20_000)]


def test_read_only_filesystem_is_one_error(cli, small_fs, tmp_path):
    log = tmp_path / "hive.log"
    log.write_text(hive_log(300))
    db = small_fs / "store.duckdb"
    assert cli("ingest", log, "--db", db).exit_code == 0
    log.write_text(hive_log(600))
    subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
    r = cli("ingest", log, "--db", db)
    assert r.exit_code == 2
    assert len(r.err.splitlines()) == 1 and r.err.startswith(f"Error: cannot open {db}: "), r.err
    subprocess.run(["mount", "-o", "remount,rw", str(small_fs)], check=True)
    assert cli("ingest", log, "--db", db).exit_code == 0
    assert rows(db, "SELECT status, events FROM sources") == [("ok", 200)]


def test_io_error_mid_ingest_keeps_the_store_consistent(cli, tmp_path, monkeypatch):
    log = tmp_path / "hive.log"
    # 30,000 events: three batches; a binary line in the second one is rejected, and that
    # count survives the failure like the events
    log.write_bytes(hive_log(30_000).encode() + b"\x00\x00\x7fELF junk\n" + hive_log(60_000, 30_000).encode())
    clean, db = tmp_path / "clean.duckdb", tmp_path / "store.duckdb"
    assert cli("ingest", log, "--db", clean).exit_code == 0
    real_write = Store.write_arrow
    calls = []

    def failing_write(self, batch):
        calls.append(batch.num_rows)
        if len(calls) == 3:
            raise duckdb.IOException('IO Error: Could not write file "store.duckdb.wal": Input/output error')
        real_write(self, batch)

    monkeypatch.setattr(Store, "write_arrow", failing_write)
    r = cli("ingest", log, "--db", db)
    assert r.exit_code == 2
    assert r.err == (f"Error: cannot write to {db}: IO Error: Could not write file \"store.duckdb.wal\": "
                     "Input/output error\n")
    assert rows(db, "SELECT status, events, rejected FROM sources") == [("running", 20_000, 1)]
    assert rows(db, "SELECT reason, count FROM rejects") == [("binary data (NUL bytes)", 1)]
    assert rows(db, "SELECT count(*) FROM events") == [(20_000,)]
    monkeypatch.setattr(Store, "write_arrow", real_write)
    again = cli("ingest", log, "--db", db)
    assert again.exit_code == 0, again.err
    assert rows(db, EVENTS) == rows(clean, EVENTS)
    assert rows(db, "SELECT status, events, rejected FROM sources") == rows(clean, "SELECT status, events, rejected FROM sources")
    assert rows(db, "SELECT * FROM rejects") == rows(clean, "SELECT * FROM rejects")
