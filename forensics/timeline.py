"""A partition's timeline: every event that touched it, from every source, in time order."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from commitsleuth.errors import InputError
from commitsleuth.forensics.paths import normalize_spec
from commitsleuth.store import Store


@dataclass
class TimelineRow:
    """One row of the ``timeline`` view, with its evidence place as ``file:line``."""

    event_id: int
    ts: dt.datetime | None
    kind: str
    actor: str | None
    path: str | None
    status: str | None
    where: str
    raw: str | None


def timeline(store: Store, table: str, partition: str | None = None) -> list[TimelineRow]:
    """Events on ``table`` (a table name or an output location) and optionally one partition."""
    rows = store.con.execute(
        "SELECT * FROM timeline WHERE (table_name = $t OR location = $t) "
        "AND ($p IS NULL OR partition_spec = $p) "
        "ORDER BY location, partition_spec, ts NULLS LAST, source, line_no, event_id",
        {"t": table, "p": normalize_spec(partition)},
    ).fetchall()
    if not rows:
        known = store.con.execute(
            "SELECT DISTINCT coalesce(table_name, location) FROM events "
            "WHERE coalesce(table_name, location) IS NOT NULL ORDER BY 1 LIMIT 10"
        ).fetchall()
        hint = "; known: " + ", ".join(k[0] for k in known) if known else ""
        what = f"{table} {partition}" if partition else table
        raise InputError(f"no events for {what}{hint}")
    return [
        TimelineRow(r[0], r[1], r[2], r[3], r[4], r[5], where_of(r[0], r[9], r[10]), r[11])
        for r in rows
    ]


def where_of(event_id: int, source: str | None, line_no: int | None) -> str:
    """``file:line`` of the event's line; the source alone, or ``event N`` when it has none."""
    if source is None:
        return f"event {event_id}"
    return f"{source}:{line_no}" if line_no is not None else source
