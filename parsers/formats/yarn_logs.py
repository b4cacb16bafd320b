"""`yarn logs -applicationId …` text output: per container a header (``Container: <id> on
<host>_<port>``, Hadoop 3 adds ``LogAggregationType:``), then per log file ``LogType:``, ``Log
Upload Time``/``LogLastModifiedTime``, ``LogLength``, ``Log Contents:`` (Hadoop 3:
``LogContents:``), the file's lines and ``End of LogType:``. Each section is read by the format
of its own lines (detected as for a file; a ``stdout`` of no format is task stdout), its events
given the container's host and id. Strings from hadoop-yarn-common's
``AggregatedLogFormat.LogReader`` and ``LogToolUtils``."""

from __future__ import annotations

import itertools
import re
from dataclasses import replace
from typing import Iterable, Iterator

from commitsleuth.model import Event
from commitsleuth.parsers.attempts import attempt_of_log_name
from commitsleuth.parsers.base import Format, ParseStats, Sample, SourceContext, parse_lines

CONTAINER = re.compile(r"Container: (?P<container>container_\w+) on (?P<host>\S+?)(?:_(?P<port>\d+))?\s*$")
LOG_TYPE = re.compile(r"LogType:\s*(?P<type>\S+)\s*$")
CONTENTS = re.compile(r"Log ?Contents:\s*$")
END = re.compile(r"End of LogType:\s*(?P<type>\S+)")
DETECT_LINES = 200
BEFORE_MAX = 50_000  # lines above the first header held at once


def decode(lines: Iterable[tuple[int, int, str]], ctx: SourceContext, stats: ParseStats) -> Iterator[Event]:
    from commitsleuth.parsers.registry import detect, get_format  # the registry lists this format

    it = iter(lines)
    container = host = log_type = None
    before: list[tuple[int, int, str]] | None = []  # lines above the first header; None once met
    for line_no, offset, text in it:
        stats.lines += 1
        m = CONTAINER.match(text)
        if m:
            if before:
                yield from _before_headers(before, ctx, stats)
            before = None
            container, host = m["container"], m["host"]
            continue
        if before is not None:
            # an excerpt starts where it was cut: the tail of a container's log, or the client's
            # own lines; kept and read by their own format, or counted
            before.append((line_no, offset, text))
            if len(before) >= BEFORE_MAX:  # --format yarn-logs on a file with no header: in parts
                yield from _before_headers(before, ctx, stats)
                before = []
            continue
        m = LOG_TYPE.match(text)
        if m:
            log_type = m["type"]
            continue
        if not CONTENTS.match(text) or container is None:
            continue
        section = _section(it, stats)
        head = list(itertools.islice(section, DETECT_LINES))
        fmt = detect(f"{container}/{log_type}", [t for _, _, t in head])
        if fmt is None and log_type == "stdout":
            fmt = get_format("mr1-task-stdout")
        if fmt is None or fmt.decoder is not None:
            stats.lines += len(head) + sum(1 for _ in section)  # gc.log, prelaunch.out, …
            continue
        sub = ParseStats()
        # a Tez task's section is its attempt's own log (LogType:syslog_<attempt>)
        own = replace(ctx, attempt_id=attempt_of_log_name(log_type or "") or ctx.attempt_id)
        for ev in parse_lines(fmt, itertools.chain(head, section), own, sub):
            ev.host = ev.host or host
            # a line that names another container (the Tez AM's "… Is using containerId: […]")
            # keeps it: that is the attempt's, the section's is only where it was logged
            ev.detail = {"container": container, "log_type": log_type, "format": fmt.name, **(ev.detail or {})}
            yield ev
        stats.merge(sub)
    if before:  # --format yarn-logs on text with no header at all
        yield from _before_headers(before, ctx, stats)


def _before_headers(lines: list, ctx: SourceContext, stats: ParseStats) -> Iterator[Event]:
    """The lines above the first ``Container:`` header, read by the format they are in (the
    section they were cut from ends at its ``End of LogType:``); without one, each is a reject."""
    from commitsleuth.parsers.registry import detect

    end = next((i for i, (_, _, text) in enumerate(lines) if END.match(text)), len(lines))
    body, log_type = lines[:end], (END.match(lines[end][2])["type"] if end < len(lines) else None)
    fmt = detect(log_type or "", [t for _, _, t in body])
    if fmt is None or fmt.decoder is not None:
        for line_no, _, text in body:
            if text.strip():
                stats.reject("yarn-logs: line above the first container header, in no format", line_no, text)
        return
    sub = ParseStats()
    own = replace(ctx, attempt_id=attempt_of_log_name(log_type or "") or ctx.attempt_id)
    for ev in parse_lines(fmt, body, own, sub):
        ev.detail = {"log_type": log_type, "format": fmt.name, "before_headers": True, **(ev.detail or {})}
        yield ev
    sub.lines = 0  # counted as they were read
    stats.merge(sub)


def _section(it: Iterator, stats: ParseStats) -> Iterator[tuple[int, int, str]]:
    """The lines of one log file, up to its ``End of LogType:``."""
    for line_no, offset, text in it:
        if END.match(text):
            stats.lines += 1
            return
        yield line_no, offset, text


FORMAT = Format(
    name="yarn-logs",
    description="`yarn logs` aggregated text output: container sections, each log file read by its own format",
    head=None,
    decoder=decode,
    record_start=CONTAINER,
    claims=CONTAINER,
    priority=10,
    kinds=("attempt_state", "attempt_start", "attempt_end", "commit_allowed", "task_commit", "rename",
           "speculate", "job_end", "conf"),
    samples=(
        # a `yarn logs` header published with an MR2 map container's syslog
        Sample("Container: container_1612183984688_0028_01_000035 on node05_45454", None),
    ),
)
