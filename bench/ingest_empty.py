"""Benchmark: a directory of many empty files (issue 34: 100,000 took 7 minutes; the target is
30 s). Each empty file is a ``skipped`` source, written once; the second run finds them all
``unchanged``. The baseline, in the same run, is the same directory's walk alone (``expand_paths``,
which every ingest does first), so a loaded machine shows as a slower baseline too.

Prints wall and CPU time (the ingest process) of the first and the second ingest, the sources
rows written (one per file, or the run fails), and the machine's load before and after.

    python bench/ingest_empty.py                  # 100,000 files
    python bench/ingest_empty.py --files 20000
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

CLI = str(Path(sys.executable).with_name("commitsleuth"))


def timed(args: list[str]) -> tuple[float, float, str]:
    """(wall s, CPU s, first output line) of one CLI run."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMMITSLEUTH_")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run([CLI, *args], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{args} failed: {done.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout.splitlines()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=100_000)
    n = parser.parse_args().files
    with tempfile.TemporaryDirectory(prefix="cs-empty-") as tmp:
        directory = Path(tmp, "empty")
        directory.mkdir()
        for i in range(n):
            os.close(os.open(directory / f"f{i:07d}.log", os.O_CREAT | os.O_WRONLY, 0o644))
        print(f"load before: {os.getloadavg()[0]:.2f}")
        began = time.perf_counter()
        from commitsleuth.ingest import expand_paths

        walked = len(expand_paths([str(directory)]))
        print(f"baseline, the walk alone: {time.perf_counter() - began:.2f} s wall ({walked} files)")
        db = Path(tmp, "store.duckdb")
        for label in ("first ingest", "second ingest"):
            wall, cpu, line = timed(["ingest", str(directory), "--db", str(db)])
            print(f"{label}: {wall:.2f} s wall, {cpu:.2f} s CPU: {line}")
        with duckdb.connect(str(db), read_only=True) as con:
            rows = con.execute("SELECT count(*) FROM sources").fetchone()[0]
        if rows != n:
            sys.exit(f"{rows} sources rows for {n} files")
        print(f"sources rows: {rows}; load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
