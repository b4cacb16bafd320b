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


def test_full_disk_is_one_error_and_the_same_command_completes(cli, small_fs, tmp_path, monkeypatch):
    from commitsleuth.ingest import local

    # commits every 1,000 events (not a row group's 122,880), so some are stored before the disk fills
    monkeypatch.setattr(local, "COMMIT_ROWS", 1_000)
    log = tmp_path / "hive.log"
    log.write_text(hive_log(60_000))  # ~10 MB of text, 20,000 events: more than the disk holds
    clean = tmp_path / "clean.duckdb"
    assert cli("ingest", log, "--db", clean).exit_code == 0
    # The first batch of 10,000 events (about 4.4 MB of write-ahead log) fits in what the filler
    # leaves, the second does not, whether the store starts as a copy of the empty template
    # (0.8 MB, checkpointed) or migrates itself (a 0.15 MB log): with 3 MB of filler the copy
    # left too little for even the first batch, and the run stored none
    filler = small_fs / "filler"
    filler.write_bytes(b"\0" * (2 << 20))
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


def test_a_disk_full_before_the_store_is_made_is_one_error(cli, small_fs, tmp_path):
    """The new store's own first commits (its migrations, or the copy's stamp) fail on a full
    disk like a batch's: one line, exit 2, no half-made store left; the same command completes
    once there is room."""
    log = tmp_path / "hive.log"
    log.write_text(hive_log(300))
    filler = small_fs / "filler"
    with open(filler, "wb") as f:
        try:
            while True:
                f.write(b"\0" * (64 << 10))
                f.flush()
        except OSError:
            pass
        # room for DuckDB's file header, not for the first commit's write-ahead log
        f.truncate(max(0, f.tell() - (48 << 10)))
    db = small_fs / "store.duckdb"
    full = cli("ingest", log, "--db", db)
    assert full.exit_code == 2, full.err
    assert len(full.err.splitlines()) == 1
    assert full.err.startswith(f"Error: cannot write the store {db}: ") and "No space left on device" in full.err
    assert not db.exists() and not Path(f"{db}.wal").exists()
    filler.unlink()
    again = cli("ingest", log, "--db", db)
    assert again.exit_code == 0, again.err
    assert rows(db, "SELECT status, events FROM sources") == [("ok", 100)]


def test_read_only_filesystem_is_one_error(cli, small_fs, tmp_path):
    log = tmp_path / "hive.log"
    log.write_text(hive_log(300))
    db = small_fs / "store.duckdb"
    assert cli("ingest", log, "--db", db).exit_code == 0
    log.write_text(hive_log(600))
    subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
    r = cli("ingest", log, "--db", db)
    assert r.exit_code == 2
    assert r.err == f"Error: cannot write the store {db}: Read-only file system\n"
    subprocess.run(["mount", "-o", "remount,rw", str(small_fs)], check=True)
    assert cli("ingest", log, "--db", db).exit_code == 0
    assert rows(db, "SELECT status, events FROM sources") == [("ok", 200)]


@pytest.mark.parametrize("commit_rows, commit_seconds, kept", [(1, 1e9, 20_000), (None, 1e9, 0), (None, 0, 20_000)])
def test_io_error_mid_ingest_keeps_the_store_consistent(cli, tmp_path, monkeypatch, commit_rows, commit_seconds,
                                                        kept):
    from commitsleuth.ingest import local

    # commit_rows 1: each batch is committed with its checkpoint, and the two before the failure
    # stay; by default the three batches are one transaction (fewer than COMMIT_ROWS events, in
    # less than COMMIT_SECONDS), and none of it stays; with COMMIT_SECONDS passed at every batch
    # each commits, as with commit_rows 1
    if commit_rows is not None:
        monkeypatch.setattr(local, "COMMIT_ROWS", commit_rows)
    monkeypatch.setattr(local, "COMMIT_SECONDS", commit_seconds)
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
    assert rows(db, "SELECT status, events, rejected FROM sources") == [("running", kept, 1 if kept else 0)]
    assert rows(db, "SELECT reason, count FROM rejects") == ([("binary data (NUL bytes)", 1)] if kept else [])
    assert rows(db, "SELECT count(*) FROM events") == [(kept,)]
    monkeypatch.setattr(Store, "write_arrow", real_write)
    again = cli("ingest", log, "--db", db)
    assert again.exit_code == 0, again.err
    assert rows(db, EVENTS) == rows(clean, EVENTS)
    assert rows(db, "SELECT status, events, rejected FROM sources") == rows(clean, "SELECT status, events, rejected FROM sources")
    assert rows(db, "SELECT * FROM rejects") == rows(clean, "SELECT * FROM rejects")


# -- a store location that cannot be written (directory, file, write-ahead log) -----------------
# The tests run as root, which writes anywhere; the CLI runs without any capability (setpriv,
# util-linux), so the permission bits hold for it as for any user.

UNPRIVILEGED = ["setpriv", "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all"]
CLI = str(Path(sys.executable).with_name("commitsleuth"))


def unprivileged(*args) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "COMMITSLEUTH_DB"}
    try:
        return subprocess.run([*UNPRIVILEGED, CLI, *map(str, args)], env=env, capture_output=True, text=True)
    except FileNotFoundError:
        pytest.fail("setpriv (util-linux) is needed to run the CLI without root's capabilities")


@pytest.fixture
def locked_dir(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    yield d
    d.chmod(0o755)


def test_a_new_store_in_a_read_only_directory_is_one_error(locked_dir, tmp_path):
    log = tmp_path / "hive.log"
    log.write_text(hive_log(300))
    db = locked_dir / "store.duckdb"
    locked_dir.chmod(0o555)
    r = unprivileged("ingest", log, "--db", db)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (f"Error: cannot write the store {db}: Permission denied (its directory {locked_dir} "
                        "must take the store's write-ahead log)\n")
    assert list(locked_dir.iterdir()) == []


def test_a_store_whose_write_ahead_log_cannot_be_created_is_one_error(cli, locked_dir, tmp_path):
    """The store exists and is writable, its directory is not: DuckDB opened it and failed at the
    first commit ("internal error: TransactionException"); the same command completes later."""
    log = tmp_path / "hive.log"
    log.write_text(hive_log(300))
    db = locked_dir / "store.duckdb"
    assert cli("ingest", log, "--db", db).exit_code == 0
    log.write_text(hive_log(600))
    locked_dir.chmod(0o555)
    for command in (["ingest", log], ["analyze"]):  # analyze stores its findings
        r = unprivileged(*command, "--db", db)
        assert (r.returncode, r.stdout) == (2, ""), r.stderr
        assert r.stderr == (f"Error: cannot write the store {db}: Permission denied (its directory {locked_dir} "
                            "must take the store's write-ahead log)\n")
    assert rows(db, "SELECT status, events FROM sources") == [("ok", 100)]
    locked_dir.chmod(0o755)
    r = unprivileged("ingest", log, "--db", db)
    assert r.returncode == 0, r.stderr
    assert rows(db, "SELECT status, events FROM sources") == [("ok", 200)]


def test_a_read_only_store_file_or_log_file_is_one_error(cli, tmp_path):
    log = tmp_path / "hive.log"
    log.write_text(hive_log(300))
    db = tmp_path / "store.duckdb"
    assert cli("ingest", log, "--db", db).exit_code == 0
    db.chmod(0o444)
    r = unprivileged("ingest", log, "--db", db)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"Error: cannot write the store {db}: Permission denied\n")
    db.chmod(0o644)
    wal = Path(f"{db}.wal")  # a write-ahead log left by a crash that this user cannot write
    wal.write_bytes(b"")
    wal.chmod(0o444)
    r = unprivileged("ingest", log, "--db", db)
    assert (r.returncode, r.stdout, r.stderr) == (
        2, "", f"Error: cannot write the store {db}: Permission denied (its write-ahead log {wal})\n")
