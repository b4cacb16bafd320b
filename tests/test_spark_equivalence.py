"""``analyze --engine spark`` gives ``analyze``'s findings on every YAML case
(forensics/detectors/cases/*.yml), every seed scenario (cases/scenarios/*.yml) and every
detection-matrix row (tests/matrix/rows.py): issue 33's equivalence, on a real local PySpark
session (the test session's one, shared by every input).

Each input is loaded into its own real DuckDB store as its own test loads it, analyzed there,
then exported to Parquet and analyzed on Spark (forensics/spark_engine.py: the views and the
detectors' SQL transpiled from the DuckDB SQL). Every field of every finding must be equal:
code, wording, location, partition, table, window, actors and the objects they name, evidence,
detail, the storage annotation, explanation and remedy, in report order.

What runs: a YAML case, the detector it checks; a matrix row, the detectors that decide its
anomaly (test_detection_matrix.py checks those); a seed scenario, every detector.
"""

from __future__ import annotations

import os
import queue
import re
import time
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path

import pytest

from commitsleuth.forensics import spark_engine
from commitsleuth.forensics.analyze import analyze
from commitsleuth.forensics.audit import audit
from commitsleuth.store import Store

import test_detection_matrix as TM
from matrix import rows as R
from test_detector_cases import cases_of, load_case, scenario

SCENARIOS = sorted(e.name[:-4] for e in resources.files("commitsleuth.forensics.detectors")
                   .joinpath("cases", "scenarios").iterdir() if e.name.endswith(".yml"))


# Knobs for inputs of a few dozen events (the time goes to planning and starting jobs, not to
# data): no adaptive re-planning, expressions interpreted rather than compiled, one shuffle
# partition. They change how Spark runs a plan, not what it computes.
SMALL_INPUT_CONF = {"spark.sql.adaptive.enabled": "false", "spark.sql.codegen.wholeStage": "false",
                    "spark.sql.codegen.factoryMode": "NO_CODEGEN", "spark.sql.shuffle.partitions": "1"}
# Inputs analyzed at once, each in its own session of the one SparkContext (its own temp views
# and conf): one input's driver-side planning overlaps the other's jobs.
WORKERS = 2


def _case_input(code, case):
    return [code], lambda store, tmp: load_case(store, tmp / "logs", case)


def _scenario_input(name):
    return None, lambda store, tmp: load_case(store, tmp / "logs", scenario(name))


def _row_input(row):
    def load(store, tmp):
        listing = TM.load_row(store, row, tmp)
        if listing:  # the listing recorded as `audit` records it (its own analyze is not compared)
            audit(store, str(listing))
    return list(row.codes), load


INPUTS = ([pytest.param(*_case_input(p.values[0], p.values[1]), id=f"case {p.id}") for p in cases_of()]
          + [pytest.param(*_scenario_input(name), id=f"scenario {name}") for name in SCENARIOS]
          + [pytest.param(*_row_input(row), id=f"row {row.id}") for row in R.ROWS])


def group(input_id: str) -> str:
    """A case's detector file, a row's anomaly and source, or "scenario"."""
    kind, rest = input_id.split(" ", 1)
    return {"case": rest.split(":")[0], "row": "/".join(rest.split("/")[:2])}.get(kind, kind)


def sample() -> list:
    """The first input of each group: every detector's cases, every anomaly and source of the
    matrix, a scenario (every detector). What `make test` runs: every input (334) costs hours of
    Spark's per-query planning on the 2-core CI box; SPARK_EQUIVALENCE=all runs them all."""
    first: dict[str, object] = {}
    for p in INPUTS:
        first.setdefault(group(p.id), p)
    return list(first.values())


def differences(local: list, on_spark: list) -> list[str]:
    """What differs between two engines' findings (empty: the same), field by field."""
    if len(local) != len(on_spark):
        return [f"{len(local)} findings on DuckDB, {len(on_spark)} on Spark: "
                f"{[(f['code'], f['summary']) for f in local]} / {[(f['code'], f['summary']) for f in on_spark]}"]
    return [f"finding {i + 1} ({a['code']}) {key}: DuckDB {a[key]!r} / Spark {b[key]!r}"
            for i, (a, b) in enumerate(zip(local, on_spark)) for key in a if a[key] != b.get(key)]


def test_differences_names_what_differs():
    f = {"code": "CS101", "summary": "s", "evidence": [1, 2]}
    assert differences([f], [dict(f)]) == []
    assert differences([f], [{**f, "evidence": [2, 1]}]) == ["finding 1 (CS101) evidence: DuckDB [1, 2] / Spark [2, 1]"]
    assert differences([f], [])[0].startswith("1 findings on DuckDB, 0 on Spark")


def test_every_input_is_compared():
    """Nothing is left out: every YAML case, every scenario, every matrix row is an input."""
    assert len(INPUTS) == len(list(cases_of())) + len(SCENARIOS) + len(R.ROWS)
    assert len(SCENARIOS) >= 19 and any(p.values[0] is None for p in INPUTS)
    groups = {group(p.id) for p in INPUTS}
    assert {group(p.id) for p in sample()} == groups and len(sample()) == len(groups)
    assert {c for p in sample() if p.values[0] for c in p.values[0]} >= {c for p in INPUTS if p.values[0] for c in p.values[0]}


def compare(spark, tmp: Path, codes, load) -> list[str]:
    """Load one input into its own store, analyze it on both engines: what differs."""
    tmp.mkdir(parents=True, exist_ok=True)
    with Store(tmp / "in.duckdb") as store:
        load(store, tmp)
        local = [vars(f) for f in analyze(store, codes)]
        on_spark = [vars(f) for f in spark_engine.analyze_spark(store, codes, spark=spark)]
    return differences(local, on_spark)


def test_spark_gives_analyzes_findings_on_every_input(spark, tmp_path: Path):
    sessions = queue.SimpleQueue()
    for _ in range(WORKERS):
        session = spark.newSession()
        for key, value in SMALL_INPUT_CONF.items():
            session.conf.set(key, value)
        sessions.put(session)

    def one(i: int, param) -> tuple[str, list[str], float]:
        session = sessions.get()
        t0 = time.perf_counter()
        try:
            wrong = compare(session, tmp_path / str(i), *param.values)
            print(f"{time.perf_counter() - t0:6.1f} s {'DIFFERS' if wrong else 'same'}: {param.id}", flush=True)
            return param.id, wrong, time.perf_counter() - t0
        except Exception as exc:  # noqa: BLE001 - an input that fails on either engine is a difference
            return param.id, [f"{type(exc).__name__}: {str(exc)[:500]}"], time.perf_counter() - t0
        finally:
            sessions.put(session)

    # SPARK_EQUIVALENCE_ONLY=<regex>: only the inputs whose id it finds (while fixing one)
    only = re.compile(os.environ.get("SPARK_EQUIVALENCE_ONLY", ""))
    inputs = [p for p in (INPUTS if os.environ.get("SPARK_EQUIVALENCE") == "all" else sample()) if only.search(p.id)]
    with ThreadPoolExecutor(WORKERS) as pool:
        results = list(pool.map(one, range(len(inputs)), inputs))
    slowest = sorted(results, key=lambda r: -r[2])[:5]
    print(f"{len(results)} inputs; slowest: " + ", ".join(f"{i} {t:.1f} s" for i, _, t in slowest))
    wrong = {i: d for i, d, _ in results if d}
    assert not wrong, "\n".join(f"{i}: {d}" for i, d in wrong.items())
