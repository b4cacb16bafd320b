"""`analyze --format json` names each actor as an object (issue 12): one fixture per kind, exact JSON.

The text output is unchanged: `actors` keeps the labels, `actor_objects` adds one object per
label in the same order, and the objects are stored with the finding (findings.actor_objects).
"""

from __future__ import annotations

import json

import duckdb

from commitsleuth.store import Store

from test_detector_cases import load_case, scenario

# A Spark application's listing holds a file per attempt of task 1 (foreachPartition writing
# 000001_<attempt>): the CS101 finding's actors are those two Spark attempts.
SPARK_EVENTS = [
    {"kind": "attempt_end", "ts": "2026-11-21 10:00:09", "app_id": "app-1", "stage_id": 1, "stage_attempt": 0,
     "task_id": "1.1", "attempt_id": "task 1.0 in stage 1.0 (TID 3)", "attempt_no": 0, "speculative": False,
     "executor_id": "0", "host": "127.0.0.2", "status": "killed",
     "detail": {"tid": 3, "reason": "TaskKilled", "launch_time": 1795255200000}},
    {"kind": "attempt_end", "ts": "2026-11-21 10:00:05", "app_id": "app-1", "stage_id": 1, "stage_attempt": 0,
     "task_id": "1.1", "attempt_id": "task 1.1 in stage 1.0 (TID 5)", "attempt_no": 1, "speculative": True,
     "executor_id": "1", "host": "127.0.0.3", "status": "success",
     "detail": {"tid": 5, "reason": "Success", "launch_time": 1795255203000}},
    {"kind": "job_start", "ts": "2026-11-21 10:00:00", "app_id": "app-1", "job_id": "2", "query_id": "0",
     "detail": {"stages": [1]}},
    {"kind": "file", "ts": "2026-11-21 10:00:04", "app_id": "app-1", "path": "file:///w/side/dt=2026-11-21/000001_0.stage1", "size": 10},
    {"kind": "file", "ts": "2026-11-21 10:00:04", "app_id": "app-1", "path": "file:///w/side/dt=2026-11-21/000001_1.stage1", "size": 10},
]

# An HDFS audit delete of a registered partition (CS107): the actor is the storage principal.
STORAGE_EVENTS = [
    {"kind": "partition_add", "ts": "2020-05-01 01:00:00", "thread": "T1", "table_name": "db.t",
     "partition_spec": "dt=1", "path": "hdfs://nn/w/db.db/t/dt=1", "status": "ok"},
    {"kind": "delete", "ts": "2020-05-01 02:00:00", "thread": "bob from 10.0.0.9", "host": "10.0.0.9",
     "path": "/w/db.db/t/dt=1",
     "detail": {"storage": "hdfs", "user": "bob", "proxy": "hive", "ip": "10.0.0.9", "cmd": "delete", "how": "delete"}},
]


def _store(tmp_path, case: dict):
    db = tmp_path / "a.duckdb"
    with Store(db) as store:
        load_case(store, tmp_path / "logs", case)
    return db


def _findings(cli, db, code: str) -> list[dict]:
    r = cli("analyze", "--format", "json", "--detector", code, "--db", db)
    assert r.exit_code == 1, r.err
    return json.loads(r.out)


def test_spark_attempts_are_objects_with_their_fields(cli, tmp_path):
    db = _store(tmp_path, {"events": SPARK_EVENTS})
    (f,) = _findings(cli, db, "CS101")
    # one name per attempt (issue 32): the label, the name the log gave kept as attempt_name
    first, copy = ("app-1/stage 1.0/task 1 attempt 0 (TID 3) on 127.0.0.2",
                   "app-1/stage 1.0/task 1 attempt 1 (TID 5) on 127.0.0.3")
    assert f["actors"] == [first, copy]
    assert f["summary"] == (
        f"task 1 of app-1 published by 2 attempts into dt=2026-11-21: {first}, executor 0, not speculative, "
        f"killed (TaskKilled), wrote 000001_0.stage1; {copy}, executor 1, speculative, success, wrote 000001_1.stage1")
    assert [a["label"] for a in f["detail"]["attempts"]] == [first, copy]
    common = {"kind": "spark_attempt", "app_id": "app-1", "job": "2", "execution": "0", "stage": 1,
              "stage_attempt": 0, "task_index": 1, "run": None, "tie": "named", "rule": "hive_name", "candidates": 1}
    assert f["actor_objects"] == [
        {**common, "label": first, "attempt_name": "task 1.0 in stage 1.0 (TID 3)", "attempt": 0, "tid": 3,
         "executor": "0", "host": "127.0.0.2", "speculative": False, "status": "killed", "end_reason": "TaskKilled",
         "file": "000001_0.stage1"},
        {**common, "label": copy, "attempt_name": "task 1.1 in stage 1.0 (TID 5)", "attempt": 1, "tid": 5,
         "executor": "1", "host": "127.0.0.3", "speculative": True, "status": "success", "end_reason": "Success",
         "file": "000001_1.stage1"},
    ]
    # stored with the finding, read back the same
    stored = duckdb.connect(str(db), read_only=True).execute("SELECT actor_objects FROM findings").fetchone()[0]
    assert json.loads(stored) == f["actor_objects"]


def test_hive_threads_are_objects_with_thread_and_query(cli, tmp_path):
    """Seed 002: two HiveServer2 threads load one partition at the same time (CS103)."""
    db = _store(tmp_path, scenario("seed002_lost_partition"))
    (f,) = _findings(cli, db, "CS103")
    assert f["actors"] == ["Thread-529691", "Thread-529751"]
    assert f["actor_objects"] == [
        {"kind": "hive_thread", "label": "Thread-529691", "thread": "Thread-529691", "query_id": None},
        {"kind": "hive_thread", "label": "Thread-529751", "thread": "Thread-529751", "query_id": None},
    ]


def test_storage_principals_are_objects_with_user_and_address(cli, tmp_path):
    db = _store(tmp_path, {"events": STORAGE_EVENTS})
    (f,) = _findings(cli, db, "CS107")
    assert f["actors"] == ["bob from 10.0.0.9"]
    assert f["actor_objects"] == [
        {"kind": "storage_principal", "label": "bob from 10.0.0.9", "user": "bob", "proxy": "hive",
         "ip": "10.0.0.9", "storage": "hdfs"},
    ]


def test_text_output_does_not_show_the_objects(cli, tmp_path):
    db = _store(tmp_path, {"events": STORAGE_EVENTS})
    r = cli("analyze", "--detector", "CS107", "--db", db)
    assert r.exit_code == 1
    assert "actor_objects" not in r.out and "storage_principal" not in r.out
    assert "bob from 10.0.0.9" in r.out
