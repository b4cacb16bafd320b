"""Every queries/*.sql runs against a populated store, through the CLI and through plain duckdb."""

from __future__ import annotations

import subprocess
import sys

import pytest

from commitsleuth.demo import run_demo
from commitsleuth.queries import all_queries

QUERIES = sorted(all_queries())


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("q") / "demo.duckdb"
    store, _, _ = run_demo(path)
    store.close()
    return path


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
