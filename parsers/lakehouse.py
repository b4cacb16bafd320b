"""Table formats' own commit logs (Delta Lake, Iceberg, Hudi) read as sources.

A table log is not a text log: it is a directory of commit files (``_delta_log/``,
``metadata/``, ``.hoodie/``). Each format is a small module in ``parsers/formats/`` declaring a
``TableFormat`` (its name, its log directory, how to recognise a table and how to read its log)
and listed once in ``TABLE_FORMATS`` below, next to the text formats' registry.

What a read yields, whatever the format:

- ``table_commit``: one per version, snapshot or instant. ``detail`` holds the format, the
  version, its parent / read version, operation and parameters, isolation level, engine, the
  ``txn`` (appId, version) or streaming (queryId, epochId), the snapshot summary; ``app_id``
  is ``spark.app.id`` when the log names it; ``status`` is ``completed`` (or Hudi's
  ``requested``/``inflight``, or ``unreadable`` for a commit file that could not be read).
- ``table_add`` / ``table_remove``: one per data file a commit added or removed, keyed by the
  table root (``location``) and the partition its log names, as every other source keys it.

A file that cannot be read is a problem naming the file and the reason; the rest of the table
is still read, and the source is ``partial``. Every text goes through the redaction layer when
the events are written (``model.events_to_arrow``), operation parameters and userMetadata too.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import re
from dataclasses import dataclass, field
from typing import Callable, Iterator
from urllib.parse import unquote

from commitsleuth.forensics.paths import PathInfo, normalize_spec, resolve, resolve_parent, split_scheme, table_from_location
from commitsleuth.model import Event

_SCHEMED = re.compile(r"^[a-zA-Z][\w+.-]*:")  # a URI (scheme:…), compiled once: a log names millions
# Spark names a V2 (Iceberg) data file partitionId-TID-operationId-fileCount
_ICEBERG_SPARK_FILE = re.compile(r"^(?P<part>\d{5})-(?P<tid>\d+)-(?P<op>[0-9a-f-]{36})-(?P<count>\d{5})(?:-[\w-]+)?\.")
# Hudi base file {fileId}_{writeToken}_{instant}.parquet, writeToken partitionId-stageId-TID
_HUDI_FILE = re.compile(r"^(?P<file_id>[\w-]+?)_(?P<part>\d+)-(?P<stage>\d+)-(?P<tid>\d+)_(?P<instant>\d+)\.\w+$")
# Hudi log file .{fileId}_{baseInstant}.log.{version}_{writeToken}
_HUDI_LOG = re.compile(r"^\.(?P<file_id>[\w-]+?)_(?P<instant>\d+)\.log\.\d+_(?P<part>\d+)-(?P<stage>\d+)-(?P<tid>\d+)$")


class LogFiles:
    """A table's files on local disk, by path relative to its root."""

    def __init__(self, root: str):
        self.root = root
        self.bytes_read = 0  # what a progress bar advances by

    def list(self, rel: str) -> list[tuple[str, int, float]]:
        """(name, size, mtime) of the plain files in ``rel``; [] when it is not a directory."""
        out = []
        try:
            entries = list(os.scandir(os.path.join(self.root, rel)))
        except OSError:
            return []
        for e in entries:
            try:
                if e.is_file(follow_symlinks=False):
                    st = e.stat(follow_symlinks=False)
                    out.append((e.name, st.st_size, st.st_mtime))
            except OSError:
                out.append((e.name, -1, 0.0))
        return sorted(out)

    def is_dir(self, rel: str) -> bool:
        return os.path.isdir(os.path.join(self.root, rel))

    def read(self, rel: str) -> bytes:
        with open(os.path.join(self.root, rel), "rb") as fh:
            data = fh.read()
        self.bytes_read += len(data)
        return data

    def path(self, rel: str) -> str:
        return os.path.join(self.root, rel)

    def read_uri(self, uri: str) -> bytes:
        """A file the log names by absolute URI (an Iceberg manifest, a manifest list)."""
        with open(storage_path(uri, decode=False), "rb") as fh:
            data = fh.read()
        self.bytes_read += len(data)
        return data


class HadoopFiles(LogFiles):
    """The same through a Spark session's Hadoop FileSystem (hdfs://, s3a://, file:…). ``root``
    is the table's keyed root (``storage_path`` of the qualified URI, as every source keys it);
    I/O goes to the qualified URI."""

    def __init__(self, uri: str, spark):
        self.jvm = spark.sparkContext._jvm
        conf = spark.sparkContext._jsc.hadoopConfiguration()
        path = self.jvm.org.apache.hadoop.fs.Path(uri)
        self.fs = path.getFileSystem(conf)
        self.uri = self.fs.makeQualified(path).toString().rstrip("/")
        super().__init__(storage_path(self.uri))

    def _path(self, rel: str):
        return self.jvm.org.apache.hadoop.fs.Path(f"{self.uri}/{rel}" if rel else self.uri)

    def list(self, rel: str) -> list[tuple[str, int, float]]:
        try:
            statuses = self.fs.listStatus(self._path(rel))
        except Exception:  # a Py4J error: absent or not listable, like os.scandir's OSError
            return []
        return sorted((st.getPath().getName(), st.getLen(), st.getModificationTime() / 1000)
                      for st in statuses if st.isFile())

    def is_dir(self, rel: str) -> bool:
        try:
            return bool(self.fs.getFileStatus(self._path(rel)).isDirectory())
        except Exception:
            return False

    def _read(self, path) -> bytes:
        try:
            stream = self.fs.open(path)
        except Exception as exc:
            first = str(getattr(exc, "java_exception", exc)).splitlines()[0]
            raise FileNotFoundError(first) from None
        try:
            data = bytes(self.jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
        finally:
            stream.close()
        self.bytes_read += len(data)
        return data

    def read(self, rel: str) -> bytes:
        return self._read(self._path(rel))

    def read_uri(self, uri: str) -> bytes:
        return self._read(self.jvm.org.apache.hadoop.fs.Path(uri))


@dataclass
class TableLog:
    """One read of a table's log: the events, and the files that could not be read."""

    root: str
    format: str
    table_name: str | None
    files: LogFiles
    problems: list[tuple[str, str]] = field(default_factory=list)  # (file, reason)
    files_read: int = 0

    def problem(self, rel: str, reason: str) -> None:
        self.problems.append((self.files.path(rel) if not _absolute(rel) else rel, reason))

    def commit(self, version, ts: dt.datetime | None, rel: str, *, status: str = "completed",
               app_id: str | None = None, **facts) -> Event:
        """The ``table_commit`` event of one version (snapshot, instant)."""
        detail = {"format": self.format, "version": version, **{k: v for k, v in facts.items() if v is not None}}
        return Event("table_commit", ts=ts, path=rel if _absolute(rel) else self.files.path(rel),
                     location=self.root, table_name=self.table_name, app_id=app_id, status=status,
                     detail=detail)

    def data_file(self, kind: str, version, ts: dt.datetime | None, path: str, *,
                  partition_spec: str | None = None, size: int | None = None,
                  app_id: str | None = None, **facts) -> Event:
        """A ``table_add`` or ``table_remove`` of one data file: ``path`` relative to the table
        root (percent-encoded, as Delta writes it) or an absolute URI."""
        full, spec, info, writer = self.file_facts(path, partition_spec)
        detail = {"format": self.format, "version": version, **{k: v for k, v in facts.items() if v is not None}}
        detail.update(writer)
        return Event(kind, ts=ts, path=full, location=self.root, table_name=self.table_name,
                     partition_spec=spec, file_name=info.file_name, file_task=info.file_task,
                     file_attempt=info.file_attempt, write_uuid=info.write_uuid, size=size,
                     app_id=app_id, detail=detail)

    def file_facts(self, path: str, partition_spec: str | None = None) -> tuple[str, str | None, PathInfo, dict]:
        """(the path every source uses, its partition, its ``resolve``, ``writer_of`` its name) of
        a data file the log names, with the partition the log gives it (else its directory's)."""
        full = self.absolute(path)
        info = resolve_file(full)
        spec = normal_spec(partition_spec) if partition_spec else info.partition_spec
        return full, spec, info, writer_of(info.file_name or "")

    def absolute(self, path: str, *, decode: bool = True) -> str:
        """A log's file reference as the path every other source uses for it (``decode``: as
        for ``storage_path``)."""
        if path.startswith("/") or _SCHEMED.match(path):
            return storage_path(path, decode=decode)
        return self.root.rstrip("/") + "/" + unquote(path)


# A log names millions of files in a few partitions: each spelling is normalised once.
normal_spec = functools.lru_cache(maxsize=4096)(normalize_spec)


@functools.lru_cache(maxsize=4096)
def _resolve_dir(directory: str) -> PathInfo:
    return resolve_parent(directory)


def resolve_file(path: str) -> PathInfo:
    """``resolve(path)`` for a data file, its directory resolved once for all the files in it:
    a table's log names up to millions of files in a few partition directories."""
    directory, _, name = path.rpartition("/")
    if not directory or not name or "=" in name or ":" in name:
        return resolve(path)  # a k=v last segment is a directory to resolve(): its own rules
    where, own = _resolve_dir(directory), resolve(name)
    return PathInfo(where.location, where.partition_spec, (where.file_name or "") + own.file_name, own.file_task,
                    own.file_attempt, own.write_uuid)


def storage_path(uri: str, *, decode: bool = True) -> str:
    """``file:/x`` and ``file:///x`` as the local path ``/x``; ``s3://b/k`` as ``s3a://b/k``.
    ``decode``: a ``file:`` URI's percent-escapes are decoded (Delta's paths are URIs by its
    protocol); Iceberg's are the directory names as stored, a partition value URL-encoded once
    in them (``dt=%22eu%22``), and are kept."""
    if uri.startswith("file:"):
        rest = uri[5:]
        if rest.startswith("//"):
            rest = rest[2:]
            rest = rest[rest.index("/"):] if "/" in rest else "/"
        return unquote(rest) if decode else rest
    prefix, rest = split_scheme(uri)
    return prefix + rest


def writer_of(file_name: str) -> dict:
    """The writer a data file's name holds: Spark's TID in an Iceberg file name, Hudi's
    write token (partitionId-stageId-TID) and instant."""
    m = _ICEBERG_SPARK_FILE.match(file_name)
    if m:
        return {"tid": int(m["tid"]), "spark_partition": int(m["part"]), "operation_id": m["op"]}
    m = _HUDI_FILE.match(file_name) or _HUDI_LOG.match(file_name)
    if m:
        return {"tid": int(m["tid"]), "stage_id": int(m["stage"]), "spark_partition": int(m["part"]),
                "file_id": m["file_id"], "instant": m["instant"]}
    return {}


def writers_of(names) -> dict:
    """``writer_of`` of every file name in an Arrow string array at once, by the same patterns:
    {fact: Arrow array, null where the name does not hold it} (a log names up to millions)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    iceberg = pc.extract_regex(names, _ICEBERG_SPARK_FILE.pattern)
    base, log = pc.extract_regex(names, _HUDI_FILE.pattern), pc.extract_regex(names, _HUDI_LOG.pattern)
    is_hudi = pc.and_(pc.or_(pc.is_valid(base), pc.is_valid(log)), pc.invert(pc.is_valid(iceberg)))  # Iceberg's first

    def hudi_fact(name: str):
        fact = pc.coalesce(pc.struct_field(base, name), pc.struct_field(log, name))
        return pc.if_else(is_hudi, fact, pa.scalar(None, pa.string()))

    return {"tid": pc.coalesce(pc.struct_field(iceberg, "tid"), hudi_fact("tid")).cast(pa.int64()),
            "spark_partition": pc.coalesce(pc.struct_field(iceberg, "part"), hudi_fact("part")).cast(pa.int64()),
            "operation_id": pc.struct_field(iceberg, "op"), "stage_id": hudi_fact("stage").cast(pa.int64()),
            "file_id": hudi_fact("file_id"), "instant": hudi_fact("instant")}


def file_columns(full) -> dict:
    """``file_facts`` of every data file at once, from an Arrow string array of their full paths
    (``TableLog.absolute``'s): {"dir_spec": the partition its directory names, "file_name",
    "file_task", "file_attempt", "write_uuid": Arrow arrays, "writers": ``writers_of`` the
    names}. Each directory is resolved once and the names all at once: a log names up to
    millions of files in a few partitions."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from commitsleuth.forensics.paths import resolve_names

    split = pc.extract_regex(full, r"^(?P<dir>.*)/(?P<name>[^/]*)$")
    dirs, names = pc.struct_field(split, "dir"), pc.struct_field(split, "name")
    encoded = pc.dictionary_encode(dirs)
    by_dir = pa.array([resolve_file(d + "/x").partition_spec if d is not None else None
                       for d in encoded.dictionary.to_pylist()], pa.string())
    dir_specs = by_dir.take(encoded.indices)
    facts = resolve_names(names)
    odd = pc.or_(pc.invert(pc.is_valid(names)), pc.match_substring_regex(names, "[=:]|^$"))
    if pc.any(odd).as_py():  # a k=v or scheme-like name: resolve()'s own rules, row by row
        fixed = [resolve_file(p) if o else None for p, o in zip(full.to_pylist(), odd.to_pylist())]
        names = pa.array([f.file_name if f else v for f, v in zip(fixed, names.to_pylist())], pa.string())
        dir_specs = pa.array([f.partition_spec if f else v for f, v in zip(fixed, dir_specs.to_pylist())], pa.string())
        for key in facts:
            facts[key] = pa.array([getattr(f, key) if f else v for f, v in zip(fixed, facts[key].to_pylist())],
                                  facts[key].type)
    return {"dir_spec": dir_specs, "file_name": names, **facts, "writers": writers_of(names)}


def _absolute(path: str) -> bool:
    return path.startswith("/") or bool(re.match(r"^[a-zA-Z][\w+.-]*://", path))


def millis(ms) -> dt.datetime | None:
    """Epoch milliseconds as a naive UTC datetime (None for nothing or nonsense)."""
    try:
        return dt.datetime.fromtimestamp(int(ms) / 1000, dt.timezone.utc).replace(tzinfo=None)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


@dataclass(frozen=True)
class TableFormat:
    """One table format: its log directory, how a table of it is recognised and how its log is
    read (``read(log) -> Iterator[Event]``, problems recorded on ``log``). A reader may also
    yield Arrow tables of the store's event columns (``Rows``-like batches, not yet redacted):
    a log of 100k versions is read into columns, not into an object per event."""

    name: str
    description: str
    log_dir: str
    recognise: Callable[[LogFiles], bool]
    read: Callable[[TableLog], Iterator[Event]]
    kinds: tuple[str, ...] = ("table_commit", "table_add", "table_remove")


def _formats() -> tuple[TableFormat, ...]:
    from commitsleuth.parsers.formats import delta_log, hudi_timeline, iceberg_metadata

    return (delta_log.FORMAT, iceberg_metadata.FORMAT, hudi_timeline.FORMAT)


def table_formats() -> tuple[TableFormat, ...]:
    """The one list of table formats (``TABLE_FORMATS``)."""
    return _formats()


LOG_DIRS = ("_delta_log", "metadata", ".hoodie")


def hadoop_table(uri: str, spark) -> tuple[LogFiles, TableFormat] | None:
    """(the table's files, format) when ``uri`` on a Hadoop FileSystem is a table's root or
    its log directory; else None."""
    files = HadoopFiles(uri, spark)
    name = files.uri.rsplit("/", 1)[-1]
    if name in LOG_DIRS:
        parent = HadoopFiles(files.uri.rsplit("/", 1)[0], spark)
        found = next((f for f in table_formats() if f.log_dir == name and f.recognise(parent)), None)
        if found:
            return parent, found
    found = next((f for f in table_formats() if f.recognise(files)), None)
    return (files, found) if found else None


def table_root(path: str) -> tuple[str, TableFormat] | None:
    """(table root, format) when ``path`` is a table's root or its log directory; else None."""
    if re.match(r"^[a-zA-Z][\w+.-]*://", path) or not os.path.isdir(path):
        return None
    path = os.path.abspath(path)
    candidates = [path]
    if os.path.basename(path) in LOG_DIRS:
        candidates.insert(0, os.path.dirname(path))
    for root in candidates:
        files = LogFiles(root)
        for fmt in table_formats():
            if (os.path.basename(path) in LOG_DIRS and root != path and os.path.basename(path) != fmt.log_dir):
                continue
            if fmt.recognise(files):
                return root, fmt
    return None


BATCH = 20_000
STEP = 1_000  # events between two moves of a progress bar


def new_log(root: str | LogFiles, fmt: TableFormat) -> TableLog:
    files = root if isinstance(root, LogFiles) else LogFiles(root)
    table_name = table_from_location(files.root) or os.path.basename(files.root.rstrip("/")) or None
    return TableLog(files.root, fmt.name, table_name, files)


def read_table(root: str, fmt: TableFormat) -> tuple[TableLog, list[Event]]:
    """Every event of a table's log, and the log's problems."""
    log = new_log(root, fmt)
    events = []
    for item in fmt.read(log):
        if isinstance(item, Event):
            events.append(item)
        else:
            events.extend(arrow_events(item))
    return log, events


def arrow_events(table) -> list[Event]:
    """The rows of an Arrow table of the store's event columns (a reader's columnar batch) as
    ``Event`` objects, ``detail`` parsed."""
    import orjson

    out = []
    for row in table.to_pylist():
        row.pop("event_id", None)
        if row.get("detail"):
            row["detail"] = orjson.loads(row["detail"])
        out.append(Event(**row))
    return out


def record_table(store, root: str | LogFiles, fmt: TableFormat, progress: Callable[[int], None] | None = None,
                 on_events: Callable[[int], None] | None = None):
    """Read a table's log into ``store`` as one source of kind ``table_log``, replacing an
    earlier read of the same table: a re-run stores every event exactly once. Returns the
    ingest's ``SourceResult`` and the (file, reason) of every file that could not be read."""
    from commitsleuth.ingest.local import SourceResult

    uri = log_uri(root, fmt)
    forget_table(store, uri)
    sid = store.add_source(uri, "table_log", format=fmt.name)
    log = new_log(root, fmt)
    written, batch, shown = 0, [], 0

    tables: list = []  # a reader's columnar batches (``pa.Table``), written together

    def moved() -> None:
        nonlocal shown
        if progress is not None:
            progress(log.files.bytes_read - shown)
            shown = log.files.bytes_read

    def flush(batch: list) -> int:
        # ingest's progress callbacks: bytes of the log read, events stored (a long log shows a bar)
        n = store.write_events(batch)
        if tables:
            n += write_columns(store, tables, sid)
            tables.clear()
        moved()
        if on_events is not None:
            on_events(n)
        return n

    for ev in fmt.read(log):  # written in batches as read: memory flat whatever the log's length
        if not isinstance(ev, Event):  # columns of many events: after the events read before them
            if batch:
                written += flush(batch)
                batch = []
            tables.append(ev)
            if sum(t.num_rows for t in tables) >= BATCH:
                written += flush(batch)
            else:
                moved()
            continue
        if tables:
            written += flush(batch)
        ev.source_id = sid
        batch.append(ev)
        if len(batch) >= BATCH:
            written += flush(batch)
            batch = []
        elif progress is not None and len(batch) % STEP == 0:
            # a log of 100k versions: the bar moves with the files read, not only per batch stored
            moved()
    written += flush(batch)
    reason = None
    if log.problems:
        first_file, first_reason = log.problems[0]
        more = f" and {len(log.problems) - 1} more" if len(log.problems) > 1 else ""
        reason = f"{first_file}: {first_reason}{more}"
    status = "partial" if log.problems else "ok"
    store.update_source(sid, status=status, reason=reason, events=written, lines=log.files_read,
                        rejected=len(log.problems), finished_at=dt.datetime.now().replace(microsecond=0))
    return SourceResult(uri, status, fmt.name, written, log.files_read, len(log.problems), reason, sid), log.problems


def write_columns(store, tables: list, source_id: int) -> int:
    """Write a reader's columnar batches (Arrow tables of the store's event columns) as events
    of ``source_id``: through the one redaction layer, as ``write_events`` writes Event objects."""
    import pyarrow as pa

    batch = store.unseen_events(columns_of(pa.concat_tables(tables), source_id), own_source=True)
    store.write_arrow(batch)
    return batch.num_rows


def columns_of(table, source_id):
    """A reader's columnar batch as rows of ``source_id``, redacted (the one redaction layer)."""
    import pyarrow as pa

    from commitsleuth.redact import redact_table

    table = table.set_column(table.schema.get_field_index("source_id"), "source_id",
                             pa.array([source_id] * table.num_rows, pa.int64()))
    return redact_table(table)


def read_arrow(log: TableLog, fmt: TableFormat, source_id):
    """Every event of a table's log as one Arrow table of the store's columns, events of
    ``source_id``, redacted, in the order read; None when the log holds none."""
    import pyarrow as pa

    from commitsleuth.model import events_to_arrow

    parts, events = [], []
    for item in fmt.read(log):
        if isinstance(item, Event):
            item.source_id = source_id
            events.append(item)
            continue
        if events:
            parts.append(events_to_arrow(events, None))
            events = []
        parts.append(columns_of(item, source_id))
    if events:
        parts.append(events_to_arrow(events, None))
    return pa.concat_tables(parts) if parts else None


def log_uri(root: str | LogFiles, fmt: TableFormat) -> str:
    """The source URI of a table's log: its keyed root and log directory (``/t/_delta_log``)."""
    return (root.root if isinstance(root, LogFiles) else root).rstrip("/") + "/" + fmt.log_dir


def forget_table(store, uri: str) -> None:
    """Remove an earlier read of the table log at ``uri`` and its events: a table's log is read
    whole each time and replaces the last read, so a re-run stores every event exactly once."""
    from commitsleuth.redact import redact

    for (old,) in store.con.execute("SELECT source_id FROM sources WHERE uri = ? AND kind = 'table_log'",
                                    [redact(uri)]).fetchall():
        store.con.execute("DELETE FROM events WHERE source_id = ?", [old])
        store.con.execute("DELETE FROM sources WHERE source_id = ?", [old])


def log_fingerprint(files: LogFiles, fmt: TableFormat) -> tuple[str, int, int]:
    """(fingerprint, bytes, files) of a table's log as listed (names, sizes, times): a log whose
    listing is unchanged need not be read again."""
    import hashlib

    digest, size, n = hashlib.sha1(), 0, 0
    for rel in (fmt.log_dir, f"{fmt.log_dir}/timeline"):
        for name, length, mtime in files.list(rel):
            digest.update(f"{rel}/{name}\0{length}\0{mtime}\n".encode())
            size, n = size + max(length, 0), n + 1
    return digest.hexdigest(), size, n


def is_remote(path: str) -> bool:
    """Whether ``path`` is a Hadoop FileSystem URI (``hdfs://``, ``s3a://``, ``file:``), not a local path."""
    return bool(re.match(r"^[a-zA-Z][\w+.-]+:", path)) and not re.match(r"^[a-zA-Z]:[\\/]", path)


def remote_tables(paths, spark) -> tuple[list[tuple[LogFiles, TableFormat]], list[str]]:
    """The Hadoop FileSystem URIs among ``paths`` that name a table (root or log directory),
    as (its files through ``spark()``'s FileSystem, format), apart from the rest. ``spark`` is
    called only when a path is a URI. A URI that cannot be listed is left to the rest, whose
    reading says why."""
    tables, rest = [], []
    session = None
    for p in paths:
        found = None
        if is_remote(p):
            session = session or spark()
            try:
                found = hadoop_table(p, session)
            except Exception as exc:  # a Py4J error (no such FileSystem, refused): not a table here
                if type(exc).__name__ != "Py4JJavaError":
                    raise
        if found is None:
            rest.append(p)
        elif found not in tables:
            tables.append(found)
    return tables, rest


def split_tables(paths) -> tuple[list[tuple[str, TableFormat]], list[str]]:
    """Paths naming a table (root or log directory) apart from the rest; a directory that
    holds tables below it stays in the rest, its tables listed too (``inside_tables`` tells
    which of its files they own)."""
    tables, rest = [], []
    for p in paths:
        found = table_root(p)
        if found is None:
            rest.append(p)
            if not re.match(r"^[a-zA-Z][\w+.-]*://", p) and os.path.isdir(p):
                tables.extend(t for t in tables_below(p) if t not in tables)
        elif found not in tables:
            tables.append(found)
    return tables, rest


def tables_below(directory: str) -> list[tuple[str, TableFormat]]:
    """Every table under ``directory`` (not inside another table)."""
    out = []
    for top, dirs, _ in os.walk(directory):
        if any(d in LOG_DIRS for d in dirs):
            found = table_root(top)
            if found is not None and found[0] == os.path.abspath(top):
                out.append(found)
                dirs[:] = []  # the table's files are its log's, not logs of their own
                continue
        dirs.sort()
    return out


def inside_tables(path: str, roots: list[str]) -> bool:
    """Whether ``path`` lies under one of the table roots."""
    full = os.path.abspath(path)
    return any(full.startswith(root.rstrip("/") + "/") for root in roots)


__all__ = ["LOG_DIRS", "HadoopFiles", "LogFiles", "arrow_events", "columns_of", "file_columns", "normal_spec", "forget_table", "hadoop_table", "is_remote", "log_fingerprint",
           "log_uri", "new_log", "read_arrow", "remote_tables", "TableFormat", "TableLog", "millis", "inside_tables", "read_table",
           "record_table", "split_tables", "storage_path", "table_formats", "table_root", "tables_below", "write_columns",
           "writer_of"]
