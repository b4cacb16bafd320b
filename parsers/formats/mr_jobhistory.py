"""MapReduce job-history files (``.jhist``, Hadoop 2.x+): the JobHistory server's record of one
job, written by the AppMaster's JobHistoryEventHandler as Avro JSON: a ``Avro-Json`` line, the
schema, then one ``{"type": …, "event": {<record class>: {…}}}`` per line.

Each attempt's start and end is stated by the AppMaster with its host, container and, from Hadoop
2.4 on, whether it was a speculative copy (``avataar``: ``VIRGIN`` or ``SPECULATIVE``). Field
names are those of Hadoop's ``Events.avpr`` (TaskAttemptStarted, MapAttemptFinished,
ReduceAttemptFinished, TaskAttemptFinished, TaskAttemptUnsuccessfulCompletion, JobSubmitted,
JobFinished, JobUnsuccessfulCompletion); optional fields are Avro unions, ``{"string": "…"}``.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator

import orjson

from commitsleuth.model import Event
from commitsleuth.parsers.attempts import attempt_fields
from commitsleuth.parsers.base import Format, Sample
from commitsleuth.parsers.spark_events import epoch_ms

_ATTEMPT_END_STATUS = {"SUCCEEDED": "success", "FAILED": "failed", "KILLED": "killed"}
_JOB_END_STATUS = {"SUCCEEDED": "success", "FAILED": "failed", "KILLED": "killed", "ERROR": "failed"}


def _plain(value):
    """An Avro union's value: ``{"string": "x"}`` -> ``"x"``; anything else as it is."""
    if isinstance(value, dict) and len(value) == 1:
        return next(iter(value.values()))
    return value


def _attempt(e: dict) -> dict:
    return attempt_fields(e["attemptId"]) if e.get("attemptId") else {}


def _attempt_start(e: dict) -> Event:
    avataar = _plain(e.get("avataar"))
    return Event("attempt_start", ts=epoch_ms(e.get("startTime")), **_attempt(e),
                 host=e.get("trackerName"), speculative=None if avataar is None else avataar == "SPECULATIVE",
                 detail={"task_type": e.get("taskType"), "container": e.get("containerId"),
                         "locality": _plain(e.get("locality")), "avataar": avataar})


def _attempt_end(e: dict) -> Event:
    status = e.get("taskStatus") or e.get("status")
    detail = {"task_type": e.get("taskType"), "state": e.get("state"), "rack": e.get("rackname")}
    if e.get("error"):
        detail["error"] = e["error"]
    return Event("attempt_end", ts=epoch_ms(e.get("finishTime")), **_attempt(e),
                 host=e.get("hostname"), status=_ATTEMPT_END_STATUS.get(status, (status or "").lower() or None),
                 detail=detail)


def _job_start(e: dict) -> Event:
    return Event("job_start", ts=epoch_ms(e.get("submitTime")), job_id=e.get("jobid"),
                 detail={"name": e.get("jobName"), "user": e.get("userName"), "queue": e.get("jobQueueName")})


def _job_end(e: dict) -> Event:
    status = e.get("jobStatus") or "SUCCEEDED"  # JobFinished has none: it is the successful end
    return Event("job_end", ts=epoch_ms(e.get("finishTime")), job_id=e.get("jobid"),
                 status=_JOB_END_STATUS.get(status, status.lower()),
                 detail={k: e[k] for k in ("finishedMaps", "finishedReduces", "failedMaps", "failedReduces")
                         if k in e})


_HANDLERS = {}
for _kind in ("MAP", "REDUCE", "SETUP", "CLEANUP"):
    _HANDLERS[f"{_kind}_ATTEMPT_STARTED"] = _attempt_start
    for _end in ("FINISHED", "FAILED", "KILLED"):
        _HANDLERS[f"{_kind}_ATTEMPT_{_end}"] = _attempt_end
_HANDLERS.update({"JOB_SUBMITTED": _job_start, "JOB_FINISHED": _job_end, "JOB_FAILED": _job_end,
                  "JOB_KILLED": _job_end, "JOB_ERROR": _job_end})


def decode_lines(lines: Iterable[tuple[int, int, str]], ctx, stats) -> Iterator[Event]:
    """Events of a job-history file's lines; the ``Avro-Json`` line and the schema are its header,
    anything else that is not one history event is rejected and counted."""
    for line_no, offset, text in lines:
        stats.lines += 1
        if not text.strip() or text.strip() == "Avro-Json":
            continue
        try:
            record = orjson.loads(text)
        except orjson.JSONDecodeError:
            stats.reject("invalid JSON in a job-history file", line_no, text)
            continue
        if not isinstance(record, dict) or not isinstance(record.get("event"), dict):
            if not (isinstance(record, dict) and record.get("type") == "record"):  # the schema
                stats.reject("not a job-history event", line_no, text)
            continue
        stats.records += 1
        handler = _HANDLERS.get(record.get("type"))
        if handler is None:
            continue
        ev = handler(_plain(record["event"]) or {})
        ev.source_id, ev.line_no, ev.byte_offset, ev.raw = ctx.source_id, line_no, offset, text
        stats.events += 1
        yield ev


FORMAT = Format(
    name="mr-jobhistory",
    description="MapReduce job-history file (.jhist, Avro JSON), Hadoop 2.x-3.x",
    head=None,
    decoder=decode_lines,
    record_start=re.compile(r'\{"type":"[A-Z_]+","event":\{'),
    path_hint=re.compile(r"\.jhist$"),
    claims=re.compile(r"^Avro-Json$"),
    priority=10,
    kinds=("job_start", "job_end", "attempt_start", "attempt_end"),
    samples=(
        # tests/corpus/dr-elephant/…/job_1526555215992_0001-…-QuasiMonteCarlo-….jhist
        Sample(
            '{"type":"MAP_ATTEMPT_STARTED","event":{"org.apache.hadoop.mapreduce.jobhistory.TaskAttemptStarted":'
            '{"taskid":"task_1526555215992_0001_m_000000","taskType":"MAP","attemptId":'
            '"attempt_1526555215992_0001_m_000000_0","startTime":1526555651139,"trackerName":"172.23.244.182",'
            '"httpPort":8042,"shufflePort":13562,"containerId":"container_1526555215992_0001_01_000002",'
            '"locality":{"string":"NODE_LOCAL"},"avataar":{"string":"VIRGIN"}}}}',
            "attempt_start",
        ),
        Sample(
            '{"type":"JOB_SUBMITTED","event":{"org.apache.hadoop.mapreduce.jobhistory.JobSubmitted":{"jobid":'
            '"job_1526555215992_0001","jobName":"QuasiMonteCarlo","userName":"user","submitTime":1526555642677,'
            '"jobConfPath":"hdfs://127.0.0.1:9000/tmp/hadoop-yarn/staging/user/.staging/job_1526555215992_0001/'
            'job.xml","acls":{},"jobQueueName":"default","workflowId":{"string":""},"workflowName":{"string":""},'
            '"workflowNodeName":{"string":""},"workflowAdjacencies":{"string":""},"workflowTags":{"string":""}}}}',
            "job_start",
        ),
        Sample(
            '{"type":"AM_STARTED","event":{"org.apache.hadoop.mapreduce.jobhistory.AMStarted":{"applicationAttemptId":'
            '"appattempt_1526555215992_0001_000001","startTime":1526555646448,"containerId":'
            '"container_1526555215992_0001_01_000001","nodeManagerHost":"172.23.244.182","nodeManagerPort":54690,'
            '"nodeManagerHttpPort":8042}}}',
            None,
        ),
    ),
)
