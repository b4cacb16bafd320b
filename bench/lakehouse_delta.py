"""Delta ingest against delta-rs and against the floor of reading every commit, same run.

    .venv/bin/python bench/lakehouse_delta.py --tables /tmp/lake --repeat 3
    .venv/bin/python bench/lakehouse_delta.py --versions 100000 --repeat 3   # table built here

The table is bench/lakehouse_tables.py's real delta-rs table (``--versions`` versions, delta-rs's
own checkpoints). Four readings of it, each in a child process of its own, alternating:

- *ours*: ``record_table`` into a fresh store (every version a commit event with its lines,
  every add and remove an event on its partition, redacted, stored);
- *delta-rs*: ``DeltaTable(...).get_add_actions()``: the live files, read from the newest
  checkpoint and the (at most 99) commits after it. It never opens the other commits;
- *history*: ``DeltaTable(...).history()``: delta-rs's own reading of every version's
  commitInfo, the same history an ingest stores (the same-history baseline);
- *read*: open and read every ``_delta_log/*.json`` in Python and nothing else: what an ingest
  that must store every version cannot go below;
- *duckdb*: DuckDB's ``read_json`` of the same commit files (every action as JSON): the same
  reading done by a columnar engine in C++.

Each figure is the median of ``--repeat`` runs with its min-max: wall seconds of the read alone
(imports and the store's creation not timed), CPU seconds and the child's peak RSS. The load
average is printed with them: the ratios, not the seconds, compare across runs.
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
sys.path.insert(0, str(HERE))
from lakehouse import load, spread  # noqa: E402  (bench/lakehouse.py, beside this file)

SIDES = ("ours", "delta-rs", "history", "read", "duckdb")


def child(side: str, table: str) -> None:
    """One timed reading in this process; prints {seconds, cpu, rows, rss_mib}."""
    log = os.path.join(table, "_delta_log")
    if side == "ours":
        from commitsleuth.parsers.lakehouse import record_table, table_root
        from commitsleuth.store import Store

        work = tempfile.mkdtemp()
        store = Store(os.path.join(work, "b.duckdb"))
        root, found = table_root(table)
        t0, cpu0 = time.perf_counter(), time.process_time()
        result, problems = record_table(store, root, found)
        assert not problems, problems[:3]
        rows = result.events
    elif side == "delta-rs":
        from deltalake import DeltaTable

        t0, cpu0 = time.perf_counter(), time.process_time()
        rows = DeltaTable(table).get_add_actions().num_rows
    elif side == "history":
        from deltalake import DeltaTable

        t0, cpu0 = time.perf_counter(), time.process_time()
        rows = len(DeltaTable(table).history())
    elif side == "read":
        t0, cpu0 = time.perf_counter(), time.process_time()
        rows = 0
        for entry in os.scandir(log):
            if entry.name.endswith(".json"):
                with open(entry.path, "rb") as fh:
                    rows += fh.read().count(b"\n")
    else:
        import duckdb

        con = duckdb.connect()
        t0, cpu0 = time.perf_counter(), time.process_time()
        rows = con.execute(
            "SELECT count(*) FROM read_json(?, format = 'newline_delimited', filename = true, columns = "
            "{commitInfo: 'JSON', add: 'JSON', remove: 'JSON', metaData: 'JSON', protocol: 'JSON', txn: 'JSON'})",
            [os.path.join(log, "*.json")]).fetchone()[0]
    seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    if side == "ours":  # the store is not kept: a run's is tens of MB
        store.close()
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({"seconds": seconds, "cpu": cpu, "rows": rows,
                      "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def run_child(side: str, table: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", side, table], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def compare(table: str, repeat: int, sides=SIDES) -> None:
    runs: dict[str, list[dict]] = {s: [] for s in sides}
    for i in range(repeat):
        for side in sides:
            runs[side].append(run_child(side, table))
            r = runs[side][-1]
            print(f"  run {i + 1} {side}: {r['seconds']:.2f} s (CPU {r['cpu']:.2f} s), {r['rss_mib']:.0f} MiB, "
                  f"{r['rows']} rows; load {load()}", flush=True)
    median = {s: statistics.median(r["seconds"] for r in runs[s]) for s in sides}
    cpu = {s: statistics.median(r["cpu"] for r in runs[s]) for s in sides}
    for side in sides:
        print(f"{side}: {spread([r['seconds'] for r in runs[side]])} s, CPU {spread([r['cpu'] for r in runs[side]])} s, "
              f"peak {spread([r['rss_mib'] for r in runs[side]])} MiB", flush=True)
    for base in [s for s in sides if s != "ours" and "ours" in sides]:
        print(f"ours / {base}: {median['ours'] / median[base]:.2f} wall, {cpu['ours'] / cpu[base]:.2f} CPU "
              f"(ratio of medians)")
    if "read" in sides and "delta-rs" in sides:
        print(f"read / delta-rs: {median['read'] / median['delta-rs']:.2f} wall: reading every commit, nothing else")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(*sys.argv[2:4])
        return
    from lakehouse_tables import delta_table

    ap = argparse.ArgumentParser()
    ap.add_argument("--versions", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sides", default=",".join(SIDES),
                    help=f"which readings, comma-separated (default: all of {','.join(SIDES)})")
    ap.add_argument("--tables", help="tables built by lakehouse_tables.py --keep DIR (else built here, then removed)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(args.tables) / "delta" if args.tables else delta_table(Path(tmp), args.versions)
        print(f"{table}: {sum(1 for n in os.listdir(table / '_delta_log') if n.endswith('.json'))} commit files; "
              f"load {load()}", flush=True)
        sides = tuple(x for x in args.sides.split(",") if x)
        unknown = set(sides) - set(SIDES)
        if unknown:
            sys.exit(f"unknown side(s): {', '.join(sorted(unknown))}")
        compare(str(table), args.repeat, sides)
        print(f"load {load()}")


if __name__ == "__main__":
    main()
