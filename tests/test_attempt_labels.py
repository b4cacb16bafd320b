"""One name per attempt (issue 32): a Spark task attempt is ``app/stage S.A/task I attempt N (TID T)
on host`` in analyze's text and JSON, the timeline, the named queries and the demo; a MapReduce
or Tez attempt id is its own name. The Python and SQL wordings are held to one another.
"""

from __future__ import annotations

import json

import duckdb
import pytest

from commitsleuth.forensics.attempt_labels import labels_for_names, spark_attempt_label
from commitsleuth.store import Store

from test_cli_actors import SPARK_EVENTS
from test_detector_cases import load_case

FIRST = "app-1/stage 1.0/task 1 attempt 0 (TID 3) on 127.0.0.2"
COPY = "app-1/stage 1.0/task 1 attempt 1 (TID 5) on 127.0.0.3"


@pytest.mark.parametrize("parts, label", [
    (("app-1", 1, 0, 1, 0, 5, "h1"), "app-1/stage 1.0/task 1 attempt 0 (TID 5) on h1"),
    (("app-1", 3, 2, 7, 1, 40, None), "app-1/stage 3.2/task 7 attempt 1 (TID 40)"),
    (("application_1_2", 1, 0, None, 1, 12, "10.0.0.22"), "application_1_2/stage 1.0/attempt 1 (TID 12) on 10.0.0.22"),
    ((None, 0, None, 21, 0, 21, None), "stage 0.0/task 21 attempt 0 (TID 21)"),
    ((None, None, None, None, 0, None, None), "attempt 0"),
])
def test_python_and_sql_word_the_label_alike(parts, label):
    assert spark_attempt_label(*parts) == label
    with Store(":memory:") as store:
        assert store.con.execute("SELECT spark_attempt_label(?, ?, ?, ?, ?, ?, ?)", list(parts)).fetchone()[0] == label


# The event log names TID 7 "task 3.0 in stage 1.0 (TID 7)"; the HDFS audit's caller context
# names it "task attempt 0 in stage 1.0 (TID 7)" from the client's address.
NAMES = [
    {"kind": "attempt_end", "ts": "2023-03-01 10:00:50", "app_id": "application_9_1", "stage_id": 1, "stage_attempt": 0,
     "task_id": "1.3", "attempt_id": "task 3.0 in stage 1.0 (TID 7)", "attempt_no": 0, "host": "node-7",
     "status": "success", "detail": {"tid": 7}},
    {"kind": "file_create", "ts": "2023-03-01 10:00:05", "app_id": "application_9_1", "stage_id": 1, "stage_attempt": 0,
     "task_id": "TID 7", "attempt_id": "task attempt 0 in stage 1.0 (TID 7)", "attempt_no": 0, "host": "10.0.0.21",
     "path": "/w/t/dt=1/part-00003.parquet"},
    # the same TID in another application is another attempt (negative twin)
    {"kind": "file_create", "ts": "2023-03-01 10:00:06", "app_id": "application_9_2", "stage_id": 1, "stage_attempt": 0,
     "task_id": "TID 7", "attempt_id": "task attempt 0 in stage 1.0 (TID 7)", "attempt_no": 0, "host": "10.0.0.29",
     "path": "/w/t/dt=1/part-00003.parquet"},
]


def test_every_name_of_one_attempt_gets_its_one_label(tmp_path):
    with Store(tmp_path / "s.duckdb") as store:
        load_case(store, tmp_path / "logs", {"events": NAMES})
        labels = labels_for_names(store.con, [("application_9_1", "task 3.0 in stage 1.0 (TID 7)"),
                                            ("application_9_1", "task attempt 0 in stage 1.0 (TID 7)"),
                                            ("application_9_2", "task attempt 0 in stage 1.0 (TID 7)"),
                                            ("application_9_1", "attempt_1_0001_m_000001_0")])
    assert labels == {
        ("application_9_1", "task 3.0 in stage 1.0 (TID 7)"): "application_9_1/stage 1.0/task 3 attempt 0 (TID 7) on node-7",
        ("application_9_1", "task attempt 0 in stage 1.0 (TID 7)"):
            "application_9_1/stage 1.0/task 3 attempt 0 (TID 7) on node-7",
        ("application_9_2", "task attempt 0 in stage 1.0 (TID 7)"):
            "application_9_2/stage 1.0/attempt 0 (TID 7) on 10.0.0.29",
    }


def _spark_store(tmp_path):
    db = tmp_path / "a.duckdb"
    with Store(db) as store:
        load_case(store, tmp_path / "logs", {"events": SPARK_EVENTS})
    return db


def test_analyze_text_names_each_attempt_by_its_label(cli, tmp_path):
    db = _spark_store(tmp_path)
    r = cli("analyze", "--db", db)
    assert r.exit_code == 1, r.err
    lines = r.out.splitlines()
    assert f"    actors: {FIRST}, {COPY}" in lines
    assert (f"    task 1 of app-1 published by 2 attempts into dt=2026-11-21: {FIRST}, executor 0, not speculative, "
            f"killed (TaskKilled), wrote 000001_0.stage1; {COPY}, executor 1, speculative, success, "
            "wrote 000001_1.stage1") in lines
    # each listed file under the attempt that wrote it
    assert f"      file:///w/side/dt=2026-11-21/000001_0.stage1  [{FIRST}]" in lines
    assert f"      file:///w/side/dt=2026-11-21/000001_1.stage1  [{COPY}]" in lines
    assert "task 1.0 in stage" not in r.out and "task 1.1 in stage" not in r.out
    js = json.loads(cli("analyze", "--format", "json", "--db", db).out)
    assert [(e["kind"], e["actor"]) for e in js[0]["evidence"]] == [
        ("file", FIRST), ("file", COPY), ("attempt_end", COPY), ("attempt_end", FIRST)]


def test_named_queries_show_spark_attempts(cli, tmp_path):
    db = _spark_store(tmp_path)
    cli("analyze", "--db", db)

    def rows(name):
        r = cli("query", name, "--db", db, "--format", "json")
        assert r.exit_code == 0, r.err
        return json.loads(r.out)

    assert rows("double_commits") == [{"location": "file:///w/side", "partition_spec": "dt=2026-11-21", "task": "app-1/stage 1.0/task 1",
                                       "attempts": [FIRST, COPY], "files": ["000001_0.stage1", "000001_1.stage1"]}]
    assert [r["attempt"] for r in rows("file_attempts")] == [FIRST, COPY]
    assert [r["attempt"] for r in rows("spark_attempts")] == [FIRST, COPY]
    assert [r["actor"] for r in rows("timeline")] == [FIRST, COPY]
    assert [(r["task"], r["attempt_ids"]) for r in rows("attempts_per_task") if r["attempts"]] == [
        ("app-1/stage 1.0/task 1", [FIRST, COPY])]


def test_timeline_lanes_and_events_by_label(cli, tmp_path):
    db = _spark_store(tmp_path)
    r = cli("timeline", "file:///w/side", "dt=2026-11-21", "--db", db, "--no-color")
    assert r.exit_code == 0, r.err
    lines = r.out.splitlines()
    assert lines[2] == "lanes of app-1:"
    assert [line.split(" │")[0].rstrip() for line in lines if " │" in line] == [
        "stage 1.0/task 1 attempt 0 (TID 3) on 127.0.0.2", "stage 1.0/task 1 attempt 1 (TID 5) on 127.0.0.3"]
    events = lines[lines.index("#  time                    kind             actor"):]
    assert events[1:4] == [f"1  2026-11-21 10:00:04     file             {FIRST}",
                           "   path file:///w/side/dt=2026-11-21/000001_0.stage1", "   at   event 4"]
    assert events[4:7] == [f"2  2026-11-21 10:00:04     file             {COPY}",
                           "   path file:///w/side/dt=2026-11-21/000001_1.stage1", "   at   event 5"]


def test_a_store_without_the_labels_view_keeps_the_logged_names(tmp_path):
    con = duckdb.connect()
    con.execute("CREATE TABLE events (app_id VARCHAR, attempt_id VARCHAR)")
    assert labels_for_names(con, [("app-1", "task 1.0 in stage 1.0 (TID 3)")]) == {}


def test_many_names_are_looked_up_alike(tmp_path, monkeypatch):
    """Past a few TIDs the lookup joins on the TID's text instead of a chain of suffix tests."""
    import commitsleuth.forensics.attempt_labels as labels_module

    wanted = [("application_9_1", "task 3.0 in stage 1.0 (TID 7)"), ("application_9_2", "task attempt 0 in stage 1.0 (TID 7)")]
    with Store(tmp_path / "s.duckdb") as store:
        load_case(store, tmp_path / "logs", {"events": NAMES})
        few = labels_for_names(store.con, wanted)
        monkeypatch.setattr(labels_module, "_FEW", 0)
        assert labels_for_names(store.con, wanted) == few
    assert few[wanted[1]] == "application_9_2/stage 1.0/attempt 0 (TID 7) on 10.0.0.29"


def test_double_commits_names_a_spark_task_that_two_attempts_committed(cli, tmp_path):
    """The detector case of a stage retry whose two attempts both succeeded with output: the
    named query shows both attempts by their labels and the task by its own, not `0.3`."""
    from test_detector_cases import cases_of

    (case,) = [p.values[1] for p in cases_of("CS101") if p.values[1]["name"].startswith("Spark stage retry")]
    db = tmp_path / "r.duckdb"
    with Store(db) as store:
        load_case(store, tmp_path / "logs", case)
    r = cli("query", "double_commits", "--db", db, "--format", "json")
    assert json.loads(r.out) == [{"location": None, "partition_spec": None, "task": "app-1/stage 0.0/task 3",
                                  "attempts": ["app-1/stage 0.0/task 3 attempt 0 (TID 3)",
                                               "app-1/stage 0.1/task 3 attempt 0 (TID 9)"], "files": None}]


def test_one_attempt_named_two_ways_gets_one_lane(tmp_path):
    """The event log's and the HDFS audit's names of TID 7 are one attempt: one lane, with the
    window of its start and end; TID 7 of another application stays a lane of its own."""
    from commitsleuth.forensics.timeline import timeline
    from commitsleuth.report.lanes import partition_lanes

    start = dict(NAMES[0], kind="attempt_start", ts="2023-03-01 10:00:01", status=None)
    located = [dict(e, table_name="sales.orders", partition_spec="dt=1", location="hdfs://nn/w/t")
               for e in (start, *NAMES)]
    with Store(tmp_path / "s.duckdb") as store:
        load_case(store, tmp_path / "logs", {"events": located})
        model = partition_lanes(store, timeline(store, "sales.orders", "dt=1"))
    lanes = sorted((ln.label, ln.window, [m.event.kind for m in ln.marks]) for ln in model.lanes)
    assert lanes == [
        ("application_9_1/stage 1.0/task 3 attempt 0 (TID 7) on node-7", "attempt",
         ["attempt_start", "file_create", "attempt_end"]),
        ("application_9_2/stage 1.0/attempt 0 (TID 7) on 10.0.0.29", "activity", ["file_create"])]
