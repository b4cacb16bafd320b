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
    rows = timeline_rows(store, table, normalize_spec(partition))
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


# The rows of the ``timeline`` view for one key, ordered. The view resolves every event's
# partition key (partition_events: table_locations, location_aliases, partition_values) before
# it can filter on it; here the few events that can carry the key are found first from their
# raw table_name/location/partition_spec, and only they are keyed, with the same joins.
_ORDER = "ORDER BY location, partition_spec, ts NULLS LAST, source, line_no, event_id"
_VIEW_ROWS = ("SELECT * FROM timeline WHERE (table_name = $t OR location = $t) "
              "AND ($p IS NULL OR partition_spec = $p) " + _ORDER)
_KEY_MAPS = """
SELECT (SELECT list(table_name ORDER BY table_name) FROM table_locations),
       (SELECT list(location ORDER BY table_name) FROM table_locations),
       (SELECT list(alias ORDER BY alias) FROM location_aliases),
       (SELECT list(location ORDER BY alias) FROM location_aliases)
"""
_CANDIDATES = """
SELECT list(event_id) FROM events
WHERE (list_contains($names::VARCHAR[], table_name) OR list_contains($locs::VARCHAR[], location))
  AND ($p IS NULL OR partition_spec = $p OR partition_spec LIKE '[%')
"""
_KEYED = """
WITH tl AS (SELECT unnest($tl_tables::VARCHAR[]) AS table_name, unnest($tl_locations::VARCHAR[]) AS location),
loc_tables AS (SELECT location, min(table_name) AS table_name FROM tl GROUP BY location),
al AS (SELECT unnest($aliases::VARCHAR[]) AS alias, unnest($alias_locations::VARCHAR[]) AS location),
keyed AS (
    SELECT e.*, coalesce(e.table_name, lt.table_name) AS part_table,
           coalesce(e.location, tl.location) AS raw_location
    FROM (SELECT * FROM events WHERE event_id BETWEEN {lo} AND {hi} AND list_contains([{ids}], event_id)) e
    LEFT JOIN tl ON e.location IS NULL AND tl.table_name = e.table_name
    LEFT JOIN loc_tables lt ON e.table_name IS NULL AND lt.location = e.location
),
specs AS (  -- partition_values, for the part tables of the values-only specs met above only
    SELECT DISTINCT coalesce(e.table_name, l.table_name) AS part_table, e.partition_spec
    FROM (SELECT * FROM events WHERE partition_spec LIKE '%=%' AND $values_only
            AND (list_contains($pv_tables::VARCHAR[], table_name)
                 OR (table_name IS NULL AND list_contains($pv_locations::VARCHAR[], location)))) e
    LEFT JOIN loc_tables l ON e.table_name IS NULL AND l.location = e.location
),
pv AS (
    SELECT part_table, partition_spec,
           '[' || array_to_string(list_transform(string_split(partition_spec, '/'),
                                                 lambda x: split_part(x, '=', 2)), ',') || ']' AS vals
    FROM specs WHERE part_table IS NOT NULL
),
e AS (
    SELECT k.*, coalesce(al.location, k.raw_location) AS part_location,
           coalesce(pv.partition_spec, k.partition_spec) AS part_spec,
           coalesce(k.attempt_id, k.thread, k.query_id, k.app_id) AS actor
    FROM keyed k
    LEFT JOIN al ON al.alias = k.raw_location
    LEFT JOIN pv ON k.partition_spec LIKE '[%' AND pv.part_table = k.part_table AND pv.vals = k.partition_spec
),
rows AS (
    SELECT e.event_id, e.ts, e.kind, e.actor, coalesce(e.target_path, e.path) AS path, e.status,
           e.part_table AS table_name, e.part_location AS location, e.part_spec AS partition_spec,
           s.uri AS source, e.line_no, e.raw
    FROM e LEFT JOIN sources s ON s.source_id = e.source_id
    WHERE e.part_location IS NOT NULL OR e.part_table IS NOT NULL
)
SELECT * FROM rows WHERE (table_name = $t OR location = $t) AND ($p IS NULL OR partition_spec = $p)
"""


def timeline_rows(store: Store, table: str, spec: str | None) -> list[tuple]:
    """The ``timeline`` view's rows for ``table`` (and partition ``spec``), in timeline order."""
    con = store.con
    tl_tables, tl_locations, aliases, alias_locations = con.execute(_KEY_MAPS).fetchone()
    tl_tables, tl_locations = tl_tables or [], tl_locations or []
    aliases, alias_locations = aliases or [], alias_locations or []
    # A row's part_location is $t when its raw location (its own, or its table's) is $t or an
    # alias of it; its part_table is $t when it names $t or has no table and a location of $t.
    raw = {table} | {a for a, loc in zip(aliases, alias_locations) if loc == table}
    names = {table} | {n for n, loc in zip(tl_tables, tl_locations) if loc in raw}
    locs = raw | {loc for n, loc in zip(tl_tables, tl_locations) if n == table}
    ids = con.execute(_CANDIDATES, {"names": sorted(names), "locs": sorted(locs), "p": spec}).fetchone()[0] or []
    if not ids:
        return []
    # partition_values only for the tables of candidates whose spec is values-only ('[v1,v2]')
    bracketed = con.execute(
        "SELECT list(DISTINCT table_name) FILTER (table_name IS NOT NULL), "
        "list(DISTINCT location) FILTER (location IS NOT NULL) FROM events "
        "WHERE list_contains($ids::BIGINT[], event_id) AND partition_spec LIKE '[%'", {"ids": ids}).fetchone()
    values_only = bool(bracketed[0] or bracketed[1])
    pv_tables = set(bracketed[0] or [])
    # their part_table may come from their location (no table named): those tables too
    loc_table = {}
    for n, loc in zip(tl_tables, tl_locations):
        loc_table[loc] = min(loc_table.get(loc, n), n)
    pv_tables |= {loc_table[loc] for loc in bracketed[1] or [] if loc in loc_table}
    pv_locations = sorted(loc for loc, n in loc_table.items() if n in pv_tables)
    # the ids written out: an IN list of constants lets DuckDB skip row groups by their min/max
    keyed = (_KEYED.replace("{ids}", ",".join(str(int(i)) for i in ids))
             .replace("{lo}", str(int(min(ids)))).replace("{hi}", str(int(max(ids)))))
    return con.execute(keyed + _ORDER, {
        "t": table, "p": spec, "tl_tables": tl_tables, "tl_locations": tl_locations,
        "aliases": aliases, "alias_locations": alias_locations, "values_only": values_only,
        "pv_tables": sorted(pv_tables), "pv_locations": pv_locations,
    }).fetchall()


def view_rows(store: Store, table: str, spec: str | None) -> list[tuple]:
    """The same rows straight from the ``timeline`` view (the reference ``timeline_rows`` is
    tested against; slow on big stores: the view keys every event before filtering)."""
    return store.con.execute(_VIEW_ROWS, {"t": table, "p": spec}).fetchall()


def where_of(event_id: int, source: str | None, line_no: int | None) -> str:
    """``file:line`` of the event's line; the source alone, or ``event N`` when it has none."""
    if source is None:
        return f"event {event_id}"
    return f"{source}:{line_no}" if line_no is not None else source
