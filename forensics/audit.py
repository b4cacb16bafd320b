"""Audit a table location with no logs at all: list it, then let the detectors judge the listing.

A listing becomes ``file`` events (one per file, and one per leaf partition directory with
``detail.dir``) in a source of kind ``inventory``; the same detectors that read logs then find
duplicate task files (CS101), several write jobs in one partition (CS108), leftover temp and
staging directories (CS109) and empty partitions (CS110). With a store that also holds logs,
the listing adds ground truth to them (partial output, metastore mismatch).

Local paths are walked with ``os.scandir``; any other URI (``hdfs://``, ``s3a://``, ``file:``…)
is listed through a Spark session's Hadoop FileSystem.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from dataclasses import dataclass
from typing import Callable, Iterator, NamedTuple

from commitsleuth.errors import InputError
from commitsleuth.forensics.analyze import analyze
from commitsleuth.forensics.detectors import Finding
from commitsleuth.forensics.detectors.base import TEMP_DIRS
from commitsleuth.forensics.paths import PathInfo, enrich, resolve, resolve_names, resolve_parent, table_from_location
from commitsleuth.forensics.success_manifest import MAX_BYTES, read_hadoop_manifest, read_manifest
from commitsleuth.model import Event
from commitsleuth.parsers.lakehouse import hadoop_table, record_table, storage_path, table_root, write_columns
from commitsleuth.store import Store

BATCH = 50_000
_PART_DIR = re.compile(r"^[^=/]+=[^/]*$")
# Writers' temp layers: listed as directories too, so an empty leftover still shows.
_TEMP_DIR = re.compile(rf"^({TEMP_DIRS})$")
_SCHEME = re.compile(r"^[a-zA-Z][\w+.-]*:")


@dataclass
class Entry:
    path: str
    is_dir: bool
    size: int | None
    mtime: dt.datetime | None
    manifest: dict | str | None = None  # a committer's _SUCCESS manifest, read
    error: str | None = None  # why this path could not be listed (then it holds no event)


class AuditResult(NamedTuple):
    listed: int
    findings: list[Finding]
    unlisted: list[Entry]  # subdirectories (or entries) that could not be read: not audited


def walk_local(root: str) -> Iterator[Entry]:
    """Every file under ``root`` and every leaf partition directory (k=v with no k=v below).
    A subdirectory or entry that cannot be read is one ``Entry`` with ``error`` and the walk
    goes on; only a root that cannot be listed stops it (InputError)."""
    stack = [root]
    while stack:
        top = stack.pop()
        try:
            entries = sorted(os.scandir(top), key=lambda e: e.name)
        except OSError as exc:
            if top == root:
                raise InputError(f"cannot list {top}: {exc.strerror or exc}") from None
            yield Entry(top, True, None, None, error=f"cannot list {top}: {exc.strerror or exc}")
            continue
        subparts = False
        for e in entries:
            try:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                    if _TEMP_DIR.match(e.name):
                        yield Entry(e.path, True, None, _mtime(e.stat(follow_symlinks=False).st_mtime))
                    subparts = subparts or bool(_PART_DIR.match(e.name))
                else:
                    st = e.stat(follow_symlinks=False)
                    yield Entry(e.path, False, st.st_size, _mtime(st.st_mtime),
                                _local_manifest(e.path, e.name, st.st_size))
            except OSError as exc:  # a directory readable but not searchable: names, no stat
                yield Entry(e.path, False, None, None)  # the name alone still tells duplicates
                yield Entry(e.path, False, None, None, error=f"cannot stat {e.path}: {exc.strerror or exc}")
        if top != root and _PART_DIR.match(os.path.basename(top)) and not subparts:
            yield Entry(top, True, None, _mtime(os.stat(top).st_mtime))


def walk_hadoop(uri: str, spark) -> Iterator[Entry]:
    """The same listing through Hadoop's FileSystem API of a live Spark session (hdfs, s3a, …)."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    root = jvm.org.apache.hadoop.fs.Path(uri)
    fs = root.getFileSystem(conf)
    if not fs.exists(root):
        raise InputError(f"no such directory: {uri}")
    stack = [root]
    while stack:
        top = stack.pop()
        subparts = False
        for st in sorted(fs.listStatus(top), key=lambda s: s.getPath().getName()):
            name = st.getPath().getName()
            if st.isDirectory():
                stack.append(st.getPath())
                if _TEMP_DIR.match(name):
                    yield Entry(st.getPath().toString(), True, None, _mtime(st.getModificationTime() / 1000))
                subparts = subparts or bool(_PART_DIR.match(name))
            else:
                manifest = read_hadoop_manifest(jvm, fs, st) if name == "_SUCCESS" and st.getLen() > 0 else None
                yield Entry(st.getPath().toString(), False, st.getLen(), _mtime(st.getModificationTime() / 1000), manifest)
        if top != root and _PART_DIR.match(top.getName()) and not subparts:
            yield Entry(top.toString(), True, None, _mtime(fs.getFileStatus(top).getModificationTime() / 1000))


def record_listing(store: Store, root: str, entries: Iterator[Entry],
                   progress: Callable[[int], None] | None = None,
                   unlisted: list[Entry] | None = None, kind: str = "file",
                   log_dir: str | None = None) -> int:
    """Write a listing into ``store`` as one inventory source (replacing an earlier listing of it).
    Entries that could not be read go to ``unlisted`` and make the source ``partial``.
    ``kind='table_file'`` lists a Delta/Iceberg/Hudi table: its log judges it, not the Hive
    directory detectors; files under ``log_dir`` are marked ``detail.log``."""
    unlisted = [] if unlisted is None else unlisted
    for (old,) in store.con.execute(
        "SELECT source_id FROM sources WHERE uri = ? AND kind = 'inventory'", [root]
    ).fetchall():
        store.con.execute("DELETE FROM events WHERE source_id = ?", [old])
        store.con.execute("DELETE FROM sources WHERE source_id = ?", [old])
    sid = store.add_source(root, "inventory", format="listing")
    batch: list = []
    written = 0

    def write(batch: list) -> int:
        if log_dir is not None:  # a table's listing: columns, not an Event per file (it holds millions)
            return write_columns(store, [table_files(root, batch, log_dir)], sid) if batch else 0
        return store.write_events([enrich(Event(
            kind, ts=e.mtime, source_id=sid, path=e.path, size=e.size,
            detail={"dir": True} if e.is_dir else {"manifest": e.manifest} if e.manifest else None)) for e in batch])

    for entry in entries:
        if entry.error:
            unlisted.append(entry)
            continue
        batch.append(entry)
        if len(batch) >= BATCH:
            written += write(batch)
            batch = []
            if progress:
                progress(written)
    written += write(batch)
    reason = None
    unlisted.sort(key=lambda e: e.path)
    if unlisted:
        more = f" and {len(unlisted) - 1} more" if len(unlisted) > 1 else ""
        reason = f"{unlisted[0].error}{more}: not audited"
    store.update_source(sid, status="partial" if unlisted else "ok", reason=reason, events=written,
                        lines=written, finished_at=dt.datetime.now().replace(microsecond=0))
    return written


def table_files(root: str, entries: list[Entry], log_dir: str):
    """The ``table_file`` events of a table's listed entries as an Arrow table of the store's
    event columns: each keyed as the table's log keys its files (``file:/x`` as ``/x``,
    ``s3://`` as ``s3a://``, by the table root and the partition its path names), with what
    ``enrich`` gives any listed path; files under ``log_dir`` marked ``detail.log``. Each
    directory is resolved once and the names all at once: a table holds millions of files."""
    import pyarrow as pa

    from commitsleuth.model import event_schema

    n = len(entries)
    paths = [e.path if e.path.startswith("/") else storage_path(e.path) for e in entries]
    log_prefix = log_dir.rstrip("/") + "/"
    dirs: dict[str, PathInfo] = {}
    infos, names, details = [], [], []
    for entry, path in zip(entries, paths):
        directory, _, name = path.rpartition("/")
        if entry.is_dir or not directory or not name or "=" in name or ":" in name:
            info = resolve(path, is_dir=entry.is_dir)  # resolve()'s own rules for these
            name = info.file_name
        else:
            info = dirs.get(directory) or dirs.setdefault(directory, resolve_parent(directory))
            name = (info.file_name or "") + name  # a partition's subdirectory stays in the name, as resolve's
        infos.append(info)
        names.append(name)
        detail = {"dir": True} if entry.is_dir else {"manifest": entry.manifest} if entry.manifest else None
        if path.startswith(log_prefix):
            detail = {**(detail or {}), "log": True}
        details.append(None if detail is None else json.dumps(detail, sort_keys=True, default=str))
    names = pa.array(names, pa.string())
    tables = {i.location: table_from_location(i.location) for i in set(infos)}
    cols = {
        "kind": pa.array(["table_file"] * n, pa.string()), "ts": pa.array([e.mtime for e in entries], pa.timestamp("us")),
        "location": pa.array([root] * n, pa.string()), "path": pa.array(paths, pa.string()),
        "table_name": pa.array([tables[i.location] for i in infos], pa.string()),
        "partition_spec": pa.array([i.partition_spec for i in infos], pa.string()), "file_name": names,
        "size": pa.array([e.size for e in entries], pa.int64()), "detail": pa.array(details, pa.string()),
        **resolve_names(names),
    }
    return pa.table([cols[f.name].cast(f.type) if f.name in cols else pa.nulls(n, f.type) for f in event_schema()],
                    schema=event_schema())


# DuckDB's share of an audit's memory: a table of millions of files is two rows per file (its
# log's and the listing's), which DuckDB spills to disk past this, whatever the table's size.
AUDIT_MEMORY = "512MB"


def audit(store: Store, path: str, *, spark=None) -> AuditResult:
    """List ``path`` into ``store`` and analyze: (entries listed, findings, what could not be
    listed; the rest is audited all the same). DuckDB holds at most ``AUDIT_MEMORY``; an
    in-memory store spills to a temporary directory of its own (removed after)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="commitsleuth-audit-") as spill:
        if store.path == ":memory:":  # else DuckDB spills beside the store's file
            store.con.execute(f"SET temp_directory = '{spill.replace(chr(39), chr(39) * 2)}'")
        with store.memory_limited(AUDIT_MEMORY):
            return _audit(store, path, spark)


def _audit(store: Store, path: str, spark) -> AuditResult:
    if _SCHEME.match(path) and not re.match(r"^[a-zA-Z]:[\\/]", path):
        if spark is None:
            spark = _spark_session()
        table = _java_errors(path, hadoop_table, path, spark)
        # a table named by its log directory is listed from its root
        entries = walk_hadoop(table[0].uri if table else path, spark)
        root = path.rstrip("/")
    else:
        if not os.path.isdir(path):
            raise InputError(f"no such directory: {path}")
        root = os.path.abspath(path)
        table = table_root(root)
        entries = walk_local(table[0] if table else root)
    unlisted: list[Entry] = []
    kind, log_dir = "file", None
    if table is not None:
        # a Delta/Iceberg/Hudi table: its own log says what committed, not _SUCCESS markers
        _, problems = record_table(store, *table)
        unlisted.extend(Entry(file, False, None, None, error=f"{file}: {reason}") for file, reason in problems)
        root = table[0] if isinstance(table[0], str) else table[0].root
        kind, log_dir = "table_file", root.rstrip("/") + "/" + table[1].log_dir
    n = _java_errors(path, record_listing, store, root, entries, unlisted=unlisted, kind=kind, log_dir=log_dir)
    return AuditResult(n, analyze(store), unlisted)


def _java_errors(path: str, fn, *args, **kwargs):
    """``fn(*args, **kwargs)``; a Hadoop FileSystem error (a Py4J Java exception) as InputError."""
    try:
        return fn(*args, **kwargs)
    except InputError:
        raise
    except Exception as exc:
        if type(exc).__name__ != "Py4JJavaError":
            raise
        first = str(exc.java_exception.toString()).splitlines()[0]
        raise InputError(f"cannot list {path}: {first}") from None


def _spark_session():
    try:
        from pyspark.sql import SparkSession
    except ImportError:  # pragma: no cover - pyspark is a dependency
        raise InputError("listing a Hadoop FileSystem URI needs pyspark") from None
    return SparkSession.builder.appName("commitsleuth-audit").config("spark.ui.enabled", "false").getOrCreate()


def _local_manifest(path: str, name: str, size: int) -> dict | str | None:
    if name != "_SUCCESS" or size == 0:
        return None  # FileOutputCommitter's marker is empty
    if size > MAX_BYTES:
        return f"not read: {size} bytes"
    try:
        with open(path, "rb") as fh:
            return read_manifest(fh.read(MAX_BYTES + 1))
    except OSError as exc:
        return f"not read: {exc.strerror or exc}"


def _mtime(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).replace(tzinfo=None)
