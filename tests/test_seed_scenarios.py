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
