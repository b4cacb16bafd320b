"""The logs people actually have (issue 15): Hive 0.x-3.x Driver, MoveTask and StatsTask lines,
MR task lifecycle in LocalJobRunner output and container syslogs, each with exact facts.

Lines marked REAL are quoted verbatim from sessions published in public tutorials and tickets
(found with the team's source search); lines marked SOURCE are built from the exact strings of
the named Hive/Hadoop source file, because no published log of that layout was found.
"""

from __future__ import annotations

import duckdb
import pytest

from commitsleuth.parsers.messages import parse_message

from conftest import write_files

MESSAGES = [
    # REAL: Hive 1.x CLI console, LOAD DATA … OVERWRITE INTO TABLE ViewRecord PARTITION (recordDate=20140824)
    ("Loading data to table default.viewrecord partition (recorddate=20140824)",
     {"kind": "load", "table_name": "default.viewrecord", "partition_spec": "recorddate=20140824", "path": None}),
    ("Partition default.viewrecord{recorddate=20140824} stats: [num_files: 1, num_rows: 0, "
     "total_size: 3067528656, raw_data_size: 0]",
     {"kind": "stats", "table_name": "default.viewrecord", "partition_spec": "recorddate=20140824",
      "size": 3067528656, "detail": {"num_files": 1, "num_rows": 0, "total_size": 3067528656, "raw_data_size": 0}}),
    ("Table default.viewrecord stats: [num_partitions: 1, num_files: 1, num_rows: 0, total_size: 3067528656, "
     "raw_data_size: 0]",
     {"kind": "stats", "table_name": "default.viewrecord", "partition_spec": None, "size": 3067528656,
      "detail": {"num_partitions": 1, "num_files": 1, "num_rows": 0, "total_size": 3067528656, "raw_data_size": 0}}),
    # REAL: Hive 1.2.1 console
    ("Table default.student stats: [numFiles=3, numRows=0, totalSize=66, rawDataSize=0]",
     {"kind": "stats", "table_name": "default.student", "partition_spec": None, "size": 66,
      "detail": {"num_files": 3, "num_rows": 0, "total_size": 66, "raw_data_size": 0}}),
    # REAL: Hive 2.x/3.x console of an INSERT into a partition whose value has a space
    ("Loading data to table test_hive.students partition (dept=Computer Science)",
     {"kind": "load", "table_name": "test_hive.students", "partition_spec": "dept=Computer Science", "path": None}),
    ("Ended Job = job_1747412899650_0002",
     {"kind": "job_end", "job_id": "job_1747412899650_0002", "status": "success"}),
    ("Launching Job 1 out of 3", {}),
    # REAL: the same console, the merge stages of the conditional task
    ("Stage-4 is selected by condition resolver.",
     {"kind": "conf", "detail": {"key": "hive.conditional_stage", "value": "Stage-4", "selected": True}}),
    ("Stage-3 is filtered out by condition resolver.",
     {"kind": "conf", "detail": {"key": "hive.conditional_stage", "value": "Stage-3", "selected": False}}),
    # REAL: Hive 3.1 hive.log (MoveTask through SessionState.printInfo, with its detail)
    ("Moving data to directory hdfs://localhost:9000/user/hive/warehouse/teste_managed/.hive-staging_hive_"
     "2026-09-07_00-08-10_373_6713271316481655311-1/-ext-10000 from hdfs://localhost:9000/user/hive/warehouse/"
     "teste_managed/.hive-staging_hive_2026-09-07_00-08-10_373_6713271316481655311-1/-ext-10002",
     {"kind": "publish",
      "path": "hdfs://localhost:9000/user/hive/warehouse/teste_managed/.hive-staging_hive_2026-09-07_00-08-10_373_"
              "6713271316481655311-1/-ext-10002",
      "target_path": "hdfs://localhost:9000/user/hive/warehouse/teste_managed/.hive-staging_hive_2026-09-07_00-08-"
                     "10_373_6713271316481655311-1/-ext-10000"}),
    ("Table default.teste_managed stats: [numFiles=1, numRows=1, totalSize=17, rawDataSize=16]",
     {"kind": "stats", "table_name": "default.teste_managed", "partition_spec": None, "size": 17,
      "detail": {"num_files": 1, "num_rows": 1, "total_size": 17, "raw_data_size": 16}}),
    # REAL: HiveServer2 2.x hiveserver2.log
    ("Starting command(queryId=hive_20200915144052_e80d53b2-832e-42a9-88aa-4fe3e5c07bab): SELECT num_service "
     "FROM rep_prd_fbo_project.parametres_cedre_c",
     {"kind": "query_start", "status": "running", "query_id": "hive_20200915144052_e80d53b2-832e-42a9-88aa-4fe3e5c07bab",
      "detail": {"phase": "execute", "command": "SELECT num_service FROM rep_prd_fbo_project.parametres_cedre_c"}}),
    # SOURCE: Hive 0.x ql/Driver.java LOG.info("Starting command: " + queryStr)
    ("Starting command: LOAD DATA INPATH '/in/a.log' INTO TABLE t PARTITION (dt='1', h='2')",
     {"kind": "query_start", "status": "running",
      "detail": {"phase": "execute", "command": "LOAD DATA INPATH '/in/a.log' INTO TABLE t PARTITION (dt='1', h='2')"}}),
    # SOURCE: Hive 0.x-1.x ql/exec/MoveTask.java, several keys, printInfo's " from " detail
    ("Loading data to table db.t partition (dt=2013-01-24, h=12) from hdfs://nn/in/a.log",
     {"kind": "load", "table_name": "db.t", "partition_spec": "dt=2013-01-24/h=12", "path": "hdfs://nn/in/a.log"}),
    # SOURCE: ql/exec/mr/HadoopJobExecHelper.java ("Ended Job = " + jobId + " with errors")
    ("Ended Job = job_1400000000000_0007 with errors",
     {"kind": "job_end", "job_id": "job_1400000000000_0007", "status": "failed"}),
    # SOURCE: Hive 0.x MoveTask "Moving data to: " + targetPath, detail " from " + sourcePath
    ("Moving data to: hdfs://nn/w/t from hdfs://nn/tmp/hive/-ext-10000",
     {"kind": "publish", "path": "hdfs://nn/tmp/hive/-ext-10000", "target_path": "hdfs://nn/w/t"}),
]


@pytest.mark.parametrize("text,fields", MESSAGES, ids=[m[0][:48] for m in MESSAGES])
def test_hive_driver_move_and_stats_lines(text, fields):
    assert parse_message(text) == fields


# REAL: Hadoop 2.5.2 LocalJobRunner console of the WordCount example (published run), the reduce
# attempt from start to the job's end.
LOCAL_JOB_RUNNER = """\
16/11/17 17:06:00 INFO mapred.LocalJobRunner: Starting task: attempt_local1677532496_0001_r_000000_0
16/11/17 17:06:00 INFO mapred.Task: Task:attempt_local1677532496_0001_r_000000_0 is done. And is in the process of committing
16/11/17 17:06:00 INFO mapred.LocalJobRunner: 1 / 1 copied.
16/11/17 17:06:00 INFO mapred.Task: Task attempt_local1677532496_0001_r_000000_0 is allowed to commit now
16/11/17 17:06:00 INFO output.FileOutputCommitter: Saved output of task 'attempt_local1677532496_0001_r_000000_0' to file:/usr/local/hadoop/output/_temporary/0/task_local1677532496_0001_r_000000
16/11/17 17:06:00 INFO mapred.LocalJobRunner: reduce > reduce
16/11/17 17:06:00 INFO mapred.Task: Task 'attempt_local1677532496_0001_r_000000_0' done.
16/11/17 17:06:00 INFO mapred.LocalJobRunner: Finishing task: attempt_local1677532496_0001_r_000000_0
16/11/17 17:06:01 INFO mapreduce.Job: Job job_local1677532496_0001 completed successfully
"""

# The first line REAL (a `yarn logs` excerpt of an MR2 map container, published in a tutorial);
# the rest SOURCE: org/apache/hadoop/mapred/Task.java, YarnChild's '%d %p [%t] %c: %m%n' layout.
MR2_CONTAINER = """\
2021-06-06 13:50:13,612 INFO [main] org.apache.hadoop.mapred.Task: Task:attempt_1612183984688_0028_m_000035_0 is done. And is in the process of committing
2021-06-06 13:50:13,650 INFO [main] org.apache.hadoop.mapred.Task: Task attempt_1612183984688_0028_m_000035_0 is allowed to commit now
2021-06-06 13:50:13,700 INFO [main] org.apache.hadoop.mapred.Task: Task 'attempt_1612183984688_0028_m_000035_0' done.
"""


def _events(db_path):
    with duckdb.connect(str(db_path), read_only=True) as con:
        return con.execute(
            "SELECT s.format, e.line_no, e.kind, e.attempt_id, e.job_id, e.task_id, e.status "
            "FROM events e JOIN sources s USING (source_id) ORDER BY s.uri, e.line_no"
        ).fetchall()


def test_local_job_runner_lifecycle(cli, tmp_path, db_path):
    write_files(tmp_path / "in", {"wordcount.out": LOCAL_JOB_RUNNER})
    r = cli("ingest", tmp_path / "in", "--db", db_path)
    assert r.exit_code == 0, r.err
    a, j, t = "attempt_local1677532496_0001_r_000000_0", "job_local1677532496_0001", "task_local1677532496_0001_r_000000"
    fmt = "hadoop-client"  # Spark's console layout, Hadoop's loggers: not spark-log
    assert _events(db_path) == [
        (fmt, 1, "attempt_start", a, j, t, None),
        (fmt, 2, "attempt_state", a, j, t, "commit_pending"),
        (fmt, 4, "commit_allowed", a, j, t, None),
        (fmt, 5, "task_commit", a, j, t, "success"),
        (fmt, 7, "attempt_end", a, j, t, "success"),
        (fmt, 9, "job_end", None, j, None, "success"),
    ]


def test_mr2_container_lifecycle(cli, tmp_path, db_path):
    write_files(tmp_path / "in", {"syslog": MR2_CONTAINER})
    assert cli("ingest", tmp_path / "in", "--db", db_path).exit_code == 0
    a, j, t = "attempt_1612183984688_0028_m_000035_0", "job_1612183984688_0028", "task_1612183984688_0028_m_000035"
    assert _events(db_path) == [
        ("mr2-yarn", 1, "attempt_state", a, j, t, "commit_pending"),
        ("mr2-yarn", 2, "commit_allowed", a, j, t, None),
        ("mr2-yarn", 3, "attempt_end", a, j, t, "success"),
    ]


def test_hive0x_threadless_log_stats_and_loads(cli, tmp_path, db_path):
    """The seed 004 Hive 0.x fixture (SOURCE strings, see the scenario): every line an event."""
    import yaml
    from importlib import resources

    scenario = resources.files("commitsleuth.forensics.detectors").joinpath(
        "cases", "scenarios", "seed004_hive0x_stats.yml")
    files = yaml.safe_load(scenario.read_text(encoding="utf-8"))["files"]
    write_files(tmp_path / "in", files)
    r = cli("ingest", tmp_path / "in", "--db", db_path)
    assert r.out.splitlines()[0] == "ingested 1 file (1 ok): 8 events, 0 rejected lines"
    with duckdb.connect(str(db_path), read_only=True) as con:
        got = con.execute(
            "SELECT line_no, kind, thread, table_name, partition_spec, size, detail->>'num_files' "
            "FROM events ORDER BY line_no").fetchall()
    spec = "service=serviceX/yyyymmdd=20130124"
    assert got == [
        (1, "query_start", None, None, None, None, None),
        (2, "load", None, "default.accesslog", spec, None, None),
        (3, "stats", None, "default.accesslog", spec, 52428800, "1"),
        (4, "stats", None, "default.accesslog", None, 52428800, "1"),
        (5, "query_start", None, None, None, None, None),
        (6, "load", None, "default.accesslog", spec, None, None),
        (7, "stats", None, "default.accesslog", spec, 49283072, "1"),
        (8, "stats", None, "default.accesslog", None, 49283072, "1"),
    ]


# REAL: a Hive 3.1 hive.log of `INSERT INTO teste_managed` in the default database (a course's
# published session): MoveTask, the load from the staging dir, BasicStatsTask.
HIVE3_DEFAULT_DB = """\
2026-09-07 00:08:47,509 INFO  [778c135c-019f-4eef-9e9d-715460a5f645 main] exec.Task (SessionState.java:printInfo(1227)) - Moving data to directory hdfs://localhost:9000/user/hive/warehouse/teste_managed/.hive-staging_hive_2026-09-07_00-08-10_373_6713271316481655311-1/-ext-10000 from hdfs://localhost:9000/user/hive/warehouse/teste_managed/.hive-staging_hive_2026-09-07_00-08-10_373_6713271316481655311-1/-ext-10002
2026-09-07 00:08:47,525 INFO  [778c135c-019f-4eef-9e9d-715460a5f645 main] exec.Task (SessionState.java:printInfo(1227)) - Loading data to table default.teste_managed from hdfs://localhost:9000/user/hive/warehouse/teste_managed/.hive-staging_hive_2026-09-07_00-08-10_373_6713271316481655311-1/-ext-10000
2026-09-07 00:08:49,596 INFO  [778c135c-019f-4eef-9e9d-715460a5f645 main] stats.BasicStatsTask (BasicStatsTask.java:aggregateStats(280)) - Table default.teste_managed stats: [numFiles=1, numRows=1, totalSize=17, rawDataSize=16]
"""


def test_hive3_default_database_warehouse_path_is_the_tables_location(cli, tmp_path, db_path):
    """``…/warehouse/<table>`` (no ``.db``) is ``default.<table>``; the load and the stats get it."""
    write_files(tmp_path / "in", {"hive.log": HIVE3_DEFAULT_DB})
    assert cli("ingest", tmp_path / "in", "--db", db_path).exit_code == 0
    with duckdb.connect(str(db_path), read_only=True) as con:
        got = con.execute("SELECT line_no, kind, part_table, part_location FROM partition_events "
                          "ORDER BY line_no").fetchall()
    loc = "hdfs://localhost:9000/user/hive/warehouse/teste_managed"
    assert got == [(1, "publish", "default.teste_managed", loc), (2, "load", "default.teste_managed", loc),
                   (3, "stats", "default.teste_managed", loc)]


# REAL: a Sqoop 1.4.6 import's console (published exercise answers), its first lines.
SQOOP = """\
19/03/10 22:29:55 INFO sqoop.Sqoop: Running Sqoop version: 1.4.6-cdh5.7.0
19/03/10 22:29:55 WARN tool.BaseSqoopTool: Setting your password on the command-line is insecure. Consider using -P instead.
19/03/10 22:29:55 INFO manager.MySQLManager: Preparing to use a MySQL streaming resultset.
19/03/10 22:29:55 INFO tool.CodeGenTool: Beginning code generation
19/03/10 22:29:56 INFO manager.SqlManager: Executing SQL statement: SELECT t.* FROM `accounts` AS t LIMIT 1
19/03/10 22:29:56 INFO manager.SqlManager: Executing SQL statement: SELECT t.* FROM `accounts` AS t LIMIT 1
19/03/10 22:29:56 INFO orm.CompilationManager: HADOOP_MAPRED_HOME is /usr/lib/hadoop-mapreduce
Note: /tmp/sqoop-training/compile/3a261093c02d429d212ad28e98b06709/accounts.java uses or overrides a deprecated API.
Note: Recompile with -Xlint:deprecation for details.
19/03/10 22:29:58 INFO orm.CompilationManager: Writing jar file: /tmp/sqoop-training/compile/3a261093c02d429d212ad28e98b06709/accounts.jar
"""


def test_ingest_verbose_says_why_each_format(cli, tmp_path, db_path, corpus):
    """Scores over the first lines; Sqoop's console is not spark-log, Spark's stays spark-log."""
    d = tmp_path / "in"
    write_files(d, {"sqoop.log": SQOOP, "ticket.txt": "".join(f"> {line}\n" for line in HIVE3_DEFAULT_DB.splitlines())})
    (d / "Spark_2k.log").write_bytes((corpus / "loghub" / "Spark_2k.log").read_bytes())
    (d / "HDFS_2k.log").write_bytes((corpus / "loghub" / "HDFS_2k.log").read_bytes())
    r = cli("ingest", d, "--db", db_path, "-v")
    assert r.out.splitlines()[1:] == [
        f"  skipped: {d / 'HDFS_2k.log'}: not a log format commitsleuth reads",
        f"  format of {d / 'HDFS_2k.log'}: no format: none matches 20% of the first 200 lines",
        f"  format of {d / 'Spark_2k.log'}: spark-log: 200 of 200 heads (also hadoop-client 200)",
        f"  format of {d / 'sqoop.log'}: hadoop-client: 8 of 10 heads, its loggers (also spark-log 8)",
        f"  format of {d / 'ticket.txt'}: hive-log4j1: 3 of 3 heads, after a quote margin",
    ]


# SOURCE: `yarn logs` text of Hadoop 2.7+ (LogCLIHelpers: "Container: " + id + " on " + node file
# name host_port; AggregatedLogFormat.LogReader: "LogType:", "Log Upload Time:", "LogLength:",
# "Log Contents:", "End of LogType:"), with Hadoop 3's "LogAggregationType:" line on the second
# container; the syslog lines are the MR2 container fixture above (first one REAL).
YARN_LOGS = """\


Container: container_1612183984688_0028_01_000036 on node05.example.com_45454
===============================================================================
LogType:stderr
Log Upload Time:Sun Jun 06 13:50:20 +0800 2021
LogLength:0
Log Contents:
End of LogType:stderr

LogType:syslog
Log Upload Time:Sun Jun 06 13:50:20 +0800 2021
LogLength:424
Log Contents:
""" + MR2_CONTAINER + """\
End of LogType:syslog



Container: container_1612183984688_0028_01_000037 on node06.example.com_45454
LogAggregationType: AGGREGATED
===============================================================================
LogType:syslog
LogLastModifiedTime:Sun Jun 06 13:50:31 +0800 2021
LogLength:160
LogContents:
2021-06-06 13:50:30,100 INFO [main] org.apache.hadoop.mapred.Task: Task:attempt_1612183984688_0028_m_000035_1 is done. And is in the process of committing
End of LogType:syslog
"""


def test_yarn_logs_container_sections_read_by_their_own_format(cli, tmp_path, db_path):
    write_files(tmp_path / "in", {"application_1612183984688_0028.log": YARN_LOGS})
    r = cli("ingest", tmp_path / "in", "--db", db_path, "-v")
    assert r.out.splitlines() == [
        "ingested 1 file (1 ok): 4 events, 0 rejected lines",
        f"  format of {tmp_path / 'in' / 'application_1612183984688_0028.log'}: yarn-logs: its header on line 1",
    ]
    with duckdb.connect(str(db_path), read_only=True) as con:
        got = con.execute(
            "SELECT e.line_no, e.kind, e.attempt_id, e.status, e.host, e.detail->>'container', "
            "e.detail->>'log_type', e.detail->>'format' FROM events e ORDER BY e.line_no").fetchall()
    c36, c37 = "container_1612183984688_0028_01_000036", "container_1612183984688_0028_01_000037"
    a0, a1 = "attempt_1612183984688_0028_m_000035_0", "attempt_1612183984688_0028_m_000035_1"
    assert got == [
        (15, "attempt_state", a0, "commit_pending", "node05.example.com", c36, "syslog", "mr2-yarn"),
        (16, "commit_allowed", a0, None, "node05.example.com", c36, "syslog", "mr2-yarn"),
        (17, "attempt_end", a0, "success", "node05.example.com", c36, "syslog", "mr2-yarn"),
        (29, "attempt_state", a1, "commit_pending", "node06.example.com", c37, "syslog", "mr2-yarn"),
    ]


# -- Hive on Tez (seed 001, HIVE-27985) -----------------------------------------------------------
# The fixtures are cases/scenarios/seed001_tez_*.yml: SOURCE lines (tez-dag TaskImpl,
# TaskAttemptImpl, HistoryEventHandler; Hive AbstractFileMergeOperator, Utilities), said so there.

TEZ_MESSAGES = [
    # REAL: a Hive-on-Tez AM log quoted in a public blog post (2021-08-25): the history line of a
    # failed attempt; the diagnostics end where the next field begins.
    ("[HISTORY][DAG:dag_1612602874723_344108_1][Event:TASK_ATTEMPT_FINISHED]: vertexName=Map 1, "
     "taskAttemptId=attempt_1612602874723_344108_1_00_000004_0, creationTime=1629873439340, allocationTime="
     "1629873440827, startTime=1629873442059, finishTime=1629873444322, timeTaken=2263, status=FAILED, "
     "taskFailureType=FATAL, errorEnum=APPLICATION_ERROR, diagnostics=Error: Error while running task ( failure ) "
     ": java.lang.RuntimeException: java.lang.AssertionError: Output column number expected to be 0 when "
     "isRepeating, nodeHttpAddress=datanode143-ysten3:8042, counters=Counters: 15",
     {"kind": "attempt_end", "attempt_id": "attempt_1612602874723_344108_1_00_000004_0", "attempt_no": 0,
      "job_id": "dag_1612602874723_344108_1", "task_id": "task_1612602874723_344108_1_00_000004",
      "status": "failed", "host": "datanode143-ysten3", "detail": {"state": "FAILED", "vertex": "Map 1", "diagnostics":
      "Error: Error while running task ( failure ) : java.lang.RuntimeException: java.lang.AssertionError: "
      "Output column number expected to be 0 when isRepeating", "node_http": "datanode143-ysten3:8042"}}),
    # SOURCE: tez-dag TaskImpl.canCommit, the no-go to an attempt that is not running
    ("attempt_1704448800000_0007_1_01_000000_0 with state: KILLED given a no-go for commit because its not running.",
     {"kind": "commit_denied", "attempt_id": "attempt_1704448800000_0007_1_01_000000_0", "attempt_no": 0,
      "job_id": "dag_1704448800000_0007_1", "task_id": "task_1704448800000_0007_1_01_000000",
      "status": "commit_denied", "detail": {"reason": "attempt state KILLED, not running"}}),
    # SOURCE: tez-dag TaskAttemptImpl.handle at DEBUG (the MR AM's words plus " due to event …")
    ("attempt_1704448800000_0007_1_01_000000_0 TaskAttempt Transitioned from RUNNING to KILL_IN_PROGRESS due "
     "to event TA_KILL_REQUEST",
     {"kind": "attempt_state", "attempt_id": "attempt_1704448800000_0007_1_01_000000_0", "attempt_no": 0,
      "job_id": "dag_1704448800000_0007_1", "task_id": "task_1704448800000_0007_1_01_000000",
      "status": "kill_in_progress", "detail": {"from": "RUNNING", "to": "KILL_IN_PROGRESS", "event": "TA_KILL_REQUEST"}}),
    ("task_1704448800000_0007_1_01_000000 Task Transitioned from RUNNING to SUCCEEDED due to event "
     "T_ATTEMPT_SUCCEEDED", {}),
    # SOURCE: Hive AbstractFileMergeOperator.jobCloseOp, after Utilities.mvFileToFinalPath
    ("jobCloseOp moved merged files to output dir: hdfs://nn/w/db.db/t/.hive-staging_hive_1/-ext-10000",
     {"kind": "publish", "path": "hdfs://nn/w/db.db/t/.hive-staging_hive_1/-ext-10000",
      "target_path": "hdfs://nn/w/db.db/t/.hive-staging_hive_1/-ext-10000", "detail": {"step": "jobCloseOp"}}),
    # REAL (loghub Hadoop_2k.log, MapReduce's TaskImpl): the same words as Tez's, known, no event
    # (the MR AM's DefaultSpeculator and attempt transitions already state them).
    ("Scheduling a redundant attempt for task task_1445144423722_0020_m_000000", {}),
    # SOURCE: MapReduce TaskImpl ("Issuing kill to other attempt " + attempt.getID()), no winner named
    ("Issuing kill to other attempt attempt_1445144423722_0020_m_000000_1", {}),
    ("Task succeeded with attempt attempt_1445144423722_0020_m_000003_0", {}),
]


@pytest.mark.parametrize("text,fields", TEZ_MESSAGES, ids=[m[0][:48] for m in TEZ_MESSAGES])
def test_tez_am_and_hive_merge_lines(text, fields):
    assert parse_message(text) == fields


def test_tez_attempt_log_names_its_attempt():
    from commitsleuth.ingest.local import attempt_from_path

    assert attempt_from_path("/logs/node-12/syslog_attempt_1704448800000_0007_1_01_000000_0") == \
        "attempt_1704448800000_0007_1_01_000000_0"
    assert attempt_from_path("/logs/syslog_attempt_1704448800000_0007_1_01_000000_3.gz") == \
        "attempt_1704448800000_0007_1_01_000000_3"
    assert attempt_from_path("/logs/am/syslog_dag_1704448800000_0007_1") is None


def _tez_store(tmp_path, name):
    from commitsleuth.store import Store

    from test_detector_cases import load_case, scenario

    store = Store(tmp_path / "s.duckdb")
    load_case(store, tmp_path / "logs", scenario(name))
    return store


A0, A1 = "attempt_1704448800000_0007_1_01_000000_0", "attempt_1704448800000_0007_1_01_000000_1"


def _by_file(store):
    _, rows = store.query(
        "SELECT regexp_extract(s.uri, '[^/]+/[^/]+$'), s.format, e.kind, count(*) FROM events e "
        "JOIN sources s USING (source_id) GROUP BY ALL ORDER BY ALL")
    return rows


def test_tez_speculative_double_commit_facts(tmp_path):
    """Seed 001: both attempts of merge task 000000 rename their own file; CS101 names them, the
    AM log says where each ran and how it ended."""
    from commitsleuth.forensics.analyze import analyze, evidence

    with _tez_store(tmp_path, "seed001_tez_double_commit") as store:
        assert _by_file(store) == [
            ("am/syslog_dag_1704448800000_0007_1", "tez-task", "attempt_end", 2),
            ("am/syslog_dag_1704448800000_0007_1", "tez-task", "attempt_start", 2),
            ("am/syslog_dag_1704448800000_0007_1", "tez-task", "attempt_state", 1),
            ("am/syslog_dag_1704448800000_0007_1", "tez-task", "speculate", 1),
            (f"node-12/syslog_{A0}", "tez-task", "rename", 1),
            (f"node-17/syslog_{A1}", "tez-task", "rename", 1),
        ]
        _, started = store.query("SELECT attempt_id, host, detail->>'container', task_id, job_id FROM events "
                                 "WHERE kind = 'attempt_start' ORDER BY ts")
        assert started == [
            (A0, "node-12.example.com", "container_e07_1704448800000_0007_01_000004",
             "task_1704448800000_0007_1_01_000000", "dag_1704448800000_0007_1"),
            (A1, "node-17.example.com", "container_e07_1704448800000_0007_01_000009",
             "task_1704448800000_0007_1_01_000000", "dag_1704448800000_0007_1"),
        ]
        _, ended = store.query("SELECT attempt_id, status, host, detail->>'diagnostics' FROM events "
                               "WHERE kind = 'attempt_end' ORDER BY ts")
        assert ended == [
            (A1, "success", "node-17.example.com", None),
            (A0, "killed", "node-12.example.com",
             f"Killed this attempt as other speculative attempt : {A1} succeeded"),
        ]
        _, renames = store.query("SELECT attempt_id, attempt_no, location, partition_spec, table_name, file_name, "
                                 "size FROM events WHERE kind = 'rename' ORDER BY ts")
        loc = "hdfs://nn:8020/warehouse/tablespace/external/hive/sales.db/orders"
        assert renames == [(A1, 1, loc, "dt=2024-01-04", "sales.orders", "000000_1", 2096),
                           (A0, 0, loc, "dt=2024-01-04", "sales.orders", "000000_0", 2096)]
        (found,) = analyze(store)
        assert (found.code, found.actors) == ("CS101", [A0, A1])
        assert found.summary == (
            f"task 000000 published by 2 attempts into dt=2024-01-04: {A0} (on node-12.example.com, "
            f"container_e07_1704448800000_0007_01_000004), {A1} (on node-17.example.com, "
            "container_e07_1704448800000_0007_01_000009)")
        assert [(e.uri.rsplit("/", 1)[-1], e.line_no) for e in evidence(store, found.evidence)] == [
            ("syslog_dag_1704448800000_0007_1", 2), ("syslog_dag_1704448800000_0007_1", 4),
            (f"syslog_{A1}", 2), (f"syslog_{A0}", 2)]


def test_tez_hive27985_late_rename_facts(tmp_path):
    """The killed attempt renames while HiveServer2 is removing duplicates: CS102 names it, with the
    AM's kill, HiveServer2's first dedup line and its own rename as evidence."""
    from commitsleuth.forensics.analyze import analyze, evidence

    with _tez_store(tmp_path, "seed001_tez_late_commit") as store:
        _, kinds = store.query("SELECT kind, count(*) FROM events GROUP BY ALL ORDER BY ALL")
        assert kinds == [("attempt_end", 4), ("attempt_start", 4), ("attempt_state", 2), ("dedup_remove", 1),
                         ("publish", 1), ("rename", 4), ("speculate", 2)]
        assert store.count("rejects") == 0
        double, late = analyze(store)
        assert (double.code, double.actors) == ("CS101", [A0, A1])
        assert (late.code, late.actors, late.partition_spec) == ("CS102", [A0], "dt=2024-01-04")
        assert late.summary == (f"{A0} published into dt=2024-01-04 after its attempt was killed and "
                                "after the job began removeTempOrDuplicateFiles")
        assert [(e.uri.rsplit("/", 1)[-1], e.line_no, e.kind) for e in evidence(store, late.evidence)] == [
            ("syslog_dag_1704448800000_0007_1", 12, "attempt_state"),
            ("hiveserver2.log", 1, "dedup_remove"),
            (f"syslog_{A0}", 2, "rename"),
        ]


def test_tez_fenced_speculation_facts(tmp_path):
    """HIVE-27899's canCommit: the go to the winner and the refusal to the killed loser are events."""
    from commitsleuth.forensics.analyze import analyze

    with _tez_store(tmp_path, "seed001_tez_speculation_fenced") as store:
        _, rows = store.query("SELECT kind, attempt_id, status, detail->>'reason' FROM events "
                              "WHERE kind IN ('commit_allowed', 'commit_denied', 'attempt_state') ORDER BY ts")
        assert rows == [("commit_allowed", A1, None, None), ("attempt_state", A0, "kill_requested", None),
                        ("commit_denied", A0, "commit_denied", "task not running")]
        assert analyze(store) == []


def _yarn_logs_of(files: dict[str, str], containers: dict[str, tuple[str, str]]) -> str:
    """The files of a fixture as `yarn logs` shows them (Hadoop 3 headers, as YARN_LOGS above):
    ``containers`` maps each file to (container id, host_port)."""
    out = []
    for name, text in files.items():
        container, node = containers[name]
        log_type = name.rsplit("/", 1)[-1]
        out += [f"Container: {container} on {node}", "LogAggregationType: AGGREGATED", "=" * 79,
                f"LogType:{log_type}", "LogLastModifiedTime:Fri Jan 05 10:01:02 +0000 2024",
                f"LogLength:{len(text.encode())}", "LogContents:", text.rstrip("\n"),
                f"End of LogType:{log_type}", "", ""]
    return "\n".join(out) + "\n"


def test_tez_double_commit_from_yarn_logs(tmp_path):
    """The same seed-001 logs as a Tez application's `yarn logs` output: each task section's
    LogType (syslog_<attempt>) names its attempt, the container header its host; CS101 is the same."""
    from commitsleuth.forensics.analyze import analyze
    from commitsleuth.ingest import ingest
    from commitsleuth.store import Store

    from test_detector_cases import scenario

    files = scenario("seed001_tez_double_commit")["files"]
    text = _yarn_logs_of(files, {
        "am/syslog_dag_1704448800000_0007_1": ("container_e07_1704448800000_0007_01_000001", "node-11.example.com_45454"),
        f"node-12/syslog_{A0}": ("container_e07_1704448800000_0007_01_000004", "node-12.example.com_45454"),
        f"node-17/syslog_{A1}": ("container_e07_1704448800000_0007_01_000009", "node-17.example.com_45454"),
    })
    write_files(tmp_path / "in", {"application_1704448800000_0007.log": text})
    with Store(tmp_path / "s.duckdb") as store:
        report = ingest(store, [str(tmp_path / "in")])
        assert not report.failed
        _, rows = store.query("SELECT kind, attempt_id, host, detail->>'log_type' FROM events "
                              "WHERE kind = 'rename' ORDER BY ts")
        assert rows == [("rename", A1, "node-17.example.com", f"syslog_{A1}"),
                        ("rename", A0, "node-12.example.com", f"syslog_{A0}")]
        assert store.count("rejects") == 0
        (found,) = analyze(store)
        assert (found.code, found.actors, found.partition_spec) == ("CS101", [A0, A1], "dt=2024-01-04")
        assert "(on node-12.example.com, container_e07_1704448800000_0007_01_000004)" in found.summary
