"""A table commit tied to the storage principal that wrote its own log file (issue 31, item 2):
an HDFS NameNode audit ``create`` of it, or a ``rename`` onto it (Delta's HDFSLogStore and
Iceberg's Hadoop catalog write a temp file and rename it), or an S3 server access log
``REST.PUT.OBJECT`` of it.

The tables are written at test time by delta-rs and pyiceberg, or are hudi-rs's Spark-written
test tables (tests/corpus/lakehouse). The audit lines are Hadoop's DefaultAuditLogger format
(``FSNamesystem.audit: allowed=…\\tugi=…\\tip=/…\\tcmd=…\\tsrc=…\\tdst=…\\tperm=…\\tproto=…`` and,
with hadoop.caller.context.enabled, ``\\tcallerContext=…``); the S3 line is the server access
log's documented field order with an S3A audit Referer. Each case has negative twins: a write
of another path of the table, and a write of the same name in another table."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from deltalake import write_deltalake

from commitsleuth.forensics.table_writers import commit_writers, storage_writers
from commitsleuth.ingest import ingest
from commitsleuth.report.lanes import partition_lanes
from commitsleuth.forensics.timeline import timeline
from commitsleuth.store import Store

T = "\t"
ROWS = pa.table({"dt": ["2024-01-01", "2024-01-02"], "v": [1, 2]})
PROXY = "alice (auth:PROXY) via hive/nn1.example.com@EXAMPLE.COM (auth:KERBEROS)"
CTX = "SPARK_TASK_application_1716000000000_0042_1_JId_0_SId_1_0_TId_7_0"


def audit_line(second: int, cmd: str, src: str, dst: str = "null", ugi: str = "etl (auth:SIMPLE)",
               ip: str = "10.0.0.21", ctx: str | None = None) -> str:
    line = (f"2024-05-19 10:00:{second:02d},120 INFO FSNamesystem.audit: allowed=true{T}ugi={ugi}{T}ip=/{ip}{T}"
            f"cmd={cmd}{T}src={src}{T}dst={dst}{T}perm=etl:supergroup:rw-r--r--{T}proto=rpc")
    return line + (f"{T}callerContext={ctx}" if ctx else "")


def writers(tmp: Path, table: Path | str, lines: list[str], spec: str | None = "dt=2024-01-01") -> tuple:
    audit = tmp / "hdfs-audit.log"
    audit.write_text("\n".join(lines) + "\n")
    with Store(tmp / "s.duckdb") as store:
        report = ingest(store, [str(audit), str(table)])
        assert report.events > 0
        out = {v: w.storage for (_, _, v), (_, w, _) in commit_writers(store.con, [str(table)]).items()}
        if spec is None:
            return out, set()
        model = partition_lanes(store, timeline(store, str(table), spec))
        return out, {ln.label for ln in model.lanes}


def test_delta_commit_renamed_into_place_by_a_proxy_user_is_that_principals(tmp_path):
    table = tmp_path / "t"
    write_deltalake(str(table), ROWS, partition_by=["dt"])
    log = f"{table}/_delta_log"
    tmp = f"{log}/.00000000000000000000.json.3f2c1d4e-0000-4000-8000-000000000001.tmp"
    tied, lanes = writers(tmp_path, table, [audit_line(1, "create", tmp, ugi=PROXY),
                                           audit_line(2, "rename", tmp, f"{log}/00000000000000000000.json", ugi=PROXY)])
    storage = tied["0"]
    assert (storage.storage, storage.cmd, storage.user, storage.proxy, storage.ip) == \
        ("hdfs", "rename", "alice", "hive/nn1.example.com@EXAMPLE.COM", "10.0.0.21")
    assert storage.text.startswith("alice via hive/nn1.example.com@EXAMPLE.COM from 10.0.0.21 (hdfs rename")
    assert "alice via hive from 10.0.0.21" in lanes  # the commit's files on the principal's lane


def test_delta_writes_of_another_log_file_or_another_table_tie_nothing(tmp_path):
    for n, path in enumerate(["{t}/_delta_log/00000000000000000001.json",  # no such version
                              "{t}/_delta_log/_last_checkpoint",
                              "{o}/_delta_log/00000000000000000000.json"]):  # same name, another table
        work = tmp_path / str(n)
        work.mkdir()
        table = work / "t"
        write_deltalake(str(table), ROWS, partition_by=["dt"])
        tied, lanes = writers(work, table, [audit_line(1, "create", path.format(t=table, o=work / "other"))])
        assert tied == {"0": None}
        assert not any(lane.startswith("etl") for lane in lanes)


def iceberg(work: Path):
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("c", uri=f"sqlite:///{work}/catalog.db", warehouse=f"file://{work}/wh")
    cat.create_namespace("db")
    tbl = cat.create_table("db.t", schema=ROWS.schema)
    with tbl.update_spec() as spec:
        spec.add_identity("dt")
    before = tbl.metadata_location.removeprefix("file://")
    tbl.append(ROWS)
    committed = tbl.metadata_location.removeprefix("file://")
    tbl.append(ROWS)  # a later commit: the first snapshot's file is no longer the latest metadata
    return tbl.metadata.location.removeprefix("file://"), before, committed


def test_iceberg_metadata_file_created_with_a_caller_context_ties_its_snapshot(tmp_path):
    root, _, committed = iceberg(tmp_path)
    tied, _ = writers(tmp_path, root, [audit_line(3, "create", committed, ctx=CTX)])
    assert tied["2"] is None  # the second append wrote another metadata file
    storage = tied["1"]
    assert (storage.cmd, storage.user, storage.caller) == ("create", "etl", CTX)
    assert storage.actor != "etl from 10.0.0.21"  # the caller context names the Spark attempt


def test_iceberg_create_of_an_older_metadata_file_or_another_tables_ties_nothing(tmp_path):
    for n, which in enumerate(("before", "other")):
        work = tmp_path / str(n)
        work.mkdir()
        root, before, committed = iceberg(work)
        path = before if which == "before" else committed.replace("/db/t/", "/db/u/")
        tied, _ = writers(work, root, [audit_line(3, "create", path, ctx=CTX)])
        assert set(tied.values()) == {None}


def test_hudi_completed_instant_created_by_a_principal_ties_its_commit(tmp_path):
    import zipfile

    zips = sorted((Path(__file__).parent / "corpus" / "lakehouse" / "hudi-rs").glob("*.zip"))
    with zipfile.ZipFile(zips[0]) as z:
        z.extractall(tmp_path / "h")
    from commitsleuth.parsers.lakehouse import tables_below

    root = tables_below(str(tmp_path / "h"))[0][0]
    with Store(tmp_path / "probe.duckdb") as store:
        ingest(store, [root])
        instant = store.con.execute("SELECT path, detail->>'version' FROM events WHERE kind = 'table_commit' "
                                    "AND status = 'completed' ORDER BY ts LIMIT 1").fetchone()
    for n, (path, user) in enumerate([(instant[0], "svc"), (instant[0].replace(root, root + "_copy"), "bob")]):
        work = tmp_path / f"w{n}"
        work.mkdir()
        tied, _ = writers(work, root, [audit_line(4, "create", path, ugi=f"{user} (auth:SIMPLE)")], spec=None)
        got = tied[instant[1]]
        assert (got.user, got.cmd) == ("svc", "create") if n == 0 else got is None


S3 = ('b1e2c3d4 lake [01/Mar/2023:10:00:05 +0000] 10.0.0.21 arn:aws:iam::123456789012:role/etl 7QW1Z2X3C4V5B6N{n} '
      'REST.PUT.OBJECT {key} "PUT /{key} HTTP/1.1" 200 - - 1024 412 38 '
      '"https://audit.example.org/hadoop/1/op_create/0f3e8a6c-0001/?op=op_create&p1=s3a://lake/{key}&pr=etl'
      '&ps=5f9d2c1e-aaaa-4bbb-8ccc-0123456789ab&id=0f3e8a6c-0001&t0=12&ts=1677664805000'
      '&ji=0f3e8a6c-1b2d-4c5e-8f90-123456789abc" "Hadoop 3.3.4, aws-sdk-java/1.12.262" - HOSTID= SigV4 '
      'ECDHE-RSA-AES128-GCM-SHA256 AuthHeader lake.s3.eu-west-1.amazonaws.com TLSv1.2 - -')


def test_s3_put_of_each_formats_log_file_names_the_requester_and_job(tmp_path):
    keys = ["wh/t/_delta_log/00000000000000000012.json", "wh/t/metadata/v3.metadata.json",
            "wh/t/metadata/00003-0b0c0d0e-0000-4000-8000-000000000001.metadata.json", "wh/t/.hoodie/20240101010101.commit"]
    log = tmp_path / "s3-access.log"
    failed = S3.format(n=9, key="wh/t/_delta_log/00000000000000000013.json").replace(" 200 - - ", " 403 AccessDenied - ")
    log.write_text("\n".join([*(S3.format(n=i, key=k) for i, k in enumerate(keys)), failed]) + "\n")
    with Store(tmp_path / "s.duckdb") as store:
        ingest(store, [str(log)])
        got = storage_writers(store.con, [f"s3a://lake/{k}" for k in keys])
        assert {f: (w.storage, w.cmd, w.user, w.job) for f, w in got.items()} == {
            f"s3a://lake/{k}": ("s3", "REST.PUT.OBJECT", "etl", "0f3e8a6c-1b2d-4c5e-8f90-123456789abc") for k in keys}
        # negative twins: the same names in another table, another version of the same table
        assert storage_writers(store.con, [f"s3a://lake/{k.replace('wh/t/', 'wh/u/')}" for k in keys]) == {}
        assert storage_writers(store.con, ["s3a://lake/wh/t/_delta_log/00000000000000000013.json"]) == {}


def test_hdfs_paths_meet_a_table_read_through_its_file_system_uri_and_one_writer_only(tmp_path):
    """An HDFS audit names ``/wh/t/…``; a table read through Spark is keyed ``hdfs://nn:8020/wh/t``.
    A file two principals both wrote names neither (a race is the lost-commit detector's)."""
    log = tmp_path / "hdfs-audit.log"
    log.write_text("\n".join([audit_line(1, "create", "/wh/t/_delta_log/00000000000000000000.json"),
                              audit_line(2, "create", "/wh/t/_delta_log/00000000000000000001.json"),
                              audit_line(3, "create", "/wh/t/_delta_log/00000000000000000001.json",
                                         ugi="bob (auth:SIMPLE)", ip="10.0.0.22")]) + "\n")
    with Store(tmp_path / "s.duckdb") as store:
        ingest(store, [str(log)])
        got = storage_writers(store.con, [f"hdfs://nn:8020/wh/t/_delta_log/0000000000000000000{v}.json" for v in (0, 1)])
        assert {f.rsplit("/", 1)[-1]: w.user for f, w in got.items()} == {"00000000000000000000.json": "etl"}


# Spark names a write task's Hadoop attempt attempt_<jobTrackerId>_<stageId>_m_<partitionId>_<TID>
# (SparkHadoopWriterUtils.createJobID; FileFormatWriter.executeTask's TaskAttemptID takes the TID as
# its attempt number); the S3A audit Referer carries it as ta=.
TA = "attempt_20230301100000_0005_m_000000_12"
DATA = "wh/t/dt=2024-01-01/part-00000-4e5d6c7b-8a9f-4b0c-9d1e-2f3a4b5c6d7e-c000.snappy.parquet"


def test_s3_put_of_a_delta_data_file_names_the_task_attempt_of_its_s3a_referer(tmp_path):
    """A Delta data file's name holds no TID: the S3A Referer's ``ta=`` of its PUT names the
    attempt. Negative twins: the same name PUT under another table and under _temporary, and a
    file two attempts PUT (neither named: the object holds one of them, the log cannot say which)."""
    put = S3.replace("&ji=", f"&ta={TA}&ji=")
    twice = "wh/t/dt=2024-01-02/part-00000-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d-c000.snappy.parquet"
    log = tmp_path / "s3-access.log"
    log.write_text("\n".join([put.format(n=1, key=DATA), put.format(n=2, key=DATA.replace("wh/t/", "wh/u/")),
                              put.format(n=3, key=DATA.replace("wh/t/", "wh/t/_temporary/0/_temporary/" + TA + "/")),
                              put.format(n=4, key=twice),
                              put.replace(TA, TA[:-2] + "7").format(n=5, key=twice)]) + "\n")
    with Store(tmp_path / "s.duckdb") as store:
        ingest(store, [str(log)])
        got = storage_writers(store.con, [f"s3a://lake/{DATA}", f"s3a://lake/{twice}",
                                          f"s3a://lake/{DATA.replace('wh/t/', 'wh/v/')}"])
        assert {f: (w.storage, w.cmd, w.actor) for f, w in got.items()} == {
            f"s3a://lake/{DATA}": ("s3", "REST.PUT.OBJECT", TA)}
