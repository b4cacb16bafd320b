"""Run every detector over the store, replace the findings table, and read findings back."""

from __future__ import annotations

import json
import re
from contextlib import contextmanager
from dataclasses import dataclass

import pyarrow as pa

from commitsleuth.forensics.actors import actor_objects
from commitsleuth.forensics.attempt_labels import relabel
from commitsleuth.forensics.detectors import DETECTORS, Finding, severity_rank
from commitsleuth.forensics.remedies import fit_findings
from commitsleuth.forensics.timeline import where_of
from commitsleuth.redact import redact_table
from commitsleuth.store import Store


@dataclass
class Evidence:
    event_id: int
    uri: str | None
    line_no: int | None
    ts: object
    kind: str
    actor: str | None
    raw: str | None
    path: str | None = None
    size: int | None = None

    @property
    def text(self) -> str:
        """The line as logged; for an event without one (a listing, a live event) what it says."""
        if self.raw:
            return self.raw.splitlines()[0]
        facts = [self.kind]
        if self.size is not None:
            facts.append(f"{self.size} bytes")
        if self.ts is not None:
            facts.append(f"modified {self.ts}" if self.kind == "file" else str(self.ts))
        return ", ".join(facts)

    @property
    def where(self) -> str:
        """``file:line`` of a text source; the file itself for a listing; ``event N`` otherwise."""
        if self.line_no is None and self.raw is None and self.path:
            return self.path
        return where_of(self.event_id, self.uri, self.line_no)


# In dependency order: file_attempts reads spark_task_attempts.
_SHARED_VIEWS = ("table_locations", "partition_values", "spark_task_attempts", "file_attempts")
_ON_SHARED = ("file_attempts",)  # reads spark_task_attempts five times


@contextmanager
def prepared(store: Store):
    """Detectors join through table_locations and partition_values (aggregates over all events),
    and the Spark attempts and file ties (migration 0018): compute them once. A temp table
    shadows the view of the same name for this connection only."""
    for view in _SHARED_VIEWS:
        body = f"SELECT * FROM main.{view}"
        if view in _ON_SHARED:  # a view inside a view binds to main's: run its text over the temp tables
            sql = store.con.execute("SELECT sql FROM duckdb_views() WHERE view_name = ? AND schema_name = 'main'",
                                    [view]).fetchone()[0]
            body = re.sub(r"^CREATE VIEW \S+ AS ", "", sql).rstrip().rstrip(";")
        store.con.execute(f"CREATE OR REPLACE TEMP TABLE {view} AS {body}")
    try:
        yield
    finally:
        for view in _SHARED_VIEWS:
            store.con.execute(f"DROP TABLE IF EXISTS temp.{view}")


def analyze(store: Store, codes: list[str] | None = None) -> list[Finding]:
    """Findings of all (or the named) detectors, most severe first; stored in ``findings``."""
    findings: list[Finding] = []
    with prepared(store):
        for det in selected(codes):
            findings.extend(det.run(store.con))
        return finish(store, findings)


def selected(codes: list[str] | None) -> list:
    """The detectors named by code or name (all of them when none is named), in report order."""
    return [d() for d in DETECTORS if not codes or d.code in codes or d.name in codes]


def finish(store: Store, findings: list[Finding]) -> list[Finding]:
    """Who each finding names, its cause and remedy, in report order, stored in ``findings``:
    lookups in the store by the findings' evidence and actors (both engines end here)."""
    named = actor_objects(store.con, findings)
    for f, objects in zip(findings, named):
        f.actor_objects = objects
        spark = [o for o in objects if o["kind"] == "spark_attempt"]
        if spark and not (f.detail or {}).get("attempts"):  # every finding names its Spark attempts
            f.detail = {**(f.detail or {}), "attempts": spark}
        relabel(f, objects)
    fit_findings(store.con, findings)  # cause and remedy for the engine and writer the evidence shows
    findings = ordered(findings)
    _save(store, findings)
    return findings


def ordered(findings: list[Finding]) -> list[Finding]:
    """Findings in report order: most severe first, then by code, location and partition."""
    return sorted(findings, key=lambda f: (-severity_rank(f.severity), f.code, f.location or "", f.partition_spec or ""))


def _save(store: Store, findings: list[Finding]) -> None:
    rows = {
        "finding_id": list(range(1, len(findings) + 1)),
        "code": [f.code for f in findings],
        "name": [f.name for f in findings],
        "severity": [f.severity for f in findings],
        "table_name": [f.table_name for f in findings],
        "location": [f.location for f in findings],
        "partition_spec": [f.partition_spec for f in findings],
        "window_start": [f.window_start for f in findings],
        "window_end": [f.window_end for f in findings],
        "actors": [f.actors for f in findings],
        "evidence": [f.evidence for f in findings],
        "summary": [f.summary for f in findings],
        "explanation": [f.explanation for f in findings],
        "remedy": [f.remedy for f in findings],
        "detail": [json.dumps(f.detail, default=str) if f.detail else None for f in findings],
        "actor_objects": [json.dumps(f.actor_objects, default=str) if f.actor_objects else None
                          for f in findings],
    }
    # findings quote paths and names from events: through the one redaction layer too
    batch = redact_table(pa.table(
        rows,
        schema=pa.schema(
            [
                ("finding_id", pa.int32()), ("code", pa.string()), ("name", pa.string()),
                ("severity", pa.string()), ("table_name", pa.string()), ("location", pa.string()),
                ("partition_spec", pa.string()), ("window_start", pa.timestamp("us")),
                ("window_end", pa.timestamp("us")), ("actors", pa.list_(pa.string())),
                ("evidence", pa.list_(pa.int64())), ("summary", pa.string()),
                ("explanation", pa.string()), ("remedy", pa.string()), ("detail", pa.string()),
                ("actor_objects", pa.string()),
            ]
        ),
    ))
    con = store.con
    con.execute("BEGIN")
    try:
        con.execute("DELETE FROM findings")
        con.execute("INSERT INTO findings BY NAME SELECT * FROM batch")
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise


def evidence(store: Store, event_ids: list[int]) -> list[Evidence]:
    """The evidence lines of a finding, in time then file order."""
    if not event_ids:
        return []
    rows = store.con.execute(
        """
        SELECT e.event_id, s.uri, e.line_no, e.ts, e.kind,
               coalesce(e.attempt_id, e.thread, e.query_id, e.app_id), e.raw,
               coalesce(e.target_path, e.path), e.size
        FROM events e LEFT JOIN sources s ON s.source_id = e.source_id
        WHERE e.event_id IN (SELECT unnest(?))
        ORDER BY e.ts NULLS LAST, s.uri, e.line_no, e.event_id
        """,
        [event_ids],
    ).fetchall()
    return [Evidence(*r) for r in rows]


def stored_findings(store: Store) -> list[Finding]:
    rows = store.con.execute(
        """SELECT code, name, severity, summary, location, partition_spec, table_name, window_start,
                  window_end, actors, evidence, explanation, remedy, detail, actor_objects
           FROM findings ORDER BY finding_id"""
    ).fetchall()
    out = []
    for r in rows:
        f = Finding(*r[:13], detail=json.loads(r[13]) if r[13] else None,
                    actor_objects=json.loads(r[14]) if r[14] else None)
        f.actors, f.evidence = list(f.actors or []), list(f.evidence or [])
        out.append(f)
    return out
