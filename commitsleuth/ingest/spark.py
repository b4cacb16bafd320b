"""The Spark ingest engine: the same pure parsers, run inside PySpark where the logs are.

Files are listed and read through Spark's ``binaryFile`` source, so any Hadoop FileSystem path
works (``file://``, ``hdfs://``, ``s3a://``, ``abfs://``, globs). Each file reaches one Python
task whole and goes through exactly the code the local engine runs (``readers`` decompress by
magic bytes, ``detect``, ``parse_lines``, ``redact``, ``enrich``), so both engines give the
same events. The unit of parallelism is one file (a rolling event-log directory is one unit),
read whole into the task's memory: ``binaryFile`` takes files up to 2 GiB.

Output, under ``OUT`` (any Hadoop path)::

    OUT/events/format=<format>/day=<YYYY-MM-DD|unknown>/part-….parquet   EVENT_COLUMNS + run_id
    OUT/sources/part-….parquet    one row per file read in a run (with its size and mtime)
    OUT/rejects/part-….parquet    per source and reason: count, first line, sample

Idempotent per file like the local engine: a file whose size and modification time are those
of a previous run is not read again; a file that grew is parsed again and only its new lines
are written. ``commitsleuth.ingest.parquet.attach_parquet`` loads the output into the DuckDB store.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import pyarrow as pa

from commitsleuth.ingest import app_end, eventlogs
from commitsleuth.errors import CommitsleuthError, InputError
from commitsleuth.model import EVENT_COLUMNS, EVENT_SCHEMA
from commitsleuth.parsers.lakehouse import is_remote, remote_tables

OUT_EXTRA = pa.schema([("run_id", pa.string()), ("format", pa.string()), ("day", pa.string()),
                       ("rec", pa.string()), ("payload", pa.string())])
OUT_SCHEMA = pa.schema(list(EVENT_SCHEMA) + list(OUT_EXTRA))
FILES_PER_BATCH = 4


def source_uid(uri: str) -> int:
    """A stable 60-bit id of a source URI: the ``source_id`` its events carry in Parquet."""
    return int(hashlib.sha1(uri.encode()).hexdigest()[:15], 16)


def local_uri(path: str) -> str:
    """``file:/x`` and ``file:///x`` as ``/x`` (what the local engine stores); others as given."""
    if path.startswith("file://"):
        return path[len("file://"):]
    if path.startswith("file:"):
        return path[len("file:"):]
    return path


@dataclass
class Unit:
    """One source: a file, or a rolling event-log directory with its parts in order."""

    uri: str
    files: list[tuple[str, int, int]]  # (path as Spark names it, size, mtime ms)
    skip_lines: int = 0

    @property
    def size(self) -> int:
        return sum(f[1] for f in self.files)

    @property
    def mtime(self) -> int:
        return max(f[2] for f in self.files)


@dataclass
class SparkIngestReport:
    out: str
    run_id: str
    sources: list[dict] = field(default_factory=list)
    unchanged: int = 0

    @property
    def events(self) -> int:
        return sum(s["events"] for s in self.sources)

    def by_status(self, status: str) -> list[dict]:
        return [s for s in self.sources if s["status"] == status]


def _name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _parent(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[0]


def units_of(listing: list[tuple[str, int, int]]) -> list[Unit]:
    """Group a file listing into sources: files of an ``eventlog_v2_*`` dir, or of a Databricks
    ``eventlog`` dir with its dated parts, become one unit."""
    units: dict[str, Unit] = {}
    siblings: dict[str, list[str]] = {}
    for path, _, _ in listing:
        siblings.setdefault(_parent(path), []).append(_name(path))
    for path, size, mtime in sorted(listing):
        parent = _parent(path)
        rolled = _name(parent).startswith(eventlogs.ROLLING_PREFIX) or (
            eventlogs.databricks_part(_name(path)) and eventlogs.databricks_layout(siblings[parent]))
        key = parent if rolled else path
        units.setdefault(key, Unit(local_uri(key), [])).files.append((path, size, mtime))
    for u in units.values():
        if len(u.files) > 1 or _name(_parent(u.files[0][0])).startswith(eventlogs.ROLLING_PREFIX):
            order = {n: i for i, n in enumerate(eventlogs.ordered_parts(_name(p) for p, _, _ in u.files))}
            u.files.sort(key=lambda f: order.get(_name(f[0]), -1))
    return list(units.values())


# -- the executor side: one unit -> Arrow batches ---------------------------------------------
def _materialise(unit_files: list[tuple[str, bytes]], tmp: Path, uri: str) -> Path:
    """The unit's bytes as local files the readers open exactly like the local engine's."""
    if len(unit_files) == 1 and not _name(_parent(unit_files[0][0])).startswith(eventlogs.ROLLING_PREFIX):
        target = tmp / (_name(uri) or "file")
        target.write_bytes(unit_files[0][1])
        return target
    d = tmp / _name(uri)
    d.mkdir()
    for path, content in unit_files:
        (d / _name(path)).write_bytes(content)
    return d


def parse_unit(uri: str, unit_files: list[tuple[str, bytes]], run_id: str, format_name: str | None,
               skip_lines: int, size: int, mtime: int) -> Iterator[pa.RecordBatch]:
    """Events, then the source row and its rejects, of one unit, as OUT_SCHEMA batches.

    The steps of the local engine's ``_plan`` and ``_finish``, around its very ``FileRead``.
    """
    import pyarrow.compute as pc

    from commitsleuth.ingest.local import FileRead, attempt_from_path, held_back
    from commitsleuth.parsers import ParseStats, SourceContext, detect, get_format
    from commitsleuth.ingest.readers import ReadError, fingerprint, peek_lines
    from commitsleuth.redact import redact

    uid = source_uid(uri)
    src = {"source_uid": uid, "run_id": run_id, "uri": redact(uri), "format": None, "fingerprint": None,
           "size_bytes": size, "mtime": mtime, "bytes_read": 0, "lines": 0, "first_line": skip_lines + 1,
           "events": 0, "rejected": 0, "status": "ok", "reason": None, "started_at": _now()}
    stats = ParseStats()
    with tempfile.TemporaryDirectory(prefix="commitsleuth-") as tmp:
        path = _materialise(unit_files, Path(tmp), uri)
        fmt = None
        try:
            src["fingerprint"] = fingerprint(path)
            if eventlogs.size_of(path) == 0:
                src["status"], src["reason"] = "skipped", "empty file"
            else:
                head = peek_lines(path)
                fmt = detect(uri, head, forced=get_format(format_name) if format_name else None)
                if fmt is None:
                    src["status"], src["reason"] = "skipped", "not a log format commitsleuth reads"
        except (OSError, ReadError) as exc:
            src["status"], src["reason"] = "failed", str(exc)
        if fmt is not None:
            src["format"] = fmt.name
            ctx = SourceContext(uri=uri, source_id=uid, attempt_id=attempt_from_path(uri))
            read = FileRead(path, fmt, ctx, stats, 0, 1, None, size)
            ends = app_end.AppEnds()
            positions = []  # (byte offsets, lines) of every event read, for the held-back record
            try:
                for table in read.tables():
                    ends.add(table)
                    positions.append(table.select(["byte_offset", "line_no"]))
                    if skip_lines:  # written by an earlier run, before the file grew
                        table = table.filter(pc.greater(table.column("line_no"), skip_lines))
                    src["events"] += table.num_rows
                    yield _event_batch(table, run_id, fmt.name)
            except ReadError as exc:
                src["status"], src["reason"] = "partial", str(exc)
            except Exception as exc:  # noqa: BLE001 - one file's bug must not stop the others
                src["status"] = "partial"
                src["reason"] = f"internal error after line {stats.lines}: {type(exc).__name__}: {exc}"
            if src["status"] == "ok" and read.damage():
                src["status"], src["reason"] = "partial", read.damage()
            if src["status"] == "ok":
                src["reason"] = eventlogs.state_note(path)
            if fmt.name == app_end.FORMAT:
                notes = (src["reason"], ends.note()) if src["status"] != "ok" else (ends.note(), src["reason"])
                src["reason"] = app_end.joined(*notes)
            src.update(bytes_read=read.bytes_read, lines=stats.lines)
            held = held_back(read, stats.lines, lambda start: _last_event_before(positions, start))
            if held:
                # as the local engine: the unfinished last record's events are written, its
                # checkpoint stays before it, and its rejects count when it is read whole
                src["bytes_read"], src["lines"], unsaid = held
                for reason, (count, _, _) in unsaid.rejects.items():
                    stats.rejects[reason][0] -= count
                    if stats.rejects[reason][0] <= 0:
                        del stats.rejects[reason]
                stats.rejected -= unsaid.rejected
            src["rejected"] = stats.rejected
    src["finished_at"] = _now()
    meta = [("source", json.dumps(src, default=str))]
    for reason, (count, first_line, sample) in stats.rejects.items():
        if first_line is not None and first_line <= skip_lines:
            continue
        meta.append(("reject", json.dumps({"source_uid": uid, "run_id": run_id, "reason": reason,
                                           "count": count, "first_line": first_line,
                                           "sample": redact(sample)})))
    yield _meta_batch(meta, run_id)


def _last_event_before(positions: list[pa.Table], offset: int) -> tuple[int, int] | None:
    """(byte offset, line) of the last event read that starts at or before ``offset``."""
    import pyarrow.compute as pc

    from commitsleuth.ingest.local import last_position

    if not positions:
        return None
    table = pa.concat_tables(positions)
    return last_position(table.filter(pc.less_equal(table.column("byte_offset"), offset)))


def _event_batch(table: pa.Table, run_id: str, fmt: str) -> pa.RecordBatch:
    table = table.combine_chunks()
    days = [ts.strftime("%Y-%m-%d") if ts else "unknown" for ts in table.column("ts").to_pylist()]
    n = table.num_rows
    extra = [pa.array([run_id] * n), pa.array([fmt] * n), pa.array(days),
             pa.array(["event"] * n), pa.nulls(n, pa.string())]
    cols = [c.chunk(0) if c.num_chunks else pa.array([], c.type) for c in table.columns]
    return pa.RecordBatch.from_arrays(cols + extra, schema=OUT_SCHEMA)


def _meta_batch(meta: list[tuple[str, str]], run_id: str) -> pa.RecordBatch:
    n = len(meta)
    cols = [pa.nulls(n, f.type) for f in EVENT_SCHEMA]
    cols[EVENT_COLUMNS.index("kind")] = pa.array(["-"] * n)
    extra = [pa.array([run_id] * n), pa.nulls(n, pa.string()), pa.nulls(n, pa.string()),
             pa.array([m[0] for m in meta]), pa.array([m[1] for m in meta])]
    return pa.RecordBatch.from_arrays(cols + extra, schema=OUT_SCHEMA)


def parse_partition(batches: Iterator[pa.RecordBatch], run_id: str, format_name: str | None):
    """``mapInArrow`` body: rows of (unit, path, content, …) -> OUT_SCHEMA batches.

    Rows of one unit arrive together and in part order (the driver repartitions and sorts
    rolling directories), possibly split across input batches.
    """
    pending: list[tuple[str, bytes]] = []
    current = None
    for batch in batches:
        for row in batch.to_pylist():
            key = (row["unit"], row["n_parts"], row["skip_lines"], row["unit_size"], row["unit_mtime"])
            if current is not None and key[0] != current[0]:
                yield from parse_unit(current[0], pending, run_id, format_name, *current[2:])
                pending = []
            current = key
            pending.append((row["path"], row["content"]))
            if len(pending) == row["n_parts"]:
                yield from parse_unit(current[0], pending, run_id, format_name, *current[2:])
                pending, current = [], None
    if pending:
        yield from parse_unit(current[0], pending, run_id, format_name, *current[2:])


# -- the driver side ---------------------------------------------------------------------------
def spark_session(master: str | None = None, conf: dict[str, str] | None = None):
    """The active SparkSession (spark-submit's), or a new one on ``master`` (default local[*]).

    Each file is held whole by one task: give executors (in local mode, the driver) a few times
    the largest file, e.g. ``conf={"spark.driver.memory": "6g"}`` for a 1 GB file.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    builder = SparkSession.builder.appName("commitsleuth-ingest")
    if master:
        builder = builder.master(master)
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    try:
        session = builder.config("spark.ui.showConsoleProgress", "false").getOrCreate()
    except Exception as exc:  # noqa: BLE001 - no Java, a bad master URL: one line for the user
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise CommitsleuthError(f"cannot start Spark ({master or 'local[*]'}): {first}") from None
    session.sparkContext.setLogLevel("ERROR")
    return session


def _spark_type(t: pa.DataType):
    from pyspark.sql import types as T

    if pa.types.is_timestamp(t):
        return T.TimestampNTZType()
    return {pa.int64(): T.LongType(), pa.int32(): T.IntegerType(), pa.bool_(): T.BooleanType()}.get(
        t, T.StringType())


def _struct(schema: pa.Schema):
    from pyspark.sql import types as T

    return T.StructType([T.StructField(f.name, _spark_type(f.type)) for f in schema])


def _previous_sources(spark, out: str) -> dict[str, dict]:
    """The last recorded state of each source URI in ``out`` (empty on a first run)."""
    from pyspark.errors import AnalysisException

    try:
        rows = spark.read.parquet(f"{out}/sources").collect()
    except AnalysisException:
        return {}
    # A grown file is parsed whole again, so its latest row counts all of its lines.
    return {r["uri"]: r for r in sorted((r.asDict() for r in rows), key=lambda d: d["finished_at"])}


def _absolute(path: str) -> str:
    if "://" in path or path.startswith("file:"):
        return path
    return os.path.abspath(path)


def ingest_spark(paths: list[str], out: str, *, spark=None, master: str | None = None,
                 format_name: str | None = None) -> SparkIngestReport:
    """Parse ``paths`` with Spark into Parquet under ``out``; returns what was read."""
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F

    if format_name:
        from commitsleuth.parsers import get_format

        get_format(format_name)  # an unknown name fails here, not in every task
    spark = spark or spark_session(master)
    out = _absolute(out)
    run_id = f"{dt.datetime.now():%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"
    previous = _previous_sources(spark, out)
    report = SparkIngestReport(out, run_id)
    # a Delta/Iceberg/Hudi table is read as one table log, through the session's FileSystem
    tables, paths = remote_tables([_absolute(p) if not is_remote(p) else p for p in paths], lambda: spark)
    for files, fmt in tables:
        _ingest_table(spark, files, fmt, out, run_id, previous, report)
    if not paths:
        return report
    reader = spark.read.format("binaryFile").option("recursiveFileLookup", "true")
    try:
        files = reader.load([_absolute(p) for p in paths])
        listing = [(r.path, r.length, int(r.modificationTime.timestamp() * 1000))
                   for r in files.select("path", "length", "modificationTime").collect()]
    except AnalysisException as exc:
        raise InputError(str(exc).splitlines()[0]) from None
    todo = []
    for unit in units_of(listing):
        prev = previous.get(unit.uri)
        if prev is not None and (prev["size_bytes"], prev["mtime"]) == (unit.size, unit.mtime):
            report.unchanged += 1
            continue
        if prev is not None and prev["status"] == "ok" and unit.size > prev["size_bytes"] and prev["format"]:
            unit.skip_lines = prev["lines"]
        todo.append(unit)
    if not todo:
        return report

    plan = spark.createDataFrame(
        [(p, u.uri, i, len(u.files), u.skip_lines, u.size, u.mtime)
         for u in todo for i, (p, _, _) in enumerate(u.files)],
        "path string, unit string, part int, n_parts int, skip_lines long, unit_size long, unit_mtime long")
    rows = files.join(F.broadcast(plan), "path").select(
        "unit", "part", "n_parts", "skip_lines", "unit_size", "unit_mtime", "path", "content")
    single = rows.filter("n_parts = 1")
    n_rolling = sum(1 for u in todo if len(u.files) > 1)
    parallelism = spark.sparkContext.defaultParallelism
    rolling = (rows.filter("n_parts > 1").repartition(max(1, min(n_rolling, 2 * parallelism)), "unit")
               .sortWithinPartitions("unit", "part"))
    parsed = single.unionByName(rolling).mapInArrow(
        lambda it: parse_partition(it, run_id, format_name), _struct(OUT_SCHEMA))
    from pyspark import StorageLevel

    # Arrow hands mapInArrow 10,000 rows a batch by default: 10,000 whole files is too many.
    batch_conf = "spark.sql.execution.arrow.maxRecordsPerBatch"
    saved = spark.conf.get(batch_conf, None)
    spark.conf.set(batch_conf, str(FILES_PER_BATCH))
    parsed = parsed.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        (parsed.filter("rec = 'event'").select(*EVENT_COLUMNS, "run_id", "format", "day")
         .write.mode("append").partitionBy("format", "day").parquet(f"{out}/events"))
        meta = parsed.filter("rec <> 'event'").select("rec", "payload").collect()
    finally:
        parsed.unpersist()
        if saved is None:
            spark.conf.unset(batch_conf)
        else:
            spark.conf.set(batch_conf, saved)
    sources = [json.loads(m.payload) for m in meta if m.rec == "source"]
    rejects = [json.loads(m.payload) for m in meta if m.rec == "reject"]
    _write_rows(spark, sources, SOURCE_SCHEMA, f"{out}/sources")
    _write_rows(spark, rejects, REJECT_SCHEMA, f"{out}/rejects")
    report.sources += sources
    return report


def _ingest_table(spark, files, fmt, out: str, run_id: str, previous: dict, report: SparkIngestReport) -> None:
    """A table's log read on the driver through the session's FileSystem (a log is small beside
    its data), written to ``out`` as one source like a parsed file. A log whose listing is as the
    last run saw it is not read again; ``attach-parquet`` replaces an earlier read of a table."""
    from commitsleuth.parsers.lakehouse import log_fingerprint, log_uri, new_log, read_arrow
    from commitsleuth.redact import redact

    uri = log_uri(files, fmt)
    fingerprint, size, _ = log_fingerprint(files, fmt)
    prev = previous.get(redact(uri))
    if prev is not None and prev["fingerprint"] == fingerprint:
        report.unchanged += 1
        return
    uid = source_uid(uri)
    src = {"source_uid": uid, "run_id": run_id, "uri": redact(uri), "format": fmt.name, "fingerprint": fingerprint,
           "size_bytes": size, "mtime": None, "bytes_read": 0, "lines": 0, "first_line": 1, "events": 0,
           "rejected": 0, "status": "ok", "reason": None, "started_at": _now()}
    log = new_log(files, fmt)
    read = read_arrow(log, fmt, uid)  # Event objects and a reader's columns alike, redacted
    events = 0 if read is None else read.num_rows
    if events:
        batch = _event_batch(read, run_id, fmt.name)
        table = pa.Table.from_batches([batch]).select([*EVENT_COLUMNS, "run_id", "format", "day"])
        schema = pa.schema([OUT_SCHEMA.field(c) for c in table.column_names])
        (spark.createDataFrame(table.to_pandas(), _struct(schema))
         .write.mode("append").partitionBy("format", "day").parquet(f"{out}/events"))
    if log.problems:
        first_file, first_reason = log.problems[0]
        more = f" and {len(log.problems) - 1} more" if len(log.problems) > 1 else ""
        src.update(status="partial", reason=redact(f"{first_file}: {first_reason}{more}"))
    src.update(events=events, lines=log.files_read, rejected=len(log.problems),
               bytes_read=log.files.bytes_read, finished_at=_now())
    _write_rows(spark, [src], SOURCE_SCHEMA, f"{out}/sources")
    report.sources.append(src)


SOURCE_SCHEMA = pa.schema([
    ("source_uid", pa.int64()), ("run_id", pa.string()), ("uri", pa.string()), ("format", pa.string()),
    ("fingerprint", pa.string()), ("size_bytes", pa.int64()), ("mtime", pa.int64()),
    ("bytes_read", pa.int64()), ("lines", pa.int64()), ("first_line", pa.int64()), ("events", pa.int64()),
    ("rejected", pa.int64()), ("status", pa.string()), ("reason", pa.string()),
    ("started_at", pa.timestamp("us")), ("finished_at", pa.timestamp("us")),
])
REJECT_SCHEMA = pa.schema([
    ("source_uid", pa.int64()), ("run_id", pa.string()), ("reason", pa.string()), ("count", pa.int64()),
    ("first_line", pa.int64()), ("sample", pa.string()),
])


def _write_rows(spark, rows: list[dict], schema: pa.Schema, target: str) -> None:
    if not rows:
        return
    for r in rows:
        for k in ("started_at", "finished_at"):
            if k in r and isinstance(r[k], str):
                r[k] = dt.datetime.fromisoformat(r[k])
    tuples = [tuple(r.get(f.name) for f in schema) for r in rows]
    spark.createDataFrame(tuples, _struct(schema)).coalesce(1).write.mode("append").parquet(target)


def _now() -> dt.datetime:
    return dt.datetime.now().replace(microsecond=0)
