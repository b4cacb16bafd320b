"""``timeline`` finds its rows from raw key columns first; the rows must be the view's, exactly.

``forensics.timeline.timeline_rows`` keys only the events whose own table name, location or
partition spec can lead to the asked key; ``view_rows`` reads the ``timeline`` view, which keys
every event. Over every detector case, every scenario and a generated store, every key the
view knows (tables, locations, each with every partition and with none) gives the same rows in
the same order from both.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from commitsleuth.forensics.timeline import timeline_rows, view_rows
from commitsleuth.store import Store

from test_detector_cases import SCENARIOS_DIR, cases_of, load_case, scenario

REPO = Path(__file__).resolve().parent.parent


def _keys(store: Store) -> list[tuple[str, str | None]]:
    """Every (table or location, partition or None) the timeline view has rows for, plus keys
    that name only a raw column or an alias, and one that names nothing."""
    found = store.con.execute(
        "SELECT DISTINCT k, partition_spec FROM (SELECT table_name AS k, partition_spec FROM timeline "
        "UNION ALL SELECT location, partition_spec FROM timeline "
        "UNION ALL SELECT table_name, partition_spec FROM events UNION ALL SELECT location, partition_spec FROM events "
        "UNION ALL SELECT alias, NULL FROM location_aliases) WHERE k IS NOT NULL ORDER BY ALL").fetchall()
    keys = {(k, s) for k, s in found} | {(k, None) for k, _ in found} | {("no.such_table", None)}
    return sorted(keys, key=lambda ks: (ks[0], ks[1] or ""))


def _same(store: Store, most: int | None = None) -> int:
    compared = 0
    keys = _keys(store)
    step = max(1, len(keys) // most) if most else 1
    for table, spec in keys[::step]:
        fast, view = timeline_rows(store, table, spec), view_rows(store, table, spec)
        assert fast == view, (table, spec, len(fast), len(view))
        compared += len(view)
    return compared


def _fixtures():
    for param in cases_of():
        code, case = param.values
        yield pytest.param(case, id=param.id)
    for entry in sorted(SCENARIOS_DIR.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yml"):
            yield pytest.param({"scenario": entry.name[:-4]}, id=f"scenario {entry.name[:-4]}")


@pytest.mark.parametrize("case", list(_fixtures()))
def test_timeline_rows_equal_the_view(tmp_path: Path, case: dict):
    with Store(tmp_path / "s.duckdb") as store:
        load_case(store, tmp_path / "logs", case)
        _same(store)


def test_timeline_rows_equal_the_view_on_a_generated_store(tmp_path: Path):
    """bench/analyze.py's generator: every detector's planted anomaly among clean partitions."""
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from analyze import generate
    finally:
        sys.path.remove(str(REPO / "bench"))
    with Store(tmp_path / "g.duckdb") as store:
        generate(store.con, 20_000, 200)
        assert _same(store, most=40) > 1000


def test_values_only_specs_and_aliases_are_met(tmp_path: Path):
    """The two joins the raw filter must not lose: a metastore audit's values-only spec
    ('[v]', met through partition_values) and a bare HDFS path (met through location_aliases)."""
    with Store(tmp_path / "s.duckdb") as store:
        load_case(store, tmp_path / "logs", scenario("seed002_hdfs_trash"))
        kinds = store.con.execute(
            "SELECT count(*) FILTER (partition_spec LIKE '[%'), (SELECT count(*) FROM location_aliases) "
            "FROM events").fetchone()
        rows = _same(store)
    assert rows > 0 and kinds[0] > 0 and kinds[1] > 0, kinds
