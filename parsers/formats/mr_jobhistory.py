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


class Unreadable(ValueError):
    """A record without a field Events.avpr declares required (not a union with null), or with
    one of another type: ``decode_lines`` rejects that line alone, this as the reason."""


def _field(e: dict, record: str, key: str, kind: type, required: bool = True):
    """``e[key]`` (an Avro union unwrapped) of JSON type ``kind``; None when absent and not
    ``required``. A record without its key (``jobid``, ``attemptId``) or its time cannot be
    attributed or placed: it is rejected, not stored with the value left out."""
    value = _plain(e.get(key))
    if value is None:
        if required:
            raise Unreadable(f"job-history {record} without {key}")
        return None
    if not isinstance(value, kind) or isinstance(value, bool):
        raise Unreadable(f"job-history {record} with {key} not {'text' if kind is str else 'a whole number'}")
    return value


def _time(e: dict, record: str, key: str):
    """A required time (epoch milliseconds, Avro ``long``), within the calendar's range."""
    value = _field(e, record, key, int)
    try:
        return epoch_ms(value)
    except (OverflowError, ValueError, OSError):
        raise Unreadable(f"job-history {record} with {key} not a time in epoch milliseconds") from None


def _attempt(e: dict, record: str) -> dict:
    return attempt_fields(_field(e, record, "attemptId", str))


def _attempt_start(e: dict, record: str) -> Event:
    fields = _attempt(e, record)
    avataar = _field(e, record, "avataar", str, required=False)  # Hadoop 2.4+
    return Event("attempt_start", ts=_time(e, record, "startTime"), **fields,
                 host=_field(e, record, "trackerName", str, required=False),
                 speculative=None if avataar is None else avataar == "SPECULATIVE",
                 detail={"task_type": e.get("taskType"), "container": e.get("containerId"),
                         "locality": _plain(e.get("locality")), "avataar": avataar})


def _attempt_end(e: dict, record: str) -> Event:
    fields = _attempt(e, record)
    status = _field(e, record, "taskStatus", str, required=False) or _field(e, record, "status", str, required=False)
    detail = {"task_type": e.get("taskType"), "state": e.get("state"), "rack": e.get("rackname")}
    if e.get("error"):
        detail["error"] = e["error"]
    return Event("attempt_end", ts=_time(e, record, "finishTime"), **fields,
                 host=_field(e, record, "hostname", str, required=False),
                 status=_ATTEMPT_END_STATUS.get(status, (status or "").lower() or None), detail=detail)


def _job_start(e: dict, record: str) -> Event:
    job = _field(e, record, "jobid", str)
    return Event("job_start", ts=_time(e, record, "submitTime"), job_id=job,
                 detail={"name": e.get("jobName"), "user": e.get("userName"), "queue": e.get("jobQueueName")})


def _job_end(e: dict, record: str) -> Event:
    job = _field(e, record, "jobid", str)
    # JobFinished has no status: it is the successful end
    status = _field(e, record, "jobStatus", str, required=False) or "SUCCEEDED"
    return Event("job_end", ts=_time(e, record, "finishTime"), job_id=job,
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
        if not isinstance(record, dict) or not isinstance(record.get("event"), dict) \
                or not isinstance(record.get("type"), str):
            if not (isinstance(record, dict) and record.get("type") == "record"):  # the schema
                stats.reject("not a job-history event", line_no, text)
            continue
        stats.records += 1
        handler = _HANDLERS.get(record.get("type"))
        if handler is None:
            continue
        body = _plain(record["event"])
        try:
            if not isinstance(body, dict):
                raise Unreadable(f"job-history {record['type']} without its record")
            ev = handler(body, record["type"])
        except Unreadable as exc:  # this line only: the lines after it are read as ever
            stats.reject(str(exc), line_no, text)
            continue
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
