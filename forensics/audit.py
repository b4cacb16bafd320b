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
import os
import re
from dataclasses import dataclass
from typing import Callable, Iterator

from commitsleuth.errors import InputError
from commitsleuth.forensics.analyze import analyze
from commitsleuth.forensics.detectors import Finding
from commitsleuth.forensics.paths import enrich
from commitsleuth.forensics.success_manifest import MAX_BYTES, read_hadoop_manifest, read_manifest
from commitsleuth.model import Event
from commitsleuth.store import Store

BATCH = 50_000
_PART_DIR = re.compile(r"^[^=/]+=[^/]*$")
# Writers' temp layers: listed as directories too, so an empty leftover still shows.
_TEMP_DIR = re.compile(r"^(_temporary|\.spark-staging-.*|\.hive-staging.*|_task_tmp\..*|_tmp\..*)$")
_SCHEME = re.compile(r"^[a-zA-Z][\w+.-]*:")


@dataclass
class Entry:
    path: str
    is_dir: bool
    size: int | None
    mtime: dt.datetime | None
    manifest: dict | str | None = None  # a committer's _SUCCESS manifest, read


def walk_local(root: str) -> Iterator[Entry]:
    """Every file under ``root`` and every leaf partition directory (k=v with no k=v below)."""
    stack = [root]
    while stack:
        top = stack.pop()
        try:
            entries = sorted(os.scandir(top), key=lambda e: e.name)
        except OSError as exc:
            raise InputError(f"cannot list {top}: {exc.strerror or exc}") from None
        subparts = False
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                stack.append(e.path)
                if _TEMP_DIR.match(e.name):
                    yield Entry(e.path, True, None, _mtime(e.stat(follow_symlinks=False).st_mtime))
                subparts = subparts or bool(_PART_DIR.match(e.name))
            else:
                st = e.stat(follow_symlinks=False)
                yield Entry(e.path, False, st.st_size, _mtime(st.st_mtime), _local_manifest(e.path, e.name, st.st_size))
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
                   progress: Callable[[int], None] | None = None) -> int:
    """Write a listing into ``store`` as one inventory source (replacing an earlier listing of it)."""
    for (old,) in store.con.execute(
        "SELECT source_id FROM sources WHERE uri = ? AND kind = 'inventory'", [root]
    ).fetchall():
        store.con.execute("DELETE FROM events WHERE source_id = ?", [old])
        store.con.execute("DELETE FROM sources WHERE source_id = ?", [old])
    sid = store.add_source(root, "inventory", format="listing")
    batch: list[Event] = []
    written = 0
    for entry in entries:
        ev = Event("file", ts=entry.mtime, source_id=sid, path=entry.path, size=entry.size,
                   detail={"dir": True} if entry.is_dir else {"manifest": entry.manifest} if entry.manifest else None)
        batch.append(enrich(ev))
        if len(batch) >= BATCH:
            written += store.write_events(batch)
            batch = []
            if progress:
                progress(written)
    written += store.write_events(batch)
    store.update_source(sid, status="ok", events=written, lines=written,
                        finished_at=dt.datetime.now().replace(microsecond=0))
    return written


def audit(store: Store, path: str, *, spark=None) -> tuple[int, list[Finding]]:
    """List ``path`` into ``store`` and analyze; returns (entries listed, findings)."""
    if _SCHEME.match(path) and not re.match(r"^[a-zA-Z]:[\\/]", path):
        if spark is None:
            spark = _spark_session()
        entries = walk_hadoop(path, spark)
        root = path.rstrip("/")
    else:
        if not os.path.isdir(path):
            raise InputError(f"no such directory: {path}")
        root = os.path.abspath(path)
        entries = walk_local(root)
    try:
        n = record_listing(store, root, entries)
    except InputError:
        raise
    except Exception as exc:  # a Hadoop FileSystem error arrives as a Py4J Java exception
        if type(exc).__name__ != "Py4JJavaError":
            raise
        first = str(exc.java_exception.toString()).splitlines()[0]
        raise InputError(f"cannot list {path}: {first}") from None
    return n, analyze(store)


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
