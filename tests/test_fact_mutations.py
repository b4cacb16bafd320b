"""The fact model's own views (file_lineage, attempts, partitions, spark_attempts) are needed by
the YAML cases' ``facts:``: each mutation of tests/mutations/facts.py makes one case's facts
check fail (issue 30). No detector reads these views, so tests/mutation_coverage.py, which runs a
mutation against the probes of the detectors reading it, cannot reach them; this runs them
against the cases that state facts, applied as that runner applies a view's mutant (its live
definition replaced in the case's store, restored after)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from mutation_coverage import Mutation, object_of, readers_of, sql_mutated
from mutations import facts as fact_mutations
from test_detector_cases import cases_of, check_facts, load_case

from commitsleuth.store import Store

MUTATIONS = [Mutation(*entry, owner="facts") for entry in fact_mutations.MUTATIONS]
FACT_CASES = [case for _, case in (p.values for p in cases_of()) if case.get("facts")]


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    out = []
    for i, case in enumerate(FACT_CASES):
        root = tmp_path_factory.mktemp(f"facts{i}")
        store = Store(root / "case.duckdb")
        load_case(store, root / "logs", case)
        check_facts(store, case)  # the facts hold unmutated
        out.append((case, store))
    yield out
    for _, store in out:
        store.close()


def test_cases_state_every_fact_view():
    stated = {view for case in FACT_CASES for view in case["facts"]}
    assert stated == {"file_lineage", "attempts", "partitions", "spark_attempts"}


def test_every_fact_view_is_mutated():
    assert {object_of(m)[0] for m in MUTATIONS} == {"file_lineage", "attempts", "partitions", "spark_attempts"}


@pytest.mark.parametrize("m", MUTATIONS, ids=[m.id for m in MUTATIONS])
def test_fact_mutation_is_killed(stores, m: Mutation):
    assert Path(m.file).suffix == ".sql" and not m.equivalent
    readers = readers_of(object_of(m)[0])
    killed = []
    for case, store in stores:
        if not readers & set(case["facts"]):
            continue
        # sql_mutated takes the runner's probe store: a connection and its database's name
        probe = SimpleNamespace(con=store.con, db=store.con.execute("SELECT current_database()").fetchone()[0])
        with sql_mutated(probe, m):
            try:
                check_facts(store, case)
            except AssertionError:
                killed.append(case["name"])
    if m.survives:
        assert not killed, f"killed now by {killed}: take its 'survives:' note off"
    else:
        assert killed, f"no case's facts fail with {m.id}"
