"""The fast path for Spark event logs: the bulk of the lines decoded by DuckDB's JSON reader.

Task, stage and job events are nearly every line of a big event log. Here a block of lines
becomes one Arrow string array (no Python object per line), DuckDB parses those lines and maps
them to canonical columns in SQL, and only the other lines (environment, application, SQL
plans, exclusions, failures, anything unusual) go through the decoder of
``parsers.spark_events``, one by one, in order. The decoder stays the reference: a row is
mapped in SQL only when its output is certain to equal the decoder's (every field present and of
the JSON type Spark writes there, read as JSON so that 7, 7.5, "7" and true stay apart; every
text plain ASCII without quote or backslash, so ``json.dumps`` would write it as it is); any
other row goes to the decoder, which rejects or reads a value of another type. Two things the
SQL does not look for, as Spark's JsonProtocol writes neither: a key written twice in one object
(DuckDB reads the first, the decoder the last), and a line one JSON parser accepts and the other
refuses (DuckDB reads a number past a double's range, orjson does not): such a line is
caught where the verification runs (``COMMITSLEUTH_EVENTLOG_VERIFY``, every test).
``tests/test_eventlog_fast.py`` compares both paths' stores row for row.

What the decoder carries from line to line is kept in order: the application id (an
``ApplicationStart`` line sets it for the rows after it), the last timestamp (a decoded event
without one takes it) and the environment events held until the application's id is known.
Redaction is the one layer's: ``events_to_arrow`` for decoded events, ``redact_table`` for the
SQL rows, so every text column and ``detail`` pass the same patterns.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, Iterator, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from commitsleuth.forensics.paths import enrich
from commitsleuth.ingest.eventlogs import app_id_of
from commitsleuth.ingest.readers import MAX_LINE
from commitsleuth.model import EVENT_SCHEMA, events_to_arrow
from commitsleuth.parsers.base import ParseStats
from commitsleuth.parsers.spark_events import SparkEventDecoder, decode_line
from commitsleuth.parsers.spark_identity import identity_hashes
from commitsleuth.redact import has_user_patterns, lines_may_hold_secret, redact, redact_table
from commitsleuth.store import on_first_use

duckdb = on_first_use("duckdb")  # a text log's workers import this module and never use duckdb

FORMAT = "spark-eventlog"
BLOCK = 16 << 20  # bytes of lines per DuckDB pass and per store checkpoint
# A block of fewer lines goes to the decoder whole: a DuckDB pass costs about 20 ms of CPU
# however few its lines, the decoder 20-25 us a line (even at about 1,800 lines of task ends,
# measured; below this the decoder is the cheaper). Most applications of a History Server
# directory, and a live capture's small loads, are one such block. The decoder is the
# reference, so the table is the same either way.
SQL_MIN_LINES = 1024
# Rows per commit of a big event log, each commit a checkpoint (store.CHECKPOINT_COMMIT_ROWS and
# ingest's loop): two of DuckDB's row groups. At 61,440 (half a row group) the store's writes of
# a 300k-line log took 3.1-3.8 CPU-s, at this cadence 1.9-2.3, about as much as one commit at
# the end, and the whole ingest 1.8 CPU-s less: DuckDB compressed each row group about twice,
# the half written before and the whole after (docs/BENCHMARKS.md round 10). Each commit is
# still compressed while the SQL threads map the next blocks.
CHECKPOINT_ROWS = 2 * 122_880
# Blocks scanned at once (lines, trigger and SQL, each on a connection of its own) while the one
# before them is assembled: one scan takes longer than an assembly and a store write together,
# so with one the SQL thread set the pace and the second core idled a third of the time.
SCANNERS = 2
# Sets SQL_MIN_LINES (the tests set 0, so that every block any test ingests takes the SQL and
# is checked against the decoder).
SQL_MIN_LINES_ENV = "COMMITSLEUTH_EVENTLOG_SQL_MIN_LINES"
# Whether ingest takes the fast path (tests set 0 to build the reference store with the decoder).
ENV = "COMMITSLEUTH_EVENTLOG_FAST"
# Set (the test suite sets it for every test): each block is decoded by the decoder too and the
# two tables must be equal, so every event log any test ingests checks the fast path.
VERIFY_ENV = "COMMITSLEUTH_EVENTLOG_VERIFY"


def enabled(format_name: str) -> bool:
    return format_name == FORMAT and os.environ.get(ENV, "1") != "0"


class FastPathMismatch(BaseException):
    """The fast path and the decoder disagree on a block (raised only when verifying). A
    BaseException on purpose: ingest turns an Exception into a file's ``partial`` status and
    goes on, which a test could miss; this one ends the run."""


# Field names as Spark's JsonProtocol writes them; json_transform parses each line once, into
# only the fields the decoder reads. One shape and one SELECT per family of events.
# Each value is taken as JSON, its type kept (7, 7.5, "7" and true stay apart; a typed
# transform reads all four as 7 or 1), and a row is mapped only when each value has the type
# the decoder stores: ``_whole``, ``_text``, ``_plain`` below.
_TASK_SHAPE = """{"Event": "VARCHAR", "Stage ID": "JSON", "Stage Attempt ID": "JSON",
  "Task Info": {"Task ID": "JSON", "Index": "JSON", "Attempt": "JSON", "Partition ID": "JSON",
                "Launch Time": "JSON", "Finish Time": "JSON", "Executor ID": "JSON",
                "Host": "JSON", "Speculative": "JSON"},
  "Task End Reason": {"Reason": "JSON", "Kill Reason": "JSON", "Description": "JSON",
                      "Class Name": "JSON"},
  "Task Metrics": {"Executor Run Time": "BIGINT",
                   "Output Metrics": {"Bytes Written": "JSON", "Records Written": "JSON"}}}"""
_STAGE_SHAPE = """{"Event": "VARCHAR",
  "Stage Info": {"Stage ID": "JSON", "Stage Attempt ID": "JSON", "Stage Name": "JSON",
                 "Number of Tasks": "JSON", "Submission Time": "JSON", "Completion Time": "JSON",
                 "Failure Reason": "VARCHAR"}}"""
_JOB_SHAPE = """{"Event": "VARCHAR", "Job ID": "JSON", "Submission Time": "JSON", "Completion Time": "JSON",
  "Stage IDs": "JSON",
  "Properties": {"spark.sql.execution.id": "JSON", "spark.jobGroup.id": "JSON"},
  "Job Result": {"Result": "VARCHAR"}}"""

# A text json.dumps writes unchanged: printable ASCII without '"' and '\'.
_PLAIN = r"[ !#-\[\]-~]*"
# Stage ids as json.dumps writes a list of integers, once ', ' is put between them.
_IDS = r"\[((0|-?[1-9][0-9]{0,17})(,(0|-?[1-9][0-9]{0,17}))*)?\]"


def _int(leaf: str) -> str:
    """SQL: a value's integer; NULL when absent or null (or no integer: see ``_whole``)."""
    return f"TRY_CAST({leaf} AS BIGINT)"


def _leaves(**paths: str) -> str:
    """SQL select items: the JSON text of each value at ``j.<path>``, named ``<name>_j``."""
    return ", ".join(f"CAST(j.{path} AS VARCHAR) AS {name}_j" for name, path in paths.items())


def _ints(*names: str) -> str:
    """SQL select items: the integer of each ``<name>_j`` (``_int``), named ``<name>``."""
    return ", ".join(f"{_int(name + '_j')} AS {name}" for name in names)


def _whole(*names: str) -> str:
    """SQL: each of these values (``x`` read from the JSON text ``x_j``) is absent, null or a
    JSON integer: a JSON value whose text holds only digits and a minus is an integer (7.0,
    1e3, "7" and true are not), so one regex tests them all at once; at most 18 digits keeps
    it within 64 bits."""
    return f"NOT regexp_matches(concat_ws(',', {', '.join(f'{n}_j' for n in names)}), '[^0-9,-]|[0-9]{{19}}')"


def _int32(*names: str) -> str:
    """SQL: each of these integers (``_whole``) has at most 9 characters, so it fits the 32-bit
    column it goes to (a larger one goes to the decoder, which stores it if it fits)."""
    return " AND ".join(f"coalesce(length({n}_j) < 10, true)" for n in names)


def _times(*names: str) -> str:
    """SQL: each of these times (``_whole``) is at least 0 and has at most 14 digits: before the
    year 5138, well within the decoder's calendar (the rest go to it)."""
    return " AND ".join(f"coalesce(length({n}_j) < 15 AND NOT starts_with({n}_j, '-'), true)" for n in names)


def _text(*leaves: str) -> str:
    """SQL: each of these JSON texts is absent, null or a string without escapes (its text
    between the quotes is the string)."""
    return " AND ".join(f"coalesce({x} IS NULL OR (starts_with({x}, '\"') AND NOT contains({x}, '\\')), false)"
                        for x in leaves)


def _plain(*leaves: str) -> str:
    """SQL: each of these JSON texts is absent, null, or a string ``json.dumps`` writes as it is."""
    return " AND ".join(f"({x} IS NULL OR regexp_full_match({x}, '\"{_PLAIN}\"'))" for x in leaves)


def _inner(leaf: str) -> str:
    """SQL: the string of a JSON text ``_text`` or ``_plain`` accepted."""
    return f"{leaf}[2:-2]"


def _parsed(prefix: str, shape: str, *objects: tuple[str, str]) -> str:
    """The lines of one family of events, each parsed once. TRY: a line that is not valid JSON
    gives NULL here and goes to the decoder, which rejects it. A line the redaction trigger finds
    (``secret``) goes to the decoder too, whose events pass the one redaction layer: the rows mapped here
    need none, as no text the SQL derives from a line can hold a secret the line does not.

    ``objects``: (when, path) of object fields the decoder reads. json_transform reads a value
    that is not an object (5, [], "x") as an object without the fields asked for, as it reads
    ``{}``; so ``objects_ok`` is false when the type at ``path`` is neither an object nor null,
    looked up (a second parse of the line) only when ``when`` finds none of the fields."""
    checks = " AND ".join(f"CASE WHEN {when} THEN coalesce(json_type(line, '{path}') IN ('OBJECT', 'NULL'), true) "
                          f"ELSE true END" for when, path in objects) or "true"
    return (f"SELECT i, j, {checks} AS objects_ok FROM ("
            f"SELECT i, line, try(json_transform(line, '{shape}')) AS j FROM lines "
            f"WHERE starts_with(line, '{{\"Event\":\"SparkListener{prefix}') AND NOT secret)")


# Object fields read as empty when they hold none of the shape's fields: (when, path). Every
# Spark writes a task's metrics with its run time (read only for this), not always with
# output metrics.
_TASK_OBJECTS = (
    ("""j."Event" = 'SparkListenerTaskEnd' AND j."Task Metrics" IS NOT NULL
        AND j."Task Metrics"."Output Metrics" IS NULL AND j."Task Metrics"."Executor Run Time" IS NULL""",
     '$."Task Metrics"'),
    ("""j."Event" = 'SparkListenerTaskEnd' AND j."Task Metrics"."Output Metrics" IS NOT NULL
        AND j."Task Metrics"."Output Metrics"."Bytes Written" IS NULL
        AND j."Task Metrics"."Output Metrics"."Records Written" IS NULL""", '$."Task Metrics"."Output Metrics"'))
_STAGE_OBJECTS = (("""j."Stage Info" IS NOT NULL AND j."Stage Info"."Stage ID" IS NULL""", '$."Stage Info"'),)
_JOB_OBJECTS = (("""j."Event" = 'SparkListenerJobStart' AND j."Properties" IS NOT NULL
        AND j."Properties"."spark.sql.execution.id" IS NULL AND j."Properties"."spark.jobGroup.id" IS NULL""",
                 '$."Properties"'),)


# Columns of every SELECT: i, kind, ms (epoch ms, 0 or NULL when absent), plain (the decoder
# would give the same row), then the event columns. A row not plain goes to the decoder:
# a value of another type, a missing field it defaults or formats as None, text json.dumps
# would escape, two events from one line (commit denied), failures with their messages.
_SQL = f"""
WITH t AS MATERIALIZED ({_parsed("Task", _TASK_SHAPE, *_TASK_OBJECTS)}),
s AS MATERIALIZED ({_parsed("Stage", _STAGE_SHAPE, *_STAGE_OBJECTS)}),
b AS MATERIALIZED ({_parsed("Job", _JOB_SHAPE, *_JOB_OBJECTS)}),
tj AS (
    SELECT i, j."Event" = 'SparkListenerTaskStart' AS starts,
           {_leaves(stage='"Stage ID"', stage_attempt='"Stage Attempt ID"', tid='"Task Info"."Task ID"',
                    idx='"Task Info"."Index"', attempt='"Task Info"."Attempt"', pid='"Task Info"."Partition ID"',
                    launch='"Task Info"."Launch Time"', finish='"Task Info"."Finish Time"',
                    executor='"Task Info"."Executor ID"', host='"Task Info"."Host"',
                    speculative='"Task Info"."Speculative"', reason='"Task End Reason"."Reason"',
                    kill='"Task End Reason"."Kill Reason"', bytes='"Task Metrics"."Output Metrics"."Bytes Written"',
                    records='"Task Metrics"."Output Metrics"."Records Written"')},
           -- the decoder's Description or Class Name: "" and null are no description
           CASE WHEN CAST(j."Task End Reason"."Description" AS VARCHAR) <> '""'
                THEN CAST(j."Task End Reason"."Description" AS VARCHAR)
                ELSE CAST(j."Task End Reason"."Class Name" AS VARCHAR) END AS err_j
    FROM t WHERE j."Event" IN ('SparkListenerTaskStart', 'SparkListenerTaskEnd') AND objects_ok
),
tf AS (
    SELECT *, CASE WHEN pid IS NULL OR pid < 0 THEN idx ELSE pid END AS part,
           {_inner("reason_j")} AS reason
    FROM (SELECT *, {_ints("stage", "stage_attempt", "tid", "idx", "attempt", "pid", "launch", "finish",
                           "bytes", "records")}
          FROM tj)
),
tasks AS (
    SELECT i, CASE WHEN starts THEN 'attempt_start' ELSE 'attempt_end' END AS kind,
           CASE WHEN starts THEN launch ELSE finish END AS ms,
           stage_j IS NOT NULL AND stage_attempt_j IS NOT NULL AND tid_j IS NOT NULL
           AND idx_j IS NOT NULL AND attempt_j IS NOT NULL
           AND {_whole("stage", "stage_attempt", "attempt", "tid", "idx", "pid", "launch", "finish", "bytes",
                       "records")}
           AND {_int32("stage", "stage_attempt", "attempt")} AND {_times("launch", "finish")}
           AND {_text("executor_j", "host_j")}
           AND (speculative_j IS NULL OR speculative_j IN ('true', 'false'))
           AND (starts OR (reason_j IS NOT NULL AND reason_j <> '"TaskCommitDenied"'
                AND {_plain("reason_j", "kill_j", "err_j")})) AS plain,
           NULL::VARCHAR AS job_id, NULL::VARCHAR AS query_id, stage AS stage_id, stage_attempt,
           stage || '.' || part AS task_id,
           'task ' || part || '.' || attempt || ' in stage ' || stage || '.' || stage_attempt
               || ' (TID ' || tid || ')' AS attempt_id,
           attempt AS attempt_no, speculative_j = 'true' AS speculative,
           CASE WHEN executor_j = '"<driver>"' THEN 'driver' ELSE {_inner("executor_j")} END AS executor_id,
           -- the event's identity as parsers/spark_identity.py names it
           CASE WHEN starts THEN 'SparkListenerTaskStart:' ELSE 'SparkListenerTaskEnd:' END
               || stage || '.' || stage_attempt || ':' || tid || '.' || attempt
               || '@' || coalesce(CAST(launch AS VARCHAR), 'None') AS ident,
           {_inner("host_j")} AS host,
           CASE WHEN NOT starts THEN bytes END AS size,
           CASE WHEN NOT starts THEN
                CASE reason WHEN 'Success' THEN 'success' WHEN 'TaskKilled' THEN 'killed'
                            WHEN 'Resubmitted' THEN 'resubmitted' ELSE 'failed' END END AS status,
           -- detail as json.dumps(sort_keys=True) writes it
           CASE WHEN starts THEN
                '{{"index": ' || idx || ', "launch_time": ' || coalesce(CAST(launch AS VARCHAR), 'null')
                || ', "tid": ' || tid || '}}'
           ELSE '{{' || concat_ws(', ',
                '"error": ' || err_j,
                '"index": ' || idx,
                '"kill_reason": ' || kill_j,
                '"launch_time": ' || launch,
                '"reason": ' || reason_j,
                '"records_written": ' || records,
                '"tid": ' || tid) || '}}' END AS detail
    FROM tf
),
sj AS (
    SELECT i, j."Event" = 'SparkListenerStageSubmitted' AS starts,
           {_leaves(stage='"Stage Info"."Stage ID"', stage_attempt='"Stage Info"."Stage Attempt ID"',
                    name='"Stage Info"."Stage Name"', tasks='"Stage Info"."Number of Tasks"',
                    submitted='"Stage Info"."Submission Time"', completed='"Stage Info"."Completion Time"')},
           j."Stage Info"."Failure Reason" AS failure
    FROM s WHERE j."Event" IN ('SparkListenerStageSubmitted', 'SparkListenerStageCompleted') AND objects_ok
),
stages AS (
    SELECT i, CASE WHEN starts THEN 'stage_start' ELSE 'stage_end' END AS kind,
           CASE WHEN starts THEN submitted ELSE completed END AS ms,
           stage_j IS NOT NULL AND {_whole("stage", "stage_attempt", "tasks", "submitted", "completed")}
           AND {_int32("stage", "stage_attempt")} AND {_times("submitted", "completed")}
           AND CASE WHEN starts THEN {_plain("name_j")} ELSE coalesce(failure, '') = '' END AS plain,
           NULL::VARCHAR AS job_id, NULL::VARCHAR AS query_id, stage AS stage_id,
           -- JsonProtocol's stageInfoFromJson reads an absent attempt as 0 (the ident keeps the line's)
           coalesce(stage_attempt, 0) AS stage_attempt, NULL::VARCHAR AS task_id, NULL::VARCHAR AS attempt_id,
           NULL::BIGINT AS attempt_no, NULL::BOOLEAN AS speculative, NULL::VARCHAR AS executor_id,
           CASE WHEN starts THEN 'SparkListenerStageSubmitted:' ELSE 'SparkListenerStageCompleted:' END
               || coalesce(CAST(stage AS VARCHAR), 'None') || '.'
               || coalesce(CAST(stage_attempt AS VARCHAR), 'None') || '@'
               || coalesce(CAST(submitted AS VARCHAR), 'None') AS ident,
           NULL::VARCHAR AS host, NULL::BIGINT AS size,
           CASE WHEN NOT starts THEN 'success' END AS status,
           CASE WHEN starts THEN
                '{{"name": ' || coalesce(name_j, 'null') || ', "tasks": '
                || coalesce(CAST(tasks AS VARCHAR), 'null') || '}}' END AS detail
    FROM (SELECT *, {_ints("stage", "stage_attempt", "tasks", "submitted", "completed")} FROM sj)
),
bj AS (
    SELECT i, j."Event" = 'SparkListenerJobStart' AS starts,
           {_leaves(job='"Job ID"', submitted='"Submission Time"', completed='"Completion Time"', ids='"Stage IDs"',
                    execution='"Properties"."spark.sql.execution.id"', group='"Properties"."spark.jobGroup.id"')},
           j."Job Result"."Result" AS result
    FROM b WHERE j."Event" IN ('SparkListenerJobStart', 'SparkListenerJobEnd') AND objects_ok
),
jobs AS (
    SELECT i, CASE WHEN starts THEN 'job_start' ELSE 'job_end' END AS kind,
           CASE WHEN starts THEN submitted ELSE completed END AS ms,
           job_j IS NOT NULL AND {_whole("job", "submitted", "completed")} AND {_times("submitted", "completed")}
           AND CASE WHEN starts THEN (ids_j IS NULL OR regexp_full_match(ids_j, '{_IDS}'))
                    AND {_text("execution_j")} AND {_plain("group_j")}
                ELSE result = 'JobSucceeded' END AS plain,
           CAST(job AS VARCHAR) AS job_id,
           CASE WHEN starts THEN {_inner("execution_j")} END AS query_id,
           NULL::BIGINT AS stage_id, NULL::BIGINT AS stage_attempt, NULL::VARCHAR AS task_id,
           NULL::VARCHAR AS attempt_id, NULL::BIGINT AS attempt_no, NULL::BOOLEAN AS speculative,
           NULL::VARCHAR AS executor_id,
           CASE WHEN starts THEN 'SparkListenerJobStart:' ELSE 'SparkListenerJobEnd:' END
               || job || ':'
               || coalesce(CAST(CASE WHEN starts THEN submitted ELSE completed END AS VARCHAR), 'None') AS ident,
           NULL::VARCHAR AS host, NULL::BIGINT AS size,
           CASE WHEN NOT starts THEN 'success' END AS status,
           CASE WHEN starts THEN
                '{{"group": ' || coalesce(group_j, 'null')
                || ', "stages": ' || coalesce(replace(ids_j, ',', ', '), 'null') || '}}' END AS detail
    FROM (SELECT *, {_ints("job", "submitted", "completed")} FROM bj)
)
SELECT i, kind,
       CASE WHEN ms IS NULL OR ms = 0 THEN NULL ELSE epoch_ms(ms) END AS ts,  -- the decoder fills it
       job_id, query_id, CAST(stage_id AS INTEGER) AS stage_id, CAST(stage_attempt AS INTEGER) AS stage_attempt,
       task_id, attempt_id, CAST(attempt_no AS INTEGER) AS attempt_no, speculative, executor_id, host,
       size, status, detail, ident || '|' || kind AS ident
FROM (SELECT * FROM tasks UNION ALL SELECT * FROM stages UNION ALL SELECT * FROM jobs)
WHERE plain
"""
# _SQL, defined once per connection (``define_rows``), in line order. A query's text is
# tokenised and parsed each time it runs, and this one runs once a block (and once a poll of
# live capture's spool): the short call saves about 9 ms of CPU each time.
_ROWS = "SELECT * FROM event_rows() ORDER BY i"
warnings.filterwarnings("ignore", message="Arrow output on a DB-API result makes an extra copy",
                        category=UserWarning, module=__name__)


class FastEventLog:
    """One event log's blocks of lines -> Arrow tables of stored events, in the decoder's order."""

    def __init__(self, ctx, stats, first_line: int = 1):
        self.ctx, self.stats = ctx, stats
        self.decoder = SparkEventDecoder(source_id=ctx.source_id, app_id=app_id_of(ctx.uri))
        self.line_no = first_line
        self.invalid_utf8 = 0
        self._sql, self.con = _connection()
        self.sql_min_lines = int(os.environ.get(SQL_MIN_LINES_ENV, SQL_MIN_LINES))
        self.reference = None  # (decoder, stats) of the verification, when asked for
        self.position = None  # see tables()
        if os.environ.get(VERIFY_ENV, "0") != "0":
            self.reference = (SparkEventDecoder(source_id=ctx.source_id, app_id=app_id_of(ctx.uri)), stats.snapshot())

    def tables(self, blocks: Iterable[tuple]) -> Iterator[pa.Table]:
        """Each block's events in order. What does not depend on the decoder's state (the lines,
        the redaction trigger, the SQL) runs for the next ``SCANNERS`` blocks in threads, each
        with a connection of its own, while the block before them is assembled here: DuckDB and
        Arrow release the GIL, so on two cores they overlap.

        A block may come as ``(offset, data, mark)``: while its table is handed out,
        ``position`` is its mark (the reader's counters after it, say), since the reader is
        further on by then; None once the reader's own counters are current again."""
        blocks = iter(blocks)
        cons = [(self._sql, self.con)]
        try:
            with ThreadPoolExecutor(SCANNERS, thread_name_prefix="commitsleuth-eventlog-sql") as worker:
                scanning: deque = deque()  # (the scan of a block read, its mark), in order
                damage = None
                read = 0
                while True:
                    while damage is None and blocks is not None and len(scanning) < SCANNERS:
                        try:
                            block = next(blocks, None)
                        except BaseException as exc:  # a damaged read: the blocks before it are kept
                            block, damage = None, exc
                        if block is None:
                            blocks = None
                            break
                        # a connection is used again only once the block before on it is assembled
                        if len(cons) <= read % SCANNERS:
                            cons.append(_connection())
                        con = cons[read % SCANNERS][1]
                        read += 1
                        scanning.append((worker.submit(self._scan, block[0], block[1], con),
                                         block[2] if len(block) > 2 else None))
                    if not scanning:
                        break
                    scan, mark = scanning.popleft()
                    self.position = mark if scanning or blocks is not None else None
                    table = self._checked(scan.result())
                    if table.num_rows:
                        yield table
                if damage is not None:
                    raise damage
            self.position = None
            held = self.decoder.flush()
            self.stats.events += len(held)
            table = events_to_arrow([enrich(ev) for ev in held], None)
            if self.reference is not None:
                self._verify(table)
            if held:
                yield table
        finally:
            for sql, con in cons[1:]:
                _release(sql, con)
            self.close()

    # -- one block at a time (also a log that grows: live capture's spool) ----------------------
    def table(self, offset: int, data: bytes) -> pa.Table:
        """The stored events of one block of complete lines, now; the decoder's state carries to
        the next call, and ``close()`` ends. Events still held at the end are ``decoder.flush()``'s."""
        return self._checked(self._scan(offset, data, self.con))

    def close(self) -> None:
        if self.con is not None:
            _release(self._sql, self.con)
            self.con = None

    # -- a block the fast path failed on ---------------------------------------------------------
    def snapshot(self) -> tuple:
        """Where a ``table()`` call starts: the next line's number and the counters, the
        verification's too, for ``restore()`` when the call fails."""
        theirs = self.reference[1].snapshot() if self.reference is not None else None
        return self.line_no, self.stats.snapshot(), theirs

    def restore(self, snapshot: tuple) -> None:
        self.line_no, mine, theirs = snapshot
        self.stats.restore(mine)
        if theirs is not None:
            self.reference[1].restore(theirs)

    def decode_lines(self, first_line: int, offset: int, data: bytes) -> pa.Table:
        """A block of complete lines through the decoder alone, a line it fails on rejected and
        counted (a failed ``table()`` call's lines, after ``restore()``). The verification's
        decoder reads the same lines, so the next block's check starts where this one ends."""
        self.line_no = first_line + data.count(b"\n")
        events = decode_forgiving(self.decoder, self.stats, first_line, offset, data)
        if self.reference is not None:
            decode_forgiving(*self.reference, first_line, offset, data)
        return events_to_arrow([enrich(ev) for ev in events], None)

    # -- one block ---------------------------------------------------------------------------
    def _checked(self, scanned: "_Scanned") -> pa.Table:
        first = self.line_no
        table = self._assemble(scanned)
        if self.reference is not None:
            self._verify(table, scanned.offset, scanned.data, first)
        return table

    def _scan(self, offset: int, data: bytes, con: duckdb.DuckDBPyConnection) -> "_Scanned":
        """The part of a block that needs none of the decoder's state: its lines and what SQL
        maps of them (None when the decoder must read the whole block)."""
        lines, starts = _lines(data)
        if lines is None or len(starts) < self.sql_min_lines:
            # not valid UTF-8, a line over MAX_LINE (the decoder's reading), or too few lines to
            # be worth a DuckDB pass
            return _Scanned(offset, data, None, starts, None)
        try:
            bulk = _bulk(con, lines, lines_may_hold_secret(data, starts, lines))
        except duckdb.Error:  # a value DuckDB cannot convert: the decoder reads the block
            bulk = None
        return _Scanned(offset, data, lines, starts, bulk)

    def _assemble(self, scanned: "_Scanned") -> pa.Table:
        offset, data, lines, starts, bulk = scanned
        n = len(starts)
        first = self.line_no
        self.line_no += n
        if bulk is None:
            return self._decoded_only(data, offset, first)
        self.stats.lines += n
        rows = bulk.column("i").to_numpy()
        is_bulk = np.zeros(n, dtype=bool)
        is_bulk[rows] = True
        line_nos = first + np.arange(n, dtype=np.int64)
        offsets = offset + starts
        events, keys, keep, ts, apps = self._decode_others(lines, is_bulk, rows, bulk, line_nos, offsets)
        if not keep.all():
            bulk, rows = bulk.filter(pa.array(keep)), rows[keep]
        self.stats.records += len(rows)
        self.stats.events += len(rows)
        table = self._bulk_table(bulk, rows, ts, apps, line_nos, offsets)
        return _merge(table, _raw_source(lines), rows, events, keys)

    def _decode_others(self, lines, is_bulk, rows, bulk, line_nos, offsets):
        """The lines SQL did not map, through the decoder in order, the state it carries kept
        right across the SQL rows between them. Returns the decoded events with their order keys,
        a mask of the SQL rows kept (not decoded by the decoder), their times (a row without one
        takes the last time before it, as the decoder does) and their application ids."""
        ts = bulk.column("ts").to_numpy(zero_copy_only=False).astype("datetime64[us]")
        others = np.flatnonzero(~is_bulk)
        texts = lines.take(pa.array(others)).to_pylist() if len(others) else []
        dec = self.decoder
        events, keys = [], []
        keep = np.ones(len(rows), dtype=bool)
        app_before = dec.app_id
        changes_at, changes_app = [], []  # line indices after which the app id changed, and to what
        pos = 0  # index into rows of the next SQL row
        for i, text in zip([*others.tolist(), len(is_bulk)], [*texts, None]):
            j = int(np.searchsorted(rows, i))  # the SQL rows before line i: rows[pos:j]
            if pos < j and dec.holding:
                # the first of them releases the held events: the decoder decodes it itself
                k = int(rows[pos])
                self._decode_at(k, lines[k].as_py(), line_nos, offsets, events, keys)
                keep[pos] = False
                changes_at.append(k), changes_app.append(dec.app_id)
                pos += 1
            if pos < j:
                dec.last_ts = _fill_times(ts, pos, j, dec.last_ts)
                pos = j
            if text is None:
                break
            self._decode_at(i, text, line_nos, offsets, events, keys)
            if dec.app_id != (changes_app[-1] if changes_app else app_before):
                changes_at.append(i), changes_app.append(dec.app_id)
        apps = _apps_of(rows[keep], app_before, changes_at, changes_app)
        return events, keys, keep, pa.array(ts[keep], pa.timestamp("us")), apps

    def _decode_at(self, i: int, text: str, line_nos, offsets, events: list, keys: list) -> None:
        self.stats.lines -= 1  # decode_line counts the line; the block counted it already
        out = decode_line(self.decoder, int(line_nos[i]), int(offsets[i]), text, self.stats)
        events.extend(out)
        keys.extend((i, k) for k in range(len(out)))

    def _bulk_table(self, bulk: pa.Table, rows, ts, apps, line_nos, offsets) -> pa.Table:
        """The SQL rows in EVENT_SCHEMA's columns but ``raw``, which ``_merge`` takes from the
        block's lines."""
        n = bulk.num_rows
        cols = {
            "kind": bulk.column("kind"),
            "ts": ts,
            "source_id": pa.array(np.full(n, self.ctx.source_id, dtype=np.int64))
            if self.ctx.source_id is not None else pa.nulls(n, pa.int64()),
            "line_no": pa.array(line_nos[rows]),
            "byte_offset": pa.array(offsets[rows]),
            "app_id": apps,
            "event_key": identity_hashes(bulk.column("ident")),
        }
        for name in ("job_id", "query_id", "stage_id", "stage_attempt", "task_id", "attempt_id", "attempt_no",
                     "speculative", "executor_id", "host", "size", "status", "detail"):
            cols[name] = bulk.column(name)
        arrays = [cols[f.name].cast(f.type) if f.name in cols else pa.nulls(n, f.type) for f in _WITHOUT_RAW]
        table = pa.Table.from_arrays(arrays, schema=_WITHOUT_RAW)
        # The SQL left the lines the trigger finds to the decoder; a user's pattern may match
        # text the SQL builds (an attempt's name), so then every cell is tested again.
        return redact_table(table) if has_user_patterns() else table

    def _decoded_only(self, data: bytes, offset: int, first: int) -> pa.Table:
        """A block the SQL path cannot take whole: every line through the decoder."""
        events, invalid = decode_block(self.decoder, self.stats, data, offset, first)
        self.invalid_utf8 += invalid
        return events_to_arrow([enrich(ev) for ev in events], None)

    def _verify(self, table: pa.Table, offset: int = 0, data: bytes | None = None, first: int = 0) -> None:
        """The decoder's table for the same block (or, with no block, its held events at the end)
        must equal ``table`` cell for cell, and its counters the fast path's."""
        decoder, stats = self.reference
        if data is None:
            events = decoder.flush()
            stats.events += len(events)
        else:
            events, _ = decode_block(decoder, stats, data, offset, first)
        expected = events_to_arrow([enrich(ev) for ev in events], None)
        if not expected.equals(table):
            raise FastPathMismatch(f"{self.ctx.uri}: {table_difference(table, expected)}")
        mine = (self.stats.lines, self.stats.records, self.stats.events, self.stats.rejects)
        theirs = (stats.lines, stats.records, stats.events, stats.rejects)
        if mine != theirs:
            raise FastPathMismatch(f"{self.ctx.uri}: counters (lines, records, events, rejects) "
                                   f"fast {mine} != decoder {theirs}")


# Connections with ``event_rows()`` defined, not in use, each with the SQL it was defined
# with: opening one and defining the macro cost about 35 ms of CPU, as much as reading a small
# application's whole log, so a process keeps a few for the next log (a History Server
# directory is thousands of them).
_IDLE: list[tuple[str, duckdb.DuckDBPyConnection]] = []
_IDLE_MAX = 2
_IDLE_LOCK = threading.Lock()
# A forked child must not use (or free) the DuckDB instances its parent was using.
_INHERITED: list[tuple[str, duckdb.DuckDBPyConnection]] = []


def _connection() -> tuple[str, duckdb.DuckDBPyConnection]:
    """A connection with ``event_rows()`` defined as ``_SQL`` says now, and that SQL: an idle
    one, or a new one. In memory, apart from the store's; one thread: the parallelism is the
    block scanned while the one before is assembled and the one before that written, and
    DuckDB's own threads on one block cost a third more CPU than they save."""
    stale = []
    with _IDLE_LOCK:
        while _IDLE:
            sql, con = _IDLE.pop()
            if sql == _SQL:
                break
            stale.append(con)
        else:
            con = None
    for old in stale:
        old.close()
    if con is None:
        con = duckdb.connect(config={"threads": 1})
        define_rows(con)
    return _SQL, con


def _release(sql: str, con: duckdb.DuckDBPyConnection) -> None:
    """Back to the idle ones (nothing of a log stays on it: its lines are unregistered after
    each pass), or closed when there are enough."""
    with _IDLE_LOCK:
        if len(_IDLE) < _IDLE_MAX:
            _IDLE.append((sql, con))
            return
    con.close()


def _after_fork() -> None:
    global _IDLE_LOCK
    _IDLE_LOCK = threading.Lock()  # another thread may have held it at the fork
    _INHERITED.extend(_IDLE)
    _IDLE.clear()


os.register_at_fork(after_in_child=_after_fork)


def define_rows(con: duckdb.DuckDBPyConnection) -> None:
    """``_SQL`` as the table macro ``event_rows()``; defining it binds it, so an empty table of
    the lines' shape stands in for them meanwhile."""
    con.register("lines", pa.table({"i": pa.array([], pa.int64()), "line": pa.array([], pa.string()),
                                    "secret": pa.array([], pa.bool_())}))
    try:
        con.execute(f"CREATE TEMP MACRO event_rows() AS TABLE {_SQL}")
    finally:
        con.unregister("lines")


def _bulk(con: duckdb.DuckDBPyConnection, lines: pa.StringArray, secret: np.ndarray) -> pa.Table:
    src = pa.table({"i": pa.array(np.arange(len(lines), dtype=np.int64)), "line": lines,
                    "secret": pa.array(secret)})
    con.register("lines", src)
    try:
        # execute, not sql(): a relation binds the query once more to describe it (~12 ms a
        # call, most of a small live load's SQL); the copy DuckDB warns about is of the
        # mapped columns only, well under a millisecond for a 16 MB block
        return con.execute(_ROWS).to_arrow_table()
    finally:
        con.unregister("lines")


class _Scanned(NamedTuple):
    offset: int
    data: bytes
    lines: pa.StringArray | None
    starts: np.ndarray
    bulk: pa.Table | None


def decode_block(decoder: SparkEventDecoder, stats, data: bytes, offset: int, first: int) -> tuple[list, int]:
    """A block's events through the decoder, its lines read as ``readers.LineReader`` reads
    them (``_line_text``); also the count of lines that were not valid UTF-8."""
    events, invalid = [], 0
    for k, raw in enumerate(_raw_lines(data)):
        text, bad = _line_text(raw)
        invalid += bad
        events.extend(decode_line(decoder, first + k, offset, text, stats))
        offset += len(raw) + 1
    return events, invalid


def decode_forgiving(decoder: SparkEventDecoder, stats, first: int, offset: int, data: bytes) -> list:
    """``decode_block``, but a line the decoder fails on is rejected (``not decoded
    (<exception>)``) and the lines after it are read on."""
    events = []
    for k, raw in enumerate(_raw_lines(data)):
        text, _ = _line_text(raw)
        try:
            events.extend(decode_line(decoder, first + k, offset, text, stats))
        except Exception as exc:  # noqa: BLE001 - one bad line must not cost the block
            stats.reject(f"not decoded ({type(exc).__name__})", first + k, text)
        offset += len(raw) + 1
    return events


def _line_text(raw: bytes) -> tuple[str, bool]:
    """A line's text as ``readers.LineReader`` reads it (cut at ``MAX_LINE``, bad UTF-8
    replaced, trailing CRs cut), and whether it was not valid UTF-8."""
    cut = raw[:MAX_LINE]
    try:
        return cut.decode("utf-8").rstrip("\r"), False
    except UnicodeDecodeError:
        return cut.decode("utf-8", "replace").rstrip("\r"), True


def _raw_lines(data: bytes) -> list[bytes]:
    raws = data.split(b"\n")
    if data.endswith(b"\n"):
        raws.pop()
    return raws


def table_difference(got: pa.Table, expected: pa.Table) -> str:
    """The first difference between two event tables, in words (row, column, both values)."""
    if got.num_rows != expected.num_rows:
        return f"{got.num_rows} rows from the fast path, {expected.num_rows} from the decoder"
    for name in expected.column_names:
        a, b = got.column(name).to_pylist(), expected.column(name).to_pylist()
        for row, (x, y) in enumerate(zip(a, b)):
            if x != y or type(x) is not type(y):
                line = expected.column("line_no")[row].as_py()
                return f"row {row} (line {line}), column {name}: fast path {x!r}, decoder {y!r}"
    return f"schemas differ: {got.schema} vs {expected.schema}"


def _lines(data: bytes) -> tuple[pa.StringArray | None, np.ndarray]:
    """The block's lines as one Arrow string array (newline and trailing CRs cut) and the
    offset of each in the block; the array is None when the block is not valid UTF-8 or holds
    a line longer than ``MAX_LINE`` (the reader's own decoding handles those)."""
    nl = _newlines(data)
    ends = nl if data.endswith(b"\n") else np.append(nl, len(data))
    starts = np.concatenate(([0], nl + 1))[:len(ends)].astype(np.int64)
    if len(ends) and int((ends - starts).max()) > MAX_LINE:
        return None, starts
    bounds = np.append(starts, len(data)).astype(np.int32)  # a block is far below 2 GiB
    try:
        whole = pa.Array.from_buffers(pa.string(), len(starts), [None, pa.py_buffer(bounds), pa.py_buffer(data)])
        whole.validate(full=True)
    except pa.ArrowInvalid:
        return None, starts
    return pc.utf8_rtrim(whole, characters="\r\n"), starts


def _newlines(data: bytes) -> np.ndarray:
    """The offset of each newline in ``data``. ``bytes.find`` (memchr) line by line: a block's
    lines are about 1-2 KB, so this is a few thousand calls, about six times cheaper than
    comparing every byte into a mask the size of the block."""
    out = []
    find, add = data.find, out.append
    at = find(b"\n")
    while at >= 0:
        add(at)
        at = find(b"\n", at + 1)
    return np.array(out, dtype=np.int64)


def _fill_times(ts: np.ndarray, a: int, b: int, last):
    """SQL rows ``a..b`` without a time take the last time before them (``last`` before ``a``),
    in place; returns the last time after ``b - 1`` (a datetime or None), the decoder's next."""
    seg = ts[a:b]
    missing = np.isnat(seg)
    if missing.any():
        carry = np.datetime64(last, "us") if last is not None else np.datetime64("NaT", "us")
        ext = np.concatenate(([carry], seg))
        at = np.where(~np.isnat(ext), np.arange(len(ext)), 0)
        np.maximum.accumulate(at, out=at)
        ts[a:b] = ext[at][1:]
    end = ts[b - 1]
    return None if np.isnat(end) else end.item()


def _apps_of(rows: np.ndarray, app: str | None, changes_at: list[int], changes_app: list) -> pa.Array:
    """The application id of each SQL row: the decoder's after the last line before it."""
    if not changes_at:
        return pa.array([app] * len(rows), pa.string()) if app is None else pa.repeat(redact(app), len(rows))
    values = [redact(a) for a in [app] + changes_app]
    which = np.searchsorted(np.asarray(changes_at), rows, side="right")
    return pa.array(values, pa.string()).take(pa.array(which))


def _raw_source(lines: pa.StringArray) -> pa.StringArray:
    """The block's lines as the SQL rows' ``raw``: the lines the built-in trigger finds went to
    the decoder, but a user's pattern may match any line, so then every line is tested again."""
    if not has_user_patterns():
        return lines
    return redact_table(pa.table({"raw": lines})).column("raw").combine_chunks()


def _merge(bulk: pa.Table, lines: pa.StringArray, rows: np.ndarray, events: list, keys: list) -> pa.Table:
    """SQL rows (``bulk`` without ``raw``; ``rows``: their lines' indices in ``lines``) and
    decoded events in the decoder's order: by the line that gave them, then as the decoder
    returned them.

    ``raw`` is most of a block's bytes, so it is copied once, straight from the lines, a run of
    consecutive lines at a time (a block's SQL rows are long runs of its lines). The other
    columns are short values and far fewer bytes: one ``take`` over both tables."""
    if not events:
        # every line one SQL row (the usual block): its raw lines are the lines, as they are
        return _with_raw(bulk, lines if len(rows) == len(lines) else _runs_of(lines, None, rows))
    decoded = events_to_arrow([enrich(ev) for ev in events], None)
    decoded_lines = np.fromiter((k[0] for k in keys), np.int64, len(keys))
    line = np.concatenate((rows, decoded_lines))
    sub = np.concatenate((np.zeros(len(rows), np.int64), np.fromiter((k[1] for k in keys), np.int64, len(keys))))
    order = np.lexsort((sub, line))
    table = pa.concat_tables([bulk, decoded.drop_columns(["raw"])]).take(pa.array(order))
    if len(order) == len(lines) and (line[order] == np.arange(len(lines))).all():
        # one row a line, in line order: the raw lines are the lines but where the decoder's
        # raw differs (the one redaction layer changed it), so they are taken as they are,
        # not copied a run at a time
        same = pc.equal(decoded.column("raw"), lines.take(pa.array(decoded_lines)))
        if same.null_count == 0 and pc.all(same).as_py():
            return _with_raw(table, lines)
    # each row's raw: a SQL row's line, else its event's at n + 1 + its index in ``decoded``
    where = len(lines) + 1 + order - len(rows)
    from_lines = order < len(rows)
    where[from_lines] = rows[order[from_lines]]
    return _with_raw(table, _runs_of(lines, decoded.column("raw").combine_chunks(), where))


def _runs_of(lines: pa.StringArray, more: pa.StringArray | None, where: np.ndarray) -> pa.StringArray:
    """The strings at ``where``: ``lines[i]`` at i < n = len(lines), ``more[j]`` at n + 1 + j
    (the gap keeps a run from crossing over), copied a run of consecutive ones at a time."""
    n = len(lines)
    if not len(where):
        return pa.array([], pa.string())
    ends = np.flatnonzero(np.diff(where) != 1) + 1
    starts = np.concatenate(([0], ends))
    ends = np.append(ends, len(where))
    pieces = []
    for a, b in zip(where[starts].tolist(), (ends - starts).tolist()):
        pieces.append(lines.slice(a, b) if a < n else more.slice(a - n - 1, b))
    return pa.concat_arrays(pieces)


def _with_raw(table: pa.Table, raw: pa.StringArray) -> pa.Table:
    return table.add_column(_RAW_AT, EVENT_SCHEMA.field(_RAW_AT), raw)


_RAW_AT = EVENT_SCHEMA.get_field_index("raw")
_WITHOUT_RAW = EVENT_SCHEMA.remove(_RAW_AT)
