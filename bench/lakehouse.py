"""Ingest and audit of a table log against the table library's own reading of the same table,
same run.

    .venv/bin/python bench/lakehouse.py --versions 100000 --entries 1000000 --repeat 3
    .venv/bin/python bench/lakehouse.py --tables /tmp/lake --repeat 3   # tables built before

The tables are real (``bench/lakehouse_tables.py`` says how they are built): a delta-rs table of
``--versions`` versions with delta-rs's own checkpoints, and a pyiceberg table of ``--entries``
manifest entries written by pyiceberg's own writers.

- *ours*: ``record_table`` into a fresh store (every version a commit event, every add and
  remove an event on its partition), each run in a child process of its own;
- *theirs*: ``DeltaTable(...).get_add_actions()`` (the live files, from the last checkpoint
  on) and ``table.inspect.entries()`` (the current snapshot's entries: every entry of an
  append-only table), each in a child process too;
- *audit*: ``commitsleuth audit TABLE_DIR`` as a user runs it (listing, log, analysis).

Runs alternate ours / theirs; each figure is the median of ``--repeat`` runs with its min-max,
wall seconds of the read alone (imports and the store's creation not timed) and the child's
peak RSS. The load average is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def child(side: str, fmt: str, table: str) -> None:
    """One timed read in this process; prints {seconds, rows, rss_mib, cpu} (cpu: CPU seconds of the
    read, less sensitive than wall time to the other sessions' load)."""
    cpu0 = time.process_time()
    if side == "ours":
        from commitsleuth.parsers.lakehouse import record_table, table_root
        from commitsleuth.store import Store

        work = tempfile.mkdtemp()
        store = Store(os.path.join(work, "b.duckdb"))
        root, found = table_root(table)
        t0, cpu0 = time.perf_counter(), time.process_time()
        result, problems = record_table(store, root, found)
        seconds = time.perf_counter() - t0
        assert not problems, problems[:3]
        rows = result.events
        store.close()
        shutil.rmtree(work, ignore_errors=True)  # not kept: a run's store is tens of MB
    elif fmt == "delta":
        from deltalake import DeltaTable

        t0, cpu0 = time.perf_counter(), time.process_time()
        rows = DeltaTable(table).get_add_actions().num_rows
        seconds = time.perf_counter() - t0
    else:
        from pyiceberg.catalog.sql import SqlCatalog

        root = Path(table).parents[2]
        t0, cpu0 = time.perf_counter(), time.process_time()
        tbl = SqlCatalog("b", uri=f"sqlite:///{root}/cat.db", warehouse=f"file://{root}/wh").load_table("db.t")
        rows = tbl.inspect.entries().num_rows
        seconds = time.perf_counter() - t0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"seconds": seconds, "rows": rows, "rss_mib": usage.ru_maxrss / 1024,
                      "cpu": time.process_time() - cpu0}))


def run_child(side: str, fmt: str, table: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", side, fmt, table], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_audit(table: str) -> dict:
    """``commitsleuth audit TABLE`` as a user runs it: wall seconds, peak RSS, its summary line."""
    exe = Path(sys.executable).with_name("commitsleuth")
    t0 = time.perf_counter()
    proc = subprocess.Popen([str(exe), "audit", table], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    out = proc.stdout.read()
    return {"seconds": seconds, "rss_mib": usage.ru_maxrss / 1024, "exit": os.waitstatus_to_exitcode(status),
            "cpu": usage.ru_utime + usage.ru_stime,
            "said": " | ".join(out.strip().splitlines()[:2])}


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def compare(fmt: str, table: str, repeat: int, audit: bool) -> None:
    ours, theirs = [], []
    for _ in range(repeat):
        ours.append(run_child("ours", fmt, table))
        print(f"  {fmt} ours: {json.dumps(ours[-1])}; load {load()}", flush=True)  # kept if theirs never ends
        theirs.append(run_child("theirs", fmt, table))
        print(f"  {fmt} run: ours {ours[-1]['seconds']:.2f} s (CPU {ours[-1]['cpu']:.2f} s), {ours[-1]['rss_mib']:.0f} MiB, "
              f"{ours[-1]['rows']} events; theirs {theirs[-1]['seconds']:.2f} s (CPU {theirs[-1]['cpu']:.2f} s), "
              f"{theirs[-1]['rss_mib']:.0f} MiB, "
              f"{theirs[-1]['rows']} rows; load {load()}", flush=True)
    o, t = [r["seconds"] for r in ours], [r["seconds"] for r in theirs]
    ratios = [a / b for a, b in zip(o, t)]
    print(f"{fmt}: ours {spread(o)} s, theirs {spread(t)} s, ratio of medians {statistics.median(o) / statistics.median(t):.2f} "
          f"(per run {min(ratios):.2f}-{max(ratios):.2f}), CPU ours {spread([r['cpu'] for r in ours])} s theirs "
          f"{spread([r['cpu'] for r in theirs])} s, ours peak {spread([r['rss_mib'] for r in ours])} MiB",
          flush=True)
    if audit:
        runs = [run_audit(table) for _ in range(repeat)]
        for r in runs:
            print(f"  {fmt} audit: {r['seconds']:.1f} s (CPU {r['cpu']:.1f} s), {r['rss_mib']:.0f} MiB, exit {r['exit']}: {r['said']}", flush=True)
        print(f"{fmt} audit: {spread([r['seconds'] for r in runs])} s, peak {spread([r['rss_mib'] for r in runs])} MiB; "
              f"load {load()}", flush=True)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(*sys.argv[2:5])
        return
    sys.path.insert(0, str(HERE))
    from lakehouse_tables import delta_table, iceberg_table, verify_delta, verify_iceberg

    ap = argparse.ArgumentParser()
    ap.add_argument("--versions", type=int, default=100_000)
    ap.add_argument("--entries", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tables", help="tables built by lakehouse_tables.py --keep DIR (else built here, then removed)")
    ap.add_argument("--no-audit", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.tables:
            delta = Path(args.tables) / "delta"
            iceberg = Path(args.tables) / "wh" / "db" / "t"
        else:
            t0 = time.perf_counter()
            delta = delta_table(Path(tmp), args.versions) if args.versions else None
            tbl = iceberg_table(Path(tmp), args.entries) if args.entries else None
            iceberg = Path(tbl.metadata.location.removeprefix("file://")) if tbl else None
            print(f"tables built in {time.perf_counter() - t0:.0f} s", flush=True)
        print(f"load {load()}", flush=True)
        if delta and delta.exists():
            compare("delta", str(delta), args.repeat, not args.no_audit)
        if iceberg and iceberg.exists():
            compare("iceberg", str(iceberg), args.repeat, not args.no_audit)
        print(f"load {load()}")


if __name__ == "__main__":
    main()
