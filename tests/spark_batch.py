"""Many inputs in one store, so one Spark analyze compares them all (tests/test_spark_equivalence.py).

Spark's cost per analyze is planning and starting ~80-190 jobs, whatever the data; inputs of a
few dozen events each cost the same. So each input is loaded into its own store as its own test
loads it (its event and source ids reserved far apart from every other input's), analyzed there
by DuckDB, then copied into one combined store with every key a view or detector joins or groups
on namespaced by the input's number:

- identifiers (application, query, thread, host, table): ``zq007`` before the value;
- paths (location, path, target path): a directory ``zp007/`` after the scheme and authority
  (``hdfs://ns/zp007/user/…``, ``/zp007/user/…``), so a bare HDFS path still meets its
  namespaced twin, a partition's path still lies under its table's, and names stay as they were;
- a Spark caller context's application (``SPARK_TASK_<app>_<run>_…``, where migration 0074's
  ``spark_run`` reads a YARN restart's run by the app_id column): the same token before it;
- source ids a case sets itself (``source_id: 1``, outside the input's reserved range): moved
  into that range (two inputs' source 1 met in ASOF joins on the source, CS104's query of a load).

Event ids are the input store's own (reserved: input N's start at ``(N + 1) * ID_STRIDE``), so
evidence and every id in a finding's detail are the same in both stores. A finding of the
combined store belongs to the input whose ids its evidence holds and whose tokens its text holds;
``undo`` removes the tokens. Whether the namespacing is complete is checked, not assumed: DuckDB's
analyze of the combined store must give, input by input, exactly that input's own findings
(``leaks``); an input for which it does not is compared on its own.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from commitsleuth.store import Store

ID_STRIDE = 10_000_000  # event ids of one input: far more than any case holds
SOURCE_STRIDE = 1_000
ID_COLUMNS = ("app_id", "query_id", "thread", "host", "table_name")
PATH_COLUMNS = ("location", "path", "target_path")
# tables copied from each input store (findings are each engine's output, not input)
COPIED = ("sources", "events", "rejects", "superseded_events")
_TOKEN = re.compile(r"z([pq])(\d{3})(/?)", re.I)


def id_token(n: int) -> str:
    return f"zq{n:03d}"


def path_token(n: int) -> str:
    return f"zp{n:03d}/"


def reserve_ids(store: Store, n: int) -> None:
    """Input ``n``'s events and sources get ids of their own: a placeholder at the start of its
    range makes the store's next ids follow it (``release_ids`` removes it before analyze)."""
    store.con.execute("INSERT INTO sources (source_id, uri, kind, status) VALUES (?, ?, 'file', 'ok')",
                      [(n + 1) * SOURCE_STRIDE, f"reserved:{n}"])
    store.con.execute("INSERT INTO events (event_id, kind) VALUES (?, 'reserved')", [(n + 1) * ID_STRIDE])


def release_ids(store: Store, n: int) -> None:
    store.con.execute("DELETE FROM events WHERE event_id = ?", [(n + 1) * ID_STRIDE])
    store.con.execute("DELETE FROM sources WHERE source_id = ?", [(n + 1) * SOURCE_STRIDE])
    low, high = store.con.execute("SELECT min(event_id), max(event_id) FROM events").fetchone()
    assert low is None or (n + 1) * ID_STRIDE < low <= high < (n + 2) * ID_STRIDE, (n, low, high)


# Ids that tie events of several kinds and are also written inside paths, file names and log
# lines (a Hadoop attempt in a _temporary path, a write job's UUID in a part file's name): renamed
# wherever they occur, their form kept. A Hadoop or YARN id's cluster timestamp ends in the
# input's number (so do the job, task and attempt ids code derives from one); the three hex
# digits that open a UUID's last group are it (synthetic UUIDs differ at the end).
HADOOP_ID = r"((?:application|appattempt|job|task|attempt|container|dag|vertex)_(?:e[0-9]+_)?[0-9]{6,})([0-9]{3})_"
UUID = r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-)[0-9a-f]{3}([0-9a-f]{9})"
# a path's scheme and authority (file:/x, file:///x, hdfs://ns/x) and its first slash
_ROOT = r"^((?:[A-Za-z][A-Za-z0-9+.-]*:(?://[^/]*)?)?/?)"
_STAMP = re.compile(r"_([0-9]{9,})_")


def _renamed(expr: str, n: int) -> str:
    return (f"regexp_replace(regexp_replace({expr}, '{HADOOP_ID}', '\\1{n:03d}_', 'g'), "
            f"'{UUID}', '\\1{n:03x}\\2', 'g')")


def _columns(con, table: str) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = 'src' AND table_name = ? "
        "ORDER BY column_index", [table]).fetchall()]


def _namespaced(con, table: str, n: int, keys: bool = True, ids: bool = True) -> str:
    """The SELECT list copying ``table`` of input ``n`` with its keys (``keys``: identifier and
    path columns; ``ids``: the ids renamed wherever they occur) namespaced."""
    out = []
    for c, kind in _columns(con, table):
        expr = c
        if keys and c == "source_id":  # a case's own source ids (source_id: 1), outside its reserved range
            expr = f"CASE WHEN {c} < {SOURCE_STRIDE} THEN {c} + {(n + 1) * SOURCE_STRIDE + SOURCE_STRIDE // 2} ELSE {c} END"
        if table in ("events", "superseded_events") and kind in ("VARCHAR", "JSON"):
            expr = _renamed(f"CAST({c} AS VARCHAR)", n) if ids else f"CAST({c} AS VARCHAR)"
            if keys and c in ID_COLUMNS:
                expr = f"'{id_token(n)}' || {expr}"
            elif keys and c == "detail":  # a Spark caller context names the application as app_id
                expr = f"replace({expr}, 'SPARK_TASK_', 'SPARK_TASK_{id_token(n)}')"  # does (spark_run)
            elif keys and c in PATH_COLUMNS:
                expr = f"regexp_replace({expr}, '{_ROOT}', '\\1{path_token(n)}')"
            expr = f"CAST({expr} AS {kind})"
        out.append(f"{expr} AS {c}")
    return ", ".join(out)


def namespaced_path(path: str, n: int) -> str:
    """What ``_namespaced`` makes of a path column's value, in Python."""
    return re.sub(_ROOT, lambda m: m[1] + path_token(n), path, count=1)


def _namespace_detail_paths(con, n: int) -> None:
    """Paths a detail holds, namespaced as the path columns are: a _SUCCESS manifest's file list
    (CS111 compares it with the listing's paths) and a trash move's destination (storage.py
    finds the delete that emptied it by path)."""
    rows = con.execute("SELECT event_id, CAST(detail AS VARCHAR) FROM events WHERE event_id BETWEEN ? AND ? "
                       "AND (json_exists(detail, '$.manifest.filenames') OR json_exists(detail, '$.trash') "
                       "OR json_exists(detail, '$.magic_dest'))",
                       [(n + 1) * ID_STRIDE, (n + 2) * ID_STRIDE - 1]).fetchall()
    for event_id, text in rows:
        detail = json.loads(text)
        names = (detail.get("manifest") or {}).get("filenames")
        if isinstance(names, list):
            detail["manifest"]["filenames"] = [namespaced_path(x, n) if isinstance(x, str) else x for x in names]
        for key in ("trash", "magic_dest"):  # and an S3A magic upload's destination (CS101 joins it to a path)
            if isinstance(detail.get(key), str):
                detail[key] = namespaced_path(detail[key], n)
        con.execute("UPDATE events SET detail = ? WHERE event_id = ?", [json.dumps(detail), event_id])


def renames(con, n: int) -> dict[str, str]:
    """Input ``n``'s renamed ids (attached as ``src``): renamed -> as they were. An input two of
    whose ids would be renamed alike cannot share a store (``None``)."""
    texts = [f"CAST({c} AS VARCHAR)" for c, kind in _columns(con, "events") if kind in ("VARCHAR", "JSON")]
    found = set()
    for pattern in (HADOOP_ID, UUID):
        found |= {r[0] for r in con.execute(
            " UNION ".join(f"SELECT DISTINCT unnest(regexp_extract_all({t}, '{pattern}')) FROM src.events" for t in texts)
        ).fetchall() if r[0]}
    out = {}
    for old in found:  # a cluster timestamp by its digits: a job or task id derived from an attempt's
        m = re.fullmatch(HADOOP_ID, old)
        if m:
            old = old[m.start(1) + m[1].rindex("_") + 1:-1]
            new = old[:-3] + f"{n:03d}"
        else:
            new = re.sub(UUID, lambda m: f"{m[1]}{n:03x}{m[2]}", old)
        if out.setdefault(new, old) != old:
            return None
    return out


def combine(path: Path, stores: dict[int, Path], keys: bool = True,
            ids: bool = True) -> tuple[Path, dict[int, dict[str, str]]]:
    """One store at ``path`` holding every input store's events, namespaced (input n -> its
    store), and each input's renamed ids. An input whose ids cannot be renamed apart is left out.
    ``keys`` and ``ids`` off leave that part of the namespacing out (a test shows each is needed)."""
    maps = {}
    with Store(path) as combined:
        con = combined.con
        for n, src in stores.items():
            con.execute(f"ATTACH '{src}' AS src (READ_ONLY)")
            try:
                maps[n] = renames(con, n) if ids else {}
                if maps[n] is None:
                    continue
                for table in COPIED:
                    con.execute(f"INSERT INTO {table} BY NAME SELECT {_namespaced(con, table, n, keys, ids)} "
                                f"FROM src.{table}")
                if keys:
                    _namespace_detail_paths(con, n)
            finally:
                con.execute("DETACH src")
    return path, {n: m for n, m in maps.items() if m is not None}


def undo(value, renamed: dict[str, str]):
    """A finding's field without the namespacing tokens, its ids as they were."""
    if isinstance(value, str):
        value = _TOKEN.sub(lambda m: "" if m[1].lower() == "q" or m[3] else m[0], value)
        value = _STAMP.sub(lambda m: f"_{renamed.get(m[1], m[1])}_", value)
        for new, old in renamed.items():
            if "-" in new:  # a UUID
                value = value.replace(new, old)
        return value
    if isinstance(value, list):
        return [undo(v, renamed) for v in value]
    if isinstance(value, tuple):
        return tuple(undo(v, renamed) for v in value)
    if isinstance(value, dict):
        return {undo(k, renamed): undo(v, renamed) for k, v in value.items()}
    return value


def owners(finding: dict) -> set[int]:
    """The inputs a finding of the combined store names: by its evidence ids and its tokens."""
    found = {e // ID_STRIDE - 1 for e in finding.get("evidence") or []}
    found |= {int(m[2]) for m in _TOKEN.finditer(repr(finding))}
    return found


def split(findings: list[dict], inputs: dict[int, list[str] | None],
          renamed: dict[int, dict[str, str]]) -> tuple[dict[int, list[dict]], set[int]]:
    """The combined store's findings per input (only the codes the input runs), tokens removed,
    and the inputs a finding mixes with another (or a finding no input owns: all of them)."""
    per: dict[int, list[dict]] = {n: [] for n in inputs}
    mixed: set[int] = set()
    for f in findings:
        who = owners(f)
        if len(who) != 1 or not who <= per.keys():
            mixed |= (who & per.keys()) or set(per)
            continue
        n = who.pop()
        codes = inputs[n]
        if codes is None or f["code"] in codes:
            per[n].append({k: undo(v, renamed[n]) for k, v in f.items()})
    return per, mixed
