"""The rows of the detection matrix: anomaly x evidence source x layout x variant, each with its
negative twin (same shape, the anomaly taken out).

A row gives the evidence (``files`` to ``ingest``, ``live`` spool events with the listing live
capture takes of the write's location, ``listing`` a directory tree to ``audit``) and what
``analyze`` must say: ``expect`` (code, partition, the words that must name the actors: user,
proxy, address, attempt, TID, query…). A negative twin expects no finding of its ``codes``.

Rows the evidence cannot decide are not here: docs/detection-matrix.md lists them with why.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field

from matrix import formats as F
from matrix.formats import at

# The table every row writes: sales.orders, partitioned by ds.
NN = "hdfs://nn:8020"
TABLE_DIR = "/warehouse/sales.db/orders"
LOC = NN + TABLE_DIR
DS = "2024-05-19"
SPEC = f"ds={DS}"
PART = f"{LOC}/{SPEC}"
BUCKET = "lake"
S3_TABLE = "warehouse/sales.db/orders"
S3_LOC = f"s3a://{BUCKET}/{S3_TABLE}"
APP = "application_1716100000000_0042"
UUID = "0f3e8a6c-1b2d-4c5e-8f90-123456789abc"
UUID2 = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"
QID = "hive_20240519100000_7c2d9e61-0a1b-4c2d-8e3f-4a5b6c7d8e9f"
QID2 = "hive_20240519100003_1f2e3d4c-5b6a-4798-8a9b-0c1d2e3f4a5b"
# a listing's text names its own table directory so: the test puts the real one in
ROOT = "{root}"
HS2_THREAD = "HiveServer2-Background-Pool: Thread-42"
HS2_THREAD2 = "HiveServer2-Background-Pool: Thread-57"

# Which detector decides each anomaly.
CODES = {
    "double-write": ("CS101",),
    "deleted-data": ("CS107",),
    "same-name-replace": ("CS104",),
    "racing-loaders": ("CS103",),
    "late-commit": ("CS102",),
    "partial-output": ("CS105",),
    "manifest": ("CS111",),
}


@dataclass(frozen=True)
class Expect:
    code: str
    partition: str | None
    who: tuple[str, ...] = ()  # each must appear in the finding's actors or actor objects
    detail: dict = field(default_factory=dict)  # facts the finding's detail must state


@dataclass(frozen=True)
class Row:
    anomaly: str
    source: str  # hive-log, mr-log, spark-eventlog, live, hdfs-audit, s3+hms, listing, a+b …
    layout: str
    variant: str
    positive: bool
    files: dict = field(default_factory=dict)  # name -> text, ingested
    live: tuple = ()  # spool events (JsonProtocol dicts) of application APP
    inventory: tuple = ()  # (path, modified, size) live capture lists after the write ends
    listing: tuple = ()  # (path under the table dir, modified, size or text) audited
    expect: tuple = ()

    @property
    def id(self) -> str:
        return "/".join((self.anomaly, self.source, self.layout, self.variant,
                         "positive" if self.positive else "negative"))

    @property
    def codes(self) -> tuple[str, ...]:
        return CODES[self.anomaly]

    @property
    def sources(self) -> set[str]:
        return set(self.source.split("+"))


def twins(anomaly, source, layout, variant, build, expect) -> list[Row]:
    """A row and its negative twin: ``build(positive)`` gives the evidence keywords."""
    return [Row(anomaly, source, layout, variant, True, expect=tuple(expect), **build(True)),
            Row(anomaly, source, layout, variant, False, **build(False))]


ROWS: list[Row] = []


# ==== double write: two attempts of one task both left a live file in the final partition ====

def _hive_merge(head: str):
    """RCFileMergeMapper renames in close() (task stdout, no head), under speculation: both the
    original and the speculative attempt rename their file into the partition; the negative twin's
    second attempt was removed by the job's dedup (Utilities.removeTempOrDuplicateFiles)."""
    scratch = f"{NN}/tmp/hive/hive/{QID}/-ext-10000"

    def build(pos):
        out = {}
        for n in (0, 1):
            attempt = f"attempt_1716100000000_0042_m_000005_{n}"
            out[f"userlogs/container_1716100000000_0042_01_00000{n + 2}/{attempt}/stdout"] = (
                f"renamed path {scratch}/_tmp.000005_{n} to {PART}/000005_{n} . File size is {1000 + n}\n")
        driver = [F.hive(head, at(0), HS2_THREAD, "org.apache.hadoop.hive.ql.Driver",
                         f"Executing command(queryId={QID}): INSERT INTO TABLE sales.orders PARTITION ({SPEC}) SELECT * FROM src")]
        if not pos:
            driver.append(F.hive(head, at(30), HS2_THREAD, "org.apache.hadoop.hive.ql.exec.Utilities",
                                 f"Duplicate taskid file removed: {PART}/000005_1 with length 1001. "
                                 f"Existing file: {PART}/000005_0 with length 1000", where="Utilities.java:removeTempOrDuplicateFiles(1654)"))
        out["hive/hiveserver2.log"] = "\n".join(driver) + "\n"
        return {"files": out}
    return build


for head in ("log4j2", "log4j1"):
    ROWS += twins("double-write", "hive-log", "hive-merge", head, _hive_merge(head),
                  [Expect("CS101", SPEC, ("attempt_1716100000000_0042_m_000005_0", "attempt_1716100000000_0042_m_000005_1"))])


def _mr_commits(layout: str, thread: str | None):
    """Two attempts of one map task each get 'allowed to commit' and save their output
    (a committer without coordination); the negative twin's second attempt is killed first."""
    job = "1716100000000_0042"
    dest = f"{LOC}/_temporary/1/task_{job}_m_000007" if layout == "foc-v1" else PART

    def build(pos):
        out = {}
        for n in (0, 1):
            attempt = f"attempt_{job}_m_000007_{n}"
            lines = [F.mr(at(10 + n), F.TASK, f"Task:{attempt} is done. And is in the process of committing", thread)]
            if n == 0 or pos:
                lines += [F.mr(at(11 + n), F.TASK, f"Task {attempt} is allowed to commit now", thread),
                          F.mr(at(12 + n), F.FOC, f"Saved output of task '{attempt}' to {dest}", thread)]
            out[f"userlogs/container_{job}_01_00000{n + 2}/syslog"] = "\n".join(lines) + "\n"
        return {"files": out}
    return build


for layout in ("foc-v1", "foc-v2"):
    for variant, thread in (("mr2-head", "main"), ("mr1-head", None)):
        ROWS += twins("double-write", "mr-log", layout, variant, _mr_commits(layout, thread),
                      [Expect("CS101", SPEC if layout == "foc-v2" else None,
                              ("attempt_1716100000000_0042_m_000007_0", "attempt_1716100000000_0042_m_000007_1"))])


def _spark_app(stage_events: list[dict], *, failed: bool = False, algorithm: int | None = None,
               parts=("ds",), end_sql: bool = True) -> list[dict]:
    events = [F.app_start(APP, at(0)), F.env(algorithm), F.sql_start(0, at(1), LOC, list(parts)),
              F.job_start(0, at(2), [1], 0)]
    events += stage_events
    events.append(F.job_end(0, at(60), ok=not failed))
    if end_sql:
        events.append(F.sql_end(0, at(61), "Job aborted" if failed else None))
    return events


def _spark_twice(end_event: bool):
    """Task 3 runs twice (speculation); with a direct or uncoordinated writer both attempts end
    Success having written bytes. Negative twin: the original is killed, 'another attempt succeeded'.
    Without the end event: the original's end was never captured (killed after the copy won)."""
    def build(pos):
        evs = F.spark_attempt(1, 3, 3, 0, at(3), at(40) if end_event else None, "10.0.0.11", "1",
                              reason="Success" if pos else "TaskKilled")
        evs += F.spark_attempt(1, 8, 3, 1, at(20), at(30), "10.0.0.12", "2", speculative=True)
        return evs
    return build


def _eventlog(end_event: bool):
    def build(pos):
        return {"files": {f"spark-events/{APP}": "\n".join(F.j(e) for e in _spark_app(_spark_twice(end_event)(pos))) + "\n"}}
    return build


ROWS += twins("double-write", "spark-eventlog", "direct", "with-end", _eventlog(True),
              [Expect("CS101", None, ("TID 3", "TID 8"))])


def _live(end_event: bool, files: bool):
    """The same run seen by live capture: the spool's JsonProtocol lines, and the listing live
    capture takes of the write's location when the SQL execution ends: Hive-named files of the
    direct write (000003_0 by TID 3, 000003_1 by TID 8); the negative twin's loser left none."""
    def build(pos):
        inv = [(f"{PART}/000003_1", at(29), 1024)]
        if pos or not end_event:
            inv.append((f"{PART}/000003_0", at(35 if end_event else 28), 1024))
        if not pos and not end_event:
            inv = inv[:1]
        return {"live": tuple(_spark_app(_spark_twice(end_event)(pos))), "inventory": tuple(inv) if files else ()}
    return build


ROWS += twins("double-write", "live", "direct", "with-end", _live(True, True),
              [Expect("CS101", SPEC, ("TID 3", "TID 8"))])
ROWS += twins("double-write", "live", "direct", "without-end", _live(False, True),
              [Expect("CS101", SPEC, ("TID 3", "TID 8"))])


def _hdfs_direct(layout: str):
    """Spark writes task 7 twice. direct: straight into the partition, Hive names 000007_0
    (TId 31, attempt 0) and 000007_1 (TId 58, attempt 1); foc-v2: each attempt's task commit
    renames its part file from its attempt dir into the partition (same final name). Negative
    twin: the second attempt's file is deleted by the driver's abortTask."""
    def build(pos):
        lines = []
        for n, tid, ip in ((0, 31, "10.0.0.11"), (1, 58, "10.0.0.12")):
            ctx = F.spark_task_ctx(APP, 0, 1, 0, tid, n)
            if layout == "direct":
                final = f"{TABLE_DIR}/{SPEC}/000007_{n}"
                lines.append(F.hdfs(at(10 + n), "etl (auth:SIMPLE)", ip, "create", final,
                                    perm="etl:hadoop:rw-r--r--", ctx=ctx))
            else:
                name = f"part-00007-{UUID}.c000.snappy.parquet"
                att = f"attempt_20240519100000_0001_m_000007_{tid}"
                tmp = f"{TABLE_DIR}/_temporary/0/_temporary/{att}/{SPEC}/{name}"
                final = f"{TABLE_DIR}/{SPEC}/{name}"
                lines.append(F.hdfs(at(10 + n), "etl (auth:SIMPLE)", ip, "create", tmp,
                                    perm="etl:hadoop:rw-r--r--", ctx=ctx))
                if not pos and n == 1:  # never committed: abortTask deletes its attempt dir
                    lines.append(F.hdfs(at(40), "etl (auth:SIMPLE)", ip, "delete",
                                        f"{TABLE_DIR}/_temporary/0/_temporary/{att}", ctx=ctx))
                    continue
                lines.append(F.hdfs(at(20 + n), "etl (auth:SIMPLE)", ip, "rename", tmp, final,
                                    perm="etl:hadoop:rw-r--r--", ctx=ctx))
            if not pos and n == 1 and layout == "direct":
                lines.append(F.hdfs(at(40), "etl (auth:SIMPLE)", "10.0.0.5", "delete", final,
                                    ctx=f"SPARK_DRIVER_{APP}"))
        return {"files": {"hdfs/hdfs-audit.log": "\n".join(lines) + "\n"}}
    return build


ROWS += twins("double-write", "hdfs-audit", "direct", "caller-context", _hdfs_direct("direct"),
              [Expect("CS101", SPEC, ("TID 31", "TID 58"))])
ROWS += twins("double-write", "hdfs-audit", "foc-v2", "caller-context", _hdfs_direct("foc-v2"),
              [Expect("CS101", SPEC, ("TID 31", "TID 58"))])


def _s3_commit(layout: str):
    """S3A magic committer: each task attempt's commit completes its multipart upload of the
    final key (REST.POST.UPLOAD with the S3A audit Referer naming job and attempt); staging
    committer: the same completion from the task's local staging. Two attempts of task 7 both
    completed the upload of the same key. Negative twin: only one did (the other aborted its
    upload, REST.DELETE.UPLOAD)."""
    key = f"{S3_TABLE}/{SPEC}/part-00007-{UUID}.c000.snappy.parquet"

    def build(pos):
        lines = []
        for n in (0, 1):
            att = f"attempt_20240519100000_0001_m_000007_{n}"
            ref = F.s3a_referer("op_commit_job" if layout == "magic" else "op_create", f"s3a://{BUCKET}/{key}", "etl",
                                job=UUID, attempt=att, span=f"7f1c2d3e-000{n}")
            op = "REST.POST.UPLOAD" if (n == 0 or pos) else "REST.DELETE.UPLOAD"
            lines.append(F.s3(at(20 + n), BUCKET, op, key, requester="arn:aws:iam::123456789012:role/etl",
                              ip=f"10.0.0.1{n + 1}", request_id=f"R7QW1Z2X3C4V5B{n}", size=4096, referer=ref,
                              method="POST" if op.startswith("REST.POST") else "DELETE"))
        return {"files": {"s3/access.log": "\n".join(lines) + "\n"}}
    return build


for layout in ("s3a-magic", "s3a-staging"):
    ROWS += twins("double-write", "s3", layout, "referer", _s3_commit(layout),
                  [Expect("CS101", SPEC, ("attempt_20240519100000_0001_m_000007_0", "attempt_20240519100000_0001_m_000007_1"))])


def _listing_names(layout: str):
    """A listing alone: two attempt suffixes of one task id in the partition (Hive on Tez names
    files per attempt; RCFileMergeMapper). Negative twin: two tasks, one attempt each."""
    def build(pos):
        second = "000005_1" if pos else "000006_0"
        return {"listing": ((f"{SPEC}/000005_0", at(10), "a\n"), (f"{SPEC}/{second}", at(11), "b\n"))}
    return build


ROWS += twins("double-write", "listing", "hive-merge", "hive-names", _listing_names("hive-merge"),
              [Expect("CS101", SPEC, ("000005_0", "000005_1"))])


def _hdfs_hive_staging():
    """Hive on Tez names files per attempt: the query's job moves .hive-staging_…/-ext-10000/000005_0
    and 000005_1 (two attempts of task 5, HIVE-27985) into the partition (caller context
    hive_queryId). Negative twin: the second is 000006_0, another task."""
    staging = f"{TABLE_DIR}/.hive-staging_hive_2024-05-19_10-00-00_123_4567/-ext-10000/{SPEC}"

    def build(pos):
        names = ["000005_0", "000005_1" if pos else "000006_0"]
        lines = [F.hdfs(at(5 + i), "hive/hs2.example.com@EXAMPLE.COM (auth:KERBEROS)", "10.20.9.10", "rename",
                        f"{staging}/{n}", f"{TABLE_DIR}/{SPEC}/{n}", perm="hive:hadoop:rw-r--r--",
                        ctx=f"hive_queryId_{QID}") for i, n in enumerate(names)]
        return {"files": {"hdfs/hdfs-audit.log": "\n".join(lines) + "\n"}}
    return build


ROWS += twins("double-write", "hdfs-audit", "hive-staging", "tez-names", _hdfs_hive_staging(),
              [Expect("CS101", SPEC, ("000005_0", "000005_1"))])


# ==== deleted data: a loaded partition deleted or trashed by another principal, no reload after ====

def _hdfs_trash(how: str):
    """A Hive-loaded partition (mkdirs, then the rename of .hive-staging_…/-ext-10000/000000_0
    under the query's caller context), moved to the trash 20 minutes later by another user through
    HiveServer2 (proxy). Negative twin: the same user's query reloads it after the trash move
    (INSERT OVERWRITE: trash then a new rename)."""
    staging = f"{TABLE_DIR}/.hive-staging_hive_2024-05-19_10-00-00_123_4567/-ext-10000"

    def build(pos):
        lines = [
            F.hdfs(at(0), "hive/hs2.example.com@EXAMPLE.COM (auth:KERBEROS)", "10.20.9.10", "mkdirs",
                   f"{TABLE_DIR}/{SPEC}", perm="hive:hadoop:rwxr-xr-x", ctx=f"hive_queryId_{QID}"),
            F.hdfs(at(1), "hive/hs2.example.com@EXAMPLE.COM (auth:KERBEROS)", "10.20.9.10", "rename",
                   f"{staging}/000000_0", f"{TABLE_DIR}/{SPEC}/000000_0", perm="hive:hadoop:rw-r--r--",
                   ctx=f"hive_queryId_{QID}"),
        ]
        ugi = "jdoe (auth:PROXY) via hive/hs2.example.com@EXAMPLE.COM (auth:KERBEROS)"
        if how == "trash":
            lines.append(F.hdfs(at(1200), ugi, "10.20.9.44", "rename (options=[TO_TRASH])", f"{TABLE_DIR}/{SPEC}",
                                f"/user/jdoe/.Trash/Current{TABLE_DIR}/{SPEC}", perm="jdoe:hadoop:rwxr-xr-x",
                                ctx=f"hive_queryId_{QID2}"))
        else:
            lines.append(F.hdfs(at(1200), ugi, "10.20.9.44", "delete", f"{TABLE_DIR}/{SPEC}",
                                ctx=f"hive_queryId_{QID2}"))
        if not pos:  # reloaded after the delete
            lines += [F.hdfs(at(1300), "hive/hs2.example.com@EXAMPLE.COM (auth:KERBEROS)", "10.20.9.10", "mkdirs",
                             f"{TABLE_DIR}/{SPEC}", perm="hive:hadoop:rwxr-xr-x", ctx=f"hive_queryId_{QID}"),
                      F.hdfs(at(1301), "hive/hs2.example.com@EXAMPLE.COM (auth:KERBEROS)", "10.20.9.10", "rename",
                             f"{staging}/000000_0", f"{TABLE_DIR}/{SPEC}/000000_0", ctx=f"hive_queryId_{QID}")]
        return {"files": {"hdfs/hdfs-audit.log": "\n".join(lines) + "\n"}}
    return build


for how in ("trash", "delete"):
    ROWS += twins("deleted-data", "hdfs-audit", "hive-staging", how, _hdfs_trash(how),
                  [Expect("CS107", SPEC, ("jdoe", "hive", "10.20.9.44"))])


def _s3_hms(get: str, marker: bool, head: str):
    """A cleanup job deletes a registered partition's objects in one multi-object delete (each
    BATCH.DELETE.OBJECT joined to the POST with its S3A Referer pr=svc_cleanup, ji=job_…); the
    partition was registered through the metastore (Hive 3 audit: add_partition names only the
    table, the value is on the preceding get_partition[_with_auth] of the same thread).
    ``marker``: the delete includes the directory marker ``ds=…/``. Negative twin: the same
    delete, then the partition is dropped through the metastore before it (drop, then delete)."""
    keys = [f"{S3_TABLE}/{SPEC}/part-0000{i}-{UUID}.c000.snappy.parquet" for i in range(2)]

    def build(pos):
        cmd_get = (f"source:10.20.9.10 {get} : tbl=hive.sales.orders[{DS}]" if get == "get_partition"
                   else f"source:10.20.9.10 get_partition_with_auth : tbl=hive.sales.orders[{DS}]")
        hms = [F.hms_audit(head, at(0), "hive", "10.20.9.10", cmd_get),
               F.hms_audit(head, at(0.1), "hive", "10.20.9.10", "source:10.20.9.10 add_partition : tbl=hive.sales.orders")]
        if not pos:
            hms.append(F.hms_audit(head, at(1100), "svc_cleanup", "10.20.9.77",
                                   f"source:10.20.9.77 drop_partition_by_name : tbl=hive.sales.orders part={SPEC}"))
        s3 = [F.s3(at(1 + i), BUCKET, "REST.PUT.OBJECT", k, requester="arn:aws:iam::123456789012:role/etl",
                   ip="10.0.0.11", request_id=f"PUT0000000000{i}", size=4096,
                   referer=F.s3a_referer("op_create", f"s3a://{BUCKET}/{k}", "etl", job=UUID, span=f"a-{i}"))
              for i, k in enumerate(keys)]
        ref = F.s3a_referer("op_delete", f"s3a://{BUCKET}/{S3_TABLE}/{SPEC}", "svc_cleanup",
                            job="job_1716190000000_0007", span="d-1")
        deleted = keys + ([f"{S3_TABLE}/{SPEC}/"] if marker else [])
        s3.append(F.s3(at(1200), BUCKET, "REST.POST.MULTI_OBJECT_DELETE", "-", requester="arn:aws:iam::123456789012:role/cleanup",
                       ip="10.20.9.77", request_id="DEL0000000001", referer=ref, method="POST"))
        s3 += [F.s3(at(1200), BUCKET, "BATCH.DELETE.OBJECT", k, requester="arn:aws:iam::123456789012:role/cleanup",
                    ip="10.20.9.77", request_id="DEL0000000001", status=204) for k in deleted]
        return {"files": {"hms/hivemetastore-audit.log": "\n".join(hms) + "\n", "s3/access.log": "\n".join(s3) + "\n"}}
    return build


for get in ("get_partition", "get_partition_with_auth"):
    for marker in (True, False):
        ROWS += twins("deleted-data", "s3+hms", "s3a-magic", f"{get}/{'marker' if marker else 'no-marker'}",
                      _s3_hms(get, marker, "log4j2"),
                      [Expect("CS107", SPEC, ("svc_cleanup", "10.20.9.77", "job_1716190000000_0007"))])
ROWS += twins("deleted-data", "s3+hms", "s3a-magic", "get_partition_with_auth/marker/hms-log4j1",
              _s3_hms("get_partition_with_auth", True, "log4j1"),
              [Expect("CS107", SPEC, ("svc_cleanup", "10.20.9.77", "job_1716190000000_0007"))])


def _hive_trash(head: str):
    """HiveServer2 alone (its embedded metastore logs the audit line into hive.log): query 1
    registers and loads the partition; 20 minutes later another session's query moves its
    directory to the trash (FileUtils.moveToTrash). Negative twin: query 1 loads it again after."""
    def build(pos):
        lines = [
            F.hive(head, at(0), HS2_THREAD, "org.apache.hadoop.hive.ql.Driver",
                   f"Executing command(queryId={QID}): INSERT INTO TABLE sales.orders PARTITION ({SPEC}) SELECT * FROM src",
                   where="Driver.java:execute(1411)"),
            F.hms_audit(head, at(1), "etl", "10.20.9.10", f"source:10.20.9.10 add_partition : tbl=hive.sales.orders[{DS}]",
                        thread=HS2_THREAD),
            F.hive(head, at(2), HS2_THREAD, "org.apache.hadoop.hive.ql.exec.MoveTask",
                   f"Loading data to table sales.orders partition ({SPEC}) from {LOC}/.hive-staging_hive_1/-ext-10000",
                   where="MoveTask.java:execute(246)"),
            F.hive(head, at(1200), HS2_THREAD2, "org.apache.hadoop.hive.ql.Driver",
                   f"Executing command(queryId={QID2}): dfs -rm -r {PART}", where="Driver.java:execute(1411)"),
            F.hive(head, at(1201), HS2_THREAD2, "org.apache.hadoop.hive.common.FileUtils",
                   f"Moved to trash: {PART}", where="FileUtils.java:moveToTrash(788)"),
        ]
        if not pos:
            lines += [F.hive(head, at(1300), HS2_THREAD, "org.apache.hadoop.hive.ql.Driver",
                             f"Executing command(queryId={QID}): INSERT INTO TABLE sales.orders PARTITION ({SPEC}) SELECT * FROM src",
                             where="Driver.java:execute(1411)"),
                      F.hive(head, at(1301), HS2_THREAD, "org.apache.hadoop.hive.common.FileUtils",
                             f"Creating directory if it doesn't exist: {PART}", where="FileUtils.java:mkdir(167)")]
        return {"files": {"hive/hiveserver2.log": "\n".join(lines) + "\n"}}
    return build


for head in ("log4j2", "log4j1"):
    ROWS += twins("deleted-data", "hive-log", "hive-staging", head, _hive_trash(head),
                  [Expect("CS107", SPEC, (QID2,))])


# ==== same-name replace: one file name LOADed twice INTO one partition ====

def _loads(head: str, hive0: bool):
    """Two ``LOAD DATA INPATH '…/serviceX-2013-01-24.log' INTO TABLE … PARTITION (…)`` of one
    file name, each by its own query. Hive 0.x (``hive0``): the Driver's ``Starting command: <sql>``
    names the file and MoveTask's line names only the partition's staging dir. Negative twin: the
    second load is of another file name."""
    def build(pos):
        lines = []
        for n, (qid, name) in enumerate(((QID, "serviceX-2013-01-24.log"),
                                          (QID2, "serviceX-2013-01-24.log" if pos else "serviceX-2013-01-25.log"))):
            t = 600 * n
            src = f"{NN}/user/etl/incoming/{name}"
            sql = f"LOAD DATA INPATH '{src}' INTO TABLE sales.orders PARTITION ({SPEC.replace('=', '=' + chr(39))}')"
            if hive0:  # Hive 0.x CLI: MoveTask's line through SessionState.printInfo, then StatsTask's
                files, size = (1, 1000 + 200 * n) if pos or n == 0 else (2, 2200)
                lines += [F.hive(head, at(t), "main", "org.apache.hadoop.hive.ql.Driver", f"Starting command: {sql}",
                                 where="Driver.java:execute(1066)"),
                          F.hive(head, at(t + 1), "main", "org.apache.hadoop.hive.ql.exec.Task",
                                 f"Loading data to table sales.orders partition ({SPEC})",
                                 where="SessionState.java:printInfo(412)"),
                          F.hive(head, at(t + 2), "main", "org.apache.hadoop.hive.ql.exec.Task",
                                 f"Partition sales.orders{{{SPEC}}} stats: [num_files: {files}, num_rows: 0, "
                                 f"total_size: {size}, raw_data_size: 0]", where="SessionState.java:printInfo(412)")]
            else:
                lines += [F.hive(head, at(t), HS2_THREAD, "org.apache.hadoop.hive.ql.Driver",
                                 f"Executing command(queryId={qid}): {sql}", where="Driver.java:execute(1411)"),
                          F.hive(head, at(t + 1), HS2_THREAD, "org.apache.hadoop.hive.ql.exec.MoveTask",
                                 f"Loading data to table sales.orders partition ({SPEC}) from {src}",
                                 where="MoveTask.java:execute(246)"),
                          F.hive(head, at(t + 2), HS2_THREAD, "org.apache.hadoop.hive.ql.Driver",
                                 f"Completed executing command(queryId={qid}); Time taken: 2.1 seconds",
                                 where="Driver.java:execute(1707)")]
        return {"files": {"hive/hive.log": "\n".join(lines) + "\n"}}
    return build


for head in ("log4j2", "log4j1"):
    ROWS += twins("same-name-replace", "hive-log", "direct", head, _loads(head, False),
                  [Expect("CS104", SPEC, (QID, QID2))])
ROWS += twins("same-name-replace", "hive-log", "direct", "hive0-starting-command", _loads("log4j1", True),
              [Expect("CS104", SPEC, (), {"file": "serviceX-2013-01-24.log", "confidence": "high"})])


# ==== racing loaders: two threads load one partition at once; the loser deletes the winner's data ====

def _hs2_race(head: str):
    """A doubly-submitted load handled by two HS2 threads: both create the directory and call
    add_partition; the loser's add fails (Duplicate entry / AlreadyExistsException) and it moves
    the directory the winner just filled to the trash (HIVE-20725). Negative twin: the second
    load runs an hour later, after the first completed."""
    def build(pos):
        off = 0 if pos else 3600
        lines = []
        for n, (thread, qid, t) in enumerate(((HS2_THREAD, QID, 0), (HS2_THREAD2, QID2, 0.5 + off))):
            lines += [
                F.hive(head, at(t), thread, "org.apache.hadoop.hive.ql.Driver", f"Executing command(queryId={qid}): "
                       f"INSERT INTO TABLE sales.orders PARTITION ({SPEC}) SELECT * FROM src", where="Driver.java:execute(1411)"),
                F.hive(head, at(t + 1), thread, "org.apache.hadoop.hive.ql.exec.MoveTask",
                       f"Loading data to table sales.orders partition ({SPEC}) from {LOC}/.hive-staging_hive_{n}/-ext-10000",
                       where="MoveTask.java:execute(246)"),
                F.hive(head, at(t + 2), thread, "org.apache.hadoop.hive.common.FileUtils",
                       f"Creating directory if it doesn't exist: {PART}", where="FileUtils.java:mkdir(167)"),
            ]
            if n == 1 and pos:
                lines += [
                    F.hive(head, at(t + 3), thread, "org.apache.hadoop.hive.metastore.RetryingHMSHandler",
                           f"Retrying HMSHandler after 2000 ms (attempt 1 of 10) with error: javax.jdo.JDODataStoreException: "
                           f"Insert of object failed : Duplicate entry '4412-{SPEC}' for key 'UNIQUEPARTITION'",
                           level="ERROR", where="RetryingHMSHandler.java:invokeInternal(200)"),
                    F.hive(head, at(t + 4), thread, "org.apache.hadoop.hive.common.FileUtils",
                           f"Moved to trash: {PART}", where="FileUtils.java:moveToTrash(788)"),
                ]
            lines.append(F.hive(head, at(t + 5), thread, "org.apache.hadoop.hive.ql.Driver",
                                f"Completed executing command(queryId={qid}); Time taken: 5.0 seconds",
                                where="Driver.java:execute(1707)"))
        lines.sort(key=lambda s: s[:23].replace("T", " "))
        return {"files": {"hive/hiveserver2.log": "\n".join(lines) + "\n"}}
    return build


for head in ("log4j2", "log4j1"):
    ROWS += twins("racing-loaders", "hive-log", "hive-staging", head, _hs2_race(head),
                  [Expect("CS103", SPEC, (QID, QID2))])


def _hdfs_race():
    """The NameNode's view of two HS2 queries loading one partition at once (caller contexts
    hive_queryId_…): both create the directory and move files in; one then trashes the directory.
    Negative twin: the second query runs an hour later, alone."""
    def build(pos):
        lines = []
        for n, (qid, t) in enumerate(((QID, 0), (QID2, 1 if pos else 3600))):
            staging = f"{TABLE_DIR}/.hive-staging_hive_{n}/-ext-10000"
            ctx = f"hive_queryId_{qid}"
            lines += [F.hdfs(at(t), "hive/hs2.example.com@EXAMPLE.COM (auth:KERBEROS)", "10.20.9.10", "mkdirs",
                             f"{TABLE_DIR}/{SPEC}", perm="hive:hadoop:rwxr-xr-x", ctx=ctx),
                      F.hdfs(at(t + 2), "hive/hs2.example.com@EXAMPLE.COM (auth:KERBEROS)", "10.20.9.10", "rename",
                             f"{staging}/00000{n}_0", f"{TABLE_DIR}/{SPEC}/00000{n}_0", ctx=ctx)]
            if n == 1 and pos:
                lines.append(F.hdfs(at(t + 3), "hive/hs2.example.com@EXAMPLE.COM (auth:KERBEROS)", "10.20.9.10",
                                    "rename (options=[TO_TRASH])", f"{TABLE_DIR}/{SPEC}",
                                    f"/user/hive/.Trash/Current{TABLE_DIR}/{SPEC}", ctx=ctx))
        lines.sort(key=lambda x: x[:23])
        return {"files": {"hdfs/hdfs-audit.log": "\n".join(lines) + "\n"}}
    return build


ROWS += twins("racing-loaders", "hdfs-audit", "hive-staging", "caller-context", _hdfs_race(),
              [Expect("CS103", SPEC, (QID, QID2))])


HMS_THREADS = ("pool-7-thread-12", "pool-7-thread-13")


def _s3_hms_race(get: str, head: str, hms: int, marker: bool):
    """Two HiveServer2 queries load one partition of an S3 table at once, seen through the S3
    access log and the metastore audit log. Each query's Hive.loadPartition asks the metastore
    for the partition (get_partition[_with_auth]) and, finding none, adds it (add_partition,
    naming only the table: Hive 2.x ``db=… tbl=…``, 3.x ``tbl=<cat>.<db>.<t>``); each metastore
    connection is served by its own handler thread (pool-7-thread-N), so the two checks-then-adds
    overlap. Each MoveTask copies its staged file into the partition (REST.COPY.OBJECT +
    REST.DELETE.OBJECT of the source, the S3A Referer op_rename, pr=hive); the loser, whose add
    failed, then deletes the partition's objects (``marker``: and its directory marker
    ``ds=…/``). Negative twin: the second query's check and add come an hour later, after the
    first's add; it deletes nothing."""
    table = "db=sales tbl=orders" if hms == 2 else "tbl=hive.sales.orders"

    def build(pos):
        lines, s3 = [], []
        for n, (thread, t) in enumerate(zip(HMS_THREADS, (0, 0.1 if pos else 3600))):
            lines += [F.hms_audit(head, at(t), "hive", "10.20.9.10", f"source:10.20.9.10 {get} : {table}[{DS}]", thread=thread),
                      F.hms_audit(head, at(t + 0.2), "hive", "10.20.9.10", f"source:10.20.9.10 add_partition : {table}",
                                  thread=thread)]
            src = f"{S3_TABLE}/.hive-staging_hive_2024-05-19_10-00-0{n}_{n}/-ext-10000/00000{n}_0"
            dst = f"{S3_TABLE}/{SPEC}/00000{n}_0"
            ref = F.s3a_referer("op_rename", f"s3a://{BUCKET}/{src}", "hive", span=f"r-{n}")
            for op, key, method in (("REST.COPY.OBJECT", dst, "PUT"), ("REST.DELETE.OBJECT", src, "DELETE")):
                s3.append(F.s3(at(t + 1), BUCKET, op, key, requester="arn:aws:iam::123456789012:role/hive",
                               ip="10.20.9.10", request_id=f"MV{n}{op[5:8]}000000000", size=4096 if op.endswith("COPY.OBJECT") else None,
                               referer=ref, method=method))
        if pos:  # the loser's cleanup of the directory it believes it created
            ref = F.s3a_referer("op_delete", f"s3a://{BUCKET}/{S3_TABLE}/{SPEC}", "hive", span="d-1")
            keys = [f"{S3_TABLE}/{SPEC}/00000{n}_0" for n in (0, 1)] + ([f"{S3_TABLE}/{SPEC}/"] if marker else [])
            s3 += [F.s3(at(3), BUCKET, "REST.DELETE.OBJECT", key, requester="arn:aws:iam::123456789012:role/hive",
                        ip="10.20.9.10", request_id=f"RM{n}000000000000", referer=ref, method="DELETE")
                   for n, key in enumerate(keys)]
        lines.sort(key=lambda x: x[:23])
        s3.sort(key=lambda x: x.split("[", 1)[1][:20])
        return {"files": {"hms/hivemetastore-audit.log": "\n".join(lines) + "\n", "s3/access.log": "\n".join(s3) + "\n"}}
    return build


# each pair of variants (call, head, audit format, marker) in some row
for get, head, hms, marker in (("get_partition_with_auth", "log4j2", 3, False), ("get_partition", "log4j1", 3, True),
                               ("get_partition", "log4j2", 2, False), ("get_partition_with_auth", "log4j1", 2, True),
                               ("get_partition_with_auth", "log4j2", 2, True)):
    ROWS += twins("racing-loaders", "s3+hms", "hive-staging",
                  f"{get}/hms{hms}-{head}/{'marker' if marker else 'no-marker'}", _s3_hms_race(get, head, hms, marker),
                  [Expect("CS103", SPEC, (*HMS_THREADS, '"user": "hive", "ip": "10.20.9.10"'),
                          {"deleted_after_race_by": ["hive from 10.20.9.10"]})])


# ==== late commit: an attempt publishes after it was killed ====

def _mr_late(thread: str | None):
    """The MR AppMaster kills the speculative loser (TaskAttempt Transitioned … to
    KILL_CONTAINER_CLEANUP); the zombie still saves its output afterwards (v2: into the
    partition). Negative twin: it saved before the kill."""
    job = "1716100000000_0042"
    att = f"attempt_{job}_m_000004_1"

    def build(pos):
        am = [F.mr(at(30), F.TAI, f"{att} TaskAttempt Transitioned from RUNNING to KILL_CONTAINER_CLEANUP",
                   "AsyncDispatcher event handler")]
        task = [F.mr(at(40 if pos else 20), F.FOC, f"Saved output of task '{att}' to {PART}", thread)]
        return {"files": {f"userlogs/container_{job}_01_000001/syslog": "\n".join(am) + "\n",
                          f"userlogs/container_{job}_01_000009/syslog": "\n".join(task) + "\n"}}
    return build


for variant, thread in (("mr2-head", "main"), ("mr1-head", None)):
    ROWS += twins("late-commit", "mr-log", "foc-v2", variant, _mr_late(thread),
                  [Expect("CS102", SPEC, ("attempt_1716100000000_0042_m_000004_1",))])


def _eventlog_hdfs_late():
    """Spark kills TID 58 ('another attempt succeeded', event log); its task commit's rename into
    the partition comes after that in the NameNode audit (caller context TId_58). Negative twin:
    the rename came before the kill."""
    name = f"part-00007-{UUID}.c000.snappy.parquet"
    att = "attempt_20240519100000_0001_m_000007_58"
    tmp = f"{TABLE_DIR}/_temporary/0/_temporary/{att}/{SPEC}/{name}"

    def build(pos):
        evs = F.spark_attempt(1, 31, 7, 0, at(3), at(25), "10.0.0.11", "1")
        evs += F.spark_attempt(1, 58, 7, 1, at(10), at(26), "10.0.0.12", "2", speculative=True, reason="TaskKilled")
        ctx = F.spark_task_ctx(APP, 0, 1, 0, 58, 1)
        audit = [F.hdfs(at(12), "etl (auth:SIMPLE)", "10.0.0.12", "create", tmp, ctx=ctx),
                 F.hdfs(at(40 if pos else 20), "etl (auth:SIMPLE)", "10.0.0.12", "rename", tmp,
                        f"{TABLE_DIR}/{SPEC}/{name}", ctx=ctx)]
        return {"files": {f"spark-events/{APP}": "\n".join(F.j(e) for e in _spark_app(evs)) + "\n",
                          "hdfs/hdfs-audit.log": "\n".join(audit) + "\n"}}
    return build


ROWS += twins("late-commit", "spark-eventlog+hdfs-audit", "foc-v2", "caller-context", _eventlog_hdfs_late(),
              [Expect("CS102", SPEC, ("TID 58",))])


def _live_late():
    """Live capture: the speculative copy TID 8 of task 3 is killed ('another attempt
    succeeded') at 30 s; the listing live capture takes at the execution's end shows its file
    000003_1 modified at 45 s, after the kill (a zombie's direct write). Negative twin: its file
    was written before the kill."""
    def build(pos):
        evs = F.spark_attempt(1, 3, 3, 0, at(3), at(29), "10.0.0.11", "1")
        evs += F.spark_attempt(1, 8, 3, 1, at(20), at(30), "10.0.0.12", "2", speculative=True, reason="TaskKilled")
        inv = ((f"{PART}/000003_0", at(28), 1024), (f"{PART}/000003_1", at(45 if pos else 25), 1024))
        return {"live": tuple(_spark_app(evs)), "inventory": inv}
    return build


ROWS += twins("late-commit", "live", "direct", "killed-then-written", _live_late(),
              [Expect("CS102", SPEC, ("TID 8",))])


# ==== partial output: a failed job's committed task output is visible ====

def _listing_unmarked():
    """A listing alone: part files of one write job's UUID, no _SUCCESS after them (v2 task
    commits of a job that never committed). Negative twin: _SUCCESS written after them."""
    def build(pos):
        files = [(f"{SPEC}/part-0000{i}-{UUID}.c000.snappy.parquet", at(10 + i), "x\n") for i in range(3)]
        if not pos:
            files.append(("_SUCCESS", at(30), ""))
        return {"listing": tuple(files)}
    return build


ROWS += twins("partial-output", "listing", "foc-v2", "no-success", _listing_unmarked(),
              [Expect("CS105", SPEC, ())])


def _live_partial():
    """Live capture: the write's job fails (JobFailed), algorithm v2, the listing it takes at the
    SQL execution's end holds 7 part files of the write's UUID. Negative twin: the job succeeds."""
    def build(pos):
        evs = []
        for i in range(8):
            evs += F.spark_attempt(1, i, i, 0, at(3 + i), at(10 + i), "10.0.0.11", "1",
                                   reason="Success" if i < 7 or not pos else "ExceptionFailure")
        inv = [(f"{PART}/part-0000{i}-{UUID}.c000.snappy.parquet", at(10 + i), 1024) for i in range(7)]
        if not pos:
            inv.append((f"{LOC}/_SUCCESS", at(40), 0))
        return {"live": tuple(_spark_app(evs, failed=pos, algorithm=2)), "inventory": tuple(inv)}
    return build


ROWS += twins("partial-output", "live", "foc-v2", "job-failed", _live_partial(),
              [Expect("CS105", SPEC, ())])


def _eventlog_listing_partial():
    """A Spark event log (the write's job fails, algorithm v2) and a listing of the table: part
    files of one write UUID, no _SUCCESS. Negative twin: the job succeeded and wrote _SUCCESS."""
    def build(pos):
        evs = []
        for i in range(3):
            evs += F.spark_attempt(1, i, i, 0, at(3 + i), at(10 + i), "10.0.0.11", "1",
                                   reason="Success" if i < 2 or not pos else "ExceptionFailure")
        files = [(f"{SPEC}/part-0000{i}-{UUID}.c000.snappy.parquet", at(10 + i), "x\n") for i in range(2)]
        if not pos:
            files.append(("_SUCCESS", at(40), ""))
        return {"files": {f"spark-events/{APP}": "\n".join(F.j(e) for e in _spark_app(evs, failed=pos, algorithm=2)) + "\n"},
                "listing": tuple(files)}
    return build


ROWS += twins("partial-output", "spark-eventlog+listing", "foc-v2", "job-failed", _eventlog_listing_partial(),
              [Expect("CS105", SPEC, ())])


# ==== files against a committer manifest ====

def _manifest():
    """A listing alone: the S3A committer's JSON _SUCCESS lists two files; a third data file of
    another writer sits beside them, written after the commit. Negative twin: only the two."""
    def build(pos):
        names = [f"part-0000{i}-{UUID}.c000.snappy.parquet" for i in range(2)]
        manifest = {"name": "org.apache.hadoop.fs.s3a.commit.files.SuccessData/1", "timestamp": F.ms(at(20)),
                    "date": "", "hostname": "driver", "committer": "magic", "description": "",
                    "jobId": UUID, "filenames": [f"{ROOT}/{SPEC}/{n}" for n in names], "success": True}
        files = [(f"{SPEC}/{n}", at(10 + i), "x\n") for i, n in enumerate(names)]
        files.append(("_SUCCESS", at(20), json.dumps(manifest)))
        if pos:
            files.append((f"{SPEC}/part-00000-{UUID2}.c000.snappy.parquet", at(50), "y\n"))
        return {"listing": tuple(files)}
    return build


ROWS += twins("manifest", "listing", "s3a-magic", "success-json", _manifest(), [Expect("CS111", None, ())])


def by_id() -> dict[str, Row]:
    out = {r.id: r for r in ROWS}
    assert len(out) == len(ROWS), "two rows with one id"
    return out


# round 8, genB ==================================================================================
# A YARN restart (spark.yarn.maxAppAttempts): application attempt 2 runs under the same id and
# counts TIDs from 0 again. Each run's event log is <appId>_<attemptId>, its start says "App
# Attempt ID"; its tasks' caller contexts SPARK_TASK_<appId>_<attemptId>_…. Both runs' TID 3 write
# 000003_0 straight into the partition (a direct writer). Negative twin: each run's TID 3 wrote
# under _temporary and each run's driver committed the job by rename (FileOutputCommitter v1).

def _yarn_restart():
    def run(n: int, t0: float, host: str, executor: str) -> str:
        start = {**F.app_start(APP, at(t0)), "App Attempt ID": str(n)}
        events = [start, F.env(1), F.sql_start(0, at(t0 + 1), LOC, ["ds"]), F.job_start(0, at(t0 + 2), [0], 0)]
        events += F.spark_attempt(0, 3, 3, 0, at(t0 + 3), at(t0 + 8), host, executor)
        if n == 2:
            events += [F.job_end(0, at(t0 + 20)), F.sql_end(0, at(t0 + 21))]
        return "\n".join(F.j(e) for e in events) + "\n"

    def build(pos):
        lines = []
        for n, t0, ip in ((1, 0, "10.0.0.11"), (2, 600, "10.0.0.12")):
            ctx = F.spark_task_ctx(f"{APP}_{n}", 0, 0, 0, 3, 0)
            final = f"{TABLE_DIR}/{SPEC}/000003_0"
            if pos:
                lines.append(F.hdfs(at(t0 + 5), "etl (auth:SIMPLE)", ip, "create", final, perm="etl:hadoop:rw-r--r--", ctx=ctx))
                continue
            job = f"2024051910{n:02d}00_0000"
            tmp = f"{TABLE_DIR}/_temporary/0/_temporary/attempt_{job}_m_000003_3/{SPEC}/000003_0"
            task = f"{TABLE_DIR}/_temporary/0/task_{job}_m_000003"
            lines.append(F.hdfs(at(t0 + 5), "etl (auth:SIMPLE)", ip, "create", tmp, perm="etl:hadoop:rw-r--r--", ctx=ctx))
            lines.append(F.hdfs(at(t0 + 7), "etl (auth:SIMPLE)", ip, "rename", tmp.rsplit(f"/{SPEC}/", 1)[0], task,
                                perm="etl:hadoop:rwxr-xr-x", ctx=ctx))
            if n == 2:
                lines.append(F.hdfs(at(t0 + 9), "etl (auth:SIMPLE)", "10.0.0.5", "delete", final, ctx=f"SPARK_DRIVER_{APP}_{n}"))
            lines.append(F.hdfs(at(t0 + 10), "etl (auth:SIMPLE)", "10.0.0.5", "rename", f"{task}/{SPEC}/000003_0", final,
                                perm="etl:hadoop:rw-r--r--", ctx=f"SPARK_DRIVER_{APP}_{n}"))
        return {"files": {f"spark-events/{APP}_1": run(1, 0, "10.0.0.11", "1"),
                          f"spark-events/{APP}_2": run(2, 600, "10.0.0.12", "2"),
                          "hdfs/hdfs-audit.log": "\n".join(lines) + "\n"}}
    return build


ROWS += twins("double-write", "spark-eventlog+hdfs-audit", "direct", "yarn-restart", _yarn_restart(),
              [Expect("CS101", SPEC, (f"{APP}_1/stage 0.0/attempt 0 (TID 3) on 10.0.0.11",
                                      f"{APP}_2/stage 0.0/attempt 0 (TID 3) on 10.0.0.12"))])


# The S3A committers as an S3 access log shows them: each attempt of task 7 starts a multipart
# upload of its final key (per-attempt names 000007_0, 000007_1) with its Referer's ta=; the magic
# committer's attempt also writes its pending commit under <dest>/__magic/job-<uuid>/tasks/<attempt>/
# __base/ (a 0-byte marker and the .pending file; Hadoop 3.3.5+ __magic_job-<uuid>/) and its task
# commit the <task>.pendingset; the job commit completes the uploads (REST.POST.UPLOAD, a job
# Referer without ta=). Positive: both attempts' uploads completed. Negative twin: the loser's
# upload aborted (REST.DELETE.UPLOAD), one completed.

def _s3_pending(layout: str):
    magic = {"s3a-magic": f"{S3_TABLE}/__magic/job-{UUID}", "s3a-magic-job": f"{S3_TABLE}/__magic_job-{UUID}"}.get(layout)

    def build(pos):
        lines, rid = [], iter(range(100, 200))

        def rec(t, op, key, attempt, ip, size=None):
            method = {"REST.PUT": "PUT", "REST.POS": "POST", "REST.DEL": "DELETE"}[op[:8]]
            ref = F.s3a_referer("op_create" if attempt else "op_commit_job", f"s3a://{BUCKET}/{key}", "etl",
                                job=UUID, attempt=attempt, span=f"7f1c2d3e-{next(rid)}")
            lines.append(F.s3(at(t), BUCKET, op, key, requester="arn:aws:iam::123456789012:role/etl", ip=ip,
                              request_id=f"R7QW1Z2X3C{next(rid)}", size=size, referer=ref, method=method))
        for n in (0, 1):
            att, ip, name = f"attempt_20240519100000_0001_m_000007_{n}", f"10.0.0.1{n + 1}", f"000007_{n}"
            final = f"{S3_TABLE}/{SPEC}/{name}"
            rec(10 + n, "REST.POST.UPLOADS", final, att, ip)
            rec(11 + n, "REST.PUT.PART", final, att, ip, 4096)
            if magic:
                base = f"{magic}/tasks/{att}/__base/{SPEC}/{name}"
                rec(12 + n, "REST.PUT.OBJECT", base, att, ip, 0)
                rec(12 + n, "REST.PUT.OBJECT", base + ".pending", att, ip, 812)
        for n in (0, 1):
            att, ip = f"attempt_20240519100000_0001_m_000007_{n}", f"10.0.0.1{n + 1}"
            if n == 0 or pos:
                if magic:
                    rec(20 + n, "REST.PUT.OBJECT", f"{magic}/task_20240519100000_0001_m_000007.pendingset", att, ip, 1024)
            else:
                rec(20 + n, "REST.DELETE.UPLOAD", f"{S3_TABLE}/{SPEC}/000007_{n}", att, ip)
        for n in ((0, 1) if pos else (0,)):
            rec(30 + n, "REST.POST.UPLOAD", f"{S3_TABLE}/{SPEC}/000007_{n}", None, "10.0.0.5", 4096)
        rec(35, "REST.PUT.OBJECT", f"{S3_TABLE}/_SUCCESS", None, "10.0.0.5", 2048)
        return {"files": {"s3/access.log": "\n".join(lines) + "\n"}}
    return build


for _layout in ("s3a-magic", "s3a-magic-job"):
    ROWS += twins("double-write", "s3", _layout, "pending-uploads", _s3_pending(_layout),
                  [Expect("CS101", SPEC, ("attempt_20240519100000_0001_m_000007_0", "attempt_20240519100000_0001_m_000007_1"))])
ROWS += twins("double-write", "s3", "s3a-staging", "pending-uploads", _s3_pending("s3a-staging"),
              [Expect("CS101", SPEC, ("000007_0", "000007_1"))])
# round 8, genA
# ==== partial output without _SUCCESS: the store's evidence of the commit decides (issue 30) ====

def _hdfs_dynamic_overwrite():
    """The NameNode audit alone, Spark's dynamic partition overwrite (HadoopMapReduceCommitProtocol
    with dynamicPartitionOverwrite): two partitions staged under <table>/.spark-staging-<uuid>,
    FileOutputCommitter's commitJob writes the _SUCCESS there, then the job's commit deletes each
    final partition, renames the staged one into place and deletes the staging dir (no _SUCCESS is
    left at the table). Positive: the commit fails after the first partition (abortJob deletes the
    staging dir). Negative twin: both partitions moved."""
    spec2 = "ds=2024-05-20"
    staging = f"{TABLE_DIR}/.spark-staging-{UUID}"

    def build(pos):
        lines = []
        for i, spec in enumerate((SPEC, spec2)):
            att = f"attempt_20240519100000_0001_m_00000{i}_0"
            name = f"part-0000{i}-{UUID}.c000.snappy.parquet"
            ctx = F.spark_task_ctx(APP, 0, 1, 0, 10 + i, 0)
            lines.append(F.hdfs(at(10 + i), "etl (auth:SIMPLE)", "10.0.0.11", "create",
                                f"{staging}/_temporary/0/_temporary/{att}/{spec}/{name}", perm="etl:hadoop:rw-r--r--", ctx=ctx))
            lines.append(F.hdfs(at(12 + i), "etl (auth:SIMPLE)", "10.0.0.11", "rename",
                                f"{staging}/_temporary/0/_temporary/{att}/{spec}/{name}", f"{staging}/{spec}/{name}",
                                perm="etl:hadoop:rw-r--r--", ctx=ctx))
        driver = f"SPARK_DRIVER_{APP}"
        lines.append(F.hdfs(at(20), "etl (auth:SIMPLE)", "10.0.0.5", "create", f"{staging}/_SUCCESS",
                            perm="etl:hadoop:rw-r--r--", ctx=driver))
        for i, spec in enumerate((SPEC, spec2) if not pos else (SPEC,)):
            lines.append(F.hdfs(at(21 + 2 * i), "etl (auth:SIMPLE)", "10.0.0.5", "delete", f"{TABLE_DIR}/{spec}", ctx=driver))
            lines.append(F.hdfs(at(22 + 2 * i), "etl (auth:SIMPLE)", "10.0.0.5", "rename", f"{staging}/{spec}",
                                f"{TABLE_DIR}/{spec}", perm="etl:hadoop:rwxr-xr-x", ctx=driver))
        lines.append(F.hdfs(at(30), "etl (auth:SIMPLE)", "10.0.0.5", "delete", staging, ctx=driver))
        return {"files": {"hdfs/hdfs-audit.log": "\n".join(lines) + "\n"}}
    return build


ROWS += twins("partial-output", "hdfs-audit", "spark-dynamic-overwrite", "failed-mid-commit", _hdfs_dynamic_overwrite(),
              [Expect("CS105", SPEC, (UUID,))])


# ==== a later write beside an older committer manifest ====

def _manifest_later_marked():
    """A listing alone: _manifest()'s positive (the S3A committer's JSON _SUCCESS at the table
    lists two files; a later data file of another write job in the partition). Positive: nothing
    marks that later write. Negative twin: the later job (a FileOutputCommitter whose output was
    the partition) wrote its own empty _SUCCESS there, newer than its file."""
    later = _manifest()

    def build(pos):
        files = later(True)["listing"]
        return {"listing": files if pos else files + ((f"{SPEC}/_SUCCESS", at(55), ""),)}
    return build


ROWS += twins("manifest", "listing", "s3a-magic", "later-write-marked", _manifest_later_marked(),
              [Expect("CS111", None, ())])

