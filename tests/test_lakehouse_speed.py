"""The shortcuts the table readers take for big logs (bench/lakehouse.py times them) give what
the plain way gives: a data file's directory resolved once, a manifest read without its
column statistics."""

from __future__ import annotations

import io
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest

from commitsleuth.forensics.paths import resolve
from commitsleuth.parsers.formats import iceberg_metadata
from commitsleuth.parsers.lakehouse import new_log, resolve_file, table_formats

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
