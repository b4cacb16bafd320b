"""HiveServer2 operation logs (hive.server2.logging.operation.level): verbose and terse layouts."""

import re

from commitsleuth.parsers.base import Format, Sample
from commitsleuth.parsers.formats._heads import LEVEL, MESSAGE, YY_TS

# %d{yy/MM/dd HH:mm:ss} %p %c{2}: %m%n -- the Spark layout too, so the logger must be Hive's.
VERBOSE_HEAD = re.compile(
    rf"{YY_TS} {LEVEL} (?P<logger>(?:ql|exec|log|session|metadata|parse|optimizer|hooks|mr|tez|lockmgr|"
    rf"common|utils|fs|operation|reexec)\.[\w$]+): {MESSAGE}"
)
TERSE_HEAD = re.compile(rf"{LEVEL} +: {MESSAGE}")  # %-5p : %m%n
PATH_HINT = re.compile(r"(^|/)operation_logs/")

VERBOSE = Format(
    name="hs2-oplog-verbose",
    description="HiveServer2 operation log, VERBOSE/PERFORMANCE: '%d{yy/MM/dd HH:mm:ss} %p %c{2}: %m%n'",
    head=VERBOSE_HEAD,
    path_hint=PATH_HINT,
    priority=5,
    kinds=("query_start", "query_end", "job_start", "load", "dir_create", "delete", "publish"),
    samples=(
        Sample(
            "18/09/28 10:14:57 INFO ql.Driver: Executing command(queryId=hive_20180928101457_1c2d): "
            "insert into table db.t partition (dt='2018-09-28') select * from db.src",
            "query_start",
        ),
        Sample(
            "18/09/28 10:15:01 INFO exec.Task: Loading data to table db.t partition (dt=2018-09-28) from "
            "hdfs://nn/user/hive/warehouse/db.db/t/.hive-staging_hive_2018-09-28_10-14-57_310_1/-ext-10000",
            "load",
        ),
    ),
)

TERSE = Format(
    name="hs2-oplog-terse",
    description="HiveServer2 operation log, EXECUTION/NONE: '%-5p : %m%n'",
    head=TERSE_HEAD,
    path_hint=PATH_HINT,
    kinds=("query_start", "query_end", "job_start", "load"),
    samples=(
        Sample("INFO  : Starting Job = job_1538100000000_0042, Tracking URL = http://rm:8088/proxy/"
               "application_1538100000000_0042/", "job_start"),
        Sample("INFO  : Loading data to table db.t partition (dt=2018-09-28) from "
               "hdfs://nn/user/hive/warehouse/db.db/t/.hive-staging_hive_2018-09-28_10-14-57_310_1/-ext-10000",
               "load"),
        Sample("INFO  : Completed compiling command(queryId=hive_20180928101457_1c2d); Time taken: 0.412 seconds",
               None),
    ),
)
