"""The HTML report: one self-contained file (no network at view time), every log text escaped.

The summary (sources, findings by severity and detector) is written as HTML here. The findings
travel as one JSON block that ``report/assets/report.js`` draws a page at a time, each with the
lanes of its partition (``lanes.py``), so a report of 10,000 findings opens as fast as one of
twenty. Log text reaches the page only as escaped HTML here, or as JSON read by the script and
put into the DOM as text; a Content-Security-Policy lets only the report's own script run and
forbids every connection.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import hashlib
import html
import gzip
import json
import re
from collections import Counter
from functools import lru_cache
from importlib import resources
from pathlib import Path

from commitsleuth import __version__
from commitsleuth.errors import InputError
from commitsleuth.forensics.analyze import evidence, stored_findings
from commitsleuth.forensics.attempt_labels import labels_for_names, shown
from commitsleuth.forensics.detectors import Finding
from commitsleuth.report.facts import file_facts, json_facts
from commitsleuth.report.lanes import (PartitionLanes, apps_for, build, duration, format_ts, kind_label, outcome,
                                rows_for, symbol, tie_files, windows_for)
from commitsleuth.model import SEVERITIES
from commitsleuth.redact import redact_user, redact_user_value
from commitsleuth.store import Store

PAGE_SIZE = 20
MAX_LANES = 12  # lanes shown at first besides the finding's own actors; the rest on request
MAX_RAW = 4000  # characters of one log line kept in the report (a 50 MB line stays readable)
PACK_ABOVE = 2_000_000  # data larger than this (characters of JSON) travels gzipped: 10x smaller
MANY_SOURCES = 30  # above this the full source list is folded away


def _e(value) -> str:
    # the user's redaction patterns of this run too: the store got those of its ingest
    return html.escape("" if value is None else redact_user(str(value)), quote=True)


@lru_cache(maxsize=None)
def _asset(name: str) -> str:
    return resources.files("commitsleuth").joinpath("report", "assets", name).read_text(encoding="utf-8")


def _json_for_script(data) -> str:
    """JSON safe inside <script>: no '<', '>' or '&' can close the element or open a comment."""
    text = json.dumps(redact_user_value(data), separators=(",", ":"), ensure_ascii=True, default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _cut(raw: str | None) -> str | None:
    if raw is None or len(raw) <= MAX_RAW:
        return raw
    return raw[:MAX_RAW] + f" … ({len(raw) - MAX_RAW} more characters not shown)"


class _Texts:
    """Strings many findings share (a detector's cause, a location, a log file) stored once."""

    def __init__(self):
        self.index: dict[str | None, int] = {None: 0}

    def __call__(self, text: str | None) -> int:
        return self.index.setdefault(text, len(self.index))

    def where(self, where: str):
        """``file:line`` as ``[file index, line]`` (the file name repeats on every event)."""
        m = _WHERE.fullmatch(where)
        return [self(m.group(1)), int(m.group(2))] if m else where


_WHERE = re.compile(r"(.+):(\d+)")


def report_data(store: Store) -> tuple[dict | None, dict]:
    """What the report's script draws: the first page alone (None when everything fits on one)
    and everything: events by id, partition timelines, findings."""
    findings = stored_findings(store)
    keys: dict[tuple, int] = {}
    for f in findings:
        if f.location or f.table_name:
            keys.setdefault(_key(f), len(keys))
    rows, attempt_ends = tie_files(store, rows_for(store, list(keys)))
    windows = windows_for(store, [r.event_id for rs in rows.values() for r in rs] + attempt_ends)
    in_timelines = {r.event_id for rs in rows.values() for r in rs}
    loose = evidence(store, sorted({eid for f in findings for eid in f.evidence} - in_timelines))
    apps = apps_for(store, in_timelines | {ev.event_id for ev in loose})
    labels = labels_for_names(store.con, {(apps.get(r.event_id), r.actor) for rs in rows.values() for r in rs}
                            | {(apps.get(ev.event_id), ev.actor) for ev in loose})
    sizes = _sizes(store, [r.event_id for rs in rows.values() for r in rs if r.kind in _FILE_KINDS])
    models = {}

    def pack(subset: list[Finding]) -> dict:
        texts = _Texts()
        events: dict[int, list] = {}
        timelines: dict[tuple, int] = {}
        out_timelines = []
        for f in subset:
            key = _key(f)
            if key not in keys or key in timelines:
                continue
            if key not in models:
                models[key] = build(rows[keys[key]], windows, max_ticks=10, apps=apps, labels=labels)
            timelines[key] = len(out_timelines)
            out_timelines.append(_timeline_json(models[key], texts))
            for r in rows[keys[key]]:
                events[r.event_id] = _event_json(texts, r.kind, r.ts, models[key].actors.get(r.event_id, r.actor),
                                                 r.path, r.status, r.where, r.raw, sizes.get(r.event_id))
        wanted = {eid for f in subset for eid in f.evidence}
        for ev in loose:
            if ev.event_id in wanted:
                actor = shown(labels, apps.get(ev.event_id), ev.actor)
                events[ev.event_id] = _event_json(texts, ev.kind, ev.ts, actor, ev.path, None, ev.where, ev.raw,
                                                  ev.size)
        out_findings = [
            [f.code, f.name, f.severity, f.partition_spec, texts(f.table_name or f.location or ""),
             f.summary, f.actors, f.evidence, texts(f.explanation), texts(f.remedy), timelines.get(_key(f))]
            for f in subset
        ]
        kinds = {k: [symbol(k), kind_label(k)] for k in {e[0] for e in events.values()}}
        return {"events": events, "timelines": out_timelines, "findings": out_findings,
                "texts": list(texts.index), "kinds": kinds, "total": len(findings),
                "pageSize": PAGE_SIZE, "maxLanes": MAX_LANES}

    everything = pack(findings)
    return (pack(findings[:PAGE_SIZE]) if len(findings) > PAGE_SIZE else None), everything


def _key(f: Finding) -> tuple:
    return (f.location, None if f.location else f.table_name, f.partition_spec)


_FILE_KINDS = ("file", "file_create")


def _sizes(store: Store, event_ids: list[int]) -> dict[int, int]:
    if not event_ids:
        return {}
    return dict(store.con.execute("SELECT event_id, size FROM events WHERE list_contains($ids, event_id) "
                                  "AND size IS NOT NULL", {"ids": sorted(set(event_ids))}).fetchall())


def _event_json(texts: _Texts, kind, ts, actor, path, status, where, raw, size=None) -> list:
    """[kind, time, actor, path, status, where, raw, outcome, facts]: ``facts`` the key fields
    shown first (a listed file's name, size and time; a JSON line's key fields)."""
    facts = json_facts(raw)  # from the whole line: a cut one is no longer JSON
    if kind in _FILE_KINDS and not raw:
        facts = file_facts(path, size, ts, format_ts(ts))
        where = path or where  # the file itself, not the directory listed
    raw = _cut(raw)
    if path and raw and path in raw:
        path = None  # the log line shows it already
    return [kind, format_ts(ts), actor, path, status, texts.where(where), raw, outcome(kind, status), facts]


def _timeline_json(model: PartitionLanes, texts: _Texts) -> dict:
    r = lambda x: round(x, 5)  # noqa: E731 - positions need no more precision than a pixel
    return {
        "axis": [model.axis.mode, texts(model.axis.label), [[r(p), lbl] for p, lbl in model.axis.ticks]],
        "lanes": [
            [ln.actor, ln.actor_type, ln.window, ln.status, ln.outcome, r(ln.start), r(ln.end),
             [[m.event.event_id, r(m.pos)] for m in ln.marks], ln.label, ln.app]
            for ln in model.lanes
        ],
    }


def render_report(store: Store) -> str:
    first, data = report_data(store)
    script = _asset("report.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    csp = (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
           "img-src data:; connect-src 'none'; form-action 'none'; base-uri 'none'")
    generated = dt.datetime.now().replace(microsecond=0).isoformat(sep=" ")
    out = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        f"<meta http-equiv=Content-Security-Policy content=\"{_e(csp)}\">",
        "<meta name=viewport content='width=device-width,initial-scale=1'>",
        "<link rel=icon href='data:,'>",
        "<title>commitsleuth report</title>",
        f"<style>{_asset('report.css')}</style></head><body>",
        "<h1>commitsleuth report</h1>",
        f"<p class=meta>Store {_e(store.path)} · generated {_e(generated)} by commitsleuth {_e(__version__)}</p>",
    ]
    out += _findings_summary(data["findings"])
    out += _sources_html(store)
    out += _applications_html(store)
    out += _findings_shell(data["findings"])
    # The first page comes before the script and everything after it: the browser draws the
    # first screen before it has even read the rest of a big report.
    if first is not None:
        out.append(f"<script type=application/json id=cs-first>{_json_for_script(first)}</script>")
    out.append(f"<script>{script}</script>")
    payload = _json_for_script(data)
    if len(payload) > PACK_ABOVE:
        packed = base64.b64encode(gzip.compress(payload.encode("utf-8"), compresslevel=6, mtime=0)).decode("ascii")
        out.append(f"<script type=application/gzip+base64 id=cs-data-gz>{packed}</script>")
    else:
        out.append(f"<script type=application/json id=cs-data>{payload}</script>")
    out.append("</body></html>")
    return "\n".join(out)


def _findings_summary(findings: list[list]) -> list[str]:
    by_sev = Counter(f[2] for f in findings)
    by_det = Counter((f[0], f[1], f[2]) for f in findings)
    out = [f"<h2 id=summary>Findings: {len(findings)}</h2>"]
    if not findings:
        return out + ["<p>No findings. Run <code>commitsleuth analyze</code> after ingesting logs.</p>"]
    out.append("<div class=chips>")
    for sev in reversed(SEVERITIES):
        if by_sev[sev]:
            out.append(f"<span class='chip sev-{_e(sev)}'>{by_sev[sev]} {_e(sev)}</span>")
    out.append("</div><table><tr><th>detector</th><th>name</th><th>severity</th><th>findings</th></tr>")
    for (code, name, sev), n in sorted(by_det.items(), key=lambda kv: (-SEVERITIES.index(kv[0][2]), kv[0][0])):
        out.append(f"<tr><td>{_e(code)}</td><td>{_e(name)}</td><td>{_e(sev)}</td><td class=num>{n}</td></tr>")
    out.append("</table>")
    return out


def _sources_html(store: Store) -> list[str]:
    sources = store.con.execute(
        "SELECT source_id, uri, format, status, lines, events, rejected, reason FROM sources ORDER BY source_id"
    ).fetchall()
    rejects: dict[int, list[str]] = {}
    for sid, reason, count, first_line, sample in store.con.execute(
        "SELECT source_id, reason, count, first_line, sample FROM rejects ORDER BY source_id, count DESC"
    ).fetchall():
        shown = (sample or "")[:200] + ("…" if sample and len(sample) > 200 else "")
        rejects.setdefault(sid, []).append(f"{count} rejected: {reason}, first at line {first_line}: {shown}")
    statuses = Counter(s[3] for s in sources)
    total_events = sum(s[5] or 0 for s in sources)
    total_rejected = sum(s[6] or 0 for s in sources)
    parts = ", ".join(f"{n} {st}" for st, n in sorted(statuses.items()))
    out = [
        f"<h2 id=sources>Sources: {len(sources)}</h2>",
        f"<p>{_e(parts) or 'nothing ingested'} · {total_events} events · {total_rejected} rejected lines</p>",
    ]
    if not sources:
        return out

    def table(rows) -> list[str]:
        t = ["<table class=sources><tr><th>source</th><th>format</th><th>status</th><th>lines</th>"
             "<th>events</th><th>rejected</th><th>reason</th></tr>"]
        for sid, uri, fmt, status, lines, events, rejected, reason in rows:
            why = "; ".join(filter(None, [reason, *rejects.get(sid, [])]))
            t.append(
                f"<tr><td class=where>{_e(uri)}</td><td>{_e(fmt)}</td><td class='status-{_e(status)}'>{_e(status)}</td>"
                f"<td class=num>{_e(lines)}</td><td class=num>{_e(events)}</td><td class=num>{_e(rejected)}</td>"
                f"<td>{_e(why)}</td></tr>"
            )
        t.append("</table>")
        return t

    if len(sources) <= MANY_SOURCES:
        return out + table(sources)
    troubled = [s for s in sources if s[3] not in ("ok", "unchanged") or s[6]]
    if troubled:
        out += ["<p>Sources with problems or rejected lines:</p>"] + table(troubled)
    return out + [f"<details><summary>All {len(sources)} sources</summary>"] + table(sources) + ["</details>"]


def _applications_html(store: Store) -> list[str]:
    """Spark applications and other apps the logs name: who ran what, when (names are log text)."""
    apps = store.con.execute(
        """
        SELECT app_id,
               any_value(json_extract_string(detail, '$.name')) FILTER (WHERE kind = 'app_start'),
               any_value(json_extract_string(detail, '$.user')) FILTER (WHERE kind = 'app_start'),
               min(ts) FILTER (WHERE kind = 'app_start'), max(ts) FILTER (WHERE kind = 'app_end')
        FROM events WHERE kind IN ('app_start', 'app_end') AND app_id IS NOT NULL
        GROUP BY app_id ORDER BY 4 NULLS LAST, 1
        """
    ).fetchall()
    if not apps:
        return []
    out = [f"<h2 id=applications>Applications: {len(apps)}</h2>",
           "<table class=apps><tr><th>application</th><th>name</th><th>user</th><th>start</th><th>end</th>"
           "<th>duration</th></tr>"]
    for app_id, name, user, start, end in apps[:MANY_SOURCES * 10]:
        took = duration((end - start).total_seconds()) if start and end else ""
        out.append(f"<tr><td class=where>{_e(app_id)}</td><td>{_e(name)}</td><td>{_e(user)}</td>"
                   f"<td>{_e(format_ts(start) if start else '')}</td><td>{_e(format_ts(end) if end else '')}</td>"
                   f"<td>{_e(took)}</td></tr>")
    out.append("</table>")
    if len(apps) > MANY_SOURCES * 10:
        out.append(f"<p>… and {len(apps) - MANY_SOURCES * 10} more (commitsleuth query \"select * from events "
                   "where kind = 'app_start'\").</p>")
    return out


def _findings_shell(findings: list[list]) -> list[str]:
    codes = sorted({f[0] for f in findings})
    sev_opts = "".join(f"<option>{_e(s)}</option>" for s in reversed(SEVERITIES))
    code_opts = "".join(f"<option>{_e(c)}</option>" for c in codes)
    return [
        "<h2 id=findings>Findings</h2>",
        "<div class=controls id=cs-controls>"
        f"<label>severity <select id=cs-sev><option value=''>all</option>{sev_opts}</select></label>"
        f"<label>detector <select id=cs-code><option value=''>all</option>{code_opts}</select></label>"
        "<input type=search id=cs-q placeholder='filter: partition, location, attempt…' aria-label=filter>"
        "<span class=pager><button type=button id=cs-prev>‹ previous</button>"
        "<span id=cs-pageinfo></span><button type=button id=cs-next>next ›</button></span></div>",
        "<noscript><p>This report draws its findings with JavaScript; allow it for this file "
        "(the script is inline and makes no connection), or use <code>commitsleuth analyze</code>.</p></noscript>",
        "<div id=cs-findings></div>",
    ]


def write_report(store: Store, path: str | Path) -> Path:
    """Write the report to ``path`` whole (a temporary file renamed into place) and return it."""
    path = Path(path)
    text = render_report(store)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
