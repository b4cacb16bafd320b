"""Spark driver and executor logs: '%d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n', the driver log's
'%d{yy/MM/dd HH:mm:ss.SSS} %t %p %c{1}: %m%n%ex' and ISO8601 layouts."""

import re

from commitsleuth.parsers.base import Format, Sample
from commitsleuth.parsers.formats._heads import ISO_TS, LEVEL, LOGGER, MESSAGE, THREAD, YY_TS

YY_HEAD = re.compile(rf"{YY_TS} {LEVEL} {LOGGER}: {MESSAGE}")
# spark.driver.log.layout's default (Spark 3.0+, DriverLogger.DEFAULT_LAYOUT): milliseconds and
# the thread unbracketed, spaces and all ("Executor task launch worker for task 3.0 in stage …").
DRIVER_HEAD = re.compile(
    rf"(?P<date>\d\d/\d\d/\d\d) (?P<time>\d\d:\d\d:\d\d\.\d{{3}}) (?P<thread>\S.*?) {LEVEL} {LOGGER}: {MESSAGE}"
)
# ISO layouts used by vendors; the logger must be Spark's, or this is any Hadoop log.
ISO_HEAD = re.compile(
    rf"{ISO_TS} +{LEVEL} +(?:{THREAD} )?(?P<logger>org\.apache\.spark\.[\w$.]+): {MESSAGE}"
)
SPARK_KINDS = ("attempt_start", "attempt_end", "speculate", "task_commit", "commit_denied", "job_commit",
               "job_abort", "conf")

YY = Format(
    name="spark-log",
    description="Spark 1.x-3.x driver/executor log: '%d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n'",
    head=YY_HEAD,
    kinds=SPARK_KINDS,
    samples=(
        Sample(
            "17/06/09 20:10:57 INFO output.FileOutputCommitter: Saved output of task "
            "'attempt_201706092018_0024_m_000004_1026' to hdfs://10.10.34.11:9000/pjhe/test/1/_temporary/0/"
            "task_201706092018_0024_m_000004",
            "task_commit",
        ),
        Sample("17/06/09 20:10:57 INFO mapred.SparkHadoopMapRedUtil: attempt_201706092018_0024_m_000004_1026: "
               "Committed", "task_commit"),
        Sample(
            "23/05/10 12:00:03 INFO OutputCommitCoordinator: Commit denied for stage=3.0, partition=7: task "
            "attempt 1 already authorized",
            "commit_denied",
        ),
        Sample("23/05/10 12:00:04 INFO FileFormatWriter: Write Job 0f6b4d2c-5b0e-4a7e-9d7f-2a3b4c5d6e7f committed. "
               "Elapsed time: 412 ms.", "job_commit"),
        Sample("17/06/09 20:10:40 INFO executor.CoarseGrainedExecutorBackend: Registered signal handlers for "
               "[TERM, HUP, INT]", None),
        Sample("17/06/09 20:10:45 INFO executor.Executor: Running task 0.0 in stage 0.0 (TID 0)", "attempt_start"),
        Sample("21/08/10 23:48:05 INFO TaskSetManager: Lost task 3.1 in stage 0.0 (TID 4) (ltx1-hcl12291.grid."
               "linkedin.com executor 7): TaskKilled (another attempt succeeded)", "attempt_end"),
        Sample("21/08/10 23:48:04 INFO TaskSetManager: Marking task 3 in stage 0.0 (on ltx1-hcl12291.grid."
               "linkedin.com) as speculatable because it ran more than 2000 ms", "speculate"),
    ),
)

DRIVER = Format(
    name="spark-driver-log",
    description="Spark driver log (spark.driver.log.localDir / dfsDir): "
    "'%d{yy/MM/dd HH:mm:ss.SSS} %t %p %c{1}: %m%n%ex'",
    head=DRIVER_HEAD,
    kinds=SPARK_KINDS,
    samples=(
        # tests/corpus/spark-rapids-tools/driverlog (a Spark 3.3 shell's driver.log)
        Sample("23/11/07 11:00:24.144 dispatcher-event-loop-25 INFO TaskSetManager: Starting task 0.0 in stage "
               "0.0 (TID 0) (localhost, executor driver, partition 0, PROCESS_LOCAL, 4550 bytes) "
               "taskResourceAssignments Map()", "attempt_start"),
        Sample("23/11/07 11:00:24.929 Executor task launch worker for task 43.0 in stage 0.0 (TID 43) INFO "
               "Executor: Finished task 43.0 in stage 0.0 (TID 43). 1998 bytes result sent to driver",
               "attempt_end"),
        Sample("23/11/07 10:59:24.346 main INFO SparkContext: Submitted application: Spark shell", None),
    ),
)

ISO = Format(
    name="spark-log-iso",
    description="Spark driver/executor log in an ISO8601 layout: '%d{ISO8601} %p [%t] %c: %m%n', thread optional",
    head=ISO_HEAD,
    priority=6,
    kinds=SPARK_KINDS,
    samples=(
        Sample(
            "2023-05-10 12:00:05,101 ERROR [Executor task launch worker for task 7.1 in stage 3.0 (TID 41)] "
            "org.apache.spark.mapred.SparkHadoopMapRedUtil: attempt_20230510120003_0003_m_000007_41: "
            "Not committed because the driver did not authorize commit",
            "commit_denied",
        ),
        Sample(
            "2023-05-10 12:00:06,220 ERROR org.apache.spark.sql.execution.datasources.FileFormatWriter: "
            "Aborting job 0f6b4d2c-5b0e-4a7e-9d7f-2a3b4c5d6e7f.",
            "job_abort",
        ),
        Sample(
            "2023-05-10 12:00:03,550 WARN [task-result-getter-2] org.apache.spark.scheduler.TaskSetManager: "
            "Task was denied committing, stage: 3.0, partition: 7, attempt: 1",
            "commit_denied",
        ),
    ),
)
