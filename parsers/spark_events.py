"""Spark listener events (the event-log JSON) -> canonical events.

One decoder for event logs and live capture: the live listener serialises each event with
Spark's own ``JsonProtocol`` into exactly the JSON an event log holds, and hands it here.
Field variants across Spark 1.x-4.x are handled here (``Partition ID`` is absent before 3.4,
``Executor ID`` is ``<driver>`` in 1.x, blacklist events became exclude events in 3.1).
Event-log times are epoch milliseconds; they are stored as UTC.
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


def _pairs(value) -> dict:
    """Properties arrive as a JSON object or, in other versions, as a list of [key, value]."""
    if isinstance(value, dict):
        return dict(value)
    return {p[0]: p[1] for p in value or [] if isinstance(p, (list, tuple)) and len(p) == 2}


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
        self.app_id = e.get("App ID") or self.app_id
        return [Event("app_start", ts=epoch_ms(e.get("Timestamp")), app_id=self.app_id,
                      detail={"name": e.get("App Name"), "user": e.get("User"),
                              "attempt": e.get("App Attempt ID")})]

    def _on_SparkListenerApplicationEnd(self, e):
        return [Event("app_end", ts=epoch_ms(e.get("Timestamp")))]

    def _on_SparkListenerEnvironmentUpdate(self, e):
        props = _pairs(e.get("Spark Properties"))
        props.update({f"spark.hadoop.{k}": v for k, v in _pairs(e.get("Hadoop Properties")).items()})
        honour_spark_conf(props)  # the user's own redaction settings mask what follows too
        out = []
        for key in COMMIT_CONF:
            if key in props:
                out.append(Event("conf", detail={"key": key, "value": str(props[key])}))
        return out

    # -- jobs and stages -----------------------------------------------------------------
    def _on_SparkListenerJobStart(self, e):
        props = e.get("Properties") or {}
        return [Event("job_start", ts=epoch_ms(e.get("Submission Time")), job_id=str(e.get("Job ID")),
                      query_id=props.get("spark.sql.execution.id"),
                      detail={"stages": e.get("Stage IDs"), "group": props.get("spark.jobGroup.id")})]

    def _on_SparkListenerJobEnd(self, e):
        result = e.get("Job Result") or {}
        ok = result.get("Result") == "JobSucceeded"
        detail = None if ok else {"reason": (result.get("Exception") or {}).get("Message")}
        return [Event("job_end", ts=epoch_ms(e.get("Completion Time")), job_id=str(e.get("Job ID")),
                      status="success" if ok else "failed", detail=detail)]

    def _on_SparkListenerStageSubmitted(self, e):
        info = e.get("Stage Info") or {}
        return [Event("stage_start", ts=epoch_ms(info.get("Submission Time")),
                      stage_id=info.get("Stage ID"), stage_attempt=info.get("Stage Attempt ID"),
                      detail={"name": info.get("Stage Name"), "tasks": info.get("Number of Tasks")})]

    def _on_SparkListenerStageCompleted(self, e):
        info = e.get("Stage Info") or {}
        failure = info.get("Failure Reason")
        return [Event("stage_end", ts=epoch_ms(info.get("Completion Time")),
                      stage_id=info.get("Stage ID"), stage_attempt=info.get("Stage Attempt ID"),
                      status="failed" if failure else "success",
                      detail={"reason": failure} if failure else None)]

    # -- task attempts -------------------------------------------------------------------
    def _task(self, kind: str, e: dict, ts_field: str) -> Event:
        info = e.get("Task Info") or {}
        stage, stage_attempt = e.get("Stage ID"), e.get("Stage Attempt ID", 0)
        partition = info.get("Partition ID", info.get("Index"))
        if partition is None or partition < 0:
            partition = info.get("Index")
        attempt, tid = info.get("Attempt", 0), info.get("Task ID")
        executor = info.get("Executor ID")
        return Event(
            kind,
            ts=epoch_ms(info.get(ts_field)),
            stage_id=stage,
            stage_attempt=stage_attempt,
            task_id=f"{stage}.{partition}",
            attempt_id=attempt_label(stage, stage_attempt, partition, attempt, tid),
            attempt_no=attempt,
            speculative=info.get("Speculative"),
            executor_id="driver" if executor == "<driver>" else executor,
            host=info.get("Host"),
            detail={"tid": tid, "index": info.get("Index"), "launch_time": info.get("Launch Time")},
        )

    def _on_SparkListenerTaskStart(self, e):
        return [self._task("attempt_start", e, "Launch Time")]

    def _on_SparkListenerTaskEnd(self, e):
        ev = self._task("attempt_end", e, "Finish Time")
        reason = e.get("Task End Reason") or {}
        kind = reason.get("Reason", "Success")
        ev.status = _END_STATUS.get(kind, "failed")
        metrics = e.get("Task Metrics") or {}
        output = metrics.get("Output Metrics") or {}
        ev.size = output.get("Bytes Written")
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
        return [Event("exclude", ts=epoch_ms(e.get("time")), executor_id=e.get("executorId"),
                      host=e.get("hostId") or e.get("nodeId"), stage_id=e.get("stageId"),
                      stage_attempt=e.get("stageAttemptId"), status=status,
                      detail={"what": what, "failures": e.get("taskFailures") or e.get("executorFailures")})]

    # -- SQL -------------------------------------------------------------------------------
    def _on_SparkListenerSQLExecutionStart(self, e):
        ev = Event("query_start", ts=epoch_ms(e.get("time")), query_id=str(e.get("executionId")),
                   detail={"description": e.get("description"),
                           "plan": (e.get("physicalPlanDescription") or "")[:4000]})
        target = write_target(e.get("physicalPlanDescription"), e.get("sparkPlanInfo"))
        if target is not None:
            root = str(e.get("rootExecutionId", ev.query_id))
            ev.location = target.path
            ev.table_name = target.table or self._tables.get(root) or self._tables.get(ev.query_id)
            ev.partition_spec = target.partition_spec
            if target.table:  # a CTAS's nested insert (same root execution) inherits the table
                self._tables[ev.query_id] = self._tables[root] = target.table
            ev.detail["write"] = {**target.as_detail(), "table": ev.table_name}
        return [ev]

    def _on_SparkListenerSQLExecutionEnd(self, e):
        err = e.get("errorMessage")
        return [Event("query_end", ts=epoch_ms(e.get("time")), query_id=str(e.get("executionId")),
                      status="failed" if err else "success",
                      detail={"error": err} if err else None)]


def decode_lines(lines: Iterable[tuple[int, int, str]], ctx, stats) -> Iterator[Event]:
    """Events of an event log's ``(line_no, offset, text)`` lines; bad JSON is rejected, counted."""
    decoder = SparkEventDecoder(source_id=ctx.source_id, app_id=app_id_of(ctx.uri))
    for line_no, offset, text in lines:
        yield from decode_line(decoder, line_no, offset, text, stats)
    for ev in decoder.flush():
        stats.events += 1
        yield ev


def decode_line(decoder: SparkEventDecoder, line_no: int, offset: int, text: str, stats) -> list[Event]:
    """One line's events (counted in ``stats``); a blank line gives none, bad JSON is rejected."""
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
    stats.records += 1
    out = decoder.decode(event, line_no, offset, text)
    stats.events += len(out)
    return out
