"""The Delta log read into columns (``delta_log.Rows``): what the store holds of each commit.
Tables written at test time by delta-rs; where a field is changed, the rest of the commit is
delta-rs's own."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pyarrow as pa
import pytest
from deltalake import CommitProperties, DeltaTable, write_deltalake

from commitsleuth.ingest import ingest
from commitsleuth.parsers.lakehouse import millis, read_table, table_root
from commitsleuth.store import Store

ROWS = pa.table({"dt": ["2024-01-01", "2024-01-02"], "v": [1, 2]})


def commits(table: Path) -> dict[int, dict]:
    root, fmt = table_root(str(table))
    log, events = read_table(root, fmt)
    assert log.problems == []
    return {e.detail["version"]: e for e in events if e.kind == "table_commit"}


def test_the_store_gives_back_every_line_of_every_commit(tmp_path):
    """Version 0 holds commitInfo, protocol, metaData and adds: each line is in the store, the
    commit's own on its commit event, each add's on its add."""
    table = tmp_path / "t"
    write_deltalake(str(table), ROWS, partition_by=["dt"])
    write_deltalake(str(table), ROWS, mode="append", partition_by=["dt"])
    DeltaTable(str(table)).delete("v = 1")
    with Store(tmp_path / "s.duckdb") as store:
        ingest(store, [str(table)])
        raws = [r[0] for r in store.con.execute("SELECT raw FROM events WHERE raw IS NOT NULL").fetchall()]
    lines: dict[str, dict[int, str]] = {}
    for raw in raws:
        for one in raw.split("\n"):
            name, _, rest = one.partition(" line ")
            number, _, text = rest.partition(": ")
            assert int(number) not in lines.setdefault(name, {})  # each line once
            lines[name][int(number)] = text
    for commit in sorted((table / "_delta_log").glob("*.json")):
        want = commit.read_text().splitlines()
        assert [lines[commit.name][n] for n in sorted(lines[commit.name])] == want
        assert sorted(lines[commit.name]) == list(range(1, len(want) + 1))


def _rewrite_commit_info(commit: Path, **fields) -> None:
    lines = commit.read_bytes().splitlines()
    for i, line in enumerate(lines):
        action = orjson.loads(line)
        if "commitInfo" in action:
            action["commitInfo"].update(fields)
            lines[i] = orjson.dumps(action)
    commit.write_bytes(b"\n".join(lines) + b"\n")


@pytest.mark.parametrize("stamp", ["soon", 10 ** 17, None])
def test_a_commit_time_that_is_no_time_falls_back_to_the_files(tmp_path, stamp):
    table = tmp_path / "t"
    write_deltalake(str(table), ROWS, partition_by=["dt"])
    write_deltalake(str(table), ROWS, mode="append", partition_by=["dt"])
    commit = table / "_delta_log" / f"{1:020d}.json"
    _rewrite_commit_info(commit, timestamp=stamp)
    os.utime(commit, (1_700_000_000.25, 1_700_000_000.25))
    found = commits(table)
    assert found[1].ts == millis(1_700_000_000_250)
    assert found[0].ts != found[1].ts  # the negative twin: delta-rs's own time is taken


def test_a_commit_time_is_the_commits(tmp_path):
    table = tmp_path / "t"
    write_deltalake(str(table), ROWS, partition_by=["dt"])
    commit = table / "_delta_log" / f"{0:020d}.json"
    _rewrite_commit_info(commit, timestamp=1_600_000_000_123)
    os.utime(commit, (1_700_000_000, 1_700_000_000))
    found = commits(table)[0]
    assert found.ts == millis(1_600_000_000_123)
    root, fmt = table_root(str(table))
    adds = [e for e in read_table(root, fmt)[1] if e.kind == "table_add"]
    assert adds and all(e.ts == found.ts for e in adds)
    assert all(e.detail["modified"] == str(millis(e_mod)) for e, e_mod in
               zip(adds, [orjson.loads(line)["add"]["modificationTime"] for line in commit.read_bytes().splitlines()
                          if b'"add"' in line]))


@pytest.mark.parametrize("metadata, app_id", [
    ({"userMetadata": "nightly run of application_1700000000000_0042"}, "application_1700000000000_0042"),
    ({"spark.app.id": "local-1700000000000"}, "local-1700000000000"),
    ({"userMetadata": "apple-20240101000000-0001 and local-17"}, None),  # no application id in it
])
def test_the_application_a_commit_names(tmp_path, metadata, app_id):
    table = tmp_path / "t"
    write_deltalake(str(table), ROWS, partition_by=["dt"], commit_properties=CommitProperties(custom_metadata=metadata))
    root, fmt = table_root(str(table))
    _, events = read_table(root, fmt)
    assert {e.app_id for e in events} == {app_id}
