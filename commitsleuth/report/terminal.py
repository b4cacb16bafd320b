"""The terminal picture of a partition's timeline: the lanes of ``lanes.py`` drawn with rich text.

Everything fits ``width`` columns (at most 100). A path keeps its file name whole
(``part-00000`` and ``part-00001`` differ only there): its directory is cut in the middle, and a
file name longer than the line wraps. An attempt keeps its whole label: the application all
lanes share is said once above them, and an actor too long for the event's line gets a line of
its own. Colour is an extra cue only; symbols carry the meaning.
"""

from __future__ import annotations

import os
import sys
from typing import Container, Sequence

from rich.cells import cell_len, get_character_cell_size
from rich.console import Console
from rich.text import Text

from commitsleuth.report.escape import printable
from commitsleuth.report.lanes import (OUTCOMES, PartitionLanes, TimelineRow, compact_apps, format_ts, kind_label,
                                partition_lanes)
from commitsleuth.store import Store

MAX_WIDTH = 100
_MARK_STYLE = {"ok": "bold green", "bad": "bold red", "info": "bold yellow"}
_BAR_STYLE = {"ok": "green", "bad": "red", "info": "blue"}
_BAR, _EMPTY = "━", " "




def middle(text: str | None, width: int) -> str:
    """``text`` cut to ``width`` cells by replacing its middle with '…', controls made visible.

    Widths are terminal cells, so a path with CJK characters (two cells each) fits too.
    """
    text = printable((text or "").replace("\n", " "))
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    head_w = (width - 1) // 2
    return _take(text, head_w) + "…" + _take(text[::-1], width - 1 - head_w)[::-1]


def path_lines(path: str | None, width: int, *, cut_dir: bool = True) -> list[str]:
    """``path`` in lines of at most ``width`` cells: whole when it fits; else its directory cut in
    the middle before a whole file name; a file name that does not fit wraps (nothing lost).
    ``cut_dir=False`` wraps the whole text instead (an attempt's label: every part tells)."""
    text = printable((path or "").replace("\n", " "))
    if cell_len(text) <= width:
        return [text]
    cut = text.rstrip("/").rfind("/") + 1
    head, name = text[:cut], text[cut:]
    if cut_dir and cut and cell_len(name) + 8 <= width:  # room for a recognisable piece of the directory
        return [middle(head, width - cell_len(name)) + name]
    lines = []
    while text:
        piece = _take(text, width) or text[0]
        lines.append(piece)
        text = text[len(piece):]
    return lines


def pad(text: str, width: int) -> str:
    return text + " " * max(0, width - cell_len(text))


def _take(text: str, width: int) -> str:
    used = 0
    for i, ch in enumerate(text):
        used += get_character_cell_size(ch)
        if used > width:
            return text[:i]
    return text


def lanes_text(model: PartitionLanes, *, width: int = MAX_WIDTH, title: str | None = None,
               color: bool = True) -> list[Text]:
    """The lanes, the axis and a legend as rich ``Text`` lines, each at most ``width`` columns."""
    width = max(40, min(width, MAX_WIDTH))
    out: list[Text] = []
    if title:
        out.append(Text(middle(title, width), style="bold"))
    out.extend(Text(line, style="dim") for line in _wrap(model.axis.label, width))
    shared = shared_app(model)
    if shared:
        out.append(Text(middle(f"lanes of {shared}:", width), style="dim"))
    names = lane_names(model, shared)
    label_w = min(max([cell_len(n) for n in names] + [8]), width // 2)
    track_w = width - label_w - 3
    for lane, name in zip(model.lanes, names):
        # an attempt's label says stage, task, attempt and TID first: a long one loses its host's end
        cut = _end(name, label_w) if lane.actor_type == "attempt" else middle(name, label_w)
        line = Text(pad(cut, label_w) + " │")
        line.append_text(_track(lane, track_w))
        line.append("│")
        out.append(line)
    out.extend(_axis_lines(model, label_w, track_w))
    out.extend(_legend(model, width, color))
    return out


def shared_app(model: PartitionLanes) -> str | None:
    """The application every attempt lane's label starts with (``app/stage …``), when there is
    one and at least one lane: said once above the lanes instead of on each."""
    apps = {ln.app for ln in model.lanes if ln.actor_type == "attempt"}
    if len(apps) != 1 or None in apps:
        return None
    app = apps.pop()
    named = [ln for ln in model.lanes if ln.label.startswith(app + "/")]
    return app if named else None


def lane_names(model: PartitionLanes, shared: str | None) -> list[str]:
    """Each lane's label as drawn: without the ``shared`` application said above the lanes, or
    with its application compacted to the tail that tells the applications apart."""
    short = compact_apps({ln.app for ln in model.lanes if ln.app})
    out = []
    for ln in model.lanes:
        name = ln.label
        if ln.app and name.startswith(ln.app + "/"):
            name = name[len(ln.app) + 1:] if ln.app == shared else short[ln.app] + name[len(ln.app):]
        out.append(name)
    return out


def _end(text: str, width: int) -> str:
    text = printable(text)
    return text if cell_len(text) <= width else _take(text, width - 1) + "…"


def _track(lane, track_w: int) -> Text:
    cells = [_EMPTY] * track_w
    lo, hi = _col(lane.start, track_w), _col(lane.end, track_w)
    cells[lo:hi + 1] = [_BAR] * (hi + 1 - lo)
    styles: dict[int, tuple[int, str]] = {}
    for m in lane.marks:
        c = _col(m.pos, track_w)
        r = OUTCOMES.index(m.outcome)
        if c in styles and styles[c][0] <= r:
            continue  # a more important mark already sits in this cell
        cells[c] = m.symbol
        styles[c] = (r, _MARK_STYLE[m.outcome] + (" underline" if m.evidence else ""))
    track = Text("".join(cells))
    track.stylize(_BAR_STYLE[lane.outcome], lo, hi + 1)
    for c, (_, style) in styles.items():
        track.stylize(style, c, c + 1)
    return track


def _axis_lines(model: PartitionLanes, label_w: int, track_w: int) -> list[Text]:
    rule = ["─"] * track_w
    labels = [" "] * (track_w + 2)
    free_from = 0
    for pos, label in model.axis.ticks:
        c = _col(pos, track_w)
        rule[c] = "┴"
        start = max(0, min(c - len(label) // 2, track_w + 2 - len(label)))
        if start < free_from:
            continue  # would overlap the previous label: the tick stays, its label goes
        labels[start:start + len(label)] = list(label)
        free_from = start + len(label) + 1
    pad = " " * (label_w + 1)
    return [
        Text(pad + "└" + "".join(rule) + "┘", style="dim"),
        Text((pad + "".join(labels)).rstrip(), style="dim"),
    ]


def _legend(model: PartitionLanes, width: int, color: bool) -> list[Text]:
    seen: dict[str, str] = {}
    for lane in model.lanes:
        for m in lane.marks:
            seen.setdefault(m.symbol, m.event.kind)
    parts = [f"{s} {kind_label(k)}" for s, k in seen.items()]
    windows = sorted({ln.window for ln in model.lanes})
    parts.append("━ " + " / ".join(
        "attempt start..end" if w == "attempt" else "first..last event" for w in windows))
    evidence = any(m.evidence for ln in model.lanes for m in ln.marks)
    if color:
        parts.append("green ok, red removed/failed/denied" + (", underlined = evidence of a finding" if evidence else ""))
    if evidence:
        parts.append("* in the list = evidence of a finding")
    return [Text(line, style="dim") for line in _wrap("legend: " + "; ".join(parts), width)]


def events_text(events: Sequence[TimelineRow], *, width: int = MAX_WIDTH,
                evidence: Container[int] = (), actors: dict[int, str] | None = None) -> list[Text]:
    """The numbered event list under the lanes: time, kind, actor (``actors``: as its lane names
    it), then path and file:line; events that are evidence of a finding carry a '*' after their
    number. An actor too long for the line is on a ``by`` line of its own."""
    width = max(40, min(width, MAX_WIDTH))
    actors = actors or {}
    n_w = len(str(len(events))) + 1
    out = [Text(f"{'#'.ljust(n_w)} {'time'.ljust(23)} {'kind'.ljust(16)} actor", style="bold")]
    indent = " " * (n_w + 1)
    rest = width - len(indent) - 5
    for i, e in enumerate(events, 1):
        num = f"{i}*" if e.event_id in evidence else str(i)
        head = f"{num.ljust(n_w)} {format_ts(e.ts).ljust(23)} {e.kind.ljust(16)} "
        actor = printable(actors.get(e.event_id, e.actor) or "")
        if cell_len(head + actor) <= width:
            out.append(Text(head + actor))
        else:
            out.append(Text(head.rstrip()))
            out.extend(Text(indent + key + line) for key, line in _keyed("by   ", path_lines(actor, rest, cut_dir=False)))
        if e.path:
            out.extend(Text(indent + key + line) for key, line in _keyed("path ", path_lines(e.path, rest)))
        out.extend(Text(indent + key + line, style="cyan") for key, line in _keyed("at   ", path_lines(e.where, rest)))
    out.append(Text(f"({len(events)} event{'s' if len(events) != 1 else ''})"))
    return out


def _keyed(key: str, lines: list[str]) -> list[tuple[str, str]]:
    return [(key if i == 0 else " " * len(key), line) for i, line in enumerate(lines)]


def print_timeline(store: Store, events: Sequence[TimelineRow], *, title: str | None = None,
                   color: bool = True, file=None) -> None:
    """Print the lanes and the event list of ``events`` to ``file`` (stdout).

    Colour follows the terminal (rich's detection, FORCE_COLOR); ``color=False`` or a non-empty
    NO_COLOR gives plain text without any escape sequence, bold and dim included.
    """
    file = file or sys.stdout
    color = color and not os.environ.get("NO_COLOR")
    width = MAX_WIDTH
    if file.isatty():
        import shutil

        width = min(MAX_WIDTH, shutil.get_terminal_size((MAX_WIDTH, 24)).columns)
    evidence = _evidence_ids(store)
    model = partition_lanes(store, events, evidence, max_ticks=max(2, (width - 44) // 12))
    console = Console(file=file, width=width, no_color=not color, highlight=False,
                      emoji=False, markup=False, color_system="auto" if color else None)
    lines = lanes_text(model, width=width, title=title, color=color) + [Text("")]
    for line in lines + events_text(model.events, width=width, evidence=evidence, actors=model.actors):
        console.print(line, no_wrap=True, overflow="crop", crop=True)


def _evidence_ids(store: Store) -> set[int]:
    rows = store.con.execute("SELECT DISTINCT unnest(evidence) FROM findings").fetchall()
    return {r[0] for r in rows}


def _col(pos: float, track_w: int) -> int:
    return max(0, min(track_w - 1, int(pos * track_w)))


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width) or [""]
