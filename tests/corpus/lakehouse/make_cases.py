"""Write the lakehouse detectors' YAML cases (forensics/detectors/cases/table_*.yml) from tables
delta-rs (``deltalake``) writes here and now: every ``_delta_log`` line in them is the writer's
own output, copied verbatim; only the listing (``table_file`` events) is stated as events.

    .venv/bin/python tests/corpus/lakehouse/make_cases.py
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import yaml
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake
from deltalake.transaction import AddAction

CASES = Path(__file__).resolve().parents[3] / "forensics" / "detectors" / "cases"
ROWS = pa.table({"dt": ["2024-01-01", "2024-01-02"], "v": [1, 2]})


def log_files(table: Path, drop: tuple[int, ...] = ()) -> dict[str, str]:
    return {f"_delta_log/{p.name}": p.read_text() for p in sorted((table / "_delta_log").glob("*.json"))
            if int(p.name[:20]) not in drop}


def commit_ts(table: Path, version: int) -> dt.datetime:
    info = json.loads((table / "_delta_log" / f"{version:020d}.json").read_text().splitlines()[0])["commitInfo"]
    return dt.datetime.fromtimestamp(info["timestamp"] / 1000, dt.timezone.utc).replace(tzinfo=None)


def listing(table: Path, when: dt.datetime, skip=(), extra=()) -> list[dict]:
    out = []
    for p in sorted(table.rglob("*.parquet")):
        rel = p.relative_to(table).as_posix()
        if rel in skip:
            continue
        out.append({"kind": "table_file", "ts": str(when), "path": "{root}/" + rel, "size": p.stat().st_size})
    for rel, ts in extra:
        out.append({"kind": "table_file", "ts": str(ts), "path": "{root}/" + rel, "size": 484})
    return out


def live(table: Path) -> list[str]:
    return sorted(pa.table(DeltaTable(str(table)).get_add_actions(flatten=True)).column("path").to_pylist())


def _block(dumper, text: str):
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


yaml.SafeDumper.add_representer(str, _block)


def twins(*tasks) -> list[dict]:
    """``table_add`` events of one Iceberg append by Spark, whose data files are named
    partitionId-TID-operationId-fileCount (SparkWrite's OutputFileFactory), one per task."""
    op = "3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
    return [{"kind": "table_add", "ts": "2024-01-01 10:00:00", "location": "{root}", "table_name": "t",
             "path": f"{{root}}/data/dt=2024-01-01/{part}-{tid}-{op}-00001.parquet", "partition_spec": "dt=2024-01-01",
             "file_name": f"{part}-{tid}-{op}-00001.parquet", "app_id": "app-20240101000000-0001",
             "detail": {"format": "iceberg-metadata", "version": 1, "tid": tid}} for part, tid in tasks]


def s3_put(role: str, request: str, time: str, key: str = "warehouse/orders/_delta_log/00000000000000000003.json") -> str:
    """One S3 server access log line (the documented field order, as parsers/formats/s3_access.py's
    samples) of a PUT of ``key`` in bucket ``lake``."""
    return (f'b1e2c3d4 lake [01/Mar/2023:{time} +0000] 10.0.0.21 arn:aws:iam::123456789012:role/{role} {request} '
            f'REST.PUT.OBJECT {key} "PUT /{key} HTTP/1.1" 200 - - 912 412 38 "-" "delta-rs/1.6.6" - HOSTID= SigV4 '
            'ECDHE-RSA-AES128-GCM-SHA256 AuthHeader lake.s3.eu-west-1.amazonaws.com TLSv1.2 - -\n')


# CS205 stamps stated as the events the delta-log and iceberg-metadata readers make of them (txn
# from a commit's txn action; streaming from an Iceberg snapshot summary's
# spark.sql.streaming.queryId/epochId): no Spark streaming sink runs here.
QUERY = '0f1e2d3c-4b5a-4968-8776-655443322110'


def stamped(second: int, fmt: str, version: int, status: str = 'completed', location: str = '{root}', **stamp) -> dict:
    """A table_commit event as the readers make it, at 10:00:0<second>, carrying ``stamp``
    (``streaming=`` or ``txn=``) in its detail."""
    return {'kind': 'table_commit', 'ts': f'2024-01-01 10:00:{second:02d}', 'location': location,
            'status': status, 'detail': {'format': fmt, 'version': str(version), **stamp}}


def epoch(n):
    return {'query_id': QUERY, 'epoch_id': n}


def txn(app_id, version):
    return [{'app_id': app_id, 'version': version}]


STATED_STAMPS = [
    {'name': 'Iceberg - one streaming (queryId, epochId) on two snapshots',
     'events': [stamped(1, 'iceberg-metadata', 1, streaming=epoch(5)),
                stamped(2, 'iceberg-metadata', 2, streaming=epoch(5))],
     'expect': [{'summary': f'carry the same streaming (queryId, epochId) ({QUERY}, 5)'}]},
    {'name': "negative - Iceberg - one streaming query, epochs 5 and 6; a second snapshot's summary with no epoch",
     'events': [stamped(1, 'iceberg-metadata', 1, streaming=epoch(5)),
                stamped(2, 'iceberg-metadata', 2, streaming=epoch(6)),
                stamped(3, 'iceberg-metadata', 3, streaming=epoch(None)),
                stamped(4, 'iceberg-metadata', 4, streaming=epoch(None))],
     'expect': []},
    {'name': 'negative - one stamp on a completed commit and on a staged commit file never published',
     'events': [stamped(1, 'delta-log', 1, txn=txn('query-7', 2)),
                stamped(2, 'delta-log', 2, 'uncommitted', txn=txn('query-7', 2)),
                stamped(3, 'iceberg-metadata', 3, streaming=epoch(5)),
                stamped(4, 'iceberg-metadata', 4, 'uncommitted', streaming=epoch(5))],
     'expect': []},
    {'name': "negative - two applications' txns of one version, one txn in two tables, and txns with no appId",
     'events': [stamped(1, 'delta-log', 1, txn=txn('query-7', 2)),
                stamped(2, 'delta-log', 2, txn=txn('query-8', 2)),
                stamped(3, 'delta-log', 1, location='{root}/../other', txn=txn('query-7', 2)),
                stamped(4, 'delta-log', 3, txn=txn(None, 3)),
                stamped(5, 'delta-log', 4, txn=txn(None, 3))],
     'expect': []},
]


def dump(name: str, code: str, title: str, cases: list[dict]) -> None:
    header = (f"# Cases for {code} {title}. Generated by tests/corpus/lakehouse/make_cases.py: every\n"
              f"# _delta_log line was written by deltalake (delta-rs) and is copied verbatim.\n")
    (CASES / f"{name}.yml").write_text(header + yaml.safe_dump({"code": code, "cases": cases}, sort_keys=False,
                                                               allow_unicode=True, width=10_000))


def main(work: Path) -> None:
    # CS201: a file in a partition no version references, older than the latest commit
    t = work / "orphan"
    write_deltalake(str(t), ROWS, partition_by=["dt"])
    write_deltalake(str(t), ROWS, mode="append", partition_by=["dt"])
    stray = "dt=2024-01-03/part-00000-6a0c1f61-5a4b-4c1e-9f57-2d1b7c0e9a11-c000.snappy.parquet"
    before, after = commit_ts(t, 1) - dt.timedelta(seconds=30), commit_ts(t, 1) + dt.timedelta(seconds=30)
    dump("table_orphan", "CS201", "table-orphan-file", [
        {"name": "a killed writer's file no version references, written before the latest commit",
         "files": log_files(t), "events": listing(t, commit_ts(t, 1), extra=[(stray, before)]),
         "expect": [{"partition": "dt=2024-01-03", "summary": "1 file in dt=2024-01-03 no version of the table's log references"}]},
        {"name": "negative - an unreferenced file newer than the latest commit is a write in progress",
         "files": log_files(t), "events": listing(t, commit_ts(t, 1), extra=[(stray, after)]), "expect": []},
        {"name": "negative - every listed file is referenced",
         "files": log_files(t), "events": listing(t, commit_ts(t, 1)), "expect": []},
    ])

    # CS202: delta-rs' transaction API re-adding a live file (a retried commit)
    t = work / "dup"
    write_deltalake(str(t), ROWS, partition_by=["dt"])
    table = DeltaTable(str(t))
    first = pa.table(table.get_add_actions(flatten=False)).to_pylist()[0]
    table.create_write_transaction([AddAction(first["path"], first["size_bytes"], first["partition"],
                                              first["modification_time"], True, '{"numRecords":1}')],
                                   mode="append", schema=table.schema(), partition_by=["dt"])
    o = work / "optimize"
    for mode in ("error", "append", "append"):
        write_deltalake(str(o), ROWS, mode=mode, partition_by=["dt"])
    DeltaTable(str(o)).optimize.compact()
    dump("table_duplicate", "CS202", "table-duplicate-file", [
        {"name": "a commit re-adds a file that is live", "files": log_files(t),
         "expect": [{"partition": "dt=" + first["partition"]["dt"], "summary": "version 1 adds ",
                     "detail": {"versions": [0, 1], "how": "while live"}}]},
        {"name": "negative - OPTIMIZE removes files and adds new ones", "files": log_files(o), "expect": []},
        {"name": "speculative twins: two attempts (TIDs) of one Spark task both live in an Iceberg snapshot",
         "events": twins(("00003", 7), ("00003", 12)),
         "expect": [{"partition": "dt=2024-01-01", "actors": ["TID 12", "TID 7", "app-20240101000000-0001"],
                     "summary": "files of two attempts of one Spark task are both live",
                     "detail": {"how": "twins"}}]},
        {"name": "speculative twins named by their attempts when the event log holds them",
         "events": twins(("00003", 7), ("00003", 12)) + [
             {"kind": "attempt_end", "ts": "2024-01-01 09:59:59", "app_id": "app-20240101000000-0001", "stage_id": 1,
              "stage_attempt": 0, "task_id": "1.3", "attempt_id": f"task 3.{n} in stage 1.0 (TID {tid})",
              "attempt_no": n, "status": "success" if n == 0 else "killed", "detail": {"tid": tid}}
             for n, tid in ((0, 7), (1, 12))],
         "expect": [{"actors": ["app-20240101000000-0001", "app-20240101000000-0001/stage 1.0/task 3 attempt 0 (TID 7)",
                                "app-20240101000000-0001/stage 1.0/task 3 attempt 1 (TID 12)"], "detail": {"how": "twins"}}]},
        {"name": "negative - two tasks' files (two Spark partitions) in one snapshot",
         "events": twins(("00003", 7), ("00004", 8)), "expect": []},
    ])

    # CS203: a live file absent from the listing
    t = work / "missing"
    write_deltalake(str(t), ROWS, partition_by=["dt"])
    gone = [p for p in live(t) if p.startswith("dt=2024-01-02/")][0]
    dump("table_missing", "CS203", "table-missing-file", [
        {"name": "a file the current version references is not on storage", "files": log_files(t),
         "events": listing(t, commit_ts(t, 0), skip=(gone,)),
         "expect": [{"partition": "dt=2024-01-02", "summary": "is missing from dt=2024-01-02"}]},
        {"name": "negative - every live file is listed", "files": log_files(t),
         "events": listing(t, commit_ts(t, 0)), "expect": []},
        {"name": "negative - without a listing nothing is judged missing", "files": log_files(t), "expect": []},
        # the storage's own delete records (an HDFS audit log's delete, as parsers/formats/hdfs_audit.py
        # makes it) name who deleted it: the file itself, or a directory above it; its writer's create
        # and another file's delete name no one
        {"name": "a missing file whose delete the storage recorded names who deleted it",
         "files": log_files(t), "events": listing(t, commit_ts(t, 0), skip=(gone,)) + [
             {"kind": "file_create", "ts": str(commit_ts(t, 0)), "thread": "etl from 10.0.0.21", "path": "{root}/" + gone},
             {"kind": "delete", "ts": str(commit_ts(t, 0) + dt.timedelta(minutes=5)), "thread": "jdoe from 10.20.9.44",
              "path": "{root}/" + gone},
             {"kind": "delete", "ts": str(commit_ts(t, 0) + dt.timedelta(minutes=5)), "thread": "etl from 10.0.0.21",
              "path": "{root}/dt=2024-01-01/part-00000-00000000-0000-4000-8000-000000000000-c000.snappy.parquet"}],
         "expect": [{"partition": "dt=2024-01-02", "actors": ["jdoe from 10.20.9.44"]}]},
        {"name": "a missing file whose partition directory the storage recorded deleted",
         "files": log_files(t), "events": listing(t, commit_ts(t, 0), skip=(gone,)) + [
             {"kind": "delete", "ts": str(commit_ts(t, 0) + dt.timedelta(minutes=5)), "thread": "jdoe from 10.20.9.44",
              "path": "{root}/dt=2024-01-02"}],
         "expect": [{"partition": "dt=2024-01-02", "actors": ["jdoe from 10.20.9.44"]}]},
    ])

    # CS204: a gap in the chain; a stale overwrite; healthy retried appends
    t = work / "gap"
    for mode in ("error", "append", "append"):
        write_deltalake(str(t), ROWS, mode=mode, partition_by=["dt"])
    s = work / "stale"
    write_deltalake(str(s), ROWS, partition_by=["dt"])
    handle = DeltaTable(str(s))
    write_deltalake(str(s), ROWS, mode="append", partition_by=["dt"])
    write_deltalake(handle, ROWS, mode="overwrite", partition_by=["dt"])
    w = work / "overwrite"
    for mode in ("error", "append", "overwrite"):
        write_deltalake(str(w), ROWS, mode=mode, partition_by=["dt"])
    dump("table_lost_commit", "CS204", "table-lost-commit", [
        {"name": "version 1 is absent between versions 0 and 2", "files": log_files(t, drop=(1,)),
         "expect": [{"summary": "version 1 is missing from the log", "detail": {"how": "gap"}}]},
        {"name": "a full overwrite through a stale handle leaves a concurrent append live",
         "files": log_files(s), "expect": [{"partition": f"dt={d}", "summary": f"full overwrite at version 2 left 1 file live in dt={d} that version 1 added",
                                             "detail": {"how": "stale overwrite"}} for d in ("2024-01-01", "2024-01-02")]},
        {"name": "negative - a full overwrite that removes every file", "files": log_files(w), "expect": []},
        {"name": "negative - every version present", "files": log_files(t), "expect": []},
        {"name": "two writers PUT one commit file on S3 (no put-if-absent): the S3 access log",
         "files": {"s3-access.log": s3_put("etl", "7QW1Z2X3C4V5B6N7", "10:00:05") + s3_put("backfill", "8AB2C3D4E5F6G7H8", "10:00:06")},
         "expect": [{"summary": "00000000000000000003.json of s3a://lake/warehouse/orders was written twice",
                     "actors": ["arn:aws:iam::123456789012:role/backfill from 10.0.0.21",
                                "arn:aws:iam::123456789012:role/etl from 10.0.0.21"],
                     "detail": {"how": "written twice"}}]},
        {"name": "negative - one PUT of each commit file", "files": {"s3-access.log": s3_put("etl", "7QW1Z2X3C4V5B6N7", "10:00:05")},
         "expect": []},
    ])

    # CS205: one txn (appId, version) on two commits
    t = work / "replay"
    n = work / "idempotent"
    for table_dir, versions in ((t, (1, 2, 2)), (n, (1, 2, 3))):
        for v in versions:
            write_deltalake(str(table_dir), ROWS, mode="append", partition_by=["dt"],
                            commit_properties=CommitProperties(app_transactions=[Transaction("query-7", v)]))
    dump("table_replayed_batch", "CS205", "table-replayed-batch", [
        {"name": "a streaming batch's txn committed twice", "files": log_files(t),
         "expect": [{"summary": "versions 1 and 2 of", "actors": ["query-7"],
                     "detail": {"stamp": ["query-7", "2"]}}]},
        {"name": "negative - each batch's txn once", "files": log_files(n), "expect": []},
    ] + STATED_STAMPS)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        main(Path(tmp))
    sys.exit(0)
