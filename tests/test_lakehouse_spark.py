"""Tables on any Hadoop FileSystem: ``ingest`` of a table URI reads its log through a real
PySpark session's FileSystem (as ``audit`` does), and ``ingest --engine spark`` writes a table's
log into its Parquet output as one source, loaded into the store exactly once. Tested on
``file://`` through Spark's own FileSystem, with tables delta-rs writes at test time."""

from __future__ import annotations

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from commitsleuth.cli import main
from commitsleuth.ingest import ingest
from commitsleuth.store import Store

ROWS = pa.table({"dt": ["2024-01-01", "2024-01-02"], "v": [1, 2]})
EVENTS = ("SELECT kind, path, partition_spec, detail->>'version' FROM events "
          "WHERE kind LIKE 'table_%' ORDER BY ALL")


def table_events(db) -> list[tuple]:
    with Store(db, read_only=True) as store:
        return store.con.execute(EVENTS).fetchall()


def sources(db) -> list[tuple]:
    with Store(db, read_only=True) as store:
        return store.con.execute("SELECT uri, kind, format, status FROM sources ORDER BY ALL").fetchall()


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "t"
    write_deltalake(str(path), ROWS, partition_by=["dt"])
    write_deltalake(str(path), ROWS, mode="append", partition_by=["dt"])
    return path


def test_ingest_of_a_table_uri_reads_it_through_sparks_filesystem(spark, tmp_path, table):
    with Store(tmp_path / "local.duckdb") as store:
        ingest(store, [str(table)])
    with Store(tmp_path / "uri.duckdb") as store:
        (result,) = ingest(store, [f"file://{table}/_delta_log"]).results
        assert (result.status, result.format) == ("ok", "delta-log")
    # keyed as the local read keys it: one timeline whichever way the table was reached
    assert table_events(tmp_path / "uri.duckdb") == table_events(tmp_path / "local.duckdb") != []
    assert sources(tmp_path / "uri.duckdb") == [(f"{table}/_delta_log", "table_log", "delta-log", "ok")]


def test_a_uri_that_is_no_table_is_a_clear_error(spark, tmp_path, capsys):
    """The negative twin: a plain directory by URI is not guessed into a table."""
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "part-00000").write_text("x\n")
    assert main(["ingest", "--db", str(tmp_path / "s.duckdb"), f"file://{plain}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"Error: file://{plain}: not a Delta, Iceberg or Hudi table here") and err.count("\n") == 1


def test_engine_spark_writes_a_table_log_once_and_replaces_it_when_it_grew(spark, tmp_path, table, capsys):
    db, out = tmp_path / "spark.duckdb", tmp_path / "out"
    args = ["ingest", "--engine", "spark", "--out", str(out), "--db", str(db), f"file://{table}"]
    assert main(args) == 0
    assert "spark: parsed 1 file (1 ok)" in capsys.readouterr().out
    with Store(tmp_path / "local.duckdb") as store:
        ingest(store, [str(table)])
    assert table_events(db) == table_events(tmp_path / "local.duckdb") != []
    assert sources(db) == [(f"{table}/_delta_log", "table_log", "delta-log", "ok")]
    # unchanged: not read again, nothing loaded twice
    assert main(args) == 0
    assert "(1 unchanged)" in capsys.readouterr().out
    assert table_events(db) == table_events(tmp_path / "local.duckdb")
    # a new commit: the table's log is read whole again and replaces the last read
    write_deltalake(str(table), ROWS, mode="append", partition_by=["dt"])
    assert main(args) == 0
    with Store(tmp_path / "local2.duckdb") as store:
        ingest(store, [str(table)])
    assert table_events(db) == table_events(tmp_path / "local2.duckdb")
    assert len(table_events(db)) > len(table_events(tmp_path / "local.duckdb"))
    assert len(sources(db)) == 1
