"""The DuckDB store: versioned schema, forward-only migrations, bulk writes."""

from __future__ import annotations

import datetime as dt
import os

import duckdb

import pytest

from commitsleuth.errors import StoreError
from commitsleuth.model import EVENT_COLUMNS, Event
from commitsleuth.store import Store, latest_version, migrations


def test_fresh_store_has_every_table_at_the_latest_version(db_path):
    with Store(db_path) as s:
        tables = {r[0] for r in s.con.execute("select table_name from information_schema.tables").fetchall()}
        assert {"schema_version", "sources", "events", "rejects", "findings", "timeline"} <= tables
        assert s.schema_version() == latest_version()
        cols = [r[0] for r in s.con.execute(
            "select column_name from information_schema.columns where table_name='events' order by ordinal_position"
        ).fetchall()]
        assert tuple(cols) == EVENT_COLUMNS


def test_migrations_have_unique_increasing_numbers():
    versions = [v for v, _, _ in migrations()]
    assert versions[0] == 1
    assert versions == sorted(set(versions))


def test_reopening_runs_nothing_twice(db_path):
    Store(db_path).close()
    with Store(db_path) as s:
        # migrations are numbered by issue (0001, 0005, …): gaps are normal, each runs once
        applied = [r[0] for r in s.con.execute("select version from schema_version order by version").fetchall()]
        assert applied == [v for v, _, _ in migrations()]
        assert applied[-1] == latest_version()


def test_a_newer_store_is_refused(db_path):
    Store(db_path).close()
    con = duckdb.connect(str(db_path))
    con.execute("insert into schema_version values (999, 'future', now())")
    con.close()
    with pytest.raises(StoreError, match="schema version 999, newer than this commitsleuth"):
        Store(db_path)


def test_bulk_write_assigns_increasing_ids(store):
    evs = [Event(kind="rename", path=f"/t/p=1/00000{i}_0", ts=dt.datetime(2020, 1, 1, 0, 0, i)) for i in range(3)]
    assert store.write_events(evs) == 3
    assert store.write_events(evs[:1]) == 1
    ids = [r[0] for r in store.con.execute("select event_id from events order by event_id").fetchall()]
    assert ids == [1, 2, 3, 4]


def test_read_only_open_of_a_missing_store_is_a_clear_error(tmp_path):
    with pytest.raises(StoreError, match="no database at .*: run 'commitsleuth ingest' first"):
        Store(tmp_path / "missing.duckdb", read_only=True)


def test_a_migration_numbered_below_the_newest_applied_still_runs(tmp_path):
    """Migrations are numbered by issue: a store made before 0010 existed, already at 0013, gets it."""
    from commitsleuth.store import Store

    db = tmp_path / "old.duckdb"
    with Store(db) as store:
        store.con.execute("DROP TABLE superseded_events")
        store.con.execute("DELETE FROM schema_version WHERE version = 10")
    with Store(db) as store:
        assert store.count("superseded_events") == 0
        assert 10 in {v for (v,) in store.con.execute("SELECT version FROM schema_version").fetchall()}


def _raw_encodings(store) -> set[str]:
    store.con.execute("CHECKPOINT")
    return {c for (c,) in store.con.execute(
        "SELECT DISTINCT compression FROM pragma_storage_info('events') WHERE column_name = 'raw' "
        "AND segment_type = 'VARCHAR'").fetchall()}


def _some_events(n: int) -> list[Event]:
    ts = dt.datetime(2024, 1, 1)
    return [Event(kind="attempt_end", ts=ts, raw=f'{{"Event":"SparkListenerTaskEnd","Task ID":{i}}}' * 8)
            for i in range(n)]


def test_raw_lines_are_stored_zstd_compressed(db_path):
    """Migration 0019: raw, most of a store's bytes, is zstd-compressed (cheap to write)."""
    with Store(db_path) as store:
        store.write_events(_some_events(5_000))
        assert _raw_encodings(store) == {"ZSTD"}
        assert [r[0] for r in store.con.execute("DESCRIBE events").fetchall()][-1] == "raw"


def test_a_store_on_storage_older_than_zstd_still_migrates(tmp_path, monkeypatch):
    """A store file created for DuckDB 1.0 storage cannot hold zstd: 0019 keeps its encodings."""
    import commitsleuth.store as store_module

    db = tmp_path / "old.duckdb"
    monkeypatch.setattr(store_module, "STORAGE_COMPATIBILITY", "v1.0.0")
    with Store(db) as store:
        assert store.schema_version() == latest_version()
        store.write_events(_some_events(5_000))
        assert "ZSTD" not in _raw_encodings(store)
    monkeypatch.undo()
    with Store(db) as store:  # and opens as before under today's setting
        assert store.count("events") == 5_000


def test_batches_left_open_are_all_or_nothing(db_path):
    """An ingest commits its checkpoints in transactions of many batches: a store closed before
    the commit (a crash) holds none of them and the source's progress from before; the commit
    holds them all with the last progress."""
    from commitsleuth.model import events_to_arrow

    def batch(n):
        return events_to_arrow(_some_events(n), None)

    with Store(db_path) as store:
        sid = store.add_source("/logs/app.log", "file")
        store.write_checkpoint(batch(10), sid, bytes_read=100, lines=10, events=10)
        store.write_checkpoint(batch(20), sid, commit=False, bytes_read=300, lines=30, events=30)
        store.write_checkpoint(batch(30), sid, commit=False, bytes_read=600, lines=60, events=60)
    with Store(db_path) as store:
        assert store.count("events") == 10
        assert store.con.execute("SELECT bytes_read, lines, events FROM sources").fetchall() == [(100, 10, 10)]
        store.write_checkpoint(batch(20), sid, commit=False, bytes_read=300, lines=30, events=30)
        store.write_checkpoint(batch(30), sid, commit=False, bytes_read=600, lines=60, events=60)
        store.commit_pending()
        store.commit_pending()  # nothing left open: a no-op
    with Store(db_path) as store:
        assert store.count("events") == 60
        assert store.con.execute("SELECT min(event_id), max(event_id), count(DISTINCT event_id) FROM events"
                                 ).fetchall() == [(1, 60, 60)]
        assert store.con.execute("SELECT bytes_read, lines, events FROM sources").fetchall() == [(600, 60, 60)]


def test_a_store_attached_to_a_host_connection_is_the_same_store_and_lets_go_at_close(tmp_path):
    """Live capture attaches the store to one in-memory connection for each load: the file is
    created at the storage version plain DuckDB 1.2 reads, migrated, written, and after close()
    its lock is free and the write is in the file (no write-ahead log left for a reader)."""
    db = str(tmp_path / "attached.duckdb")
    host = duckdb.connect()
    for round_ in range(2):
        with Store(db, host=host) as s:
            assert s.schema_version() == latest_version()
            s.write_events([Event("task_end", task_id=f"t{round_}")])
        assert not (tmp_path / "attached.duckdb.wal").exists()
        with Store(db, read_only=True) as r:  # the lock is free: another connection opens it
            assert r.count("events") == round_ + 1
            assert r.con.execute("SELECT tags['storage_version'] FROM duckdb_databases() "
                                 "WHERE database_name = 'attached'").fetchone()[0] == "v1.2.0+"
    assert host.execute("SELECT count(*) FROM duckdb_databases() WHERE NOT internal").fetchone()[0] == 1


@pytest.mark.parametrize("checkpointing", [False, True])
def test_a_store_that_commits_as_checkpoints_writes_no_write_ahead_log(tmp_path, checkpointing):
    """Live capture's loads (``commit_checkpoints``): a COMMIT is the checkpoint, so the rows are
    written once, into the file: no write-ahead log holds them after the commit (without it, the
    log holds every row until the close's checkpoint writes them a second time)."""
    from commitsleuth.model import events_to_arrow

    db = tmp_path / "live.duckdb"
    host = duckdb.connect()
    Store(db, host=host).close()  # created and migrated
    batch = events_to_arrow(_some_events(1_000), None)
    s = Store(db, host=host, commit_checkpoints=checkpointing)
    wal = tmp_path / "live.duckdb.wal"
    try:
        s.con.execute("BEGIN")
        s.write_arrow(batch)
        s.con.execute("COMMIT")
        logged = wal.stat().st_size if wal.exists() else 0
    finally:
        s.close()
    if checkpointing:
        assert logged < 1_000  # DuckDB 2.0.1 may leave a marker of a few bytes, never the rows
    else:
        assert logged > pc_sum_lengths(batch.column("raw"))
    with Store(db, read_only=True) as r:
        assert r.count("events") == 1_000


@pytest.mark.parametrize("rows", [999, 1_000])
def test_an_ingest_transaction_of_many_events_commits_as_a_checkpoint(tmp_path, monkeypatch, rows):
    """An ingest's transaction of at least CHECKPOINT_COMMIT_ROWS events commits straight into the
    file (its rows compressed once, none written first into the write-ahead log); a smaller one
    goes into the log as before, and commits after the big one do too."""
    from commitsleuth import store as store_module
    from commitsleuth.model import events_to_arrow

    monkeypatch.setattr(store_module, "CHECKPOINT_COMMIT_ROWS", 1_000)
    db = tmp_path / "ingest.duckdb"
    wal = tmp_path / "ingest.duckdb.wal"
    with Store(db) as s:
        s.con.execute("CHECKPOINT")  # the migrations' own commits out of the log
        sid = s.add_source("/logs/app.json", "file")
        s.write_checkpoint(events_to_arrow(_some_events(rows - 500), None), sid, commit=False, bytes_read=1)
        s.write_checkpoint(events_to_arrow(_some_events(500), None), sid, bytes_read=2)
        logged = wal.stat().st_size if wal.exists() else 0
        s.write_checkpoint(events_to_arrow(_some_events(10), None), sid, bytes_read=3)
        after = wal.stat().st_size if wal.exists() else 0
    if rows >= 1_000:
        assert logged < 1_000  # DuckDB may leave a marker of a few bytes, never the rows
    else:
        assert logged > 50_000
    assert after > logged  # the next small commit: into the log
    with Store(db, read_only=True) as r:
        assert r.count("events") == rows + 10
        assert r.con.execute("SELECT bytes_read FROM sources").fetchall() == [(3,)]


def pc_sum_lengths(column) -> int:
    import pyarrow.compute as pc

    return pc.sum(pc.binary_length(column)).as_py()


@pytest.mark.parametrize("checkpointing", [False, True])
def test_a_commit_that_fails_is_not_in_the_store(tmp_path, checkpointing):
    """A commit whose write fails (a directory where the write-ahead log would go: DuckDB 2.0.1
    opens it at a checkpoint too) raises, and none of its rows is in the store; one that does not
    raise holds them all (DuckDB 2.0.0 wrote nothing there at a checkpoint). Either way the
    capture never writes again rows that are stored, nor loses rows it was told are stored."""
    from commitsleuth.model import events_to_arrow

    db = tmp_path / "live.duckdb"
    host = duckdb.connect()
    Store(db, host=host).close()
    s = Store(db, host=host, commit_checkpoints=checkpointing)
    wal = tmp_path / "live.duckdb.wal"
    wal.mkdir()
    committed = False
    try:
        s.con.execute("BEGIN")
        s.write_arrow(events_to_arrow(_some_events(10), None))
        try:
            s.con.execute("COMMIT")
            committed = True
        except duckdb.Error:
            pass
    finally:
        wal.rmdir()
        try:
            s.close()
        except duckdb.Error:  # invalidated by the failed checkpoint: a new host, as live capture does
            host.close()
    if not checkpointing:
        assert not committed  # the log cannot be written: the commit fails
    with Store(db, read_only=True) as r:
        assert r.count("events") == (10 if committed else 0)


def _row_groups(store) -> int:
    return store.con.execute("SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('events')").fetchone()[0]


def test_checkpointed_loads_keep_their_row_groups_until_merging_is_allowed(tmp_path):
    """Each checkpointed commit leaves its rows in a row group of their own; DuckDB merges the
    small ones (rewriting their rows) only at a checkpoint that may (live capture: every
    MERGE_EVERY-th load)."""
    from commitsleuth.model import events_to_arrow

    db = tmp_path / "live.duckdb"
    host = duckdb.connect()
    for load in range(4):
        with Store(db, host=host, commit_checkpoints=True) as s:
            s.merge_row_groups(load == 3)
            s.con.execute("BEGIN")
            s.write_arrow(events_to_arrow(_some_events(1_000), None))
            s.con.execute("COMMIT")
            if load < 3:
                assert _row_groups(s) == load + 1
            else:
                assert _row_groups(s) == 1
                assert s.count("events") == 4_000


def test_a_store_file_of_a_newer_storage_version_attaches_as_it_is(tmp_path):
    db = str(tmp_path / "plain.duckdb")
    duckdb.connect(db).close()  # the user's own DuckDB made it, at its default storage version
    with Store(db, host=duckdb.connect()) as s:
        assert s.schema_version() == latest_version()


def test_an_attached_store_locked_by_another_process_is_a_lock_error(tmp_path):
    import subprocess
    import sys

    from commitsleuth.errors import StoreLockedError

    db = str(tmp_path / "held.duckdb")
    Store(db).close()
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb,sys; c=duckdb.connect(sys.argv[1]); "
                               "print('locked', flush=True); sys.stdin.read()", db],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    host = duckdb.connect()
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(StoreLockedError, match="locked by another process"):
            Store(db, host=host)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    with Store(db, host=host) as s:  # the failed attach left nothing behind
        assert s.count("events") == 0


def test_a_store_attached_in_this_process_is_a_lock_error_for_another_connection(tmp_path):
    """A reader in the capture's own process during a load waits (open_waiting retries) like
    one in another process."""
    from commitsleuth.errors import StoreLockedError

    db = str(tmp_path / "mine.duckdb")
    with Store(db, host=duckdb.connect()):
        with pytest.raises(StoreLockedError, match="open in another connection of this process"):
            Store(db, read_only=True)
        with pytest.raises(StoreLockedError, match="open in another connection of this process"):
            Store(db, host=duckdb.connect())
    with Store(db, read_only=True) as r:
        assert r.count("events") == 0


def test_a_reader_that_gives_up_waiting_leaves_no_wait_marker(tmp_path):
    """The marker tells a live capture that a reader waits: one that gave up waits no more."""
    from commitsleuth.errors import StoreLockedError
    from commitsleuth.store import open_waiting, reader_waiting, wait_marker

    db = str(tmp_path / "held.duckdb")
    with Store(db, host=duckdb.connect()):  # held by this process's capture-like connection
        with pytest.raises(StoreLockedError):
            open_waiting(db, read_only=True, wait=0.3)
    assert not os.path.exists(wait_marker(db)) and not reader_waiting(db)
