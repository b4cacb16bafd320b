"""What every log format shares: the declaration (name, grammar, samples) and the pure parse.

Parsing never touches the store: ``parse_lines`` turns numbered lines into events and counts
what it could not read, so the same code runs in the local engine and inside Spark.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from lark import UnexpectedInput

from commitsleuth.model import Event
from commitsleuth.parsers.lark_loader import grammar
from commitsleuth.parsers.messages import KEYWORD_RE, parse_message

MAX_CONTINUATION_LINES = 40
MAX_RAW_CHARS = 8192
ATTEMPT_RE = re.compile(
    r"attempt_(?P<cluster>\d+)_(?P<job>\d+)_(?P<type>[mr])_(?P<task>\d+)_(?P<attempt>\d+)"
)


@dataclass(frozen=True)
class Sample:
    """A real line of the format and the event kind it states (None: a line of no interest)."""

    line: str
    kind: str | None = None


@dataclass
class SourceContext:
    """What is known of a source before reading it (its path may name the attempt)."""

    uri: str
    source_id: int | None = None
    attempt_id: str | None = None


@dataclass
class ParseStats:
    lines: int = 0
    records: int = 0
    events: int = 0
    rejected: int = 0
    rejects: dict[str, list] = field(default_factory=dict)  # reason -> [count, first_line, sample]

    def reject(self, reason: str, line_no: int, text: str) -> None:
        self.rejected += 1
        entry = self.rejects.get(reason)
        if entry is None:
            self.rejects[reason] = [1, line_no, text[:500]]
        else:
            entry[0] += 1


@dataclass(frozen=True)
class Format:
    """One log format, declared as data.

    ``head``: name of the lark grammar that splits a record's first line into head fields and
    the message (``None`` for headless output such as task stdout). ``record_start``: a cheap
    test that a line begins a record; lines that fail it continue the record above them.
    ``priority``: among formats that match a file equally, the higher one is more specific.
    """

    name: str
    description: str
    head: str | None
    record_start: re.Pattern
    samples: tuple[Sample, ...]
    kinds: tuple[str, ...]
    head_fields: Callable[[object], dict] | None = None
    path_hint: re.Pattern | None = None
    priority: int = 0
    # Formats that are not line-oriented text logs (Spark event-log JSON) bring their own
    # decoder: ``decoder(lines, ctx, stats) -> Iterator[Event]``, called by ``parse_lines``.
    decoder: Callable | None = None

    def matches_head(self, line: str) -> bool:
        return self.record_start.match(line) is not None

    def parse_head(self, line: str) -> dict | None:
        """Head fields plus ``message`` of a record's first line, or None if it has no head."""
        if self.head is None:
            return {"message": line}
        try:
            tree = grammar(self.head).parse(line)
        except UnexpectedInput:
            return None
        return self.head_fields(tree)


def parse_ts(date: str, time: str) -> dt.datetime | None:
    """``2013-05-30`` + ``10:13:59,124`` (or ``T10:13:59.124``) -> datetime."""
    time = time.lstrip("T ").replace(",", ".")
    try:
        return dt.datetime.fromisoformat(f"{date} {time}")
    except ValueError:
        return None


def attempt_fields(attempt_id: str) -> dict:
    m = ATTEMPT_RE.fullmatch(attempt_id)
    if not m:
        return {"attempt_id": attempt_id}
    return {
        "attempt_id": attempt_id,
        "attempt_no": int(m["attempt"]),
        "job_id": f"job_{m['cluster']}_{m['job']}",
        "task_id": f"task_{m['cluster']}_{m['job']}_{m['type']}_{m['task']}",
    }


def parse_lines(
    fmt: Format,
    lines: Iterable[tuple[int, int, str]],
    ctx: SourceContext,
    stats: ParseStats | None = None,
) -> Iterator[Event]:
    """Events stated by ``(line_no, byte_offset, text)`` lines of one source, in order.

    A record is a head line plus the continuation lines under it (stack traces, SQL); only
    records whose message carries a keyword reach the grammars. Lines before the first head
    of a headed format are rejected, counted in ``stats``.
    """
    stats = stats if stats is not None else ParseStats()
    if fmt.decoder is not None:
        yield from fmt.decoder(lines, ctx, stats)
        return
    attempt = ctx.attempt_id
    pending: Event | None = None
    continuation: list[str] = []
    seen_head = fmt.head is None

    def finish(ev: Event) -> Event:
        if continuation:
            ev.raw = "\n".join([ev.raw or "", *continuation])[:MAX_RAW_CHARS]
            ev.detail = {**(ev.detail or {}), "continuation_lines": len(continuation)}
            continuation.clear()
        stats.events += 1
        return ev

    for line_no, offset, text in lines:
        stats.lines += 1
        if fmt.head is None:
            bare = text.strip()
            if ATTEMPT_RE.fullmatch(bare):
                attempt = bare  # the blog and userlogs dumps print the attempt above its output
                continue
        elif not fmt.matches_head(text):
            if pending is not None and len(continuation) < MAX_CONTINUATION_LINES:
                continuation.append(text)
            elif not seen_head and text.strip():
                stats.reject("no head before first record", line_no, text)
            continue
        seen_head = True
        stats.records += 1
        if pending is not None:
            yield finish(pending)
            pending = None
        continuation.clear()
        if KEYWORD_RE.search(text) is None:
            continue
        head = fmt.parse_head(text)
        if head is None:
            stats.reject(f"{fmt.name}: head not understood", line_no, text)
            continue
        fields = parse_message(head.pop("message") or "")
        if fields is None:
            stats.reject("keyword line not understood", line_no, text)
            continue
        fields = {**head, **fields}
        if attempt and "attempt_id" not in fields:
            fields.update(attempt_fields(attempt))
        pending = Event(
            source_id=ctx.source_id, line_no=line_no, byte_offset=offset, raw=text, **fields
        )
    if pending is not None:
        yield finish(pending)
