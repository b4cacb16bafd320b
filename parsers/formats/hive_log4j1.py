"""Hive 0.x/1.x client, HiveServer2 and metastore logs written through log4j1 layouts."""

import re

from commitsleuth.parsers.base import Format, Sample
from commitsleuth.parsers.formats._heads import ISO_TS, LEVEL, LOCATION, LOGGER, MESSAGE, THREAD

# %d{ISO8601} %-5p [%t(%x)]: %c{2} (%F:%M(%L)) - %m%n, thread and location optional; the
# thread sometimes carries the session id ("[778c…645 main]") and no colon.
HEAD = re.compile(rf"{ISO_TS} +{LEVEL} +(?:{THREAD}:? +)?{LOGGER}(?: +{LOCATION})? +- {MESSAGE}")

FORMAT = Format(
    name="hive-log4j1",
    description="Hive 0.x/1.x, HiveServer2 and metastore, log4j1 layouts: "
    "'%d{ISO8601} %-5p [%t]: %c{2} (%F:%M(%L)) - %m%n', thread and location optional",
    head=HEAD,
    kinds=("dedup_remove", "publish", "rename", "dir_create", "delete", "load", "query_start",
           "query_end", "job_start", "partition_add", "partition_alter", "partition_drop",
           "partition_exists", "stats", "job_end"),
    samples=(
        Sample(
            "2013-05-30 10:20:01,123 INFO  exec.Utilities (Utilities.java:removeTempOrDuplicateFiles(1396)) - "
            "Duplicate taskid file removed: hdfs://nn/tmp/hive-deploy/hive_2013-05-30_10-13-59_124_86/"
            "_tmp.-ext-10000.intermediate/hp_cal_month=2013-04/000005_1 with length 666922. Existing file: "
            "hdfs://nn/tmp/hive-deploy/hive_2013-05-30_10-13-59_124_86/_tmp.-ext-10000.intermediate/"
            "hp_cal_month=2013-04/000005_0 with length 666922",
            "dedup_remove",
        ),
        Sample(
            "2015-03-02 11:04:09,770 INFO  [main]: exec.Utilities (Utilities.java:mvFileToFinalPath(1712)) - "
            "Moving tmp dir: hdfs://nn/user/hive/warehouse/t/.hive-staging_hive_2015-03-02_11-03-55_093_1/"
            "_tmp.-ext-10000 to: hdfs://nn/user/hive/warehouse/t/.hive-staging_hive_2015-03-02_11-03-55_093_1/"
            "-ext-10000",
            "publish",
        ),
        Sample(
            "2015-03-02 11:03:55,101 INFO  [main]: ql.Driver (Driver.java:compile(411)) - "
            "Compiling command(queryId=hive_20150302110355_4a1b): insert overwrite table t select 1",
            "query_start",
        ),
        Sample(
            "2026-09-07 00:08:10,130 INFO  [778c1f2e-5d7a-4c0b-9a55-0d3c2a1b9645 main] utils.FileUtils "
            "(FileUtils.java:mkdir(167)) - Creating directory if it doesn't exist: "
            "hdfs://nn/user/hive/warehouse/db.db/t/dt=2026-09-06",
            "dir_create",
        ),
        Sample(
            "2018-09-28 10:15:02,448 INFO  [pool-7-thread-121]: metastore.HiveMetaStore "
            "(HiveMetaStore.java:logInfo(773)) - 121: add_partition : db=db tbl=t",
            "partition_add",
        ),
        Sample(
            "2018-09-28 10:15:02,519 ERROR [pool-7-thread-121]: metastore.RetryingHMSHandler "
            "(RetryingHMSHandler.java:invokeInternal(203)) - AlreadyExistsException(message:Partition already "
            "exists: Partition(values:[2018-09-28], dbName:db, tableName:t, createTime:0))",
            "partition_exists",
        ),
        Sample(
            "2018-09-28 10:15:01,002 INFO  [HiveServer2-Background-Pool: Thread-529751]: fs.TrashPolicyDefault "
            "(TrashPolicyDefault.java:moveToTrash(168)) - Moved to trash: hdfs://nn/user/hive/warehouse/db.db/t/"
            "dt=2018-09-28",
            "delete",
        ),
        Sample(
            "2013-05-30 10:13:59,124 INFO  ql.Driver (SessionState.java:printInfo(417)) - "
            "Starting Job = job_201304111550_268224, Tracking URL = http://jt:50030/jobdetails.jsp?jobid=job_201304111550_268224",
            "job_start",
        ),
        Sample(  # a Hive 3.1 hive.log published with a course (BasicStatsTask)
            "2026-09-07 00:08:49,596 INFO  [778c135c-019f-4eef-9e9d-715460a5f645 main] stats.BasicStatsTask "
            "(BasicStatsTask.java:aggregateStats(280)) - Table default.teste_managed stats: [numFiles=1, numRows=1, "
            "totalSize=17, rawDataSize=16]",
            "stats",
        ),
    ),
)
