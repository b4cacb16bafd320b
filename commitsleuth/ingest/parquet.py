"""Load the Spark engine's Parquet output (events, sources, rejects) into the DuckDB store.

Loading, not a live ATTACH: the store stays one self-contained file the duckdb shell opens.
Idempotent: a source row already in the store (same URI, fingerprint, size and lines) is not
loaded twice, and a file that grew between two Spark runs continues its earlier source.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from commitsleuth.errors import InputError
from commitsleuth.model import EVENT_COLUMNS
from commitsleuth.parsers.lakehouse import forget_table, table_formats
from commitsleuth.store import Store


@dataclass
class AttachReport:
    loaded: list[dict] = field(default_factory=list)
    already: int = 0
    known: int = 0  # Spark events the store held already (live capture, a spool, a log)

    @property
    def events(self) -> int:
        return sum(s["events"] for s in self.loaded) - self.known


def _glob(directory: str, part: str) -> str | None:
    base = Path(directory) / part
    return str(base / "**" / "*.parquet") if base.is_dir() and any(base.rglob("*.parquet")) else None


def attach_parquet(store: Store, directory: str | os.PathLike) -> AttachReport:
    directory = str(directory).removeprefix("file://").removeprefix("file:")
    sources_glob = _glob(directory, "sources")
    if sources_glob is None:
        raise InputError(f"no Spark engine output in {directory} (expected {directory}/sources/*.parquet)")
    con = store.con
    events_glob = _glob(directory, "events")
    if events_glob:
        _check_columns(con, directory, events_glob)
    # runs in order (run ids start with their time), then paths in order, as the local engine reads
    # them: of two copies under other names the first path is loaded, whichever task ended first
    cur = con.execute("SELECT * FROM read_parquet(?) ORDER BY run_id, uri", [sources_glob])
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, r)) for r in cur.fetchall()]
    report = AttachReport()
    mapping: list[tuple[int, str, int]] = []  # (source_uid, run_id, source_id in the store)
    for r in rows:
        sid = _attach_source(store, r)
        if sid is None:
            report.already += 1
            continue
        mapping.append((r["source_uid"], r["run_id"], sid))
        report.loaded.append(r)
    rejects_glob = _glob(directory, "rejects")
    if not mapping:
        return report
    con.execute("CREATE OR REPLACE TEMP TABLE attach_map (uid BIGINT, run_id VARCHAR, sid BIGINT)")
    con.executemany("INSERT INTO attach_map VALUES (?, ?, ?)", mapping)
    if events_glob:
        first = store.next_event_id()
        cols = ", ".join(f"e.{c}" for c in EVENT_COLUMNS[1:] if c != "source_id")
        con.execute(
            f"""
            CREATE OR REPLACE TEMP TABLE attach_events AS
            SELECT {first - 1} + row_number() OVER (ORDER BY m.sid, e.line_no, e.byte_offset, e.kind) AS event_id,
                   m.sid AS source_id, {cols}
            FROM read_parquet(?, hive_partitioning = true) e
            JOIN attach_map m ON m.uid = e.source_id AND m.run_id = e.run_id
            """,
            [events_glob],
        )
        report.known = _drop_known(con)
        con.execute("INSERT INTO events BY NAME SELECT * FROM attach_events")
        con.execute("DROP TABLE attach_events")
        store.events_added()
    if rejects_glob:
        cur = con.execute(
            "SELECT m.sid, r.reason, r.count, r.first_line, r.sample FROM read_parquet(?) r "
            "JOIN attach_map m ON m.uid = r.source_uid AND m.run_id = r.run_id", [rejects_glob])
        for sid, reason, count, first_line, sample in cur.fetchall():
            store.add_rejects(sid, {reason: [count, first_line, sample]})
    con.execute("DROP TABLE attach_map")
    return report


def _check_columns(con, directory: str, events_glob: str) -> None:
    """Output of an older commitsleuth lacks columns added since (``event_key``, say): loaded
    with nulls there, its Spark events would double those the store holds already, so nothing
    is loaded and the user is told how to rewrite it. Files are checked one by one: later runs
    of the engine add files beside an older run's."""
    wanted = [c for c in EVENT_COLUMNS if c != "event_id"]
    files = con.execute("SELECT file_name, list(name) FROM parquet_schema(?) GROUP BY ALL ORDER BY 1",
                        [events_glob]).fetchall()
    for file_name, names in files:
        missing = [c for c in wanted if c not in names]
        if missing:
            raise InputError(f"{file_name} was written by an older commitsleuth (no column "
                             f"{', '.join(missing)}): run `commitsleuth ingest --engine spark` on "
                             f"the logs again, into a new output directory, and attach that")


def _drop_known(con) -> int:
    """Drop from ``attach_events`` the Spark events the store holds already, and all but the
    first of one event several loaded sources hold (ingest's rule: docs/schema.md "One Spark
    event, one row"); their sources' ``events`` count what they add. Returns the rows dropped."""
    dropped = con.execute(
        """
        DELETE FROM attach_events a WHERE a.event_key IS NOT NULL AND (
            EXISTS (SELECT 1 FROM events s WHERE s.event_key = a.event_key AND s.app_id IS NOT DISTINCT FROM a.app_id)
            OR a.event_id > (SELECT min(b.event_id) FROM attach_events b
                             WHERE b.event_key = a.event_key AND b.app_id IS NOT DISTINCT FROM a.app_id))
        RETURNING source_id
        """).fetchall()
    for sid, n in Counter(sid for (sid,) in dropped).items():
        con.execute("UPDATE sources SET events = events - ? WHERE source_id = ?", [n, sid])
    return len(dropped)


_SOURCE_VALUES = ("format", "fingerprint", "size_bytes", "bytes_read", "lines", "status", "reason", "finished_at")


def _attach_source(store: Store, r: dict) -> int | None:
    """The store's source id for a Parquet source row, or None when it is already there."""
    existing = store.find_source(r["uri"])
    if r["format"] in {f.name for f in table_formats()}:
        # a table's log is read whole: a new read replaces the last (events stored once)
        if existing is not None and existing["fingerprint"] == r["fingerprint"]:
            return None
        forget_table(store, r["uri"])
        return store.add_source(r["uri"], "table_log", **{k: r[k] for k in _SOURCE_VALUES}, events=r["events"],
                                rejected=r["rejected"], started_at=r["started_at"])
    if existing is not None and (existing["fingerprint"], existing["size_bytes"], existing["lines"]) == (
            r["fingerprint"], r["size_bytes"], r["lines"]):
        return None
    copy = store.find_source_by_fingerprint(r["fingerprint"]) if r["fingerprint"] else None
    if copy is not None and copy["uri"] != r["uri"] and copy["size_bytes"] == r["size_bytes"]:
        return None  # the same file under another name: the local engine reads it once too
    values = {k: r[k] for k in _SOURCE_VALUES}
    if existing is not None and r["first_line"] > 1 and existing["status"] == "ok":
        # the record held back at the last run's checkpoint (its last line had no newline) was
        # parsed again whole by this run: its earlier events retire, as the local engine's do
        retired = store.retire_from(existing["source_id"], existing["bytes_read"]) if (
            existing["bytes_read"] is not None and existing["bytes_read"] < existing["size_bytes"]) else 0
        store.update_source(existing["source_id"], **values, events=existing["events"] - retired + r["events"],
                            rejected=existing["rejected"] + r["rejected"])
        return existing["source_id"]
    return store.add_source(r["uri"], "file", **values, events=r["events"], rejected=r["rejected"],
                            started_at=r["started_at"])
