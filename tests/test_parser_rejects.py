"""A record without a field its format always writes, or with one of another type, is a counted
reject with a reason (and its first line), never a crash and never an event with the value made
up or written as the text "None". Each case is built from the published format with one field
taken away, beside its twin with the field present, which gives its event.

Formats and their sources: MapReduce job history (Hadoop's ``Events.avpr``: JobSubmitted,
JobFinished, JobUnsuccessfulCompletion have ``jobid``, the attempt records ``attemptId``, each its
``long`` time); Spark event logs (``JsonProtocol``: ``Job ID``, ``Stage Info``/``Stage ID``,
``Stage ID`` and ``Task Info``/``Task ID``/``Index`` of a task, ``executionId``); the HDFS audit log
(DefaultAuditLogger: ``allowed= ugi= ip= cmd= src= dst= perm= proto=`` after the log4j head); S3
server access logs (AWS's field list: ``owner bucket [time] … operation key …``); the metastore
audit (``ugi=… ip=… cmd=<call> : db=… tbl=…``).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from commitsleuth.ingest.readers import BlockReader, open_lines
from commitsleuth.parsers import ParseStats, SourceContext, get_format, parse_lines
from test_spark_event_types import JOB_END, JOB_START, REAL, STAGE_COMPLETED, STAGE_SUBMITTED, TASK_END, \
    TASK_START, _changed, _store_of

T = "\t"
NS = "org.apache.hadoop.mapreduce.jobhistory."


def parse(fmt: str, lines: list[str]):
    stats = ParseStats()
    events = list(parse_lines(get_format(fmt), [(i, 0, t) for i, t in enumerate(lines, 1)], SourceContext("x"), stats))
    return events, stats


def rejects(stats: ParseStats) -> dict:
    return {reason: (count, first) for reason, (count, first, _) in stats.rejects.items()}


# -- MapReduce job history ------------------------------------------------------------------------

# One record of each type the parser reads, with Events.avpr's fields (Hadoop 2.4+ unions for
# locality, avataar, diagnostics), as JobHistoryEventHandler writes them in Avro JSON.
JOB = "job_1526555215992_0001"
ATT = "attempt_1526555215992_0001_m_000000_0"
RECORDS = {
    "JOB_SUBMITTED": ("JobSubmitted", {
        "jobid": JOB, "jobName": "QuasiMonteCarlo", "userName": "user", "submitTime": 1526555642677,
        "jobConfPath": "hdfs://nn/job.xml", "acls": {}, "jobQueueName": "default"}),
    "MAP_ATTEMPT_STARTED": ("TaskAttemptStarted", {
        "taskid": "task_1526555215992_0001_m_000000", "taskType": "MAP", "attemptId": ATT,
        "startTime": 1526555651139, "trackerName": "172.23.244.182", "httpPort": 8042, "shufflePort": 13562,
        "containerId": "container_1526555215992_0001_01_000002", "locality": {"string": "NODE_LOCAL"},
        "avataar": {"string": "VIRGIN"}}),
    "MAP_ATTEMPT_FINISHED": ("MapAttemptFinished", {
        "taskid": "task_1526555215992_0001_m_000000", "attemptId": ATT, "taskType": "MAP",
        "taskStatus": "SUCCEEDED", "mapFinishTime": 1526555653200, "finishTime": 1526555653236,
        "hostname": "172.23.244.182", "port": 54690, "rackname": "/default-rack", "state": "map",
        "counters": None, "clockSplits": [], "cpuUsages": [], "vMemKbytes": [], "physMemKbytes": []}),
    "MAP_ATTEMPT_KILLED": ("TaskAttemptUnsuccessfulCompletion", {
        "taskid": "task_1526555215992_0001_m_000000", "taskType": "MAP", "attemptId": ATT,
        "finishTime": 1526555653300, "hostname": "172.23.244.183", "port": 54690, "rackname": "/default-rack",
        "status": "KILLED", "error": "", "clockSplits": [], "cpuUsages": [], "vMemKbytes": [], "physMemKbytes": []}),
    "JOB_FINISHED": ("JobFinished", {
        "jobid": JOB, "finishTime": 1526555658299, "finishedMaps": 1, "finishedReduces": 1, "failedMaps": 0,
        "failedReduces": 0, "totalCounters": None, "mapCounters": None, "reduceCounters": None}),
    "JOB_FAILED": ("JobUnsuccessfulCompletion", {
        "jobid": JOB, "finishTime": 1526555658299, "finishedMaps": 1, "finishedReduces": 0, "jobStatus": "FAILED",
        "diagnostics": {"string": "Task failed task_1526555215992_0001_r_000000"}}),
    "JOB_KILLED": ("JobUnsuccessfulCompletion", {
        "jobid": JOB, "finishTime": 1526555658299, "finishedMaps": 0, "finishedReduces": 0, "jobStatus": "KILLED"}),
}
KEY = {"JOB_SUBMITTED": "jobid", "JOB_FINISHED": "jobid", "JOB_FAILED": "jobid", "JOB_KILLED": "jobid",
       "MAP_ATTEMPT_STARTED": "attemptId", "MAP_ATTEMPT_FINISHED": "attemptId", "MAP_ATTEMPT_KILLED": "attemptId"}
TIME = {"JOB_SUBMITTED": "submitTime", "MAP_ATTEMPT_STARTED": "startTime"}


def jhist(kind: str, drop: str | None = None, **values) -> str:
    name, fields = RECORDS[kind]
    fields = {k: v for k, v in {**fields, **values}.items() if k != drop}
    return json.dumps({"type": kind, "event": {NS + name: fields}}, separators=(",", ":"))


@pytest.mark.parametrize("kind", sorted(RECORDS))
def test_job_history_record_without_its_key_or_time_is_rejected_its_twin_read(kind):
    key, time = KEY[kind], TIME.get(kind, "finishTime")
    lines = ["Avro-Json", jhist(kind), jhist(kind, drop=key), jhist(kind, **{key: None}),
             jhist(kind, drop=time), jhist(kind, **{key: 7}), jhist(kind, **{time: "1526555658299"}),
             jhist(kind, **{time: 10 ** 17}), jhist(kind)]
    events, stats = parse("mr-jobhistory", lines)
    assert rejects(stats) == {
        f"job-history {kind} without {key}": (2, 3),
        f"job-history {kind} without {time}": (1, 5),
        f"job-history {kind} with {key} not text": (1, 6),
        f"job-history {kind} with {time} not a whole number": (1, 7),
        f"job-history {kind} with {time} not a time in epoch milliseconds": (1, 8),
    }
    assert [e.line_no for e in events] == [2, 9]  # the twins, the one after the rejects too
    assert all((e.job_id if key == "jobid" else e.attempt_id) for e in events)
    assert all(isinstance(e.ts, dt.datetime) for e in events)


def test_job_history_statuses_of_another_type_and_a_record_that_is_no_object_are_rejected():
    lines = [jhist("JOB_FAILED", jobStatus=5), jhist("MAP_ATTEMPT_KILLED", status=["KILLED"]),
             json.dumps({"type": "JOB_FINISHED", "event": {NS + "JobFinished": 5}}),
             json.dumps({"type": ["JOB_FINISHED"], "event": {}}),
             jhist("JOB_FAILED"), jhist("MAP_ATTEMPT_KILLED")]
    events, stats = parse("mr-jobhistory", lines)
    assert rejects(stats) == {"job-history JOB_FAILED with jobStatus not text": (1, 1),
                              "job-history MAP_ATTEMPT_KILLED with status not text": (1, 2),
                              "job-history JOB_FINISHED without its record": (1, 3),
                              "not a job-history event": (1, 4)}
    assert [(e.kind, e.status) for e in events] == [("job_end", "failed"), ("attempt_end", "killed")]


# -- Spark event logs -------------------------------------------------------------------------------

def _without(line: str, path: tuple) -> str:
    event = json.loads(line)
    node = event
    for key in path[:-1]:
        node = node[key]
    node.pop(path[-1], None)  # Partition ID: Spark 3.4+ only
    return json.dumps(event, separators=(",", ":"))


def _sql(event: str, **fields) -> str:
    return json.dumps({"Event": f"org.apache.spark.sql.execution.ui.SparkListenerSQLExecution{event}", **fields})


def _missing(real: list[str]) -> list[tuple[str, str]]:
    task, end = real[TASK_START], real[TASK_END]
    return [
        (_without(real[JOB_START], ("Job ID",)), "SparkListenerJobStart without Job ID"),
        (_without(real[JOB_END], ("Job ID",)), "SparkListenerJobEnd without Job ID"),
        (json.dumps({**json.loads(real[JOB_END]), "Job ID": None}), "SparkListenerJobEnd without Job ID"),
        (_without(real[STAGE_SUBMITTED], ("Stage Info", "Stage ID")), "SparkListenerStageSubmitted without Stage ID"),
        (_without(real[STAGE_COMPLETED], ("Stage Info", "Stage ID")), "SparkListenerStageCompleted without Stage ID"),
        (_without(real[STAGE_COMPLETED], ("Stage Info",)), "SparkListenerStageCompleted without Stage ID"),
        (_without(task, ("Stage ID",)), "SparkListenerTaskStart without Stage ID"),
        (_without(task, ("Task Info", "Task ID")), "SparkListenerTaskStart without Task ID"),
        (_without(_without(task, ("Task Info", "Index")), ("Task Info", "Partition ID")),
         "SparkListenerTaskStart without Task Info.Index"),
        (_without(end, ("Task Info",)), "SparkListenerTaskEnd without Task Info.Index"),
        (_without(end, ("Task End Reason",)), "SparkListenerTaskEnd without Task End Reason"),
        (_without(end, ("Task End Reason", "Reason")), "SparkListenerTaskEnd without Task End Reason"),
        (json.dumps({**json.loads(end), "Task End Reason": None}), "SparkListenerTaskEnd without Task End Reason"),
        (_sql("Start", time=1628638090004, description="x", physicalPlanDescription="", sparkPlanInfo={}),
         "SparkListenerSQLExecutionStart without executionId"),
        (_sql("End", time=1628638090005, executionId=None), "SparkListenerSQLExecutionEnd without executionId"),
    ]


@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "decoder"])
def test_spark_events_without_their_id_are_rejected_and_never_stored_as_none(tmp_path, corpus, monkeypatch, fast):
    """The real log's own lines, one id taken away each, amid the log: each is a reject naming the
    event and the field; every other line gives the events it gives alone; no id reads "None"."""
    real = (corpus / REAL).read_text().splitlines()
    missing = _missing(real)
    odd = [line for line, _ in missing]
    after = 27
    lines = real[:after] + odd + real[after:]
    original, alone = _store_of(tmp_path, "original", real, fast, monkeypatch)
    store, result = _store_of(tmp_path, "odd", lines, fast, monkeypatch)
    try:
        assert (alone.rejected, result.status) == (0, "ok")
        assert (result.rejected, result.events) == (len(missing), alone.events)
        want: dict = {}
        for n, (_, reason) in enumerate(missing):
            count, first = want.get(reason, (0, after + n + 1))
            want[reason] = (count + 1, first)
        assert {r: (c, f) for r, c, f in store.query("select reason, count, first_line from rejects")[1]} == want
        cols = "kind, ts, job_id, query_id, stage_id, task_id, attempt_id, status, detail"
        assert store.query(f"select {cols} from events order by event_id")[1] == \
            original.query(f"select {cols} from events order by event_id")[1]
        assert store.query("select count(*) from events where 'None' in (job_id, query_id, task_id) "
                           "or attempt_id like '%None%'")[1] == [(0,)]
    finally:
        store.close()
        original.close()


@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "decoder"])
def test_a_task_without_its_attempts_takes_sparks_defaults(tmp_path, corpus, monkeypatch, fast):
    """JsonProtocol reads a task's absent or null ``Attempt`` as 1 and ``Stage Attempt ID`` as 0
    (taskInfoFromJson, taskStartFromJson, taskEndFromJson: ``jsonOption(...).getOrElse``), a
    stage's ``Stage Attempt ID`` as 0 (stageInfoFromJson), so both paths store those; the twins
    with the fields written keep their own values."""
    real = (corpus / REAL).read_text().splitlines()
    task, end = real[TASK_START], real[TASK_END]
    cases = [  # (line, attempt_no, stage_attempt)
        (_without(task, ("Task Info", "Attempt")), 1, 0),
        (_changed(task, ("Task Info", "Attempt"), None), 1, 0),
        (_changed(task, ("Task Info", "Attempt"), 0), 0, 0),
        (_changed(task, ("Task Info", "Attempt"), 2), 2, 0),
        (_without(end, ("Task Info", "Attempt")), 1, 0),
        (_changed(_changed(end, ("Task Info", "Attempt"), 3), ("Stage Attempt ID",), 1), 3, 1),
        (_without(task, ("Stage Attempt ID",)), json.loads(task)["Task Info"]["Attempt"], 0),
        (_changed(end, ("Stage Attempt ID",), None), json.loads(end)["Task Info"]["Attempt"], 0),
        (_without(real[STAGE_SUBMITTED], ("Stage Info", "Stage Attempt ID")), None, 0),  # stageInfoFromJson
        (_changed(real[STAGE_COMPLETED], ("Stage Info", "Stage Attempt ID"), None), None, 0),
        (_changed(real[STAGE_COMPLETED], ("Stage Info", "Stage Attempt ID"), 2), None, 2),
    ]
    store, result = _store_of(tmp_path, "attempts", real[:TASK_START] + [line for line, _, _ in cases],
                              fast, monkeypatch)
    try:
        assert result.rejected == 0
        first = TASK_START + 1
        rows = store.query(f"select line_no, attempt_no, stage_attempt, attempt_id from events "
                           f"where line_no >= {first} order by line_no")[1]
        assert [(n, a, s) for n, a, s, _ in rows] == [(first + i, a, s) for i, (_, a, s) in enumerate(cases)]
        for (_, attempt, stage_attempt, label), (line, _, _) in zip(rows, cases):
            info = json.loads(line)
            if "Task Info" not in info:
                assert label is None
                continue
            assert label == (f"task {info['Task Info']['Index']}.{attempt} in stage {info['Stage ID']}."
                             f"{stage_attempt} (TID {info['Task Info']['Task ID']})")
    finally:
        store.close()


def test_spark_sql_execution_ids_and_a_null_conf_value_are_stored_as_given():
    """The twins: an SQL execution with its id (and a null rootExecutionId, Spark 3.4+'s optional
    field) is stored under its own id; a commit setting written null is stored null, not "None"."""
    from commitsleuth.parsers.spark_events import SparkEventDecoder

    decoder = SparkEventDecoder(app_id="app-1")
    start = json.loads(_sql("Start", executionId=4, rootExecutionId=None, time=1628638090004, description="x",
                            physicalPlanDescription="", sparkPlanInfo={}))
    end = json.loads(_sql("End", executionId=4, time=1628638090005))
    env = {"Event": "SparkListenerEnvironmentUpdate",
           "Spark Properties": [["spark.speculation", None], ["spark.sql.sources.partitionOverwriteMode", "dynamic"]]}
    out = decoder.decode(env) + decoder.decode(
        {"Event": "SparkListenerApplicationStart", "App Name": "a", "App ID": "app-1", "Timestamp": 1628638090000})
    out += decoder.decode(start) + decoder.decode(end)
    assert [(e.kind, e.query_id, (e.detail or {}).get("value", "-")) for e in out] == [
        ("conf", None, None), ("conf", None, "dynamic"), ("app_start", None, "-"),
        ("query_start", "4", "-"), ("query_end", "4", "-")]


# -- Storage audit logs and the metastore audit ---------------------------------------------------

def hdfs(cmd="create", src="/w/t/dt=1/part-0", dst="null", ugi="etl (auth:SIMPLE)", ts="2023-03-01 10:00:05,120",
         allowed="true", drop: str | None = None):
    fields = [("allowed", allowed), ("ugi", ugi), ("ip", "/10.0.0.21"), ("cmd", cmd), ("src", src), ("dst", dst),
              ("perm", "etl:supergroup:rw-r--r--"), ("proto", "rpc")]
    return f"{ts} INFO FSNamesystem.audit: " + T.join(f"{k}={v}" for k, v in fields if k != drop)


def s3(op="REST.PUT.OBJECT", key="w/t/dt%3D1/part-0", bucket="lake", when="[01/Mar/2023:10:00:05 +0000]"):
    return (f"b1e2c3d4 {bucket} {when} 10.0.0.21 arn:aws:iam::1:role/etl 7QW1Z2X3 {op} {key} "
            f'"PUT /{key} HTTP/1.1" 200 - - 10 41 38 "-" "Hadoop 3.3.4" - HOSTID= SigV4 '
            "ECDHE-RSA-AES128-GCM-SHA256 AuthHeader lake.s3.eu-west-1.amazonaws.com TLSv1.2 - -")


HDFS_CASES = [  # (line, reason or None for the twin that gives its event)
    (hdfs(), None),
    (hdfs(ts="2023-03-01 10:00:05"), None),  # %d{ISO8601} without milliseconds: a time all the same
    (hdfs(drop="ugi"), "hdfs-audit: no ugi"),
    (hdfs(cmd="open", drop="ugi"), "hdfs-audit: no ugi"),
    (hdfs(ts="2023-03-01 1x:00:05,120"), "hdfs-audit: no time"),
    (hdfs(cmd="open", ts="2023-03-01 10:00"), "hdfs-audit: no time"),
    (hdfs(drop="src"), "hdfs-audit: create without src"),
    (hdfs(cmd="delete", src="null"), "hdfs-audit: delete without src"),
    (hdfs(cmd="mkdirs", drop="src"), "hdfs-audit: mkdirs without src"),
    (hdfs(cmd="rename", dst="null"), "hdfs-audit: rename without dst"),
    (hdfs(cmd="rename", drop="dst"), "hdfs-audit: rename without dst"),
    (hdfs(cmd="rename", dst="/w/t/dt=1/part-1"), None),
    (hdfs(cmd="rename", dst="null", allowed="false"), None),  # a refused call: context, kept
    (hdfs(cmd="setPermission", drop="src"), "hdfs-audit: setPermission without src"),
    (hdfs(cmd="setPermission", src="null"), None),  # src=null: a call without a path, as written
    (hdfs(cmd="open"), None),
]
S3_CASES = [
    (s3(), None),
    (s3(key="-"), "s3-access: REST.PUT.OBJECT without key"),
    (s3(op="REST.DELETE.OBJECT", key="-"), "s3-access: REST.DELETE.OBJECT without key"),
    (s3(op="REST.POST.MULTI_OBJECT_DELETE", key="-"), None),  # a request on the bucket: no key
    (s3(bucket="-"), "s3-access: record without bucket"),
    (s3(op="REST.GET.OBJECT", bucket="-"), "s3-access: record without bucket"),
    (s3(when="[01/Foo/2023:10:00:05 +0000]"), "s3-access: record without time"),
    (s3(op="REST.GET.OBJECT", when="[01/Foo/2023:10:00:05 +0000]"), "s3-access: record without time"),
    (s3(op="REST.GET.OBJECT"), None),
]


@pytest.mark.parametrize("fmt,cases", [("hdfs-audit", HDFS_CASES), ("s3-access", S3_CASES)], ids=["hdfs", "s3"])
def test_storage_records_without_a_required_field_are_rejected_by_both_parses(tmp_path, fmt, cases):
    """Each line alone: a reject with its reason or the twin's event, never an event without its
    path, principal or time; and the block scan (reads counted by one pattern) agrees."""
    for line, reason in cases:
        events, stats = parse(fmt, [line])
        assert rejects(stats) == ({reason: (1, 1)} if reason else {}), line
        assert len(events) == (0 if reason else 1), line
        assert all(e.ts is not None and (e.path or e.kind in ("fs_reads", "fs_context")) for e in events), line
    lines = [line for line, _ in cases] * 3
    path = tmp_path / f"{fmt}.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    f = get_format(fmt)
    s1, s2 = ParseStats(), ParseStats()
    a = list(parse_lines(f, open_lines(Path(path), 0, 1, None), SourceContext("x"), s1))
    scan = f.scanner(f, SourceContext("x"), s2, 1)
    b = [ev for offset, data in BlockReader(Path(path), block=700) for ev in scan.feed(offset, data)]
    b.extend(scan.close())

    def facts(events):
        return sorted((e.line_no, e.kind, e.path, e.size, e.ts, str(e.detail)) for e in events)

    assert facts(a) == facts(b)
    assert (s1.records, s1.events, s1.rejects) == (s2.records, s2.events, s2.rejects)
    assert s1.rejected == 3 * sum(1 for _, reason in cases if reason)


HMS = ("2018-09-28 10:15:02,448 INFO  [pool-7-thread-121]: HiveMetaStore.audit "
       "(HiveMetaStore.java:logAuditEvent(309)) - ")


@pytest.mark.parametrize("line,reason", [
    (HMS + "ugi=hive\tip=10.1.2.3\tcmd=add_partition : db=db tbl=t[2018-09-28]\t", None),
    (HMS + "ugi=hive\tip=10.1.2.3\tcmd=add_partition : db=db\t", "metastore add_partition without tbl"),
    (HMS + "ugi=hive\tip=10.1.2.3\tcmd=source:10.1.2.4 drop_partition : \t", "metastore drop_partition without tbl"),
    (HMS + "ugi=hive\tip=10.1.2.3\tcmd=get_table : db=db\t", None),  # no partition call: no event, no reject
    (HMS + "ip=10.1.2.3\tcmd=add_partition : db=db tbl=t[2018-09-28]\t", "keyword line not understood"),
    (HMS + "ugi=hive\tcmd=add_partition : db=db tbl=t[2018-09-28]\t", "keyword line not understood"),
])
def test_metastore_audit_partition_call_without_its_table_is_rejected(line, reason):
    events, stats = parse("hive-metastore-audit", [line])
    assert rejects(stats) == ({reason: (1, 1)} if reason else {})
    if reason is None and "add_partition" in line:
        assert [(e.kind, e.table_name) for e in events] == [("partition_add", "db.t")]
    elif reason is not None:
        assert events == []
