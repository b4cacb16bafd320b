"""Every detector's YAML cases (forensics/detectors/cases/*.yml), run through the real store.

A case gives ``scenario:`` (a shared fixture in cases/scenarios/, which ``replace:`` and
``append:`` vary), ``files:`` (real log lines, ingested by the real parsers) and/or ``events:``
(canonical event dicts, for scenarios whose lines no parser reads yet; enriched like ingest
does, then written with Store.write_events); ``{root}`` in either stands for the directory the
files are written to. ``expect`` lists the detector's findings in report
order; evidence is ``file:line`` for files and ``events:N`` (1-based) for the case's events;
``remedy`` and ``explanation`` are text the finding's remedy and cause must hold; ``objects``
lists, per actor in order, keys its actor object must have with those values.
``facts`` (optional) gives rows the fact model must hold for the case, by view (``partitions``,
``file_lineage``, ``attempts``, ``spark_attempts``): each a list of rows, every row naming the
same columns; the view's rows projected on those columns, sorted, must equal them exactly.
"""

from __future__ import annotations

import datetime as dt
from importlib import resources
from pathlib import Path

import pytest
import yaml

from commitsleuth.forensics.analyze import analyze, evidence
from commitsleuth.forensics.detectors import DETECTORS
from commitsleuth.forensics.paths import enrich
from commitsleuth.ingest import ingest
from commitsleuth.model import Event
from commitsleuth.store import Store

from conftest import write_files

CASES_DIR = resources.files("commitsleuth.forensics.detectors").joinpath("cases")
SCENARIOS_DIR = CASES_DIR.joinpath("scenarios")


def scenario(name: str) -> dict:
    """A named fixture (cases/scenarios/NAME.yml) several detectors' cases share."""
    return yaml.safe_load(SCENARIOS_DIR.joinpath(f"{name}.yml").read_text(encoding="utf-8"))


def cases_of(code: str | None = None):
    """``(code, case)`` for every YAML case (of one detector when ``code`` is given)."""
    for entry in sorted(CASES_DIR.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yml"):
            doc = yaml.safe_load(entry.read_text(encoding="utf-8"))
            for case in doc["cases"] if code in (None, doc["code"]) else ():
                yield pytest.param(doc["code"], case, id=f"{entry.name[:-4]}: {case['name']}")


def case_event(spec: dict) -> Event:
    spec = dict(spec)
    if isinstance(spec.get("ts"), str):
        spec["ts"] = dt.datetime.fromisoformat(spec["ts"])
    return enrich(Event(**spec))


def variant(files: dict, replace: dict, append: dict) -> dict:
    """A scenario's files with a case's ``replace:`` (old -> new, each must occur) and ``append:``."""
    out = dict(files)
    for old, new in replace.items():
        hits = [name for name, text in out.items() if old in text]
        assert hits, f"replace: {old!r} is in no file of the scenario"
        for name in hits:
            out[name] = out[name].replace(old, new)
    for name, text in append.items():
        out[name] = out.get(name, "") + text
    return out


def load_case(store: Store, root: Path, case: dict) -> dict[int, str]:
    """Ingest a case into ``store``; returns event_id -> ``events:N`` for its ``events:``."""
    if "scenario" in case:
        case = {**scenario(case["scenario"]), **{k: v for k, v in case.items() if k != "scenario"}}
        case["files"] = variant(case.get("files") or {}, case.get("replace") or {}, case.get("append") or {})
    if case.get("files"):
        # ``{root}`` in a file too: a storage audit line names a table's files by absolute path
        files = {name: text.replace("{root}", str(root)) for name, text in case["files"].items()}
        report = ingest(store, [str(write_files(root, files))])
        assert not report.failed, report.failed
    labels = {}
    if case.get("events"):
        first = store.next_event_id()
        # ``{root}`` in an event stands for the directory the case's files are written to (a
        # table's root, whose listing the events are)
        events = [{k: v.replace("{root}", str(root)) if isinstance(v, str) else v for k, v in e.items()}
                  for e in case["events"]]
        store.write_events([case_event(e) for e in events])
        labels = {first + i: f"events:{i + 1}" for i in range(len(case["events"]))}
    return labels


def test_every_detector_has_cases():
    docs = [yaml.safe_load(e.read_text()) for e in CASES_DIR.iterdir() if e.name.endswith(".yml")]
    assert {d["code"] for d in docs} == {d.code for d in DETECTORS}
    for doc in docs:  # positive and negative twins for every detector
        assert any(c["expect"] for c in doc["cases"]) and any(not c["expect"] for c in doc["cases"]), doc["code"]


FACT_VIEWS = ("partitions", "file_lineage", "attempts", "spark_attempts")


def fact_rows(store: Store, view: str, columns: list[str]) -> list[dict]:
    """A fact view's rows projected on ``columns``, as YAML writes them (lists, text), sorted."""
    assert view in FACT_VIEWS and columns and all(c.isidentifier() for c in columns), (view, columns)
    cols = ", ".join(f'"{c}"' for c in columns)
    rows = store.con.execute(f"SELECT {cols} FROM {view}").fetchall()
    out = [{c: _plain(v) for c, v in zip(columns, r)} for r in rows]
    return sorted(out, key=repr)


def _plain(v):
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (dt.datetime, dt.date)):
        return str(v)
    return v


def check_facts(store: Store, case: dict) -> None:
    """Assert a case's ``facts``: each view's rows on the columns the case names."""
    for view, rows in (case.get("facts") or {}).items():
        if not rows:
            assert view in FACT_VIEWS and store.con.execute(f"SELECT count(*) FROM {view}").fetchone()[0] == 0, view
            continue
        columns = list(rows[0])
        want = sorted(({c: _plain(r.get(c)) for c in columns} for r in rows), key=repr)
        got = fact_rows(store, view, columns)
        assert got == want, (view, got)


def check(store: Store, logs: Path, labels: dict[int, str], case: dict, findings: list) -> None:
    """Assert a case's ``expect`` of its detector's ``findings`` (in report order), and its ``facts``."""
    check_facts(store, case)
    expected = case["expect"]
    assert len(findings) == len(expected), [f.summary for f in findings]
    for f, exp in zip(findings, expected):
        for key, attr in (("partition", "partition_spec"), ("location", "location"),
                          ("table", "table_name"), ("actors", "actors"), ("severity", "severity")):
            if key in exp:
                assert getattr(f, attr) == exp[key], (key, f.summary)
        if "summary" in exp:
            assert exp["summary"] in f.summary
        for key, value in exp.get("detail", {}).items():
            assert f.detail.get(key) == value, (key, f.summary)
        if "evidence" in exp:
            where = [
                labels.get(e.event_id) or f"{Path(e.uri).relative_to(logs)}:{e.line_no}"
                for e in evidence(store, f.evidence)
            ]
            assert where == exp["evidence"]
        # the cause and remedy fitted to the finding's engine and writer (forensics/remedies.py)
        for key in ("remedy", "explanation"):
            if key in exp:
                assert exp[key] in (getattr(f, key) or ""), (key, getattr(f, key))
        # who the finding names, as objects (forensics/actors.py): each given key of each actor's
        for i, want in enumerate(exp.get("objects") or []):
            got = (f.actor_objects or [])[i] if i < len(f.actor_objects or []) else {}
            assert {k: _plain(got.get(k)) for k in want} == want, ("objects", i, got)
        assert f.remedy and f.explanation


@pytest.mark.parametrize("code,case", list(cases_of()))
def test_case(tmp_path: Path, code: str, case: dict):
    logs = tmp_path / "logs"
    with Store(tmp_path / "cases.duckdb") as store:
        labels = load_case(store, logs, case)
        check(store, logs, labels, case, analyze(store, [code]))
