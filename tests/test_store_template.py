"""A new store is a copy of an empty store made once by the migrations (store.store_template):
the copy must be the store the migrations make, its bookkeeping this store's own."""

from __future__ import annotations

import datetime as dt
import re

import duckdb
import pytest

import commitsleuth.store as store_module
from commitsleuth.cache import CACHE_ENV
from commitsleuth.store import Store, migrations, store_template

SCHEMA = [
    "SELECT table_name, column_index, column_name, data_type, column_default, is_nullable FROM duckdb_columns() "
    "WHERE NOT internal ORDER BY ALL",
    "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal ORDER BY ALL",
    "SELECT function_name, macro_definition FROM duckdb_functions() WHERE function_type LIKE '%macro%' "
    "AND NOT internal ORDER BY ALL",
    "SELECT index_name, table_name, sql FROM duckdb_indexes() ORDER BY ALL",
    "SELECT sequence_name, start_value, last_value FROM duckdb_sequences() ORDER BY ALL",
    "SELECT table_name, constraint_type, constraint_text FROM duckdb_constraints() ORDER BY ALL",
    "SELECT version, name FROM schema_version ORDER BY version",
]


def _schema(path) -> list:
    """The store's catalog; a view's ``EXCLUDE (a, b)`` in sorted order: DuckDB keeps those names
    as a set and writes them in another order when it writes a catalog it has read back."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        rows = [con.execute(q).fetchall() for q in SCHEMA]
    finally:
        con.close()
    return [[tuple(re.sub(r"EXCLUDE \(([^()]*)\)", lambda m: "EXCLUDE (" + ", ".join(sorted(m[1].split(", "))) + ")", v)
                   if isinstance(v, str) else v for v in row) for row in table] for table in rows]


def _raw_compression(store) -> set:
    from commitsleuth.model import Event

    store.write_events([Event(kind="attempt_end", ts=dt.datetime(2024, 1, 1), raw="x" * 200 + str(i))
                        for i in range(3_000)])
    store.con.execute("CHECKPOINT")
    return {c for (c,) in store.con.execute(
        "SELECT DISTINCT compression FROM pragma_storage_info('events') WHERE column_name = 'raw' "
        "AND segment_type = 'VARCHAR'").fetchall()}


def test_a_store_from_the_template_is_the_store_the_migrations_make(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    Store(tmp_path / "migrated.duckdb", template=False).close()
    before = dt.datetime.now().replace(microsecond=0)
    with Store(tmp_path / "copied.duckdb") as store:
        assert store_template() is not None and store_template().parent == tmp_path / "cache"
        stamps = {a for (a,) in store.con.execute("SELECT applied_at FROM schema_version").fetchall()}
        assert _raw_compression(store) == {"ZSTD"}
    assert _schema(tmp_path / "copied.duckdb") == _schema(tmp_path / "migrated.duckdb")
    assert all(a >= before for a in stamps)
    with Store(tmp_path / "migrated.duckdb") as store:
        assert _raw_compression(store) == {"ZSTD"}


def test_the_copy_stamps_its_migrations_with_its_own_creation(tmp_path, monkeypatch):
    """schema_version says when this store got its migrations, not when the template was made."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    template = store_template()
    con = duckdb.connect(str(template))
    con.execute("UPDATE schema_version SET applied_at = TIMESTAMP '2001-02-03 04:05:06'")
    con.close()
    before = dt.datetime.now().replace(microsecond=0)
    with Store(tmp_path / "new.duckdb") as store:
        stamps = [a for (a,) in store.con.execute("SELECT applied_at FROM schema_version").fetchall()]
    assert len(stamps) == len(migrations()) and min(stamps) >= before


def test_a_changed_migration_makes_a_new_template(tmp_path, monkeypatch):
    """The template is keyed by every migration's text: one edited (or added by a merge) is in
    the next new store, never an old template's schema."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    Store(tmp_path / "a.duckdb").close()
    shipped = migrations()
    *rest, (version, name, sql) = shipped
    monkeypatch.setattr(store_module, "migrations",
                        lambda: [*rest, (version, name, sql + "\nCREATE TABLE template_probe (x INTEGER);\n")])
    with Store(tmp_path / "b.duckdb") as store:
        assert store.count("template_probe") == 0
    assert len(list((tmp_path / "cache").glob("empty-store-*.duckdb"))) == 2


def test_no_copy_over_a_store_or_beside_its_write_ahead_log(tmp_path, monkeypatch):
    """An existing store is opened, never replaced; a write-ahead log left without its store is
    DuckDB's to read, so no template is put under it."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    db = tmp_path / "s.duckdb"
    with Store(db) as store:
        store.con.execute("CREATE TABLE mine (x INTEGER)")
    with Store(db) as store:
        assert store.count("mine") == 0
    assert not store_module._from_template(str(db))
    lone = tmp_path / "lone.duckdb"
    (tmp_path / "lone.duckdb.wal").write_bytes(b"")
    assert not store_module._from_template(str(lone))
    assert not lone.exists()


def test_without_a_writable_cache_a_new_store_migrates_itself(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    monkeypatch.setenv(CACHE_ENV, str(blocked / "cache"))
    assert store_template() is None
    with Store(tmp_path / "s.duckdb") as store:
        assert store.schema_version() == migrations()[-1][0]


@pytest.mark.parametrize("setting", ["0", "1"])
def test_the_setting_turns_the_copy_off(tmp_path, monkeypatch, setting):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(store_module.TEMPLATE_ENV, setting)
    Store(tmp_path / "s.duckdb").close()
    assert any((tmp_path / "cache").glob("empty-store-*.duckdb")) == (setting == "1")
