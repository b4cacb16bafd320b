"""Benchmark: the same `commitsleuth ingest` by two or more installs, alternated, in one run.

For a before/after of one change: give each build's `commitsleuth` (a `git worktree` of the old
commit with its own venv, and this one). Each round runs every build once on the same generated
HiveServer2 log (bench/ingest_text.py's generator) into a fresh store, in a rotating order, so
the machine's load falls on all of them alike. Prints each run, then per build the median wall
and CPU seconds with min–max, and the ratio of the medians to the first build.

    python bench/ingest_ab.py --size 150M --rounds 5 /tmp/before/.venv/bin/commitsleuth \\
        .venv/bin/commitsleuth
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from ingest_text import generate, parse_size, timed  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("exes", nargs="+", metavar="COMMITSLEUTH", help="the builds' commitsleuth executables")
    ap.add_argument("--size", default="150M")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default="/tmp/commitsleuth-bench")
    ap.add_argument("--log", help="ingest this file instead of the generated HiveServer2 log")
    args = ap.parse_args()
    work = Path(args.dir)
    work.mkdir(parents=True, exist_ok=True)
    log = Path(args.log) if args.log else work / f"hs2-{args.size}.log"
    if not args.log and (not log.exists() or log.stat().st_size < parse_size(args.size)):
        generate(log, parse_size(args.size))
    mb = log.stat().st_size / 1e6
    walls: dict[str, list[float]] = {e: [] for e in args.exes}
    cpus: dict[str, list[float]] = {e: [] for e in args.exes}
    loads = []
    outputs = set()
    for r in range(args.rounds):
        order = args.exes[r % len(args.exes):] + args.exes[:r % len(args.exes)]
        for exe in order:
            db = work / "ab.duckdb"
            for leftover in (db, Path(f"{db}.wal")):
                leftover.unlink(missing_ok=True)
            loads.append(os.getloadavg()[0])
            wall, cpu, proc, peak = timed([exe, "ingest", str(log), "--db", str(db)], cwd=str(work))
            if proc.returncode != 0:
                print(proc.stderr, file=sys.stderr)
                return 1
            outputs.add(proc.stdout.strip())
            walls[exe].append(wall)
            cpus[exe].append(cpu)
            print(f"round {r + 1} {exe}: wall {wall:.2f} s, cpu {cpu:.2f} s, peak {peak / 2**20:.0f} MiB, "
                  f"load {loads[-1]:.1f}", flush=True)
    print(f"{mb:.0f} MB log, {args.rounds} rounds, load average {min(loads):.1f}–{max(loads):.1f} "
          f"on {os.cpu_count()} cores; {' | '.join(sorted(outputs))}")
    base = args.exes[0]
    for exe in args.exes:
        w, c = walls[exe], cpus[exe]
        print(f"  {exe}: wall median {statistics.median(w):.2f} s (min–max {min(w):.2f}–{max(w):.2f}), "
              f"cpu median {statistics.median(c):.2f} s ({min(c):.2f}–{max(c):.2f}); ratio to the first: "
              f"wall {statistics.median(w) / statistics.median(walls[base]):.3f}, "
              f"cpu {statistics.median(c) / statistics.median(cpus[base]):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
