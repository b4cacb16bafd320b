"""A partition's timeline: every event that touched it, from every source, in time order."""

from __future__ import annotations

import datetime as dt
import re
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
    """Events on ``table`` and optionally one partition. ``table`` is a table name (``db.t``, or
    ``t`` when one database has it) or an output location, with or without a trailing slash."""
    spec = normalize_spec(partition)
    rows = timeline_rows(store, table, spec)
    if not rows:
        other = other_name(store, table)
        rows = timeline_rows(store, other, spec) if other else []
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


def other_name(store: Store, table: str) -> str | None:
    """The name the events give ``table`` when it is not the one typed: a location with or
    without its trailing slash, ``db.t`` for a bare ``t`` that one database holds, ``t`` for a
    ``db.t`` whose logs name it bare. An ambiguous bare name is an error that lists the tables."""
    if "/" in table:
        other = table.rstrip("/") if table.endswith("/") else table + "/"
        found = store.con.execute("SELECT 1 FROM events WHERE location = ? LIMIT 1", [other]).fetchone()
        return other if found else None
    bare = table.rsplit(".", 1)[-1]
    names = [n for (n,) in store.con.execute(
        "SELECT DISTINCT table_name FROM events WHERE table_name = $bare OR suffix(table_name, '.' || $bare) "
        "ORDER BY 1", {"bare": bare}).fetchall() if n != table]
    if "." in table:
        return bare if bare in names else None
    if len(names) > 1:
        raise InputError(f"{table} names {len(names)} tables: {', '.join(names)}; give one as db.table")
    return names[0] if names else None


# The rows of the ``timeline`` view for one key, ordered. The view resolves every event's
# partition key (partition_events: table_locations, location_aliases, partition_values) before
# it can filter on it; here the few events that can carry the key are found first from their
# raw table_name/location/partition_spec, and only they are keyed, with the same joins.
_ORDER = "ORDER BY location, partition_spec, ts NULLS LAST, source, line_no, event_id"
# A table's whole timeline (no partition named) is one story: time first, across partitions.
_TIME_ORDER = "ORDER BY ts NULLS LAST, source, line_no, event_id"
_VIEW_ROWS = ("SELECT * FROM timeline WHERE (table_name = $t OR location = $t) "
              "AND ($p IS NULL OR partition_spec = $p) ")
# table_locations' pairs (0005_forensics.sql) for some tables or some locations only: the
# view's per-table choice of location is exact for every table whose pairs are all read.
_PAIRS = """
SELECT {out} FROM (
    SELECT table_name, location FROM events
    WHERE table_name IS NOT NULL AND location IS NOT NULL AND {direct}
    UNION ALL
    SELECT n.table_name, p.location
    FROM (SELECT DISTINCT thread, partition_spec, table_name FROM events
          WHERE table_name IS NOT NULL AND location IS NULL AND thread IS NOT NULL
            AND partition_spec IS NOT NULL AND {named}) n
    JOIN (SELECT DISTINCT thread, partition_spec, location FROM events
          WHERE table_name IS NULL AND location IS NOT NULL AND thread IS NOT NULL
            AND partition_spec IS NOT NULL AND {placed}) p
      ON n.thread = p.thread AND n.partition_spec = p.partition_spec
) pairs
"""
_BARE = r"regexp_replace(location, '^[A-Za-z][A-Za-z0-9+.-]*://[^/]*', '')"


class _KeyMaps:
    """The parts of table_locations and location_aliases one timeline call needs, read with
    filters on the raw columns instead of over every event."""

    def __init__(self, con):
        self.con = con
        self.location_of: dict[str, str] = {}  # table -> its location (table_locations)

    def tables_at(self, locations: set[str]) -> set[str]:
        """Tables with a pair at any of ``locations``."""
        if not locations:
            return set()
        sql = _PAIRS.format(out="list(DISTINCT table_name)", direct="list_contains($l::VARCHAR[], location)",
                            named="true", placed="list_contains($l::VARCHAR[], location)")
        return set(self.con.execute(sql, {"l": sorted(locations)}).fetchone()[0] or [])

    def read(self, tables: set[str]) -> None:
        """table_locations' row of each of ``tables`` (all their pairs read: exact)."""
        todo = sorted(t for t in tables if t not in self.location_of)
        if not todo:
            return
        sql = _PAIRS.format(out="table_name, location, count(*) AS n",
                            direct="list_contains($t::VARCHAR[], table_name)",
                            named="list_contains($t::VARCHAR[], table_name)", placed="true") + " GROUP BY ALL"
        rows = self.con.execute(f"SELECT table_name, arg_max(location, n) FROM ({sql}) GROUP BY table_name",
                                {"t": todo}).fetchall()
        self.location_of.update(rows)
        for t in todo:
            self.location_of.setdefault(t, None)

    def complete_at(self, locations: set[str]) -> None:
        """Every table whose location is one of ``locations`` read (loc_tables exact there)."""
        self.read(self.tables_at(locations))

    def table_at(self, location: str) -> str | None:
        """loc_tables: the least table name at ``location`` (after ``complete_at``)."""
        return min((t for t, loc in self.location_of.items() if loc == location), default=None)

    def aliases(self, locations: set[str]) -> dict[str, str]:
        """location_aliases for ``locations``: the least hdfs:// or viewfs:// location with the
        same path, for each that is itself an event location."""
        bare = sorted(loc for loc in locations if loc)
        if not bare:
            return {}
        suffixes = " OR ".join(f"suffix(location, ${i})" for i in range(1, len(bare) + 1))
        found = self.con.execute(
            f"SELECT {_BARE} AS bare, min(location) FROM events "
            f"WHERE (location LIKE 'hdfs://%' OR location LIKE 'viewfs://%') AND ({suffixes}) "
            f"GROUP BY ALL", bare).fetchall()
        named = {b: loc for b, loc in found if b in set(bare)}
        if not named:
            return {}
        known = set(self.con.execute("SELECT list(DISTINCT location) FROM events WHERE list_contains($l::VARCHAR[], location)",
                                     {"l": sorted(named)}).fetchone()[0] or [])
        return {b: loc for b, loc in named.items() if b in known}


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
    FROM (SELECT * FROM events WHERE event_id BETWEEN {lo} AND {hi} AND {in}) e
    LEFT JOIN tl ON e.location IS NULL AND tl.table_name = e.table_name
    LEFT JOIN loc_tables lt ON e.table_name IS NULL AND lt.location = e.location
),
pv AS (  -- partition_values itself (its key names for values-only specs), only when one is met above
    SELECT part_table, partition_spec, vals FROM partition_values
    WHERE $values_only AND list_contains($pv_tables::VARCHAR[], part_table)
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
    maps = _KeyMaps(con)
    maps.read({table})
    # A row's part_location is $t when its raw location (its own, or its table's) is $t or an
    # alias of it; its part_table is $t when it names $t or has no table and a location of $t.
    bare = re.sub(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/]*", "", table) if re.match(r"^(hdfs|viewfs)://", table) else None
    raw = {table} | {b for b, loc in maps.aliases({bare} if bare else set()).items() if loc == table}
    own = maps.location_of.get(table)
    locs = raw | ({own} if own else set())
    maps.complete_at(locs)
    names = {table} | {t for t, loc in maps.location_of.items() if loc in raw}
    ids = con.execute(_CANDIDATES, {"names": sorted(names), "locs": sorted(locs), "p": spec}).fetchone()[0] or []
    if not ids:
        return []
    # a short id list written out as constants lets DuckDB skip row groups by their min/max
    id_list = ",".join(str(int(i)) for i in ids) if len(ids) <= 5000 else "SELECT unnest($ids::BIGINT[])"
    id_list = f"[{id_list}]" if len(ids) <= 5000 else f"({id_list})"
    cand = con.execute(
        f"SELECT list(DISTINCT table_name) FILTER (table_name IS NOT NULL AND location IS NULL), "
        f"list(DISTINCT location) FILTER (location IS NOT NULL), "
        f"list(DISTINCT table_name) FILTER (table_name IS NOT NULL AND partition_spec LIKE '[%'), "
        f"list(DISTINCT location) FILTER (table_name IS NULL AND partition_spec LIKE '[%') "
        f"FROM events WHERE event_id BETWEEN {min(ids)} AND {max(ids)} AND {_in(id_list)}", _ids(ids)
    ).fetchone()
    placeless, placed, bracketed_tables, bracketed_locations = (set(c or []) for c in cand)
    maps.read(placeless)
    raw_locations = placed | {maps.location_of[t] for t in placeless if maps.location_of.get(t)}
    aliases = maps.aliases(raw_locations)
    # partition_values only for the tables of candidates whose spec is values-only ('[v1,v2]')
    values_only = bool(bracketed_tables or bracketed_locations)
    # (their own locations need no reading: loc_tables is exact at ``locs`` already, where every
    # table-less candidate is, and tl matters only for the placeless tables read above)
    pv_tables = bracketed_tables | {maps.table_at(loc) for loc in bracketed_locations} - {None}
    tl = sorted((t, loc) for t, loc in maps.location_of.items() if loc is not None)
    keyed = _KEYED.replace("{in}", _in(id_list)).replace("{lo}", str(min(ids))).replace("{hi}", str(max(ids)))
    return con.execute(keyed + (_ORDER if spec else _TIME_ORDER), {**_ids(ids),
        "t": table, "p": spec, "tl_tables": [t for t, _ in tl], "tl_locations": [loc for _, loc in tl],
        "aliases": sorted(aliases), "alias_locations": [aliases[a] for a in sorted(aliases)],
        "values_only": values_only, "pv_tables": sorted(pv_tables),
    }).fetchall()


def _in(id_list: str) -> str:
    return f"list_contains({id_list}, event_id)" if id_list.startswith("[") else f"event_id IN {id_list}"


def _ids(ids: list[int]) -> dict:
    return {"ids": ids} if len(ids) > 5000 else {}


def view_rows(store: Store, table: str, spec: str | None) -> list[tuple]:
    """The same rows straight from the ``timeline`` view (the reference ``timeline_rows`` is
    tested against; slow on big stores: the view keys every event before filtering)."""
    return store.con.execute(_VIEW_ROWS + (_ORDER if spec else _TIME_ORDER), {"t": table, "p": spec}).fetchall()


def where_of(event_id: int, source: str | None, line_no: int | None) -> str:
    """``file:line`` of the event's line; the source alone, or ``event N`` when it has none."""
    if source is None:
        return f"event {event_id}"
    return f"{source}:{line_no}" if line_no is not None else source
