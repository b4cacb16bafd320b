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
