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
