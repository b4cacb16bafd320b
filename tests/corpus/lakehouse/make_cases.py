"""Write the lakehouse detectors' YAML cases (forensics/detectors/cases/table_*.yml) from tables
delta-rs (``deltalake``) writes here and now: every ``_delta_log`` line in them is the writer's
own output, copied verbatim (a killed writer's staged commit is its own commit moved back to the
temp name it wrote first); the Hudi timeline is a Spark-written table's of apache/hudi-rs' test
data (tests/corpus/lakehouse/hudi-rs), verbatim. Stated as events: audit's listing
(``table_file``, at each file's mtime), Iceberg data files named as Spark's OutputFileFactory
names them, adds by absolute path under the case's root, and the S3 access-log lines and Spark
commitInfo (DeltaOperations.Write) built from their published field lists.

    .venv/bin/python tests/corpus/lakehouse/make_cases.py
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import sys
import tempfile
import uuid
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from commitsleuth.forensics.paths import resolve
from commitsleuth.parsers.lakehouse import read_table, table_root
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake
from deltalake.transaction import AddAction

CASES = Path(__file__).resolve().parents[3] / "forensics" / "detectors" / "cases"
# A Spark-written Hudi table (apache/hudi-rs test data, tests/corpus/lakehouse.NOTICE)
HUDI = Path(__file__).resolve().parent / "hudi-rs" / "v6_simplekeygen_nonhivestyle_overwritetable.zip"
ROWS = pa.table({"dt": ["2024-01-01", "2024-01-02"], "v": [1, 2]})


def log_files(table: Path, drop: tuple[int, ...] = (), prefix: str = "") -> dict[str, str]:
    """The table's commits (and commits staged and never published), verbatim, without ``drop``."""
    return {f"{prefix}_delta_log/{p.name}": p.read_text() for p in sorted((table / "_delta_log").glob("*.json*"))
            if not p.name[:20].isdigit() or int(p.name[:20]) not in drop}


def commit_ts(table: Path, version: int) -> dt.datetime:
    info = json.loads((table / "_delta_log" / f"{version:020d}.json").read_text().splitlines()[0])["commitInfo"]
    return dt.datetime.fromtimestamp(info["timestamp"] / 1000, dt.timezone.utc).replace(tzinfo=None)


def mtime(p: Path) -> dt.datetime:
    return dt.datetime.fromtimestamp(p.stat().st_mtime, dt.timezone.utc).replace(tzinfo=None)


def listing(table: Path, when: dt.datetime | None = None, skip=(), extra=(), prefix: str = "",
            pattern: str = "*.parquet") -> list[dict]:
    """audit's listing of ``table`` as table_file events: each file at its own mtime (as
    walk_local lists it), or all at ``when``; ``extra`` adds (path, ts) of files not on disk here.
    As audit keys them: partition and name from the path, location the table root."""
    files = [(p.relative_to(table).as_posix(), str(when or mtime(p)), p.stat().st_size) for p in sorted(table.rglob(pattern))]
    out = []
    for rel, ts, size in files + [(rel, str(ts), 484) for rel, ts in extra]:
        if rel in skip or rel.startswith("_delta_log/"):
            continue
        info = resolve("/" + rel)
        out.append({"kind": "table_file", "ts": ts, "location": "{root}" + ("/" + prefix.strip("/") if prefix else ""),
                    "path": "{root}/" + prefix + rel, "partition_spec": info.partition_spec, "file_name": info.file_name,
                    "size": size})
    return out


def stage(table: Path, version: int) -> None:
    """Turn commit ``version`` back into the temp file delta-rs writes before its put-if-absent
    (``_delta_log/_commit_<uuid>.json.tmp``): the log as a writer killed before publishing left it."""
    log = table / "_delta_log"
    (log / f"{version:020d}.json").rename(log / f"_commit_{uuid.uuid4()}.json.tmp")


def spark_write(files: dict[str, str], version: int, **parameters: str) -> dict[str, str]:
    """``files`` with commit ``version``'s commitInfo as Spark's WriteIntoDelta records the same
    overwrite: DeltaOperations.Write's operationParameters (delta-io/delta bb1057f: mode,
    partitionBy, then isDynamicPartitionOverwrite / replaceOnCond / replaceUsingCols only when
    set), its engineInfo; the add and remove actions stay delta-rs' own."""
    name = f"_delta_log/{version:020d}.json"
    head, rest = files[name].split("\n", 1)
    info = json.loads(head)["commitInfo"]
    info = {"timestamp": info["timestamp"], "operation": "WRITE",
            "operationParameters": {"mode": "Overwrite", "partitionBy": '["dt"]', **parameters},
            "readVersion": version - 1, "isolationLevel": "Serializable", "isBlindAppend": False,
            "engineInfo": "Apache-Spark/4.0.0 Delta-Lake/4.1.0"}
    return {**files, name: json.dumps({"commitInfo": info}, separators=(",", ":")) + "\n" + rest}


def live(table: Path) -> list[str]:
    return sorted(pa.table(DeltaTable(str(table)).get_add_actions(flatten=True)).column("path").to_pylist())


def instant_ts(instant: str) -> dt.datetime:
    return dt.datetime.strptime(instant, "%Y%m%d%H%M%S%f")


def hudi(work: Path, drop=(), extra=()) -> tuple[dict[str, str], list[dict]]:
    """The Spark-written Hudi table's timeline (.hoodie/, verbatim, without the instant files in
    ``drop``: the timeline as it stood before they were written) and audit's listing of its
    partitions, each file at the instant time its name carries (the reader's clock for the
    instants; the partition metadata at the first instant), with the ``extra`` file names
    (partition/name) a writer of the same format left."""
    root = work / "hudi"
    if not root.exists():
        with zipfile.ZipFile(HUDI) as z:
            z.extractall(root)
    (table,) = root.iterdir()
    # the replacecommit's .requested plan is Avro: a case's files are text, and its completed
    # instant file supersedes it
    files = {p.relative_to(table).as_posix(): p.read_text() for p in sorted((table / ".hoodie").glob("*"))
             if p.is_file() and p.name not in drop and not p.name.endswith("replacecommit.requested")}
    first = min(p.name[:17] for p in (table / ".hoodie").glob("*.commit"))
    sizes = {p.relative_to(table).as_posix(): p.stat().st_size for p in table.glob("*/*")
             if not p.is_relative_to(table / ".hoodie")}
    out = []
    for rel in sorted(sizes) + list(extra):
        name = rel.rsplit("/", 1)[1]
        instant = name.rsplit("_", 1)[1].split(".")[0] if name.endswith(".parquet") else first
        out.append({"kind": "table_file", "ts": str(instant_ts(instant)), "location": "{root}", "path": "{root}/" + rel,
                    "file_name": name, "size": sizes.get(rel, 441400)})
    return files, out


def hudi_at(work: Path, name: str, drop=(), extra=()) -> tuple[dict[str, str], list[dict]]:
    """``hudi(work, drop, extra)`` as the table at ``{root}/<name>``: one of two tables side by side."""
    files, events = hudi(work, drop=drop, extra=extra)
    return ({f"{name}/{k}": v for k, v in files.items()},
            [{**e, "location": f"{{root}}/{name}", "path": e["path"].replace("{root}/", f"{{root}}/{name}/", 1)} for e in events])


def hdfs_audit(second: int, cmd: str, src: str, dst: str = "null", ugi: str = "etl (auth:SIMPLE)", ip: str = "10.0.0.21",
               allowed: bool = True, perm: str | None = "etl:supergroup:rw-r--r--", ctx: str | None = None) -> str:
    """One HDFS NameNode audit line as Hadoop's DefaultAuditLogger writes it (FSNamesystem.audit:
    allowed= ugi= ip=/ cmd= src= dst= perm= proto=, then callerContext= when
    hadoop.caller.context.enabled); ``perm`` None is ``perm=null``, the line of a call whose
    result has no file status (a refused rename)."""
    line = (f"2024-03-01 10:00:{second:02d},120 INFO FSNamesystem.audit: allowed={str(allowed).lower()}\tugi={ugi}\t"
            f"ip=/{ip}\tcmd={cmd}\tsrc={src}\tdst={dst}\tperm={perm or 'null'}\tproto=rpc")
    return line + (f"\tcallerContext={ctx}" if ctx else "") + "\n"


# Spark Utils.CallerContext: SPARK_TASK_<appId>_<appAttemptId>_JId_<job>_SId_<stage>_<stageAttempt>_TId_<tid>_<attempt>
APP_YARN = "application_1716000000000_0042"


def task_context(stage: int, tid: int, attempt: int, job: int = 3) -> str:
    return f"SPARK_TASK_{APP_YARN}_1_JId_{job}_SId_{stage}_0_TId_{tid}_{attempt}"


# The real application start and SQL execution events of an event log of tests/corpus
# (spark-rapids-tools' writeformat_eventlog), its application id and execution 0's plan and times
# set: a plan naming the table as Delta's WriteIntoDeltaCommand prints it (Spark's formatted
# explain: ``(N) Execute <command>`` / ``Arguments: OutputSpec(<path>,Map(),List(…))``), as
# tests/test_lakehouse_writers.py builds them.
SPARK_LOG = Path(__file__).resolve().parents[1] / "spark-rapids-tools" / "writeformat_eventlog"


def delta_write_plan(path: str) -> str:
    return ("== Physical Plan ==\nExecute WriteIntoDeltaCommand (2)\n+- LocalTableScan (1)\n\n\n"
            "(1) LocalTableScan\nOutput [2]: [dt#0, v#1L]\nArguments: [dt#0, v#1L]\n\n"
            f"(2) Execute WriteIntoDeltaCommand\nInput [2]: [dt#0, v#1L]\nArguments: OutputSpec({path},Map(),List(dt#0, v#1L))\n")


def execution_log(app: str, path: str, start: dt.datetime, end: dt.datetime) -> str:
    """An event log of application ``app`` whose SQL execution 0 wrote the Delta table at
    ``path`` from ``start`` to ``end``."""
    ms = {"start": int(start.replace(tzinfo=dt.timezone.utc).timestamp() * 1000),
          "end": int(end.replace(tzinfo=dt.timezone.utc).timestamp() * 1000)}
    out = []
    for line in SPARK_LOG.read_text().splitlines():
        d = json.loads(line)
        if d["Event"] == "SparkListenerLogStart":
            out.append(line)
        elif d["Event"] == "SparkListenerApplicationStart":
            out.append(json.dumps({**d, "App ID": app}))
        elif d["Event"].endswith("SQLExecutionStart") and d["executionId"] == 0:
            out.append(json.dumps({**d, "physicalPlanDescription": delta_write_plan(path), "time": ms["start"]}))
        elif d["Event"].endswith("SQLExecutionEnd") and d["executionId"] == 0:
            out.append(json.dumps({**d, "time": ms["end"]}))
    return "\n".join(out) + "\n"


def _block(dumper, text: str):
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


yaml.SafeDumper.add_representer(str, _block)


def reader_events(table: Path) -> list[dict]:
    """The events the product's own reader (parsers/lakehouse.read_table) makes of the table at
    ``table``: for an Iceberg table, whose manifests are Avro, a case's text files cannot hold
    its log. Its root is the case's ``{root}``."""
    root, fmt = table_root(str(table))
    _, events = read_table(root, fmt)
    out = []
    for e in events:
        d = {k: v for k, v in dataclasses.asdict(e).items() if v is not None}
        d["ts"] = str(d["ts"])
        out.append({k: v.replace(root, "{root}") if isinstance(v, str) else v for k, v in d.items()})
    return out


def iceberg_expired(work: Path, stray: str | None = None) -> list[dict]:
    """A pyiceberg table (SqlCatalog on sqlite) of three appends whose first snapshot
    expire_snapshots removed (the metadata files naming it stay: a ``dropped`` commit of
    sequence number 1), as the reader makes it, and audit's listing of its data files; ``stray``
    (data/<partition>/<name>) a file written there before the latest append and never added."""
    from pyiceberg.catalog.sql import SqlCatalog

    home = work / f"iceberg-{stray is not None}"
    home.mkdir()
    cat = SqlCatalog("c", uri=f"sqlite:///{home}/catalog.db", warehouse=f"file://{home}/wh")
    cat.create_namespace("db")
    tbl = cat.create_table("db.t", schema=ROWS.schema)
    with tbl.update_spec() as spec:
        spec.add_identity("dt")
    for n in range(3):
        if n == 2 and stray:
            (home / "wh/db/t" / stray).parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(ROWS.select(["v"]), home / "wh/db/t" / stray)
        tbl.append(ROWS)
    tbl.maintenance.expire_snapshots().by_id(tbl.snapshots()[0].snapshot_id).commit()
    table = Path(tbl.metadata.location.removeprefix("file://"))
    return reader_events(table) + listing(table)


def iceberg_v1_readd(work: Path, overwrite_between: bool) -> list[dict]:
    """A pyiceberg table of format-version 1 (no sequence numbers: Spark's default before Iceberg
    1.4): an append, then add_files of a file written under its data directory, run again with
    check_duplicate_files=False (iceberg-python#2130) or after an overwrite that removed it; as
    the reader makes it."""
    from pyiceberg.catalog.sql import SqlCatalog

    home = work / f"iceberg-v1-{overwrite_between}"
    home.mkdir()
    cat = SqlCatalog("c", uri=f"sqlite:///{home}/catalog.db", warehouse=f"file://{home}/wh")
    cat.create_namespace("db")
    tbl = cat.create_table("db.t", schema=ROWS.schema, properties={"format-version": "1"})
    tbl.append(ROWS)
    table = Path(tbl.metadata.location.removeprefix("file://"))
    imported = table / "data" / "import-00000.parquet"
    pq.write_table(ROWS, imported)
    tbl.add_files([str(imported)])
    if overwrite_between:
        tbl.overwrite(ROWS)
    tbl.add_files([str(imported)], check_duplicate_files=False)
    return reader_events(table)


def twins(*tasks, op: str = "3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f", app: str | None = "app-20240101000000-0001",
          version: int = 1, kind: str = "table_add") -> list[dict]:
    """``table_add`` events of one Iceberg append by Spark, whose data files are named
    partitionId-TID-operationId-fileCount[-suffix] (SparkWrite's OutputFileFactory; a task's count
    goes up with each file it rolls to, position-delete files carry the suffix ``deletes``): a
    task is (partitionId, TID[, count[-suffix]]). ``kind`` ``table_remove``: a later snapshot's
    DELETED entries of those files (a delete_files or a rewrite)."""
    out = []
    for part, tid, *tail in tasks:
        name = f"{part}-{tid}-{op}-{tail[0] if tail else '00001'}.parquet"
        out.append({"kind": kind, "ts": f"2024-01-01 10:00:0{version - 1}", "location": "{root}", "table_name": "t",
                    "path": f"{{root}}/data/dt=2024-01-01/{name}", "partition_spec": "dt=2024-01-01", "file_name": name,
                    "app_id": app, "detail": {"format": "iceberg-metadata", "version": version, "tid": tid}})
    return out


def attempts(app: str, *tids: int) -> list[dict]:
    """attempt_end events of an event log's attempts 0, 1, … of task 3 in stage 1 (TIDs ``tids``)."""
    return [{"kind": "attempt_end", "ts": "2024-01-01 09:59:59", "app_id": app, "stage_id": 1, "stage_attempt": 0,
             "task_id": "1.3", "attempt_id": f"task 3.{n} in stage 1.0 (TID {tid})", "attempt_no": n,
             "status": "success" if n == 0 else "killed", "detail": {"tid": tid}} for n, tid in enumerate(tids)]


def _task_info(tid: int, attempt: int, launch: int, executor: str, host: str, speculative: bool,
               finish: int = 0, killed: bool = False) -> dict:
    return {"Task ID": tid, "Index": 3, "Attempt": attempt, "Partition ID": 3, "Launch Time": launch,
            "Executor ID": executor, "Host": host, "Locality": "PROCESS_LOCAL", "Speculative": speculative,
            "Getting Result Time": 0, "Finish Time": finish, "Failed": False, "Killed": killed, "Accumulables": []}


def restart_event_logs() -> dict[str, str]:
    """Spark's event logs (JsonProtocol) of the two runs of a YARN-restarted application
    (APP_YARN; EventLoggingListener names each <appId>_<attemptId>, its application start says
    "App Attempt ID"). Each run counts TIDs from 0: run 1's task 3 of stage 1 was TID 7 on
    10.0.0.21, running when its driver died; run 2's task 3 was TID 7 again, on 10.0.0.31, and its
    speculative copy TID 12 on 10.0.0.32 (killed: another attempt succeeded). Both runs used the
    name "task 3.0 in stage 1.0 (TID 7)"; run 2 alone used "task 3.1 in stage 1.0 (TID 12)"."""
    def run(n: int, t0: int, tasks: list[dict]) -> str:
        events = [{"Event": "SparkListenerLogStart", "Spark Version": "3.5.1"},
                  {"Event": "SparkListenerApplicationStart", "App Name": "orders_daily", "App ID": APP_YARN,
                   "Timestamp": t0, "User": "etl", "App Attempt ID": str(n)},
                  {"Event": "SparkListenerJobStart", "Job ID": 1, "Submission Time": t0 + 500, "Stage Infos": [],
                   "Stage IDs": [1], "Properties": {}},
                  {"Event": "SparkListenerStageSubmitted", "Stage Info": {
                      "Stage ID": 1, "Stage Attempt ID": 0, "Stage Name": "append at Orders.scala:42", "Number of Tasks": 8,
                      "RDD Info": [], "Parent IDs": [], "Details": "", "Submission Time": t0 + 600, "Accumulables": [],
                      "Resource Profile Id": 0}, "Properties": {}}] + tasks
        return "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)

    def start(info: dict) -> dict:
        return {"Event": "SparkListenerTaskStart", "Stage ID": 1, "Stage Attempt ID": 0, "Task Info": info}

    def end(info: dict, reason: dict) -> dict:
        return {"Event": "SparkListenerTaskEnd", "Stage ID": 1, "Stage Attempt ID": 0, "Task Type": "ResultTask",
                "Task End Reason": reason, "Task Info": info,
                "Task Metrics": {"Output Metrics": {"Bytes Written": 4096, "Records Written": 100}}}

    t1, t2 = 1704102000000, 1704103170000  # 2024-01-01 09:40:00 and 09:59:30 UTC
    won = _task_info(7, 0, t2 + 1000, "2", "10.0.0.31", False)
    spec = _task_info(12, 1, t2 + 2000, "3", "10.0.0.32", True)
    return {
        f"spark/{APP_YARN}_1": run(1, t1, [start(_task_info(7, 0, t1 + 1000, "1", "10.0.0.21", False))]),
        f"spark/{APP_YARN}_2": run(2, t2, [
            start(won), start(spec), end({**won, "Finish Time": t2 + 6000}, {"Reason": "Success"}),
            end({**spec, "Finish Time": t2 + 7000, "Killed": True}, {"Reason": "TaskKilled", "Kill Reason": "another attempt succeeded"}),
        ]) + json.dumps({"Event": "SparkListenerApplicationEnd", "Timestamp": t2 + 35000}, separators=(",", ":")) + "\n",
    }


def restart_cases() -> list[dict]:
    """CS202 cases of speculative twins written by run 2 of a YARN-restarted application
    (restart_event_logs): the snapshot's summary names the application (spark.app.id), not the
    run, so TID 7 of its file names an attempt of each run under one name; TID 12 one of run 2's."""
    def adds() -> list[dict]:  # each case its own objects (no YAML anchors between cases)
        return twins(("00003", 7), ("00003", 12), app=APP_YARN)

    spec = f"{APP_YARN}_2/stage 1.0/task 3 attempt 1 (TID 12) on 10.0.0.32"
    audit = "".join(hdfs_audit(1 + n, "create", e["path"], ip=f"10.0.0.{31 + n}",
                               ctx=f"SPARK_TASK_{APP_YARN}_2_JId_1_SId_1_0_TId_{e['detail']['tid']}_{n}")
                    for n, e in enumerate(adds()))
    return [
        # nothing the finding holds says the run of TID 7: neither run's attempt is guessed (its
        # logged name stays), TID 12 is run 2's, the only attempt of that name
        {"name": "YARN restart - speculative twins of run 2's task 3 (TID 7, TID 12), run 1's task 3 was TID 7 too: "
                 "TID 7 named by neither run's attempt, TID 12 by run 2's",
         "files": restart_event_logs(), "events": adds(),
         "expect": [{"partition": "dt=2024-01-01", "detail": {"how": "twins"},
                     "actors": [APP_YARN, "task 3.0 in stage 1.0 (TID 7)", spec],
                     "objects": [{"kind": "application"}, {"kind": "name", "label": "task 3.0 in stage 1.0 (TID 7)"},
                                 {"kind": "spark_attempt", "label": spec, "run": "2", "tid": 12, "host": "10.0.0.32"}]}]},
        # its twin: the NameNode audit's creates of the two files, whose caller contexts name run 2
        # (SPARK_TASK_<appId>_2_…), join the evidence: TID 7 is run 2's attempt
        {"name": "YARN restart - the same twins with the HDFS audit's creates of their files by run 2: TID 7 named by run 2's attempt",
         "files": {**restart_event_logs(), "hdfs-audit.log": audit}, "events": adds(),
         "expect": [{"partition": "dt=2024-01-01", "detail": {"how": "twins"},
                     "objects": [{"kind": "application"},
                                 {"kind": "spark_attempt", "label": f"{APP_YARN}_2/stage 1.0/task 3 attempt 0 (TID 7) on 10.0.0.31",
                                  "run": "2", "tid": 7, "host": "10.0.0.31"},
                                 {"kind": "spark_attempt", "label": spec, "run": "2", "tid": 12}]}]},
        {"name": "negative - the same restart, a later snapshot deleted the speculative copy's file",
         "files": restart_event_logs(), "events": adds() + twins(("00003", 12), version=2, kind="table_remove", app=APP_YARN),
         "expect": []},
    ]


def s3_put(role: str, request: str, time: str, key: str = "warehouse/orders/_delta_log/00000000000000000003.json",
           op: str = "REST.PUT.OBJECT", agent: str = "delta-rs/1.6.6") -> str:
    """One S3 server access log line (the documented field order, as parsers/formats/s3_access.py's
    samples) of a PUT of ``key`` in bucket ``lake`` (a COPY onto it, as S3A's rename, with ``op``)."""
    return (f'b1e2c3d4 lake [01/Mar/2023:{time} +0000] 10.0.0.21 arn:aws:iam::123456789012:role/{role} {request} '
            f'{op} {key} "PUT /{key} HTTP/1.1" 200 - - 912 412 38 "-" "{agent}" - HOSTID= SigV4 '
            'ECDHE-RSA-AES128-GCM-SHA256 AuthHeader lake.s3.eu-west-1.amazonaws.com TLSv1.2 - -\n')


# CS205 stamps stated as the events the delta-log and iceberg-metadata readers make of them (txn
# from a commit's txn action; streaming from an Iceberg snapshot summary's
# spark.sql.streaming.queryId/epochId): no Spark streaming sink runs here.
QUERY = '0f1e2d3c-4b5a-4968-8776-655443322110'


def stamped(second: int, fmt: str, version: int, status: str = 'completed', location: str = '{root}', **stamp) -> dict:
    """A table_commit event as the readers make it, at 10:00:0<second>, carrying ``stamp``
    (``streaming=`` or ``txn=``) in its detail."""
    return {'kind': 'table_commit', 'ts': f'2024-01-01 10:00:{second:02d}', 'location': location,
            'status': status, 'detail': {'format': fmt, 'version': str(version), **stamp}}


def epoch(n):
    return {'query_id': QUERY, 'epoch_id': n}


def txn(app_id, version):
    return [{'app_id': app_id, 'version': version}]


STATED_STAMPS = [
    {'name': 'Iceberg - one streaming (queryId, epochId) on two snapshots',
     'events': [stamped(1, 'iceberg-metadata', 1, streaming=epoch(5)),
                stamped(2, 'iceberg-metadata', 2, streaming=epoch(5))],
     'expect': [{'summary': f'carry the same streaming (queryId, epochId) ({QUERY}, 5)'}]},
    {'name': "negative - Iceberg - one streaming query, epochs 5 and 6; a second snapshot's summary with no epoch",
     'events': [stamped(1, 'iceberg-metadata', 1, streaming=epoch(5)),
                stamped(2, 'iceberg-metadata', 2, streaming=epoch(6)),
                stamped(3, 'iceberg-metadata', 3, streaming=epoch(None)),
                stamped(4, 'iceberg-metadata', 4, streaming=epoch(None))],
     'expect': []},
    {'name': 'negative - one stamp on a completed commit and on a staged commit file never published',
     'events': [stamped(1, 'delta-log', 1, txn=txn('query-7', 2)),
                stamped(2, 'delta-log', 2, 'uncommitted', txn=txn('query-7', 2)),
                stamped(3, 'iceberg-metadata', 3, streaming=epoch(5)),
                stamped(4, 'iceberg-metadata', 4, 'uncommitted', streaming=epoch(5))],
     'expect': []},
    {'name': "negative - two applications' txns of one version, one txn in two tables, and txns with no appId",
     'events': [stamped(1, 'delta-log', 1, txn=txn('query-7', 2)),
                stamped(2, 'delta-log', 2, txn=txn('query-8', 2)),
                stamped(3, 'delta-log', 1, location='{root}/../other', txn=txn('query-7', 2)),
                stamped(4, 'delta-log', 3, txn=txn(None, 3)),
                stamped(5, 'delta-log', 4, txn=txn(None, 3))],
     'expect': []},
]


def dump(name: str, code: str, title: str, cases: list[dict]) -> None:
    header = (f"# Cases for {code} {title}. Generated by tests/corpus/lakehouse/make_cases.py: every\n"
              f"# _delta_log line was written by deltalake (delta-rs) and is copied verbatim; every .hoodie\n"
              f"# file is copied verbatim from a Spark-written table of apache/hudi-rs' test data.\n")
    (CASES / f"{name}.yml").write_text(header + yaml.safe_dump({"code": code, "cases": cases}, sort_keys=False,
                                                               allow_unicode=True, width=10_000))


def quoted_partitions(work: Path) -> list[dict]:
    """CS203 cases of a delta-rs table partitioned by a string column holding eu, 'eu' (a quote in
    the value: partitionValues keeps it, the directory escapes it, region=%27eu%27) and us: two
    partitions, whose files go missing apart (forensics/paths.py normalize_spec keeps a quote
    outside Hive's PARTITION clause). The adds are stated as the delta-log reader makes them of
    delta-rs' own log (reader_events; each event's raw holds its log line): so forensics/paths.py's
    enrich spells each partition as the case is loaded, what the mutation runner's re-ingest
    reaches (the reader's normal_spec is a cached copy of normalize_spec it does not swap)."""
    t = work / "missing-quoted"
    write_deltalake(str(t), pa.table({"region": ["eu", "'eu'", "us"], "v": [1, 2, 3]}), partition_by=["region"])
    # as the listing names them: the directories' own names
    quoted, plain = (next(f.relative_to(t).as_posix() for f in (t / d).glob("*.parquet"))
                     for d in ("region=%27eu%27", "region=eu"))
    adds = reader_events(t)
    return [
        {"name": "Delta - partitions eu and 'eu' (a quote in the value): a file of each missing is one finding per partition",
         "events": adds + listing(t, commit_ts(t, 0), skip=(quoted, plain)),
         "expect": [{"partition": "region='eu'", "summary": f"is missing from region='eu': {quoted.split('/')[1]}"},
                    {"partition": "region=eu", "summary": f"is missing from region=eu: {plain.split('/')[1]}"}]},
        {"name": "Delta - partitions eu and 'eu' (a quote in the value): the file of 'eu' missing, eu's listed",
         "events": adds + listing(t, commit_ts(t, 0), skip=(quoted,)),
         "expect": [{"partition": "region='eu'", "summary": f"is missing from region='eu': {quoted.split('/')[1]}"}]},
        {"name": "negative - Delta - partitions eu and 'eu' (a quote in the value), every file listed",
         "events": adds + listing(t, commit_ts(t, 0)), "expect": []},
    ]


def main(work: Path) -> None:
    # CS201: a file in a partition no version references, older than the latest commit
    t = work / "orphan"
    write_deltalake(str(t), ROWS, partition_by=["dt"])
    write_deltalake(str(t), ROWS, mode="append", partition_by=["dt"])
    stray = "dt=2024-01-03/part-00000-6a0c1f61-5a4b-4c1e-9f57-2d1b7c0e9a11-c000.snappy.parquet"
    at = "dt=2024-01-03/part-00001-6a0c1f61-5a4b-4c1e-9f57-2d1b7c0e9a11-c000.snappy.parquet"
    before, after = commit_ts(t, 1) - dt.timedelta(seconds=30), commit_ts(t, 1) + dt.timedelta(seconds=30)
    # a gap: version 1 of three lost, its files on storage referenced by no version the log holds
    g = work / "orphan-gap"
    for mode in ("error", "append", "append"):
        write_deltalake(str(g), ROWS, mode=mode, partition_by=["dt"])
    # Change Data Feed: a DELETE writes _change_data/ files its cdc action names, never added
    c = work / "orphan-cdf"
    write_deltalake(str(c), ROWS, partition_by=["dt"], configuration={"delta.enableChangeDataFeed": "true"})
    DeltaTable(str(c)).delete("v = 1")
    # a writer killed after staging its commit (its data files written), then another's append;
    # and one killed so with no commit after it
    k, n = work / "orphan-staged", work / "orphan-staged-last"
    for table_dir in (k, n):
        write_deltalake(str(table_dir), ROWS, partition_by=["dt"])
        write_deltalake(str(table_dir), ROWS, mode="append", partition_by=["dt"])
        stage(table_dir, 1)
    write_deltalake(str(k), ROWS, mode="append", partition_by=["dt"])
    # two tables: a write to a in progress (its file on storage, no commit yet) while b commits
    two = work / "orphan-two"
    write_deltalake(str(two / "a"), ROWS, partition_by=["dt"])
    (two / "a" / "dt=2024-01-03").mkdir()
    pq.write_table(ROWS.select(["v"]), two / "a" / "dt=2024-01-03" / "part-00000-0d6b1f7e-8c2a-4f3e-9b5d-7a1c2e3f4a5b-c000.snappy.parquet")
    write_deltalake(str(two / "b"), ROWS, partition_by=["dt"])
    # a file under table a's root that table b's log adds by absolute path (b a shallow clone of
    # a, or files added in place): b's data, not a's orphan. b's add is stated as the delta-log
    # reader makes it: its absolute path holds the case's root, which a log file cannot
    sh = work / "orphan-clone"
    write_deltalake(str(sh / "a"), ROWS, partition_by=["dt"])
    cloned = "dt=2024-01-03/part-00000-7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f-c000.snappy.parquet"
    (sh / "a" / "dt=2024-01-03").mkdir()
    pq.write_table(ROWS.select(["v"]), sh / "a" / cloned)
    write_deltalake(str(sh / "a"), ROWS, mode="append", partition_by=["dt"])
    write_deltalake(str(sh / "b"), ROWS, partition_by=["dt"])
    clone_add = {"kind": "table_add", "ts": str(commit_ts(sh / "b", 0)), "location": "{root}/b", "path": "{root}/a/" + cloned,
                 "partition_spec": "dt=2024-01-03", "file_name": cloned.split("/")[1], "size": (sh / "a" / cloned).stat().st_size,
                 "detail": {"format": "delta-log", "version": 1}}
    # Hive-named files (000000_0 in every partition) registered through the transaction API, as
    # a conversion of a Hive table leaves them; a Hive load after it writes another 000000_0
    # into a new partition and never commits it; a later append
    h = work / "orphan-hive"
    write_deltalake(str(h), ROWS.slice(0, 0), partition_by=["dt"])
    adds = []
    for day in ("2024-01-01", "2024-01-02"):
        (h / f"dt={day}").mkdir()
        pq.write_table(ROWS.select(["v"]), h / f"dt={day}" / "000000_0")
        st = (h / f"dt={day}" / "000000_0").stat()
        adds.append(AddAction(f"dt={day}/000000_0", st.st_size, {"dt": day}, int(st.st_mtime * 1000), True, '{"numRecords":2}'))
    table = DeltaTable(str(h))
    table.create_write_transaction(adds, mode="append", schema=table.schema(), partition_by=["dt"])
    (h / "dt=2024-01-03").mkdir()
    pq.write_table(ROWS.select(["v"]), h / "dt=2024-01-03" / "000000_0")
    write_deltalake(str(h), ROWS, mode="append", partition_by=["dt"])
    # Hudi (the Spark-written table): a completed instant's base file written by a second attempt
    # (write token partitionId-stageId-TID: stage 74's task 0 again, TID 118) and a file group the
    # commit never listed (task 2 of stage 74, which marker reconciliation should have deleted);
    # a later instant whose .commit was never written (inflight: its writer killed, no rollback
    # under the lazy failed-writes policy) with two attempts' base files
    i1, i2, orphan_fid = "20240707001301554", "20240707001302376", "0b6f4c2e-3d5a-4e8f-9a1b-2c3d4e5f6a7b-0"
    twin = f"20/88163884-fef0-4aab-865d-c72327a8a1d5-0_0-74-118_{i1}.parquet"
    inflight_twin = f"10/4f2685a3-614f-49ca-9b2b-e1cb9fb61f27-0_0-95-140_{i2}.parquet"
    hudi_orphan = f"10/{orphan_fid}_2-74-112_{i1}.parquet"
    hudi_killed = hudi(work, drop=(f"{i2}.commit",), extra=(twin, inflight_twin, hudi_orphan))
    # two Hudi tables: a, and b, a copy of a's directory beside it whose timeline no longer holds
    # instant i1 (rolled back there: its instant files gone) while i1's base files, and a second
    # attempt's base file of one of its file groups, are still on b's storage. a's log adds that
    # file group at i1 under another write token: b's files are b's orphans, not a's twins
    a_files, a_events = hudi_at(work, "a")
    b_files, b_events = hudi_at(work, "b", drop=(f"{i1}.commit", f"{i1}.commit.requested", f"{i1}.inflight"), extra=(twin,))
    # Delta data files tied to their Spark task attempts by the storage's own record (a Delta
    # name carries no TID): the NameNode audit's create of each file under the table root, its
    # callerContext the task's. Task 0 of stage 5 ran twice (TIDs 7 and 12, a speculative copy);
    # the log added attempt 0's file, attempt 1's is on storage unreferenced
    ot = work / "orphan-tied"
    for mode in ("error", "append"):
        write_deltalake(str(ot), ROWS, mode=mode, partition_by=["dt"])
    ot_live = live(ot)
    loser = "dt=2024-01-01/part-00000-4e5d6c7b-8a9f-4b0c-9d1e-2f3a4b5c6d7e-c000.snappy.parquet"
    ot_before = commit_ts(ot, 1) - dt.timedelta(seconds=30)
    creates = "".join(hdfs_audit(1 + i, "create", f"{{root}}/t/{rel}", ctx=task_context(5, 7 + i, 0), ip=f"10.0.0.{21 + i}")
                      for i, rel in enumerate(ot_live))

    def tied(*lines: str) -> dict:
        return {**log_files(ot, prefix="t/"), "hdfs-audit.log": creates + "".join(lines)}

    ot_listing = listing(ot, prefix="t/", extra=[(loser, ot_before)])
    dump("table_orphan", "CS201", "table-orphan-file", [
        {"name": "a killed writer's file no version references, written before the latest commit",
         "files": log_files(t), "events": listing(t, extra=[(stray, before)]),
         "expect": [{"partition": "dt=2024-01-03", "summary": "1 file in dt=2024-01-03 no version of the table's log references"}]},
        {"name": "negative - unreferenced files at or after the latest commit's time are a write in progress",
         "files": log_files(t), "events": listing(t, extra=[(stray, after), (at, commit_ts(t, 1))]), "expect": []},
        {"name": "negative - every listed file is referenced",
         "files": log_files(t), "events": listing(t), "expect": []},
        {"name": "negative - version 1 is missing from the log: its files are unreferenced only because the log lost it (CS204's gap)",
         "files": log_files(g, drop=(1,)), "events": listing(g), "expect": []},
        {"name": "negative - Change Data Feed files of a DELETE, named by its cdc action and by no add",
         "files": log_files(c), "events": listing(c), "expect": []},
        {"name": "a writer staged its commit and was killed before publishing it: its files, older than the next commit, named with the staged file",
         "files": log_files(k), "events": listing(k),
         "expect": [{"partition": f"dt={d}", "summary": "; a writer staged and never published "}
                    for d in ("2024-01-01", "2024-01-02")]},
        {"name": "negative - a writer staged its commit after the latest published one: its files are not older than the table's latest commit",
         "files": log_files(n), "events": listing(n), "expect": []},
        {"name": "negative - two tables: an unreferenced file of a write in progress on one, older than the other's latest commit",
         "files": {**log_files(two / "a", prefix="a/"), **log_files(two / "b", prefix="b/")},
         "events": listing(two / "a", prefix="a/") + listing(two / "b", prefix="b/"), "expect": []},
        {"name": "negative - a file under one table's root that another table's log references by absolute path",
         "files": {**log_files(sh / "a", prefix="a/"), **log_files(sh / "b", prefix="b/")},
         "events": listing(sh / "a", prefix="a/") + [clone_add], "expect": []},
        {"name": "a Hive load's 000000_0 in a new partition of a converted table, named like the files the log added",
         "files": log_files(h), "events": listing(h, pattern="*/*"),
         "expect": [{"partition": "dt=2024-01-03", "summary": "1 file in dt=2024-01-03 no version of the table's log references"}]},
        {"name": "an Iceberg data file of a Spark task attempt no snapshot added, named with its TID",
         "events": [stamped(0, "iceberg-metadata", 1)] + twins(("00003", 7)) + [
             {"kind": "table_file", "ts": "2024-01-01 09:59:58", "location": "{root}", "path": e["path"], "file_name": e["file_name"],
              "partition_spec": "dt=2024-01-01", "size": 1024} for e in twins(("00003", 7), ("00003", 12))],
         "expect": [{"partition": "dt=2024-01-01", "actors": ["TID 12"]}]},
        # an Iceberg snapshot expired (status dropped, sequence number 1) is no Hudi instant: a
        # stray file whose name ends _1.parquet (DuckDB's COPY … PARTITION_BY names its files
        # data_<i>.parquet) is still an orphan
        {"name": "an Iceberg table (pyiceberg) whose first snapshot was expired: a stray data_1.parquet no snapshot added",
         "events": iceberg_expired(work, "data/dt=2024-01-01/data_1.parquet"),
         "expect": [{"partition": "dt=2024-01-01", "summary": "1 file in dt=2024-01-01 no version of the table's log references (orphans, not data): data_1.parquet"}]},
        {"name": "negative - the same Iceberg table (pyiceberg), its first snapshot expired, no stray file: every data file referenced",
         "events": iceberg_expired(work), "expect": []},
        {"name": "negative - a Spark-written Hudi table (apache/hudi-rs test data): every base file referenced, partition metadata hidden",
         "files": hudi(work)[0], "events": hudi(work)[1], "expect": []},
        {"name": "Hudi: a file group a completed instant never listed, beside a second attempt's base file (CS202's) and an inflight instant's files (CS206's)",
         "files": hudi_killed[0], "events": hudi_killed[1],
         "expect": [{"summary": f"1 file in the unpartitioned table no version of the table's log references (orphans, not data): {hudi_orphan.split('/')[1]}"}]},
        {"name": "a Delta data file no version references, named with the Spark task attempt whose create of it the HDFS audit log records",
         "files": tied(hdfs_audit(20, "create", f"{{root}}/t/{loser}", ctx=task_context(5, 12, 1), ip="10.0.0.31")),
         "events": ot_listing,
         "expect": [{"partition": "dt=2024-01-01", "actors": [f"{APP_YARN}/stage 5.0/attempt 1 (TID 12) on 10.0.0.31"],
                     "summary": f"1 file in dt=2024-01-01 no version of the table's log references (orphans, not data): {loser.split('/')[1]}",
                     # the audit line of its create (ingested before the case's events), the listed file
                     "evidence": [f"hdfs-audit.log:{len(ot_live) + 1}",
                                  f"events:{1 + [e['path'] for e in ot_listing].index('{root}/t/' + loser)}"]}]},
        {"name": "negative - the audit log's create of the same file name under another table's root names no one",
         "files": tied(hdfs_audit(20, "create", f"{{root}}/u/{loser}", ctx=task_context(5, 12, 1), ip="10.0.0.31")),
         "events": ot_listing, "expect": [{"partition": "dt=2024-01-01", "actors": []}]},
        {"name": "negative - a create of the same name under _temporary, never renamed into the table, names no one",
         "files": tied(hdfs_audit(20, "create", f"{{root}}/t/_temporary/0/_temporary/attempt_202403011000000005_0005_m_000000_12/{loser}",
                                  ctx=task_context(5, 12, 1), ip="10.0.0.31")),
         "events": ot_listing, "expect": [{"partition": "dt=2024-01-01", "actors": []}]},
        # two attempts' creates of one path: the storage holds one file and its audit cannot say
        # whose bytes they are (a create with overwrite replaces the file, the first writer's
        # close may come after it): neither is named, as for a log file two principals wrote
        {"name": "negative - two attempts' creates of the orphan's one path name neither",
         "files": tied(hdfs_audit(20, "create", f"{{root}}/t/{loser}", ctx=task_context(5, 12, 1), ip="10.0.0.31"),
                       hdfs_audit(21, "create", f"{{root}}/t/{loser}", ctx=task_context(5, 7, 0), ip="10.0.0.21")),
         "events": ot_listing, "expect": [{"partition": "dt=2024-01-01", "actors": []}]},
        {"name": "one attempt's two creates of the orphan's path (a retried create in one task) name that attempt",
         "files": tied(hdfs_audit(20, "create", f"{{root}}/t/{loser}", ctx=task_context(5, 12, 1), ip="10.0.0.31"),
                       hdfs_audit(21, "create", f"{{root}}/t/{loser}", ctx=task_context(5, 12, 1), ip="10.0.0.31")),
         "events": ot_listing,
         "expect": [{"partition": "dt=2024-01-01", "actors": [f"{APP_YARN}/stage 5.0/attempt 1 (TID 12) on 10.0.0.31"]}]},
        {"name": "two Hudi tables, a and a copy of its directory beside it that rolled back an instant: the copy's files of it, a second attempt's among them, are its orphans, though a's log adds that file group and instant",
         "files": {**a_files, **b_files}, "events": a_events + b_events,
         "expect": [{"summary": "3 files in the unpartitioned table no version of the table's log references"}]},
        {"name": "negative - the same two Hudi tables, the copy's timeline whole: every base file referenced, the twin in the copy CS202's",
         "files": {**a_files, **hudi_at(work, "b")[0]}, "events": a_events + hudi_at(work, "b", extra=(twin,))[1], "expect": []},
    ])

    # CS202: delta-rs' transaction API re-adding a live file (a retried commit)
    t = work / "dup"
    write_deltalake(str(t), ROWS, partition_by=["dt"])
    table = DeltaTable(str(t))
    first = pa.table(table.get_add_actions(flatten=False)).to_pylist()[0]
    again = AddAction(first["path"], first["size_bytes"], first["partition"], first["modification_time"], True, '{"numRecords":1}')
    table.create_write_transaction([again], mode="append", schema=table.schema(), partition_by=["dt"])
    # one commit adding a file twice (delta-io/delta#3784)
    same = work / "dup-same"
    write_deltalake(str(same), ROWS, partition_by=["dt"])
    new_file = "dt=2024-01-03/part-00000-2f4e6a8c-1b3d-4e5f-8a9b-0c1d2e3f4a5b-c000.snappy.parquet"
    (same / "dt=2024-01-03").mkdir()
    pq.write_table(ROWS.select(["v"]), same / new_file)
    st = (same / new_file).stat()
    twice = AddAction(new_file, st.st_size, {"dt": "2024-01-03"}, int(st.st_mtime * 1000), True, '{"numRecords":2}')
    table = DeltaTable(str(same))
    table.create_write_transaction([twice, twice], mode="append", schema=table.schema(), partition_by=["dt"])
    # an overwrite, a RESTORE to version 0 (its files added again), a DELETE of the other
    # partition, a retried commit re-adding a restored file that is live, a DELETE of it
    r = work / "dup-restore"
    write_deltalake(str(r), ROWS, partition_by=["dt"])
    write_deltalake(str(r), ROWS, mode="overwrite", partition_by=["dt"])
    DeltaTable(str(r)).restore(0)
    n = work / "restore"
    for mode in ("error", "overwrite"):
        write_deltalake(str(n), ROWS, mode=mode, partition_by=["dt"])
    DeltaTable(str(n)).restore(0)
    DeltaTable(str(r)).delete("dt = '2024-01-02'")
    table = DeltaTable(str(r))
    restored = [a for a in pa.table(table.get_add_actions(flatten=False)).to_pylist()][0]
    table.create_write_transaction([AddAction(restored["path"], restored["size_bytes"], restored["partition"],
                                              restored["modification_time"], True, '{"numRecords":1}')],
                                   mode="append", schema=table.schema(), partition_by=["dt"])
    DeltaTable(str(r)).delete("dt = '2024-01-01'")
    o = work / "optimize"
    for mode in ("error", "append", "append"):
        write_deltalake(str(o), ROWS, mode=mode, partition_by=["dt"])
    DeltaTable(str(o)).optimize.compact()
    # table a's file, deleted from a; table b (a shallow clone of a's version 0) references it by
    # absolute path and re-adds it (a retried commit). b's adds are stated as the delta-log reader
    # makes them: their absolute path holds the case's root, which a log file cannot
    cl = work / "dup-clone"
    write_deltalake(str(cl / "a"), ROWS, partition_by=["dt"])
    shared = [a for a in pa.table(DeltaTable(str(cl / "a")).get_add_actions(flatten=False)).to_pylist()
              if a["partition"]["dt"] == "2024-01-01"][0]
    DeltaTable(str(cl / "a")).delete("dt = '2024-01-01'")
    clone_adds = [{"kind": "table_add", "ts": str(commit_ts(cl / "a", 1) + dt.timedelta(seconds=v)), "location": "{root}/b",
                   "path": "{root}/a/" + shared["path"], "partition_spec": "dt=2024-01-01",
                   "file_name": shared["path"].split("/")[1], "size": shared["size_bytes"],
                   "detail": {"format": "delta-log", "version": v}} for v in (0, 1)]
    # two applications in the store, each with TIDs 7 and 12: files whose log names no application
    other = "app-20240101000000-0002"
    # the SQL execution whose commit re-added the live file (version 1 of ``dup``): execution 0
    # of an application whose plan wrote the table, its window around the commit; another
    # application's execution 0, which wrote another table, still running then
    v1 = commit_ts(t, 1)
    app1, app2 = "local-1629442299891", "local-1629442299892"

    def executions(*logs: tuple[str, str, int, int]) -> dict:
        """``dup``'s log under t/ and an event log per (app, table, start, end: seconds from version 1's commit)."""
        return {**log_files(t, prefix="t/"), **{app: execution_log(app, f"{{root}}/{table}", v1 + dt.timedelta(seconds=a),
                                                                   v1 + dt.timedelta(seconds=b)) for app, table, a, b in logs}}

    readd = {"partition": "dt=" + first["partition"]["dt"], "detail": {"versions": [0, 1], "how": "while live"}}
    # one commit adding a file twice, the file's create in the HDFS audit log by a task attempt
    same_created = hdfs_audit(1, "create", f"{{root}}/t/{new_file}", ctx=task_context(2, 41, 0), ip="10.0.0.23")
    twin_files = twins(("00003", 7), ("00003", 12), app=APP_YARN)
    OP2 = "8a7b6c5d-4e3f-4a1b-9c8d-7e6f5a4b3c2d"  # a second append's operation id
    dump("table_duplicate", "CS202", "table-duplicate-file", [
        {"name": "a commit re-adds a file that is live", "files": log_files(t),
         "expect": [{"partition": "dt=" + first["partition"]["dt"], "summary": "version 1 adds ",
                     "detail": {"versions": [0, 1], "how": "while live"}}]},
        {"name": "one commit adds a file twice", "files": log_files(same),
         "expect": [{"partition": "dt=2024-01-03", "summary": "version 1 adds ",
                     "detail": {"versions": [1, 1], "how": "same commit"}}]},
        {"name": "a retried commit re-adds a restored file while live, between another partition's delete and its own",
         "files": log_files(r),
         "expect": [{"partition": "dt=" + restored["partition"]["dt"], "detail": {"versions": [2, 4], "how": "while live"}}]},
        {"name": "a commit re-adds a live file, named with the SQL execution whose window holds the commit",
         "files": executions((app1, "t", -2, 2), (app2, "u", -60, 30)),
         "expect": [{**readd, "actors": [f"{app1}/SQL execution 0"]}]},
        {"name": "the re-adding commit inside the windows of two executions writing the table: neither named",
         "files": executions((app1, "t", -2, 2), (app2, "t", -60, 30)), "expect": [{**readd, "actors": []}]},
        {"name": "an execution writing the table that ended before the commit, and one that started after it: neither named",
         "files": executions((app1, "t", -60, -10), (app2, "t", 10, 30)), "expect": [{**readd, "actors": []}]},
        {"name": "one commit adds a file twice, named with the task attempt whose create of it the HDFS audit log records",
         "files": {**log_files(same, prefix="t/"), "hdfs-audit.log": same_created},
         "expect": [{"partition": "dt=2024-01-03", "actors": ["application_1716000000000_0042/stage 2.0/attempt 0 (TID 41) on 10.0.0.23"],
                     "detail": {"versions": [1, 1], "how": "same commit"}}]},
        {"name": "negative - RESTORE adds again the files an overwrite removed", "files": log_files(n), "expect": []},
        {"name": "a shallow clone re-adds a file of its source while live; the source's own delete of it does not count",
         "files": log_files(cl / "a", prefix="a/"), "events": clone_adds,
         "expect": [{"partition": "dt=2024-01-01", "detail": {"versions": [0, 1], "how": "while live"}}]},
        {"name": "negative - version 1 (the overwrite) is lost: the RESTORE's adds look live twice only because the removes are gone",
         "files": log_files(n, drop=(1,)), "expect": []},
        {"name": "negative - OPTIMIZE removes files and adds new ones", "files": log_files(o), "expect": []},
        {"name": "speculative twins: two attempts (TIDs) of one Spark task both live in an Iceberg snapshot",
         "events": twins(("00003", 7), ("00003", 12)),
         "expect": [{"partition": "dt=2024-01-01", "actors": ["TID 12", "TID 7", "app-20240101000000-0001"],
                     "summary": "files of two attempts of one Spark task are both live",
                     "detail": {"how": "twins"}}]},
        {"name": "speculative twins named by their attempts when the event log holds them",
         "events": twins(("00003", 7), ("00003", 12)) + attempts("app-20240101000000-0001", 7, 12),
         "expect": [{"actors": ["app-20240101000000-0001", "app-20240101000000-0001/stage 1.0/task 3 attempt 0 (TID 7)",
                                "app-20240101000000-0001/stage 1.0/task 3 attempt 1 (TID 12)"], "detail": {"how": "twins"}}]},
        # no event log: the NameNode audit's creates of the two files name each attempt (its
        # attempt number and host), beside the TIDs the file names hold
        {"name": "speculative twins named by the attempts whose creates of them the HDFS audit log records",
         "events": twin_files,
         "files": {"hdfs-audit.log": "".join(hdfs_audit(1 + n, "create", e["path"], ctx=task_context(1, e["detail"]["tid"], n, job=0),
                                                         ip=f"10.0.0.{21 + n}") for n, e in enumerate(twin_files))},
         "expect": [{"partition": "dt=2024-01-01", "detail": {"how": "twins"},
                     "actors": ["TID 12", "TID 7", APP_YARN, f"{APP_YARN}/stage 1.0/attempt 0 (TID 7) on 10.0.0.21",
                                f"{APP_YARN}/stage 1.0/attempt 1 (TID 12) on 10.0.0.22"]}]},
        # a YARN restart's two runs count TIDs from 0 each: run 2's twins, a TID run 1 used too
        *restart_cases(),
        # the attempts read their shuffle input in another order: each wrote the partition as its
        # second file
        {"name": "speculative twins whose attempts wrote the partition's file under different counts",
         "events": twins(("00003", 7, "00002"), ("00003", 12, "00001")),
         "expect": [{"partition": "dt=2024-01-01", "actors": ["TID 12", "TID 7", "app-20240101000000-0001"], "detail": {"how": "twins"}}]},
        {"name": "speculative twins in a snapshot whose summary names no application, with two applications' attempts of those TIDs in the store: named by TID only",
         "events": twins(("00003", 7), ("00003", 12), app=None) + attempts("app-20240101000000-0001", 7, 12) + attempts(other, 7, 12),
         "expect": [{"actors": ["TID 12", "TID 7"], "detail": {"how": "twins"}}]},
        {"name": "speculative twins in a snapshot whose summary names no application, one application's attempts of those TIDs in the store: named by its attempts",
         "events": twins(("00003", 7), ("00003", 12), app=None) + attempts("app-20240101000000-0001", 7, 12),
         "expect": [{"actors": ["app-20240101000000-0001/stage 1.0/task 3 attempt 0 (TID 7)",
                                "app-20240101000000-0001/stage 1.0/task 3 attempt 1 (TID 12)"],
                     "objects": [{"kind": "spark_attempt", "app_id": "app-20240101000000-0001", "tid": 7},
                                 {"kind": "spark_attempt", "app_id": "app-20240101000000-0001", "tid": 12}],
                     "detail": {"how": "twins"}}]},
        # add_files run again on a twin's file (iceberg-python#2130): the file is live once, from
        # its latest add; the twins name each file once, with the versions that made them live
        {"name": "speculative twins, one of them re-added by a later add_files while live",
         "events": twins(("00003", 7), ("00003", 12)) + twins(("00003", 12), version=2),
         "expect": [{"partition": "dt=2024-01-01", "summary": f"(version 1 and 2): {twins(('00003', 12))[0]['file_name']}, "
                                                                f"{twins(('00003', 7))[0]['file_name']}", "detail": {"how": "twins"}},
                    {"partition": "dt=2024-01-01", "detail": {"versions": [1, 2], "how": "while live"}}]},
        {"name": "one task's file added by a snapshot and re-added by add_files: the re-add only, no twins",
         "events": twins(("00003", 7)) + twins(("00003", 7), version=2),
         "expect": [{"partition": "dt=2024-01-01", "detail": {"versions": [1, 2], "how": "while live"}}]},
        {"name": "negative - two tasks' files (two Spark partitions) in one snapshot",
         "events": twins(("00003", 7), ("00004", 8)), "expect": []},
        {"name": "negative - one task that rolled to a second file, and a merge-on-read task's data file and its position deletes",
         "events": twins(("00003", 7, "00001"), ("00003", 7, "00002"), ("00005", 9, "00001"), ("00005", 9, "00001-deletes")), "expect": []},
        {"name": "negative - two appends (two operations) whose tasks have the same partition id",
         "events": twins(("00003", 7)) + twins(("00003", 19), op=OP2, version=2), "expect": []},
        # one finding per task of one write: two appends (two operations) each with twins of
        # their task 3, and one append with twins of two of its tasks
        {"name": "two appends (two operations), each with speculative twins of its task of partition id 3: one finding per write",
         "events": twins(("00003", 7), ("00003", 12)) + twins(("00003", 19), ("00003", 24), op=OP2, version=2),
         "expect": [{"partition": "dt=2024-01-01", "actors": ["TID 12", "TID 7", "app-20240101000000-0001"],
                     "detail": {"how": "twins", "versions": [1]}},
                    {"partition": "dt=2024-01-01", "actors": ["TID 19", "TID 24", "app-20240101000000-0001"],
                     "detail": {"how": "twins", "versions": [2]}}]},
        {"name": "one append with speculative twins of two of its tasks (partition ids 3 and 4): one finding per task",
         "events": twins(("00003", 7), ("00004", 8), ("00003", 12), ("00004", 13)),
         # the two findings tie on every ordering key: each is checked for what both say
         "expect": [{"partition": "dt=2024-01-01", "summary": "files of two attempts of one Spark task are both live in dt=2024-01-01",
                     "detail": {"how": "twins", "versions": [1]}}] * 2},
        # a copy of task 3's file under Hive's copy name, added by add_files: its name is no
        # Spark output's (OutputFileFactory adds only -<suffix> and the format's extension after
        # the count), so the reader finds no TID in it, and it is no attempt of the task
        {"name": "speculative twins beside a copy of the task's file (Hive's _copy_1 name) add_files added: the two attempts' files only",
         "events": twins(("00003", 7), ("00003", 12)) + [
             {**e, "path": e["path"].replace(".parquet", "_copy_1.parquet"), "file_name": e["file_name"].replace(".parquet", "_copy_1.parquet"),
              "detail": {k: v for k, v in e["detail"].items() if k != "tid"}} for e in twins(("00003", 1), version=2, app=None)],
         "expect": [{"partition": "dt=2024-01-01", "actors": ["TID 12", "TID 7", "app-20240101000000-0001"], "detail": {"how": "twins"},
                     "summary": "(version 1): " + ", ".join(e["file_name"] for e in twins(("00003", 12), ("00003", 7)))}]},
        # the twin's file deleted by a later snapshot: the task's files left live are one
        # attempt's, however many it rolled to
        {"name": "negative - speculative twins, the second attempt's file deleted by a later snapshot; the first attempt rolled to two files",
         "events": twins(("00003", 7, "00001"), ("00003", 7, "00002"), ("00003", 12))
         + twins(("00003", 12), version=2, kind="table_remove"),
         "expect": []},
        {"name": "speculative twins, the first attempt rolled to two files, no delete: both attempts live",
         "events": twins(("00003", 7, "00001"), ("00003", 7, "00002"), ("00003", 12)),
         "expect": [{"partition": "dt=2024-01-01", "actors": ["TID 12", "TID 7", "app-20240101000000-0001"],
                     "detail": {"how": "twins"}}]},
        # format-version 1: the reader versions its snapshots by their timestamp-ms
        {"name": "an Iceberg format-version 1 table (pyiceberg): add_files run again on a file it holds",
         "events": iceberg_v1_readd(work, False),
         "expect": [{"summary": "adds import-00000.parquet in the unpartitioned table while version ", "detail": {"how": "while live"}}]},
        {"name": "negative - the same format-version 1 table, an overwrite removing the file before add_files adds it again",
         "events": iceberg_v1_readd(work, True), "expect": []},
        {"name": "negative - a Spark-written Hudi table (apache/hudi-rs test data)", "files": hudi(work)[0], "events": hudi(work)[1],
         "expect": []},
        {"name": "Hudi: two write tokens of one file group and completed instant both on storage; an inflight instant's two attempts are CS206's",
         "files": hudi_killed[0], "events": hudi_killed[1],
         "expect": [{"actors": ["TID 110", "TID 118"], "detail": {"how": "twins", "versions": [int(i1)]}}]},
    ])

    # CS203: a live file absent from the listing
    t = work / "missing"
    write_deltalake(str(t), ROWS, partition_by=["dt"])
    gone = [p for p in live(t) if p.startswith("dt=2024-01-02/")][0]
    # a file added by absolute path outside the root (the transaction API, as a shallow clone or
    # an import of files in place references them)
    e = work / "missing-external"
    write_deltalake(str(e), ROWS, partition_by=["dt"])
    table = DeltaTable(str(e))
    table.create_write_transaction([AddAction("file:///data/landing/dt=2024-01-03/part-00000-5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9-c000.snappy.parquet",
                                              484, {"dt": "2024-01-03"}, 1700000000000, True, '{"numRecords":1}')],
                                   mode="append", schema=table.schema(), partition_by=["dt"])
    # two tables side by side, orders and orders_2024: the orders directory deleted, a file of
    # orders_2024 missing
    sib = work / "missing-siblings"
    for name in ("orders", "orders_2024"):
        write_deltalake(str(sib / name), ROWS, partition_by=["dt"])
    sib_gone = [p for p in live(sib / "orders_2024") if p.startswith("dt=2024-01-02/")][0]
    # nested table roots: a table written inside another's directory. audit of the outer table
    # lists the inner one's files too (under the outer root); audit of the inner one, later, no
    # longer finds one of them
    nest = work / "missing-nested"
    write_deltalake(str(nest), ROWS, partition_by=["dt"])
    write_deltalake(str(nest / "inner"), ROWS, partition_by=["dt"])
    nest_gone = [p for p in live(nest / "inner") if p.startswith("dt=2024-01-02/")][0]
    outer_listing = [e for e in listing(nest, commit_ts(nest / "inner", 0)) if "/_delta_log/" not in e["path"]]
    # ingest reads no table inside another's root (its files are the outer log's): the inner
    # table's adds are stated as the delta-log reader makes them from its log (delta-rs' own)
    nested_files = log_files(nest)
    inner_adds = [{"kind": "table_add", "ts": str(commit_ts(nest / "inner", 0)), "location": "{root}/inner",
                   "path": "{root}/inner/" + a["path"], "partition_spec": f"dt={a['partition']['dt']}",
                   "file_name": a["path"].split("/")[1], "size": a["size_bytes"], "detail": {"format": "delta-log", "version": 0}}
                  for a in pa.table(DeltaTable(str(nest / "inner")).get_add_actions(flatten=False)).to_pylist()]
    dump("table_missing", "CS203", "table-missing-file", [
        {"name": "a file the current version references is not on storage", "files": log_files(t),
         "events": listing(t, commit_ts(t, 0), skip=(gone,)),
         "expect": [{"partition": "dt=2024-01-02", "summary": "is missing from dt=2024-01-02"}]},
        {"name": "negative - every live file is listed", "files": log_files(t),
         "events": listing(t, commit_ts(t, 0)), "expect": []},
        {"name": "negative - without a listing nothing is judged missing", "files": log_files(t), "expect": []},
        # the storage's own delete records (an HDFS audit log's delete, as parsers/formats/hdfs_audit.py
        # makes it) name who deleted it: the file itself, or a directory above it; its writer's create
        # and another file's delete name no one
        {"name": "a missing file whose delete the storage recorded names who deleted it",
         "files": log_files(t), "events": listing(t, commit_ts(t, 0), skip=(gone,)) + [
             {"kind": "file_create", "ts": str(commit_ts(t, 0)), "thread": "etl from 10.0.0.21", "path": "{root}/" + gone},
             {"kind": "delete", "ts": str(commit_ts(t, 0) + dt.timedelta(minutes=5)), "thread": "jdoe from 10.20.9.44",
              "path": "{root}/" + gone},
             {"kind": "delete", "ts": str(commit_ts(t, 0) + dt.timedelta(minutes=5)), "thread": "etl from 10.0.0.21",
              "path": "{root}/dt=2024-01-01/part-00000-00000000-0000-4000-8000-000000000000-c000.snappy.parquet"}],
         "expect": [{"partition": "dt=2024-01-02", "actors": ["jdoe from 10.20.9.44"]}]},
        # VACUUM's parallel delete runs in Spark tasks: the HDFS reader keys such a record by the
        # task its callerContext names, the storage user in its detail
        {"name": "a missing file deleted by a Spark task (VACUUM's parallel delete) names the storage user",
         "files": log_files(t), "events": listing(t, commit_ts(t, 0), skip=(gone,)) + [
             {"kind": "delete", "ts": str(commit_ts(t, 0) + dt.timedelta(minutes=5)), "path": "{root}/" + gone,
              "app_id": "application_1700000000000_0001", "attempt_id": "task attempt 0 in stage 5.0 (TID 31)",
              "detail": {"storage": "hdfs", "user": "svc_vacuum", "how": "delete",
                         "caller_context": "SPARK_TASK_application_1700000000000_0001_1_JId_3_SId_5_0_TId_31_0"}}],
         "expect": [{"partition": "dt=2024-01-02", "actors": ["svc_vacuum"]}]},
        {"name": "negative - a live file outside the table's root is not judged from the root's listing",
         "files": log_files(e), "events": listing(e), "expect": []},
        {"name": "a file of orders_2024 missing while the directory of orders beside it was deleted: no one named",
         "files": {**log_files(sib / "orders", prefix="orders/"), **log_files(sib / "orders_2024", prefix="orders_2024/")},
         "events": listing(sib / "orders_2024", prefix="orders_2024/", skip=(sib_gone,)) + [
             {"kind": "delete", "ts": str(commit_ts(sib / "orders_2024", 0) + dt.timedelta(minutes=5)),
              "thread": "jdoe from 10.20.9.44", "path": "{root}/orders"}],
         "expect": [{"partition": "dt=2024-01-02", "actors": [], "summary": "is missing from dt=2024-01-02"}]},
        {"name": "nested table roots: the inner table's file, in the outer table's earlier listing, is missing from the inner one's own",
         "files": nested_files,
         "events": inner_adds + outer_listing + listing(nest / "inner", commit_ts(nest / "inner", 0) + dt.timedelta(minutes=5),
                                                        prefix="inner/", skip=(nest_gone,)),
         "expect": [{"partition": "dt=2024-01-02", "summary": f"is missing from dt=2024-01-02: {nest_gone.split('/')[1]}"}]},
        {"name": "negative - nested table roots, each listing holding every file of both tables",
         "files": nested_files,
         "events": inner_adds + outer_listing + listing(nest / "inner", commit_ts(nest / "inner", 0) + dt.timedelta(minutes=5), prefix="inner/"),
         "expect": []},
        {"name": "a missing file whose partition directory the storage recorded deleted",
         "files": log_files(t), "events": listing(t, commit_ts(t, 0), skip=(gone,)) + [
             {"kind": "delete", "ts": str(commit_ts(t, 0) + dt.timedelta(minutes=5)), "thread": "jdoe from 10.20.9.44",
              "path": "{root}/dt=2024-01-02"}],
         "expect": [{"partition": "dt=2024-01-02", "actors": ["jdoe from 10.20.9.44"]}]},
        *quoted_partitions(work),
    ])

    # CS204: a gap in the chain; a stale overwrite; healthy retried appends
    t = work / "gap"
    for mode in ("error", "append", "append"):
        write_deltalake(str(t), ROWS, mode=mode, partition_by=["dt"])
    # a stale handle's full overwrite, then a DELETE of one of the partitions it left live
    s = work / "stale"
    write_deltalake(str(s), ROWS, partition_by=["dt"])
    handle = DeltaTable(str(s))
    write_deltalake(str(s), ROWS, mode="append", partition_by=["dt"])
    write_deltalake(handle, ROWS, mode="overwrite", partition_by=["dt"])
    DeltaTable(str(s)).delete("dt = '2024-01-01'")
    w = work / "overwrite"
    for mode in ("error", "append", "overwrite"):
        write_deltalake(str(w), ROWS, mode=mode, partition_by=["dt"])
    # a DELETE, then a full overwrite (it removes what is live, not what the DELETE removed)
    d = work / "delete-overwrite"
    write_deltalake(str(d), ROWS, partition_by=["dt"])
    DeltaTable(str(d)).delete("dt = '2024-01-02'")
    write_deltalake(str(d), ROWS, mode="overwrite", partition_by=["dt"])
    # an overwrite of one partition by predicate (replaceWhere): the others stay live
    q = work / "predicate-overwrite"
    write_deltalake(str(q), ROWS, partition_by=["dt"])
    write_deltalake(str(q), ROWS.slice(0, 1), mode="overwrite", predicate="dt = '2024-01-01'", partition_by=["dt"])
    # two tables: one overwritten in full, the other appended to
    two = work / "two-overwrite"
    write_deltalake(str(two / "a"), ROWS, partition_by=["dt"])
    write_deltalake(str(two / "a"), ROWS, mode="overwrite", partition_by=["dt"])
    for mode in ("error", "append"):
        write_deltalake(str(two / "b"), ROWS, mode=mode, partition_by=["dt"])
    # a DELETE of one partition, a stale handle taken after it, the deleted file added back (a
    # retried commit through the transaction API), the stale handle's full overwrite
    b = work / "stale-readd"
    write_deltalake(str(b), ROWS, partition_by=["dt"])
    back = [a for a in pa.table(DeltaTable(str(b)).get_add_actions(flatten=False)).to_pylist()
            if a["partition"]["dt"] == "2024-01-01"][0]
    DeltaTable(str(b)).delete("dt = '2024-01-01'")
    handle = DeltaTable(str(b))
    table = DeltaTable(str(b))
    table.create_write_transaction([AddAction(back["path"], back["size_bytes"], back["partition"], back["modification_time"],
                                              True, '{"numRecords":1}')], mode="append", schema=table.schema(), partition_by=["dt"])
    write_deltalake(handle, ROWS, mode="overwrite", partition_by=["dt"])
    iceberg_meta = "warehouse/orders/metadata/v3.metadata.json"
    hudi_instant = "warehouse/trips/.hoodie/20240301100005123.commit"
    hdfs_log, commit3 = "/warehouse/orders/_delta_log", "00000000000000000003.json"
    tmp_a, tmp_b = (f".{commit3}.{u}.tmp" for u in ("3f2c1d4e-0000-4000-8000-000000000001", "9a8b7c6d-0000-4000-8000-000000000002"))
    dump("table_lost_commit", "CS204", "table-lost-commit", [
        {"name": "version 1 is absent between versions 0 and 2", "files": log_files(t, drop=(1,)),
         "expect": [{"summary": "version 1 is missing from the log", "detail": {"how": "gap"}}]},
        {"name": "a full overwrite through a stale handle leaves a concurrent append live, a later DELETE removes one of its files",
         "files": log_files(s), "expect": [{"partition": f"dt={d}", "summary": f"full overwrite at version 2 left 1 file live in dt={d} that version 1 added",
                                             "detail": {"how": "stale overwrite"}} for d in ("2024-01-01", "2024-01-02")]},
        {"name": "a file deleted, then added back while a stale handle's full overwrite ran: left live",
         "files": log_files(b), "expect": [{"partition": "dt=2024-01-01", "summary": "full overwrite at version 3 left 1 file live in dt=2024-01-01 that version 2 added",
                                            "detail": {"how": "stale overwrite"}}]},
        {"name": "negative - a full overwrite that removes every file", "files": log_files(w), "expect": []},
        {"name": "negative - a DELETE, then a full overwrite that removes every file still live", "files": log_files(d), "expect": []},
        {"name": "negative - an overwrite of one partition by predicate", "files": log_files(q), "expect": []},
        {"name": "negative - Spark's dynamic partition overwrite of one partition", "expect": [],
         "files": spark_write(log_files(q), 1, isDynamicPartitionOverwrite="true")},
        {"name": "negative - Spark's INSERT REPLACE ON of one partition", "expect": [],
         "files": spark_write(log_files(q), 1, replaceOnCond="t.dt = s.dt")},
        {"name": "negative - Spark's INSERT REPLACE USING of one partition", "expect": [],
         "files": spark_write(log_files(q), 1, replaceUsingCols="(dt)")},
        {"name": "Spark's full overwrite (mode Overwrite, no condition) through a stale snapshot",
         "files": spark_write(log_files(s), 2),
         "expect": [{"partition": f"dt={d}", "detail": {"how": "stale overwrite"}} for d in ("2024-01-01", "2024-01-02")]},
        {"name": "negative - two tables: a full overwrite of one, appends to the other", "expect": [],
         "files": {**log_files(two / "a", prefix="a/"), **log_files(two / "b", prefix="b/")}},
        {"name": "the DELETE before a full overwrite is lost: the gap only, no overwrite judged on what the log no longer holds",
         "files": log_files(d, drop=(1,)), "expect": [{"summary": "version 1 is missing from the log", "detail": {"how": "gap"}}]},
        {"name": "negative - every version present", "files": log_files(t), "expect": []},
        {"name": "two writers PUT one commit file on S3 (no put-if-absent): the S3 access log",
         "files": {"s3-access.log": s3_put("etl", "7QW1Z2X3C4V5B6N7", "10:00:05") + s3_put("backfill", "8AB2C3D4E5F6G7H8", "10:00:06")},
         "expect": [{"summary": "00000000000000000003.json of s3a://lake/warehouse/orders was written twice",
                     "actors": ["arn:aws:iam::123456789012:role/backfill from 10.0.0.21",
                                "arn:aws:iam::123456789012:role/etl from 10.0.0.21"],
                     "detail": {"how": "written twice"}}]},
        # Iceberg's Hadoop catalog commits by renaming its temp metadata file to vN.metadata.json:
        # on S3A a rename is a COPY, with no check that the target is absent (apache/iceberg#970)
        {"name": "two writers' Hadoop-catalog commits both COPY onto one Iceberg vN.metadata.json: the S3 access log",
         "files": {"s3-access.log": s3_put("etl", "7QW1Z2X3C4V5B6N7", "10:00:05", iceberg_meta, "REST.COPY.OBJECT", "Hadoop 3.3.6, aws-sdk-java/1.12.367")
                   + s3_put("backfill", "8AB2C3D4E5F6G7H8", "10:00:06", iceberg_meta, "REST.COPY.OBJECT", "Hadoop 3.3.6, aws-sdk-java/1.12.367")},
         "expect": [{"summary": "v3.metadata.json of s3a://lake/warehouse/orders was written twice", "detail": {"how": "written twice"}}]},
        {"name": "two Hudi writers without a lock provider both complete one instant: the S3 access log",
         "files": {"s3-access.log": s3_put("etl", "7QW1Z2X3C4V5B6N7", "10:00:05", hudi_instant, agent="Hadoop 3.3.6, aws-sdk-java/1.12.367")
                   + s3_put("backfill", "8AB2C3D4E5F6G7H8", "10:00:06", hudi_instant, agent="Hadoop 3.3.6, aws-sdk-java/1.12.367")},
         "expect": [{"summary": "20240301100005123.commit of s3a://lake/warehouse/trips was written twice", "detail": {"how": "written twice"}}]},
        # Delta's HDFSLogStore writes a temp file, then renames it onto N.json: HDFS refuses the
        # rename while N.json exists, so a second writer's rename succeeds only once the first
        # commit file is gone (deleted by hand or by a cleanup): the second commit replaced it
        {"name": "two writers' renames onto one Delta commit file on HDFS, the first one's deleted between them: the NameNode audit log",
         "files": {"hdfs-audit.log": hdfs_audit(1, "create", f"{hdfs_log}/{tmp_a}") + hdfs_audit(2, "rename", f"{hdfs_log}/{tmp_a}", f"{hdfs_log}/{commit3}")
                   + hdfs_audit(3, "create", f"{hdfs_log}/{tmp_b}", ugi="backfill (auth:SIMPLE)", ip="10.0.0.35")
                   + hdfs_audit(4, "delete", f"{hdfs_log}/{commit3}", ugi="jdoe (auth:SIMPLE)", ip="10.20.9.44")
                   + hdfs_audit(5, "rename", f"{hdfs_log}/{tmp_b}", f"{hdfs_log}/{commit3}", ugi="backfill (auth:SIMPLE)", ip="10.0.0.35")},
         "expect": [{"summary": f"{commit3} of /warehouse/orders was written twice",
                     "actors": ["backfill from 10.0.0.35", "etl from 10.0.0.21"], "detail": {"how": "written twice"}}]},
        {"name": "negative - the second writer's rename onto the existing commit file refused (allowed=false, perm=null): written once",
         "files": {"hdfs-audit.log": hdfs_audit(1, "create", f"{hdfs_log}/{tmp_a}") + hdfs_audit(2, "rename", f"{hdfs_log}/{tmp_a}", f"{hdfs_log}/{commit3}")
                   + hdfs_audit(3, "create", f"{hdfs_log}/{tmp_b}", ugi="backfill (auth:SIMPLE)", ip="10.0.0.35")
                   + hdfs_audit(5, "rename", f"{hdfs_log}/{tmp_b}", f"{hdfs_log}/{commit3}", ugi="backfill (auth:SIMPLE)", ip="10.0.0.35",
                                allowed=False, perm=None)},
         "expect": []},
        {"name": "negative - one PUT of each commit file", "files": {"s3-access.log": s3_put("etl", "7QW1Z2X3C4V5B6N7", "10:00:05")},
         "expect": []},
    ])

    # CS205: one txn (appId, version) on two commits
    t = work / "replay"
    n = work / "idempotent"
    for table_dir, versions in ((t, (1, 2, 2)), (n, (1, 2, 3))):
        for v in versions:
            write_deltalake(str(table_dir), ROWS, mode="append", partition_by=["dt"],
                            commit_properties=CommitProperties(app_transactions=[Transaction("query-7", v)]))
    dump("table_replayed_batch", "CS205", "table-replayed-batch", [
        {"name": "a streaming batch's txn committed twice", "files": log_files(t),
         "expect": [{"summary": "versions 1 and 2 of", "actors": ["query-7"],
                     "detail": {"stamp": ["query-7", "2"]}}]},
        {"name": "negative - each batch's txn once", "files": log_files(n), "expect": []},
    ] + STATED_STAMPS)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        main(Path(tmp))
    sys.exit(0)
