"""``commitsleuth audit TABLE_DIR`` as a user runs it, measured as a whole process tree.

    .venv/bin/python bench/lakehouse_audit.py /tmp/lake/wh/db/t --repeat 3

(the Iceberg table of ``bench/lakehouse_tables.py --keep /tmp/lake``; its Delta table works the
same). Each run is the command in a child process: wall seconds, CPU seconds of the command and
of every process it started (its manifest-decoding worker included: user + system, so DuckDB's
spilling shows), and the peak of the summed resident memory of the whole tree, sampled every
50 ms. The load average is printed beside each run: on a loaded box read the CPU seconds and
the memory, not the wall time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from ingest_text import timed  # noqa: E402  (bench/ingest_text.py: CPU and RSS of a process tree)
from lakehouse import load, spread  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("table", help="the table's root directory")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--command", default=shutil.which("commitsleuth", path=os.path.dirname(sys.executable)),
                    help="the commitsleuth executable (default: the one beside this Python)")
    args = ap.parse_args()
    runs = []
    for i in range(args.repeat):
        before = load()
        wall, cpu, proc, peak = timed([args.command, "audit", args.table])
        if proc.returncode not in (0, 1):  # 1: findings
            sys.exit(f"audit failed ({proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}")
        last = (proc.stdout.strip().splitlines() or [""])[-1]
        runs.append({"wall": wall, "cpu": cpu, "rss": peak / 2**20})
        print(f"  run {i + 1}: {wall:.1f} s wall, CPU {cpu:.1f} s (tree), peak {peak / 2**20:,.0f} MiB (tree); "
              f"load {before} -> {load()}; {last[:100]}", flush=True)
    print(f"audit {args.table}: wall {spread([r['wall'] for r in runs])} s, CPU {spread([r['cpu'] for r in runs])} s, "
          f"peak {spread([r['rss'] for r in runs])} MiB (median (min-max) of {len(runs)})")


if __name__ == "__main__":
    main()
