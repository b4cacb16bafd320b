"""The layouts issue 32 found skipped or under-read, each with exact facts and a negative twin.

Lines marked REAL are quoted from public repositories (named beside them); lines marked SOURCE
are built from the exact strings of the named source file and layout, because no published log
of that layout was found.
"""

from __future__ import annotations

import duckdb

from commitsleuth.parsers import ParseStats, SourceContext, detect, get_format, parse_lines
from commitsleuth.parsers.callers import caller_fields

from conftest import write_files


def _rows(db_path, sql):
    with duckdb.connect(str(db_path), read_only=True) as con:
        return con.execute(sql).fetchall()


def _parse(fmt_name, text, ctx=None):
    stats = ParseStats()
    lines = [(i + 1, 0, t) for i, t in enumerate(text.splitlines())]
    events = list(parse_lines(get_format(fmt_name), lines, ctx or SourceContext("x"), stats))
    return events, stats


# -- Spark 3.x, log4j2 '%d{ISO8601} [%t] %-5p %c %x - %m%n' ----------------------------------------
# SOURCE: the layout (log4j2 prints an empty NDC as "[]") and Spark 3.x's exact strings:
# TaskSetManager "Starting task %s (TID %d) (%s, executor %s, partition %d, %s, %d bytes) ",
# "Lost task %s in stage %s (TID %d) (%s executor %s): %s", "Task %d in stage %s failed %d times;
# aborting job"; FileFormatWriter "Aborting job ${uuid}."; a Java stack trace under the lost task.
SPARK_LOG4J2 = """\
2024-03-05T10:15:00,118 [main] INFO  org.apache.spark.SparkContext [] - Running Spark version 3.5.1
2024-03-05T10:15:00,240 [main] INFO  org.apache.spark.SparkContext [] - Submitted application: orders-daily
2024-03-05T10:15:02,311 [dispatcher-event-loop-1] INFO  org.apache.spark.scheduler.TaskSetManager [] - Starting task 3.0 in stage 2.0 (TID 11) (worker-2.example.com, executor 1, partition 3, PROCESS_LOCAL, 7650 bytes) taskResourceAssignments Map()
2024-03-05T10:15:09,874 [task-result-getter-2] WARN  org.apache.spark.scheduler.TaskSetManager [] - Lost task 3.0 in stage 2.0 (TID 11) (worker-2.example.com executor 1): java.io.IOException: Connection reset by peer
\tat sun.nio.ch.FileDispatcherImpl.read0(Native Method)
\tat sun.nio.ch.SocketDispatcher.read(SocketDispatcher.java:39)
2024-03-05T10:15:09,880 [dispatcher-event-loop-0] INFO  org.apache.spark.scheduler.TaskSetManager [] - Starting task 3.1 in stage 2.0 (TID 12) (worker-3.example.com, executor 2, partition 3, PROCESS_LOCAL, 7650 bytes) taskResourceAssignments Map()
2024-03-05T10:15:20,990 [task-result-getter-0] ERROR org.apache.spark.scheduler.TaskSetManager [] - Task 3 in stage 2.0 failed 2 times; aborting job
2024-03-05T10:15:21,002 [Thread-4] ERROR org.apache.spark.sql.execution.datasources.FileFormatWriter [] - Aborting job 0f6b4d2c-5b0e-4a7e-9d7f-2a3b4c5d6e7f.
org.apache.spark.SparkException: Job aborted due to stage failure: Task 3 in stage 2.0 failed 2 times
\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2856)
"""


def test_spark3_log4j2_driver_log_is_read(cli, tmp_path, db_path):
    write_files(tmp_path / "in", {"driver.log": SPARK_LOG4J2})
    r = cli("ingest", tmp_path / "in", "--db", db_path, "-v")
    assert r.exit_code == 0, r.err
    assert r.out.splitlines()[0] == "ingested 1 file (1 ok): 4 events, 0 rejected lines"
    assert r.out.splitlines()[1].endswith("spark-log4j2: 7 of 7 heads")  # the trace lines are not counted
    got = _rows(db_path, "SELECT line_no, kind, attempt_id, attempt_no, stage_id, task_id, host, executor_id, "
                         "status, thread, job_id FROM events ORDER BY line_no")
    assert got == [
        (3, "attempt_start", "task 3.0 in stage 2.0 (TID 11)", 0, 2, "2.3", "worker-2.example.com", "1", None,
         "dispatcher-event-loop-1", None),
        (4, "attempt_end", "task 3.0 in stage 2.0 (TID 11)", 0, 2, "2.3", "worker-2.example.com", "1", "failed",
         "task-result-getter-2", None),
        (7, "attempt_start", "task 3.1 in stage 2.0 (TID 12)", 1, 2, "2.3", "worker-3.example.com", "2", None,
         "dispatcher-event-loop-0", None),
        (9, "job_abort", None, None, None, None, None, None, "aborted", "Thread-4",
         "0f6b4d2c-5b0e-4a7e-9d7f-2a3b4c5d6e7f"),
    ]
    # the stack trace stays with its record
    assert _rows(db_path, "SELECT detail->>'continuation_lines' FROM events WHERE line_no = 4") == [("2",)]


def test_spark_log4j2_layout_twins():
    """log4j 1's empty NDC (two spaces) is the same layout; another application's loggers are not Spark's."""
    log4j1 = ("2024-03-05 10:15:21,002 [Thread-4] ERROR org.apache.spark.sql.execution.datasources."
              "FileFormatWriter  - Aborting job 0f6b4d2c-5b0e-4a7e-9d7f-2a3b4c5d6e7f.")
    assert detect("driver.log", [log4j1]).name == "spark-log4j2"
    other = "2024-03-05 10:15:21,002 [main] INFO  com.example.billing.Invoices [] - Starting task 3.0 in stage 2.0 (TID 11)"
    assert detect("app.log", [other] * 3) is None


# -- HDFS audit: HDP 2.x Hive's caller context ---------------------------------------------------------
# REAL: the audit message of Apache Ambari's log-search tests (ambari-logsearch, Apache-2.0),
# behind DefaultAuditLogger's log4j head.
HDP_AUDIT = ("2016-03-17 20:01:12,345 INFO FSNamesystem.audit: allowed=true\tugi=ambari-qa (auth:SIMPLE)\t"
             "ip=/192.168.64.102\tcmd=getfileinfo\tsrc=/ats/active\tdst=null\tperm=null\tproto=rpc\t"
             "callerContext=HIVE_QUERY_ID:ambari-qa_20160317200111_223b3079-4a2d-431c-920f-6ba37ed63e9f")


def test_hdp_hive_query_id_caller_context_attributed():
    qid = "ambari-qa_20160317200111_223b3079-4a2d-431c-920f-6ba37ed63e9f"
    assert caller_fields(f"HIVE_QUERY_ID:{qid}") == {"query_id": qid}
    assert caller_fields(f"HIVE_QUERY_ID:{qid}:c2lnbmF0dXJl") == {"query_id": qid}  # the NameNode's signature
    assert caller_fields("NOT_HIVE_QUERY_ID:x") == {}
    (ev,), _ = _parse("hdfs-audit", HDP_AUDIT, SourceContext("x", keep_reads=True))
    assert (ev.kind, ev.query_id, ev.thread, ev.path) == ("fs_read", qid, None, "/ats/active")
    mkdir = HDP_AUDIT.replace("cmd=getfileinfo\tsrc=/ats/active", "cmd=mkdirs\tsrc=/w/db.db/t/dt=1")
    (ev,), _ = _parse("hdfs-audit", mkdir)
    assert (ev.kind, ev.query_id, ev.thread) == ("dir_create", qid, None)


# -- Hive CLI console ------------------------------------------------------------------------------------
# SOURCE: Hive 1.x-2.x console strings, each from the class that prints it: CliDriver (the "hive> "
# prompt, "OK", "Time taken: "), Driver ("Query ID = ", "Total jobs = ", "Launching Job 1 out of 3"),
# HadoopJobExecHelper ("Starting Job = %s, Tracking URL = %s", "Kill Command = ", "Hadoop job
# information for Stage-1: number of mappers: …", "<yyyy-MM-dd HH:mm:ss,SSS> Stage-1 map = 0%,  reduce
# = 0%", "Ended Job = "), ConditionalResolver ("Stage-4 is selected by condition resolver."), MoveTask
# ("Moving data to: " without the log's " from " detail, "Loading data to table "), StatsTask
# ("Partition <t>{k=v} stats: [numFiles=…]"). The "Query ID =" line's shape is REAL (a Hive-on-Tez
# console quoted in a public tutorial: "Query ID = hive_20180719104640_57a2cc82-f69f-4631-b5cb-4eee37e8c69f").
HIVE_CLI = """\
hive> INSERT OVERWRITE TABLE sales.orders PARTITION (dt='2014-08-24') SELECT id, amount FROM staging.orders;
Query ID = etl_20140825010203_5b0b1c7e-8f0a-4d61-9a3e-6b2f1f0c9d11
Total jobs = 3
Launching Job 1 out of 3
Number of reduce tasks is set to 0 since there's no reduce operator
Starting Job = job_1408900000000_0042, Tracking URL = http://rm.example.com:8088/proxy/application_1408900000000_0042/
Kill Command = /usr/lib/hadoop/bin/hadoop job  -kill job_1408900000000_0042
Hadoop job information for Stage-1: number of mappers: 2; number of reducers: 0
2014-08-25 01:02:15,120 Stage-1 map = 0%,  reduce = 0%
2014-08-25 01:02:31,554 Stage-1 map = 100%,  reduce = 0%, Cumulative CPU 4.12 sec
MapReduce Total cumulative CPU time: 4 seconds 120 msec
Ended Job = job_1408900000000_0042
Stage-4 is selected by condition resolver.
Stage-3 is filtered out by condition resolver.
Moving data to: hdfs://nn:8020/tmp/hive/etl/hive_2014-08-25_01-02-03_118_1/-ext-10000
Loading data to table sales.orders partition (dt=2014-08-24)
Partition sales.orders{dt=2014-08-24} stats: [numFiles=2, numRows=120, totalSize=4096, rawDataSize=3976]
MapReduce Jobs Launched:
Stage-Stage-1: Map: 2   Cumulative CPU: 4.12 sec   HDFS Read: 8192 HDFS Write: 4096 SUCCESS
Total MapReduce CPU Time Spent: 4 seconds 120 msec
OK
Time taken: 29.871 seconds
hive> LOAD DATA INPATH '/incoming/orders' INTO TABLE staging.orders;
Loading data to table staging.orders
Table staging.orders stats: [numFiles=1, totalSize=2048]
OK
Time taken: 0.912 seconds
"""


def test_hive_cli_console_is_read(cli, tmp_path, db_path):
    write_files(tmp_path / "in", {"nightly.out": HIVE_CLI})
    r = cli("ingest", tmp_path / "in", "--db", db_path, "-v")
    assert r.exit_code == 0, r.err
    assert r.out.splitlines()[0] == "ingested 1 file (1 ok): 11 events, 0 rejected lines"
    assert r.out.splitlines()[1].endswith("hive-console: 25 of 27 heads")
    got = _rows(db_path, "SELECT line_no, kind, query_id, job_id, table_name, partition_spec, "
                         "detail->>'query_line', detail->>'overwrite' FROM events ORDER BY line_no")
    q = "etl_20140825010203_5b0b1c7e-8f0a-4d61-9a3e-6b2f1f0c9d11"
    assert got == [
        (1, "query_start", None, None, None, None, None, None),
        (2, "query_start", q, None, None, None, None, None),
        (6, "job_start", q, "job_1408900000000_0042", None, None, "1", None),
        (12, "job_end", q, "job_1408900000000_0042", None, None, "1", None),
        (13, "conf", None, None, None, None, None, None),
        (14, "conf", None, None, None, None, None, None),
        (16, "load", q, None, "sales.orders", "dt=2014-08-24", "1", "true"),
        (17, "stats", q, None, "sales.orders", "dt=2014-08-24", "1", None),
        (23, "query_start", None, None, None, None, None, None),
        (24, "load", "query at line 23", None, "staging.orders", None, "23", None),  # LOAD … INTO: no overwrite
        (25, "stats", "query at line 23", None, "staging.orders", None, "23", None),
    ]


def test_hive_cli_twins():
    """HiveServer2's operation log carries the same words behind "INFO  : ": not the console."""
    assert detect("x.out", ["Query ID = hive_1", "Total jobs = 1", "OK"]).name == "hive-console"
    assert detect("x.out", ["INFO  : Query ID = hive_1", "INFO  : Total jobs = 1"]).name == "hs2-oplog-terse"
    assert detect("x.out", ["Number of rows: 12", "a\tb", "c\td"]) is None
    # hive.cli.print.current.db's prompt: the same query start
    events, stats = _parse("hive-console", "hive (sales)> INSERT OVERWRITE TABLE t SELECT 1;\nLoading data to table sales.t\n")
    assert [(e.kind, (e.detail or {}).get("command"), (e.detail or {}).get("overwrite")) for e in events] == [
        ("query_start", "INSERT OVERWRITE TABLE t SELECT 1;", None), ("load", None, True)]
    assert stats.rejected == 0


# -- Sqoop --hive-import: steps without thread names tied to their query --------------------------------
# The first ten lines REAL (test_layouts.SQOOP, a published Sqoop 1.4.6 import); then SOURCE:
# Sqoop's TableDefWriter.getLoadDataStmt (LOG.debug("Load statement: " + "LOAD DATA INPATH '<dir>'"
# [" OVERWRITE"] " INTO TABLE `<t>`")), HiveImport ("Loading uploaded data into Hive", and each line of
# Hive's console through its LoggingAsyncSink at INFO), in the console layout '%d{yy/MM/dd HH:mm:ss} %p %c{2}: %m%n'.
SQOOP_HIVE_IMPORT = """\
19/03/10 22:30:40 DEBUG hive.TableDefWriter: Load statement: LOAD DATA INPATH 'hdfs://nn:8020/user/training/accounts' OVERWRITE INTO TABLE `accounts`
19/03/10 22:30:40 INFO hive.HiveImport: Loading uploaded data into Hive
19/03/10 22:30:45 INFO hive.HiveImport: Loading data to table default.accounts
19/03/10 22:30:46 INFO hive.HiveImport: Table default.accounts stats: [numFiles=4, totalSize=7684362]
19/03/10 22:30:46 INFO hive.HiveImport: OK
19/03/10 22:30:46 INFO hive.HiveImport: Time taken: 1.215 seconds
19/03/10 22:30:46 INFO hive.HiveImport: Hive import complete.
"""


def test_sqoop_hive_import_load_is_its_querys_overwrite(cli, tmp_path, db_path):
    from test_layouts import SQOOP

    from commitsleuth.forensics.timeline import timeline_rows
    from commitsleuth.store import Store

    write_files(tmp_path / "in", {"sqoop.log": SQOOP + SQOOP_HIVE_IMPORT})
    r = cli("ingest", tmp_path / "in", "--db", db_path, "-v")
    assert r.exit_code == 0, r.err
    assert "hadoop-client" in r.out.splitlines()[1]
    got = _rows(db_path, "SELECT line_no, kind, table_name, detail->>'query_line', detail->>'overwrite', "
                         "detail->>'command' FROM events ORDER BY line_no")
    assert got == [
        (11, "query_start", None, None, None,
         "LOAD DATA INPATH 'hdfs://nn:8020/user/training/accounts' OVERWRITE INTO TABLE `accounts`"),
        (13, "load", "default.accounts", "11", "true", None),
        (14, "stats", "default.accounts", "11", None, None),
    ]
    with Store(db_path) as store:
        actors = {(row[2], row[3]) for row in timeline_rows(store, "default.accounts", None)}
    assert actors == {("load", "query at line 11"), ("stats", "query at line 11")}


def test_threaded_steps_are_not_tied_to_another_threads_query():
    """Only a log without threads ties a step to the query above it."""
    text = ("2015-03-02 11:03:55,101 INFO  [main]: ql.Driver (Driver.java:compile(411)) - Compiling "
            "command(queryId=hive_1): insert overwrite table t select 1\n"
            "2015-03-02 11:04:09,770 INFO  [pool-1]: exec.Task (SessionState.java:printInfo(927)) - "
            "Loading data to table db.t\n")
    events, _ = _parse("hive-log4j1", text)
    assert [(e.kind, e.query_id, (e.detail or {}).get("overwrite")) for e in events] == [
        ("query_start", "hive_1", None), ("load", None, None)]


# -- A failed task's log whose head is mostly a stack trace --------------------------------------------
# SOURCE: the Tez AM layout '%d{ISO8601} [%p] [%t] |%c{2}|: %m%n' (tez-container-log4j.properties);
# the history line is the REAL one of tez_task.py's samples; the trace's frames are Hive's and
# Tez's own classes, repeated as a failing task's retries print them.
_FRAMES = "".join(f"\tat org.apache.hadoop.hive.ql.exec.tez.TezProcessor.run(TezProcessor.java:{250 + i})\n"
                  for i in range(60))
_TRACE = ("java.lang.RuntimeException: org.apache.hadoop.hive.ql.metadata.HiveException: Hive Runtime Error\n"
          + _FRAMES + "Caused by: java.io.IOException: Filesystem closed\n" + "".join(_FRAMES.splitlines(True)[:3]) + "\t... 57 more\n")
TEZ_AM_FAILED = (
    "2021-08-25 14:37:20,001 [INFO] [main] |app.DAGAppMaster|: Created DAGAppMaster for application "
    "appattempt_1612602874723_344108_000001\n"
    "2021-08-25 14:37:24,300 [ERROR] [TezChild] |tez.TezProcessor|: Failed initializeAndRunProcessor\n" + _TRACE
    + "2021-08-25 14:37:24,310 [ERROR] [TezChild] |tez.TezProcessor|: Failed initializeAndRunProcessor\n" + _TRACE
    + "2021-08-25 14:37:24,329 [INFO] [Dispatcher thread {Central}] |HistoryEventHandler.criticalEvents|: "
    "[HISTORY][DAG:dag_1612602874723_344108_1][Event:TASK_ATTEMPT_FINISHED]: vertexName=Map 1, "
    "taskAttemptId=attempt_1612602874723_344108_1_00_000004_0, creationTime=1629873439340, "
    "status=FAILED, taskFailureType=FATAL, errorEnum=APPLICATION_ERROR, diagnostics=Error: Error while "
    "running task ( failure ) : java.lang.RuntimeException: Hive Runtime Error\n" + _TRACE
)


def test_failed_task_log_mostly_stack_trace_is_recognised(cli, tmp_path, db_path):
    assert len(TEZ_AM_FAILED.splitlines()) > 200  # the first 200 lines hold 4 heads
    write_files(tmp_path / "in", {"syslog_dag_1612602874723_344108_1": TEZ_AM_FAILED})
    r = cli("ingest", tmp_path / "in", "--db", db_path, "-v")
    assert r.exit_code == 0, r.err
    assert "not a log format" not in r.out
    assert r.out.splitlines()[1].endswith("tez-task: 4 of 4 heads, path")
    assert _rows(db_path, "SELECT line_no, kind, attempt_id, status FROM events") == [
        (136, "attempt_end", "attempt_1612602874723_344108_1_00_000004_0", "failed")]
    # a file of only a trace is still no format (nothing to tell it by)
    assert detect("syslog", _TRACE.splitlines()) is None
    # an MR2 container's syslog of a failed attempt (YarnChild's "Exception running child : " + trace)
    mr2 = ["2021-06-06 13:50:13,612 INFO [main] org.apache.hadoop.mapred.MapTask: Processing split: hdfs://nn/in/a:0+134217728",
           "2021-06-06 13:50:19,001 WARN [main] org.apache.hadoop.mapred.YarnChild: Exception running child : "
           "java.io.IOException: Filesystem closed", *_TRACE.splitlines(), *_TRACE.splitlines()]
    assert detect("syslog", mr2).name == "mr2-yarn"


# -- S3A magic committer in an S3 access log ------------------------------------------------------------
# SOURCE: the S3 server access log layout (AWS's documentation, as s3_access.py's samples) with S3A's
# magic committer paths (CommitConstants MAGIC "__magic", MagicCommitPaths "job-<uuid>/tasks/<attempt>/
# __base/<file>"); the destination and attempt are REAL, from a Spark 3 driver log's committer line
# ("workPath=s3a://drop001-uniquehad-dev/filedrop/customer/__magic/job-3fcc59d0-…/tasks/
# attempt_202412020942436910169306211933304_0000_m_000000_0/__base"). The early Referer is built from
# HADOOP-17511's first AuditConstants (path "/%1$s/%2$s/", "job", "opid", "path", "pr", "ps", "t0").
def _s3(op, key, referer="-", status=200, rid="R1"):
    return (f'o drop001-uniquehad-dev [02/Dec/2024:09:42:50 +0000] 10.0.0.9 arn:aws:iam::1:role/etl {rid} {op} '
            f'{key} "-" {status} - - 1 2 3 "{referer}" "Hadoop 3.3.6, aws-sdk-java/1.12.367" - H= SigV4 C '
            f"AuthHeader drop001-uniquehad-dev.s3.amazonaws.com TLSv1.2 - -")


_ATTEMPT = "attempt_202412020942436910169306211933304_0000_m_000000_0"
_MAGIC_DIR = f"filedrop/customer/__magic/job-3fcc59d0-0ba2-410c-a738-e378c0e51ec1/tasks/{_ATTEMPT}/__base"
_PART = "dt%3D2024-12-02/part-00000-3fcc59d0-0ba2-410c-a738-e378c0e51ec1-c000.snappy.parquet"
_EARLY_REFERER = ("https://audit.example.org/op_create/8c1e0e4a-0001/?op=op_create"
                  "&path=s3a://drop001-uniquehad-dev/filedrop/customer/_SUCCESS&pr=alice"
                  "&ps=2eac5a04-2153-48db-896a-09bc9a2fd132&job=job_20241202094243_0000&opid=8c1e0e4a-0001&t0=12&t1=12")


def test_s3a_magic_committer_writes_and_attempts():
    lines = [
        _s3("REST.POST.UPLOADS", f"{_MAGIC_DIR}/{_PART}"),
        _s3("REST.PUT.PART", f"{_MAGIC_DIR}/{_PART}", rid="R2"),
        _s3("REST.PUT.OBJECT", f"{_MAGIC_DIR}/{_PART}.pending", rid="R3"),
        _s3("REST.GET.OBJECT", f"{_MAGIC_DIR}/{_PART}.pending", rid="R4"),
        _s3("REST.PUT.OBJECT", "filedrop/customer/_SUCCESS", referer=_EARLY_REFERER, rid="R5"),
        _s3("REST.PUT.OBJECT", "filedrop/customer/other",
            referer="https://www.example.com/op_create/1/?job=job_1_1&pr=mallory", rid="R6"),
    ]
    events, stats = _parse("s3-access", "\n".join(lines))
    assert stats.rejected == 0
    events.sort(key=lambda e: e.line_no)
    got = [(e.line_no, e.kind, e.attempt_id, e.job_id, e.thread, (e.detail or {}).get("multipart"),
            (e.detail or {}).get("attempt_from")) for e in events]
    assert got == [
        (1, "fs_context", _ATTEMPT, "job_202412020942436910169306211933304_0000", None, "initiate", "path"),
        (2, "fs_context", _ATTEMPT, "job_202412020942436910169306211933304_0000", None, "part", "path"),
        (3, "file_create", _ATTEMPT, "job_202412020942436910169306211933304_0000", None, None, "path"),
        (4, "fs_reads", None, None, "arn:aws:iam::1:role/etl", None, None),
        (5, "file_create", None, "job_20241202094243_0000", "alice from 10.0.0.9", None, None),
        (6, "file_create", None, None, "arn:aws:iam::1:role/etl from 10.0.0.9", None, None),  # not S3A's host
    ]
    dest = "s3a://drop001-uniquehad-dev/filedrop/customer/dt=2024-12-02/part-00000-3fcc59d0-0ba2-410c-a738-e378c0e51ec1-c000.snappy.parquet"
    assert events[0].detail["magic_dest"] == dest
    assert events[4].detail["s3a_audit"] == {"op": "op_create", "id": "8c1e0e4a-0001", "ps": "2eac5a04-2153-48db-896a-09bc9a2fd132",
                                             "p1": "s3a://drop001-uniquehad-dev/filedrop/customer/_SUCCESS",
                                             "ji": "job_20241202094243_0000"}


def test_s3a_magic_committer_through_ingest(cli, tmp_path, db_path):
    """The block scan reads the same writes as the line parse."""
    lines = [_s3("REST.GET.OBJECT", "x", rid="R0"), _s3("REST.POST.UPLOADS", f"{_MAGIC_DIR}/{_PART}"),
             _s3("REST.PUT.PART", f"{_MAGIC_DIR}/{_PART}", rid="R2")]
    write_files(tmp_path / "in", {"access.log": "\n".join(lines) + "\n"})
    assert cli("ingest", tmp_path / "in", "--db", db_path).exit_code == 0
    assert _rows(db_path, "SELECT line_no, kind, attempt_id, detail->>'multipart' FROM events ORDER BY line_no") == [
        (1, "fs_reads", None, None), (2, "fs_context", _ATTEMPT, "initiate"), (3, "fs_context", _ATTEMPT, "part")]


# -- Paste margins: audit logs, S3 access logs, .jhist ----------------------------------------------------
# REAL: tests/corpus/eagle/hdfs-auditlog/securityAuditLog, the dr-elephant .jhist and the sparklens
# event log (see tests/corpus/README.md); the S3 lines are s3_access.py's samples (AWS's documentation, NooBaa's test).
def _store_facts(db_path):
    return _rows(db_path, "SELECT s.format, e.line_no, e.kind, e.path, e.attempt_id, e.job_id, e.size "
                          "FROM events e JOIN sources s USING (source_id) ORDER BY e.line_no, e.kind")


def _ingest_one(cli, tmp_path, name, text, sub):
    d = tmp_path / sub
    write_files(d, {name: text})
    db = tmp_path / f"{sub}.duckdb"
    r = cli("ingest", d, "--db", db, "-v")
    assert r.exit_code == 0, r.err
    return r, _store_facts(db)


def _margined(text, margin):
    lines = text.splitlines()
    if margin == "numbers":
        return "".join(f"{i:>4} | {line}\n" for i, line in enumerate(lines, start=1))
    return "".join(f"{margin}{line}\n" for line in lines)


def test_pasted_storage_logs_and_jhist_read_behind_their_margin(cli, tmp_path, corpus):
    from commitsleuth.parsers.formats import s3_access

    audit = (corpus / "eagle" / "hdfs-auditlog" / "securityAuditLog").read_text()
    jhist_name = "job_1526555215992_0001-1526555642677-user-QuasiMonteCarlo-1526555658299-1-1-SUCCEEDED-default-1526555648931.jhist"
    jhist = (corpus / "dr-elephant" / "history" / jhist_name).read_text()
    s3 = "\n".join(s.line for s in s3_access.FORMAT.samples) + "\n"
    eventlog = (corpus / "sparklens" / "local-1532512550423").read_text()
    for name, text, margin, prefix in [("audit.txt", audit, "> ", "quote"), ("s3.txt", s3, "numbers", "line-numbers"),
                                       ("jhist.txt", jhist, "    ", "indent"),
                                       ("local-1532512550423", eventlog, "| ", "pipe")]:
        _, plain = _ingest_one(cli, tmp_path, name, text, f"plain-{prefix}")
        r, pasted = _ingest_one(cli, tmp_path, name, _margined(text, margin), f"pasted-{prefix}")
        assert "after a" in r.out and prefix in r.out, r.out
        assert plain and [(f"{row[0]}+pasted:{prefix}", *row[1:]) for row in plain] == pasted, name
    # the facts read behind the margin are the corpus's own (tests/corpus/README.md)
    kinds = {}
    for row in _store_facts(tmp_path / "pasted-quote.duckdb"):
        kinds[row[2]] = kinds.get(row[2], 0) + 1
    assert kinds == {"dir_create": 2, "fs_context": 3, "fs_reads": 1}  # 12 getfileinfo in one hour


def test_line_number_margin_with_a_bar():
    from commitsleuth.parsers.pasted import common_prefix, strip

    lines = ["  9 | 2015-03-02 11:04:09,770 INFO x", " 10 | y", " 11 |   at z"]
    assert common_prefix(lines) == "line-numbers"
    assert strip(lines, "line-numbers") == ["2015-03-02 11:04:09,770 INFO x", "y", "  at z"]
    assert common_prefix(["  9 | a", " 11 | b"]) is None  # numbers that do not count up are the log's own


# -- A `yarn logs` excerpt cut above its first header ------------------------------------------------------
def test_yarn_logs_excerpt_keeps_the_lines_above_its_first_header(cli, tmp_path, db_path):
    """The excerpt starts inside a container's syslog (its tail, then "End of LogType:syslog"); those
    lines are read by their own format; a pasted command line above them is a counted reject."""
    from test_layouts import MR2_CONTAINER, YARN_LOGS

    text = "$ yarn logs -applicationId application_1612183984688_0028\n" + MR2_CONTAINER + \
        "End of LogType:syslog\n" + YARN_LOGS.lstrip("\n")
    write_files(tmp_path / "in", {"application_1612183984688_0028.log": text})
    r = cli("ingest", tmp_path / "in", "--db", db_path, "-v")
    assert r.out.splitlines()[0] == "ingested 1 file (1 ok): 7 events, 1 rejected lines"
    got = _rows(db_path, "SELECT line_no, kind, attempt_id, host, detail->>'container', detail->>'log_type', "
                         "detail->>'format' FROM events ORDER BY line_no")
    a0, a1 = "attempt_1612183984688_0028_m_000035_0", "attempt_1612183984688_0028_m_000035_1"
    c36, c37 = "container_1612183984688_0028_01_000036", "container_1612183984688_0028_01_000037"
    assert got == [
        (2, "attempt_state", a0, None, None, "syslog", "mr2-yarn"),
        (3, "commit_allowed", a0, None, None, "syslog", "mr2-yarn"),
        (4, "attempt_end", a0, None, None, "syslog", "mr2-yarn"),
        (18, "attempt_state", a0, "node05.example.com", c36, "syslog", "mr2-yarn"),
        (19, "commit_allowed", a0, "node05.example.com", c36, "syslog", "mr2-yarn"),
        (20, "attempt_end", a0, "node05.example.com", c36, "syslog", "mr2-yarn"),
        (32, "attempt_state", a1, "node06.example.com", c37, "syslog", "mr2-yarn"),
    ]
    assert _rows(db_path, "SELECT reason, count, first_line FROM rejects") == [("no head before first record", 1, 1)]


def test_yarn_logs_lines_above_the_header_in_no_format_are_counted(cli, tmp_path, db_path):
    from test_layouts import YARN_LOGS

    text = "$ yarn logs -applicationId application_1612183984688_0028\nsee below\n" + YARN_LOGS
    write_files(tmp_path / "in", {"app.log": text})
    r = cli("ingest", tmp_path / "in", "--db", db_path)
    assert r.out.splitlines()[0] == "ingested 1 file (1 ok): 4 events, 2 rejected lines"
    assert _rows(db_path, "SELECT reason, count, first_line FROM rejects") == [
        ("yarn-logs: line above the first container header, in no format", 2, 1)]


# -- Smaller ---------------------------------------------------------------------------------------------
def test_hadoop_client_running_job_is_a_job_start():
    # SOURCE: org.apache.hadoop.mapreduce.Job.monitorAndPrintJob, LOG.info("Running job: " + jobId),
    # in the console layout of the REAL LocalJobRunner run in test_layouts.
    text = ("16/11/17 17:05:59 INFO mapreduce.Job: Running job: job_local1677532496_0001\n"
            "16/11/17 17:05:59 INFO mapreduce.Job: Running job: nightly\n"  # not a job id: no event
            "16/11/17 17:06:01 INFO mapreduce.Job: Job job_local1677532496_0001 completed successfully\n")
    events, stats = _parse("hadoop-client", text)
    assert [(e.line_no, e.kind, e.job_id, e.status) for e in events] == [
        (1, "job_start", "job_local1677532496_0001", None), (3, "job_end", "job_local1677532496_0001", "success")]
    assert stats.rejected == 0


# SOURCE: Spark 1.6 BaseWriterContainer.abortTask (logError(s"Task attempt $taskAttemptId aborted.")) and
# Hadoop FileOutputCommitter.abortTask (LOG.warn("Could not delete " + taskAttemptPath)), in the layout
# and with the output dir of the REAL loghub Spark_2k.log (tests/corpus/loghub).
SPARK16_ABORT = """\
17/06/09 20:10:58 ERROR datasources.DefaultWriterContainer: Task attempt attempt_201706092018_0024_m_000004_0 aborted.
17/06/09 20:10:58 WARN output.FileOutputCommitter: Could not delete hdfs://10.10.34.11:9000/pjhe/test/1/_temporary/0/_temporary/attempt_201706092018_0024_m_000004_0
17/06/09 20:10:58 WARN output.FileOutputCommitter: Could not delete hdfs://10.10.34.11:9000/pjhe/tmp/lock
17/06/09 20:10:58 INFO executor.Executor: Task attempt attempt_201706092018_0024_m_000004_0 is done
"""


def test_spark16_task_abort_and_undeleted_attempt_dir_are_events():
    events, stats = _parse("spark-log", SPARK16_ABORT)
    a = "attempt_201706092018_0024_m_000004_0"
    assert [(e.line_no, e.kind, e.attempt_id, e.task_id, e.status, e.path) for e in events] == [
        (1, "attempt_state", a, "task_201706092018_0024_m_000004", "aborted", None),
        (2, "attempt_state", a, "task_201706092018_0024_m_000004", "abort_cleanup_failed",
         "hdfs://10.10.34.11:9000/pjhe/test/1/_temporary/0/_temporary/" + a),
    ]
    assert stats.rejected == 0


def test_spark_log_attempt_end_names_the_attempt_as_the_event_log_does():
    """The text log's attempt is Spark's own wording, the one the event-log decoder stores."""
    from commitsleuth.parsers.spark_events import attempt_label

    line = ("21/08/10 23:48:05 INFO TaskSetManager: Lost task 21.0 in stage 0.0 (TID 21) (ltx1-hcl12291.grid."
            "linkedin.com executor 7): TaskKilled (another attempt succeeded)")
    (ev,), _ = _parse("spark-log", line)
    assert (ev.kind, ev.status, ev.attempt_id, ev.attempt_no, ev.task_id, ev.detail["tid"]) == (
        "attempt_end", "killed", attempt_label(0, 0, 21, 0, 21), 0, "0.21", 21)


def test_tez_attempt_finished_keeps_node_after_a_multiline_diagnostic():
    # SOURCE: tez-dag HistoryEventHandler's TASK_ATTEMPT_FINISHED line (the REAL one of tez_task.py's
    # samples), its diagnostics a stack trace over several lines, the fields after it on the last.
    text = (
        "2021-08-25 14:37:24,329 [INFO] [Dispatcher thread {Central}] |HistoryEventHandler.criticalEvents|: "
        "[HISTORY][DAG:dag_1612602874723_344108_1][Event:TASK_ATTEMPT_FINISHED]: vertexName=Map 1, "
        "taskAttemptId=attempt_1612602874723_344108_1_00_000004_0, creationTime=1629873439340, status=FAILED, "
        "taskFailureType=FATAL, errorEnum=APPLICATION_ERROR, diagnostics=Error: Error while running task ( failure ) : "
        "java.lang.RuntimeException: Hive Runtime Error\n"
        "\tat org.apache.hadoop.hive.ql.exec.tez.TezProcessor.initializeAndRunProcessor(TezProcessor.java:296)\n"
        "\tat org.apache.tez.runtime.task.TaskRunner2Callable.callInternal(TaskRunner2Callable.java:75)\n"
        ", errorEnum=APPLICATION_ERROR, nodeHttpAddress=datanode143-ysten3:8042, counters=Counters: 15\n"
        "2021-08-25 14:37:24,330 [INFO] [Dispatcher thread {Central}] |impl.TaskImpl|: Task succeeded with "
        "attempt attempt_1612602874723_344108_1_00_000004_1\n")
    events, _ = _parse("tez-task", text)
    (ev,) = events
    assert (ev.kind, ev.status, ev.host, ev.detail["node_http"], ev.detail["continuation_lines"]) == (
        "attempt_end", "failed", "datanode143-ysten3", "datanode143-ysten3:8042", 3)
    assert ev.detail["diagnostics"] == "Error: Error while running task ( failure ) : java.lang.RuntimeException: Hive Runtime Error"


def test_unpartitioned_hive3_load_has_its_tables_location(cli, tmp_path, db_path):
    # SOURCE: Hive 3 MoveTask through SessionState.printInfo ("Loading data to table " + table + " from "
    # + source), the staging dir inside a managed table (hive.exec.stagingdir), in the REAL hive.log layout
    # of test_layouts.HIVE3_DEFAULT_DB; nothing else in the log names the table's location.
    line = ("2024-01-05 10:01:02,525 INFO  [HiveServer2-Background-Pool: Thread-77] exec.Task "
            "(SessionState.java:printInfo(1227)) - Loading data to table sales.orders from hdfs://nn:8020/warehouse/"
            "tablespace/managed/hive/sales.db/orders/.hive-staging_hive_2024-01-05_10-00-40_101_1-1/-ext-10000\n")
    write_files(tmp_path / "in", {"hiveserver2.log": line})
    assert cli("ingest", tmp_path / "in", "--db", db_path).exit_code == 0
    assert _rows(db_path, "SELECT kind, table_name, location, partition_spec FROM events") == [
        ("load", "sales.orders", "hdfs://nn:8020/warehouse/tablespace/managed/hive/sales.db/orders", None)]
    partitioned = line.replace("sales.orders from", "sales.orders partition (dt=2024-01-04) from")
    events, _ = _parse("hive-log4j1", partitioned)
    assert events[0].target_path is None  # a partition's directory is the metastore's to say


def test_unknown_spark_event_types_are_counted(cli, tmp_path, db_path, corpus):
    """Another library's listener events are not read, and say so, per type; Spark's own
    events without a reader (BlockManagerAdded, streaming progress…) are not rejects."""
    log = (corpus / "sparklens" / "local-1532512550423").read_text()
    first, rest = log.split("\n", 1)
    custom = ['{"Event":"com.example.lineage.LineageEvent","plan":"x"}',
              '{"Event":"org.apache.spark.sql.streaming.StreamingQueryListener$QueryIdleEvent","id":"q"}',
              '{"Event":"com.example.lineage.LineageEvent","plan":"y"}']
    write_files(tmp_path / "in", {"local-1532512550423": "\n".join([first, *custom, rest])})
    r = cli("ingest", tmp_path / "in", "--db", db_path)
    assert r.exit_code == 0, r.err
    assert _rows(db_path, "SELECT reason, count, first_line FROM rejects") == [
        ("Spark event of a type not Spark's own, not read: com.example.lineage.LineageEvent", 2, 2)]


def test_threadless_query_tie_opens_and_closes():
    """A new id opens a new query; a query's end closes it (nothing after is its)."""
    # SOURCE: Hive 2.x ql/Driver.java's "Executing command(queryId=…)" and "Completed executing
    # command(queryId=…); Time taken: … seconds", MoveTask's "Loading data to table …", in a log4j1
    # layout without thread (the seed-004 layout).
    head = "2018-09-28 10:15:0{} INFO  ql.Driver (Driver.java:execute(1)) - "
    text = "\n".join([
        head.format(1) + "Executing command(queryId=hive_1): insert overwrite table t select 1",
        head.format(2) + "Loading data to table db.t",
        head.format(3) + "Executing command(queryId=hive_2): insert into table t select 2",
        head.format(4) + "Loading data to table db.t",
        head.format(5) + "Completed executing command(queryId=hive_2); Time taken: 1.5 seconds",
        head.format(6) + "Loading data to table db.u",
    ])
    events, stats = _parse("hive-log4j1", text)
    assert [(e.line_no, e.kind, e.query_id, (e.detail or {}).get("overwrite")) for e in events] == [
        (1, "query_start", "hive_1", None), (2, "load", "hive_1", True),
        (3, "query_start", "hive_2", None), (4, "load", "hive_2", None),
        (5, "query_end", "hive_2", None), (6, "load", None, None)]
    assert stats.rejected == 0
    assert _parse("hive-console", "hive> \n")[1].rejected == 0  # an empty prompt is no query


def test_a_range_in_the_middle_of_a_file_ties_no_step():
    """A worker's range counts lines from its own start: a label from them would be wrong."""
    from commitsleuth.parsers.scan import BlockScanner

    data = (SQOOP_HIVE_IMPORT.encode())
    for at_start, want in ((True, "query at line 1"), (False, None)):
        scanner = BlockScanner(get_format("hadoop-client"), SourceContext("x"), ParseStats(), 1, at_start=at_start)
        events = [*scanner.feed(0, data), *scanner.close()]
        assert [(e.kind, e.query_id) for e in events if e.kind == "load"] == [("load", want)]
