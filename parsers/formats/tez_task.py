"""Tez task and AM logs (tez-container-log4j.properties): '%d{ISO8601} [%p] [%t] |%c{2}|: %m%n'.

The AM writes syslog_dag_<dag> per DAG, each task attempt syslog_<attempt> (TezChild.run), so a
task log's lines belong to the attempt its file name names. Samples: the history line is REAL
(a Hive-on-Tez AM log quoted in a public blog post of 2021-08-25, found with the team's source
search); the others are built from the exact strings of tez-dag TaskImpl.java (canCommit,
RedundantScheduleTransition, AttemptSucceededTransition), TaskAttemptImpl.java (submitted) and
Hive's AbstractFileMergeOperator.java (closeOp, jobCloseOp), because no published log with
them was found.
"""

import re

from commitsleuth.parsers.base import Format, Sample
from commitsleuth.parsers.formats._heads import ISO_TS, MESSAGE

HEAD = re.compile(
    rf"{ISO_TS} \[(?P<level>TRACE|DEBUG|INFO|WARN|ERROR|FATAL)\] \[(?P<thread>[^\]]*)\] "
    rf"\|(?P<logger>[^|]*)\|: {MESSAGE}"
)

FORMAT = Format(
    name="tez-task",
    description="Tez task/AM logs: '%d{ISO8601} [%p] [%t] |%c{2}|: %m%n'",
    head=HEAD,
    # the AM's syslog_dag_<dag> and each attempt's syslog_<attempt> (TezChild)
    path_hint=re.compile(r"(?:^|/)syslog_(?:dag|attempt)_\d+_\d+_\d+(?:_\d+_\d+_\d+)?(?:\.\w+)?$"),
    kinds=("rename", "dedup_remove", "publish", "task_commit", "dir_create", "delete", "attempt_start",
           "attempt_end", "attempt_state", "speculate", "commit_allowed", "commit_denied"),
    samples=(
        Sample(
            "2023-11-02 04:12:40,118 [INFO] [TezChild] |exec.Utilities|: Moving tmp dir: hdfs://nn/warehouse/"
            "db.db/t/.hive-staging_hive_2023-11-02_04-11-50_512_1/_tmp.-ext-10000 to: hdfs://nn/warehouse/db.db/"
            "t/.hive-staging_hive_2023-11-02_04-11-50_512_1/-ext-10000",
            "publish",
        ),
        Sample(
            "2023-11-02 04:12:40,120 [INFO] [TezChild] |exec.Utilities|: Duplicate taskid file removed: "
            "hdfs://nn/warehouse/db.db/t/.hive-staging_hive_1/_tmp.-ext-10000/dt=2023-11-01/000005_1 with length "
            "1048. Existing file: hdfs://nn/warehouse/db.db/t/.hive-staging_hive_1/_tmp.-ext-10000/dt=2023-11-01/"
            "000005_0 with length 2096",
            "dedup_remove",
        ),
        Sample(
            "2021-08-25 14:37:24,329 [INFO] [Dispatcher thread {Central}] |HistoryEventHandler.criticalEvents|: "
            "[HISTORY][DAG:dag_1612602874723_344108_1][Event:TASK_ATTEMPT_FINISHED]: vertexName=Map 1, "
            "taskAttemptId=attempt_1612602874723_344108_1_00_000004_0, creationTime=1629873439340, "
            "allocationTime=1629873440827, startTime=1629873442059, finishTime=1629873444322, timeTaken=2263, "
            "status=FAILED, taskFailureType=FATAL, errorEnum=APPLICATION_ERROR, diagnostics=Error: Error while "
            "running task ( failure ) : java.lang.RuntimeException: java.lang.AssertionError: Output column "
            "number expected to be 0 when isRepeating",
            "attempt_end",
        ),
        Sample(
            "2024-01-05 10:00:12,402 [INFO] [Dispatcher thread {Central}] |impl.TaskAttemptImpl|: TaskAttempt: "
            "[attempt_1704448800000_0007_1_01_000000_1] submitted. Is using containerId: "
            "[container_e07_1704448800000_0007_01_000009] on NM: [node-17.example.com:45454]",
            "attempt_start",
        ),
        Sample(
            "2024-01-05 10:00:11,930 [INFO] [Dispatcher thread {Central}] |impl.TaskImpl|: Scheduling a redundant "
            "attempt for task task_1704448800000_0007_1_01_000000",
            "speculate",
        ),
        Sample(
            "2024-01-05 10:00:40,101 [INFO] [IPC Server handler 3 on 46193] |impl.TaskImpl|: "
            "attempt_1704448800000_0007_1_01_000000_1 given a go for committing the task output.",
            "commit_allowed",
        ),
        Sample(
            "2024-01-05 10:00:41,517 [INFO] [IPC Server handler 7 on 46193] |impl.TaskImpl|: Task not running. "
            "Issuing kill to bad commit attempt attempt_1704448800000_0007_1_01_000000_0",
            "commit_denied",
        ),
        Sample(
            "2024-01-05 10:00:40,560 [INFO] [Dispatcher thread {Central}] |impl.TaskImpl|: Issuing kill to other "
            "attempt attempt_1704448800000_0007_1_01_000000_0 as attempt: attempt_1704448800000_0007_1_01_000000_1 "
            "has succeeded",
            "attempt_state",
        ),
        Sample(
            "2024-01-05 10:00:40,317 [INFO] [TezChild] |exec.OrcFileMergeOperator|: Renamed path hdfs://nn:8020/"
            "tmp/hive/etl/q1/_task_tmp.-ext-10000/dt=2024-01-04/_tmp.000000_1 to hdfs://nn:8020/tmp/hive/etl/q1/"
            "_tmp.-ext-10000/dt=2024-01-04/000000_1(2096 bytes).",
            "rename",
        ),
    ),
)
