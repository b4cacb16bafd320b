"""``analyze --engine spark`` gives ``analyze``'s findings on every YAML case
(forensics/detectors/cases/*.yml), every seed scenario (cases/scenarios/*.yml) and every
detection-matrix row (tests/matrix/rows.py): issue 33's equivalence, on a real local PySpark
session (the test session's one, shared by every input).

Each input is loaded into its own real DuckDB store as its own test loads it and analyzed there
by DuckDB. Spark's cost is per analyze (planning and ~80-190 jobs), not per event, so the inputs
are then dealt into BATCHES combined stores, every key namespaced by its input
(tests/spark_batch.py), and each combined store is analyzed once on Spark (forensics/
spark_engine.py: the views and the detectors' SQL transpiled from the DuckDB SQL). Spark's
findings are split back by input, the namespacing undone, and compared with the input's own
DuckDB findings. Every field of every finding must be equal: code, wording, location, partition,
table, window, actors and the objects they name, evidence, detail, the storage annotation,
explanation and remedy, in report order.

The combined store is trusted for an input only when DuckDB's analyze of it gives, for that
input, exactly the input's own findings (the namespacing kept it apart); an input it does not
keep apart (a detector that reads across the whole store, a path written inside another) is
compared on its own: its own store analyzed on Spark. The run prints how many.

What runs: a YAML case, the detector it checks; a matrix row, the detectors that decide its
anomaly (test_detection_matrix.py checks those); a seed scenario, every detector.

Environment:
- unset (``make test``, CI): every input, batched.
- ``SPARK_EQUIVALENCE=sample``: the first input of each group (sample()), batched: a quick look.
- ``SPARK_EQUIVALENCE=solo``: every selected input in its own store and its own Spark analyze,
  no batching (hours for all of them: to tell a batching fault from an engine's).
- ``SPARK_EQUIVALENCE_ONLY=<regex>``: only the inputs whose id it finds (while fixing one);
  combines with the above.
- ``SPARK_EQUIVALENCE_SHARD=i/k``: the i-th of k shards (every k-th input from the i-th), for
  CI jobs side by side; combines with the above.
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

import spark_batch as B
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
# Inputs loaded and analyzed on DuckDB at once, each in its own store.
WORKERS = 2
# Spark sessions of the one SparkContext analyzing at once. One: an analyze of every input in
# one store takes under a minute on a quiet box, and each analyze holds its kept views, plans and
# broadcast relations (about 1 GB of the driver's heap at its peak, measured with jstat; see
# conftest's spark.buffer.pageSize): two at once ran round 7's driver out of memory.
SESSIONS = 1
# Inputs are dealt into this many combined stores (tests/spark_batch.py), one per session: each
# costs one Spark analyze, whatever it holds.
BATCHES = SESSIONS
# Inputs a combined store may fail to keep apart (each then costs a Spark analyze of its own):
# CS105's committer algorithm of a job without an application, and whether _SUCCESS is written
# (marksuccessfuljobs), are what the whole store's applications agree on (6 inputs); CS202 sorts
# an application id (namespaced) beside an attempt name (2). (A YARN restart's run, read from the
# caller context's application id, is namespaced with the app_id column since round 9: with
# 0077 keying every Spark attempt by its run, 28 inputs mixed before.) More than this: a new
# hole, to be fixed there, not paid for in time.
ALONE_AT_MOST = 12


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
    matrix, a scenario (every detector). SPARK_EQUIVALENCE=sample runs only these."""
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


def test_undo_gives_back_what_namespacing_changed():
    for path in ("hdfs://ns/w/db.db/t/dt=1", "file:/w/t/part-0", "file:///w/t", "/w/t", "s3a://b/k", "t/x"):
        assert B.namespaced_path(path, 7) != path and B.undo(B.namespaced_path(path, 7), {}) == path
    assert B.namespaced_path("hdfs://ns/w", 7) == "hdfs://ns/zp007/w"
    assert B.undo(B.id_token(12) + "db.t", {}) == "db.t"
    renamed = {"1445144423012": "1445144423722", "0f3e8a6c-1b2d-4c5e-800c-123456789abc": "0f3e8a6c-1b2d-4c5e-8f90-123456789abc"}
    assert B.undo({"task": ["task_1445144423012_0020_m_000000", "part-0-0f3e8a6c-1b2d-4c5e-800c-123456789abc"]}, renamed) == {
        "task": ["task_1445144423722_0020_m_000000", "part-0-0f3e8a6c-1b2d-4c5e-8f90-123456789abc"]}


# Two copies of one input share every key. A MapReduce job's: its attempts, task and job ids
# (also inside its _temporary paths) besides its table and paths; HiveServer2's: its threads,
# queries, table and paths.
_MAPREDUCE = "case double_commit: MapReduce - two 'Saved output of task' commits of one task"
_HIVE = "scenario seed004_same_name_overwrite"


@pytest.mark.parametrize("twins, keys, ids, apart", [(_MAPREDUCE, True, True, True), (_HIVE, True, True, True),
                                                     (_HIVE, False, True, False), (_MAPREDUCE, True, False, False)])
def test_combined_store_keeps_inputs_apart_only_namespaced(tmp_path: Path, twins, keys, ids, apart):
    """The combined store gives each input its own findings when keys and ids are namespaced;
    without either, the twins' findings mix (and split() says so)."""
    param = next(p for p in INPUTS if p.id == twins)
    local = {n: load_alone(tmp_path / str(n), n, *param.values) for n in (3, 4)}
    assert local[3] and len(local[3]) == len(local[4])
    path, renamed = B.combine(tmp_path / "batch.duckdb", {n: tmp_path / str(n) / "in.duckdb" for n in local},
                              keys=keys, ids=ids)
    with Store(path) as store:
        per, mixed = B.split([vars(f) for f in analyze(store)], {n: param.values[0] for n in local}, renamed)
    same = not mixed and all(not differences(local[n], per[n]) for n in local)
    assert same == apart, (mixed, {n: differences(local[n], per[n]) for n in local})


def _session(spark):
    session = spark.newSession()
    for key, value in SMALL_INPUT_CONF.items():
        session.conf.set(key, value)
    return session


def compare(spark, tmp: Path, codes, load) -> list[str]:
    """Load one input into its own store, analyze it on both engines: what differs."""
    tmp.mkdir(parents=True, exist_ok=True)
    with Store(tmp / "in.duckdb") as store:
        load(store, tmp)
        local = [vars(f) for f in analyze(store, codes)]
        on_spark = [vars(f) for f in spark_engine.analyze_spark(store, codes, spark=spark)]
    return differences(local, on_spark)


def load_alone(tmp: Path, n: int, codes, load) -> list[dict]:
    """Input ``n`` in its own store (ids reserved for it) and its findings there on DuckDB."""
    tmp.mkdir(parents=True, exist_ok=True)
    with Store(tmp / "in.duckdb") as store:
        B.reserve_ids(store, n)
        load(store, tmp)
        B.release_ids(store, n)
        return [vars(f) for f in analyze(store, codes)]


def compare_batch(spark, tmp: Path, batch: dict[int, object], local: dict[int, list[dict]]):
    """The batch's inputs in one store, analyzed once by each engine: ``(differences per
    input, inputs the combined store does not keep apart)``. An input is compared only when
    DuckDB's findings for it in the combined store are exactly its own (the namespacing is
    complete for it); the others are returned to be compared on their own."""
    path, renamed = B.combine(tmp / "batch.duckdb", {n: tmp / str(n) / "in.duckdb" for n in batch})
    codes = {n: batch[n].values[0] for n in renamed}
    with Store(path) as store:
        on_duckdb, mixed = B.split([vars(f) for f in analyze(store)], codes, renamed)
        apart = [n for n in codes if n not in mixed and not differences(local[n], on_duckdb[n])]
        on_spark, spark_mixed = B.split([vars(f) for f in spark_engine.analyze_spark(store, spark=spark)],
                                        codes, renamed)
    wrong = {n: (["a finding on Spark mixes inputs"] if n in spark_mixed else [])
             + differences(local[n], on_spark[n]) for n in apart}
    return wrong, sorted(set(batch) - set(apart))


def selection() -> list:
    """The inputs SPARK_EQUIVALENCE and SPARK_EQUIVALENCE_ONLY select (see the docstring)."""
    only = re.compile(os.environ.get("SPARK_EQUIVALENCE_ONLY", ""))
    chosen = sample() if os.environ.get("SPARK_EQUIVALENCE") == "sample" else INPUTS
    part, parts = map(int, os.environ.get("SPARK_EQUIVALENCE_SHARD", "1/1").split("/"))
    return [p for i, p in enumerate(chosen) if only.search(p.id) and i % parts == part - 1]


def test_spark_gives_analyzes_findings_on_every_input(spark, tmp_path: Path):
    inputs = dict(enumerate(selection()))
    sessions = queue.SimpleQueue()
    for _ in range(SESSIONS):
        sessions.put(_session(spark))
    solo = os.environ.get("SPARK_EQUIVALENCE") == "solo"

    def alone(n: int) -> tuple[str, list[str]]:
        """Input n compared on its own: loaded afresh (solo), or its own store of the batch run."""
        session = sessions.get()
        try:
            if solo:
                return inputs[n].id, compare(session, tmp_path / "solo" / str(n), *inputs[n].values)
            with Store(tmp_path / f"b{n % BATCHES}" / str(n) / "in.duckdb") as store:
                on_spark = [vars(f) for f in spark_engine.analyze_spark(store, inputs[n].values[0], spark=session)]
            return inputs[n].id, differences(local[n], on_spark)
        except Exception as exc:  # noqa: BLE001 - an input that fails on either engine is a difference
            return inputs[n].id, [f"{type(exc).__name__}: {str(exc)[:500]}"]
        finally:
            sessions.put(session)

    t0 = time.perf_counter()
    results: dict[str, list[str]] = {}
    apart_failed: list[int] = []
    local: dict[int, list[dict]] = {}
    with ThreadPoolExecutor(WORKERS) as pool:
        if not solo:
            batches = [dict(list(inputs.items())[i::BATCHES]) for i in range(min(BATCHES, len(inputs)))]
            local.update(zip(inputs, pool.map(lambda n: load_alone(tmp_path / f"b{n % BATCHES}" / str(n), n,
                                                                   *inputs[n].values), inputs)))
            print(f"{len(inputs)} inputs loaded and analyzed on DuckDB in {time.perf_counter() - t0:.1f} s", flush=True)

            def one_batch(i: int):
                session = sessions.get()
                t1 = time.perf_counter()
                try:
                    return compare_batch(session, tmp_path / f"b{i}", batches[i], local)
                except Exception as exc:  # noqa: BLE001 - a batch that fails is a difference for each of its inputs
                    return {n: [f"{type(exc).__name__} (batch {i + 1}): {str(exc)[:800]}"] for n in batches[i]}, []
                finally:
                    sessions.put(session)
                    print(f"batch {i + 1} ({len(batches[i])} inputs): {time.perf_counter() - t1:.1f} s", flush=True)
            for wrong, kept_apart in pool.map(one_batch, range(len(batches))):
                results.update({inputs[n].id: d for n, d in wrong.items()})
                apart_failed += kept_apart
        else:
            apart_failed = list(inputs)
        results.update(pool.map(alone, apart_failed))
    print(f"{len(results)} inputs compared in {time.perf_counter() - t0:.1f} s: "
          f"{sum(not d for d in results.values())} the same, {sum(bool(d) for d in results.values())} differ; "
          f"{len(apart_failed)} compared on their own" + (f" (the combined store mixed them: "
          f"{[inputs[n].id for n in apart_failed]})" if apart_failed and not solo else ""))
    assert len(results) == len(inputs)
    assert solo or len(apart_failed) <= ALONE_AT_MOST, [inputs[n].id for n in apart_failed]
    wrong = {i: d for i, d in results.items() if d}
    assert not wrong, "\n".join(f"{i}: {d}" for i, d in wrong.items())
