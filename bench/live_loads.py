"""Where a live load's CPU goes: a real spool replayed through the capture's own load code.

    .venv/bin/python bench/live_loads.py SPOOL [--loads 9] [--holds 4] [--runs 1] [--profile FILE]

``SPOOL`` is a live capture's spool (``attach(spark, db=..., keep_spool=True)`` keeps it: a plain
event log). It is copied into a fresh spool file in ``--loads`` parts of equal bytes, each part in
``--holds`` appends (the capture's thread reads and scrubs what the spool gained every second);
after each part a load runs as the capture's thread runs it (``LiveCapture._step`` then
``_release``), into a fresh store, so the store grows as it does during the job. No Spark: the
capture's load methods run on a LiveCapture built without a session. Printed per run: the
thread's CPU (``time.thread_time``) per phase and in all, as the capture counts it
(``stats.load_cpu``), and per load; ``--profile`` writes a cProfile of the last run.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import functools
import json
import shutil
import tempfile
import threading
import time
from pathlib import Path

from commitsleuth.ingest import eventlog_fast
from commitsleuth.listener import capture
from commitsleuth.listener.tail import SpoolTail
from commitsleuth.parsers.base import ParseStats, SourceContext
from commitsleuth import store as store_mod

# (owner, method, label): the phases of a load, nested phases are reported apart
PHASES = [
    (capture.LiveCapture, "_hold", "spool read + scrub"),
    (capture.LiveCapture, "_load", "fast path + _track_writes"),
    (eventlog_fast.FastEventLog, "table", "  FastEventLog.table"),
    (capture.LiveCapture, "_track_writes", "  _track_writes"),
    (capture.LiveCapture, "_write_to", "_write_to (transaction, COMMIT)"),
    (store_mod.Store, "unseen_events", "  unseen_events"),
    (store_mod.Store, "write_arrow", "  write_arrow"),
    (store_mod.Store, "add_rejects", "  add_rejects"),
    (store_mod.Store, "update_source", "  update_source"),
    (store_mod.Store, "merge_row_groups", "  merge_row_groups"),
    (store_mod.Store, "__init__", "store attach (+migrate)"),
    (store_mod.Store, "migrate", "  migrate"),
    (store_mod.Store, "close", "store detach"),
]


WRITE_PARTS = {"unseen_events", "write_arrow", "add_rejects", "update_source", "merge_row_groups"}


class Phases:
    def __init__(self):
        self.cpu = collections.defaultdict(float)
        self.calls = collections.Counter()
        self.each = collections.defaultdict(list)  # label -> CPU of each call
        self._saved = []

    def install(self):
        for owner, name, label in PHASES:
            orig = owner.__dict__.get(name)
            if orig is None:  # an older version of the code (an A/B against it): not a phase there
                continue
            self._saved.append((owner, name, orig))

            def timed(*a, __orig=orig, __label=label, **k):
                t0 = time.thread_time()
                try:
                    return __orig(*a, **k)
                finally:
                    spent = time.thread_time() - t0
                    self.cpu[__label] += spent
                    self.calls[__label] += 1
                    self.each[__label].append(spent)
            setattr(owner, name, functools.wraps(orig)(timed))

    def uninstall(self):
        for owner, name, orig in reversed(self._saved):
            setattr(owner, name, orig)
        self._saved.clear()


def loader(spool: Path, db: Path) -> capture.LiveCapture:
    """A LiveCapture with what its load path reads, no Spark session (no opening events): the
    attributes ``LiveCapture.__init__`` sets for it, kept in step by hand."""
    cap = capture.LiveCapture.__new__(capture.LiveCapture)
    cap.db = str(db)
    cap.app_id = "replay"
    cap.stats = capture.CaptureStats()
    cap.inventory_enabled = False
    cap.spool_dir = spool.parent
    cap._lock = threading.RLock()
    cap._pending = capture._Pending()
    cap._held = []
    cap._writes, cap._to_list = {}, []
    cap._source_id = None
    cap._stored_rejects, cap._inventory_sources, cap._inventory_counts = {}, {}, {}
    cap._told_locked = False
    cap._store, cap._host_con, cap._opened_on = None, None, None
    cap.tail = SpoolTail(spool)
    cap.parse = ParseStats()
    cap.fast = eventlog_fast.FastEventLog(SourceContext(uri=str(spool)), cap.parse)
    cap.fast.con.execute(f"SET threads = {capture.DUCKDB_THREADS}")
    cap.decoder = cap.fast.decoder
    for name in ("_cpu_at_load", "_next_load"):
        setattr(cap, name, 0.0)
    cap._unmerged = 0
    return cap


def replay(source: Path, loads: int, holds: int, workdir: Path, phases: Phases | None) -> dict:
    data = source.read_bytes()
    spool_dir = workdir / "spool"
    spool_dir.mkdir(parents=True)
    spool = spool_dir / "app.inprogress"
    spool.touch()
    db = workdir / "live.duckdb"
    cap = loader(spool, db)
    per_load = []
    # cut at line ends: equal bytes per part, as the spool grows during a busy job
    cuts = [0]
    for k in range(1, loads * holds):
        at = data.find(b"\n", len(data) * k // (loads * holds))
        cuts.append(at + 1 if at >= 0 else len(data))
    cuts.append(len(data))
    try:
        with open(spool, "ab") as fh:
            for k in range(loads):
                before = cap.stats.load_cpu
                for h in range(holds):
                    fh.write(data[cuts[k * holds + h]:cuts[k * holds + h + 1]])
                    fh.flush()
                    with cap._counted():
                        cap._hold(cap.tail.size())
                cap.stats.loads += 1
                assert cap._step(), cap.stats.last_error
                if cap._store is not None:
                    with cap._counted():
                        cap._release()
                per_load.append(cap.stats.load_cpu - before)
        cap._release(fresh=True)
        cap.fast.close()
    finally:
        if phases is not None:
            phases.uninstall()
    with store_mod.Store(db, read_only=True) as s:
        stored = s.count("events")
    return {"cpu": cap.stats.load_cpu, "per_load": per_load, "events": cap.stats.events, "stored": stored,
            "lines": cap.stats.lines, "errors": cap.stats.errors}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spool", type=Path)
    ap.add_argument("--loads", type=int, default=9)
    ap.add_argument("--holds", type=int, default=4, help="spool reads (appends) per load")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--no-phases", action="store_true", help="the load CPU alone, no per-phase wrappers")
    ap.add_argument("--profile", type=Path, help="cProfile of the last run into this file")
    ap.add_argument("--each", action="store_true", help="each call's CPU (ms) per phase")
    ap.add_argument("--json", action="store_true", help="one JSON line per run")
    args = ap.parse_args()
    for run in range(args.runs):
        work = Path(tempfile.mkdtemp(prefix="live-loads-"))
        phases = None if args.no_phases else Phases()
        if phases:
            phases.install()
        prof = cProfile.Profile() if args.profile and run == args.runs - 1 else None
        try:
            if prof:
                prof.enable()
            r = replay(args.spool, args.loads, args.holds, work, phases)
            if prof:
                prof.disable()
                prof.dump_stats(args.profile)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        if phases:
            r["phases"] = {k: round(v, 4) for k, v in phases.cpu.items()}
        if args.json:
            print(json.dumps(r), flush=True)
            continue
        print(f"run {run + 1}: load CPU {r['cpu']:.3f} s over {args.loads} loads, {r['events']} events written "
              f"({r['stored']} stored), {r['lines']} lines, {r['errors']} errors")
        print("  per load: " + ", ".join(f"{c * 1000:.0f}" for c in r["per_load"]) + " ms")
        if phases:
            for _, _, label in PHASES:
                if label in phases.cpu:
                    each = ", ".join(f"{c * 1000:.0f}" for c in phases.each[label]) if args.each else ""
                    print(f"  {label:32s} {phases.cpu[label]:7.3f} s  ({phases.calls[label]} calls) {each}")
            inner = sum(v for k, v in phases.cpu.items() if k.startswith("  ") and k.strip() in WRITE_PARTS)
            print(f"  {'  rest: BEGIN, COMMIT, Arrow':32s} {phases.cpu['_write_to (transaction, COMMIT)'] - inner:7.3f} s")


if __name__ == "__main__":
    main()
