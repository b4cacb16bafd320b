"""Live capture: Spark spools its own events, a background thread loads them into the store.

The path of an event: Spark's ``EventLoggingListener`` (JVM, on its own bus queue) writes it
as event-log JSON into a spool file; every ``interval`` seconds a background thread flushes
that writer and, when the spool grew, reads and scrubs the new complete lines; when a load is
due (see FLUSH_INTERVAL: after a costly load the next waits up to ``max_wait`` seconds) it turns
the lines read since the last load into rows through the event-log fast path that reads event
logs (``ingest.eventlog_fast``: task, stage and job lines mapped in DuckDB SQL, the rest through
``SparkEventDecoder``), and appends them to the DuckDB store in one Arrow batch. Nothing in Python runs per event as Spark posts
it: no Python listener is on the bus by default (a py4j callback per event cost seconds of
driver CPU per 20,000 tasks), job and application ends reach the store through the spool like
any event, and interpreter exit (or ``detach``) loads the rest. So:

- the listener bus never waits on Python, and memory stays bounded (the backlog is on disk);
- events reach the store within about ``max_wait`` seconds, sooner when loads are cheap (a
  SIGKILLed driver loses at most that, and the spool still holds them: it is a plain event log
  ``commitsleuth ingest`` reads);
- the store is open only for each load and closed after it, so the plain ``duckdb`` shell
  (which cannot wait for a lock) opens it between loads; a long catch-up closes it between its
  batches too while another process (``commitsleuth query``) waits for it through
  ``store.open_waiting`` (it touches ``<db>.wait``). The store is ATTACHed to one in-memory
  connection the capture keeps and DETACHed after the load (a DETACH frees the file's lock like
  a close; a connection of its own per load cost ~20 ms more CPU). Each load's COMMIT is its
  checkpoint: its rows go into the file once, with no write-ahead log (``Store(commit_checkpoints=True)``).
  While the store is locked by anyone else, events stay in the spool and are written when it is free.
"""

from __future__ import annotations

import atexit
import datetime as dt
import itertools
import logging
import os
import shutil
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import orjson

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from commitsleuth.errors import StoreLockedError
from commitsleuth.forensics.paths import enrich
from commitsleuth.ingest.eventlog_fast import FastEventLog
from commitsleuth.listener.hooks import HooksListener
from commitsleuth.listener.inventory import Lister
from commitsleuth.listener.jvm import DRAIN_MS, SpoolWriter, extend_sql_redaction, spool_root
from commitsleuth.listener.tail import SpoolTail
from commitsleuth.model import Event, events_to_arrow
from commitsleuth.parsers.base import ParseStats, SourceContext
from commitsleuth.parsers.spark_events import COMMIT_CONF
from commitsleuth.parsers.spark_plan import write_target
from commitsleuth.store import Store, default_db_path, reader_waiting

log = logging.getLogger("commitsleuth.listener")

# Every FLUSH_INTERVAL the spool's new lines are read and scrubbed (a secret Spark leaves in
# it stays on disk about that long). Loading them into the store costs a fixed CPU however few
# they are (~70 ms in docs/BENCHMARKS.md "fifth measurement": the fast path's SQL ~42 ms, the
# store's attach, write and checkpoint ~26 ms), so after a load that cost c CPU-seconds (with the
# reads and scrubs since the one before) the next waits c / LOAD_SHARE seconds, within
# FLUSH_INTERVAL..MAX_LOAD_WAIT: a quiet job's cheap loads come every second or two, a busy job's
# every several seconds, their fixed cost spread over more lines. A SIGKILLed driver loses at most
# MAX_LOAD_WAIT + FLUSH_INTERVAL plus one load's own time (``stats.longest_load``) from the
# store; the spool still holds it. A load's fixed part (~25 ms: the store's ATTACH and DETACH,
# its checkpoint's 32 columns, the fast path's call) was about 40 % of a 5,000-task job's load
# CPU at 2 % of a core and 5 s at most (docs/BENCHMARKS.md "Round 10"): at 1 % and 10 s, a long
# job pays it half as often.
FLUSH_INTERVAL = 1.0
LOAD_SHARE = 0.01
MAX_LOAD_WAIT = 10.0
HELD_MAX = 64 << 20  # bytes read and scrubbed, not loaded yet: beyond, they are loaded at once
LOAD_BLOCK = 16 << 20  # bytes of held lines joined into one call of the fast path
BATCH = 20_000  # events per store write when the spool has a backlog
MAX_PENDING = 50_000  # decoded events held while the store is locked; beyond, the spool waits
_SQL_EXECUTIONS = pa.array(["query_start", "query_end"])
# How Spark's writer starts the application's end in the spool (its last line), and how much of
# the spool's end is read to find it.
APP_END_LINE = b'{"Event":"SparkListenerApplicationEnd"'
SPOOL_TAIL_BYTES = 4096
SPOOL_CHUNK = 4 << 20  # bytes read from the spool at a time
# Each load's commit is a checkpoint that writes its rows as a row group of their own; DuckDB's
# vacuum at a checkpoint then merges the small row groups before them, rewriting and
# recompressing their rows again and again as they grow (a replayed 20,000-task job: its 2nd and
# 5th loads rewrote 11k and 28k rows, 50 and 120 ms where a load's checkpoint takes ~25 ms). So
# only every MERGE_EVERY-th load that appends rows may merge: a busy job's rows are rewritten
# about once, and a quiet job leaves fewer than that many small row groups behind.
MERGE_EVERY = 16
DUCKDB_THREADS = 1
_counter = itertools.count(1)


@dataclass
class CaptureStats:
    lines: int = 0
    events: int = 0  # written to the store
    known: int = 0  # decoded events the store held already (its spool or event log was ingested)
    rejected: int = 0  # spool lines that were not JSON events
    inventories: int = 0
    files: int = 0
    errors: int = 0
    lock_waits: int = 0
    load_cpu: float = 0.0  # CPU seconds the loads took (read, parse, decode, store writes and close)
    loads: int = 0  # rounds of the background thread that found something to load
    longest_load: float = 0.0  # wall seconds of the longest load (what an event waits past its due load)
    last_error: str | None = None
    # Who writes the spool: "lean" (listener/LeanEventLoggingListener.java), or Spark's own
    # EventLoggingListener and why the lean one is not used.
    spool_writer: str = ""


@dataclass
class _Write:
    query_id: str
    location: str  # as the plan names it: what the listing reads
    start: dt.datetime | None
    end: dt.datetime | None = None
    stored: str | None = None  # as the store holds it (redacted), for the execution's end


@dataclass
class _Pending:
    live: list[pa.Table] = field(default_factory=list)  # rows of EVENT_SCHEMA
    inventory: dict[str, list[Event]] = field(default_factory=dict)

    def __len__(self) -> int:
        return sum(t.num_rows for t in self.live) + sum(len(v) for v in self.inventory.values())


class LiveCapture:
    """A PySpark session attached to a commitsleuth store. Get one with ``attach()``."""

    def __init__(self, spark, db=None, *, interval: float = FLUSH_INTERVAL, max_wait: float = MAX_LOAD_WAIT,
                 load_share: float = LOAD_SHARE, hooks: bool = False, inventory: bool = True, spool_dir=None, keep_spool: bool = False):
        self.session = spark if hasattr(spark, "sparkContext") else None
        self.sc = spark.sparkContext if self.session is not None else spark
        if self.session is not None:
            extend_sql_redaction(self.session)
        self.db = str(db or default_db_path())
        self.interval = interval
        self.max_wait = max(interval, max_wait)
        self.load_share = load_share
        self._next_load = 0.0  # time.monotonic() from which the next load is due
        self._cpu_at_load = 0.0  # stats.load_cpu after the last load
        self.app_id = self.sc.applicationId
        self.stats = CaptureStats()
        self.keep_spool = keep_spool
        self.inventory_enabled = inventory
        self.spool_dir = Path(spool_dir or spool_root(self.db)) / (
            f"{self.app_id}-{os.getpid()}-{next(_counter)}")
        self._lock = threading.RLock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._pending = _Pending()
        self._held: list[tuple[int, int, bytes]] = []  # spool blocks read and scrubbed, not loaded
        self._writes: dict[str, _Write] = {}
        self._to_list: list[_Write] = []
        self._source_id: int | None = None
        self._stored_rejects: dict[str, int] = {}  # per-reason reject counts the store holds
        self._unmerged = 0  # loads that appended rows since the last one that let DuckDB merge row groups
        self._inventory_sources: dict[str, int] = {}
        self._inventory_counts: dict[str, int] = {}
        self._told_locked = False
        self._detached = False
        # Open for one load's batches, closed between loads (the plain duckdb shell cannot wait
        # for the lock), between a long catch-up's batches when a reader waits
        # (store.reader_waiting), after flush() and at detach.
        self._store: Store | None = None
        self._host_con: duckdb.DuckDBPyConnection | None = None
        self._opened_on: duckdb.DuckDBPyConnection | None = None  # the host the store was last opened on
        self.lister = Lister(self.sc._jvm, self.sc._jsc.hadoopConfiguration())

        self.spool = SpoolWriter(self.sc, self.spool_dir)
        self.stats.spool_writer = "lean" if self.spool.lean_why is None else f"spark ({self.spool.lean_why})"
        if self.spool.lean_why is not None:
            log.info("commitsleuth: the spool is written by Spark's own event-log writer: %s", self.spool.lean_why)
        self.tail = SpoolTail(self.spool.path)
        self.parse = ParseStats()  # the spool's lines, records and rejects, as ingest counts them
        self.fast = FastEventLog(SourceContext(uri=str(self.spool.path)), self.parse)
        # A load is a few seconds of events: DuckDB's worker threads would cost more than they save, and
        # the driver's cores are the job's.
        self.fast.con.execute(f"SET threads = {DUCKDB_THREADS}")
        self.decoder = self.fast.decoder
        self._pending.live.append(self._opening_table())
        self.hooks = HooksListener(self.sc, self) if hooks else None
        self._thread = threading.Thread(target=self._run, name="commitsleuth-capture", daemon=True)
        self._thread.start()
        atexit.register(self._at_exit)

    # -- public ----------------------------------------------------------------------------
    def flush(self, timeout: float = 30.0) -> bool:
        """Write everything Spark has emitted so far; True when nothing is left pending."""
        # Outside the lock: the hooks' queue, drained too, calls back into this capture.
        self.spool.drain(min(timeout, DRAIN_MS / 1000))
        return self._load_all(timeout)

    def _load_all(self, timeout: float) -> bool:
        """What flush() does once the bus has delivered what was posted."""
        deadline = time.monotonic() + timeout
        with self._lock:
            self._flush_jvm()
            target = self.tail.size()  # what Spark had emitted when flush() was called
        while True:
            with self._lock:
                ok = self._step()
                drained = ok and self.tail.offset >= target and not self._held and not len(self._pending)
                if drained or time.monotonic() > deadline:
                    self._release()  # the caller may read the store next, in this process too
                    return drained
            time.sleep(0.1)

    def inventory(self, *paths: str) -> int:
        """List these output locations now and record their files; returns files recorded."""
        with self._lock:
            before = self.stats.files
            for p in paths:
                self._list(_Write(query_id=None, location=p, start=None))
            self._write_pending()  # a locked store keeps them pending for the next round
            return self.stats.files - before

    def detach(self, timeout: float = 30.0) -> None:
        """Stop capturing: off Spark's bus first, then every buffered event to the store."""
        if self._detached:
            return
        self._detached = True
        atexit.unregister(self._at_exit)
        for part in (self.hooks, self.spool):
            if part is not None:
                self._guard(part.detach)
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=max(self.interval * 4, 2.0))
        drained = self.flush(timeout)
        with self._lock:
            self._finish_source("ok" if drained else "partial")
            self._release(fresh=True)
            self.fast.close()
        if drained and not self.keep_spool:
            shutil.rmtree(self.spool_dir, ignore_errors=True)
            try:
                self.spool_dir.parent.rmdir()  # only when no other capture's spool is in it
            except OSError:
                pass
        elif not drained:
            log.warning("commitsleuth: %d events could not be written to %s; they remain in the "
                        "spool %s (an event log: 'commitsleuth ingest' reads it)",
                        len(self._pending), self.db, self.spool.path)

    def __enter__(self) -> "LiveCapture":
        return self

    def __exit__(self, *exc) -> None:
        self.detach()

    # -- the background thread -------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            nudged = self._wake.wait(self.interval)
            self._wake.clear()
            if self._stop.is_set():
                break
            with self._lock:
                started = time.monotonic()  # a load's own time counts from its tick's first read
                self._flush_jvm()
                with self._counted():
                    self._hold(self.tail.size())
                due = nudged or time.monotonic() >= self._next_load or self._held_bytes() >= HELD_MAX
                # an idle spool with nothing held back costs no load
                if due and (self._held or len(self._pending) or self._to_list):
                    self.stats.loads += 1
                    self._step()
                    # free between loads: the plain duckdb shell cannot wait for a lock, it opens now
                    if self._store is not None:
                        with self._counted():
                            self._release()
                    self.stats.longest_load = max(self.stats.longest_load, time.monotonic() - started)
                    self._pace(started)

    def _pace(self, started: float) -> None:
        """When the next load is due: its wait follows what the capture's thread spent since the
        last load (see FLUSH_INTERVAL), counted from this load's start, so that an event that
        just missed a load waits at most max_wait + interval + the next load's own time, however
        long this one took."""
        spent, self._cpu_at_load = self.stats.load_cpu - self._cpu_at_load, self.stats.load_cpu
        wait = min(max(spent / self.load_share, self.interval), self.max_wait)
        self._next_load = started + wait

    def nudge(self) -> None:
        """Load soon (a job just ended); called from the optional hooks listener, must stay cheap."""
        self._wake.set()

    def on_application_end(self) -> None:
        """Spark is stopping: take everything now, within a bounded time, and let go. Called on
        the hooks' queue, which a drain of the bus would wait for; Spark's writer puts the
        application's end into the spool on a queue of its own, which may not have got there yet,
        so the load first waits (as boundedly) until the spool's last lines hold it."""
        self._guard(lambda: self._await_spool(APP_END_LINE, timeout=5.0))
        self._guard(lambda: self._load_all(timeout=5.0))

    def _await_spool(self, marker: bytes, timeout: float) -> None:
        """Until the spool's last lines hold ``marker``, or ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                self._flush_jvm()
            with open(self.spool.path, "rb") as fh:
                fh.seek(max(0, fh.seek(0, os.SEEK_END) - SPOOL_TAIL_BYTES))
                if marker in fh.read() or time.monotonic() >= deadline:
                    return
            time.sleep(0.05)

    def _at_exit(self) -> None:
        self._guard(lambda: self.detach(timeout=10.0))

    def _flush_jvm(self) -> None:
        if self.spool.attached:
            self._guard(self.spool.flush)

    def _step(self) -> bool:
        """Load what is held and what the spool holds, in batches; False after an error."""
        end = self.tail.size()  # not what Spark appends meanwhile: that is the next load's
        with self._counted():
            try:
                while True:
                    block = self._next_block(end) if len(self._pending) < MAX_PENDING else None
                    if block:
                        self._load(*block)
                    while self._to_list:
                        self._list(self._to_list.pop(0))
                    if not block or len(self._pending) >= BATCH:
                        written = self._write_pending()
                        if not block or not written:
                            break  # caught up, or the store is locked: the rest waits in the spool
                        if reader_waiting(self.db):
                            self._release()  # a long catch-up lets a waiting reader in between batches
            except Exception as exc:  # noqa: BLE001 - never raise into Spark or the user's job
                self._count_error(exc)
                return False
        return True

    @contextmanager
    def _counted(self):
        """The calling thread's CPU inside the block, added to the loads' (``stats.load_cpu``)."""
        started = time.thread_time()
        try:
            yield
        finally:
            self.stats.load_cpu += time.thread_time() - started

    def _hold(self, end: int) -> None:
        """Read the spool's complete lines up to ``end`` and scrub them now; they are loaded
        when the next load is due (held, at most HELD_MAX bytes: the rest waits in the spool)."""
        while self.tail.offset < end and self._held_bytes() < HELD_MAX:
            block = self.tail.read(min(SPOOL_CHUNK, end - self.tail.offset))
            if not block:
                break
            self.tail.scrub(block[1], block[2])  # the spool keeps no secret Spark left in it
            self._held.append(block)

    def _held_bytes(self) -> int:
        return sum(len(data) for _, _, data in self._held)

    def _next_block(self, end: int) -> tuple[int, int, bytes] | None:
        """The next lines to load, in order: the held blocks joined (one fast-path call for
        several seconds of lines), up to LOAD_BLOCK bytes, or else the spool's next block."""
        if not self._held:
            self._hold(min(end, self.tail.offset + SPOOL_CHUNK))
        if not self._held:
            return None
        first_line, offset, data = self._held.pop(0)
        parts = [data]
        size = len(data)
        while self._held and size + len(self._held[0][2]) <= LOAD_BLOCK:
            size += len(self._held[0][2])
            parts.append(self._held.pop(0)[2])
        return first_line, offset, b"".join(parts) if len(parts) > 1 else data

    def _loaded_to(self) -> int:
        """The spool's offset up to which its lines are loaded (the held ones are not)."""
        return self._held[0][1] if self._held else self.tail.offset

    def _load(self, first_line: int, offset: int, data: bytes) -> None:
        """A block of spool lines into pending rows, through the fast path ingest uses."""
        counted = self.fast.snapshot()
        try:
            table = self.fast.table(offset, data)
        except Exception as exc:  # noqa: BLE001 - the block must not be lost: line by line instead
            self._count_error(exc)
            self.fast.restore(counted)  # what the failed call counted, rejects too, is counted again
            table = self.fast.decode_lines(first_line, offset, data)
        self.stats.lines, self.stats.rejected = self.parse.lines, self.parse.rejected
        self._pending.live.append(self._track_writes(table, offset, data))

    def _track_writes(self, table: pa.Table, offset: int, data: bytes) -> pa.Table:
        """Live-only: the write target of a SQL execution, and its file listing once it ends
        (the end's row gets the location too). The target is read from the plan in the spool's
        line, not the stored row, whose location is redacted."""
        found = np.flatnonzero(pc.is_in(table.column("kind"), value_set=_SQL_EXECUTIONS)
                               .to_numpy(zero_copy_only=False))
        if not len(found):
            return table
        rows = table.take(pa.array(found)).select(["kind", "query_id", "ts", "byte_offset", "location"])
        ends = {}
        for k, row in zip(found.tolist(), rows.to_pylist()):
            if row["kind"] == "query_start" and row["location"]:
                start = row["byte_offset"] - offset
                event = orjson.loads(data[start:data.index(b"\n", start)])
                target = write_target(event.get("physicalPlanDescription"), event.get("sparkPlanInfo"))
                if target is not None and target.listed:
                    self._writes[row["query_id"]] = _Write(row["query_id"], target.path, row["ts"],
                                                           stored=row["location"])
            elif row["kind"] == "query_end" and row["query_id"] in self._writes:
                w = self._writes.pop(row["query_id"])
                w.end = row["ts"]
                ends[k] = w.stored
                if self.inventory_enabled:
                    self._to_list.append(w)
        if not ends:
            return table
        at = table.schema.get_field_index("location")
        locations = table.column(at).to_pylist()
        for k, location in ends.items():
            locations[k] = location
        return table.set_column(at, "location", pa.array(locations, pa.string()))

    def _list(self, w: _Write) -> None:
        try:
            files, truncated = self.lister.list(w.location, w.query_id, (w.start, w.end))
        except Exception as exc:  # noqa: BLE001 - a listing failure must not stop capture
            self._count_error(exc)
            return
        for ev in files:
            ev.app_id = self.app_id
        if truncated:
            log.warning("commitsleuth: listed only the first %d files under %s", len(files), w.location)
        self.stats.inventories += 1
        self._pending.inventory.setdefault(w.location, []).extend(files)

    # -- the store ---------------------------------------------------------------------------
    def _write_pending(self) -> bool:
        """One transaction with everything pending; False when the store is locked."""
        if not len(self._pending):
            return True
        if self._store is None:
            try:
                self._store = self._open_store()
            except StoreLockedError as exc:
                self.stats.lock_waits += 1
                if not self._told_locked:
                    self._told_locked = True
                    log.warning("commitsleuth: %s; live events are kept in %s and written when it "
                                "is free", exc, self.spool_dir)
                return False
        try:
            self._write_to(self._store)
        except BaseException:
            self._release(fresh=True)  # the next load starts on a fresh connection
            raise
        if self._told_locked:
            log.warning("commitsleuth: %s is free again; live capture caught up", self.db)
            self._told_locked = False
        return True

    def _open_store(self) -> Store:
        """The store attached for a load: migrated and set up at its first open on this host,
        then only its schema version checked (``Store(reopen=True)``)."""
        host = self._host()
        store = Store(self.db, host=host, commit_checkpoints=True, reopen=host is self._opened_on)
        self._opened_on = host
        return store

    def _host(self) -> duckdb.DuckDBPyConnection:
        """The in-memory connection the store is attached to for each load, kept for the
        capture's life: a connection of its own per load cost ~20 ms of CPU to open."""
        if self._host_con is None:
            self._host_con = duckdb.connect()
            self._host_con.execute(f"SET threads = {DUCKDB_THREADS}")
        return self._host_con

    def _release(self, fresh: bool = False) -> None:
        """The store closed (detached: its lock freed); with ``fresh``, its host connection too."""
        if self._store is not None:
            store, self._store = self._store, None
            try:
                store.close()
            except Exception as exc:  # noqa: BLE001 - it may still be attached: a new host
                self._count_error(exc)
                fresh = True
        if fresh and self._host_con is not None:
            host, self._host_con = self._host_con, None
            self._guard(host.close)

    def _write_to(self, store: Store) -> None:
        """One transaction with everything pending."""
        if self._source_id is None:
            self._source_id = store.add_source(f"live:{self.app_id}", "live", format="spark-live")
        live = pa.concat_tables(self._pending.live) if self._pending.live else None
        store.con.execute("BEGIN")
        written = 0
        if live is not None and live.num_rows:
            at = live.schema.get_field_index("source_id")
            live = live.set_column(at, "source_id", pa.array(np.full(live.num_rows, self._source_id), pa.int64()))
            unseen = store.unseen_events(live, own_source=True)  # fewer when its spool was ingested
            store.write_arrow(unseen)
            written = unseen.num_rows
        files = 0
        for location, evs in self._pending.inventory.items():
            sid = self._inventory_sources.get(location)
            if sid is None:
                sid = store.add_source(location, "inventory", format="hadoop-listing")
                self._inventory_sources[location] = sid
            for ev in evs:
                ev.source_id = sid
            store.write_events(evs)
            files += len(evs)
            self._inventory_counts[location] = self._inventory_counts.get(location, 0) + len(evs)
            store.update_source(sid, events=self._inventory_counts[location], status="ok",
                                finished_at=_now())
        store.add_rejects(self._source_id, self.parse.rejects_since(self._stored_rejects))
        store.update_source(self._source_id, bytes_read=self._loaded_to(), lines=self.stats.lines,
                            events=self.stats.events + written, rejected=self.stats.rejected,
                            size_bytes=self._loaded_to())
        appended = bool(written or files)
        merge = appended and self._unmerged + 1 >= MERGE_EVERY
        store.merge_row_groups(merge)
        store.con.execute("COMMIT")  # the load's checkpoint (Store(commit_checkpoints=True))
        self._unmerged = 0 if merge else self._unmerged + appended
        self._stored_rejects = self.parse.reject_counts()
        self.parse.recent.clear()  # a load is stored whole: the lines of its rejects are never asked for
        self.stats.events += written
        self.stats.known += (live.num_rows if live is not None else 0) - written
        self.stats.files += files
        self._pending = _Pending()

    def _finish_source(self, status: str) -> None:
        if self._source_id is None:
            return
        self._release()
        try:
            with self._open_store() as store:
                reason = None if status == "ok" else f"{len(self._pending)} events left in {self.spool.path}"
                store.update_source(self._source_id, status=status, reason=reason, finished_at=_now())
        except Exception as exc:  # noqa: BLE001
            self._count_error(exc)

    # -- the events Spark posted before we attached ------------------------------------------
    def _opening_table(self) -> pa.Table:
        """Application start and the commit-relevant configuration, through the same decoder
        (and its reference, when the fast path is verified, so both carry the same state)."""
        sc = self.sc
        conf = {k: v for k, v in sc.getConf().getAll()}
        conf.setdefault("spark.speculation", "false")
        hadoop = {}
        hconf = sc._jsc.hadoopConfiguration()
        for key in COMMIT_CONF:
            if key.startswith("spark.hadoop."):
                value = hconf.get(key[len("spark.hadoop."):])
                if value is not None:
                    hadoop[key[len("spark.hadoop."):]] = value
            elif key.startswith("spark.sql.") and self.session is not None and key not in conf:
                try:
                    conf[key] = self.session.conf.get(key)  # the effective value, default included
                except Exception:  # noqa: BLE001 - a key this Spark does not know
                    pass
        out = []
        decoders = [self.decoder] + ([self.fast.reference[0]] if self.fast.reference else [])
        for record in (
            {"Event": "SparkListenerApplicationStart", "App Name": sc.appName, "App ID": self.app_id,
             "Timestamp": sc.startTime, "User": sc.sparkUser(), **self._attempt_id()},
            {"Event": "SparkListenerEnvironmentUpdate", "Spark Properties": conf,
             "Hadoop Properties": hadoop},
        ):
            for decoder in decoders:
                events = decoder.decode(record)
                if decoder is self.decoder:
                    out.extend(events)
        return events_to_arrow([enrich(ev) for ev in out], None)

    def _attempt_id(self) -> dict:
        """The application attempt as Spark's own start event names it (YARN), else nothing."""
        attempt = self.sc._jsc.sc().applicationAttemptId()
        return {"App Attempt ID": attempt.get()} if attempt.isDefined() else {}

    # -- errors --------------------------------------------------------------------------------
    def _guard(self, fn):
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - counted and logged, never raised into Spark
            self._count_error(exc)
            return None

    def _count_error(self, exc: Exception) -> None:
        self.stats.errors += 1
        msg = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        if msg != self.stats.last_error:
            log.warning("commitsleuth: live capture error (counted, capture goes on): %s", msg)
        self.stats.last_error = msg


def _now() -> dt.datetime:
    return dt.datetime.now().replace(microsecond=0)
