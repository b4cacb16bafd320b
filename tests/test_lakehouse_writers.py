"""Each table commit joined to the Spark SQL execution that wrote it: the execution's plan names
the table (Delta ``WriteIntoDeltaCommand``'s OutputSpec path, a Delta V2 write's DeltaTableV2
path, Iceberg's ``IcebergWrite(table=…)``) and the commit's time lies inside its window.

The tables are written at test time by delta-rs and pyiceberg. The Spark events are the real
application start and SQL execution events of tests/corpus/spark-rapids-tools/writeformat_eventlog
with their ``physicalPlanDescription`` and ``time`` set: the plans are built from the exact strings
Spark, Delta and Iceberg print (Spark's formatted explain ``(N) Execute <command>`` / ``Arguments:``;
FileFormatWriter.OutputSpec(outputPath, customPartitionLocations, outputColumns); Delta's
DeltaTableV2(spark, path, catalogTable, …); Iceberg SparkWrite.toString
``IcebergWrite(table=%s, format=%s)``)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from commitsleuth.forensics.table_writers import commit_writers
from commitsleuth.ingest import ingest
from commitsleuth.parsers.spark_plan import write_target
from commitsleuth.report.lanes import partition_lanes
from commitsleuth.forensics.timeline import timeline
from commitsleuth.store import Store

ROWS = pa.table({"dt": ["2024-01-01", "2024-01-02"], "v": [1, 2]})
REAL = Path(__file__).parent / "corpus" / "spark-rapids-tools" / "writeformat_eventlog"
APP = "local-1629442299891"


def delta_plan(path: str) -> str:
    return ("== Physical Plan ==\nExecute WriteIntoDeltaCommand (2)\n+- LocalTableScan (1)\n\n\n"
            "(1) LocalTableScan\nOutput [2]: [dt#0, v#1L]\nArguments: [dt#0, v#1L]\n\n"
            f"(2) Execute WriteIntoDeltaCommand\nInput [2]: [dt#0, v#1L]\nArguments: OutputSpec({path},Map(),List(dt#0, v#1L))\n")


def delta_v2_plan(path: str) -> str:
    return ("== Physical Plan ==\nAppendDataExecV1 (2)\n+- LocalTableScan (1)\n\n\n"
            "(1) LocalTableScan\nOutput [2]: [dt#0, v#1L]\nArguments: [dt#0, v#1L]\n\n"
            "(2) AppendDataExecV1\nInput [2]: [dt#0, v#1L]\n"
            f"Arguments: [dt#0, v#1L], DeltaTableV2(org.apache.spark.sql.SparkSession@4f1b5d3e,{path},None,None,None,Map()), "
            "org.apache.spark.sql.execution.datasources.v2.V2Writes$$anon$1@27b6c9a1\n")


def iceberg_plan(table: str) -> str:
    return ("== Physical Plan ==\nAppendData (2)\n+- LocalTableScan (1)\n\n\n"
            "(1) LocalTableScan\nOutput [2]: [dt#0, v#1L]\nArguments: [dt#0, v#1L]\n\n"
            "(2) AppendData\nInput [2]: [dt#0, v#1L]\n"
            "Arguments: org.apache.spark.sql.execution.datasources.v2.DataSourceV2Strategy$$Lambda$1234/0x0000000801@5d2f, "
            f"IcebergWrite(table={table}, format=PARQUET)\n")


def event_log(tmp: Path, plan: str, start_ms: int, end_ms: int) -> Path:
    """The real log's application start and its SQL execution 0, with ``plan`` and times set."""
    out = []
    for line in REAL.read_text().splitlines():
        d = json.loads(line)
        if d["Event"] in ("SparkListenerLogStart", "SparkListenerApplicationStart"):
            out.append(line)
        elif d["Event"].endswith("SQLExecutionStart") and d["executionId"] == 0:
            out.append(json.dumps({**d, "physicalPlanDescription": plan, "time": start_ms}))
        elif d["Event"].endswith("SQLExecutionEnd") and d["executionId"] == 0:
            out.append(json.dumps({**d, "time": end_ms}))
    path = tmp / "logs" / APP
    path.parent.mkdir()
    path.write_text("\n".join(out) + "\n")
    return path


def test_the_plans_name_their_targets():
    assert write_target(delta_plan("file:/data/t")).path == "file:///data/t"
    assert write_target(delta_plan("/data/t")).path == "file:///data/t"  # a bare local path
    v2 = write_target(delta_v2_plan("s3a://bucket/t"))
    assert (v2.command, v2.path, v2.mode, v2.file_format) == ("AppendData", "s3a://bucket/t", "Append", "delta")
    ice = write_target(iceberg_plan("local.db.t"))
    assert (ice.command, ice.table, ice.file_format) == ("AppendData", "local.db.t", "parquet")
    replace = write_target(iceberg_plan("local.db.t").replace("AppendData", "ReplaceData"))
    assert (replace.command, replace.mode, replace.table) == ("ReplaceData", "Overwrite", "local.db.t")
    # live capture lists a write's output when it ends; never a Delta table's (judged by its log)
    assert not write_target(delta_plan("file:/data/t")).listed and not v2.listed
    parquet = ("== Physical Plan ==\nExecute InsertIntoHadoopFsRelationCommand (1)\n\n\n"
               "(1) Execute InsertIntoHadoopFsRelationCommand\nArguments: file:/tmp/out, false, Parquet, "
               "[path=file:/tmp/out], Append, [id]\n")
    assert write_target(parquet).listed and write_target(parquet).path == "file:///tmp/out"


def delta_table(tmp: Path) -> tuple[Path, int]:
    table = tmp / "t"
    write_deltalake(str(table), ROWS, partition_by=["dt"])
    return table, DeltaTable(str(table)).history()[0]["timestamp"]


def lanes(store, table, spec="dt=2024-01-01"):
    model = partition_lanes(store, timeline(store, str(table), spec))
    return {ln.label: [m.symbol for m in ln.marks] for ln in model.lanes}


def test_delta_commit_inside_an_execution_writing_the_table_is_that_executions(tmp_path):
    for n, plan in enumerate((delta_plan, delta_v2_plan)):
        work = tmp_path / str(n)
        work.mkdir()
        table, ms = delta_table(work)
        log = event_log(work, plan(f"file:{table}"), ms - 400, ms + 300)
        with Store(work / "s.duckdb") as store:
            ingest(store, [str(log), str(table)])
            (writer,) = [w for _, w, _ in commit_writers(store.con, [str(table)]).values()]
            assert writer.execution == (APP, "0")
            assert lanes(store, table) == {"delta log": ["V"], f"{APP}/SQL execution 0": ["+"]}


def test_an_execution_that_wrote_elsewhere_or_at_another_time_is_not_the_writer(tmp_path):
    """Negative twins: the same execution writing another path, and writing the table but
    ending before the commit."""
    for n, (target, window) in enumerate([("file:/elsewhere/t", (-400, 300)), (None, (-4000, -2500))]):
        work = tmp_path / str(n)
        work.mkdir()
        table, ms = delta_table(work)
        log = event_log(work, delta_plan(target or f"file:{table}"), ms + window[0], ms + window[1])
        with Store(work / "s.duckdb") as store:
            ingest(store, [str(log), str(table)])
            (writer,) = [w for _, w, _ in commit_writers(store.con, [str(table)]).values()]
            assert writer.execution is None
            shown = lanes(store, table)
            assert len(shown) == 2 and shown["delta log"] == ["V"]
            assert [name.split(" ")[:2] for name in shown if name != "delta log"] == [["delta", "v0"]]


def test_iceberg_commit_of_an_execution_naming_the_table(tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog

    for n, name in enumerate(("local.db.t", "local.db.other")):
        work = tmp_path / str(n)
        work.mkdir()
        cat = SqlCatalog("c", uri=f"sqlite:///{work}/catalog.db", warehouse=f"file://{work}/wh")
        cat.create_namespace("db")
        tbl = cat.create_table("db.t", schema=ROWS.schema)
        tbl.append(ROWS)
        ms = tbl.current_snapshot().timestamp_ms
        root = tbl.metadata.location.removeprefix("file://")
        log = event_log(work, iceberg_plan(name), ms - 400, ms + 300)
        with Store(work / "s.duckdb") as store:
            ingest(store, [str(log), root])
            (writer,) = [w for _, w, _ in commit_writers(store.con, [root]).values()]
        # the table the plan names, db.t, is the table at <warehouse>/db/t; db.other is not
        assert writer.execution == ((APP, "0") if name == "local.db.t" else None)
