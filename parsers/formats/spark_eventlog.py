"""Spark event logs: one JSON listener event per line (plain; compressed and rolling via readers)."""

import re

from commitsleuth.parsers.base import Format, Sample
from commitsleuth.parsers.spark_events import decode_lines

FORMAT = Format(
    name="spark-eventlog",
    description="Spark event log (JSON lines of listener events), Spark 1.x-4.x",
    head=None,
    decoder=decode_lines,
    record_start=re.compile(r'\s*\{\s*"Event"\s*:'),
    kinds=("app_start", "app_end", "conf", "job_start", "job_end", "stage_start", "stage_end",
           "attempt_start", "attempt_end", "commit_denied", "exclude", "query_start", "query_end"),
    priority=10,
    samples=(
        Sample(
            '{"Event":"SparkListenerTaskStart","Stage ID":0,"Stage Attempt ID":0,"Task Info":{"Task ID":4,'
            '"Index":3,"Attempt":1,"Launch Time":1628638084499,"Executor ID":"7","Host":"ltx1-hcl12291.grid.'
            'linkedin.com","Locality":"PROCESS_LOCAL","Speculative":true,"Getting Result Time":0,"Finish Time":0,'
            '"Failed":false,"Killed":false,"Accumulables":[]}}',
            "attempt_start",
        ),
        Sample(
            '{"Event":"SparkListenerJobEnd","Job ID":1,"Completion Time":1422981784108,"Job Result":'
            '{"Result":"JobFailed","Exception":{"Message":"Job aborted due to stage failure"}}}',
            "job_end",
        ),
    ),
)
