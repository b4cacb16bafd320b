"""Hive 2.x-4.x (HiveServer2, CLI, metastore) through log4j2: '%d{ISO8601} %5p [%t] %c{2}: %m%n'."""

import re

from commitsleuth.parsers.base import Format, Sample
from commitsleuth.parsers.formats._heads import ISO_TS, LEVEL, LOGGER, MESSAGE, THREAD

HEAD = re.compile(rf"{ISO_TS} +{LEVEL} +{THREAD} {LOGGER}: {MESSAGE}")

FORMAT = Format(
    name="hive-log4j2",
    description="Hive 2.x-4.x, HiveServer2 and metastore, log4j2: '%d{ISO8601} %5p [%t] %c{2}: %m%n' "
    "('T' or space in the time)",
    head=HEAD,
    kinds=("dir_create", "delete", "load", "publish", "dedup_remove", "query_start", "query_end",
           "job_start", "partition_add", "partition_alter", "partition_drop", "partition_exists", "stats", "job_end"),
    samples=(
        Sample(
            "2018-09-28T10:15:01,871  INFO [HiveServer2-Background-Pool: Thread-529691] metadata.Hive: "
            "New loading path = hdfs://nn/user/hive/warehouse/db.db/t/.hive-staging_hive_2018-09-28_10-14-57_"
            "310_1/-ext-10000/dt=2018-09-28 with partSpec {dt=2018-09-28}",
            "load",
        ),
        Sample(
            "2018-09-28 10:15:01,870  INFO [HiveServer2-Background-Pool: Thread-529691] exec.Task: "
            "Loading data to table db.t partition (dt=2018-09-28) from hdfs://nn/user/hive/warehouse/db.db/t/"
            ".hive-staging_hive_2018-09-28_10-14-57_310_1/-ext-10000",
            "load",
        ),
        Sample(
            "2018-09-28T10:15:05,120  INFO [HiveServer2-Background-Pool: Thread-529691] ql.Driver: "
            "Completed executing command(queryId=hive_20180928101457_1c2d); Time taken: 7.81 seconds",
            "query_end",
        ),
        Sample(
            "2018-09-28T10:15:02,520  INFO [pool-7-thread-121] metastore.HiveMetaStore: 121: "
            "source:10.1.2.3 alter_partition : tbl=hive.db.t",
            "partition_alter",
        ),
        Sample(
            "2018-09-28T10:15:02,530 ERROR [pool-7-thread-121] metastore.RetryingHMSHandler: "
            "Retrying HMSHandler after 2000 ms (attempt 1 of 10) with error: javax.jdo.JDODataStoreException: "
            "Insert of object failed : Duplicate entry '4412-dt=2018-09-28' for key 'UNIQUEPARTITION'",
            "partition_exists",
        ),
        Sample(
            "2018-09-28T10:15:00,001  INFO [HiveServer2-Background-Pool: Thread-529751] common.FileUtils: "
            "deleting  hdfs://nn/user/hive/warehouse/db.db/t/dt=2018-09-28/000000_0",
            "delete",
        ),
    ),
)
