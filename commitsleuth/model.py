"""The canonical event: one fact from any origin (text log, event log, live listener, file listing).

``EVENT_COLUMNS`` is the single list of columns: the store's ``events`` table, the Arrow batches
written to it and the Parquet files of the Spark engine all follow it, in this order.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from commitsleuth.redact import redact_table

if TYPE_CHECKING:
    import pyarrow as pa

# Event kinds. Documented in docs/schema.md; a test checks that the two agree.
KINDS = {
    "app_start": "an application (Spark app, Hive session, MR job client) started",
    "app_end": "an application ended",
    "conf": "a commit-relevant configuration value was seen",
    "job_start": "a job (MR job, Spark job, Hive 'Starting Job') started",
    "job_end": "a job ended; status says how",
    "stage_start": "a Spark stage attempt was submitted",
    "stage_end": "a Spark stage attempt completed or failed",
    "query_start": "a Hive/Spark SQL query was compiled or started executing",
    "query_end": "a Hive/Spark SQL query finished",
    "attempt_start": "a task attempt started",
    "attempt_end": "a task attempt ended; status is success, failed, killed or commit_denied",
    "attempt_state": "a task attempt changed state (MR AppMaster transitions; kill_requested: the Tez AM killed a loser)",
    "speculate": "the scheduler decided to launch a speculative attempt",
    "exclude": "the scheduler excluded (blacklisted) an executor or node after task failures",
    "commit_allowed": "an attempt was authorised to commit its output",
    "commit_denied": "an attempt was refused the right to commit",
    "task_commit": "an attempt committed its output (Saved output of task, Committed)",
    "rename": "a task renamed a file into an output directory (a publish outside the protocol)",
    "publish": "a job-level move of a whole output directory (Moving tmp dir)",
    "job_commit": "a write job committed",
    "job_abort": "a write job was aborted",
    "dedup_remove": "Hive removed a duplicate task file, keeping another",
    "dir_create": "a directory was created",
    "delete": "a file or directory was deleted or moved to trash",
    "partition_add": "the metastore added a partition",
    "partition_alter": "the metastore altered a partition",
    "partition_drop": "the metastore dropped a partition",
    "partition_exists": "an add failed because the partition already existed",
    "load": "data was loaded into a table or partition",
    "stats": "Hive's stats of a table or partition after a write (num_files, total_size in size)",
    "file": "a file seen on disk by a listing (inventory)",
    "file_create": "the storage created or wrote a file (HDFS create/append/truncate/concat, S3 PUT/COPY/multipart completion)",
    "fs_context": "a storage call kept as context: attribute changes, refused calls, the trash emptier",
    "fs_read": "one storage read (only with ingest --keep-reads)",
    "fs_reads": "storage reads counted per (principal, call, hour); size holds the count",
    "table_commit": "a Delta version, Iceberg snapshot or Hudi instant in a table format's own log",
    "table_add": "a table format's log added a data file (Delta add, Iceberg ADDED entry, Hudi write stat)",
    "table_remove": "a table format's log removed a data file (Delta remove, Iceberg DELETED entry)",
    "table_file": "a file under a Delta, Iceberg or Hudi table seen by audit's listing",
}

SEVERITIES = ("low", "medium", "high", "critical")


@dataclass(slots=True)
class Event:
    kind: str
    ts: dt.datetime | None = None
    source_id: int | None = None
    line_no: int | None = None
    byte_offset: int | None = None
    app_id: str | None = None
    job_id: str | None = None
    query_id: str | None = None
    stage_id: int | None = None
    stage_attempt: int | None = None
    task_id: str | None = None
    attempt_id: str | None = None
    attempt_no: int | None = None
    speculative: bool | None = None
    executor_id: str | None = None
    thread: str | None = None
    host: str | None = None
    table_name: str | None = None
    location: str | None = None
    partition_spec: str | None = None
    path: str | None = None
    target_path: str | None = None
    file_name: str | None = None
    file_task: str | None = None
    file_attempt: int | None = None
    write_uuid: str | None = None
    size: int | None = None
    status: str | None = None
    detail: dict[str, Any] | None = field(default=None)
    event_key: int | None = None  # identity of a Spark event across live, spool and event log
    raw: str | None = None  # last, as in the store (migration 0019 moved it)


EVENT_COLUMNS: tuple[str, ...] = ("event_id",) + tuple(f.name for f in fields(Event))

# pyarrow is imported where the first Arrow table is built, not with this module: the commands
# that only read the store (timeline, query) never build one, and the import is a fifth of their
# time (about 0.1 s). Hence the types by their pyarrow alias.
_ARROW_TYPES = {
    "event_id": "int64", "kind": "string", "ts": "timestamp[us]", "source_id": "int64", "line_no": "int64",
    "byte_offset": "int64", "stage_id": "int32", "stage_attempt": "int32", "attempt_no": "int32",
    "speculative": "bool", "file_attempt": "int32", "size": "int64", "detail": "string", "event_key": "int64",
}
_FIELDS = attrgetter(*EVENT_COLUMNS[1:])


@functools.cache
def event_schema() -> pa.Schema:
    """The Arrow schema of EVENT_COLUMNS (also ``EVENT_SCHEMA``)."""
    import pyarrow as pa

    return pa.schema([(c, pa.type_for_alias(_ARROW_TYPES.get(c, "string"))) for c in EVENT_COLUMNS])


def __getattr__(name: str):
    if name == "EVENT_SCHEMA":
        return event_schema()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def events_to_arrow(events: list[Event], first_id: int | None) -> pa.Table:
    """Columnar batch of events, ids assigned from ``first_id`` (None leaves ids null)."""
    import pyarrow as pa

    names = EVENT_COLUMNS[1:]
    # One C-level attrgetter per event, then transposed: several times faster than getattr per cell.
    columns = zip(*map(_FIELDS, events)) if events else ([] for _ in names)
    cols: dict[str, list] = dict(zip(names, map(list, columns)))
    n = len(events)
    cols["event_id"] = list(range(first_id, first_id + n)) if first_id is not None else [None] * n
    details = cols["detail"]
    cols["detail"] = [json.dumps(d, sort_keys=True, default=str) if d else None for d in details]
    # The one place events become rows: every text column and every string in detail
    # is redacted here, whatever made the event (logs, event logs, live capture, listings).
    return redact_table(pa.table(cols, schema=event_schema()), details)

