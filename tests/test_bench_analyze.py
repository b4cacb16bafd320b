"""The benchmark's generator and grader, small: every planted anomaly found, nothing else.

The full run (10M events) is `bench/analyze.py`, recorded in docs/BENCHMARKS.md; this keeps its
generator honest in CI and checks the detectors on thousands of partitions at once.
"""

from __future__ import annotations

import importlib.util

from commitsleuth.forensics.analyze import analyze
from commitsleuth.store import Store

from conftest import REPO

_spec = importlib.util.spec_from_file_location("bench_analyze", REPO / "bench" / "analyze.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_planted_anomalies_all_found_and_nothing_else(tmp_path):
    with Store(tmp_path / "b.duckdb") as store:
        bench.generate(store.con, 20_000, 2_000)
        planted = store.con.execute("SELECT anomaly, location, partition_spec FROM bench_planted").fetchall()
        assert {a for a, _, _ in planted} == set(bench.EXPECT)  # every kind of anomaly is planted
        findings = [[f.code, f.severity, f.location or (f.detail or {}).get("app_id"), f.partition_spec]
                    for f in analyze(store)]
    missing, extra = bench.compare(planted, findings)
    assert (missing, extra) == (set(), set())
