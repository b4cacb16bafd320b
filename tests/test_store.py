"""The DuckDB store: versioned schema, forward-only migrations, bulk writes."""

from __future__ import annotations

import datetime as dt

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
