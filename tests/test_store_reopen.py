"""``Store(reopen=True)``: live capture opens its store on one host connection for every load;
after the first, a store still at the newest schema version is not migrated again, and any
other store (removed, older) is opened as a first time."""

from __future__ import annotations

import os

import duckdb
import pytest

from commitsleuth.store import Store, latest_version


@pytest.fixture
def migrations_run(monkeypatch):
    """The stores ``Store.migrate`` ran on, one entry a call (each still runs; the store
    template's making is one too)."""
    calls = []
    original = Store.migrate

    def counted(self):
        calls.append(self.path)
        return original(self)

    monkeypatch.setattr(Store, "migrate", counted)
    return calls


def _first_open(db, host) -> int:
    with Store(db, host=host, commit_checkpoints=True) as s:
        return s.add_source("live:app-1", "live", format="spark-live")


def test_a_reopened_store_at_the_newest_version_is_written_unmigrated_with_commits_as_checkpoints(tmp_path, migrations_run):
    db = str(tmp_path / "live.duckdb")
    host = duckdb.connect()
    sid = _first_open(db, host)
    assert migrations_run.count(db) == 1
    with Store(db, host=host, commit_checkpoints=True, reopen=True) as s:
        s.con.execute("BEGIN")
        s.update_source(sid, lines=7)
        s.con.execute("COMMIT")
        # the host's settings of the first open hold: the commit was its checkpoint, no log
        assert not os.path.exists(db + ".wal")
        assert s.schema_version() == latest_version()
    assert migrations_run.count(db) == 1  # the reopen did not migrate
    with Store(db, host=host, commit_checkpoints=True):
        pass
    assert migrations_run.count(db) == 2  # without reopen, every open migrates (the control)
    with Store(db, read_only=True) as s:
        assert s.query("SELECT lines FROM sources WHERE source_id = ?", [sid])[1] == [(7,)]


def test_a_reopened_store_behind_the_newest_version_is_migrated(tmp_path, migrations_run):
    db = str(tmp_path / "live.duckdb")
    host = duckdb.connect()
    _first_open(db, host)
    newest = latest_version()
    with Store(db, host=host) as s:
        name = s.query("SELECT name FROM schema_version WHERE version = ?", [newest])[1][0][0]
        s.con.execute("DELETE FROM schema_version WHERE version = ?", [newest])
    migrations_run.clear()
    # the newest migration's row is gone (what an older commitsleuth's store looks like): the
    # reopen runs the migrations, which record it again
    with Store(db, host=host, commit_checkpoints=True, reopen=True) as s:
        assert migrations_run.count(db) == 1
        assert s.query("SELECT name FROM schema_version WHERE version = ?", [newest])[1] == [(name,)]


def test_a_store_removed_between_opens_is_made_again_on_reopen(tmp_path, migrations_run):
    db = str(tmp_path / "live.duckdb")
    host = duckdb.connect()
    _first_open(db, host)
    os.remove(db)
    with Store(db, host=host, commit_checkpoints=True, reopen=True) as s:
        # a first open's setup (the new copy's schema_version stamped as its own), not a reopen's
        assert migrations_run.count(db) == 2
        assert s.schema_version() == latest_version()
        assert s.count("sources") == 0
        s.add_source("live:app-1", "live", format="spark-live")
    with Store(db, read_only=True) as s:
        assert s.count("sources") == 1
