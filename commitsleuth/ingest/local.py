"""The local ingest engine: files on this machine -> parse -> canonical events in the store.

Reading (``readers``) and parsing (``commitsleuth.parsers``) are pure; only this module writes.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import glob
import ctypes
import errno
import gc
import multiprocessing
import os
import select
import signal
import stat
import threading
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from commitsleuth.ingest import app_end, eventlog_fast, eventlogs, phases, pool as workers_pool
from commitsleuth.ingest.ahead import ahead
from commitsleuth.errors import IngestInterrupted, InputError, StoreWriteError
from commitsleuth.model import events_to_arrow
from commitsleuth.forensics.paths import enrich
from commitsleuth.parsers import ParseStats, SourceContext, detect, get_format, parse_lines
from commitsleuth.parsers.attempts import attempt_of_log_name
from commitsleuth.parsers.base import ATTEMPT_RE, BINARY, Format
from commitsleuth.parsers.scan import BlockScanner
from commitsleuth.parsers.messages import message_parser
from commitsleuth.ingest.readers import (MAX_LINE, BlockReader, ReadError, fingerprint, is_plain, line_bounds,
                                  open_lines, peek_lines, record_start, same_head, unfinished_line)
from commitsleuth.redact import add_user_patterns, redact, user_patterns
from commitsleuth.store import Store
from commitsleuth.parsers.lakehouse import inside_tables, is_remote, record_table, remote_tables, split_tables

BATCH = 10_000
# An ingest commits its batches when they hold this many events (four DuckDB row groups, which
# the store writes straight into its file) or cover this many bytes of the file (so a sparse
# text log still checkpoints now and then); a stopped run re-reads at most that. Commits of one
# row group each left DuckDB's closing checkpoint about 2 s and 1.1 GiB more on a 1M-event log
# (docs/BENCHMARKS.md, 2026-11-23 05:40); of four, 0.1 s and nothing.
COMMIT_ROWS = 4 * 122_880
COMMIT_BYTES = 1 << 30
# ... or when this many seconds passed since the last commit: a slow read (a worker range of a
# big log, a decoder) stopped in its first minute keeps what it had written, not nothing.
COMMIT_SECONDS = 5.0
# when workers start and how big their tasks are: commitsleuth/ingest/pool.py (the environment tunes it)
PARALLEL_MIN, RANGE = workers_pool.PARALLEL_MIN, workers_pool.RANGE
IN_FLIGHT = 3  # ranges of one file handed to the pool at a time
# A worker scans its range in blocks of this size, not the reader's 8 MiB: each block is passed
# over several times (the keyword search, the newline mask, the ASCII and NUL tests), and a worker
# fresh from its fork touches fewer new pages (its first 53 MB range of the bench's log: 4,600
# page faults against 8,200, 0.03 cpu-s less; later ranges the same).
WORKER_BLOCK = 1 << 20


@dataclass
class SourceResult:
    uri: str
    status: str  # ok | partial | failed | skipped | unchanged
    format: str | None = None
    events: int = 0
    lines: int = 0
    rejected: int = 0
    reason: str | None = None
    source_id: int | None = None
    known: int = 0  # Spark events another source had already stored (live capture, a spool)


@dataclass
class IngestReport:
    results: list[SourceResult] = field(default_factory=list)

    @property
    def events(self) -> int:
        return sum(r.events for r in self.results)

    @property
    def known(self) -> int:
        return sum(r.known for r in self.results)

    def by_status(self, status: str) -> list[SourceResult]:
        return [r for r in self.results if r.status == status]

    @property
    def failed(self) -> list[SourceResult]:
        return self.by_status("failed")


def expand_paths(paths: Iterable[str], unreadable: list | None = None) -> list[Path]:
    """Files named by paths, directories (recursive) and globs; a missing one is an InputError.
    A subdirectory that cannot be listed is appended to ``unreadable`` as ``(path, why)``."""
    files: list[Path] = []
    for raw in paths:
        matches = sorted(glob.glob(raw, recursive=True)) if glob.has_magic(raw) else [raw]
        if not matches or not all(os.path.lexists(m) for m in matches):
            raise InputError(f"no such file or directory: {raw}")
        for m in matches:
            try:
                os.stat(m)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise InputError(f"symlink loop: {m}") from None
            p = Path(m)
            if p.is_dir():
                # special files met in a directory get a status too (skipped, never opened)
                files.extend(_walk(p, unreadable))
            else:
                files.append(p)
    seen, unique = set(), []
    for f in files:
        key = os.path.abspath(f)
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return eventlogs.group_rolling(unique)


def _walk(top: Path, unreadable: list | None) -> list[Path]:
    """The files below ``top`` in path order (as ``sorted(top.rglob("*"))``), the directories
    that could not be listed noted instead of passed over in silence."""
    def failed(exc: OSError) -> None:
        if unreadable is not None:
            unreadable.append((Path(exc.filename), f"cannot read the directory: {exc.strerror or exc}"))

    found = []
    for directory, _, names in os.walk(top, onerror=failed):
        for name in names:
            q = Path(directory, name)
            try:
                os.stat(q)
            except PermissionError as exc:  # listed but not searchable (mode r--): its files unseen
                exc.filename = directory
                failed(exc)
                break
            except OSError:
                pass  # a dangling symlink: no file, as before
            if q.is_file() or special_file(q):
                found.append(q)
    return sorted(found)


def readable(path: str) -> str:
    """A path as text that any output and the store take: a byte that is not UTF-8 (held by
    Python as a lone surrogate) is written ``\\xff``; ``name_bytes`` keeps the real name."""
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        return os.fsencode(path).decode("utf-8", "backslashreplace")


def name_bytes(path: str) -> bytes | None:
    """The name's bytes when its text form is not the name itself, else None."""
    return os.fsencode(path) if readable(path) != path else None


def special_file(path: Path) -> str | None:
    """What a FIFO, socket or device is called, or None: such files are never opened (a FIFO
    blocks the reader forever, a device never ends)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    for test, name in ((stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device")):
        if test(mode):
            return name
    return None


def attempt_from_path(path: str) -> str | None:
    return attempt_of_log_name(path)


def ingest(
    store: Store,
    paths: Iterable[str],
    *,
    format_name: str | None = None,
    progress: Callable[[int], None] | None = None,
    on_events: Callable[[int], None] | None = None,
    keep_reads: bool = False,
    stop_requested: Callable[[], int] | None = None,
) -> IngestReport:
    """Ingest files into ``store``; each file gets a ``sources`` row whatever happens to it.
    ``keep_reads``: storage audit logs keep every read instead of counts per hour.
    ``stop_requested``: a signal number once the run should stop; it stops at the next
    checkpoint with ``IngestInterrupted`` (a store write failing raises ``StoreWriteError``).
    Either way the file's source stays ``running`` and the same call continues it."""
    phases.mark("store open: ingest begins")
    fmt_forced = get_format(format_name) if format_name else None
    report = IngestReport()
    # a Delta/Iceberg/Hudi table (its root or log directory) is read as one table log
    tables, paths = split_tables(list(paths))
    # a table on a Hadoop FileSystem (hdfs://, s3a://, file:) read through Spark's FileSystem, as audit does
    far, paths = remote_tables(paths, _spark)
    tables += far
    for p in paths:
        if is_remote(p):
            raise InputError(f"{p}: not a Delta, Iceberg or Hudi table here; read logs on a Hadoop "
                             f"FileSystem with --engine spark")
    for root, table_format in tables:
        report.results.append(record_table(store, root, table_format, progress, on_events)[0])
    if not paths:
        return report
    roots = [root for root, _ in tables if isinstance(root, str)]
    unreadable: list = []
    files = [f for f in expand_paths(paths, unreadable) if not inside_tables(str(f), roots)]
    for directory, why in unreadable:  # an input error, as audit makes it: the rest is read
        uri = readable(str(directory.resolve()))
        sid = _record(store, uri, "failed", why, kind="file", path=directory)
        report.results.append(SourceResult(uri, "failed", reason=why, source_id=sid))
    workers = _workers([_size(f) for f in files])
    planned: deque = deque()
    run = _Run(store_files=_store_files(store), workers=workers)
    if len(files) > 1000:  # a big directory: the names' rows fetched in one query
        run.resolved = {f: str(f.resolve()) for f in files}
        uris = [readable(r) for r in run.resolved.values()]
        run.names = store.latest_sources(uris + [u + eventlogs.IN_PROGRESS for u in uris])
    stop = stop_requested or (lambda: 0)
    reads: deque = deque()  # the reads among ``planned``: what the pool holds is counted on them alone

    def finish_next() -> None:
        item = planned.popleft()
        if isinstance(item, FileRead):
            reads.popleft()
        report.results.append(_finish(store, item, on_events, stop))

    with _pool(workers) as pool, store.memory_limited():  # memory flat whatever the logs' size
        for path in files:
            if stop() and planned:
                break  # the reads planned so far stop at their first checkpoint below
            item = _plan(store, path, fmt_forced, progress, pool, keep_reads, run)
            _drop_early()
            phases.mark(f"planned {path}")
            planned.append(item)
            if isinstance(item, FileRead):
                reads.append(item)
            # Workers read ahead of the writes, a bounded amount of work: memory stays flat. With
            # no pool nothing is read ahead; results that need no writing pass straight through.
            while planned and (pool is None or isinstance(planned[0], SourceResult)
                               or workers_pool.ahead(*_handed_out(reads), workers)):
                finish_next()
        while planned:
            finish_next()
        run.retire_displaced(store)
        phases.mark("written; the pool ends")
    store.flush()  # the rows of files not read, written together
    phases.mark("ingest ends")
    return report


@contextmanager
def _pool(workers: int):
    if workers < 2:
        yield None
        return
    pool = workers_pool.take_forked(workers) or ProcessPoolExecutor(
        max_workers=workers, mp_context=workers_pool.context(), initializer=_worker_start,
        initargs=(os.getpid(), user_patterns()))
    try:
        yield pool
    except BaseException:
        # Stopped (signal, write error): the ranges in flight are not wanted, do not wait for them.
        _kill_workers(pool)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    if _lost(pool):
        # A pool that lost a worker or its fork server may have started another worker since
        # (the server restarts on demand) while the executor was ending it: waiting for that
        # idle worker would never end. Everything was read by now: end them all.
        _kill_workers(pool)
    pool.shutdown(wait=True)


def forked_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes forked from this one now (``pool.prestart``): only from a
    process with no thread and no store open yet (the CLI program, before its progress bar).
    They inherit what it imported and the message grammar, built here once."""
    message_parser()
    workers_pool.arrow_without_pandas()
    # what the workers inherit is never collected there: no collection in a worker walks (and so
    # copies on write) the pages it shares with this process
    gc.freeze()
    try:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                                   initializer=_worker_start, initargs=(os.getpid(),))
        pool.submit(int)  # the fork context starts every worker at the first task, before it returns
    finally:
        gc.unfreeze()
    return pool


def _lost(pool: ProcessPoolExecutor) -> bool:
    """Whether the pool broke or one of its workers ended (or can no longer be seen to end:
    its fork server died)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    return bool(getattr(pool, "_broken", False)) or any(proc.exitcode is not None for proc in processes)


# What handing work to the pool raises when a worker or the fork server died under it: the
# fork server killed (its socket refuses, or closes before the new worker's pid: EOFError), or
# the executor closing its queues after a worker's death while this process starts the next
# worker (EBADF, "handle is closed", a broken pipe). Each is a lost pool, like a dead worker.
POOL_LOST = (BrokenProcessPool, OSError, EOFError)


def _submit(pool: ProcessPoolExecutor, task, job):
    """``pool.submit``, a failure to start or feed a worker raised as BrokenProcessPool (the
    pool's workers killed first: what it held is read in this process)."""
    try:
        return pool.submit(task, job)
    except BrokenProcessPool:
        raise
    except POOL_LOST as exc:
        _kill_workers(pool)
        raise BrokenProcessPool(f"a worker could not be started: {type(exc).__name__}: {exc}") from exc


def _result(future, pool: ProcessPoolExecutor | None):
    """A task's result; BrokenProcessPool once a worker of the pool died. A worker killed while
    it sends a result leaves the executor waiting for the rest of it for ever, never marking the
    pool broken: so a dead worker ends the pool here (see ``_kill_workers``). With ``pool`` None
    the pool is known lost: a task not done already may never be."""
    while True:
        try:
            return future.result(timeout=0.5 if pool is not None else 0)
        except FutureTimeout:
            if pool is None:
                raise BrokenProcessPool("the pool was lost before this task returned") from None
            if _lost(pool):
                _kill_workers(pool)
                raise BrokenProcessPool("a worker process died") from None


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """End a pool's running tasks now. The executor offers no public way (before Python 3.14):
    its process table and result pipe are the way.

    A worker killed while it sends a result leaves half a message in the result pipe; the
    executor's manager thread then waits in ``recv()`` for the rest for ever, and the
    interpreter's exit joins that thread: an interrupted ingest would never end. Once every
    worker is dead, the parent's copy of the pipe's writing end is the last one: closing it
    turns that wait into an end of file, which the executor takes as a broken pool."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for proc in processes:
        proc.kill()
    for proc in processes:
        proc.join()
    result_queue = getattr(pool, "_result_queue", None)
    writer = getattr(result_queue, "_writer", None)
    if writer is not None:
        writer.close()


_PR_SET_PDEATHSIG = 1


def _worker_start(parent_pid: int, patterns: tuple = ([], [], [])) -> None:
    """A worker process ends with the ingest, even a SIGKILLed one; Ctrl-C is the ingest's.
    ``patterns``: the ingest's redaction patterns (``--redact``), which a worker forked from the
    fork server (started without them) or spawned would not hold otherwise: its events would
    keep what the user asked to mask."""
    add_user_patterns(patterns)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if os.getppid() != parent_pid:
        # Forked by the fork server, which lives on while any of its children does: the worker
        # watches the ingest itself. It watches the server too: once the server is gone the
        # ingest can no longer learn this worker's end (it takes it as dead and reads the work
        # itself), so the worker ends rather than parse on unseen.
        _end_with(parent_pid, os.getppid())
        return
    workers_pool.keep_freed_memory()  # forked from the ingest (or spawned): not set there
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the parent-pid check below still holds once
        pass
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)


def _end_with(*pids: int) -> None:
    """End this process as soon as any of processes ``pids`` ends (a pidfd turns readable then)."""
    try:
        fds = [os.pidfd_open(pid) for pid in pids]
    except (AttributeError, OSError):  # ended already (a spawned worker: no pidfd needed then)
        os._exit(1)

    def watch() -> None:
        select.select(fds, [], [])
        os._exit(1)

    threading.Thread(target=watch, name="ends-with-ingest", daemon=True).start()


def _size(path: Path) -> int:
    try:
        return eventlogs.size_of(path)
    except OSError:
        return 0


def _handed_out(planned: Iterable) -> tuple[int, int]:
    """(tasks, source bytes) in the pool for the planned reads not written yet."""
    tasks = [(a, b) for item in planned if isinstance(item, FileRead) for a, b, _ in item.futures]
    return len(tasks), sum(b - a for a, b in tasks)


@dataclass
class _Run:
    """What one ingest run has decided about the sources it met."""

    opened: set = field(default_factory=set)  # sources this run reads: a copy met later is not their continuation
    claimed: set = field(default_factory=set)  # sources recognised by their content under some name
    displaced: dict = field(default_factory=dict)  # source id -> row: its name now holds other bytes
    names: dict | None = None  # uri -> its latest source when the run began (None: ask the store)
    store_files: set = field(default_factory=set)  # the store's own files, never read
    resolved: dict = field(default_factory=dict)  # path -> its absolute real path, when known
    workers: int = 1  # worker processes of the run's pool

    def retire_displaced(self, store: Store) -> None:
        """A source whose name now holds other bytes is a replaced version only if no file of
        the run turned out to be it under another name (rotation: ``mv x.log x.log.1``, or into
        an archive directory that sorts first): its events stay live then."""
        for sid in sorted(set(self.displaced) - self.claimed):
            store.supersede_source(sid, "its first bytes changed: read again as a new version")
        self.displaced.clear()


def _identify(store: Store, path: Path, uri: str, fp: str, size: int, run: _Run) -> tuple[dict | None, dict | None]:
    """The stored source this file is, or None: first by content (its fingerprint, under any
    name: a rotated or archived file), then by name (the file grew, or was stopped). A source
    whose name now holds other bytes is not retired here: a later file of the run may be it
    (``_Run.retire_displaced``); one that shrank is retired now, its bytes are gone. Also
    returns the latest source of the name, whatever it holds."""
    names = [uri, uri + eventlogs.IN_PROGRESS]
    if size == 0 and run.names is not None:
        # nothing to recognise by content: the latest row of the name, known since the run began
        rows = [run.names[n] for n in names if n in run.names]
    else:
        rows = store.sources_like(names, fp if size else None)
    rows = [r for r in rows if r["status"] != "superseded"]
    content = [r for r in rows if size and r["fingerprint"] == fp]
    content += [r for r in run.displaced.values() if size and r not in content and same_head(path, r["fingerprint"])]
    by_name = next((r for r in rows if r["uri"] in names), None)
    if content:
        # the one under this name, else one no other file of this run is
        previous = next((r for r in content if r["uri"] in names), None) or next(
            (r for r in content if r["source_id"] not in run.claimed), content[0])
        run.claimed.add(previous["source_id"])
        for other in rows:  # older versions under this name (a stop may have come before they retired)
            if other["uri"] in names and other not in content and _read(other):
                run.displaced[other["source_id"]] = other
    else:
        previous = by_name
    if previous is not None and previous["uri"] in names and _read(previous):
        if not same_head(path, previous["fingerprint"]):
            run.displaced[previous["source_id"]] = previous
            return None, by_name
        if _shrank(path, previous, size):
            # rewritten in place, shorter: a new version read whole; the old one's events retire
            # to superseded_events, so the file's lines are never doubled
            store.supersede_source(previous["source_id"], f"it shrank to {size} bytes: read again as a new version")
            return None, by_name
    return previous, by_name


def _read(source: dict) -> bool:
    """Whether a stored source holds what was read of a file (not a skip or a failure)."""
    return bool(source["format"]) and source["status"] not in ("failed", "skipped")


def _rename(store: Store, source: dict, uri: str) -> None:
    """A source met under another name takes it when its old name no longer holds it (a
    rotation moved it): its events' ``file:line`` then name the file that has those lines."""
    if source["uri"] == uri or source["uri"] == uri + eventlogs.IN_PROGRESS:
        return
    old = Path(source["uri"])
    if not (old.exists() and same_head(old, source["fingerprint"])):
        store.update_source(source["source_id"], uri=uri)


def _plan(store: Store, path: Path, fmt_forced: Format | None, progress, pool,
          keep_reads: bool = False, run: _Run | None = None) -> "SourceResult | FileRead":
    """What to do with one file: a result already (unchanged, skipped, failed) or its read,
    handed to the pool when there is one."""
    run = _Run() if run is None else run
    resolved = run.resolved.get(path) or str(path.resolve())
    uri = readable(resolved)
    special = special_file(path)
    if special or resolved in run.store_files:
        reason = (f"a {special}, not a regular file: not opened" if special
                  else "the store this ingest writes: not read")
        sid = _record(store, uri, "skipped", reason, path=resolved)
        return SourceResult(uri, "skipped", None, reason=reason, source_id=sid)
    try:
        size = eventlogs.size_of(path)
        fp = fingerprint(path)
    except OSError as exc:
        return _failed(store, uri, None, f"cannot read: {exc.strerror or exc}", path=path)

    previous, by_name = _identify(store, path, uri, fp, size, run)
    resume_at, first_line, stored_at_resume, resuming = 0, 1, 0, False
    if previous is not None and previous["source_id"] in run.opened:
        # a copy of a file this run is reading (same bytes under another name): read once
        return SourceResult(uri, "unchanged", previous["format"], source_id=previous["source_id"])
    if previous is not None and same_head(path, previous["fingerprint"]):
        unfinished = previous["status"] == "running" and previous["format"]
        if unfinished:  # stopped by a signal, a crash or a failed write: continue at its checkpoint
            resume_at, first_line, stored_at_resume = store.resume_point(previous)
            resuming = True
            fmt_forced = fmt_forced or get_format(previous["format"])
        elif size == previous["size_bytes"] and (previous["status"] != "skipped" or not fmt_forced):
            _rename(store, previous, uri)
            return SourceResult(uri, "unchanged", previous["format"], source_id=previous["source_id"])
        elif previous["status"] in ("ok", "partial") and size > previous["size_bytes"] and previous["format"]:
            resume_at, first_line = previous["bytes_read"], previous["lines"] + 1
            resuming = True
            fmt_forced = fmt_forced or get_format(previous["format"])
            if resume_at < previous["size_bytes"] and not path.is_dir() and is_plain(path):
                # its last line had no newline: read again from its record, now it may have ended
                previous = {**previous, "events": previous["events"] - store.retire_from(
                    previous["source_id"], resume_at, status="running", bytes_read=resume_at)}

    if size == 0:
        sid = _record(store, uri, "skipped", "empty file", by_name, path=resolved, fingerprint=fp, size_bytes=0)
        return SourceResult(uri, "skipped", None, reason="empty file", source_id=sid)
    try:
        head = peek_lines(path)
    except ReadError as exc:
        return _failed(store, uri, fp, str(exc), size=size, path=path)
    fmt = detect(uri, head, forced=fmt_forced)  # a forced format may still be pasted
    if fmt is None:
        reason = "not a log format commitsleuth reads"
        sid = _record(store, uri, "skipped", reason, by_name, path=resolved, fingerprint=fp, size_bytes=size)
        return SourceResult(uri, "skipped", None, reason=reason, source_id=sid)

    if resuming:
        sid = previous["source_id"]
        store.update_source(sid, uri=uri, status="running", fingerprint=fp, size_bytes=size)
    else:
        sid = store.add_source(uri, "file", format=fmt.name, fingerprint=fp, size_bytes=size,
                               uri_bytes=name_bytes(resolved))
    run.opened.add(sid)
    ctx = SourceContext(uri=uri, source_id=sid, attempt_id=attempt_from_path(uri), keep_reads=keep_reads)
    read = FileRead(path, fmt, ctx, ParseStats(), resume_at, first_line, progress, size, pool)
    read.previous = previous if resuming else None
    read.stored_at_resume = stored_at_resume
    if resuming and previous["status"] == "running":
        # the rejects stored before the stop count toward this read's status, not again in the store
        read.stats.rejects = store.rejects_of(sid)
        read.committed_rejects = read.stats.reject_counts()
    read.workers = run.workers
    read.submit()
    return read


def _shrank(path: Path, previous: dict, size: int) -> bool:
    """The file is shorter than what was read of it (plain files: bytes_read counts file bytes),
    or than the size it had when it was read whole: it is not the same file any more, and
    continuing it would double or lose lines."""
    if path.is_file() and is_plain(path) and size < (previous["bytes_read"] or 0):
        return True
    return previous["status"] != "running" and size < (previous["size_bytes"] or 0)


def _finish(store: Store, item: "SourceResult | FileRead", on_events=None,
            stop=lambda: 0) -> SourceResult:
    """Write a planned read's events, each batch with its checkpoint, then the final
    ``sources`` row that marks the source complete; a result passes through."""
    if isinstance(item, SourceResult):
        return item
    read, stats, sid = item, item.stats, item.ctx.source_id
    previous = read.previous or {}
    written = known = pending = 0
    status, reason = "ok", None
    checkpoint = (read.resume_at, max(read.first_line - 1, 0))
    committed_at, committed_when = checkpoint[0], time.monotonic()
    ends = app_end.tally_of(store.con, sid if read.previous else None) if read.fmt.name == app_end.FORMAT else None
    # A big event log commits as checkpoints (eventlog_fast.CHECKPOINT_ROWS), its last rows too:
    # each commit is compressed while the SQL threads map the next blocks, where one commit at
    # the end waited for all of it. A small one commits into the write-ahead log as before.
    fast = eventlog_fast.enabled(read.fmt.name)
    commit_rows = eventlog_fast.CHECKPOINT_ROWS if fast else COMMIT_ROWS
    try:
        for table in read.tables():
            table = read.without_stored(table)
            if ends is not None:
                ends.add(table)  # what this log says of its attempts, whoever stored them first
            rows = table.num_rows
            table = store.unseen_events(table)  # held already: by live capture, a spool, a log
            known += rows - table.num_rows
            if table.num_rows:
                checkpoint = last_position(table) or checkpoint
                pending += table.num_rows
                commit = (pending >= commit_rows or checkpoint[0] - committed_at >= COMMIT_BYTES
                          or time.monotonic() - committed_when >= COMMIT_SECONDS)
                # a continued read starts at the last event's line: the rejects from there on
                # wait for a later checkpoint, which that read would count again
                rejects = read.uncommitted_rejects(before=checkpoint[1])
                store.write_checkpoint(table, sid, rejects, commit=commit,
                                       checkpoint=fast and written + table.num_rows >= commit_rows,
                                       bytes_read=checkpoint[0], lines=checkpoint[1],
                                       events=previous.get("events", 0) + written + table.num_rows,
                                       rejected=previous.get("rejected", 0) + stats.rejected - read.rejected_later)
                if commit:
                    pending, committed_at, committed_when = 0, checkpoint[0], time.monotonic()
                phases.mark(f"{table.num_rows} events written")
                written += table.num_rows
                if on_events:
                    on_events(table.num_rows)
            signum = stop()
            if signum:
                store.commit_pending()
                raise IngestInterrupted(read.ctx.uri, checkpoint[0], read.size, signum,
                                        decompressed=read.path.is_dir() or not is_plain(read.path))
    except (StoreWriteError, IngestInterrupted):
        raise  # the source stays running: the same command continues it from the checkpoint
    except ReadError as exc:
        status, reason = "partial", str(exc)
    except Exception as exc:  # noqa: BLE001 - one file's bug must not stop the other files
        what = str(exc) if isinstance(exc, _WorkerError) else f"{type(exc).__name__}: {exc}"
        status, reason = "partial", f"internal error after line {stats.lines}: {what}"
    if status == "ok" and read.damage():
        status, reason = "partial", read.damage()
    if status == "ok":
        reason = eventlogs.state_note(read.path)
    if ends is not None:  # after a damage's reason, before a state's
        reason = app_end.joined(reason, ends.note()) if status != "ok" else app_end.joined(ends.note(), reason)
    bytes_read, lines = read.bytes_read, read.first_line - 1 + stats.lines
    rejects = read.uncommitted_rejects()
    held = held_back(read, lines, lambda start: store.last_event_at_or_before(sid, start))
    if held:
        # the rejects of the record held back are counted when it is read whole
        bytes_read, lines, unsaid = held
        for why, (count, line, sample) in unsaid.rejects.items():  # ``reason`` is the source's
            rejects[why] = [rejects.get(why, [0])[0] - count, line, sample]
        stats.rejected -= unsaid.rejected
    # what was read before a damage is kept: the batches still open commit with the final row
    store.write_checkpoint(
        None,
        sid,
        {reason: counted for reason, counted in rejects.items() if counted[0]},
        status=status,
        reason=reason,
        size_bytes=read.size,
        bytes_read=bytes_read,
        lines=lines,
        events=previous.get("events", 0) + written,
        rejected=previous.get("rejected", 0) + stats.rejected,
        finished_at=_now(),
        # A file big enough for ranges commits as a checkpoint too: its rows are compressed into the
        # file once, where the write-ahead log would take them first and the closing checkpoint
        # again (that is the command's last work: 0.01-0.02 cpu-s less there for 13k events)
        checkpoint=(fast and written >= commit_rows) or read.ranged,
    )
    return SourceResult(read.ctx.uri, status, read.fmt.name, written, stats.lines, stats.rejected, reason, sid,
                        known)


def held_back(read: "FileRead", lines: int,
              last_event_before: Callable[[int], tuple[int, int] | None]) -> tuple[int, int, ParseStats] | None:
    """(bytes read, lines, the held record's counters) for the checkpoint when a plain file's last
    line has no newline: its events are stored (a finished file may lack the newline) but the
    checkpoint stays before its record, so a file that grows has that record read again whole
    (``retire_from``), with every line number after it the file's own. ``last_event_before``
    gives (byte offset, line) of the last event stored at or before an offset: where the held
    record starts when its head lies further back than ``record_start`` looks. Both engines
    (local, Spark) hold back the same record."""
    if read.path.is_dir() or read.bytes_read != read.size or not is_plain(read.path):
        return None
    try:
        start = unfinished_line(read.path, read.bytes_read)
    except OSError:
        return None
    if start is None:
        return None
    at, line = start, lines
    if read.fmt.head is not None:  # a record of many lines: the one the last line ends, from its head
        found = record_start(read.path, start, read.fmt.matches_head, read.resume_at)
        if found is not None:
            at, line = found[0], lines - found[1]
        else:  # its head is further back: the last event stored before it
            last = last_event_before(start)
            if last is not None and last[0] >= read.resume_at:
                at, line = last
    again = FileRead(read.path, read.fmt, read.ctx, ParseStats(), at, line, None, read.size)
    for _ in again.tables():  # what the record held back counted, to take out of this read's
        pass
    return at, line - 1, again.stats


def last_position(table: pa.Table) -> tuple[int, int] | None:
    """(byte offset, line) where the last event of a batch starts: the batch's checkpoint."""
    offsets = table.column("byte_offset")
    last = pc.max(offsets).as_py()
    if last is None:
        return None
    lines = pc.filter(table.column("line_no"), pc.equal(offsets, last))
    return last, pc.max(lines).as_py()


def _stored(events) -> list:
    """Events as stored: paths resolved to location and partition (``events_to_arrow``
    redacts every text)."""
    return [enrich(ev) for ev in events]


def _batches(events: Iterable) -> Iterator[pa.Table]:
    """Arrow batches of stored events; when reading breaks, the events before it still come."""
    batch = []
    try:
        for ev in events:
            batch.append(ev)
            if len(batch) >= BATCH:
                yield events_to_arrow(_stored(batch), None)
                batch = []
    except GeneratorExit:
        raise
    except BaseException:
        if batch:
            yield events_to_arrow(_stored(batch), None)
        raise
    if batch:
        yield events_to_arrow(_stored(batch), None)


class FileRead:
    """One file's read: the block scan for headed text logs (split across processes when the
    file is big and plain), the line parse for headless output and decoders."""

    def __init__(self, path: Path, fmt: Format, ctx: SourceContext, stats: ParseStats,
                 resume_at: int, first_line: int, progress, size: int, pool=None):
        self.path, self.fmt, self.ctx, self.stats = path, fmt, ctx, stats
        self.resume_at, self.first_line, self.progress, self.size = resume_at, first_line, progress, size
        self.pool = pool
        self.workers = 1  # processes of the pool: a file's ranges are cut to keep them all busy
        self.ranged = False  # cut into ranges for the pool's workers
        self.previous: dict | None = None
        self.futures: list = []  # (start, end, future) of work handed to the pool
        self.queued: list = []  # (start, end) of ranges not handed out yet
        self.bytes_read = resume_at
        self.unnamed = False  # the workers' events carry no source id (ranges handed out before it was known)
        self.stored_at_resume = 0  # events of the record at resume_at already in the store
        self.committed_rejects: dict[str, int] = {}  # reject counts already in the store
        self.rejected_later = 0  # rejects counted but left to a later checkpoint (uncommitted_rejects)
        self.committed_line = 0  # the line the last checkpoint continues at
        self.invalid_utf8 = self.long_lines = 0

    def uncommitted_rejects(self, before: int | None = None) -> dict[str, list]:
        """Reject counters ``{reason: [count, first_line, sample]}`` grown since the last call:
        each checkpoint stores the rejects counted with its batch. ``before``: the line a
        continued read starts at (the checkpoint's); the rejects counted at it or after it
        are left to a later call, as that read counts them again."""
        later = self.stats.since(before) if before is not None else {}
        counts = {reason: count - later.get(reason, 0) for reason, count in self.stats.reject_counts().items()}
        fresh = {reason: [counts[reason] - self.committed_rejects.get(reason, 0), line, sample]
                 for reason, (_, line, sample) in self.stats.rejects.items()
                 if counts[reason] > self.committed_rejects.get(reason, 0)}
        self.committed_rejects = counts
        self.rejected_later = sum(later.values())
        if before is not None:
            self.committed_line = before
            self.stats.forget_before(before)
        return {reason: [count, line, redact(sample)] for reason, (count, line, sample) in fresh.items()}

    def without_stored(self, table: pa.Table) -> pa.Table:
        """The batch less the events a checkpoint already holds: a continued read parses the
        record at its checkpoint again, and the first events found there are stored already."""
        if not self.stored_at_resume or table.num_rows == 0:
            return table
        offsets = table.column("byte_offset").to_pylist()
        keep, left = [], self.stored_at_resume
        for i, off in enumerate(offsets):
            if left and off == self.resume_at:
                left -= 1
            else:
                keep.append(i)
        self.stored_at_resume = left
        return table.take(pa.array(keep, pa.int64())) if len(keep) < len(offsets) else table

    def submit(self) -> None:
        """Hand the read to the pool: ranges of a plain headed log, or a small file whole.
        Resumed reads and big compressed files stream here instead (bounded memory). A pool
        that lost a worker (the OOM killer) is broken for good: this read is then done here."""
        if self.pool is None or self.resume_at:
            return
        try:
            if _cut_in_ranges(self.fmt) and is_plain(self.path):
                early = _take_early(self)
                if early is not None:  # handed out before the store opened: their events get the id here
                    self.futures, self.queued, self.unnamed = early.futures, early.queued, True
                else:
                    self.queued = _ranges(self.path, self.size, self.workers)
                    _hand_out(self.pool, self.path, self.fmt.name, self.ctx, self.queued, self.futures)
                self.ranged = True
            elif self.size <= RANGE:
                job = (str(self.path), self.fmt.name, self.ctx, self.size)
                self.futures.append((0, self.size, _submit(self.pool, read_whole, job)))
        except BrokenProcessPool:
            self.pool = None  # what was handed out fails too and is read here, from its start

    def _submit_next(self) -> None:
        _hand_out(self.pool, self.path, self.fmt.name, self.ctx, self.queued, self.futures, 1)

    def tables(self) -> Iterator[pa.Table]:
        if self.futures or self.queued:
            yield from self._collect()
            return
        yield from self._stream(self.resume_at, self.first_line)

    def _stream(self, start: int, first_line: int) -> Iterator[pa.Table]:
        """The file read in this process from ``start`` (a line start, the record above it
        handled already unless it is the read's start), ``first_line`` its line number."""
        fmt = self.fmt
        if eventlog_fast.enabled(fmt.name):  # Spark event logs: the bulk decoded in SQL
            yield from self._fast_eventlog()
            return
        if fmt.scanner is None and (fmt.head is None or fmt.decoder is not None):
            reader = open_lines(self.path, start, first_line, self.progress)
            try:
                yield from _batches(parse_lines(fmt, reader, self.ctx, self.stats))
            finally:
                self.bytes_read = reader.bytes_read
                self.invalid_utf8 += reader.invalid_utf8
                self.long_lines += reader.long_lines
            return
        reader = BlockReader(self.path, start, progress=self.progress)
        scanner = (fmt.scanner or BlockScanner)(fmt, self.ctx, self.stats, first_line,
                                                at_start=start == self.resume_at)
        try:
            yield from _batches(_scan(scanner, reader))
        finally:
            self.bytes_read = reader.bytes_read
            self.invalid_utf8 += scanner.invalid_utf8
            self.long_lines += reader.long_lines

    def _fast_eventlog(self) -> Iterator[pa.Table]:
        """Block n + 1 parsed in a thread while block n is written. The reader's counters run
        ahead of what is written, so each table comes with the counts as they were when it was
        made, and this read's counts follow the tables written, never further."""
        reader = BlockReader(self.path, self.resume_at, progress=self.progress, block=eventlog_fast.BLOCK)
        # the counters start from this read's own (a continued read's stored rejects), as restored below
        fast = eventlog_fast.FastEventLog(self.ctx, self.stats.snapshot(), self.first_line)

        def counted() -> Iterator[tuple]:
            def now():
                fast.stats.forget_before(self.committed_line)  # stored: never asked for again
                bytes_read, long_lines = fast.position or (reader.bytes_read, reader.long_lines)
                return fast.stats.snapshot(), bytes_read, fast.invalid_utf8, long_lines
            try:
                for table in fast.tables((o, d, (reader.bytes_read, reader.long_lines)) for o, d in reader):
                    yield table, now()
            except Exception:  # what was counted up to a damage goes with it
                yield None, now()
                raise
            yield None, now()  # lines after the last event

        for table, (stats, self.bytes_read, self.invalid_utf8, self.long_lines) in ahead(counted()):
            self.stats.restore(stats)
            if table is not None:
                yield table

    def _collect(self) -> Iterator[pa.Table]:
        """The pool's results in file order, line numbers shifted past the ranges before.
        A worker lost (SIGKILLed, out of memory) breaks the whole pool: what it had not
        returned is read here from the first range not collected, so the source is read whole."""
        line_shift = 0
        while self.futures or self.queued:
            if not self.futures:  # the pool broke while the next range was handed out
                yield from self._stream(self.queued[0][0], self.first_line + line_shift)
                self.queued = []
                return
            a, b, future = self.futures[0]
            try:
                table, stats, bytes_read, invalid, long_lines, error = _result(future, self.pool)
            except BrokenProcessPool:
                self.pool, self.futures, self.queued = None, [], []
                yield from self._stream(a, self.first_line + line_shift)
                return
            self.futures.pop(0)
            phases.mark(f"range {a}-{b} collected")
            if self.queued and error is None:
                try:
                    self._submit_next()
                except BrokenProcessPool:
                    self.pool = None
            if self.unnamed and table.num_rows:
                table = table.set_column(table.schema.get_field_index("source_id"), "source_id",
                                         pa.array(np.full(table.num_rows, self.ctx.source_id, np.int64)))
            if line_shift:
                table = table.set_column(
                    table.schema.get_field_index("line_no"), "line_no",
                    pc.add(table.column("line_no"), line_shift))
            self.stats.merge(stats, line_shift)
            self.invalid_utf8 += invalid
            self.long_lines += long_lines
            line_shift += stats.lines
            self.bytes_read = bytes_read
            if self.progress:
                self.progress(b - a)
            yield table
            if error is not None:
                kind, message = error
                raise ReadError(message) if kind == "read" else _WorkerError(message)

    def damage(self) -> str | None:
        """One line on what was read but not kept whole, or None."""
        said = []
        binary = self.stats.rejects.get(BINARY)
        if binary:
            said.append(f"{binary[0]} line{'s' if binary[0] != 1 else ''} of binary data rejected (from line {binary[1]})")
        if self.long_lines:
            said.append(f"{self.long_lines} line{'s' if self.long_lines != 1 else ''} longer than "
                        f"{MAX_LINE >> 20} MiB cut to {MAX_LINE >> 20} MiB")
        if self.invalid_utf8:
            said.append(f"{self.invalid_utf8} line{'s' if self.invalid_utf8 != 1 else ''} not valid UTF-8 "
                        "(bad bytes replaced)")
        return "; ".join(said) or None


def _cut_in_ranges(fmt: Format) -> bool:
    """Whether a plain file of this format is read in ranges by the workers (a block scan)."""
    return (fmt.head is not None and fmt.decoder is None) or fmt.scanner is not None


def _ranges(path: Path, size: int, workers: int) -> list[tuple[int, int]]:
    """The [start, end) ranges, cut at line starts, a plain file is read in by the workers."""
    bounds = line_bounds(path, workers_pool.ranges_for(size, workers, RANGE))
    return list(zip(bounds, bounds[1:]))


def _hand_out(pool, path: Path, fmt_name: str, ctx: SourceContext, queued: list, futures: list,
              n: int = IN_FLIGHT) -> None:
    """The next ``n`` of the ``queued`` ranges to the pool, appended to ``futures`` as (start, end,
    future). A few ranges in flight, the next handed out as each is collected: a big file's parsed
    ranges never pile up in memory when writing is slower than parsing."""
    for _ in range(min(n, len(queued))):
        a, b = queued[0]
        futures.append((a, b, _submit(pool, scan_range, (str(path), fmt_name, ctx, a, b))))
        queued.pop(0)


@dataclass
class _Early:
    """The first ranges of the command's one big log, handed to the workers before the store
    was open (``start_early``)."""

    pool: ProcessPoolExecutor  # the workers they were handed to
    state: tuple  # the file's (device, inode, size, mtime) then: the ranges hold for that file only
    fmt: str
    ctx: SourceContext  # no source id yet
    workers: int
    futures: list
    queued: list


# ``start_early``'s ranges by the file's real path, until the ingest's plan of it takes them
_EARLY: dict[str, _Early] = {}


def _file_state(path) -> tuple:
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def start_early(pool: ProcessPoolExecutor, path: str, workers: int, format_name: str | None = None,
                keep_reads: bool = False) -> None:
    """Hand the workers the first ranges of the command's one big plain log now, before the store
    is open: that needs only the file's size and head, and the store's opening, the CLI's imports
    and the plan then run beside the parse instead of before it (0.4 s of a 200 MB log's 1.1).
    The events come back without their source's id, which the ingest's plan of the file gives
    them (``FileRead.submit``) when it reads the file whole from its start, as fresh: a file the
    store holds already (unchanged, or continued at its checkpoint) drops them
    (``_drop_early``), so what is stored is what the plan alone would store."""
    try:
        p = Path(path)
        state = _file_state(p)
        if not stat.S_ISREG(os.stat(p).st_mode) or not is_plain(p):
            return
        uri = readable(str(p.resolve()))
        fmt = detect(uri, peek_lines(p), forced=get_format(format_name) if format_name else None)
        if fmt is None or not _cut_in_ranges(fmt):
            return
        ctx = SourceContext(uri=uri, attempt_id=attempt_from_path(uri), keep_reads=keep_reads)
        early = _Early(pool, state, fmt.name, ctx, workers, [], _ranges(p, state[2], workers))
        _hand_out(pool, p, fmt.name, ctx, early.queued, early.futures)
    except Exception:  # noqa: BLE001 - only a head start: the ingest's own plan says what is wrong
        return
    _EARLY[str(p.resolve())] = early
    phases.mark(f"{len(early.futures)} ranges handed out early")


def _take_early(read: "FileRead") -> _Early | None:
    """The early ranges of the file this read is, when they hold for it: read whole from its
    start (``submit`` hands a continued read out to no worker), the same bytes (file state), pool,
    format, context and workers."""
    early = _EARLY.pop(str(read.path.resolve()), None)
    if early is None:
        return None
    try:
        same = _file_state(read.path) == early.state
    except OSError:
        same = False
    if (same and early.pool is read.pool and early.fmt == read.fmt.name and early.workers == read.workers
            and dataclasses.replace(read.ctx, source_id=None) == early.ctx):
        return early
    _EARLY[str(read.path.resolve())] = early  # not this read's: dropped after its plan
    return None


def _drop_early() -> None:
    """Early ranges no plan took (the store holds the file already; or it changed): their
    workers are ended, what they parsed is not wanted. Their pool is then lost, as after a
    worker's death: what is left to read is read in this process."""
    for early in _EARLY.values():
        _kill_workers(early.pool)
        phases.mark("early ranges dropped")
    _EARLY.clear()


def _scan(scanner: BlockScanner, blocks, close: bool = True) -> Iterator:
    try:
        for offset, data in blocks:
            yield from scanner.feed(offset, data)
    except ReadError:
        yield from scanner.close()  # the record before the damage, with the lines it got
        raise
    if close:
        yield from scanner.close()


def _workers(sizes: list[int]) -> int:
    return workers_pool.workers_for(sizes)


class _WorkerError(Exception):
    """An internal error in a worker process, carried back as its one-line message."""


def scan_range(job) -> tuple:
    """One worker task: the lines of a plain file in [start, end), as stored events.

    Line numbers count from the range's start; the caller shifts them. A record crossing the
    end takes its continuation lines from beyond it, as the whole-file scan would.
    """
    path, fmt_name, ctx, start, end = job
    phases.mark(f"worker: range {start}-{end} begins")
    stats = ParseStats()
    fmt = get_format(fmt_name)
    scanner = (fmt.scanner or BlockScanner)(fmt, ctx, stats, 1, at_start=start == 0)
    reader = BlockReader(Path(path), start, end=end, block=WORKER_BLOCK)
    events, error = [], None
    try:
        events.extend(_scan(scanner, reader, close=False))
        if scanner.wants_more():
            beyond = BlockReader(Path(path), end, block=64 * 1024)
            scanner.stats = scanner.parser.stats = ParseStats()  # the next range counts those lines
            for offset, data in beyond:
                events.extend(scanner.feed_continuation(offset, data))
                if not scanner.wants_more():
                    break
            scanner.stats = scanner.parser.stats = stats
        events.extend(scanner.close())
    except ReadError as exc:
        error = ("read", str(exc))
    except Exception as exc:  # noqa: BLE001 - reported as the file's status by the parent
        error = ("internal", f"{type(exc).__name__}: {exc}")
    table = pa.concat_tables(list(_batches(events))) if events else events_to_arrow([], None)
    phases.mark(f"worker: range {start}-{end} done")
    return table, stats, reader.bytes_read, scanner.invalid_utf8, reader.long_lines, error


def read_whole(job) -> tuple:
    """One worker task: a whole small file of any format (compressed, headless, event log)."""
    path, fmt_name, ctx, size = job
    read = FileRead(Path(path), get_format(fmt_name), ctx, ParseStats(), 0, 1, None, size)
    tables, error = [], None
    try:
        tables.extend(read.tables())
    except ReadError as exc:
        error = ("read", str(exc))
    except Exception as exc:  # noqa: BLE001 - reported as the file's status by the parent
        error = ("internal", f"{type(exc).__name__}: {exc}")
    table = pa.concat_tables(tables) if tables else events_to_arrow([], None)
    return table, read.stats, read.bytes_read, read.invalid_utf8, read.long_lines, error


def _failed(store: Store, uri: str, fp: str | None, reason: str, size: int | None = None,
            path: Path | None = None) -> SourceResult:
    sid = _record(store, uri, "failed", reason, path=path, fingerprint=fp, size_bytes=size)
    return SourceResult(uri, "failed", reason=reason, source_id=sid)


_UNSET = object()


def _record(store: Store, uri: str, status: str, reason: str, latest=_UNSET, *, kind: str = "file",
            path: "Path | str | None" = None, **values) -> int:
    """The row of a source not read (skipped, failed): the same outcome as the name's latest row
    updates that row, so a FIFO or an empty file met at every run is one row, not one a run."""
    if latest is _UNSET:
        latest = store.find_source(uri)
    if latest is not None and latest["status"] == status and latest["reason"] == reason:
        return latest["source_id"]
    if path is not None:
        values["uri_bytes"] = name_bytes(path if isinstance(path, str) else str(path.resolve()))
    return store.add_source(uri, kind, later=True, status=status, reason=reason, finished_at=_now(), **values)


def _store_files(store: Store) -> set[str]:
    """The files of the store being written, which an ingest of its own directory must not read."""
    if store.path == ":memory:":
        return set()
    db = str(Path(store.path).resolve())
    return {db, db + ".wal", db + ".wait"}


def _now() -> dt.datetime:
    return dt.datetime.now().replace(microsecond=0)


__all__ = ["IngestReport", "SourceResult", "expand_paths", "ingest", "ATTEMPT_RE"]


def _spark():
    from commitsleuth.ingest.spark import spark_session

    return spark_session()
