"""Each Spark write form, written by a real PySpark session (4.x in .venv, 3.5 in
.venv-pyspark35 via ``make test-pyspark35``): what the event log says it wrote equals what live
capture stored for the same execution, and both name the location, table, partition columns,
format and mode the job was asked for."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from commitsleuth.ingest import ingest
from commitsleuth.store import Store

DRIVER = Path(__file__).with_name("write_forms_driver.py")
SQL = ("select query_id, location, table_name, partition_spec, detail from events "
       "where kind = 'query_start' order by try_cast(query_id as int)")


def _writes(db) -> dict:
    with Store(db, read_only=True) as s:
        rows = s.query(SQL)[1]
    out = {}
    for qid, location, table, spec, detail in rows:
        w = (json.loads(detail) if isinstance(detail, str) else detail or {}).get("write")
        if w:
            out[qid] = (w["command"], location, table, spec, tuple(w["partition_columns"]),
                        w["format"], w["mode"])
    return out


@pytest.fixture(scope="module")
def write_forms(tmp_path_factory):
    work = tmp_path_factory.mktemp("write-forms")
    done = subprocess.run([sys.executable, str(DRIVER), str(work)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    log = Path(done.stdout.strip().splitlines()[-1])
    with Store(work / "log.duckdb") as s:
        (r,) = ingest(s, [str(log)]).results
        assert r.status == "ok", r.reason
    return work, _writes(work / "live.duckdb"), _writes(work / "log.duckdb")


def test_event_log_names_the_same_writes_as_live_capture(write_forms):
    _, live, logged = write_forms
    assert live and live == logged


def test_each_write_form_names_its_target(write_forms):
    work, _, logged = write_forms
    wh, out = f"file://{work}/warehouse", f"file://{work}/out"
    import pyspark

    spark4 = int(pyspark.__version__.split(".")[0]) >= 4
    # Spark 3.5 prints InsertIntoHiveTable's HiveTempPath and a DSv2 write's table as object
    # hashes (HiveTempPath@c28713b, NoopWrite$@14174f2c): the plan names no location/table there.
    hive_loc = (lambda t: f"{wh}/{t}") if spark4 else (lambda t: None)
    v2_table = "noop-table" if spark4 else None
    got = {(c, loc, t, spec, parts, fmt, mode) for c, loc, t, spec, parts, fmt, mode in logged.values()}
    expected = {
        ("InsertIntoHadoopFsRelationCommand", f"{out}/pq", None, None, ("p",), "Parquet", "Overwrite"),
        ("InsertIntoHadoopFsRelationCommand", f"{out}/js", None, None, (), "JSON", "Append"),
        ("CreateDataSourceTableAsSelectCommand", None, "default.ds", None, (), None, "ErrorIfExists"),
        # the CTAS's nested insert inherits the table from its root execution
        ("InsertIntoHadoopFsRelationCommand", f"{wh}/ds", "default.ds", None, ("p",), "Parquet", "Overwrite"),
        ("InsertIntoHadoopFsRelationCommand", f"{wh}/ds", "default.ds", "p=1", ("p",), "Parquet", "Overwrite"),
        ("InsertIntoHiveTable", hive_loc("hp"), "default.hp", "p=3", ("p",), "hive", "Overwrite"),
        ("InsertIntoDataSourceDirCommand", f"{out}/dir", None, None, (), "orc", "Overwrite"),
        ("InsertIntoHadoopFsRelationCommand", f"{out}/dir", None, None, (), "ORC", "Overwrite"),
        ("SaveIntoDataSourceCommand", None, "T1", None, (), "jdbc", "Overwrite"),
        ("OverwriteByExpression", None, v2_table, None, (), None, "Overwrite"),
        ("AppendData", None, v2_table, None, (), None, "Append"),
    }
    assert expected <= got, sorted(expected - got, key=repr)
    # Hive CTAS: Spark 3.5 and 4.x plan CreateHiveTableAsSelectCommand (+ a nested insert: a
    # parquet table's is converted to InsertIntoHadoopFsRelationCommand, a textfile's stays Hive)
    hive_ctas = {(c, t) for c, _, t, *_ in got if "HiveTableAsSelect" in c}
    assert {t for _, t in hive_ctas} == {"default.hc", "default.ht"}
    assert ("InsertIntoHiveTable", hive_loc("ht"), "default.ht", None, (), "hive", "Append") in got
    assert any(c == "InsertIntoHadoopFsRelationCommand" and loc == f"{wh}/hc" and t == "default.hc"
               for c, loc, t, *_ in got)
