"""The metastore audit log (logger HiveMetaStore.audit): 'ugi=%s\\tip=%s\\tcmd=%s\\t'."""

import re

from commitsleuth.parsers.base import Format, Sample
from commitsleuth.parsers.formats._heads import ISO_TS, LEVEL, LOCATION, MESSAGE, THREAD

# Either layout of the Hive log (log4j1 with location, log4j2 without); the logger decides.
HEAD = re.compile(
    rf"{ISO_TS} +{LEVEL} +(?:{THREAD}:? +)?(?P<logger>(?:metastore\.)?HiveMetaStore\.audit)"
    rf"(?:(?: +{LOCATION})? +- |: ){MESSAGE}"
)

FORMAT = Format(
    name="hive-metastore-audit",
    description="Hive metastore audit log, logger HiveMetaStore.audit: 'ugi=… ip=… cmd=<call> : db=… tbl=…[values]'",
    head=HEAD,
    priority=8,
    kinds=("partition_add", "partition_alter", "partition_drop"),
    samples=(
        Sample(
            "2018-09-28 10:15:02,448 INFO  [pool-7-thread-121]: HiveMetaStore.audit "
            "(HiveMetaStore.java:logAuditEvent(309)) - ugi=hive\tip=10.1.2.3\tcmd=add_partition : "
            "db=db tbl=t[2018-09-28]\t",
            "partition_add",
        ),
        Sample(
            "2018-09-28T10:16:40,001  INFO [pool-7-thread-9] HiveMetaStore.audit: ugi=etl (auth:SIMPLE)\t"
            "ip=10.1.2.4\tcmd=source:10.1.2.4 drop_partition_by_name : tbl=hive.db.t part=dt=2018-09-27\t",
            "partition_drop",
        ),
        Sample(
            "2018-09-28 10:15:02,301 INFO  [pool-7-thread-121]: HiveMetaStore.audit "
            "(HiveMetaStore.java:logAuditEvent(309)) - ugi=hive\tip=10.1.2.3\tcmd=get_table : db=db tbl=t\t",
            None,
        ),
    ),
)
