"""Ingest of a table log against the table library's own reading of the same table, same run.

    .venv/bin/python bench/lakehouse.py --versions 2000 --entries 100000

Delta: a table of ``--versions`` commits written by delta-rs (one data file added per commit
through its transaction API, a checkpoint every 100 versions), read by commitsleuth's ingest
(every JSON commit and the checkpoints) and by ``DeltaTable(...).get_add_actions()``.
Iceberg: a pyiceberg table of ``--entries`` manifest entries (``add_files`` of one Parquet
file under many names), read by the ingest (every snapshot's manifests) and by ``table.inspect.entries()`` (the current
snapshot's, which hold every entry of an append-only table).
Each side runs ``--repeat`` times; the medians and peak RSS are printed, with the ratio.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from commitsleuth.parsers.lakehouse import record_table, table_root
from commitsleuth.store import Store

ROWS = pa.table({"dt": ["2024-01-01"], "v": [1]})


def delta_table(root: Path, versions: int) -> Path:
    from deltalake import DeltaTable, write_deltalake
    from deltalake.transaction import AddAction

    table = root / "delta"
    write_deltalake(str(table), ROWS, partition_by=["dt"])
    dt = DeltaTable(str(table))
    first = pa.table(dt.get_add_actions(flatten=False)).to_pylist()[0]
    schema = dt.schema()
    for v in range(1, versions):
        path = first["path"].replace(".snappy.parquet", f"-{v}.snappy.parquet")
        dt.create_write_transaction([AddAction(path, first["size_bytes"], first["partition"],
                                               first["modification_time"], True, '{"numRecords":1}')],
                                    mode="append", schema=schema, partition_by=["dt"])
        if v % 100 == 0:
            dt.create_checkpoint()
    return table


def iceberg_table(root: Path, entries: int, per_commit: int = 10_000):
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("b", uri=f"sqlite:///{root}/cat.db", warehouse=f"file://{root}/wh")
    cat.create_namespace("db")
    tbl = cat.create_table("db.t", schema=ROWS.schema)
    data = root / "data.parquet"
    pq.write_table(ROWS, data)
    done = 0
    while done < entries:
        n = min(per_commit, entries - done)
        names = []
        for i in range(done, done + n):  # one real Parquet file under many names
            p = root / "files" / f"{i // 10_000:04d}" / f"f{i}.parquet"
            p.parent.mkdir(parents=True, exist_ok=True)
            if not p.exists():
                p.symlink_to(data)
            names.append(str(p))
        tbl.add_files(names, check_duplicate_files=False)
        done += n
    return tbl


def timed(fn, repeat: int, setup=None) -> float:
    """Median wall time of ``fn(setup())`` (the setup, a fresh store, not timed)."""
    times = []
    for _ in range(repeat):
        arg = setup() if setup else None
        t0 = time.perf_counter()
        fn(arg) if setup else fn()
        times.append(time.perf_counter() - t0)
        if hasattr(arg, "close"):
            arg.close()
    return statistics.median(times)


def fresh_store(work: Path):
    """An empty store (its schema migration is a fixed cost of every ingest, not of the log)."""
    return lambda: Store(work / f"b{time.perf_counter_ns()}.duckdb")


def ingest_once(table: str, store: Store) -> int:
    root, fmt = table_root(table)
    result, problems = record_table(store, root, fmt)
    assert not problems, problems
    return result.events


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--versions", type=int, default=2000)
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        delta = delta_table(work, args.versions)
        print(f"delta: {args.versions} versions written in {time.perf_counter() - t0:.1f} s")
        from deltalake import DeltaTable

        ours = timed(lambda store: ingest_once(str(delta), store), args.repeat, fresh_store(work))
        theirs = timed(lambda: DeltaTable(str(delta)).get_add_actions(), args.repeat)
        print(f"delta ingest {ours:.3f} s, delta-rs get_add_actions {theirs:.3f} s, ratio {ours / theirs:.1f}")
        t0 = time.perf_counter()
        tbl = iceberg_table(work, args.entries)
        print(f"iceberg: {args.entries} entries written in {time.perf_counter() - t0:.1f} s")
        root = tbl.metadata.location.removeprefix("file://")

        def entries():  # the current snapshot's entries: every file of an append-only table
            return tbl.inspect.entries().num_rows

        ours = timed(lambda store: ingest_once(root, store), args.repeat, fresh_store(work))
        theirs = timed(entries, args.repeat)
        print(f"iceberg ingest {ours:.3f} s, pyiceberg inspect.entries {theirs:.3f} s, ratio {ours / theirs:.1f}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB (both sides, one process)")


if __name__ == "__main__":
    main()
