"""`timeline` (issue 32): file names kept whole, lanes named by what they are (never a bare
``0``), a table's events in time order across partitions, and the table found under the names
people type: ``db.table``, a bare table name, a location with or without its trailing slash."""

from __future__ import annotations

import pytest

from commitsleuth.report.terminal import path_lines
from commitsleuth.store import Store

from test_detector_cases import load_case

DIR = "hdfs://nn:8020/warehouse/tablespace/managed/hive/sales.db/orders/dt=2024-01-09"
UUID = "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b"
NAMES = [f"part-0000{i}-{UUID}.c000.snappy.parquet" for i in range(2)]

EVENTS = [
    # two files whose names differ only in their task number, deep in a long directory
    {"kind": "file", "ts": "2024-01-10 10:15:12", "table_name": "sales.orders", "location": DIR.rsplit("/", 1)[0],
     "partition_spec": "dt=2024-01-09", "path": f"{DIR}/{NAMES[1]}", "size": 10},
    {"kind": "file", "ts": "2024-01-10 10:15:10", "table_name": "sales.orders", "location": DIR.rsplit("/", 1)[0],
     "partition_spec": "dt=2024-01-09", "path": f"{DIR}/{NAMES[0]}", "size": 10},
    # another partition written between them: the table's timeline is in time order
    {"kind": "partition_add", "ts": "2024-01-10 10:15:11", "table_name": "sales.orders",
     "partition_spec": "dt=2024-01-08", "thread": "HiveServer2-Handler-Pool: Thread-42", "status": "ok"},
    # Spark SQL execution 0 of app-7 starts the write: its lane says so, not "0"
    {"kind": "query_start", "ts": "2024-01-10 10:15:09", "app_id": "app-7", "query_id": "0",
     "table_name": "sales.orders", "location": DIR.rsplit("/", 1)[0]},
]


@pytest.fixture()
def db(tmp_path):
    path = tmp_path / "t.duckdb"
    with Store(path) as store:
        load_case(store, tmp_path / "logs", {"events": EVENTS})
    return path


def test_a_long_path_keeps_its_file_name_whole():
    path = f"{DIR}/{NAMES[0]}"
    (line,) = path_lines(path, 92)
    assert line == "hdfs://nn:80…=2024-01-09/" + NAMES[0]
    assert len(line) == 92
    assert path_lines("/w/t/dt=1/000001_0", 92) == ["/w/t/dt=1/000001_0"]  # short: untouched
    # a file name longer than the line wraps: every character kept
    long = "/w/" + "x" * 150
    assert path_lines(long, 92) == [long[:92], long[92:]]


def test_table_timeline_keeps_names_labels_lanes_and_sorts_by_time(cli, db):
    r = cli("timeline", "sales.orders", "--db", db, "--no-color")
    assert r.exit_code == 0, r.err
    lines = r.out.splitlines()
    lanes = [line.split(" │")[0].rstrip() for line in lines if " │" in line]
    assert lanes == ["app-7/SQL execution 0", "(unknown actor)", "HiveServer2-Handler-Pool: Thread-42"]
    events = [line for line in lines if line[:1].isdigit()]
    assert [e.split()[2:4] for e in events] == [
        ["10:15:09", "query_start"], ["10:15:10", "file"], ["10:15:11", "partition_add"], ["10:15:12", "file"]]
    paths = [line.strip() for line in lines if line.strip().startswith("path ")]
    assert paths == [f"path hdfs://nn:80…=2024-01-09/{NAMES[0]}",
                     f"path hdfs://nn:80…=2024-01-09/{NAMES[1]}"]
    assert max(len(line) for line in lines) <= 100


@pytest.mark.parametrize("name", ["orders", f"{DIR.rsplit('/', 1)[0]}/"])
def test_the_table_by_the_names_people_type(cli, db, name):
    want = cli("timeline", "sales.orders", "dt=2024-01-09", "--db", db, "--no-color")
    r = cli("timeline", name, "dt=2024-01-09", "--db", db, "--no-color")
    assert r.exit_code == 0, r.err
    assert r.out.splitlines()[1:] == want.out.splitlines()[1:]  # the same events, under the title typed
    assert r.out.splitlines()[0] == f"dt=2024-01-09 in {name}"


def test_a_db_qualified_name_finds_a_table_the_logs_name_bare(cli, tmp_path):
    db = tmp_path / "b.duckdb"
    with Store(db) as store:
        load_case(store, tmp_path / "logs", {"events": [
            {"kind": "partition_add", "ts": "2024-01-10 10:15:11", "table_name": "orders",
             "partition_spec": "dt=1", "thread": "T1", "status": "ok"}]})
    assert cli("timeline", "sales.orders", "--db", db, "--no-color").exit_code == 0
    r = cli("timeline", "sales.nothing", "--db", db, "--no-color")
    assert (r.exit_code, r.err) == (2, "Error: no events for sales.nothing; known: orders\n")


def test_a_bare_name_two_databases_hold_is_an_error(cli, tmp_path):
    db = tmp_path / "c.duckdb"
    with Store(db) as store:
        load_case(store, tmp_path / "logs", {"events": [
            {"kind": "partition_add", "ts": "2024-01-10 10:15:11", "table_name": t, "partition_spec": "dt=1",
             "thread": "T1", "status": "ok"} for t in ("a.orders", "b.orders")]})
    r = cli("timeline", "orders", "--db", db, "--no-color")
    assert (r.exit_code, r.err) == (2, "Error: orders names 2 tables: a.orders, b.orders; give one as db.table\n")


def test_long_attempt_labels_keep_application_tail_stage_task_attempt_and_tid():
    """Two applications' attempts share a name: each lane says whose, then the stage, task,
    attempt and TID whole; only the host's end is cut to fit."""
    import datetime as dt

    from commitsleuth.forensics.timeline import TimelineRow
    from commitsleuth.report.lanes import build
    from commitsleuth.report.terminal import lanes_text

    name, t = "task 3.0 in stage 0.0 (TID 3)", dt.datetime(2021, 8, 10, 23, 27, 55)
    apps = ("application_1628109047826_1317105", "application_1628109047826_1317106")
    rows = [TimelineRow(i + 1, t, "file", name, f"/w/t/00000{i}_0", None, f"event {i + 1}", None) for i in range(2)]
    labels = {(a, name): f"{a}/stage 0.0/task 3 attempt 0 (TID 3) on ltx1-hcl12413.grid.linkedin.com" for a in apps}
    model = build(rows, apps={1: apps[0], 2: apps[1]}, labels=labels)
    lanes = [line.plain.split(" │")[0] for line in lanes_text(model, width=100, color=False) if " │" in line.plain]
    assert lanes == ["…1317105/stage 0.0/task 3 attempt 0 (TID 3) on lt…",
                     "…1317106/stage 0.0/task 3 attempt 0 (TID 3) on lt…"]


def test_a_thread_named_by_a_number_says_it_is_a_thread():
    import datetime as dt

    from commitsleuth.forensics.timeline import TimelineRow
    from commitsleuth.report.lanes import build

    t = dt.datetime(2024, 1, 1)
    (lane,) = build([TimelineRow(1, t, "load", "0", "/w/t/dt=1", None, "hive.log:3", None)]).lanes
    assert (lane.actor, lane.label) == ("0", "thread 0")


def test_a_location_the_logs_wrote_with_a_slash_found_without(cli, tmp_path):
    db = tmp_path / "s.duckdb"
    with Store(db) as store:
        load_case(store, tmp_path / "logs", {"events": [
            {"kind": "delete", "ts": "2024-01-10 10:15:11", "location": "s3a://lake/t/", "partition_spec": "dt=1",
             "path": "s3a://lake/t/dt=1/part-00000.parquet", "thread": "T1"}]})
    r = cli("timeline", "s3a://lake/t", "dt=1", "--db", db, "--no-color")
    assert r.exit_code == 0, r.err
    assert r.out.splitlines()[0] == "dt=1 in s3a://lake/t"
    assert "path s3a://lake/t/dt=1/part-00000.parquet" in r.out
