"""Everything a user can call is documented: commands, queries, detectors, tables, columns, kinds."""

from __future__ import annotations

import re
from pathlib import Path

from commitsleuth.cli import cli
from commitsleuth.forensics.detectors import DETECTORS
from commitsleuth.model import KINDS
from commitsleuth.queries import all_queries
from commitsleuth.store import Store

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text()
SCHEMA = (REPO / "docs" / "schema.md").read_text()


def test_every_command_is_in_the_readme():
    for name in cli.commands:
        assert f"| `{name}` |" in README, name


def test_every_query_is_in_the_readme():
    for name in all_queries():
        assert f"| `{name}` |" in README, name


def test_every_detector_is_in_the_readme():
    for d in DETECTORS:
        assert f"| `{d.code}` | `{d.name}` | {d.severity} |" in README, d.code
        assert set(d.sections()) == {"symptom", "cause", "remedy"}, d.code


def _documented_columns(table: str) -> list[str]:
    m = re.search(rf"^## Table `{table}`\n(.*?)(?=^## |\Z)", SCHEMA, re.M | re.S)
    assert m, f"docs/schema.md has no section for {table}"
    section = m.group(1).split("### ")[0]
    same_as = re.search(r"columns as `(\w+)`", section)  # a copy table documents its original's
    columns = re.findall(r"^\| `(\w+)` \|", section, re.M)
    return columns or (_documented_columns(same_as.group(1)) if same_as else [])


def test_every_table_and_column_is_documented(tmp_path):
    with Store(tmp_path / "s.duckdb") as s:
        tables = [r[0] for r in s.con.execute(
            "select table_name from information_schema.tables where table_type='BASE TABLE'").fetchall()]
        for table in tables:
            cols = [r[0] for r in s.con.execute(
                "select column_name from information_schema.columns where table_name=? order by ordinal_position",
                [table]).fetchall()]
            assert _documented_columns(table) == cols, table


def test_every_event_kind_is_documented():
    m = re.search(r"^### Event kinds\n(.*?)(?=^## |\Z)", SCHEMA, re.M | re.S)
    documented = re.findall(r"^\| `(\w+)` \|", m.group(1), re.M)
    assert documented == list(KINDS)
