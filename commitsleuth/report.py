"""The HTML report: one self-contained file (no network at view time), every log text escaped."""

from __future__ import annotations

import html
from pathlib import Path

from commitsleuth.forensics.analyze import evidence, stored_findings
from commitsleuth.store import Store

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1d2330;max-width:80rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #d5d9e2;padding:.25rem .5rem;text-align:left}
.finding{border:1px solid #d5d9e2;border-left:6px solid #888;border-radius:4px;padding:.5rem 1rem;margin:1rem 0}
.sev-critical{border-left-color:#7a0010}.sev-high{border-left-color:#c62828}
.sev-medium{border-left-color:#ef6c00}.sev-low{border-left-color:#9e9d24}
pre{background:#f5f6f8;padding:.5rem;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
.where{color:#555;font-family:monospace}
"""


def _e(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def render_report(store: Store) -> str:
    sources = store.con.execute(
        "SELECT uri, format, status, lines, events, rejected, reason FROM sources ORDER BY source_id"
    ).fetchall()
    findings = stored_findings(store)
    out = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        "<meta name=viewport content='width=device-width,initial-scale=1'>",
        "<title>commitsleuth report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>commitsleuth report</h1>",
        "<h2>Sources</h2><table><tr><th>source</th><th>format</th><th>status</th><th>lines</th>"
        "<th>events</th><th>rejected</th><th>reason</th></tr>",
    ]
    for uri, fmt, status, lines, events, rejected, reason in sources:
        out.append(
            f"<tr><td>{_e(uri)}</td><td>{_e(fmt)}</td><td>{_e(status)}</td><td>{_e(lines)}</td>"
            f"<td>{_e(events)}</td><td>{_e(rejected)}</td><td>{_e(reason)}</td></tr>"
        )
    out.append("</table>")
    out.append(f"<h2>Findings ({len(findings)})</h2>")
    if not findings:
        out.append("<p>No findings.</p>")
    for i, f in enumerate(findings, 1):
        out.append(
            f"<section class='finding sev-{_e(f.severity)}' id='finding-{i}' data-code='{_e(f.code)}'>"
            f"<h3>{_e(f.code)} {_e(f.name)} <small>[{_e(f.severity)}]</small></h3>"
            f"<p><b>{_e(f.partition_spec or '(no partition)')}</b> in {_e(f.table_name or f.location)}</p>"
            f"<p>{_e(f.summary)}</p>"
            "<p>Actors: " + ", ".join(f"<code class=actor>{_e(a)}</code>" for a in f.actors) + "</p>"
            "<h4>Evidence</h4>"
        )
        for ev in evidence(store, f.evidence):
            out.append(f"<div class=where>{_e(ev.where)}</div><pre>{_e(ev.raw)}</pre>")
        if f.explanation:
            out.append(f"<p><b>Cause.</b> {_e(f.explanation)}</p>")
        if f.remedy:
            out.append(f"<p><b>Remedy.</b> {_e(f.remedy)}</p>")
        out.append("</section>")
    out.append("</body></html>")
    return "\n".join(out)


def write_report(store: Store, path: str | Path) -> Path:
    path = Path(path)
    path.write_text(render_report(store), encoding="utf-8")
    return path
