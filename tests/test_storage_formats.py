"""The storage's own records: hdfs-audit and s3-access parsed to exact facts, caller contexts,
S3A audit Referers, and the partition key they share with every other source."""

from __future__ import annotations

import datetime as dt

import pytest

from commitsleuth.forensics.paths import enrich, resolve
from commitsleuth.parsers import ParseStats, SourceContext, get_format, parse_lines
from commitsleuth.parsers.callers import caller_fields, s3a_referer
from commitsleuth.parsers.formats import hdfs_audit, s3_access

T = "\t"


def audit(cmd, src, dst="null", ugi="etl (auth:SIMPLE)", ctx=None, allowed="true", ts="2023-03-01 10:00:05,120"):
    line = (f"{ts} INFO FSNamesystem.audit: allowed={allowed}{T}ugi={ugi}{T}ip=/10.0.0.21{T}cmd={cmd}{T}"
            f"src={src}{T}dst={dst}{T}perm=null{T}proto=rpc")
    return line + (f"{T}callerContext={ctx}" if ctx else "")


def parse(fmt_name, lines, keep_reads=False):
    stats = ParseStats()
    ctx = SourceContext("x", keep_reads=keep_reads)
    events = [enrich(e) for e in parse_lines(get_format(fmt_name), [(i + 1, 0, t) for i, t in enumerate(lines)], ctx, stats)]
    return events, stats


@pytest.mark.parametrize("context,expected", [
    ("SPARK_TASK_application_1677664000000_0042_1_JId_0_SId_1_0_TId_7_1",
     {"app_id": "application_1677664000000_0042", "stage_id": 1, "stage_attempt": 0, "attempt_no": 1,
      "task_id": "TID 7", "attempt_id": "task attempt 1 in stage 1.0 (TID 7)"}),
    ("SPARK_TASK_application_1677664000000_0042_JId_3_SId_4_1_TId_99_0",  # client mode: no app attempt
     {"app_id": "application_1677664000000_0042", "stage_id": 4, "stage_attempt": 1, "attempt_no": 0,
      "task_id": "TID 99", "attempt_id": "task attempt 0 in stage 4.1 (TID 99)"}),
    ("SPARK_TASK_local-1677664000000_JId_0_SId_0_0_TId_2_0",
     {"app_id": "local-1677664000000", "stage_id": 0, "stage_attempt": 0, "attempt_no": 0, "task_id": "TID 2",
      "attempt_id": "task attempt 0 in stage 0.0 (TID 2)"}),
    ("SPARK_DRIVER_application_1677664000000_0042_1", {"app_id": "application_1677664000000_0042"}),
    ("upstream_SPARK_DRIVER_app-20230301100000-0001", {"app_id": "app-20230301100000-0001"}),
    ("hive_queryId_hive_20180928140210_5d1c2f0e-91aa-4b7e-8a55-0c6f2b1d9e01",
     {"query_id": "hive_20180928140210_5d1c2f0e-91aa-4b7e-8a55-0c6f2b1d9e01"}),
    ("hive_sessionId_5d1c2f0e-91aa-4b7e-8a55-0c6f2b1d9e01", {}),
    ("tez_ta:attempt_1677664000000_0042_1_02_000003_1",
     {"attempt_id": "attempt_1677664000000_0042_1_02_000003_1", "attempt_no": 1,
      "job_id": "dag_1677664000000_0042_1", "task_id": "task_1677664000000_0042_1_02_000003"}),
    ("tez_dag:dag_1677664000000_0042_1", {"job_id": "dag_1677664000000_0042_1"}),
    ("tez_app:application_1677664000000_0042", {"app_id": "application_1677664000000_0042"}),
    ("mr_attempt_1445144423722_0020_m_000000_1",  # MapReduce YarnChild
     {"attempt_id": "attempt_1445144423722_0020_m_000000_1", "attempt_no": 1, "job_id": "job_1445144423722_0020",
      "task_id": "task_1445144423722_0020_m_000000"}),
    ("mr_appmaster_appattempt_1445144423722_0020_000001",  # MRAppMaster (job commit)
     {"app_id": "application_1445144423722_0020", "job_id": "job_1445144423722_0020"}),
    ("CLI", {}),
])
def test_caller_contexts(context, expected):
    assert caller_fields(context) == expected


def test_proxy_user_trash_move_is_a_delete_naming_user_proxy_and_address():
    (ev,), stats = parse("hdfs-audit", [hdfs_audit.FORMAT.samples[0].line])
    assert (ev.kind, ev.thread, ev.host, ev.status) == ("delete", "hue via hive from 9.46.88.114", "9.46.88.114", None)
    assert ev.detail["user"] == "hue/cdp711-11.fyre.ibm.com@DBANET4.ROOT"
    assert ev.detail["proxy"] == "hive/cdp711-11.fyre.ibm.com@DBANET4.ROOT"
    assert ev.detail["how"] == "trash" and ev.detail["trash"].startswith("/user/hue/.Trash/Current/user/hue/")
    assert ev.target_path is None and ev.ts == dt.datetime(2020, 8, 15, 4, 13, 25, 273000)
    assert stats.rejected == 0


def test_writes_reads_and_refusals():
    lines = [
        audit("mkdirs", "/w/db.db/t/dt=1"),
        audit("create", "/w/db.db/t/dt=1/f.parquet", ctx="SPARK_TASK_application_1_2_1_JId_0_SId_1_0_TId_7_0"),
        audit("rename", "/w/db.db/t/_temporary/0/task_1/dt=1/g", "/w/db.db/t/dt=1/g"),
        audit("delete", "/w/db.db/t/dt=2"),
        audit("delete", "/w/db.db/t/dt=3", allowed="false"),
        audit("delete", "/user/etl/.Trash/230301000000"),
        audit("setPermission", "/w/db.db/t"),
        audit("concat", "[/w/db.db/t/dt=1/a, /w/db.db/t/dt=1/b]", "/w/db.db/t/dt=1/c"),
        audit("open", "/w/db.db/t/dt=1/f.parquet"),
        audit("open", "/w/db.db/t/dt=1/f.parquet", ts="2023-03-01 10:59:59,999"),
        audit("open", "/w/db.db/t/dt=1/f.parquet", ts="2023-03-01 11:00:00,000"),
        audit("getfileinfo", "/w/db.db/t"),
        "not an audit line",
    ]
    events, stats = parse("hdfs-audit", lines)
    got = [(e.kind, e.path, e.target_path, e.status, e.location, e.partition_spec, e.size) for e in events]
    assert got == [
        ("dir_create", "/w/db.db/t/dt=1", None, None, "/w/db.db/t", "dt=1", None),
        ("file_create", "/w/db.db/t/dt=1/f.parquet", None, None, "/w/db.db/t", "dt=1", None),
        ("rename", "/w/db.db/t/_temporary/0/task_1/dt=1/g", "/w/db.db/t/dt=1/g", None, "/w/db.db/t", "dt=1", None),
        ("delete", "/w/db.db/t/dt=2", None, None, "/w/db.db/t", "dt=2", None),
        ("fs_context", "/w/db.db/t/dt=3", None, "denied", "/w/db.db/t", "dt=3", None),
        ("fs_context", "/user/etl/.Trash/230301000000", None, None, "/user/etl/.Trash", None, None),
        ("fs_context", "/w/db.db/t", None, None, "/w/db.db", None, None),
        ("file_create", "/w/db.db/t/dt=1/c", None, None, "/w/db.db/t", "dt=1", None),
        ("fs_reads", None, None, None, None, None, 2),
        ("fs_reads", None, None, None, None, None, 1),
        ("fs_reads", None, None, None, None, None, 1),
    ]
    assert events[1].attempt_id == "task attempt 0 in stage 1.0 (TID 7)" and events[1].thread is None
    assert events[0].thread == "etl from 10.0.0.21" and events[0].table_name == "db.t"
    assert [(e.detail["cmd"], e.line_no, e.ts) for e in events[8:]] == [
        ("open", 9, dt.datetime(2023, 3, 1, 10)), ("open", 11, dt.datetime(2023, 3, 1, 11)),
        ("getfileinfo", 12, dt.datetime(2023, 3, 1, 10))]
    assert stats.rejected == 1 and stats.rejects["hdfs-audit: no audit fields"][1] == 13
    kept, _ = parse("hdfs-audit", lines[8:12], keep_reads=True)
    assert [e.kind for e in kept] == ["fs_read"] * 4


def s3(op, key, rid="R1", referer="-", status=200, requester="arn:aws:iam::1:role/etl", t="01/Mar/2023:12:00:00 +0100"):
    return (f'o lake [{t}] 10.0.0.9 {requester} {rid} {op} {key} "-" {status} - - 1 2 3 "{referer}" "ua" - H= '
            f"SigV4 C AuthHeader lake.s3.amazonaws.com TLSv1.2 - - newfield1 newfield2")


def test_s3_multi_object_delete_joined_by_request_id_whichever_comes_first():
    ref = "https://audit.example.org/hadoop/1/op_delete/s1/?op=op_delete&pr=housekeeping&ji=job_1_0077&id=s1"
    lines = [s3("BATCH.DELETE.OBJECT", "w/t/dt%3D1/a%20b", rid="M1"),
             s3("REST.POST.MULTI_OBJECT_DELETE", "-", rid="M1", referer=ref),
             s3("BATCH.DELETE.OBJECT", "w/t/dt%3D1/", rid="M1"),
             s3("BATCH.DELETE.OBJECT", "w/t/dt%3D2/x", rid="M2"),
             s3("REST.PUT.OBJECT", "w/t/dt%3D3/y", status=403),
             s3("REST.GET.OBJECT", "w/t/dt%3D3/y"),
             "garbage"]
    events, stats = parse("s3-access", lines)
    got = sorted((e.line_no, e.kind, e.path, e.thread, e.job_id, e.status, e.ts) for e in events)
    t = dt.datetime(2023, 3, 1, 11)
    assert got == [
        (1, "delete", "s3a://lake/w/t/dt=1/a b", "housekeeping from 10.0.0.9", "job_1_0077", None, t),
        (2, "fs_context", "s3a://lake/", "housekeeping from 10.0.0.9", "job_1_0077", None, t),
        (3, "delete", "s3a://lake/w/t/dt=1/", "housekeeping from 10.0.0.9", "job_1_0077", None, t),
        (4, "delete", "s3a://lake/w/t/dt=2/x", "arn:aws:iam::1:role/etl from 10.0.0.9", None, None, t),
        (5, "fs_context", "s3a://lake/w/t/dt=3/y", "arn:aws:iam::1:role/etl from 10.0.0.9", None, "403", t),
        (6, "fs_reads", None, "arn:aws:iam::1:role/etl", None, None, t),
    ]
    assert [e.partition_spec for e in sorted(events, key=lambda e: e.line_no)][:4] == ["dt=1", None, "dt=1", "dt=2"]
    assert stats.rejected == 1


def test_s3a_audit_referer_names_principal_job_and_attempt():
    (ev,), _ = parse("s3-access", [s3_access.FORMAT.samples[3].line])
    assert (ev.kind, ev.attempt_id, ev.attempt_no, ev.thread) == (
        "file_create", "attempt_20230301100000_0001_m_000003_1", 1, None)
    assert ev.path == "s3a://lake/warehouse/orders/dt=2023-03-01/part-00003-0f3e8a6c-1b2d-4c5e-8f90-123456789abc.c000.snappy.parquet"
    assert ev.detail["user"] == "etl" and ev.detail["s3a_audit"]["ji"] == "0f3e8a6c-1b2d-4c5e-8f90-123456789abc"
    assert s3a_referer('"-"') is None and s3a_referer("https://example.org/page?pr=x") is None


@pytest.mark.parametrize("path", ["s3://b/w/t/dt=1", "s3n://b/w/t/dt=1", "s3a://b/w/t/dt=1", "S3A://b/w/t/dt=1"])
def test_one_bucket_under_every_s3_scheme(path):
    assert (resolve(path, is_dir=True).location, resolve(path, is_dir=True).partition_spec) == ("s3a://b/w/t", "dt=1")


def test_storage_operations_sit_on_their_actors_lanes(tmp_path):
    """seed002 seen from HDFS: bob's query's mkdirs and trash move on its own lane, beside the
    HiveServer2 threads; the user's own name where no caller context names a query."""
    from test_detector_cases import load_case, scenario

    from commitsleuth.forensics.timeline import timeline
    from commitsleuth.report.lanes import partition_lanes
    from commitsleuth.store import Store

    with Store(tmp_path / "s.duckdb") as store:
        load_case(store, tmp_path / "logs", scenario("seed002_hdfs_trash"))
        rows = timeline(store, "dw.log_daily", "dt=20170830")
        lanes = {ln.actor: ln for ln in partition_lanes(store, rows).lanes}
    q2 = lanes["hive_20180928140210_a3e4b5c6-7d8e-4f90-9a1b-2c3d4e5f6a70"]
    assert q2.actor_type == "query"
    assert [(m.symbol, m.outcome, m.event.where.rsplit("/", 1)[1]) for m in q2.marks] == [
        ("M", "info", "hdfs-audit.log:1"), ("D", "bad", "hdfs-audit.log:4")]
    q1 = lanes["hive_20180928140210_5d1c2f0e-91aa-4b7e-8a55-0c6f2b1d9e01"]
    assert [(m.symbol, m.event.where.rsplit("/", 1)[1]) for m in q1.marks] == [
        ("M", "hdfs-audit.log:2"), ("R", "hdfs-audit.log:3")]
    assert {"Thread-529691", "Thread-529751"} <= set(lanes)


@pytest.mark.parametrize("keep_reads", [False, True])
def test_block_scan_gives_the_line_parse_events(tmp_path, keep_reads):
    """The engine's block scan (reads counted by one pattern per block) and the line parse agree,
    blocks split anywhere between lines, odd lines and a read naming a write included."""
    from pathlib import Path

    from commitsleuth.ingest.readers import BlockReader, open_lines

    hdfs = [s.line for s in hdfs_audit.FORMAT.samples] + [
        audit("open", "/w/db.db/t/dt=1/a"), audit("delete", "/w/db.db/t/dt=2"), "",
        "2023-03-01 10:00:06,000 INFO FSNamesystem.audit: allowed=true\tugi=x\tcmd=open\tsrc=/odd",
        "junk line", audit("getfileinfo", "/w/x\tcmd=delete "), audit("rename (options=[TO_TRASH])", "/w/a", "/user/x/.Trash/Current/w/a"),
    ] * 40
    ref = "https://audit.example.org/hadoop/1/op_delete/s1/?op=op_delete&pr=housekeeping&ji=job_1_0077"
    access = [s.line for s in s3_access.FORMAT.samples] + [
        s3("BATCH.DELETE.OBJECT", "w/t/dt%3D1/a", rid="M1"), s3("REST.POST.MULTI_OBJECT_DELETE", "-", rid="M1", referer=ref),
        s3("REST.GET.OBJECT", "w/t/dt%3D1/a", requester="x REST.PUT.OBJECT y"), "junk", s3("REST.HEAD.OBJECT", "k"),
    ] * 40
    for name, lines in (("hdfs-audit", hdfs), ("s3-access", access)):
        path = tmp_path / f"{name}.log"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        fmt = get_format(name)
        s1, s2 = ParseStats(), ParseStats()
        a = list(parse_lines(fmt, open_lines(Path(path), 0, 1, None), SourceContext("x", keep_reads=keep_reads), s1))
        scan = fmt.scanner(fmt, SourceContext("x", keep_reads=keep_reads), s2, 1)
        b = []
        for offset, data in BlockReader(Path(path), block=1000):
            b.extend(scan.feed(offset, data))
        b.extend(scan.close())

        def facts(events):
            return sorted((e.line_no, e.byte_offset, e.kind, e.path, e.size, e.thread, e.attempt_id, str(e.detail))
                          for e in events)

        assert facts(a) == facts(b), name
        assert (s1.lines, s1.records, s1.events, s1.rejected) == (s2.lines, s2.records, s2.events, s2.rejected), name
        assert s1.rejected == 40 and len(a) > 80  # the junk lines; the odd audit line is a read


def test_hive3_metastore_audit_values_from_the_get_partition_line_before():
    """Hive 3 names the catalog (tbl=hive.db.t) and may give the values only on the preceding
    get_partition line of the same thread; get_partitions (all of them) gives none."""
    ms = ("2023-03-01T09:58:59,990  INFO [pool-7-thread-9] HiveMetaStore.audit: ugi=etl (auth:SIMPLE)\tip=10.0.0.20\t"
          "cmd=source:10.0.0.20 {call} : tbl=hive.sales.orders{values}\t")
    lines = [ms.format(call="get_partition", values="[2023-03-01]"), ms.format(call="add_partition", values=""),
             ms.format(call="get_partitions", values=""), ms.format(call="add_partition", values=""),
             ms.format(call="get_partition_with_auth", values="[2023-03-02]").replace("thread-9", "thread-8"),
             ms.format(call="alter_partition", values="")]
    events, stats = parse("hive-metastore-audit", lines)
    assert [(e.kind, e.table_name, e.partition_spec, e.line_no) for e in events] == [
        ("partition_add", "sales.orders", "[2023-03-01]", 2),
        ("partition_add", "sales.orders", None, 4),
        ("partition_alter", "sales.orders", None, 6),  # another thread's lookup is not this call's
    ]
    assert stats.rejected == 0


def test_log4j2_heads_and_rotated_compressed_audit_logs(tmp_path):
    """A log4j2 head with the handler thread, detected and read from a rotated .gz file."""
    import gzip

    from commitsleuth.ingest import ingest
    from commitsleuth.parsers import detect
    from commitsleuth.store import Store

    line = ("2023-03-01T10:00:05,120 INFO  [IPC Server handler 7 on default port 8020] "
            "org.apache.hadoop.hdfs.server.namenode.FSNamesystem.audit: allowed=true\tugi=etl (auth:SIMPLE)\t"
            "ip=/10.0.0.21\tcmd=delete\tsrc=/w/db.db/t/dt=1\tdst=null\tperm=null\tproto=rpc")
    assert detect("hdfs-audit.log", [line]).name == "hdfs-audit"
    path = tmp_path / "hdfs-audit.log.2023-03-01.gz"
    path.write_bytes(gzip.compress((line + "\n" + audit("open", "/w/db.db/t") + "\n").encode()))
    with Store(tmp_path / "s.duckdb") as store:
        report = ingest(store, [str(path)])
        rows = store.con.execute("SELECT kind, ts, path, line_no, size FROM events ORDER BY line_no").fetchall()
    assert [(r.format, r.status, r.events) for r in report.results] == [("hdfs-audit", "ok", 2)]
    assert rows == [("delete", dt.datetime(2023, 3, 1, 10, 0, 5, 120000), "/w/db.db/t/dt=1", 1, None),
                    ("fs_reads", dt.datetime(2023, 3, 1, 10), None, 2, 1)]


def test_only_storage_deletes_are_described(tmp_path):
    """A finding's evidence of HiveServer2's own trash line (no storage record) adds nothing."""
    from test_detector_cases import load_case, scenario

    from commitsleuth.forensics import storage
    from commitsleuth.forensics.detectors.racing_loaders import RacingLoaders
    from commitsleuth.store import Store

    with Store(tmp_path / "s.duckdb") as store:
        load_case(store, tmp_path / "logs", scenario("seed002_lost_partition"))
        (finding,) = RacingLoaders().run(store.con)
        assert "storage:" not in finding.summary and "storage_deletes" not in (finding.detail or {})
        assert storage.annotate(store.con, [finding])[0].summary == finding.summary


def test_a_grown_audit_log_is_read_from_where_it_stopped(tmp_path):
    """Every write once after re-ingesting a grown log; the new part's reads counted apart."""
    from commitsleuth.ingest import ingest
    from commitsleuth.store import Store

    log = tmp_path / "hdfs-audit.log"
    log.write_text(audit("open", "/w/a") + "\n" + audit("delete", "/w/db.db/t/dt=1") + "\n")
    with Store(tmp_path / "s.duckdb") as store:
        ingest(store, [str(log)])
        with open(log, "a") as f:
            f.write(audit("open", "/w/a") + "\n" + audit("mkdirs", "/w/db.db/t/dt=2") + "\n")
        ingest(store, [str(log)])
        ingest(store, [str(log)])
        rows = store.con.execute("SELECT kind, line_no, size FROM events ORDER BY line_no").fetchall()
    assert rows == [("fs_reads", 1, 1), ("delete", 2, None), ("fs_reads", 3, 1), ("dir_create", 4, None)]
