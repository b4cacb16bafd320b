"""Benchmark: a Spark History Server directory of many applications, worker processes against one.

The directory is tests/history_dir.py's (real corpus event logs copied under application ids of
their own: plain, lz4, snappy, zstd, lzf, rolling directories, in-progress logs, two text logs).
Each round runs `commitsleuth ingest DIR` on a fresh store twice, in alternating order: with
COMMITSLEUTH_WORKERS=1 (one process, the baseline) and with the default workers (one per core,
at most 4). Prints each run's wall and CPU time (the process and its workers), the ratio of the
medians (one process / workers: the speed-up) with the min-max of the per-round ratios, the
events stored (equal both ways, or the run fails), and the machine's load before and after.

    python bench/ingest_many.py                    # 1,000 sources, 5 rounds
    python bench/ingest_many.py --sources 2000 --rounds 3
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
CLI = str(Path(sys.executable).with_name("commitsleuth"))


def run(directory: Path, db: Path, workers: str | None) -> tuple[float, float, str]:
    """(wall s, CPU s of the ingest and its workers, the CLI's summary line)."""
    db.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMMITSLEUTH_")}
    if workers:
        env["COMMITSLEUTH_WORKERS"] = workers
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run([CLI, "ingest", str(directory), "--db", str(db)], env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"ingest failed: {done.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout.splitlines()[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sources", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--work", default="/tmp/commitsleuth-bench-many")
    args = ap.parse_args()
    from history_dir import make_history_dir

    work = Path(args.work)
    directory = work / f"spark-events-{args.sources}"
    if not directory.exists():
        make_history_dir(directory.with_suffix(".tmp"), args.sources).rename(directory)
    size = sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())
    print(f"{args.sources} sources, {size / 1e6:.1f} MB on disk; {os.cpu_count()} cores")
    print("load before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    walls: dict[str, list[float]] = {"one": [], "workers": []}
    cpus: dict[str, list[float]] = {"one": [], "workers": []}
    ratios, summaries = [], set()
    for r in range(args.rounds):
        order = ("one", "workers") if r % 2 == 0 else ("workers", "one")
        got = {}
        for name in order:
            wall, cpu, summary = run(directory, work / f"{name}.duckdb", "1" if name == "one" else None)
            got[name] = wall
            walls[name].append(wall)
            cpus[name].append(cpu)
            summaries.add(summary)
            print(f"  round {r + 1} {name:<8} wall {wall:7.2f} s  cpu {cpu:7.2f} s  {summary}", flush=True)
        ratios.append(got["one"] / got["workers"])
    if len(summaries) != 1:
        raise SystemExit(f"the two ways stored different things: {summaries}")
    one, par = statistics.median(walls["one"]), statistics.median(walls["workers"])
    print(f"one process: wall median {one:.2f} s (min-max {min(walls['one']):.2f}-{max(walls['one']):.2f}), "
          f"cpu median {statistics.median(cpus['one']):.2f} s")
    print(f"workers:     wall median {par:.2f} s (min-max {min(walls['workers']):.2f}-{max(walls['workers']):.2f}), "
          f"cpu median {statistics.median(cpus['workers']):.2f} s")
    print(f"speed-up (ratio of the medians, one process / workers): {one / par:.2f}x "
          f"(per-round min-max {min(ratios):.2f}-{max(ratios):.2f})")
    print("load after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    for name in walls:
        (work / f"{name}.duckdb").unlink(missing_ok=True)
    shutil.rmtree(directory.with_suffix(".tmp"), ignore_errors=True)


if __name__ == "__main__":
    main()
