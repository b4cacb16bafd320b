"""Hadoop 1 task stdout: what a task printed without a log head (RCFileMergeMapper's renames).

In a ``userlogs/<job>/<attempt>/stdout`` tree the attempt is only in the path; dumps that
gather several attempts print each attempt id on a line of its own above its output.
"""

import re

from commitsleuth.parsers.base import Format, Sample

FORMAT = Format(
    name="mr1-task-stdout",
    description="Hadoop 1 task stdout, lines without a head; attempt from the path or a header line",
    head=None,
    record_start=re.compile(r"(renamed path |attempt_\d+_\d+_[mr]_\d+_\d+\s*$)"),
    kinds=("rename",),
    path_hint=re.compile(r"(^|/)userlogs/job_[^/]+/attempt_[^/]+/stdout$"),
    samples=(
        Sample(
            "renamed path hdfs://10.2.6.102/tmp/hive-deploy/hive_2013-05-30_10-13-59_124_8643833043783438119/"
            "_task_tmp.-ext-10000/hp_cal_month=2013-04/_tmp.000005_0 to hdfs://10.2.6.102/tmp/hive-deploy/"
            "hive_2013-05-30_10-13-59_124_8643833043783438119/_tmp.-ext-10000/hp_cal_month=2013-04/000005_0 "
            ". File size is 666922",
            "rename",
        ),
    ),
)
