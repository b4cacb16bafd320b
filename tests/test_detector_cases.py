"""Every detector's YAML cases (forensics/detectors/cases/*.yml), run through the real store."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest
import yaml

from commitsleuth.forensics.analyze import analyze, evidence
from commitsleuth.forensics.detectors import DETECTORS
from commitsleuth.ingest import ingest
from commitsleuth.store import Store

from conftest import write_files

CASES_DIR = resources.files("commitsleuth.forensics.detectors").joinpath("cases")


def _cases():
    for entry in sorted(CASES_DIR.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yml"):
            doc = yaml.safe_load(entry.read_text(encoding="utf-8"))
            for case in doc["cases"]:
                yield pytest.param(doc["code"], case, id=f"{entry.name[:-4]}: {case['name']}")


def test_every_detector_has_cases():
    codes = {yaml.safe_load(e.read_text())["code"] for e in CASES_DIR.iterdir() if e.name.endswith(".yml")}
    assert codes == {d.code for d in DETECTORS}


@pytest.mark.parametrize("code,case", list(_cases()))
def test_case(tmp_path: Path, code: str, case: dict):
    logs = write_files(tmp_path / "logs", case["files"])
    with Store(tmp_path / "cases.duckdb") as store:
        report = ingest(store, [str(logs)])
        assert not report.failed, report.failed
        findings = [f for f in analyze(store) if f.code == code]
        expected = case["expect"]
        assert len(findings) == len(expected), [f.summary for f in findings]
        for f, exp in zip(findings, expected):
            if "partition" in exp:
                assert f.partition_spec == exp["partition"]
            if "location" in exp:
                assert f.location == exp["location"]
            if "actors" in exp:
                assert f.actors == exp["actors"]
            if "evidence" in exp:
                where = [
                    f"{Path(e.uri).relative_to(logs)}:{e.line_no}" for e in evidence(store, f.evidence)
                ]
                assert where == exp["evidence"]
            assert f.remedy and f.explanation
