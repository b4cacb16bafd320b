"""The detection matrix (tests/matrix/rows.py): every row's evidence, written from the published
formats, through the real parsers into a real DuckDB store, analyzed; the findings' code,
partition and actors compared with the row's.

Live capture rows: a real PySpark run per row would take minutes, so the spool is generated:
the exact JsonProtocol JSON Spark's listener writes, read by the same decoder live capture uses
(FastEventLog over the spool's bytes) into a ``live`` source, plus the listing live capture
takes of the write's location when its SQL execution ends (``file`` events of an inventory
source, tagged with the application and, when written during it, the execution).

Rows that fail on today's main are real gaps of the fact model and detectors, not skipped:
EXPECTED_TO_FAIL_TODAY lists them and they must still fail (strict). A row that starts passing
fails the test until its id is taken off the list.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pytest

from commitsleuth.forensics.analyze import analyze
from commitsleuth.forensics.audit import audit, record_listing, walk_local
from commitsleuth.forensics.paths import enrich
from commitsleuth.ingest import ingest
from commitsleuth.ingest.eventlog_fast import FastEventLog
from commitsleuth.model import Event
from commitsleuth.parsers.base import ParseStats, SourceContext
from commitsleuth.store import Store

from conftest import write_files
from matrix import rows as R

# Rows the fact model and detectors of today's main get wrong (issue 30). Each must still fail;
# take a row off when it passes.
EXPECTED_TO_FAIL_TODAY: set[str] = set()  # none today (docs/detection-matrix.md)


def load_live(store: Store, row: R.Row, spool_dir: Path) -> None:
    """What live capture writes for the row: its spool's events (through the decoder capture uses)
    as a ``live`` source, and the listing it takes of the write's location."""
    spool = spool_dir / f"{R.APP}.inprogress"
    spool.parent.mkdir(parents=True, exist_ok=True)
    data = ("\n".join(json.dumps(e, separators=(",", ":")) for e in row.live) + "\n").encode()
    spool.write_bytes(data)
    table = FastEventLog(SourceContext(uri=str(spool)), ParseStats()).table(0, data)
    sid = store.add_source(f"live:{R.APP}", "live", format="spark-live")
    table = table.set_column(table.schema.get_field_index("source_id"), "source_id",
                             pa.array([sid] * table.num_rows, pa.int64()))
    store.write_arrow(store.unseen_events(table, own_source=True))
    if row.inventory:
        inv = store.add_source(R.LOC, "inventory", format="hadoop-listing")
        ends = [e["time"] for e in row.live if e["Event"].endswith("SQLExecutionEnd")]
        evs = []
        for path, modified, size in row.inventory:
            ev = enrich(Event("file", ts=modified, path=path, size=size, source_id=inv, app_id=R.APP,
                              detail={"listed_for": R.LOC}))
            if ends and R.F.ms(modified) <= ends[0] + 1000:
                ev.query_id = "0"  # written while that SQL write ran (listener/inventory.py)
            evs.append(ev)
        store.write_events(evs)


def write_listing(root: Path, row: R.Row) -> Path:
    """The row's table directory, each file with its modification time."""
    table = root / "warehouse" / "sales.db" / "orders"
    for rel, modified, text in row.listing:
        p = table / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text.replace(R.ROOT, str(table)), encoding="utf-8")
        t = R.F.ms(modified) / 1000
        os.utime(p, (t, t))
    return table


def load_row(store: Store, row: R.Row, tmp: Path) -> Path | None:
    """The row's evidence into ``store``; the table directory to ``audit``, when it has one."""
    if row.files:
        report = ingest(store, [str(write_files(tmp / "logs", row.files))])
        assert not report.failed, report.failed
    if row.live:
        load_live(store, row, tmp / "spool")
    return write_listing(tmp / "listing", row) if row.listing else None


def findings_of(row: R.Row, tmp: Path) -> list:
    with Store(tmp / "row.duckdb") as store:
        listing = load_row(store, row, tmp)
        return audit(store, str(listing)).findings if listing else analyze(store)


def who_text(f) -> str:
    return " | ".join(f.actors) + " | " + json.dumps(f.actor_objects or [], default=str)


def verdict(row: R.Row, findings: list) -> list[str]:
    """What is wrong with the findings for this row (empty: the row passes)."""
    wrong = []
    mine = [f for f in findings if f.code in row.codes]
    if not row.positive:
        return [f"negative twin has {f.code} {f.partition_spec}: {f.summary}" for f in mine]
    for e in row.expect:
        hits = [f for f in mine if f.code == e.code and (e.partition is None or f.partition_spec == e.partition)]
        if not hits:
            wrong.append(f"no {e.code} on {e.partition}; got {[(f.code, f.partition_spec, f.summary) for f in findings]}")
            continue
        missing = [w for w in e.who if not any(w in who_text(f) for f in hits)]
        missing += [f"detail {k}={v!r}" for k, v in e.detail.items()
                    if not any((f.detail or {}).get(k) == v for f in hits)]
        if missing:
            wrong.append(f"{e.code} on {e.partition} does not name {missing}: {[who_text(f) for f in hits]}")
    return wrong


@pytest.mark.parametrize("row", R.ROWS, ids=[r.id for r in R.ROWS])
def test_row(row: R.Row, tmp_path: Path):
    wrong = verdict(row, findings_of(row, tmp_path))
    if row.id in EXPECTED_TO_FAIL_TODAY:
        assert wrong, f"{row.id} passes now: take it off EXPECTED_TO_FAIL_TODAY"
    else:
        assert not wrong, wrong


def test_every_row_has_its_twin_and_expected_failures_are_rows():
    ids = R.by_id()
    for row in R.ROWS:
        twin = row.id.rsplit("/", 1)[0] + ("/negative" if row.positive else "/positive")
        assert twin in ids, row.id
        assert row.expect if row.positive else not row.expect, row.id
    assert EXPECTED_TO_FAIL_TODAY <= set(ids)


def test_every_source_alone_decides_a_row():
    """Each source has rows where it alone is the evidence and the row passes today: removing
    that source's contribution to the fact model fails them."""
    alone = {r.source for r in R.ROWS if "+" not in r.source and r.positive and r.id not in EXPECTED_TO_FAIL_TODAY}
    assert {"hive-log", "mr-log", "spark-eventlog", "live", "hdfs-audit", "s3", "listing"} <= alone


ALONE = ("hive-log", "mr-log", "spark-eventlog", "live", "hdfs-audit", "s3", "listing")


@pytest.mark.parametrize("source", ALONE)
def test_removing_a_source_fails_a_row(source: str, tmp_path: Path):
    """Removing one source's contribution to the fact model (its events) fails a row that passes
    with it: the first passing positive row where it is the only evidence."""
    row = next(r for r in R.ROWS if r.source == source and r.positive and r.id not in EXPECTED_TO_FAIL_TODAY)
    with Store(tmp_path / "row.duckdb") as store:
        listing = load_row(store, row, tmp_path)
        if listing:
            record_listing(store, str(listing), walk_local(str(listing)))
        assert not verdict(row, analyze(store)), row.id
        store.con.execute("DELETE FROM events")  # the row's only source
        assert verdict(row, analyze(store)), row.id
