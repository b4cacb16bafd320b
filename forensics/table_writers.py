"""Who wrote each table commit and each file it added or removed, and how the timelines draw them.

A table log (``parsers/lakehouse.py``) names its writers in pieces; the store ties each piece to
what other sources hold:

- a data file's TID (Spark's Iceberg file name ``partitionId-TID-operationUUID-fileCount``, Hudi's
  write token ``partitionId-stageId-TID``) names the Spark task attempt with that TID, in the
  commit's application when the log names one (``spark_task_attempts``);
- ``spark.app.id`` in a snapshot summary or Delta's commitInfo names the application;
- the SQL execution whose plan wrote the table (Delta ``WriteIntoDeltaCommand``, V2
  ``AppendData``/``OverwriteByExpression``/``ReplaceData``; ``spark_executions``) names the commit
  when its target is the table and the commit's time lies inside the execution's window.

The timelines draw a table's log as a lane of its own (one mark per commit); a file the commit
added sits on the lane of the attempt that wrote it, else of the commit's execution or
application, else of the commit itself (``delta v3 OPTIMIZE``). A removed file sits on the lane
of the commit that removed it: the TID in its name is the writer of the file, not the remover.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

TABLE_KINDS = ("table_commit", "table_add", "table_remove")
# an execution's end event comes after the commit it made; its start before it
_SLACK = dt.timedelta(seconds=1)
# what a format calls a commit's number: Delta's version, Iceberg's sequence number, Hudi's instant
_VERSION_WORD = {"delta": "v", "iceberg": "seq ", "hudi": "instant "}


@dataclass(frozen=True)
class StorageWriter:
    """The storage principal that wrote a commit's own log file: an HDFS audit ``create`` of it
    (or ``rename`` onto it: Delta's HDFSLogStore and Iceberg's Hadoop catalog write a temp file,
    then rename it), or an S3 access log PUT of it."""

    storage: str  # hdfs, s3
    cmd: str
    user: str | None
    proxy: str | None  # HDFS: the real user a proxy user's call came through
    ip: str | None
    caller: str | None  # HDFS callerContext, the S3A audit Referer's span id
    job: str | None  # the Spark job the caller context or Referer names
    actor: str  # the lane the storage's own events of that writer are drawn on
    event_id: int

    @property
    def text(self) -> str:
        """``etl via hive from 10.0.0.21 (hdfs rename, caller context …)``."""
        who = (self.user or "?") + (f" via {self.proxy}" if self.proxy else "") + (f" from {self.ip}" if self.ip else "")
        how = ", ".join(filter(None, (f"{self.storage} {self.cmd}", self.caller and f"caller context {self.caller}",
                                      self.job and f"job {self.job}")))
        return f"{who} ({how})"


@dataclass(frozen=True)
class CommitWriter:
    """The writer of one table commit as the store can name it."""

    location: str
    format: str
    version: str | None
    operation: str | None
    app_id: str | None
    execution: tuple[str, str] | None  # (app_id, SQL execution id) whose plan wrote the table
    storage: StorageWriter | None = None  # who the storage says wrote the commit's log file

    @property
    def lane(self) -> str:
        """The lane of this commit's writer: its SQL execution, its application, the storage
        principal that wrote its log file, else itself."""
        if self.execution:
            return f"{self.execution[0]}/SQL execution {self.execution[1]}"
        if self.app_id:
            return self.app_id
        if self.storage:
            return self.storage.actor
        short = self.format.split("-")[0]
        word = _VERSION_WORD.get(short, "v")
        return f"{short} {word}{self.version}" + (f" {self.operation}" if self.operation else "")


def log_lane(fmt: str | None) -> str:
    """The lane of a table's log: ``delta log``, ``iceberg log``, ``hudi log``."""
    return f"{(fmt or 'table').split('-')[0]} log"


_EVENTS = """
SELECT event_id, kind, location, app_id, ts, detail->>'format', detail->>'version',
       TRY_CAST(detail->>'tid' AS BIGINT), detail->>'log_file', line_no,
       TRY_CAST(detail->>'spark_partition' AS BIGINT), TRY_CAST(detail->>'stage_id' AS BIGINT)
FROM events WHERE list_contains($ids, event_id) AND kind IN ('table_commit', 'table_add', 'table_remove')
"""
_COMMITS = """
SELECT event_id, location, detail->>'format', detail->>'version', app_id, ts,
       coalesce(detail->>'operation', detail->'summary'->>'operation', detail->>'action'), path,
       detail->>'written_in'
FROM events WHERE kind = 'table_commit' AND list_contains($locations, location)
"""
# the storage's writes of a table log's files: created, or renamed onto (refused calls are fs_context)
_LOG_WRITES = """
SELECT * FROM (
    SELECT event_id, CASE WHEN kind = 'rename' THEN target_path ELSE path END AS written, detail->>'storage',
           detail->>'cmd', detail->>'user', detail->>'proxy', detail->>'ip',
           coalesce(detail->>'caller_context', detail->'s3a_audit'->>'id'),
           coalesce(detail->>'spark_job', detail->'s3a_audit'->>'ji', job_id),
           coalesce(attempt_id, query_id, thread, app_id, detail->>'user')
    FROM events WHERE kind IN ('file_create', 'rename')
) WHERE list_contains($paths, written)
"""
_EXECUTIONS = """
SELECT app_id, execution_id, started, ended, write_location, write_table FROM spark_executions
WHERE write_command IS NOT NULL AND (write_location IS NOT NULL OR write_table IS NOT NULL)
"""


def commit_writers(con, locations) -> dict[tuple[str, str, str | None], tuple[int, CommitWriter, str | None]]:
    """Each commit of the tables at ``locations`` by (location, format, version): its event id,
    its writer and its commit file."""
    locations = sorted({loc for loc in locations if loc})
    if not locations:
        return {}
    commits = con.execute(_COMMITS, {"locations": locations}).fetchall()
    executions = _executions(con, {c[1] for c in commits}) if commits else {}
    stored = storage_writers(con, [commit_file(c[1], c[2], c[7], c[8]) for c in commits])
    out = {}
    for eid, loc, fmt, version, app, ts, op, path, written_in in commits:
        found = [(a, x) for a, x, start, end in executions.get(loc, ())
                 if ts is not None and start is not None and start - _SLACK <= ts
                 and (end is None or ts <= end + _SLACK) and (app is None or a == app)]
        execution = found[0] if len(found) == 1 else None  # two candidates: neither is named
        storage = stored.get(commit_file(loc, fmt, path, written_in))
        out[(loc, fmt, version)] = (eid, CommitWriter(loc, fmt, version, op, app, execution, storage), path)
    return out


def commit_file(location: str, fmt: str | None, path: str | None, written_in: str | None) -> str | None:
    """The log file a commit wrote: Delta's ``N.json``, Hudi's instant file (the commit's own
    path), Iceberg's metadata file that first made the snapshot current (``written_in``)."""
    if written_in and (fmt or "").startswith("iceberg"):
        return f"{location.rstrip('/')}/metadata/{written_in}"
    return path


def storage_writers(con, files) -> dict[str, StorageWriter]:
    """The one storage principal that created (or renamed onto) each of ``files`` (table log
    files, keyed as the table's log keys them), by file. A file two principals wrote names
    neither here (a race is the lost-commit detector's). An HDFS audit names a path without
    the file system's scheme and authority (``/wh/t/_delta_log/…``): an ``hdfs://nn:8020/…``
    file is looked up by its path as well."""
    from commitsleuth.forensics.paths import split_scheme

    files = {f for f in files if f}
    if not files:
        return {}
    keys: dict[str, str] = {}
    for f in files:
        keys[f] = f
        prefix, rest = split_scheme(f)
        if prefix and not prefix.startswith("s3a:"):
            keys.setdefault(rest, f)
    found: dict[str, dict[str, StorageWriter]] = {}
    for eid, written, storage, cmd, user, proxy, ip, caller, job, actor in con.execute(
            _LOG_WRITES, {"paths": sorted(keys)}).fetchall():
        writer = StorageWriter(storage or "storage", cmd or "", user, proxy, ip, caller, job, actor or user or "?", eid)
        found.setdefault(keys[written], {}).setdefault(writer.actor, writer)
    return {f: next(iter(w.values())) for f, w in found.items() if len(w) == 1}


def tie_file_writers(con, findings) -> None:
    """Each finding's files (``detail["paths"]``) named with the one storage principal that wrote
    each, as ``storage_writers`` names a log file's: a data file's HDFS audit ``create`` (its
    callerContext ``SPARK_TASK_<app>_JId_…_SId_<stage>_<stageAttempt>_TId_<tid>_<attempt>``
    names the Spark task attempt, its client address the host) or S3 PUT (the S3A Referer's
    ``ta=``). A Delta data file's name carries no TID: the storage's record is what ties it to
    its attempt. The writer's name joins the actors (analyze words it as the attempt's one
    label: application, stage, attempt, TID, host), its record the evidence."""
    paths = {p for f in findings for p in (f.detail or {}).get("paths") or ()}
    writers = storage_writers(con, paths)
    for f in findings:
        found = [writers[p] for p in (f.detail or {}).get("paths") or () if p in writers]
        f.actors = f.actors + sorted({w.actor for w in found} - set(f.actors))
        f.evidence = f.evidence + sorted({w.event_id for w in found} - set(f.evidence))


def commit_executions(con, commits) -> dict[tuple[str, str], str]:
    """The SQL execution (``app/SQL execution N``) that wrote each commit of ``commits``
    ((table location, version)), when one execution's plan wrote the table and its window holds
    the commit (``commit_writers``)."""
    commits = {(loc, str(v)) for loc, v in commits if loc and v is not None}
    if not commits:
        return {}
    out = {}
    for (loc, _fmt, version), (_eid, writer, _path) in commit_writers(con, {c[0] for c in commits}).items():
        if (loc, version) in commits and writer.execution:
            out[(loc, version)] = writer.lane
    return out


def _executions(con, locations: set[str]) -> dict[str, list]:
    """The SQL executions whose plan's write target is one of the table ``locations`` (its path
    as every source keys it, or a table name whose location is the table's)."""
    from commitsleuth.forensics.paths import table_from_location
    # here, not at the top: the reading commands (timeline) import this module and never need
    # the parsers' package, which brings pyarrow
    from commitsleuth.parsers.lakehouse import storage_path

    # a V2 write names a catalog's table (``local.db.t``): its last two parts meet the table's
    # ``db.db/t`` (Hive warehouse) or ``db/t`` (Iceberg's Hadoop and SQL catalogs) location
    by_name: dict[str, set[str]] = {}
    for loc in locations:
        for name in {table_from_location(loc), ".".join(loc.rstrip("/").split("/")[-2:]).lower()} - {None}:
            by_name.setdefault(name, set()).add(loc)
    out: dict[str, list] = {}
    for app, x, start, end, where, table in con.execute(_EXECUTIONS).fetchall():
        loc = storage_path(where).rstrip("/") if where else None
        if loc not in locations:
            named = by_name.get(".".join((table or "").lower().split(".")[-2:]), set())
            loc = next(iter(named)) if len(named) == 1 else None
        if loc is not None:
            out.setdefault(loc, []).append((app, x, start, end))
    return out


def attempt_labels(con, keys) -> dict[tuple, str]:
    """The one Spark attempt label of each (TID, application, partition index, stage) the store
    holds; application, partition and stage are None when the log does not say them. The file
    name's partition index (Iceberg's partitionId, Hudi's write token) must be the attempt's task
    index and its stage the attempt's stage: a TID alone repeats in every application."""
    keys = sorted({k for k in keys if k[0] is not None}, key=repr)
    if not keys:
        return {}
    rows = con.execute(
        "SELECT tid, app_id, task_index, stage_id, label FROM spark_task_attempts WHERE list_contains($tids, tid)",
        {"tids": sorted({k[0] for k in keys})}).fetchall()
    out = {}
    for key in keys:
        tid, app, part, stage = key
        labels = {label for t, a, i, st, label in rows if t == tid and (app is None or a == app)
                  and (part is None or i == part) and (stage is None or st == stage)}
        if len(labels) == 1:  # two candidates: neither is named
            out[key] = labels.pop()
    return out


@dataclass(frozen=True)
class TableTie:
    """How the timelines draw one table event: its lane (``actor``) and where it is read."""

    actor: str
    where: str | None


def table_ties(con, event_ids, commits: dict | None = None) -> dict[int, TableTie]:
    """The lane and log place of each table event among ``event_ids``; ``commits``: what
    ``commit_writers`` gave for their tables, when the caller has it."""
    ids = sorted(set(event_ids))
    if not ids:
        return {}
    rows = con.execute(_EVENTS, {"ids": ids}).fetchall()
    if not rows:
        return {}
    locations = {r[2] for r in rows}
    if commits is None or not locations <= {k[0] for k in commits}:
        commits = commit_writers(con, locations)
    attempts = attempt_labels(con, {(r[7], r[3], r[10], r[11]) for r in rows if r[1] == "table_add"})
    out = {}
    for eid, kind, loc, app, _ts, fmt, version, tid, log_file, line_no, part, stage in rows:
        found = commits.get((loc, fmt, version))
        commit_file = found[2] if found else None
        if kind == "table_commit":
            out[eid] = TableTie(log_lane(fmt), commit_file)
            continue
        writer = found[1] if found else CommitWriter(loc, fmt, version, None, app, None)
        actor = attempts.get((tid, app, part, stage)) if kind == "table_add" else None
        # Delta's: the commit file's line; Iceberg's and Hudi's: the commit's own file (metadata
        # JSON, instant), nearer than the log directory the source names
        where = commit_file
        if log_file and commit_file and line_no is not None:
            where = f"{commit_file.rsplit('/', 1)[0]}/{log_file}:{line_no}"
        out[eid] = TableTie(actor or writer.lane, where)
    return out


__all__ = ["CommitWriter", "StorageWriter", "TABLE_KINDS", "TableTie", "attempt_labels", "commit_executions", "commit_file",
           "commit_writers", "log_lane", "storage_writers", "table_ties", "tie_file_writers"]
