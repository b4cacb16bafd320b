"""Each evidence source's records, written from the source code that writes them.

Not copied from the repository's fixtures. The exact source strings used:

- log4j heads: Hive 2.x-4.x log4j2 ``%d{ISO8601} %5p [%t] %c{2}: %m%n`` (hive-log4j2.properties);
  Hive 1.x log4j1 ``%d{ISO8601} %-5p [%t]: %c{2} (%F:%M(%L)) - %m%n`` (hive-log4j.properties);
  MR2 task syslog ``%d{ISO8601} %p [%t] %c: %m%n`` (container-log4j.properties), MR1 without
  ``[%t]``.
- Hive messages: Driver ``Compiling command(queryId=…)``, ``Executing command(queryId=…)``,
  ``Completed executing command(queryId=…); Time taken: …``, ``Starting command(queryId=…): …``
  (Hive 2+) and ``Starting command: …`` (Hive 0.x); MoveTask ``Loading data to table %s partition (%s)
  from %s``; Hive.loadPartition ``New loading path = %s with partSpec %s``; FileUtils.mkdir
  ``Creating directory if it doesn't exist: %s``; FileUtils.moveToTrash / Trash ``Moved to trash:
  %s``; RCFileMergeMapper ``renamed path %s to %s . File size is %d`` (task stdout, no head);
  JDO ``Duplicate entry '%s' for key 'UNIQUEPARTITION'``; ``AlreadyExistsException``.
- Metastore audit (HiveMetaStore.logAuditEvent): ``ugi=%s\\tip=%s\\tcmd=%s\\t``; the call as
  startFunction logs it, ``source:<addr> `` first: Hive 3 startPartitionFunction
  ``get_partition_with_auth : tbl=<cat>.<db>.<t>[v]`` and startTableFunction ``add_partition : tbl=…``;
  Hive 2.x ``get_partition : db=<db> tbl=<t>[v]`` and ``add_partition : db=<db> tbl=<t>``.
- HDFS audit (FSNamesystem / DefaultAuditLogger.logAuditEvent): ``allowed=%s\\tugi=%s\\tip=%s\\tcmd=%s\\t
  src=%s\\tdst=%s\\tperm=%s\\tproto=%s[\\tcallerContext=%s]``; Hadoop 3 trash move ``cmd=rename
  (options=[TO_TRASH])``; ugi ``user (auth:PROXY) via real (auth:KERBEROS)``.
- Caller contexts: Spark Utils.CallerContext ``SPARK_TASK_<appId>_JId_<j>_SId_<s>_<sa>_TId_<tid>_<attempt>``,
  Hive ``hive_queryId_<queryId>``.
- S3 server access log fields (AWS user guide, "Amazon S3 server access log format"):
  ``owner bucket [time] ip requester request-id operation key "request-uri" status error
  bytes-sent object-size total-ms turnaround-ms "referer" "user-agent" version-id host-id sigv
  cipher auth-type host-header tls access-point-arn acl-required``; S3A HttpReferrerAuditHeader
  ``https://audit.example.org/hadoop/1/<op>/<span>/?op=…&p1=…&pr=…&ps=…&id=…&t0=…&ts=…&ji=…&ta=…``.
- Hadoop FileOutputCommitter ``Saved output of task '%s' to %s``; Task ``Task %s is allowed to
  commit now``; TaskAttemptImpl ``%s TaskAttempt Transitioned from %s to %s``.
- Spark JsonProtocol (event-log JSON, the same the live listener spools): SparkListenerTaskStart /
  TaskEnd with ``Task Info`` {Task ID, Index, Attempt, Partition ID, Launch Time, Executor ID, Host,
  Locality, Speculative, Getting Result Time, Finish Time, Failed, Killed, Accumulables},
  ``Task End Reason`` {Reason: Success | TaskKilled + Kill Reason}, ``Task Metrics`` Output Metrics
  {Bytes Written, Records Written}; SparkListenerJobStart {Job ID, Submission Time, Stage IDs,
  Properties {spark.sql.execution.id}}; SQLExecutionStart {executionId, description,
  physicalPlanDescription, time}; Spark FileFormatWriter file names ``part-%05d-<jobUUID>.c%03d``.
"""

from __future__ import annotations

import datetime as dt
import json
from urllib.parse import quote

T0 = dt.datetime(2024, 5, 19, 10, 0, 0)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def iso(t: dt.datetime, sep: str = " ") -> str:
    """%d{ISO8601}: ``2024-05-19 10:00:00,000`` (log4j2 may write a ``T``)."""
    return t.strftime(f"%Y-%m-%d{sep}%H:%M:%S,") + f"{t.microsecond // 1000:03d}"


def ms(t: dt.datetime) -> int:
    return int(t.replace(tzinfo=dt.timezone.utc).timestamp() * 1000)


# --- Hive / HiveServer2 ---------------------------------------------------------------------

def hive(head: str, t: dt.datetime, thread: str, logger: str, msg: str, level: str = "INFO",
         where: str = "") -> str:
    """One Hive log line in the ``log4j2`` or ``log4j1`` layout (``where`` is log4j1's %F:%M(%L))."""
    short = ".".join(logger.split(".")[-2:])  # %c{2}
    if head == "log4j2":
        return f"{iso(t, 'T')} {level:>5} [{thread}] {short}: {msg}"
    return f"{iso(t)} {level:<5} [{thread}]: {short} ({where or 'X.java:m(1)'}) - {msg}"


def hms_audit(head: str, t: dt.datetime, ugi: str, ip: str, cmd: str, thread: str = "pool-7-thread-12") -> str:
    """HiveMetaStore.audit: ``ugi=%s\\tip=%s\\tcmd=%s\\t`` (logAuditEvent)."""
    return hive(head, t, thread, "org.apache.hadoop.hive.metastore.HiveMetaStore.audit",
                f"ugi={ugi}\tip={ip}\tcmd={cmd}\t", where="HiveMetaStore.java:logAuditEvent(309)")


# --- MapReduce task syslog ---------------------------------------------------------------------

def mr(t: dt.datetime, logger: str, msg: str, thread: str | None = "main", level: str = "INFO") -> str:
    """MR2 container syslog ``%d{ISO8601} %p [%t] %c: %m``; MR1 (``thread=None``) without ``[%t]``."""
    return f"{iso(t)} {level} [{thread}] {logger}: {msg}" if thread else f"{iso(t)} {level} {logger}: {msg}"


FOC = "org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter"
TASK = "org.apache.hadoop.mapred.Task"
TAI = "org.apache.hadoop.mapreduce.v2.app.job.impl.TaskAttemptImpl"


# --- HDFS NameNode audit ---------------------------------------------------------------------

def hdfs(t: dt.datetime, ugi: str, ip: str, cmd: str, src: str, dst: str | None = None,
         perm: str | None = None, ctx: str | None = None, head: str = "log4j1") -> str:
    """DefaultAuditLogger.logAuditEvent's tab-separated record after the log4j head."""
    rec = (f"allowed=true\tugi={ugi}\tip=/{ip}\tcmd={cmd}\tsrc={src}\tdst={dst or 'null'}\t"
           f"perm={perm or 'null'}\tproto=rpc")
    if ctx:
        rec += f"\tcallerContext={ctx}"
    logger = "org.apache.hadoop.hdfs.server.namenode.FSNamesystem.audit"
    if head == "log4j2":
        return f"{iso(t)} INFO [IPC Server handler 7 on 8020] {logger}: {rec}"
    return f"{iso(t)} INFO FSNamesystem.audit: {rec}"


def spark_task_ctx(app: str, job: int, stage: int, stage_attempt: int, tid: int, attempt: int) -> str:
    return f"SPARK_TASK_{app}_JId_{job}_SId_{stage}_{stage_attempt}_TId_{tid}_{attempt}"


# --- S3 server access log --------------------------------------------------------------------

def s3(t: dt.datetime, bucket: str, op: str, key: str, *, requester: str, ip: str, request_id: str,
       status: int = 200, size: int | None = None, referer: str | None = None, method: str = "PUT",
       version: str | None = None) -> str:
    """One access log record; keys URL-encoded (``=`` as ``%3D``)."""
    k = quote(key, safe="/") if key != "-" else "-"
    uri = f'"{method} /{bucket}/{k} HTTP/1.1"' if key != "-" else f'"{method} /{bucket}?delete HTTP/1.1"'
    when = t.strftime("[%d/%b/%Y:%H:%M:%S +0000]")
    sz = str(size) if size is not None else "-"
    return (f"79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be {bucket} {when} {ip} "
            f"{requester} {request_id} {op} {k} {uri} {status} - - {sz} 41 12 "
            f'"{referer or "-"}" "Hadoop 3.3.6, aws-sdk-java/1.12.367" {version or "-"} '
            f"HOSTID{request_id}= SigV4 ECDHE-RSA-AES128-GCM-SHA256 AuthHeader {bucket}.s3.eu-west-1.amazonaws.com "
            f"TLSv1.2 - -")


def s3a_referer(op: str, path: str, principal: str, job: str | None = None, attempt: str | None = None,
                span: str = "7f1c2d3e-0001") -> str:
    """HttpReferrerAuditHeader's Referer."""
    q = f"op={op}&p1={path}&pr={principal}&ps=5f9d2c1e-aaaa-4bbb-8ccc-0123456789ab&id={span}&t0=1&ts=1716112800000"
    if job:
        q += f"&ji={job}"
    if attempt:
        q += f"&ta={attempt}"
    return f"https://audit.example.org/hadoop/1/{op}/{span}/?{q}"


# --- Spark JsonProtocol ------------------------------------------------------------------------

def j(event: dict) -> str:
    return json.dumps(event, separators=(",", ":"))


def app_start(app: str, t: dt.datetime, user: str = "etl") -> dict:
    return {"Event": "SparkListenerApplicationStart", "App Name": "matrix", "App ID": app,
            "Timestamp": ms(t), "User": user}


def env(algorithm: int | None) -> dict:
    props = {} if algorithm is None else {"mapreduce.fileoutputcommitter.algorithm.version": str(algorithm)}
    return {"Event": "SparkListenerEnvironmentUpdate", "JVM Information": {}, "Spark Properties": {},
            "Hadoop Properties": props, "System Properties": {}, "Classpath Entries": {}}


def sql_start(execution: int, t: dt.datetime, path: str, parts: list[str], mode: str = "Append") -> dict:
    plan = (f"== Physical Plan ==\nExecute InsertIntoHadoopFsRelationCommand (1)\n\n(1) Execute "
            f"InsertIntoHadoopFsRelationCommand\nArguments: {path}, false, [{', '.join(parts)}], Parquet, "
            f"[path={path}], {mode}, [{', '.join(parts)}]\n")
    return {"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart",
            "executionId": execution, "rootExecutionId": execution, "description": "insert",
            "details": "", "physicalPlanDescription": plan,
            "sparkPlanInfo": {"nodeName": "Execute InsertIntoHadoopFsRelationCommand", "simpleString": "",
                              "children": [], "metadata": {}, "metrics": []},
            "time": ms(t), "modifiedConfigs": {}}


def sql_end(execution: int, t: dt.datetime, error: str | None = None) -> dict:
    e = {"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd", "executionId": execution,
         "time": ms(t)}
    if error:
        e["errorMessage"] = error
    return e


def job_start(job: int, t: dt.datetime, stages: list[int], execution: int | None) -> dict:
    props = {} if execution is None else {"spark.sql.execution.id": str(execution)}
    return {"Event": "SparkListenerJobStart", "Job ID": job, "Submission Time": ms(t),
            "Stage Infos": [], "Stage IDs": stages, "Properties": props}


def job_end(job: int, t: dt.datetime, ok: bool = True) -> dict:
    result = {"Result": "JobSucceeded"} if ok else {
        "Result": "JobFailed", "Exception": {"Message": "Job aborted due to stage failure", "Stack Trace": []}}
    return {"Event": "SparkListenerJobEnd", "Job ID": job, "Completion Time": ms(t), "Job Result": result}


def task_info(tid: int, index: int, attempt: int, launch: dt.datetime, host: str, executor: str,
              speculative: bool, finish: dt.datetime | None = None, failed: bool = False,
              killed: bool = False) -> dict:
    return {"Task ID": tid, "Index": index, "Attempt": attempt, "Partition ID": index,
            "Launch Time": ms(launch), "Executor ID": executor, "Host": host, "Locality": "PROCESS_LOCAL",
            "Speculative": speculative, "Getting Result Time": 0,
            "Finish Time": ms(finish) if finish else 0, "Failed": failed, "Killed": killed,
            "Accumulables": []}


def task_start(stage: int, info: dict, stage_attempt: int = 0) -> dict:
    return {"Event": "SparkListenerTaskStart", "Stage ID": stage, "Stage Attempt ID": stage_attempt,
            "Task Info": info}


def task_end(stage: int, info: dict, reason: str = "Success", bytes_written: int = 0,
             records: int = 0, stage_attempt: int = 0, kill_reason: str | None = None) -> dict:
    end = {"Reason": reason}
    if reason == "TaskKilled":
        end.update({"Kill Reason": kill_reason or "another attempt succeeded", "Accumulator Updates": []})
    return {"Event": "SparkListenerTaskEnd", "Stage ID": stage, "Stage Attempt ID": stage_attempt,
            "Task Type": "ResultTask", "Task End Reason": end, "Task Info": info,
            "Task Executor Metrics": {},
            "Task Metrics": {"Executor Run Time": 100,
                             "Output Metrics": {"Bytes Written": bytes_written, "Records Written": records}}}


def spark_attempt(stage: int, tid: int, index: int, attempt: int, launch: dt.datetime,
                  end: dt.datetime | None, host: str, executor: str, *, speculative: bool = False,
                  reason: str = "Success", bytes_written: int = 1024) -> list[dict]:
    """A task attempt's start and (when ``end``) its end, as JsonProtocol writes them."""
    out = [task_start(stage, task_info(tid, index, attempt, launch, host, executor, speculative))]
    if end is not None:
        info = task_info(tid, index, attempt, launch, host, executor, speculative, finish=end,
                         failed=reason not in ("Success", "TaskKilled"), killed=reason == "TaskKilled")
        out.append(task_end(stage, info, reason, bytes_written if reason == "Success" else 0,
                            10 if reason == "Success" else 0))
    return out
