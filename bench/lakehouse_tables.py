"""Big real Delta and Iceberg tables for bench/lakehouse.py, built in minutes, not hours.

Writing 100k Delta versions through delta-rs one transaction at a time takes hours here (1,000
took about 7 min), so the log is grown from delta-rs's own commits:

- **Delta.** delta-rs writes the table (version 0, ``write_deltalake``), an append (version 1)
  and a DELETE (version 2). Versions 3 … N-1 repeat those two commits' JSON exactly, with what
  must change per version changed: each append adds a new file (its own UUID name, a hard link
  of the real Parquet file version 1 wrote, under one of ten ``dt=`` partitions), every tenth
  version is a DELETE whose ``remove`` names the file added five versions before (every remove
  distinct, every path added once), timestamps rise by 10 ms and ``readVersion`` is the
  previous version. Every ``--checkpoint-every`` versions and at the last multiple of 100 (the
  interval delta-rs uses by default) delta-rs itself writes the checkpoint and
  ``_last_checkpoint`` (``DeltaTable.create_checkpoint``), so the newest checkpoint is at most 99
  versions behind the head, as on a real table. ``verify_delta`` opens the result with delta-rs.
- **Iceberg.** pyiceberg creates the table (SqlCatalog on sqlite, identity partition on ``dt``),
  builds one ``DataFile`` per partition from a real Parquet file with its own
  ``parquet_file_to_data_file`` and fast-appends copies of it under new names (hard links of
  that file), ``--per-commit`` files a snapshot: pyiceberg's own manifest and manifest-list
  writers write every Avro file. ``verify_iceberg`` counts the entries with pyiceberg.

Nothing here is kept in git: the tables are built at bench time under a temporary directory
(or ``--keep DIR``).

    .venv/bin/python bench/lakehouse_tables.py --versions 100000 --entries 1000000 --keep /tmp/lake
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import time
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

LOG = "_delta_log"
PARTITIONS = 10


def _day(i: int) -> str:
    return (dt.date(2024, 1, 1) + dt.timedelta(days=i % PARTITIONS)).isoformat()


class _Links:
    """Hard links of one real file: a fresh copy (outside the table) every 50,000 links, under
    the file system's limit of links per inode."""

    def __init__(self, real: Path, spare: Path):
        self.real, self.spare, self.n, self.source = real, spare, 0, real

    def __call__(self, target: Path) -> None:
        if self.n % 50_000 == 49_999:
            self.spare.mkdir(parents=True, exist_ok=True)
            self.source = self.spare / f"{self.real.stem}-{self.n}{self.real.suffix}"
            shutil.copyfile(self.real, self.source)
        os.link(self.source, target)
        self.n += 1


def _lines(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def delta_table(root: Path, versions: int, checkpoint_every: int = 10_000) -> Path:
    """A real delta-rs table of ``versions`` versions (see the module docstring)."""
    from deltalake import DeltaTable, write_deltalake

    table = root / "delta"
    rows = pa.table({"dt": [_day(0)], "v": [1]})
    write_deltalake(str(table), rows, partition_by=["dt"])
    write_deltalake(str(table), rows, partition_by=["dt"], mode="append")
    DeltaTable(str(table)).delete("v = 1")  # version 2: delta-rs's own DELETE commit
    log = table / LOG
    append, delete = _lines(log / f"{1:020d}.json"), _lines(log / f"{2:020d}.json")
    append_info, add = append[0]["commitInfo"], append[1]["add"]
    delete_info, remove = delete[0]["commitInfo"], delete[1]["remove"]
    link = _Links(table / add["path"], root / "spare")
    t0 = append_info["timestamp"]
    added: dict[int, tuple[str, str]] = {}
    checkpoints = {*range(checkpoint_every, versions, checkpoint_every), (versions - 1) // 100 * 100}
    for v in range(3, versions):
        ts = t0 + v * 10
        if v % 10 == 0 and v - 5 in added:
            path, day = added.pop(v - 5)
            info = {**delete_info, "timestamp": ts, "readVersion": v - 1,
                    "operationParameters": {"predicate": f"v = {v - 5}"}}
            action = {"remove": {**remove, "path": path, "deletionTimestamp": ts, "partitionValues": {"dt": day}}}
        else:
            day = _day(v // 1000)
            name = f"part-00000-{v:08x}-0000-4000-8000-{v:012x}-c000.snappy.parquet"
            path = f"dt={day}/{name}"
            file = table / path
            file.parent.mkdir(exist_ok=True)
            link(file)
            added[v] = (path, day)
            info = {**append_info, "timestamp": ts}
            action = {"add": {**add, "path": path, "partitionValues": {"dt": day}, "modificationTime": ts}}
        (log / f"{v:020d}.json").write_bytes(orjson.dumps({"commitInfo": info}) + b"\n" + orjson.dumps(action) + b"\n")
        if v in checkpoints:
            DeltaTable(str(table)).create_checkpoint()
    return table


def verify_delta(table: Path, versions: int) -> int:
    from deltalake import DeltaTable

    t = DeltaTable(str(table))
    assert t.version() == versions - 1, (t.version(), versions)
    return t.get_add_actions().num_rows


def iceberg_table(root: Path, entries: int, per_commit: int = 100_000):
    """A real pyiceberg table of ``entries`` manifest entries (see the module docstring)."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.io.pyarrow import parquet_file_to_data_file
    from pyiceberg.manifest import DataFile

    cat = SqlCatalog("b", uri=f"sqlite:///{root}/cat.db", warehouse=f"file://{root}/wh")
    cat.create_namespace("db")
    schema = pa.schema([("dt", pa.string()), ("v", pa.int64())])
    tbl = cat.create_table("db.t", schema=schema)
    with tbl.update_spec() as spec:
        spec.add_identity("dt")
    data_root = Path(tbl.metadata.location.removeprefix("file://")) / "data"
    templates = []
    for p in range(PARTITIONS):
        real = root / "templates" / f"dt={_day(p)}.parquet"  # outside the table: no orphan
        real.parent.mkdir(parents=True, exist_ok=True)
        (data_root / f"dt={_day(p)}").mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"dt": [_day(p)], "v": [p]}, schema=schema), real)
        templates.append((real, _Links(real, root / "spare"),
                          parquet_file_to_data_file(tbl.io, tbl.metadata, f"file://{real}")))
    done = 0
    while done < entries:
        n = min(per_commit, entries - done)
        with tbl.transaction() as txn:
            with txn.update_snapshot().fast_append() as append:
                for i in range(done, done + n):
                    real, link, template = templates[(i // 1000) % PARTITIONS]
                    file = data_root / f"dt={_day((i // 1000) % PARTITIONS)}" / f"{i % 100_000:05d}-{i}-0b0c0d0e-0000-4000-8000-{i:012x}-00001.parquet"
                    link(file)
                    copy = DataFile(*template._data)
                    copy._data[1] = f"file://{file}"
                    copy.spec_id = tbl.metadata.default_spec_id
                    append.append_data_file(copy)
        done += n
    return tbl


def verify_iceberg(tbl, entries: int) -> int:
    """pyiceberg's count of the table's entries: its reading of the manifest list's counts, and
    of every entry (``inspect.entries()``) up to 100k entries (at 1M it takes longer than the
    build: bench/lakehouse.py times it)."""
    manifests = tbl.current_snapshot().manifests(tbl.io)
    n = sum((m.added_files_count or 0) + (m.existing_files_count or 0) for m in manifests)
    if entries <= 100_000:
        n = tbl.inspect.entries().num_rows
    assert n == entries, (n, entries)
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--versions", type=int, default=100_000)
    ap.add_argument("--entries", type=int, default=1_000_000)
    ap.add_argument("--checkpoint-every", type=int, default=10_000)
    ap.add_argument("--per-commit", type=int, default=100_000)
    ap.add_argument("--keep", required=True, help="directory to build the tables in (must not exist)")
    args = ap.parse_args()
    root = Path(args.keep)
    root.mkdir(parents=True)
    if args.versions:
        t0 = time.perf_counter()
        table = delta_table(root, args.versions, args.checkpoint_every)
        print(f"delta: {args.versions} versions in {time.perf_counter() - t0:.1f} s, "
              f"delta-rs reads {verify_delta(table, args.versions)} live files: {table}")
    if args.entries:
        t0 = time.perf_counter()
        tbl = iceberg_table(root, args.entries, args.per_commit)
        print(f"iceberg: {args.entries} entries in {time.perf_counter() - t0:.1f} s, pyiceberg reads "
              f"{verify_iceberg(tbl, args.entries)}: {tbl.metadata.location.removeprefix('file://')}")


if __name__ == "__main__":
    main()
