"""Plain-text renderings shared by the CLI and the demo (no terminal library needed)."""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Sequence

from commitsleuth.model import SEVERITIES
from commitsleuth.redact import redact, redact_value
from commitsleuth.report.escape import printable
from commitsleuth.store import Store

if TYPE_CHECKING:
    from commitsleuth.forensics.detectors import Finding


def _evidence(store: Store, event_ids):
    # imported here: the analysis (detectors, parsers, grammars, pyarrow) is a third of a second of
    # imports that `query`, which prints only a table, does not need
    from commitsleuth.forensics.analyze import evidence

    return evidence(store, event_ids)


def _evidence_of(store: Store, findings: list[Finding]) -> tuple[dict[int, list], dict[int, str]]:
    """Each finding's evidence (by its index) and every evidence event's actor as shown: a
    listed file by the attempt that wrote it, an attempt by its one label (issue 32)."""
    from commitsleuth.report.lanes import evidence_actors

    evs = {i: _evidence(store, f.evidence) for i, f in enumerate(findings)}
    return evs, evidence_actors(store, [e for es in evs.values() for e in es])


def findings_text(store: Store, findings: list[Finding], *, width: int = 400) -> str:
    """Findings grouped by detector, most severe first, each with its evidence and remedy."""
    if not findings:
        return "No findings."
    evs, actors = _evidence_of(store, findings)
    index = {id(f): i for i, f in enumerate(findings)}
    keep = _specs(findings)
    out: list[str] = []
    groups: dict[tuple[str, str, str], list[Finding]] = {}
    for f in findings:
        groups.setdefault((f.severity, f.code, f.name), []).append(f)
    # The overview first, one line per detector and severity, most severe first (the order
    # analyze returns); then each group in detail.
    out.append("Summary:")
    width_name = max(len(f"{c} {n}") for _, c, n in groups)
    for (severity, code, name), group in groups.items():
        places = sorted({f"{f.table_name or f.location or '?'} {f.partition_spec or ''}".strip() for f in group})
        shown = ", ".join(places[:3]) + (f", … ({len(places) - 3} more)" if len(places) > 3 else "")
        out.append(f"  {severity:<8}  {f'{code} {name}':<{width_name}}  {len(group):>4}  {shown}")
    out.append("")
    for (severity, code, name), group in groups.items():
        n = len(group)
        out.append(f"{code} {name} [{severity}] - {n} finding{'s' if n != 1 else ''}")
        for f in group:
            where = f.table_name or f.location or (f.detail or {}).get("app_id") or "?"
            out.append(f"  {f.partition_spec or '(no partition)'} in {where}")
            out.append(f"    {f.summary}")
            if f.actors:
                out.append(f"    actors: {', '.join(f.actors)}")
            if f.window_start is not None:
                out.append(f"    window: {f.window_start} .. {f.window_end}")
            out.append("    evidence:")
            for ev in evs[index[id(f)]]:
                line = redact(ev.text, keep=keep)  # before it is cut: a cut secret no pattern finds
                if len(line) > width:
                    line = line[: width - 3] + "..."
                actor = actors.get(ev.event_id, ev.actor)
                out.append(f"      {ev.where}" + (f"  [{actor}]" if actor else ""))
                out.append(f"        {line}")
            if f.remedy:
                out.append(f"    remedy: {f.remedy}")
        out.append("")
    counts = Counter(f.severity for f in findings)
    parts = ", ".join(f"{counts[s]} {s}" for s in reversed(SEVERITIES) if counts[s])
    out.append(f"{len(findings)} finding{'s' if len(findings) != 1 else ''} ({parts}).")
    # every piece above may carry log text (partitions, paths, evidence): all of it through the
    # redaction layer (the user's patterns of this run too), none of it driving the terminal
    return "\n".join(printable(redact(line, keep=keep), keep_layout=True) for line in out)


def _specs(findings: list[Finding]) -> tuple[str, ...]:
    """The findings' partition specs: identity, quoted as they are wherever a text names them."""
    return tuple({f.partition_spec for f in findings if f.partition_spec})


def findings_json(store: Store, findings: list[Finding]) -> str:
    evs, actors = _evidence_of(store, findings)
    items = []
    for i, f in enumerate(findings):
        items.append(
            {
                "code": f.code, "name": f.name, "severity": f.severity, "summary": f.summary,
                "table": f.table_name, "location": f.location, "partition": f.partition_spec,
                "window": [_iso(f.window_start), _iso(f.window_end)],
                "actors": f.actors,
                "actor_objects": f.actor_objects or [],
                "evidence": [
                    {"event_id": e.event_id, "where": e.where, "kind": e.kind,
                     "actor": actors.get(e.event_id, e.actor), "line": e.raw, "path": e.path}
                    for e in evs[i]
                ],
                "explanation": f.explanation, "remedy": f.remedy, "detail": f.detail,
            }
        )
    # the redaction layer over every string (the user's patterns of this run too)
    return json.dumps(redact_value(items, _specs(findings)), indent=2, default=str)


def table_text(columns: Sequence[str], rows: Sequence[Sequence], *, max_width: int = 80) -> str:
    """A fixed-width text table; long cells are cut with '...'."""
    cells = [[_cell(v, max_width) for v in row] for row in rows]
    widths = [len(c) for c in columns]
    for row in cells:
        widths = [max(w, len(v)) for w, v in zip(widths, row)]
    line = lambda vals: "  ".join(v.ljust(w) for v, w in zip(vals, widths)).rstrip()  # noqa: E731
    out = [line(list(columns)), line(["-" * w for w in widths])]
    out.extend(line(row) for row in cells)
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out)


def _cell(value, max_width: int) -> str:
    text = "" if value is None else str(value)
    text = printable(text.replace("\n", " "))
    return text if len(text) <= max_width else text[: max_width - 3] + "..."


def _iso(value) -> str | None:
    return value.isoformat() if value is not None else None
