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
# log4j2's '%d{ISO8601} [%t] %-5p %c %x - %m%n' (a common log4j2.properties for Spark 3.x): the
# thread first, the full logger, then the NDC, which log4j2 prints as "[]" when empty (log4j 1
# prints nothing, leaving two spaces). The loggers are Spark's or the Hadoop/Parquet classes a
# Spark job logs through (FileOutputCommitter), or this is any Java application's log.
LOG4J2_HEAD = re.compile(
    rf"{ISO_TS} \[(?P<thread>[^\]]*)\] {LEVEL} +"
    rf"(?P<logger>org\.apache\.(?:spark|hadoop|parquet)\.[\w$.]+) +(?:\[[^\]]*\] +)?- {MESSAGE}"
)
SPARK_KINDS = ("attempt_start", "attempt_end", "attempt_state", "speculate", "task_commit", "commit_denied", "job_commit",
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

LOG4J2 = Format(
    name="spark-log4j2",
    description="Spark 3.x driver/executor log, log4j2 '%d{ISO8601} [%t] %-5p %c %x - %m%n'",
    head=LOG4J2_HEAD,
    priority=6,
    kinds=SPARK_KINDS,
    # Built from the layout and the exact strings of Spark's TaskSetManager ("Starting task %s in
    # stage %s (TID %d) (%s, executor %s, partition %d, %s, %d bytes) %s", "Lost task %s in stage %s
    # (TID %d) (%s executor %s): %s"), FileFormatWriter ("Aborting job ${description.uuid}.") and
    # Executor ("Running task %s in stage %s (TID %d)"); no published log of this layout was found.
    samples=(
        Sample("2024-03-05T10:15:02,311 [dispatcher-event-loop-1] INFO  org.apache.spark.scheduler.TaskSetManager [] - "
               "Starting task 3.0 in stage 2.0 (TID 11) (worker-2.example.com, executor 1, partition 3, "
               "PROCESS_LOCAL, 7650 bytes) taskResourceAssignments Map()", "attempt_start"),
        Sample("2024-03-05T10:15:09,874 [task-result-getter-2] WARN  org.apache.spark.scheduler.TaskSetManager [] - "
               "Lost task 3.0 in stage 2.0 (TID 11) (worker-2.example.com executor 1): "
               "java.io.IOException: Connection reset by peer", "attempt_end"),
        Sample("2024-03-05 10:15:21,002 [Thread-4] ERROR org.apache.spark.sql.execution.datasources.FileFormatWriter  - "
               "Aborting job 0f6b4d2c-5b0e-4a7e-9d7f-2a3b4c5d6e7f.", "job_abort"),
        Sample("2024-03-05T10:15:00,118 [main] INFO  org.apache.spark.SparkContext [] - "
               "Submitted application: orders-daily", None),
    ),
)
