"""Hive 0.x/1.x client and HiveServer2 logs written through log4j1 layouts."""

import re

from commitsleuth.parsers.base import Format, Sample, parse_ts


def head_fields(tree) -> dict:
    date, time, level, *rest = tree.children
    out = {"ts": parse_ts(str(date), str(time)), "detail": {"level": str(level)}}
    message = rest[-1]
    for node in rest[:-1]:
        if getattr(node, "data", None) == "thread":
            out["thread"] = str(node.children[0])
        elif getattr(node, "type", None) == "LOGGER":
            out["detail"]["logger"] = str(node)
    out["message"] = str(message) if message is not None else ""
    return out


FORMAT = Format(
    name="hive-log4j1",
    description="Hive 0.x/1.x and vendor log4j1 layouts: "
    "'%d{ISO8601} %-5p [%t]: %c{2} (%F:%M(%L)) - %m%n', thread optional",
    head="log4j1",
    record_start=re.compile(
        r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[,.]\d{3} +(TRACE|DEBUG|INFO|WARN|ERROR|FATAL) +"
        r"(\[[^\]]*\]:? +)?[\w$.]+ +\("
    ),
    head_fields=head_fields,
    kinds=("dedup_remove", "publish", "rename"),
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
            None,
        ),
    ),
)
