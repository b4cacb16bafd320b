"""The demo: ingest the shipped sample logs into a fresh store, analyze, show the findings."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from commitsleuth.forensics.analyze import analyze
from commitsleuth.forensics.detectors import Finding
from commitsleuth.ingest import IngestReport, ingest
from commitsleuth.store import Store


def sample_dir() -> Path:
    return Path(str(resources.files("commitsleuth").joinpath("samples")))


def run_demo(db_path: str | Path) -> tuple[Store, IngestReport, list[Finding]]:
    """A fresh store at ``db_path`` holding the samples and their findings (caller closes it)."""
    db_path = Path(db_path)
    for leftover in (db_path, Path(f"{db_path}.wal")):
        if leftover.exists():
            leftover.unlink()
    store = Store(db_path)
    report = ingest(store, [str(p) for p in sorted(sample_dir().glob("*/logs"))])
    findings = analyze(store)
    return store, report, findings
