"""A partition's timeline as lanes: one per actor, a window bar, a mark for each event.

An attempt's lane is keyed by its application and its label: Spark's labels ("task 3.1 in stage
0.0 (TID 4)") repeat in every application, so two applications writing one partition get a lane
per attempt each. An event of the attempt that names no application (a text log line) joins the
lane of the one application using that label here. Names of one Spark attempt that share its
one label (the event log's and a caller context's for one TID) share a lane, whose ``actor`` is
the name its first event gave. A lane is called by its attempt's one label
(forensics/attempt_labels.py: ``app/stage 1.0/task 1 attempt 0 (TID 5) on host`` for a Spark
attempt, which names its application); another attempt's lane, when a partition's lanes hold
more than one application, is ``<app>: <attempt>``, the app compacted to the tail that tells them
apart (``…1317105`` for ``application_1628109047826_1317105``). A Spark SQL execution's lane is
``app/SQL execution N``, never a bare number.

The HTML report and the terminal timeline draw the same model, built here. Positions are
fractions of the track (0..1). Events carry a timestamp or not (a headless task's stdout has
none): when every event is timed the track is a time axis with ticks chosen for its span
(milliseconds up to days); otherwise it is the events' order, and the axis says so.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field, replace
from typing import Iterable, Sequence

from commitsleuth.forensics.attempt_labels import labels_for_names, shown
from commitsleuth.forensics.file_attempts import attempts_of_files
from commitsleuth.forensics.table_writers import TABLE_KINDS, commit_writers, log_lane, table_ties
from commitsleuth.forensics.timeline import TimelineRow, where_of
from commitsleuth.store import Store

# kind -> (symbol, label). Symbols are one character so the terminal can draw them; the HTML
# report shows them inside the mark so colour is never the only cue.
MARK_KINDS: dict[str, tuple[str, str]] = {
    "task_commit": ("C", "task commit"),
    "rename": ("R", "rename into the output"),
    "publish": ("P", "publish (move of the output dir)"),
    "job_commit": ("J", "job commit"),
    "job_abort": ("X", "job abort"),
    "commit_allowed": ("a", "commit allowed"),
    "commit_denied": ("d", "commit denied"),
    "delete": ("D", "delete / moved to trash"),
    "dedup_remove": ("r", "duplicate file removed"),
    "partition_add": ("A", "partition add"),
    "partition_alter": ("L", "partition alter"),
    "partition_drop": ("Z", "partition drop"),
    "partition_exists": ("E", "partition already exists"),
    "load": ("O", "load into the partition"),
    "dir_create": ("M", "directory created"),
    "file": ("F", "file seen on disk"),
    # the storage's own records (HDFS audit, S3 access logs), on the lane of the actor they name
    "file_create": ("W", "file written (storage)"),
    "fs_context": ("s", "storage call (permissions, refused, trash emptier)"),
    # a table format's own log (Delta, Iceberg, Hudi): the commit on the log's lane, its files
    # on the lanes of their writers
    "table_commit": ("V", "table commit (version, snapshot, instant)"),
    "table_add": ("+", "file added by a table commit"),
    "table_remove": ("-", "file removed by a table commit"),
}
OTHER_SYMBOL = "."

# Outcome colours a mark: "ok" published or succeeded, "bad" removed, failed or refused,
# "info" anything else. A status says more than a kind, so it is looked at first.
_BAD_STATUS = {"failed", "killed", "commit_denied", "denied", "aborted", "error", "failure",
               "unreadable", "missing", "conflict", "uncommitted"}
_OK_STATUS = {"success", "succeeded", "ok", "committed"}
_BAD_KINDS = {"delete", "job_abort", "commit_denied", "partition_exists", "dedup_remove", "partition_drop"}
_OK_KINDS = {"task_commit", "rename", "publish", "job_commit", "partition_add", "load", "commit_allowed",
             "table_add"}
# a table commit is ok once completed; Hudi's requested and inflight instants are not yet
_OK_KIND_STATUS = {("table_commit", "completed")}
OUTCOMES = ("bad", "ok", "info")  # most important first: the one shown when marks collide

WINDOW_KINDS = ("attempt_start", "attempt_end")

# Tick steps in seconds, from a millisecond to a week; the first one giving at most
# ``max_ticks`` ticks over the span is used.
_STEPS = (
    0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5,
    1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800,
    3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800,
)


@dataclass
class Mark:
    event: TimelineRow
    pos: float
    outcome: str
    symbol: str
    order: int  # 1-based position in the partition's event list
    evidence: bool = False


@dataclass
class Lane:
    actor: str
    actor_type: str  # attempt | thread | query | app | log (a table's log) | commit (a table commit) | other
    start: float
    end: float
    window: str  # "attempt" (attempt_start..attempt_end) or "activity" (first..last event)
    status: str | None  # the attempt's end status when known
    marks: list[Mark] = field(default_factory=list)
    app: str | None = None  # the application of an attempt's lane
    label: str = ""  # what the lane is called: the actor, with its application when several share the lanes

    @property
    def outcome(self) -> str:
        if self.status:
            return outcome(None, self.status)
        return "info"


@dataclass
class Axis:
    mode: str  # "time" or "order"
    label: str
    ticks: list[tuple[float, str]]
    start: dt.datetime | None = None
    end: dt.datetime | None = None


@dataclass
class PartitionLanes:
    lanes: list[Lane]
    axis: Axis
    events: list[TimelineRow]
    actors: dict[int, str] = field(default_factory=dict)  # event id -> its actor as shown (its lane's name)


@dataclass
class Window:
    start: dt.datetime | None
    end: dt.datetime | None
    status: str | None


def outcome(kind: str | None, status: str | None) -> str:
    s = (status or "").lower()
    if s in _BAD_STATUS:
        return "bad"
    if s in _OK_STATUS:
        return "ok"
    if kind in _BAD_KINDS:
        return "bad"
    if kind in _OK_KINDS or (kind, s) in _OK_KIND_STATUS:
        return "ok"
    return "info"


def symbol(kind: str) -> str:
    return MARK_KINDS.get(kind, (OTHER_SYMBOL, kind))[0]


def kind_label(kind: str) -> str:
    return MARK_KINDS.get(kind, (OTHER_SYMBOL, kind.replace("_", " ")))[1]


def actor_type(actor: str | None) -> str:
    """The kind of actor a ``timeline.actor`` value names (attempt id, query id, app id, thread)."""
    if not actor:
        return "other"
    a = actor.lower()
    if is_log_lane(a):
        return "log"
    if is_commit_lane(a):
        return "commit"
    if a.startswith(("attempt_", "task ")):
        return "attempt"
    if a.startswith(("hive_", "query ")) or "queryid" in a:
        return "query"
    if a.startswith(("application_", "app-", "local-", "job_")):
        return "app"
    return "thread"


def is_log_lane(actor: str) -> bool:
    """Whether ``actor`` is a table log's own lane (``log_lane``)."""
    return actor in {log_lane(f) for f in ("delta", "iceberg", "hudi", None)}


def is_commit_lane(actor: str) -> bool:
    """Whether ``actor`` is one table commit's lane (its writer unnamed: ``delta v3 OPTIMIZE``)."""
    return bool(_COMMIT_LANE.match(actor))


_COMMIT_LANE = re.compile(r"^(delta v|iceberg seq |hudi instant )\d+\b", re.I)


def lane_keys(events: Sequence[TimelineRow], apps: dict[int, str]) -> list[tuple[str | None, str]]:
    """(application, actor) of each event: its own application for an attempt, else the one
    application that uses the attempt's label among ``events`` (None when none or several do)."""
    def own(e) -> str | None:
        return apps.get(e.event_id) if actor_type(e.actor) == "attempt" else None

    users: dict[str, set[str]] = {}
    for e in events:
        if own(e) is not None:
            users.setdefault(e.actor, set()).add(own(e))
    keys = []
    for e in events:
        app = own(e)
        if app is None and actor_type(e.actor) == "attempt" and len(users.get(e.actor, ())) == 1:
            app = next(iter(users[e.actor]))
        keys.append((app, e.actor or "(unknown actor)"))
    return keys


def compact_apps(apps: set[str]) -> dict[str, str]:
    """Each app id as its last ``_``/``-`` part (``…1317105``) when that part has 4+ characters
    and tells the ids apart, else whole."""
    tails = {a: re.split(r"[_-]", a)[-1] for a in apps}
    if all(len(t) >= 4 for t in tails.values()) and len(set(tails.values())) == len(apps):
        return {a: "…" + t for a, t in tails.items()}
    return {a: a for a in apps}


def build(
    events: Sequence[TimelineRow],
    windows: dict[tuple[str | None, str], Window] | None = None,
    evidence: Iterable[int] = (),
    *,
    max_ticks: int = 8,
    apps: dict[int, str] | None = None,
    labels: dict[tuple[str | None, str], str] | None = None,
) -> PartitionLanes:
    """Lanes of ``events`` (in timeline order); ``windows`` holds attempt windows by
    (application, actor), ``apps`` the application of each event id that names one, ``labels``
    the one label of each Spark attempt name by (application, name) (forensics/attempt_labels.py)."""
    windows, labels = windows or {}, labels or {}
    evidence = set(evidence)
    apps = apps or {}
    # names of one attempt (an event log's and a caller context's for one TID) share its label:
    # one lane, keyed by the label; a lane keeps the name its first event gave as its actor
    raw_keys = lane_keys(events, apps)
    keys = [(app, labels.get((app, actor)) or labels.get((None, actor)) or actor) for app, actor in raw_keys]
    windows = {(app, labels.get((app, actor)) or labels.get((None, actor)) or actor): w
               for (app, actor), w in windows.items()}
    timed = bool(events) and all(e.ts is not None for e in events)
    if timed:
        times = [e.ts for e in events]
        for key in set(keys):
            w = windows.get(key)
            if w is not None:
                times += [t for t in (w.start, w.end) if t is not None]
        t0, t1 = first, last = min(times), max(times)
        span = (t1 - t0).total_seconds()
        if span <= 0:  # one instant: give it a second around it so it sits in the middle
            t0, t1, span = t0 - dt.timedelta(seconds=0.5), t1 + dt.timedelta(seconds=0.5), 1.0
        pad = span * 0.03
        t0, t1 = t0 - dt.timedelta(seconds=pad), t1 + dt.timedelta(seconds=pad)
        span = (t1 - t0).total_seconds()

        def pos_of(ts: dt.datetime) -> float:
            return (ts - t0).total_seconds() / span

        axis = time_axis(t0, t1, max_ticks=max_ticks, events=(first, last))
        slot = 0.0
    else:
        n = max(len(events), 1)
        slot = 1.0 / n
        axis = order_axis(len(events), max_ticks=max_ticks, some_timed=any(e.ts is not None for e in events))

    by_actor: dict[tuple[str | None, str], Lane] = {}
    for i, (e, key) in enumerate(zip(events, keys)):
        pos = pos_of(e.ts) if timed else (i + 0.5) * slot
        lane = by_actor.get(key)
        if lane is None:
            lane = by_actor[key] = Lane(raw_keys[i][1], actor_type(e.actor), pos, pos, "activity", None, app=key[0])
        lane.start, lane.end = min(lane.start, pos), max(lane.end, pos)
        lane.marks.append(
            Mark(e, pos, outcome(e.kind, e.status), symbol(e.kind), i + 1, e.event_id in evidence)
        )
    short = compact_apps({lane.app for lane in by_actor.values() if lane.app is not None})
    labelled = set(labels.values())
    for (app, actor), lane in by_actor.items():
        if actor in labelled:  # a Spark attempt's one label, which names its application
            lane.label = actor
        elif actor.isdigit() and any(m.event.kind in _QUERY_KINDS for m in lane.marks):
            # a Spark SQL execution id: a number only within its application
            lane.actor_type = "query"
            owner = next((apps[m.event.event_id] for m in lane.marks if m.event.event_id in apps), None)
            lane.label = f"{owner}/SQL execution {actor}" if owner else f"SQL execution {actor}"
        else:
            lane.label = lane_label(app, actor, lane.actor_type, short if len(short) > 1 else {})
        if not timed:  # a lane covers its events' whole slots
            lane.start, lane.end = lane.start - slot / 2, lane.end + slot / 2
        w = windows.get((app, actor))
        if w is None:
            continue
        lane.status = w.status or lane.status
        if timed and w.start is not None and w.end is not None:
            lane.start, lane.end, lane.window = pos_of(w.start), pos_of(w.end), "attempt"
        elif timed and w.start is not None:
            lane.start, lane.window = min(lane.start, pos_of(w.start)), "attempt"
        elif timed and w.end is not None:
            lane.end, lane.window = max(lane.end, pos_of(w.end)), "attempt"
    # a table's log first: the commits its writers' files hang on
    lanes = sorted(by_actor.values(), key=lambda ln: (ln.actor_type != "log", ln.start, ln.label))
    shown = {e.event_id: by_actor[key].label for e, key in zip(events, keys)}
    return PartitionLanes(lanes, axis, list(events), shown)


_QUERY_KINDS = ("query_start", "query_end")


def lane_label(app: str | None, actor: str, kind: str, short: dict[str, str]) -> str:
    """What a lane without a Spark attempt's label is called: an attempt by its id, with its
    application's short name when several share the lanes; a thread, query or application named
    by a bare number says which it is (never a bare ``0``)."""
    if actor.isdigit():
        actor = f"{kind} {actor}"
    return f"{short[app]}: {actor}" if app is not None and app in short else actor


def time_axis(t0: dt.datetime, t1: dt.datetime, *, max_ticks: int = 8,
              events: tuple[dt.datetime, dt.datetime] | None = None) -> Axis:
    """Ticks from ``t0`` to ``t1``; the label names the span of the ``events`` (default: the axis)."""
    span = (t1 - t0).total_seconds()
    step = next((s for s in _STEPS if span / s <= max_ticks), _STEPS[-1])
    base = dt.datetime(t0.year, t0.month, t0.day)
    first = math.ceil(round((t0 - base).total_seconds() / step, 9)) * step
    ticks: list[tuple[float, str]] = []
    k = 0
    last_day = None
    while True:
        at = base + dt.timedelta(seconds=first + k * step)
        if at > t1:
            break
        label = _tick_label(at, step)
        if at.date() != last_day and step < 86400 and last_day is not None:
            label = at.strftime("%m-%d ") + label  # a day boundary inside the axis
        last_day = at.date()
        ticks.append(((at - t0).total_seconds() / span, label))
        k += 1
    e0, e1 = events or (t0, t1)
    label = (f"time, {format_ts(e0)} to {_end_label(e0, e1)} ({duration((e1 - e0).total_seconds())}); "
             f"ticks every {duration(step)}")
    return Axis("time", label, ticks, t0, t1)


def order_axis(n: int, *, max_ticks: int = 8, some_timed: bool = False) -> Axis:
    why = "some of these events carry no timestamp" if some_timed else "these events carry no timestamp"
    label = f"event order, not time: {why}; #N is the N-th event in file order"
    if n == 0:
        return Axis("order", label, [])
    every = max(1, math.ceil(n / max_ticks))
    ticks = [((i + 0.5) / n, f"#{i + 1}") for i in range(0, n, every)]
    return Axis("order", label, ticks)


def duration(seconds: float) -> str:
    """A span for people: 850 ms, 3.2 s, 6 min 2 s, 5 h 3 min, 2 d 4 h."""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.3g} s"
    s = round(seconds)
    if s < 3600:
        return f"{s // 60} min" + (f" {s % 60} s" if s % 60 else "")
    if s < 86400:
        return f"{s // 3600} h" + (f" {s % 3600 // 60} min" if s % 3600 // 60 else "")
    return f"{s // 86400} d" + (f" {s % 86400 // 3600} h" if s % 86400 // 3600 else "")


def format_ts(ts: dt.datetime | None) -> str:
    if ts is None:
        return "no timestamp"
    text = ts.isoformat(sep=" ", timespec="milliseconds")
    return text[:-4] if text.endswith(".000") else text


def _tick_label(at: dt.datetime, step: float) -> str:
    if step < 1:
        return at.strftime("%H:%M:%S.%f")[:-3]
    if step < 60:
        return at.strftime("%H:%M:%S")
    if step < 86400:
        return at.strftime("%H:%M")
    return at.strftime("%m-%d")


def _end_label(t0: dt.datetime, t1: dt.datetime) -> str:
    return format_ts(t1)[11:] if t0.date() == t1.date() else format_ts(t1)


# -- reading from the store ------------------------------------------------------------------

_ROWS_SQL = """
SELECT k.key, t.event_id, t.ts, t.kind, t.actor, t.path, t.status, t.source, t.line_no, t.raw
FROM timeline t JOIN keys k
  ON t.location = k.location AND t.partition_spec IS NOT DISTINCT FROM k.partition_spec
UNION ALL
SELECT k.key, t.event_id, t.ts, t.kind, t.actor, t.path, t.status, t.source, t.line_no, t.raw
FROM timeline t JOIN keys k
  ON k.location IS NULL AND t.table_name = k.table_name
 AND t.partition_spec IS NOT DISTINCT FROM k.partition_spec
ORDER BY 1, 3 NULLS LAST, 8, 9, 2
"""


def rows_for(store: Store, keys: Sequence[tuple[str | None, str | None, str | None]]) -> dict[int, list[TimelineRow]]:
    """Timeline rows of many partitions in one query; ``keys`` are (location, table, partition)."""
    import pyarrow as pa

    out: dict[int, list[TimelineRow]] = {i: [] for i in range(len(keys))}
    if not keys:
        return out
    keys_tbl = pa.table(  # noqa: F841 - read by DuckDB by name
        {
            "key": list(range(len(keys))),
            "location": [k[0] for k in keys],
            "table_name": [k[1] for k in keys],
            "partition_spec": [k[2] for k in keys],
        },
        schema=pa.schema([("key", pa.int64()), ("location", pa.string()),
                          ("table_name", pa.string()), ("partition_spec", pa.string())]),
    )
    con = store.con.cursor()
    try:
        con.register("keys", keys_tbl)
        for key, eid, ts, kind, actor, path, status, source, line_no, raw in con.execute(_ROWS_SQL).fetchall():
            out[key].append(TimelineRow(eid, ts, kind, actor, path, status, where_of(eid, source, line_no), raw))
    finally:
        con.close()
    return out


def windows_for(store: Store, event_ids: Iterable[int]) -> dict[tuple[str | None, str], Window]:
    """Attempt windows (first attempt_start, last attempt_end and its status) of the attempts
    that made ``event_ids``, by (application, attempt). Spark's attempt labels repeat across
    applications, so an attempt's start and end count only in its own application."""
    ids = sorted(set(event_ids))
    if not ids:
        return {}
    rows = store.con.execute(
        """
        WITH actors AS (
            SELECT DISTINCT attempt_id, app_id FROM events
            WHERE event_id IN (SELECT unnest(?)) AND attempt_id IS NOT NULL
        )
        SELECT a.app_id, a.attempt_id,
               min(e.ts) FILTER (WHERE e.kind = 'attempt_start'),
               max(e.ts) FILTER (WHERE e.kind = 'attempt_end'),
               arg_max(e.status, coalesce(e.ts, TIMESTAMP '0001-01-01')) FILTER (WHERE e.kind = 'attempt_end')
        FROM actors a JOIN events e
          ON e.attempt_id = a.attempt_id AND e.app_id IS NOT DISTINCT FROM a.app_id
        WHERE e.kind IN ('attempt_start', 'attempt_end')
        GROUP BY a.app_id, a.attempt_id
        """,
        [ids],
    ).fetchall()
    return {(app, a): Window(s, e, st) for app, a, s, e, st in rows}


def apps_for(store: Store, event_ids: Iterable[int]) -> dict[int, str]:
    """The application of each of ``event_ids`` that names one (lanes are keyed by it)."""
    ids = sorted(set(event_ids))
    if not ids:
        return {}
    return dict(store.con.execute(
        "SELECT event_id, app_id FROM events WHERE event_id IN (SELECT unnest(?)) AND app_id IS NOT NULL",
        [ids]).fetchall())


def tie_files(store: Store, rows: dict) -> tuple[dict, list[int]]:
    """``rows`` (key -> timeline rows) with each listed file that names its Spark task attempt
    drawn on that attempt's lane (forensics/file_attempts.py), and the attempt-end event ids
    whose windows those lanes need."""
    rows = tie_tables(store, rows)
    ties = attempts_of_files(store.con, sorted({r.event_id for rs in rows.values() for r in rs
                                                 if r.kind == "file"}))
    if not ties:
        return rows, []
    out = {k: [replace(r, actor=ties[r.event_id][0]) if r.event_id in ties else r for r in rs]
           for k, rs in rows.items()}
    return out, [ae for _, ae in ties.values()]


def tie_tables(store: Store, rows: dict) -> dict:
    """``rows`` (key -> timeline rows) with a table log's events drawn as forensics/table_writers.py
    says: its commits on the log's lane, a file added or removed on its writer's lane, read at its
    commit file's line. A partition's rows that hold a table's file events get the commits that
    added or removed them, so the log's lane is there too (one mark per commit)."""
    con = store.con
    wanted = {r.event_id for rs in rows.values() for r in rs if r.kind in TABLE_KINDS}
    if not wanted:
        return rows
    keys_of: dict[int, list] = {}  # a file event's keys
    for k, rs in rows.items():
        for r in rs:
            if r.kind in ("table_add", "table_remove"):
                keys_of.setdefault(r.event_id, []).append(k)
    versions: dict = {}  # key -> [(location, format, version)] of its file events
    if keys_of:
        for eid, loc, fmt, version in con.execute(
                "SELECT event_id, location, detail->>'format', detail->>'version' FROM events "
                "WHERE list_contains($ids, event_id)", {"ids": sorted(keys_of)}).fetchall():
            for k in keys_of[eid]:
                versions.setdefault(k, []).append((loc, fmt, version))
    # every commit of these tables read once (a report draws many partitions of one table)
    commits = commit_writers(con, {v[0] for vs in versions.values() for v in vs})
    extra: dict = {}
    for k, vs in versions.items():
        have = {r.event_id for r in rows[k]}
        ids = {commits[v][0] for v in vs if v in commits}
        extra[k] = sorted(i for i in ids if i not in have)
    added = {}
    all_extra = sorted({i for ids in extra.values() for i in ids})
    if all_extra:
        for eid, ts, kind, path, status, raw in con.execute(
                "SELECT event_id, ts, kind, path, status, raw FROM events WHERE list_contains($ids, event_id)",
                {"ids": all_extra}).fetchall():
            added[eid] = TimelineRow(eid, ts, kind, None, path, status, path or f"event {eid}", raw)
    ties = table_ties(con, wanted | set(added), commits)
    out = {}
    for k, rs in rows.items():
        merged = list(rs) + [added[i] for i in extra.get(k, ()) if i in added]
        if extra.get(k):  # the commits join the partition's rows in time order
            merged.sort(key=lambda r: (r.ts is None, r.ts or dt.datetime.min))
        out[k] = [replace(r, actor=ties[r.event_id].actor, where=ties[r.event_id].where or r.where)
                  if r.event_id in ties else r for r in merged]
    return out


def partition_lanes(store: Store, events: Sequence[TimelineRow], evidence: Iterable[int] = (),
                    *, max_ticks: int = 8) -> PartitionLanes:
    """Lanes of already-read timeline events, with the attempt windows of their actors."""
    tied, extra = tie_files(store, {0: list(events)})
    events = tied[0]
    windows = windows_for(store, [e.event_id for e in events] + extra)
    apps = apps_for(store, [e.event_id for e in events])
    return build(events, windows, evidence, max_ticks=max_ticks, apps=apps, labels=labels_for(store, events, apps))


def labels_for(store: Store, events: Iterable[TimelineRow], apps: dict[int, str]) -> dict:
    """The one label of each Spark attempt the ``events`` name, by (application, name)."""
    return labels_for_names(store.con, {(apps.get(e.event_id), e.actor) for e in events})




def evidence_actors(store: Store, evidence: Iterable) -> dict[int, str]:
    """Each evidence event's actor as the timeline shows it: a listed file by the one Spark
    attempt that wrote it, a Spark attempt by its one label (``evidence``: analyze's Evidence)."""
    evidence = list(evidence)
    ties = attempts_of_files(store.con, sorted({e.event_id for e in evidence if e.kind == "file"}))
    apps = apps_for(store, [e.event_id for e in evidence])
    names = {e.event_id: ties[e.event_id][0] if e.event_id in ties else e.actor for e in evidence}
    labels = labels_for_names(store.con, {(apps.get(i), n) for i, n in names.items()})
    return {i: shown(labels, apps.get(i), n) for i, n in names.items() if n}
