"""A table log in the timelines: the log is a lane of its own with one mark per commit; the files
a commit added or removed sit on their partitions' lanes, on the lane of the writer the store can
name (the Spark attempt by the TID in the file's name, the application by ``spark.app.id``),
else of the commit itself. Tables written at test time by delta-rs and pyiceberg."""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import CommitProperties, DeltaTable, write_deltalake

from commitsleuth.forensics.timeline import timeline
from commitsleuth.ingest import ingest
from commitsleuth.report.lanes import partition_lanes
from commitsleuth.store import Store

ROWS = pa.table({"dt": ["2024-01-01", "2024-01-02"], "v": [1, 2]})
CORPUS = Path(__file__).parent / "corpus"
APP = "app-20161116163331-0000"  # tests/corpus/spark-events: its task TID 11 ran in stage 1.0


def lanes_of(store: Store, table: str, partition: str | None = None) -> list[tuple[str, str, list[str]]]:
    model = partition_lanes(store, timeline(store, table, partition))
    return [(ln.label, ln.actor_type, [m.symbol + m.event.kind.removeprefix("table_") for m in ln.marks])
            for ln in model.lanes]


def test_delta_log_is_a_lane_and_files_sit_on_their_writers_lanes(tmp_path):
    table = tmp_path / "t"
    write_deltalake(str(table), ROWS, partition_by=["dt"])
    write_deltalake(str(table), ROWS, mode="append", partition_by=["dt"],
                    commit_properties=CommitProperties(custom_metadata={"spark.app.id": APP}))
    DeltaTable(str(table)).optimize.compact()
    with Store(tmp_path / "s.duckdb") as store:
        ingest(store, [str(table)])
        lanes = lanes_of(store, str(table), "dt=2024-01-01")
        ops = {ln[0] for ln in lanes}
        assert lanes[0] == ("delta log", "log", ["Vcommit", "Vcommit", "Vcommit"])  # one mark per commit
        # version 1 names its application: its file is on the app's lane; the others on their commit's
        assert (APP, "app", ["+add"]) in lanes
        optimize = next(ln for ln in lanes if ln[0].startswith("delta v2 "))
        assert sorted(optimize[2]) == ["+add", "-remove", "-remove"]  # OPTIMIZE removed both, added one
        assert len(ops) == 4 and all("unknown" not in op for op in ops)
        # a file event is read at its commit file's line, the commit at its commit file
        rows = timeline(store, str(table), "dt=2024-01-01")
        model = partition_lanes(store, rows)
        wheres = {e.kind: e.where for e in model.events}
        assert wheres["table_add"].startswith(f"{table}/_delta_log/0000000000000000000")
        assert wheres["table_add"].rsplit(":", 1)[1].isdigit()
        assert wheres["table_commit"].endswith(".json")


def test_a_table_without_writer_identity_has_a_lane_per_commit(tmp_path):
    """The negative twin: no spark.app.id and no TID, so every commit's files are the commit's."""
    table = tmp_path / "t"
    write_deltalake(str(table), ROWS, partition_by=["dt"])
    write_deltalake(str(table), ROWS, mode="append", partition_by=["dt"])
    with Store(tmp_path / "s.duckdb") as store:
        ingest(store, [str(table)])
        lanes = lanes_of(store, str(table), "dt=2024-01-02")
    assert [ln[0].split(" ")[:2] for ln in lanes] == [["delta", "log"], ["delta", "v0"], ["delta", "v1"]]
    assert [ln[1] for ln in lanes] == ["log", "commit", "commit"]
    assert all(ln[1] != "app" for ln in lanes)


def spark_named_files(tmp_path: Path, tid: int, part: int | None = None) -> list[str]:
    """Parquet files named as Spark's Iceberg writer names them (OutputFileFactory:
    ``%05d-%d-%s-%05d`` of partitionId, taskId, operationId, fileCount, then ``-suffix.parquet``)."""
    out = []
    for dt_value in ("2024-01-01", "2024-01-02"):
        d = tmp_path / "data" / f"dt={dt_value}"
        d.mkdir(parents=True)
        path = d / f"{tid if part is None else part:05d}-{tid}-{uuid.uuid4()}-00001.parquet"
        pq.write_table(pa.table({"dt": [dt_value], "v": [1]}), path)
        out.append(str(path))
    return out


def iceberg_with_spark_files(tmp_path: Path, tid: int, app: str | None, part: int | None = None) -> str:
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh")
    cat.create_namespace("db")
    tbl = cat.create_table("db.t", schema=ROWS.schema)
    with tbl.update_spec() as spec:
        spec.add_identity("dt")
    tbl.add_files(spark_named_files(tmp_path, tid, part), snapshot_properties={"spark.app.id": app} if app else {})
    return tbl.metadata.location.removeprefix("file://")


def test_iceberg_file_named_by_spark_sits_on_its_attempts_lane(tmp_path):
    root = iceberg_with_spark_files(tmp_path, 11, APP)
    with Store(tmp_path / "s.duckdb") as store:
        ingest(store, [str(CORPUS / "spark-events" / APP), root])
        lanes = lanes_of(store, root, "dt=2024-01-01")
    assert ("iceberg log", "log", ["Vcommit"]) in lanes
    # the attempt's one label (forensics/attempt_labels.py), which names its application
    assert (f"{APP}/stage 0.0/task 11 attempt 0 (TID 11) on 172.22.0.167", "attempt", ["+add"]) in lanes


def test_a_tid_no_attempt_of_the_store_has_stays_on_the_commits_lane(tmp_path):
    """Negative twins: a TID the file's application never ran (999), a TID the store holds
    for another application than the one the snapshot names, and the right TID with another
    partition index than its task's (task 11 wrote partition 11, never 00003)."""
    for n, (tid, app, part) in enumerate([(999, APP, None), (11, "app-20990101000000-0001", None), (11, APP, 3)]):
        work = tmp_path / str(n)
        work.mkdir()
        root = iceberg_with_spark_files(work, tid, app, part)
        with Store(work / "s.duckdb") as store:
            ingest(store, [str(CORPUS / "spark-events" / APP), root])
            lanes = lanes_of(store, root, "dt=2024-01-01")
        assert sorted(lanes) == [(app, "app", ["+add"]), ("iceberg log", "log", ["Vcommit"])]


def test_hudi_write_token_ties_by_tid_partition_and_stage(tmp_path):
    """Hudi names a file {fileId}_{writeToken}_{instant}.parquet, writeToken
    partitionId-stageId-TID (FSUtils.makeWriteToken): all three must be the attempt's."""
    from commitsleuth.forensics.table_writers import attempt_labels
    from commitsleuth.parsers.lakehouse import writer_of

    w = writer_of("4f2685a3-614f-49ca-9b2b-e1cb9fb61f27-0_11-0-11_20240707001302376.parquet")
    key = (w["tid"], None, w["spark_partition"], w["stage_id"])
    assert key == (11, None, 11, 0)
    with Store(tmp_path / "s.duckdb") as store:
        ingest(store, [str(CORPUS / "spark-events" / APP)])
        found = attempt_labels(store.con, [key, (11, None, 11, 5), (11, None, 3, 0), (11, "app-other", 11, 0)])
    assert found == {key: "task 11.0 in stage 0.0 (TID 11)"}  # spark_task_attempts.label


def test_hudi_log_lane_first_and_files_read_at_their_instant(tmp_path):
    """A Spark-written Hudi table (apache/hudi-rs test data): the log's lane on top, each
    file at the instant file that committed it."""
    import zipfile

    name = "v6_simplekeygen_nonhivestyle_overwritetable"
    with zipfile.ZipFile(CORPUS / "lakehouse" / "hudi-rs" / f"{name}.zip") as z:
        z.extractall(tmp_path)
    table = tmp_path / name
    with Store(tmp_path / "s.duckdb") as store:
        ingest(store, [str(table)])
        lanes = lanes_of(store, str(table), "byteField=10")
        model = partition_lanes(store, timeline(store, str(table), "byteField=10"))
    assert lanes[0] == ("hudi log", "log", ["Vcommit"] * 3)
    assert all(ln[1] == "commit" and ln[0].startswith("hudi instant 2024070700130") for ln in lanes[1:])
    first = next(e for e in model.events if e.kind == "table_add")
    assert first.where == f"{table}/.hoodie/20240707001301554.commit"
