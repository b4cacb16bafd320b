"""Hadoop clients' console logs in log4j's default console layout '%d{yy/MM/dd HH:mm:ss} %p %c{2}:
%m%n': the MapReduce job client and LocalJobRunner, Sqoop. The layout is Spark's too, and
HiveServer2's operation log's (which keeps Hive's loggers, so a Hive console goes there); the
loggers tell them apart (``marker``)."""

import re

from commitsleuth.parsers.base import Format, Sample
from commitsleuth.parsers.formats.spark_log import YY_HEAD

FORMAT = Format(
    name="hadoop-client",
    description="Hadoop client console (MR job client, LocalJobRunner, Sqoop): "
    "'%d{yy/MM/dd HH:mm:ss} %p %c{2}: %m%n' with Hadoop's or Sqoop's loggers",
    head=YY_HEAD,
    priority=-1,
    marker=re.compile(
        r"\d\d/\d\d/\d\d \d\d:\d\d:\d\d \w+ (?:sqoop|tool|manager|orm|mapreduce|jvm)\.\w+:"
        r"|\d\d/\d\d/\d\d \d\d:\d\d:\d\d \w+ mapred\.(?:LocalJobRunner|Task|MapTask|ReduceTask|Merger|JobClient):"
    ),
    kinds=("attempt_start", "attempt_state", "attempt_end", "commit_allowed", "task_commit", "job_start",
           "job_end", "load", "query_start", "conf"),
    samples=(
        # a published Hadoop 2.5.2 LocalJobRunner run of WordCount
        Sample("16/11/17 17:06:00 INFO mapred.LocalJobRunner: Starting task: attempt_local1677532496_0001_r_000000_0",
               "attempt_start"),
        Sample("16/11/17 17:06:00 INFO mapred.Task: Task 'attempt_local1677532496_0001_r_000000_0' done.",
               "attempt_end"),
        Sample("16/11/17 17:06:01 INFO mapreduce.Job: Job job_local1677532496_0001 completed successfully",
               "job_end"),
    ),
)
