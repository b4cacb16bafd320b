"""The whole real corpus (tests/corpus), file by file: each is read as the format this table
expects, or skipped quietly as not ours; the logs taken from public repositories (provenance and
licences in tests/corpus/README.md) give their exact facts through the real ingest into a real
DuckDB store."""

from __future__ import annotations

import pytest

from commitsleuth.forensics.analyze import analyze
from commitsleuth.ingest import ingest
from commitsleuth.store import Store

NOT_OURS = "not a log format commitsleuth reads"

# Every source of the corpus (a rolling event-log directory is one) -> the format it is read as;
# None: skipped as not ours (licences, notices, other systems' logs, formats not read).
CORPUS_FORMATS = {
    "README.md": None,
    "dr-elephant.NOTICE": None,
    "dr-elephant/history/job_1526555215992_0001-1526555642677-user-QuasiMonteCarlo-1526555658299-1-1-SUCCEEDED-default-1526555648931.jhist": "mr-jobhistory",
    "dr-elephant/spark_event_logs/event_log_1": "spark-eventlog",
    "eagle.NOTICE": None,
    "eagle/hbase-auditlog/securityAuditLog": None,  # HBase's AccessController audit, not ours
    "eagle/hdfs-auditlog/securityAuditLog": "hdfs-audit",
    "eagle/mr-history/job_1479206441898_508949-1481299030929-testhistory.jhist": "mr-jobhistory",
    "lakehouse.NOTICE": None,
    "lakehouse/hudi-rs/v6_simplekeygen_nonhivestyle_overwritetable.zip": None,  # a table, unzipped by test_lakehouse
    "lakehouse/hudi-rs/v8_simplekeygen_nonhivestyle.zip": None,
    "lakehouse/make_cases.py": None,
    "loghub/HDFS_2k.log": None,
    "loghub/Hadoop_2k.log": "mr2-yarn",
    "loghub/LICENSE": None,
    "loghub/Spark_2k.log": "spark-log",
    "loghub/Zookeeper_2k.log": None,
    "spark-events.NOTICE": None,
    "spark-events/app-20161116163331-0000": "spark-eventlog",
    "spark-events/application_1628109047826_1317105": "spark-eventlog",
    "spark-events/codecs/local-1795296595467.lz4": "spark-eventlog",
    "spark-events/codecs/local-1795296602547.snappy": "spark-eventlog",
    "spark-events/codecs/local-1795296610133.zstd": "spark-eventlog",
    "spark-events/codecs/local-1795296617196.lzf": "spark-eventlog",
    "spark-events/eventlog_v2_local-1766844910796": "spark-eventlog",
    "spark-events/local-1422981780767": "spark-eventlog",
    "spark-rapids-tools.NOTICE": None,
    "spark-rapids-tools/createdatasourcetable_eventlog.zstd": "spark-eventlog",
    "spark-rapids-tools/driverlog": "spark-driver-log",
    "spark-rapids-tools/eventlog_v2_local-1623876083964": "spark-eventlog",
    "spark-rapids-tools/malformed_json_eventlog.zstd": "spark-eventlog",
    "spark-rapids-tools/multiple_attempts/attempt_1_eventlog.zstd": "spark-eventlog",
    "spark-rapids-tools/multiple_attempts/attempt_2_eventlog.zstd": "spark-eventlog",
    "spark-rapids-tools/spark2-eventlog.zstd": "spark-eventlog",
    "spark-rapids-tools/truncated_eventlog": "spark-eventlog",
    "spark-rapids-tools/writeformat_eventlog": "spark-eventlog",
    "sparklens.NOTICE": None,
    "sparklens/local-1532512550423": "spark-eventlog",
    "splitlog.LICENSE": None,
    "splitlog/application_1756057717712_0001/input.txt.gz": "yarn-logs",
    "splitlog/application_1756057717712_0003/input.txt.gz": "yarn-logs",
}


@pytest.fixture(scope="module")
def whole(tmp_path_factory, corpus):
    with Store(tmp_path_factory.mktemp("corpus") / "s.duckdb") as s:
        ingest(s, [str(corpus)])
        yield s


def _rows(store, sql, params=()):
    return store.con.execute(sql, list(params)).fetchall()


def _kinds(store, name):
    return dict(_rows(store, "select e.kind, count(*) from events e join sources s using (source_id) "
                             "where s.uri like ? group by e.kind", [f"%/{name}"]))


def test_every_corpus_file_is_read_as_its_expected_format(whole, corpus):
    rows = _rows(whole, "select uri, format, status, reason, rejected from sources order by uri")
    got = {uri.removeprefix(str(corpus) + "/"): (fmt, status, reason) for uri, fmt, status, reason, _ in rows}
    want = {name: (fmt, "ok", None) if fmt else (None, "skipped", NOT_OURS)
            for name, fmt in CORPUS_FORMATS.items()}
    # the one real log cut before its application end says so (issue 12)
    want["spark-rapids-tools/truncated_eventlog"] = (
        "spark-eventlog", "ok", "application did not end (3 attempts never finished)")
    assert got == want
    # rejected lines only where a log was damaged: on purpose, or by a licence header put on top
    assert [(uri.removeprefix(str(corpus) + "/"), n) for uri, *_, n in rows if n] == [
        ("eagle/mr-history/job_1479206441898_508949-1481299030929-testhistory.jhist", 15),
        ("spark-rapids-tools/malformed_json_eventlog.zstd", 1)]


def test_the_whole_corpus_raises_no_finding(whole):
    """Healthy runs, two attempts of one YARN application, a cut and a damaged log: no alarm."""
    assert [(f.code, f.summary) for f in analyze(whole)] == []


# -- spark-rapids-tools (NVIDIA, Apache-2.0) ----------------------------------------------------

def test_spark_driver_log_layout(whole):
    """spark.driver.log's own layout '%d{yy/MM/dd HH:mm:ss.SSS} %t %p %c{1}: %m%n%ex': the
    scheduler's and the local executor's lines of one Spark 3.3 shell."""
    assert _rows(whole, "select lines, events, rejected from sources where uri like '%/driverlog'") == [
        (298, 113, 0)]
    # 22 "Starting task" (TaskSetManager) + 26 "Running task" (Executor); 33 + 32 "Finished task"
    assert _kinds(whole, "driverlog") == {"attempt_start": 48, "attempt_end": 65}
    import datetime as dt
    ev = "select line_no, ts, thread, attempt_id, task_id, stage_id, e.kind from events e join sources s " \
         "using (source_id) where s.uri like '%/driverlog' order by line_no"
    rows = _rows(whole, ev)
    assert rows[0] == (66, dt.datetime(2023, 11, 7, 11, 0, 24, 144000), "dispatcher-event-loop-25",
                       "task 0.0 in stage 0.0 (TID 0)", "0.0", 0, "attempt_start")
    # the executor's thread name has spaces and parentheses, and is kept whole
    assert rows[-2:] == [
        (291, dt.datetime(2023, 11, 7, 11, 0, 29, 682000),
         "Executor task launch worker for task 0.0 in stage 3.0 (TID 1826)",
         "task 0.0 in stage 3.0 (TID 1826)", "3.0", 3, "attempt_end"),
        (292, dt.datetime(2023, 11, 7, 11, 0, 29, 682000), "task-result-getter-3",
         "task 0.0 in stage 3.0 (TID 1826)", "3.0", 3, "attempt_end"),
    ]


def test_writes_named_by_real_spark_sql_event_logs(whole):
    """Four DataFrame saves (Spark 3.1.1) and a CTAS (saveAsTable) read from their plans."""
    q = "select query_id, location, table_name, detail->'write'->>'command', detail->'write'->>'format', " \
        "detail->'write'->>'mode' from events e join sources s using (source_id) " \
        "where s.uri like ? and e.kind = 'query_start' order by line_no"
    home = "file:///home/user1/spark-3.1.1/spark-3.1.1-bin-hadoop3.2/writeDF."
    assert _rows(whole, q, ["%/writeformat_eventlog"]) == [
        (str(i), home + ext, None, "InsertIntoHadoopFsRelationCommand", fmt, "ErrorIfExists")
        for i, (ext, fmt) in enumerate([("csv", "CSV"), ("parquet", "Parquet"), ("orc", "ORC"), ("json", "JSON")])]
    assert _rows(whole, q, ["%/createdatasourcetable_eventlog.zstd"]) == [
        ("0", None, "default.tmppartable", "CreateDataSourceTableAsSelectCommand", None, "Overwrite")]


def test_two_attempts_of_one_yarn_application(whole):
    """EMR Spark 3.3: one application run twice (attempts 1 and 2), each its own event log."""
    q = "select s.uri, e.app_id, e.detail->>'attempt' from events e join sources s using (source_id) " \
        "where s.uri like '%/multiple_attempts/%' and e.kind = 'app_start' order by s.uri"
    assert [(uri.rsplit("/", 1)[1], app, n) for uri, app, n in _rows(whole, q)] == [
        ("attempt_1_eventlog.zstd", "application_1724877841851_0016", "1"),
        ("attempt_2_eventlog.zstd", "application_1724877841851_0016", "2"),
    ]
    for name in ("attempt_1_eventlog.zstd", "attempt_2_eventlog.zstd"):
        assert _kinds(whole, name) == {
            "app_start": 1, "app_end": 1, "conf": 5, "query_start": 1, "query_end": 1, "job_start": 5,
            "job_end": 5, "stage_start": 5, "stage_end": 5, "attempt_start": 107, "attempt_end": 107}
    # The first attempt's plan names the CTAS target without a database (`final_results`), so no
    # table is claimed; the second's names `default`.`final_results`.
    ctas = "select e.table_name from events e join sources s using (source_id) where s.uri like ? " \
           "and e.kind = 'query_start'"
    assert _rows(whole, ctas, ["%/attempt_1_eventlog.zstd"]) == [(None,)]
    assert _rows(whole, ctas, ["%/attempt_2_eventlog.zstd"]) == [("default.final_results",)]


def test_a_damaged_event_log_keeps_every_other_event(whole):
    """Line 4 (the environment update) is broken JSON: counted in rejects, the rest is read."""
    assert _rows(whole, "select s.lines, s.events, s.rejected, s.status, r.reason, r.count, r.first_line "
                        "from sources s join rejects r using (source_id) where s.uri like '%/malformed_json%'") == [
        (477, 452, 1, "ok", "invalid JSON (a truncated or in-progress event log?)", 1, 4)]
    kinds = _kinds(whole, "malformed_json_eventlog.zstd")
    assert kinds == {"app_start": 1, "app_end": 1, "query_start": 1, "query_end": 1, "job_start": 2,
                     "job_end": 2, "stage_start": 5, "stage_end": 5, "attempt_start": 217, "attempt_end": 217}
    assert "conf" not in kinds  # the Spark properties were on the damaged line


def test_an_event_log_cut_short(whole):
    """No application end; three task attempts started and never ended."""
    assert _kinds(whole, "truncated_eventlog") == {
        "app_start": 1, "conf": 3, "query_start": 2, "query_end": 1, "job_start": 2, "job_end": 1,
        "stage_start": 3, "stage_end": 1, "attempt_start": 24, "attempt_end": 21}
    assert _rows(whole, """
        select attempt_id from events e join sources s using (source_id)
        where s.uri like '%/truncated_eventlog' and e.kind = 'attempt_start'
        except select attempt_id from events where kind = 'attempt_end' and app_id = 'local-1622043423018'
        order by 1""") == [("task 2.0 in stage 2.0 (TID 20)",), ("task 4.0 in stage 1.0 (TID 16)",),
                           ("task 5.0 in stage 1.0 (TID 17)",)]


def test_rolling_event_log_directory_with_zstd_parts(whole):
    """eventlog_v2_local-1623876083964/: two zstd-compressed parts and an empty appstatus marker."""
    assert _rows(whole, "select lines, events, rejected from sources where uri like '%/eventlog_v2_local-1623876083964'") \
        == [(5621, 5619, 0)]
    assert _rows(whole, "select count(distinct app_id), min(app_id), count(distinct attempt_id) from events e "
                        "join sources s using (source_id) where s.uri like '%/eventlog_v2_local-1623876083964'") == [
        (1, "local-1623876083964", 2801)]
    assert _kinds(whole, "eventlog_v2_local-1623876083964") == {
        "app_start": 1, "app_end": 1, "conf": 3, "query_start": 1, "query_end": 1, "job_start": 1,
        "job_end": 1, "stage_start": 4, "stage_end": 4, "attempt_start": 2801, "attempt_end": 2801}


def test_spark_2_event_log(whole):
    assert _kinds(whole, "spark2-eventlog.zstd") == {
        "app_start": 1, "app_end": 1, "query_start": 4, "query_end": 4, "job_start": 6, "job_end": 6,
        "stage_start": 6, "stage_end": 6, "attempt_start": 6, "attempt_end": 6}


def test_dr_elephant_spark_1_5_yarn_event_log(whole):
    """A file name that names no application: the id comes from the application start."""
    assert _kinds(whole, "spark_event_logs/event_log_1") == {
        "app_start": 1, "app_end": 1, "job_start": 1, "job_end": 1, "stage_start": 1, "stage_end": 1,
        "attempt_start": 10, "attempt_end": 10}
    assert _rows(whole, "select count(*), count(distinct app_id), min(app_id) from events e join sources s "
                        "using (source_id) where s.uri like '%/spark_event_logs/event_log_1'") == [
        (26, 1, "application_1457600942802_0093")]


# -- Sparklens (Qubole, Apache-2.0) -------------------------------------------------------------

def test_sparklens_local_event_log(whole):
    assert _kinds(whole, "sparklens/local-1532512550423") == {
        "app_start": 1, "app_end": 1, "job_start": 2, "job_end": 2, "stage_start": 2, "stage_end": 2,
        "attempt_start": 8, "attempt_end": 8}
    assert _rows(whole, "select attempt_id, task_id, executor_id, host, e.status from events e join sources s "
                        "using (source_id) where s.uri like '%/local-1532512550423' and e.kind = 'attempt_end' "
                        "order by line_no limit 1") == [
        ("task 0.0 in stage 0.0 (TID 0)", "0.0", "driver", "localhost", "success")]


# -- splitlog (MIT) -----------------------------------------------------------------------------

def test_yarn_logs_of_two_mapreduce_applications(whole):
    """`yarn logs` of TeraGen (two maps writing the output) and TeraValidate (a map and the one
    reduce that writes), gzipped: each container's syslog read as mr2-yarn, container and host on
    every event. The AppMaster grants each commit twice in words (`… given a go for committing the
    task output.` and `Result of canCommit for …:true`), the task once (`is allowed to commit now`)."""
    assert _rows(whole, "select regexp_extract(uri, 'application_\\d+_\\d+'), lines, events, rejected from sources "
                        "where uri like '%/splitlog/%' order by uri") == [
        ("application_1756057717712_0001", 884, 28, 0), ("application_1756057717712_0003", 927, 23, 0)]
    assert _kinds(whole, "application_1756057717712_0001/input.txt.gz") == {
        "conf": 3, "attempt_state": 14, "commit_allowed": 6, "task_commit": 2, "attempt_end": 2, "job_end": 1}
    assert _kinds(whole, "application_1756057717712_0003/input.txt.gz") == {
        "conf": 3, "attempt_state": 13, "commit_allowed": 3, "task_commit": 1, "attempt_end": 2, "job_end": 1}
    q = "select line_no, e.kind, attempt_id, e.status, target_path, detail->>'container', host from events e " \
        "join sources s using (source_id) where s.uri like '%/splitlog/%' and e.kind in ('task_commit', 'job_end') " \
        "order by s.uri, line_no"
    gen, val = "hdfs://namenode:8020/user/sandbox/teragen", "hdfs://namenode:8020/user/sandbox/teravalidate"
    assert _rows(whole, q) == [
        (386, "job_end", None, "success", None, "container_1756057717712_0001_01_000001", "hadoopnode"),
        (614, "task_commit", "attempt_1756057717712_0001_m_000000_0", "success", gen,
         "container_1756057717712_0001_01_000002", "hadoopnode"),
        (843, "task_commit", "attempt_1756057717712_0001_m_000001_0", "success", gen,
         "container_1756057717712_0001_01_000003", "hadoopnode"),
        (623, "job_end", None, "success", None, "container_1756057717712_0003_01_000001", "hadoopnode"),
        (852, "task_commit", "attempt_1756057717712_0003_r_000000_0", "success", val,
         "container_1756057717712_0003_01_000003", "hadoopnode"),
    ]
    # the AppMaster's view of the reduce attempt, transition by transition
    assert _rows(whole, "select e.status from events e join sources s using (source_id) where s.uri like "
                        "'%/splitlog/application_1756057717712_0003/%' and e.kind = 'attempt_state' and "
                        "attempt_id = 'attempt_1756057717712_0003_r_000000_0' and detail->>'container' = "
                        "'container_1756057717712_0003_01_000001' order by line_no") == [
        ("unassigned",), ("assigned",), ("running",), ("commit_pending",), ("success_finishing_container",),
        ("succeeded",)]


# -- Apache Eagle (Apache-2.0) ------------------------------------------------------------------

def test_hdfs_audit_log_of_a_sandbox(whole):
    """An HDP sandbox NameNode audit log: two mkdirs, three permission/owner changes, and 12
    getfileinfo reads counted per (user, call, hour)."""
    q = "select line_no, e.kind, path, size, detail->>'cmd', detail->>'user', detail->>'perm' from events e " \
        "join sources s using (source_id) where s.uri like '%/hdfs-auditlog/securityAuditLog' order by e.kind, line_no"
    assert _rows(whole, q) == [
        (6, "dir_create", "/tmp", None, "mkdirs", "hdfs", "hdfs:hdfs:rwxr-xr-x"),
        (8, "dir_create", "/user/ambari-qa", None, "mkdirs", "hdfs", "hdfs:hdfs:rwxr-xr-x"),
        (10, "fs_context", "/tmp", None, "setPermission", "hdfs", "hdfs:hdfs:rwxrwxrwx"),
        (12, "fs_context", "/user/ambari-qa", None, "setPermission", "hdfs", "hdfs:hdfs:rwxrwx---"),
        (15, "fs_context", "/user/ambari-qa", None, "setOwner", "hdfs", "ambari-qa:hdfs:rwxrwx---"),
        (1, "fs_reads", None, 12, "getfileinfo", "hdfs", None),
    ]


def test_another_systems_log_is_skipped_quietly(cli, corpus, db_path):
    """HBase's security audit log has a Hadoop daemon's layout but no task's logger: skipped,
    nothing rejected."""
    log = corpus / "eagle" / "hbase-auditlog" / "securityAuditLog"
    r = cli("ingest", "-v", log, "--db", db_path)
    assert r.exit_code == 0, r.err
    assert r.out.splitlines() == [
        "ingested 1 file (1 skipped): 0 events, 0 rejected lines",
        f"  skipped: {log}: not a log format commitsleuth reads",
        f"  format of {log}: no format: none matches 20% of the first 25 lines",
    ]


# -- MapReduce job history (Dr. Elephant and Apache Eagle, Apache-2.0) --------------------------

def test_mapreduce_job_history_file(whole):
    """A QuasiMonteCarlo job's .jhist: one map and one reduce attempt, each started (not a
    speculative copy: avataar VIRGIN) and succeeded on its host, between the job's submit and end."""
    q = "select line_no, e.kind, ts, job_id, task_id, attempt_id, attempt_no, speculative, host, e.status, " \
        "detail->>'container' from events e join sources s using (source_id) where s.uri like ? order by line_no"
    import datetime as dt
    job, t = "job_1526555215992_0001", lambda s, ms: dt.datetime(2018, 5, 17, 11, 14, s, ms * 1000)
    m, r = "attempt_1526555215992_0001_m_000000_0", "attempt_1526555215992_0001_r_000000_0"
    host = "172.23.244.182"
    assert _rows(whole, q, ["%QuasiMonteCarlo%.jhist"]) == [
        (5, "job_start", t(2, 677), job, None, None, None, None, None, None, None),
        (15, "attempt_start", t(11, 139), job, "task_1526555215992_0001_m_000000", m, 0, False, host, None,
         "container_1526555215992_0001_01_000002"),
        (17, "attempt_end", t(13, 236), job, "task_1526555215992_0001_m_000000", m, 0, None, host, "success", None),
        (21, "attempt_start", t(16, 49), job, "task_1526555215992_0001_r_000000", r, 0, False, host, None,
         "container_1526555215992_0001_01_000003"),
        (23, "attempt_end", t(18, 260), job, "task_1526555215992_0001_r_000000", r, 0, None, host, "success", None),
        (27, "job_end", t(18, 299), job, None, None, None, None, None, "success", None),
    ]
    assert _rows(whole, "select lines, events, rejected from sources where uri like '%QuasiMonteCarlo%.jhist'") == [
        (27, 6, 0)]


def test_a_job_history_file_with_a_header_put_on_top(whole):
    """Eagle's copy carries an Apache licence comment above ``Avro-Json`` and one event line that is
    not valid JSON (``"trackerName":"eagle-hadoop-1":8042``): those 15 lines are rejected, the rest read."""
    assert _rows(whole, "select s.lines, s.events, s.status, r.reason, r.count, r.first_line from sources s "
                        "join rejects r using (source_id) where s.uri like '%testhistory.jhist'") == [
        (37, 3, "ok", "invalid JSON in a job-history file", 15, 1)]
    assert _kinds(whole, "job_1479206441898_508949-1481299030929-testhistory.jhist") == {
        "job_start": 1, "attempt_end": 1, "job_end": 1}


def test_job_history_speculative_and_unsuccessful_attempts():
    """No corpus .jhist has a speculative copy or a killed attempt, so these lines are BUILT: the
    real MAP_ATTEMPT_STARTED line above with attempt 1 and avataar SPECULATIVE, and records with the
    fields of Hadoop's Events.avpr (TaskAttemptUnsuccessfulCompletion: taskid, taskType,
    attemptId, finishTime, hostname, port, rackname, status, error, …; JobUnsuccessfulCompletion:
    jobid, finishTime, finishedMaps, finishedReduces, jobStatus, …)."""
    from commitsleuth.parsers import ParseStats, SourceContext, get_format, parse_lines

    speculative = (
        '{"type":"MAP_ATTEMPT_STARTED","event":{"org.apache.hadoop.mapreduce.jobhistory.TaskAttemptStarted":'
        '{"taskid":"task_1526555215992_0001_m_000000","taskType":"MAP","attemptId":'
        '"attempt_1526555215992_0001_m_000000_1","startTime":1526555652139,"trackerName":"172.23.244.183",'
        '"httpPort":8042,"shufflePort":13562,"containerId":"container_1526555215992_0001_01_000004",'
        '"locality":{"string":"NODE_LOCAL"},"avataar":{"string":"SPECULATIVE"}}}}')
    killed = (
        '{"type":"MAP_ATTEMPT_KILLED","event":{"org.apache.hadoop.mapreduce.jobhistory.'
        'TaskAttemptUnsuccessfulCompletion":{"taskid":"task_1526555215992_0001_m_000000","taskType":"MAP",'
        '"attemptId":"attempt_1526555215992_0001_m_000000_1","finishTime":1526555653300,"hostname":'
        '"172.23.244.183","port":54690,"rackname":"/default-rack","status":"KILLED","error":'
        '"Speculation: attempt_1526555215992_0001_m_000000_0 succeeded first!","counters":null,'
        '"clockSplits":[],"cpuUsages":[],"vMemKbytes":[],"physMemKbytes":[]}}}')
    failed_job = (
        '{"type":"JOB_FAILED","event":{"org.apache.hadoop.mapreduce.jobhistory.JobUnsuccessfulCompletion":'
        '{"jobid":"job_1526555215992_0001","finishTime":1526555658299,"finishedMaps":1,"finishedReduces":0,'
        '"jobStatus":"FAILED","diagnostics":{"string":"Task failed task_1526555215992_0001_r_000000"}}}}')
    stats = ParseStats()
    lines = [(i, 0, t) for i, t in enumerate(["Avro-Json", speculative, killed, failed_job], 1)]
    events = list(parse_lines(get_format("mr-jobhistory"), lines, SourceContext("x.jhist"), stats))
    assert stats.rejected == 0
    assert [(e.kind, e.attempt_id, e.attempt_no, e.speculative, e.host, e.status, (e.detail or {}).get("error"))
            for e in events] == [
        ("attempt_start", "attempt_1526555215992_0001_m_000000_1", 1, True, "172.23.244.183", None, None),
        ("attempt_end", "attempt_1526555215992_0001_m_000000_1", 1, None, "172.23.244.183", "killed",
         "Speculation: attempt_1526555215992_0001_m_000000_0 succeeded first!"),
        ("job_end", None, None, None, None, "failed", None),
    ]
