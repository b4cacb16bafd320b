"""The shortcuts the table readers take for big logs (bench/lakehouse.py times them) give what
the plain way gives: a data file's directory resolved once, a manifest read without its
column statistics."""

from __future__ import annotations

import io
from pathlib import Path

import fastavro
import orjson
import pyarrow as pa
import pytest

from commitsleuth.forensics.paths import resolve
from commitsleuth.parsers.formats import iceberg_metadata
from commitsleuth.parsers.lakehouse import millis, new_log, resolve_file, table_formats

PATHS = [
    "/wh/db.db/t/dt=2024-01-01/part-00003-0a1b2c3d-0000-4000-8000-000000000001-c000.snappy.parquet",
    "/wh/db.db/t/dt=2024-01-01/h=3/00000-7-0b0c0d0e-0000-4000-8000-000000000001-00001.parquet",
    "/wh/t/.spark-staging-0a1b2c3d-0000-4000-8000-000000000001/dt=1/part-00000-0a1b2c3d-0000-4000-8000-000000000001.c000",
    "/wh/t/_temporary/0/_temporary/attempt_202401010000_0001_m_000003_7/dt=1/part-00003",
    "/wh/t/.hive-staging_hive_1/-ext-10000/dt=1/_tmp.000005_1",
    "/wh/t/dt=1/000005_0_copy_2",
    "/wh/t/dt=1/.part-00001.crc",
    "/wh/t/dt=1/part-r-00004.snappy",
    "s3a://bucket/t/dt=1/part-00001-0a1b2c3d-0000-4000-8000-000000000001.parquet",
    "s3a://bucket/f.parquet",
    "hdfs://nn:8020/wh/t/x=1/y=2",  # a k=v last segment: a directory to resolve()
    "/wh/t/dt=1/weird:",  # resolve() alone would read a name ending in ":" as a scheme
    "/f.parquet",
    "/wh/t/a=1/mid/b=2/f.parquet",  # a k=v segment in the middle is no partition
]


@pytest.mark.parametrize("path", PATHS)
def test_resolve_file_is_resolve(path):
    assert resolve_file(path) == resolve(path)


def _iceberg(tmp_path: Path):
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("t", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/wh")
    cat.create_namespace("db")
    rows = pa.table({"dt": ["2024-01-01", "2024-01-02"], "v": [1, 2]})
    tbl = cat.create_table("db.t", schema=rows.schema)
    with tbl.update_spec() as spec:
        spec.add_identity("dt")
    tbl.append(rows)
    return tbl


def test_manifest_entries_read_without_their_statistics_keep_every_field_an_event_takes(tmp_path):
    tbl = _iceberg(tmp_path)
    manifest = tbl.current_snapshot().manifests(tbl.io)[0].manifest_path
    full = list(fastavro.reader(io.BytesIO(Path(manifest.removeprefix("file://")).read_bytes())))
    root = tbl.metadata.location.removeprefix("file://")
    fmt = next(f for f in table_formats() if f.name == "iceberg-metadata")
    log = new_log(root, fmt)
    cut = iceberg_metadata._avro(log, manifest, fastavro, project=iceberg_metadata._ENTRY_FIELDS)
    assert len(cut) == len(full) == 2
    for a, b in zip(cut, full):
        assert "column_sizes" in b["data_file"] and "column_sizes" not in a["data_file"]
        assert a["status"] == b["status"] and a["snapshot_id"] == b["snapshot_id"]
        for key in ("content", "file_path", "partition", "record_count", "file_size_in_bytes"):
            assert a["data_file"][key] == b["data_file"][key]


def test_projection_keeps_only_the_fields_the_writer_has():
    schema = {"type": "record", "name": "e", "fields": [
        {"name": "status", "type": "int"},
        {"name": "data_file", "type": {"type": "record", "name": "d", "fields": [
            {"name": "file_path", "type": "string"}, {"name": "column_sizes", "type": "long"}]}},
        {"name": "other", "type": "int"}]}
    cut = iceberg_metadata._projection(schema, iceberg_metadata._ENTRY_FIELDS)
    assert [f["name"] for f in cut["fields"]] == ["status", "data_file"]
    assert [f["name"] for f in cut["fields"][1]["type"]["fields"]] == ["file_path"]


def test_progress_moves_within_a_batch(tmp_path, monkeypatch):
    """A long log moves the bar as its files are read, not once per batch of events stored."""
    from deltalake import write_deltalake

    from commitsleuth.ingest import ingest
    from commitsleuth.parsers import lakehouse
    from commitsleuth.store import Store

    table = tmp_path / "t"
    for _ in range(4):
        write_deltalake(str(table), pa.table({"v": [1]}), mode="append")
    monkeypatch.setattr(lakehouse, "STEP", 2)
    advanced = []
    with Store(tmp_path / "s.duckdb") as store:
        report = ingest(store, [str(table)], progress=advanced.append)
    assert report.events == 8
    assert len([n for n in advanced if n]) >= 3
    assert sum(advanced) == sum(p.stat().st_size for p in (table / "_delta_log").glob("*.json"))


NAMES = [p.rsplit("/", 1)[-1] for p in PATHS] + [
    "000005_0", "000005", "_tmp.000001_2", "part-m-00003", "x.parquet", ".hidden_1",
    "00000-600000-0b0c0d0e-0000-4000-8000-0000000927c0-00001.parquet",  # Spark's Iceberg name
    "00001-12-0b0c0d0e-0000-4000-8000-0000000927c0-00002-deletes.parquet",
    "abc-1_0-5-17_20240101010101.parquet",  # Hudi base file
    ".abc-1_20240101010101.log.1_2-3-44",  # Hudi log file
]


def test_names_resolved_all_at_once_are_resolve_and_writer_of_one_by_one():
    from commitsleuth.forensics.paths import resolve_names
    from commitsleuth.parsers.lakehouse import writer_of, writers_of

    facts, writers = resolve_names(pa.array(NAMES)), writers_of(pa.array(NAMES))
    for i, name in enumerate(NAMES):
        one = resolve(name)
        assert (facts["file_task"][i].as_py(), facts["file_attempt"][i].as_py(), facts["write_uuid"][i].as_py()) == \
            (one.file_task, one.file_attempt, one.write_uuid), name
        assert {k: v[i].as_py() for k, v in writers.items() if v[i].is_valid} == writer_of(name), name
    assert writers["tid"].null_count < len(NAMES) and facts["file_attempt"].null_count < len(NAMES)


def _events(root: str):
    from commitsleuth.parsers.lakehouse import read_table, table_root

    log, events = read_table(*table_root(root))
    return log.problems, [(e.kind, e.ts, e.path, e.location, e.table_name, e.partition_spec, e.file_name,
                           e.file_task, e.file_attempt, e.write_uuid, e.size, e.app_id, e.status, e.detail)
                          for e in events]


def test_manifest_file_events_are_what_data_file_gives_each_file(tmp_path, monkeypatch):
    """The columnar events of a manifest's entries carry what ``TableLog.data_file`` gives one
    file: its path as every source keys it, partition, name, task, attempt, writer, detail
    (a manifest decoded in chunks of one entry here, of thousands on a big table)."""
    monkeypatch.setattr(iceberg_metadata, "CHUNK", 1)
    tbl = _iceberg(tmp_path)
    tbl.overwrite(pa.table({"dt": ["2024-01-03"], "v": [3]}))  # removes too
    root = tbl.metadata.location.removeprefix("file://")
    _, events = _events(root)
    fmt = next(f for f in table_formats() if f.name == "iceberg-metadata")
    log = new_log(root, fmt)
    files = [e for e in events if e[0] != "table_commit"]
    assert {e[0] for e in files} == {"table_add", "table_remove"}
    for event in files:
        kind, ts, path, _, _, spec, *_, size, app, _, detail = event
        facts = {k: v for k, v in detail.items() if k not in ("format", "version")}
        one = log.data_file(kind, detail["version"], ts, "file://" + path, partition_spec=spec, size=size,
                            app_id=app, **facts)
        assert (one.kind, one.ts, one.path, one.location, one.table_name, one.partition_spec, one.file_name,
                one.file_task, one.file_attempt, one.write_uuid, one.size, one.app_id, one.status,
                one.detail) == event


def test_manifests_decoded_ahead_by_workers_read_as_in_process(tmp_path, monkeypatch):
    """Worker processes decoding the manifests ahead give the same events and problems, a
    damaged manifest named as the reading names it."""
    tbl = _iceberg(tmp_path)
    tbl.append(pa.table({"dt": ["2024-01-03"], "v": [3]}))
    tbl.overwrite(pa.table({"dt": ["2024-01-04"], "v": [4]}))
    root = tbl.metadata.location.removeprefix("file://")
    damaged = sorted(Path(root, "metadata").glob("*-m0.avro"))[0]
    damaged.write_bytes(damaged.read_bytes()[:200])
    monkeypatch.setattr(iceberg_metadata, "AHEAD_BYTES", 1 << 40)
    here = _events(root)
    monkeypatch.setattr(iceberg_metadata, "AHEAD_BYTES", 0)
    monkeypatch.setenv(iceberg_metadata.WORKERS_ENV, "1")
    sent = []
    monkeypatch.setattr(iceberg_metadata._Ahead, "_send", lambda self, f=iceberg_metadata._Ahead._send: (
        sent.append(bool(self.order)), f(self))[1])
    ahead = _events(root)
    assert any(sent)
    assert ahead == here
    # named once by each snapshot whose list names it (a later snapshot's list may carry it on)
    assert {file for file, _ in here[0]} == {str(damaged)} and "not readable Avro" in here[0][0][1]
    assert any(e[0] == "table_add" for e in here[1])


class _Gone:
    """A process pool whose workers die (or that cannot start at all)."""

    def __init__(self, *args, start: bool = True, **kwargs):
        if not start:
            raise OSError("no processes")

    def submit(self, *args):
        from concurrent.futures import Future
        from concurrent.futures.process import BrokenProcessPool

        future = Future()
        future.set_exception(BrokenProcessPool("a worker was killed"))
        return future

    def shutdown(self, **kwargs):
        pass


@pytest.mark.parametrize("start", [True, False])
def test_manifests_are_decoded_here_when_workers_die_or_cannot_start(tmp_path, monkeypatch, start):
    import concurrent.futures

    tbl = _iceberg(tmp_path)
    tbl.append(pa.table({"dt": ["2024-01-03"], "v": [3]}))
    root = tbl.metadata.location.removeprefix("file://")
    here = _events(root)
    monkeypatch.setattr(iceberg_metadata, "AHEAD_BYTES", 0)
    monkeypatch.setenv(iceberg_metadata.WORKERS_ENV, "1")
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", lambda *a, **k: _Gone(start=start))
    assert _events(root) == here and len(here[1]) > 2


@pytest.mark.parametrize("spec", [None, "dt=2024-01-09"])
def test_delta_rows_of_a_batch_are_what_data_file_gives_each_file(spec):
    """Delta's columnar rows resolve their files' paths a batch at once (``file_columns``): each
    row holds what ``TableLog.data_file`` gives that one file (partition, name, task, attempt,
    writer facts in ``detail``), whatever the path: every spelling of ``PATHS``."""
    from commitsleuth.parsers.formats import delta_log

    fmt = next(f for f in table_formats() if f.name == "delta-log")
    log = new_log("/wh/t", fmt)
    rows = delta_log.Rows(log)
    for n, path in enumerate(PATHS):
        rows.data_file("table_add", 3, 1704067200000, path, spec, 10, None, "raw", n + 1, "x.json", True,
                       1704067200000, None, "WRITE")
    got = rows.table().to_pylist()
    assert len(got) == len(PATHS)
    for n, (path, row) in enumerate(zip(PATHS, got)):
        one = log.data_file("table_add", 3, None, path, partition_spec=spec, size=10, line=n + 1, log_file="x.json",
                            data_change=True, operation="WRITE", modified=str(millis(1704067200000)))
        assert (row["path"], row["partition_spec"], row["file_name"], row["file_task"], row["file_attempt"],
                row["write_uuid"]) == (one.path, one.partition_spec, one.file_name, one.file_task, one.file_attempt,
                                       one.write_uuid), path
        assert orjson.loads(row["detail"]) == one.detail, path


def test_manifests_are_decoded_in_this_process_unless_workers_are_asked_for(tmp_path, monkeypatch):
    """A big table's manifests are decoded here by default (a worker is a second Python: the
    memory of the whole read over 1 GB on a million entries); COMMITSLEUTH_MANIFEST_WORKERS asks
    for workers."""
    import concurrent.futures

    tbl = _iceberg(tmp_path)
    root = tbl.metadata.location.removeprefix("file://")
    monkeypatch.setattr(iceberg_metadata, "AHEAD_BYTES", 0)
    started = []
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", lambda *a, **k: started.append(a) or _Gone())
    monkeypatch.delenv(iceberg_metadata.WORKERS_ENV, raising=False)
    here = _events(root)
    assert started == [] and len(here[1]) > 1
    for value, n in (("1", 1), ("2", 2), ("9", 2), ("x", 0)):
        monkeypatch.setenv(iceberg_metadata.WORKERS_ENV, value)
        started.clear()
        assert _events(root) == here
        assert [a[0] for a in started] == ([n] if n else [])
