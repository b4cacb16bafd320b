"""Spark listener events (the event-log JSON) -> canonical events.

One decoder for event logs and live capture: the live listener serialises each event with
Spark's own ``JsonProtocol`` into exactly the JSON an event log holds, and hands it here.
Field variants across Spark 1.x-4.x are handled here (``Partition ID`` is absent before 3.4,
``Executor ID`` is ``<driver>`` in 1.x, blacklist events became exclude events in 3.1).
Event-log times are epoch milliseconds; they are stored as UTC.

A value of a JSON type Spark never writes where the decoder stores it or names something
with it (an id as text, as a fraction or past its column's range, a time as text, a flag as a
number, an object as a list) raises ``OddValue``: ``decode_line`` rejects that line alone,
the field named in the reason. An executor id or a job's SQL execution id written as a number
is stored as its digits: Spark writes both as text of decimal digits, so the digits are the id.
A time with a fraction of a millisecond is kept as it is.
"""

from __future__ import annotations

import datetime as dt
from typing import Iterable, Iterator

import orjson

from commitsleuth.ingest.eventlogs import app_id_of
from commitsleuth.model import Event
from commitsleuth.parsers.spark_identity import event_key, spark_event_name
from commitsleuth.parsers.spark_plan import write_target
from commitsleuth.redact import honour_spark_conf

# Configuration that decides how output is committed (BRIEF §3; issue: live capture).
COMMIT_CONF = (
    "spark.speculation",
    "spark.hadoop.mapreduce.fileoutputcommitter.algorithm.version",
    "spark.hadoop.mapred.output.committer.class",
    "spark.hadoop.mapreduce.outputcommitter.factory.scheme.s3a",
    "spark.hadoop.fs.s3a.committer.name",
    "spark.sql.sources.partitionOverwriteMode",
    "spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs",  # _SUCCESS is optional (CS105)
    "spark.sql.sources.commitProtocolClass",
    "spark.sql.parquet.output.committer.class",
    "spark.hadoop.outputCommitCoordination.enabled",
    "spark.hadoop.spark.sql.sources.outputCommitCoordination.enabled",
)

_END_STATUS = {
    "Success": "success",
    "TaskKilled": "killed",
    "TaskCommitDenied": "commit_denied",
    "ExceptionFailure": "failed",
    "FetchFailed": "failed",
    "ExecutorLostFailure": "failed",
    "TaskResultLost": "failed",
    "Resubmitted": "resubmitted",
    "UnknownReason": "failed",
}


# Scheduler exclusion: "blacklist" names before Spark 3.1, "exclude" names since.
EXCLUSION_EVENTS = {
    "SparkListenerExecutorBlacklisted": ("executor", "excluded"),
    "SparkListenerExecutorExcluded": ("executor", "excluded"),
    "SparkListenerExecutorBlacklistedForStage": ("executor", "excluded"),
    "SparkListenerExecutorExcludedForStage": ("executor", "excluded"),
    "SparkListenerNodeBlacklisted": ("node", "excluded"),
    "SparkListenerNodeExcluded": ("node", "excluded"),
    "SparkListenerNodeBlacklistedForStage": ("node", "excluded"),
    "SparkListenerNodeExcludedForStage": ("node", "excluded"),
    "SparkListenerExecutorUnblacklisted": ("executor", "lifted"),
    "SparkListenerExecutorUnexcluded": ("executor", "lifted"),
    "SparkListenerNodeUnblacklisted": ("node", "lifted"),
    "SparkListenerNodeUnexcluded": ("node", "lifted"),
}


class OddValue(ValueError):
    """A field of a Spark event whose JSON type or range the store cannot hold as the decoder
    reads it (a type Spark's JsonProtocol never writes there): ``decode_line`` rejects the line,
    with this as the reason, and goes on with the next."""

    def __init__(self, key: str, expected: str):
        super().__init__(f"Spark event with {key} not {expected}")


class Missing(OddValue):
    """A field Spark's JsonProtocol always writes and the event cannot be stored without: the
    id that names what it states (a job's, a stage's, a task's, a SQL execution's). The line is
    rejected; it is never stored with the id left out or written as the text "None"."""

    def __init__(self, key: str, event: str):
        ValueError.__init__(self, f"{event} without {key}")


_INT32 = 1 << 31
_INT64 = 1 << 63


def _obj(d: dict, key: str) -> dict:
    """An object field; absent or null reads as empty."""
    value = d.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise OddValue(key, "an object")
    return value


def _whole(d: dict, key: str, default=None, bound: int = _INT64):
    """An id or count: a JSON integer (not a boolean, not a float: it names something, and
    ``3.0`` would write ``task 3.0.0``) in the range of the column it goes to; or None."""
    value = d.get(key, default)
    if value is None or (type(value) is int and -bound <= value < bound):
        return value
    raise OddValue(key, "a whole number" if bound == _INT64 else "a 32-bit whole number")


def _or(value, default):
    """A value, or Spark's default for it when the field is absent or null (its ``jsonOption``)."""
    return default if value is None else value


def _key(d: dict, key: str, event: str, bound: int = _INT64) -> int:
    """An id the event is about (``_whole``), which it must carry."""
    value = _whole(d, key, bound=bound)
    if value is None:
        raise Missing(key, event)
    return value


def _text(d: dict, key: str):
    """A name (host, application id, reason): a JSON string, or None."""
    value = d.get(key)
    if value is None or isinstance(value, str):
        return value
    raise OddValue(key, "text")


def _name(d: dict, key: str):
    """An id Spark writes as text but whose values are decimal numbers (an executor id, a SQL
    execution id in job properties): a JSON integer is stored as its digits, which is
    unambiguous; any other type is not."""
    value = d.get(key)
    if type(value) is int:
        return str(value)
    if value is None or isinstance(value, str):
        return value
    raise OddValue(key, "text or a whole number")


def _time(d: dict, key: str) -> dt.datetime | None:
    """Epoch milliseconds; 0 or absent is no time. A fraction is kept (it is exact), a
    boolean, text or a time out of the calendar's range is not a time."""
    value = d.get(key)
    if value is None or (type(value) in (int, float) and not value):
        return None
    if type(value) in (int, float):
        try:
            return epoch_ms(value)
        except (OverflowError, ValueError, OSError):
            pass
    raise OddValue(key, "a time in epoch milliseconds")


def _pairs(e: dict, key: str) -> dict:
    """Properties arrive as a JSON object or, in other versions, as a list of [key, value]."""
    value = e.get(key)
    if isinstance(value, dict):
        return dict(value)
    if value is not None and not isinstance(value, list):
        raise OddValue(key, "an object or a list of pairs")
    return {p[0]: p[1] for p in value or [] if isinstance(p, (list, tuple)) and len(p) == 2
            and isinstance(p[0], str)}


def epoch_ms(value) -> dt.datetime | None:
    if not value:
        return None
    return dt.datetime.fromtimestamp(value / 1000, dt.timezone.utc).replace(tzinfo=None)


def attempt_label(stage: int, stage_attempt: int, partition: int, attempt: int, tid) -> str:
    """Spark's own wording, as in its logs: ``task 3.1 in stage 0.0 (TID 4)``."""
    return f"task {partition}.{attempt} in stage {stage}.{stage_attempt} (TID {tid})"


class SparkEventDecoder:
    """Decodes one application's events in order, keeping the little state events refer to."""

    def __init__(self, source_id: int | None = None, app_id: str | None = None):
        self.source_id = source_id
        self.app_id = app_id
        self.last_ts: dt.datetime | None = None
        self._tables: dict[str, str] = {}  # execution id -> table its CTAS root named
        self._early: list[Event] = []  # events before the application's id is known
        self._started = False
        self._attempt = None  # the application attempt its start names (YARN), else None

    def decode(self, event: dict, line_no: int | None = None, offset: int | None = None,
               raw: str | None = None) -> list[Event]:
        name = event.get("Event", "")
        if not isinstance(name, str):
            raise OddValue("Event", "text")
        short = name.rsplit(".", 1)[-1]
        if short in EXCLUSION_EVENTS:
            out = self._exclude(event, *EXCLUSION_EVENTS[short])
        else:
            handler = getattr(self, f"_on_{short}", None)
            if handler is None:
                return []
            out = handler(event)
        name = spark_event_name(event) if out else None
        for ev in out:
            ev.event_key = event_key(name, ev.kind, ev.detail)
            ev.source_id = self.source_id
            ev.line_no = line_no
            ev.byte_offset = offset
            ev.app_id = ev.app_id or self.app_id
            if ev.ts is None:
                ev.ts = self.last_ts
            else:
                self.last_ts = ev.ts
            ev.raw = raw
        # SparkListenerEnvironmentUpdate precedes ApplicationStart: hold those few events until
        # the start names the application and its attempt (two YARN attempts of one
        # application have the same environment, yet each posted its own).
        if short == "SparkListenerApplicationStart":
            self._started, self._attempt = True, event.get("App Attempt ID")
        if short == "SparkListenerEnvironmentUpdate":
            self._early.extend(out)
            out = []
        if self._early and self._started:
            out = self._release() + out
        return out

    @property
    def holding(self) -> bool:
        """True while events wait for the application's start (the event that releases them)."""
        return bool(self._early)

    def _release(self) -> list[Event]:
        early, self._early = self._early, []
        name = f"SparkListenerEnvironmentUpdate:attempt={self._attempt}"
        for ev in early:
            ev.app_id = ev.app_id or self.app_id
            ev.event_key = event_key(name, ev.kind, ev.detail)
        return early

    def flush(self) -> list[Event]:
        """Events still held because no application start came to name the application."""
        return self._release()

    # -- application ---------------------------------------------------------------------
    def _on_SparkListenerApplicationStart(self, e):
        ts = _time(e, "Timestamp")  # checked before the id is taken: a rejected line changes nothing
        self.app_id = _text(e, "App ID") or self.app_id
        return [Event("app_start", ts=ts, app_id=self.app_id,
                      detail={"name": e.get("App Name"), "user": e.get("User"),
                              "attempt": e.get("App Attempt ID")})]

    def _on_SparkListenerApplicationEnd(self, e):
        return [Event("app_end", ts=_time(e, "Timestamp"))]

    def _on_SparkListenerEnvironmentUpdate(self, e):
        props = _pairs(e, "Spark Properties")
        props.update({f"spark.hadoop.{k}": v for k, v in _pairs(e, "Hadoop Properties").items()})
        honour_spark_conf(props)  # the user's own redaction settings mask what follows too
        out = []
        for key in COMMIT_CONF:
            if key in props:
                value = props[key]  # null (a list of pairs can hold one) stays null, not "None"
                out.append(Event("conf", detail={"key": key, "value": None if value is None else str(value)}))
        return out

    # -- jobs and stages -----------------------------------------------------------------
    def _on_SparkListenerJobStart(self, e):
        props = _obj(e, "Properties")
        return [Event("job_start", ts=_time(e, "Submission Time"), job_id=str(_key(e, "Job ID", "SparkListenerJobStart")),
                      query_id=_name(props, "spark.sql.execution.id"),
                      detail={"stages": e.get("Stage IDs"), "group": props.get("spark.jobGroup.id")})]

    def _on_SparkListenerJobEnd(self, e):
        result = _obj(e, "Job Result")
        ok = result.get("Result") == "JobSucceeded"
        detail = None if ok else {"reason": _obj(result, "Exception").get("Message")}
        return [Event("job_end", ts=_time(e, "Completion Time"), job_id=str(_key(e, "Job ID", "SparkListenerJobEnd")),
                      status="success" if ok else "failed", detail=detail)]

    def _on_SparkListenerStageSubmitted(self, e):
        info = _obj(e, "Stage Info")
        return [Event("stage_start", ts=_time(info, "Submission Time"),
                      stage_id=_key(info, "Stage ID", "SparkListenerStageSubmitted", bound=_INT32),
                      stage_attempt=_or(_whole(info, "Stage Attempt ID", bound=_INT32), 0),  # stageInfoFromJson
                      detail={"name": info.get("Stage Name"), "tasks": info.get("Number of Tasks")})]

    def _on_SparkListenerStageCompleted(self, e):
        info = _obj(e, "Stage Info")
        failure = info.get("Failure Reason")
        return [Event("stage_end", ts=_time(info, "Completion Time"),
                      stage_id=_key(info, "Stage ID", "SparkListenerStageCompleted", bound=_INT32),
                      stage_attempt=_or(_whole(info, "Stage Attempt ID", bound=_INT32), 0),  # stageInfoFromJson
                      status="failed" if failure else "success",
                      detail={"reason": failure} if failure else None)]

    # -- task attempts -------------------------------------------------------------------
    def _task(self, kind: str, e: dict, ts_field: str, event: str) -> Event:
        info = _obj(e, "Task Info")
        stage = _key(e, "Stage ID", event, bound=_INT32)
        # JsonProtocol's own defaults for a field absent or null (taskStartFromJson, taskEndFromJson,
        # taskInfoFromJson): stage attempt 0, task attempt 1
        stage_attempt = _or(_whole(e, "Stage Attempt ID", bound=_INT32), 0)
        index = _whole(info, "Index")
        partition = _whole(info, "Partition ID")
        if partition is None or partition < 0:
            partition = index
        if partition is None:  # Spark always writes Index; Partition ID only since 3.4
            raise Missing("Task Info.Index", event)
        attempt, tid = _or(_whole(info, "Attempt", bound=_INT32), 1), _key(info, "Task ID", event)
        executor = _name(info, "Executor ID")
        speculative = info.get("Speculative")
        if speculative is not None and not isinstance(speculative, bool):
            raise OddValue("Speculative", "true or false")
        return Event(
            kind,
            ts=_time(info, ts_field),
            stage_id=stage,
            stage_attempt=stage_attempt,
            task_id=f"{stage}.{partition}",
            attempt_id=attempt_label(stage, stage_attempt, partition, attempt, tid),
            attempt_no=attempt,
            speculative=speculative,
            executor_id="driver" if executor == "<driver>" else executor,
            host=_text(info, "Host"),
            detail={"tid": tid, "index": index, "launch_time": info.get("Launch Time")},
        )

    def _on_SparkListenerTaskStart(self, e):
        return [self._task("attempt_start", e, "Launch Time", "SparkListenerTaskStart")]

    def _on_SparkListenerTaskEnd(self, e):
        ev = self._task("attempt_end", e, "Finish Time", "SparkListenerTaskEnd")
        reason = _obj(e, "Task End Reason")
        kind = _text(reason, "Reason")
        if kind is None:  # JsonProtocol writes a reason for every end: none is no "Success"
            raise Missing("Task End Reason", "SparkListenerTaskEnd")
        ev.status = _END_STATUS.get(kind, "failed")
        output = _obj(_obj(e, "Task Metrics"), "Output Metrics")
        ev.size = _whole(output, "Bytes Written")
        ev.detail.update(
            reason=kind,
            records_written=output.get("Records Written"),
            kill_reason=reason.get("Kill Reason"),
            error=reason.get("Description") or reason.get("Class Name"),
        )
        ev.detail = {k: v for k, v in ev.detail.items() if v is not None}
        out = [ev]
        if kind == "TaskCommitDenied":
            out.append(Event("commit_denied", ts=ev.ts, stage_id=ev.stage_id,
                             stage_attempt=ev.stage_attempt, task_id=ev.task_id,
                             attempt_id=ev.attempt_id, attempt_no=ev.attempt_no,
                             speculative=ev.speculative, executor_id=ev.executor_id, host=ev.host,
                             status="commit_denied"))
        return out

    # -- scheduler exclusion (named blacklisting before Spark 3.1) -----------------------------
    # Spark 2.x wrote ``nodeId`` where 3.x writes ``hostId``; per-stage variants add the stage.
    def _exclude(self, e, what: str, status: str):
        return [Event("exclude", ts=_time(e, "time"), executor_id=_name(e, "executorId"),
                      host=_text(e, "hostId") or _text(e, "nodeId"),
                      stage_id=_whole(e, "stageId", bound=_INT32),
                      stage_attempt=_whole(e, "stageAttemptId", bound=_INT32), status=status,
                      detail={"what": what, "failures": e.get("taskFailures") or e.get("executorFailures")})]

    # -- SQL -------------------------------------------------------------------------------
    def _on_SparkListenerSQLExecutionStart(self, e):
        plan = _text(e, "physicalPlanDescription")
        ev = Event("query_start", ts=_time(e, "time"), query_id=str(_key(e, "executionId", "SparkListenerSQLExecutionStart")),
                   detail={"description": e.get("description"), "plan": (plan or "")[:4000]})
        target = write_target(plan, e.get("sparkPlanInfo"))
        if target is not None:
            root = _name(e, "rootExecutionId") or ev.query_id  # Spark 3.4+; null is no root, not "None"
            ev.location = target.path
            ev.table_name = target.table or self._tables.get(root) or self._tables.get(ev.query_id)
            ev.partition_spec = target.partition_spec
            if target.table:  # a CTAS's nested insert (same root execution) inherits the table
                self._tables[ev.query_id] = self._tables[root] = target.table
            ev.detail["write"] = {**target.as_detail(), "table": ev.table_name}
        return [ev]

    def _on_SparkListenerSQLExecutionEnd(self, e):
        err = e.get("errorMessage")
        return [Event("query_end", ts=_time(e, "time"), query_id=str(_key(e, "executionId", "SparkListenerSQLExecutionEnd")),
                      status="failed" if err else "success",
                      detail={"error": err} if err else None)]


def is_spark_event(name: str) -> bool:
    """Spark's own listener events: ``SparkListener…`` (core, SQL, thrift server, Connect) or a
    class of Spark's packages (``org.apache.spark.sql.streaming.StreamingQueryListener$…``)."""
    return name.rsplit(".", 1)[-1].startswith("SparkListener") or name.startswith("org.apache.spark.")


def decode_lines(lines: Iterable[tuple[int, int, str]], ctx, stats) -> Iterator[Event]:
    """Events of an event log's ``(line_no, offset, text)`` lines; bad JSON is rejected, counted."""
    decoder = SparkEventDecoder(source_id=ctx.source_id, app_id=app_id_of(ctx.uri))
    for line_no, offset, text in lines:
        yield from decode_line(decoder, line_no, offset, text, stats)
    for ev in decoder.flush():
        stats.events += 1
        yield ev


def decode_line(decoder: SparkEventDecoder, line_no: int, offset: int, text: str, stats) -> list[Event]:
    """One line's events (counted in ``stats``); a blank line gives none; bad JSON, or a value
    the decoder cannot store as it reads it (``OddValue``), is rejected: that line alone."""
    stats.lines += 1
    if not text.strip():
        return []
    try:
        event = orjson.loads(text)  # several times faster than json on event-log lines
    except orjson.JSONDecodeError:
        stats.reject("invalid JSON (a truncated or in-progress event log?)", line_no, text)
        return []
    if not isinstance(event, dict) or "Event" not in event:
        stats.reject("JSON line without an Event field", line_no, text)
        return []
    name = event["Event"]
    if isinstance(name, str) and not is_spark_event(name):
        # a listener event another library posted (its own class): not read, but counted by type
        stats.reject(f"Spark event of a type not Spark's own, not read: {name[:200]}", line_no, text)
        return []
    try:
        out = decoder.decode(event, line_no, offset, text)
    except OddValue as exc:  # this line only: the lines after it are read as ever
        stats.reject(str(exc), line_no, text)
        return []
    stats.records += 1
    stats.events += len(out)
    return out
