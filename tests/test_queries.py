"""Every queries/*.sql runs against a populated store: through the CLI, the duckdb module and the
plain duckdb shell (duckdb-cli, a 1.x release) exactly as the README shows."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from commitsleuth.demo import run_demo
from commitsleuth.forensics.analyze import analyze
from commitsleuth.ingest import ingest
from commitsleuth.queries import all_queries
from commitsleuth.store import Store

from test_detector_cases import load_case, scenario

QUERIES = sorted(all_queries())
APP = "application_1628109047826_1317105"


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory, corpus):
    """The demo's seed 000, the seed 002 race and a real Spark event log with speculation."""
    root = tmp_path_factory.mktemp("q")
    path = root / "demo.duckdb"
    store, _, _ = run_demo(path)
    with store:
        load_case(store, root / "logs", scenario("seed002_lost_partition"))
        ingest(store, [str(corpus / "spark-events" / "application_1628109047826_1317105")])
        analyze(store)
    return path


def _shell() -> str:
    shell = shutil.which("duckdb", path=os.path.dirname(sys.executable)) or shutil.which("duckdb")
    assert shell, "the duckdb shell is a test dependency (duckdb-cli)"
    return shell


def test_every_query_has_a_description():
    for q in all_queries().values():
        assert len(q.description) > 20, q.name


@pytest.mark.parametrize("name", QUERIES)
def test_query_runs_from_the_cli(cli, demo_db, name):
    r = cli("query", name, "--db", demo_db, "--format", "json")
    assert r.exit_code == 0, r.err


@pytest.mark.parametrize("name", QUERIES)
def test_query_file_runs_in_plain_duckdb(demo_db, name):
    sql = all_queries()[name].sql
    code = "import duckdb,sys; c=duckdb.connect(sys.argv[1], read_only=True); c.execute(sys.stdin.read()).fetchall()"
    p = subprocess.run([sys.executable, "-c", code, str(demo_db)], input=sql, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("name", QUERIES)
def test_query_file_runs_in_the_duckdb_shell(demo_db, name):
    """`duckdb store.duckdb < queries/NAME.sql`, the README's own words."""
    p = subprocess.run([_shell(), "-readonly", "-csv", str(demo_db)], input=all_queries()[name].sql,
                       capture_output=True, text=True)
    assert p.returncode == 0 and "Error" not in p.stderr, p.stderr
    assert p.stdout.splitlines(), name  # at least the header


def _rows(cli, db, name):
    import json

    r = cli("query", name, "--db", db, "--format", "json")
    assert r.exit_code == 0, r.err
    return json.loads(r.out)


def test_racing_writers_names_both_threads(cli, demo_db):
    rows = [r for r in _rows(cli, demo_db, "racing_writers") if r["partition_spec"] == "dt=20170830"]
    assert {(r["writer"], tuple(r["racing_with"]), r["deletes"]) for r in rows} == {
        ("Thread-529691", ("Thread-529751",), 0),
        ("Thread-529751", ("Thread-529691",), 1),
    }


def test_speculative_attempts_shows_the_killed_copy(cli, demo_db):
    rows = _rows(cli, demo_db, "speculative_attempts")
    assert [(r["attempt_id"], r["status"], r["kill_reason"]) for r in rows] == [
        (f"{APP}/stage 0.0/task 3 attempt 0 (TID 3) on ltx1-hcl12413.grid.linkedin.com", "success", None),
        (f"{APP}/stage 0.0/task 3 attempt 1 (TID 4) on ltx1-hcl12291.grid.linkedin.com", "killed",
         "another attempt succeeded"),
    ]


def test_partitions_meet_table_and_location(cli, demo_db):
    rows = {(r["table"], r["location"], r["partition_spec"]) for r in _rows(cli, demo_db, "partitions")}
    assert ("dw.log_daily", "hdfs://nn/user/hive/warehouse/dw.db/log_daily", "dt=20170830") in rows


def test_findings_summary_most_severe_first(cli, demo_db):
    rows = _rows(cli, demo_db, "findings_summary")
    assert [(r["code"], r["severity"]) for r in rows] == [("CS103", "critical"), ("CS101", "high"), ("CS107", "high")]


# round 10, gen10: a YARN restart's two runs count TIDs from 0 again, so attempt_labels (0077) has
# a row per run of a name both used; a query joining it on the name alone listed each attempt of
# such a name twice, once under the other run's label. The store: the round 9 CS101 case (event
# logs of runs 1 and 2 of application _0042, run 2's TID 3 and speculative TID 9 creating 000003_0
# and 000003_1) and an application app-7 whose two runs (live captures: sources 901, 902) each had
# one task 3 commit: run 1's TID 3, run 2's retry TID 9 after its TID 3 failed.
R9 = "round 9 - YARN restart - run 2's task 3 published by TID 3 and its speculative TID 9; run 1's TID 3 and TID 9 ran elsewhere"
A42 = "application_1716000000000_0042"
_APP7 = [
    {"source_id": 901, "kind": "app_start", "ts": "2026-11-21 10:00:00", "app_id": "app-7", "detail": {"attempt": "1"}},
    {"source_id": 901, "kind": "attempt_end", "ts": "2026-11-21 10:00:05", "app_id": "app-7", "stage_id": 0, "stage_attempt": 0,
     "task_id": "0.3", "attempt_id": "task 3.0 in stage 0.0 (TID 3)", "attempt_no": 0, "speculative": False, "executor_id": "1",
     "host": "h1", "status": "success", "size": 100, "detail": {"tid": 3, "reason": "Success"}},
    {"source_id": 902, "kind": "app_start", "ts": "2026-11-21 10:10:00", "app_id": "app-7", "detail": {"attempt": "2"}},
    {"source_id": 902, "kind": "attempt_end", "ts": "2026-11-21 10:10:05", "app_id": "app-7", "stage_id": 0, "stage_attempt": 0,
     "task_id": "0.3", "attempt_id": "task 3.0 in stage 0.0 (TID 3)", "attempt_no": 0, "speculative": False, "executor_id": "2",
     "host": "h2", "status": "failed", "detail": {"tid": 3, "reason": "ExceptionFailure"}},
    {"source_id": 902, "kind": "attempt_end", "ts": "2026-11-21 10:10:09", "app_id": "app-7", "stage_id": 0, "stage_attempt": 0,
     "task_id": "0.3", "attempt_id": "task 3.1 in stage 0.0 (TID 9)", "attempt_no": 1, "speculative": False, "executor_id": "3",
     "host": "h3", "status": "success", "size": 100, "detail": {"tid": 9, "reason": "Success"}},
]


@pytest.fixture(scope="module")
def two_run_db(tmp_path_factory):
    import yaml

    from test_detector_cases import CASES_DIR

    cases = yaml.safe_load(CASES_DIR.joinpath("double_commit.yml").read_text())["cases"]
    case = next(c for c in cases if c["name"] == R9)
    root = tmp_path_factory.mktemp("q2")
    path = root / "runs.duckdb"
    with Store(path) as store:
        load_case(store, root / "logs", {"files": case["files"], "events": _APP7})
    return path


def test_speculative_attempts_one_row_per_attempt_in_its_run(cli, two_run_db):
    rows = [(r["attempt_id"], r["status"]) for r in _rows(cli, two_run_db, "speculative_attempts") if r["app_id"] == A42]
    assert sorted(rows) == [
        (f"{A42}_1/stage 0.0/task 3 attempt 0 (TID 3) on 10.0.0.21", "success"),
        (f"{A42}_2/stage 0.0/task 3 attempt 0 (TID 3) on 10.0.0.31", "success"),
        (f"{A42}_2/stage 0.0/task 3 attempt 1 (TID 9) on 10.0.0.32", "killed"),
    ]


def test_attempts_per_task_counts_each_run_apart(cli, two_run_db):
    rows = {r["task"]: (r["attempts"], r["attempt_ids"]) for r in _rows(cli, two_run_db, "attempts_per_task")}
    # the storage records' names (a caller context's 'task attempt 0 in stage 0.0 (TID 3)') under their run's label too
    assert sorted(rows) == sorted([f"{A42}_1/stage 0.0/task 1", f"{A42}_1/stage 0.0/task 3", f"{A42}_2/stage 0.0/task 3",
                                   "app-7_1/stage 0.0/task 3", "app-7_2/stage 0.0/task 3"])
    assert rows[f"{A42}_1/stage 0.0/task 3"] == (1, [f"{A42}_1/stage 0.0/task 3 attempt 0 (TID 3) on 10.0.0.21"])
    assert rows[f"{A42}_2/stage 0.0/task 3"] == (2, [f"{A42}_2/stage 0.0/task 3 attempt 0 (TID 3) on 10.0.0.31",
                                                    f"{A42}_2/stage 0.0/task 3 attempt 1 (TID 9) on 10.0.0.32"])


def test_file_attempts_and_timeline_name_the_files_run(cli, two_run_db):
    files = [(r["path"].rsplit("/", 1)[1], r["rule"], r["attempt"]) for r in _rows(cli, two_run_db, "file_attempts")]
    assert sorted(files) == [
        ("000003_0", "caller_context", f"{A42}_2/stage 0.0/task 3 attempt 0 (TID 3) on 10.0.0.31"),
        ("000003_1", "caller_context", f"{A42}_2/stage 0.0/task 3 attempt 1 (TID 9) on 10.0.0.32"),
    ]
    lines = [(r["path"].rsplit("/", 1)[1], r["actor"]) for r in _rows(cli, two_run_db, "timeline") if r["kind"] == "file_create"]
    assert sorted(lines) == [("000003_0", f"{A42}_2/stage 0.0/task 3 attempt 0 (TID 3) on 10.0.0.31"),
                             ("000003_1", f"{A42}_2/stage 0.0/task 3 attempt 1 (TID 9) on 10.0.0.32")]


def test_double_commits_keeps_each_runs_commits_apart(cli, two_run_db):
    """app-7's run 1 committed task 3 by TID 3, run 2 by its retry TID 9: one commit per run."""
    assert [r for r in _rows(cli, two_run_db, "double_commits") if "app-7" in str(r["attempts"])] == []
