"""Tez task and AM logs (tez-container-log4j.properties): '%d{ISO8601} [%p] [%t] |%c{2}|: %m%n'."""

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
    kinds=("rename", "dedup_remove", "publish", "task_commit", "dir_create", "delete"),
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
    ),
)
