"""The seed scenarios (BRIEF seeds 000-004) through every detector: the right culprit, nothing else.

Each cases/scenarios/*.yml says which findings the whole analysis must give (``findings:``);
a negative twin gives none at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from commitsleuth.forensics.analyze import analyze
from commitsleuth.forensics.timeline import timeline
from commitsleuth.store import Store

from test_detector_cases import SCENARIOS_DIR, load_case, scenario

NAMES = sorted(e.name[:-4] for e in SCENARIOS_DIR.iterdir() if e.name.endswith(".yml"))


@pytest.mark.parametrize("name", NAMES)
def test_scenario_findings(tmp_path: Path, name: str):
    case = scenario(name)
    with Store(tmp_path / "s.duckdb") as store:
        load_case(store, tmp_path / "logs", case)
        got = [
            {"code": f.code, "severity": f.severity, "partition": f.partition_spec, "actors": f.actors}
            for f in analyze(store)
        ]
    assert got == case["findings"], [f"{g}" for g in got]


def test_seed002_timeline_meets_table_and_paths(tmp_path):
    """`timeline dw.log_daily dt=20170830` shows both threads' lines, path-only lines included."""
    with Store(tmp_path / "s.duckdb") as store:
        load_case(store, tmp_path / "logs", scenario("seed002_lost_partition"))
        rows = timeline(store, "dw.log_daily", "dt=20170830")
        assert [r.kind for r in rows] == [
            "dir_create", "dir_create", "partition_add", "partition_add", "load", "delete",
            "partition_add", "partition_exists", "partition_alter", "load",
        ]
        assert {r.actor for r in rows} == {"Thread-529751", "Thread-529691"}
        by_loc = timeline(store, "hdfs://nn/user/hive/warehouse/dw.db/log_daily", "(dt='20170830')")
        assert [r.event_id for r in by_loc] == [r.event_id for r in rows]


def test_seed002_timeline_from_the_cli(cli, tmp_path):
    """The partition's lanes show both threads; the event list names the trashing thread."""
    db = tmp_path / "s.duckdb"
    with Store(db) as store:
        load_case(store, tmp_path / "logs", scenario("seed002_lost_partition"))
    r = cli("timeline", "dw.log_daily", "dt=20170830", "--db", db, "--no-color")
    assert r.exit_code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0] == "dt=20170830 in dw.log_daily"
    lanes = [line.split(" ")[0] for line in lines if "│" in line and line.startswith("Thread-")]
    assert sorted(lanes) == ["Thread-529691", "Thread-529751"]
    events = [line.split() for line in lines if line[:1].isdigit()]
    assert [(e[3], e[4]) for e in events if e[3] == "delete"] == [("delete", "Thread-529751")]
    assert len(events) == 10
    assert lines[-1] == "(10 events)"


def test_analyze_groups_most_severe_first_and_gates_on_severity(cli, tmp_path):
    """seed 002 + seed 004 in one store: critical race first, then the high ones; --fail-on."""
    db = tmp_path / "s.duckdb"
    with Store(db) as store:
        load_case(store, tmp_path / "a", scenario("seed002_lost_partition"))
        load_case(store, tmp_path / "b", scenario("seed004_same_name_overwrite"))
    r = cli("analyze", "--db", db)
    assert r.exit_code == 1
    lines = r.out.splitlines()
    assert lines[:5] == [
        "Summary:",
        "  critical  CS103 racing-loaders            1  dw.log_daily dt=20170830",
        "  high      CS104 same-name-overwrite       1  default.accesslog service=serviceX/yyyymmdd=20130124",
        "  high      CS107 metastore-fs-mismatch     1  dw.log_daily dt=20170830",
        "",
    ]
    assert lines[5] == "CS103 racing-loaders [critical] - 1 finding"
    assert lines[-1] == "3 findings (1 critical, 2 high)."
    assert cli("analyze", "--db", db, "--fail-on", "critical").exit_code == 1
    r = cli("analyze", "--db", db, "--detector", "CS104", "--fail-on", "critical", "--format", "json")
    assert r.exit_code == 0
    import json

    (found,) = json.loads(r.out)
    assert found["actors"] == ["hive_20130124120000_0b1f", "hive_20130125000000_77aa"]
    assert [e["where"].rsplit("/", 1)[-1] for e in found["evidence"]] == ["hive.log:2", "hive.log:4"]
