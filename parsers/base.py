"""What every log format shares: the declaration (name, head, samples) and the pure parse.

Parsing never touches the store: ``parse_lines`` turns numbered lines into events and counts
what it could not read, so the same code runs in the local engine and inside Spark.
``parsers/scan.py`` is the same parse over whole byte blocks (the local engine's fast path);
both call ``RecordParser`` and a test checks they yield identical events.

A format's head is declared as data, lnav-style: one regular expression with named groups
(``date``, ``time``, ``level``, ``thread``, ``logger``, ``message``) that both recognises a
record's first line and splits it. The message after the head goes through the shared lark
grammar (``grammars/messages.lark``) only when it carries one of its keywords.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from commitsleuth.model import Event
from commitsleuth.parsers.attempts import ATTEMPT_RE, attempt_fields
from commitsleuth.parsers.messages import KEYWORD_RE, history_continued, parse_message

MAX_CONTINUATION_LINES = 40
MAX_RAW_CHARS = 8192
BINARY = "binary data (NUL bytes)"
# What a query does after it starts: in a log without threads (Hive CLI console, Hive 0.x,
# Sqoop's console) these lines belong to the query started last, which nothing else names.
QUERY_STEPS = ("load", "publish", "stats", "job_start", "job_end", "dir_create", "delete", "dedup_remove")
OVERWRITE = re.compile(r"\bOVERWRITE\b", re.I)


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
    keep_reads: bool = False  # storage audit logs: one event per read instead of counts per hour


@dataclass
class ParseStats:
    lines: int = 0
    records: int = 0  # head lines seen (the line parse only: the block scan never looks at most)
    events: int = 0
    rejected: int = 0
    merged: int = 0  # metastore audit lines that repeat the call line just above them
    rejects: dict[str, list] = field(default_factory=dict)  # reason -> [count, first_line, sample]
    # The lines of the rejects counted lately, as runs [first, last, reason] of consecutive lines
    # with one reject each: a checkpoint stores only the rejects before the line a continued read
    # starts at (``since``); the ones at or after it are counted again by that read.
    recent: list[list] = field(default_factory=list)

    def reject(self, reason: str, line_no: int, text: str) -> None:
        self.rejected += 1
        entry = self.rejects.get(reason)
        if entry is None:
            self.rejects[reason] = [1, line_no, text[:500]]
        else:
            entry[0] += 1
            if line_no < entry[1]:
                entry[1], entry[2] = line_no, text[:500]
        run = self.recent[-1] if self.recent else None
        if run is not None and run[2] == reason and run[1] + 1 == line_no:
            run[1] = line_no  # a run of bad lines (binary data, a truncated tail) stays one entry
        else:
            self.recent.append([line_no, line_no, reason])

    def since(self, line_no: int) -> dict[str, int]:
        """Reason -> how many of the recent rejects lie at ``line_no`` or after it."""
        out: dict[str, int] = {}
        for first, last, reason in self.recent:
            if last >= line_no:
                out[reason] = out.get(reason, 0) + last - max(first, line_no) + 1
        return out

    def forget_before(self, line_no: int) -> None:
        """Drop the lines of the recent rejects before ``line_no`` (a checkpoint stored them)."""
        self.recent = [[max(first, line_no), last, reason] for first, last, reason in self.recent
                       if last >= line_no]

    def snapshot(self) -> "ParseStats":
        """A copy of the counters as they are now (a reader thread runs ahead of the writer)."""
        return ParseStats(self.lines, self.records, self.events, self.rejected, self.merged,
                          {reason: list(entry) for reason, entry in self.rejects.items()},
                          [list(run) for run in self.recent])

    def restore(self, snapshot: "ParseStats") -> None:
        """The counters set to a snapshot's, in place."""
        self.lines, self.records, self.events = snapshot.lines, snapshot.records, snapshot.events
        self.rejected, self.merged = snapshot.rejected, snapshot.merged
        self.rejects = {reason: list(entry) for reason, entry in snapshot.rejects.items()}
        self.recent = [list(run) for run in snapshot.recent]

    def rejects_since(self, stored: dict[str, int]) -> dict[str, list]:
        """Reject counters ``{reason: [count, first_line, sample]}`` grown past ``stored``
        (reason -> count already in the store): what the next write must add."""
        return {reason: [count - stored.get(reason, 0), line, sample]
                for reason, (count, line, sample) in self.rejects.items() if count > stored.get(reason, 0)}

    def reject_counts(self) -> dict[str, int]:
        """Reason -> count, as ``rejects_since`` takes them once written."""
        return {reason: entry[0] for reason, entry in self.rejects.items()}

    def merge(self, other: "ParseStats", line_shift: int = 0) -> None:
        """Add another part's counters (a later range of the same file, lines shifted)."""
        self.lines += other.lines
        self.records += other.records
        self.events += other.events
        self.merged += other.merged
        self.recent.extend([first + line_shift, last + line_shift, reason] for first, last, reason in other.recent)
        for reason, (count, first, sample) in other.rejects.items():
            self.rejected += count
            entry = self.rejects.get(reason)
            if entry is None or first + line_shift < entry[1]:
                self.rejects[reason] = [count + (entry[0] if entry else 0), first + line_shift, sample]
            else:
                entry[0] += count


@dataclass(frozen=True)
class Format:
    """One log format, declared as data.

    ``head``: pattern with named groups matching a record's first line (None for headless
    output such as task stdout, where every line stands alone). ``record_start``: the test that
    a line begins a record, by default the head itself; lines that fail it continue the record
    above them. ``priority``: among formats that match a file equally, the higher one is more
    specific. ``decoder``: formats that are not line-oriented text logs (Spark event-log JSON)
    bring their own, ``decoder(lines, ctx, stats) -> Iterator[Event]``. ``marker``: lines only
    this format's producers write (their loggers); among formats whose heads match a file nearly
    equally, one whose markers are a fair share of the lines wins, whatever the priorities.
    """

    name: str
    description: str
    samples: tuple[Sample, ...]
    kinds: tuple[str, ...]
    head: re.Pattern | None = None
    record_start: re.Pattern | None = None
    path_hint: re.Pattern | None = None
    priority: int = 0
    decoder: Callable | None = None
    # single-line records whose bulk is only counted (storage audit logs) bring a block scan:
    # ``scanner(fmt, ctx, stats, first_line, at_start=…)``, the interface of scan.BlockScanner
    scanner: Callable | None = None
    marker: re.Pattern | None = None
    # a line that, among a file's first lines, makes the file this format's outright (a header
    # such as `yarn logs`' "Container: … on …", above lines of other formats)
    claims: re.Pattern | None = None

    @property
    def starts(self) -> re.Pattern | None:
        return self.record_start or self.head

    def matches_head(self, line: str) -> bool:
        starts = self.starts
        return starts is not None and starts.match(line) is not None

    def parse_head(self, line: str) -> dict | None:
        """Head fields plus ``message`` of a record's first line, or None if it has no head."""
        if self.head is None:
            return {"message": line}
        m = self.head.match(line)
        if m is None:
            return None
        return head_fields(m.groupdict())


def parse_ts(date: str, time: str) -> dt.datetime | None:
    """``2013-05-30`` or ``17/06/09`` + ``10:13:59,124`` (or ``T10:13:59.124``) -> datetime."""
    time = time.lstrip("T ").replace(",", ".")
    if "/" in date:
        y, mo, d = date.split("/")
        date = f"{'20' + y if len(y) == 2 else y}-{mo}-{d}"
    try:
        return dt.datetime.fromisoformat(f"{date} {time}")
    except ValueError:
        return None


def head_fields(g: dict) -> dict:
    out: dict = {"message": g.get("message") or ""}
    if g.get("date"):
        out["ts"] = parse_ts(g["date"], g.get("time") or "00:00:00")
    detail = {}
    if g.get("level"):
        detail["level"] = g["level"]
    if g.get("logger"):
        detail["logger"] = g["logger"]
    if detail:
        out["detail"] = detail
    if g.get("thread"):
        out["thread"] = g["thread"]
    if g.get("host"):
        out["host"] = g["host"]
    return out


class RecordParser:
    """The parse of one record's first line, and the little state a source carries across
    records: the attempt a headless dump names above its output, and each thread's last
    metastore call (its audit line repeats it)."""

    def __init__(self, fmt: Format, ctx: SourceContext, stats: ParseStats, tie_queries: bool = True):
        self.fmt = fmt
        # a worker's range in the middle of a file counts lines from its own start and has not
        # seen the query above it: it ties no step to a query (CS104's own join still does)
        self.tie_queries = tie_queries
        self.ctx = ctx
        self.stats = stats
        self.attempt = ctx.attempt_id
        self.last_call: dict[str | None, tuple] = {}
        self.looked_up: dict[tuple, dict] = {}  # (thread, table) -> its last get_partition: values, time, line
        self.query: dict | None = None  # the query a threadless log started last

    def event(self, line_no: int, offset: int, text: str, hit: bool = False) -> Event | None:
        """The event a record's first line states, or None. ``hit``: the caller already found
        a keyword in exactly this text."""
        if not hit and KEYWORD_RE.search(text) is None:
            return None
        head = self.fmt.parse_head(text)
        if head is None:
            self.stats.reject(f"{self.fmt.name}: head not understood", line_no, text)
            return None
        fields = parse_message(head.pop("message"))
        if fields is None:
            self.stats.reject("keyword line not understood", line_no, text)
            return None
        if not fields:
            return None
        if "reject" in fields:  # a line the grammar reads, yet without what its event needs
            self.stats.reject(fields["reject"], line_no, text)
            return None
        detail = {**head.pop("detail", {}), **(fields.pop("detail", None) or {})}
        fields = {**head, **fields}
        if fields["kind"] == "partition_lookup":
            # Hive 2.x-3.x audit the values on the get_partition line before add_partition
            self.looked_up[(fields.get("thread"), fields.get("table_name"))] = {
                "values": detail.get("values"), "ts": fields.get("ts"), "line": line_no, "call": detail["call"]}
            return None
        if fields["kind"].startswith("partition_") and "call" in detail and fields.get("partition_spec") is None:
            self._checked(fields, detail)
        if fields["kind"].startswith("partition_") and "call" in detail:
            if self._repeated_call(fields, detail):
                self.stats.merged += 1
                return None
        if self.attempt and "attempt_id" not in fields:
            fields.update(attempt_fields(self.attempt))
        if self.tie_queries and fields.get("thread") is None and "attempt_id" not in fields:
            self._tie_to_query(fields, detail, line_no, text)
        return Event(source_id=self.ctx.source_id, line_no=line_no, byte_offset=offset, raw=text,
                     detail=detail or None, **fields)

    def _checked(self, fields: dict, detail: dict) -> None:
        """The call's values from its thread's check of the same table (Hive.loadPartition asks
        get_partition[_with_auth], then adds or alters what it did not find; the add names only
        the table), and the check's time: the load began there, so two threads' check-then-add
        overlap although their adds are apart (racing loaders)."""
        check = self.looked_up.pop((fields.get("thread"), fields.get("table_name")), None)
        if not check or not check["values"] or detail.get("values") not in (None, [], check["values"]):
            return
        detail["values"] = check["values"]
        if check["ts"] is not None:
            detail.update(checked_at=check["ts"].isoformat(sep=" "), check_line=check["line"], check_call=check["call"])

    def _tie_to_query(self, fields: dict, detail: dict, line_no: int, text: str) -> None:
        """A threadless line's query: a query start opens one unless it names the id of the one
        open (compile, execute) or is the first to name one (Hive 1.x prints "Starting command:
        <sql>", then "Query ID = <id>"); the steps after it are its, a load of an OVERWRITE
        statement an overwrite."""
        kind = fields["kind"]
        if kind == "query_start":
            qid, q = fields.get("query_id"), self.query
            if q is None or qid is None or q["id"] not in (None, qid):
                self.query = q = {"id": qid, "line": line_no, "overwrite": False}
            q["id"] = q["id"] or qid
            q["overwrite"] = q["overwrite"] or OVERWRITE.search(text) is not None
        elif kind == "query_end":
            self.query = None
        elif kind in QUERY_STEPS and self.query is not None and fields.get("query_id") is None:
            q = self.query
            # a query the log gives no id is named by its line, as CS104 names it ("query at line 5")
            fields["query_id"] = q["id"] or f"query at line {q['line']}"
            detail["query_line"] = q["line"]
            if kind == "load" and q["overwrite"]:
                detail["overwrite"] = True

    def _repeated_call(self, fields: dict, detail: dict) -> bool:
        key = (fields["kind"], fields.get("table_name"), tuple(detail.get("values") or ()),
               fields.get("partition_spec"))
        thread = fields.get("thread")
        if detail.get("via") == "audit":
            return self.last_call.pop(thread, None) == key
        self.last_call[thread] = key
        return False

    def headless_attempt(self, text: str) -> bool:
        """A line naming only an attempt: the blog and userlogs dumps print it above its output."""
        bare = text.strip()
        if ATTEMPT_RE.fullmatch(bare):
            self.attempt = bare
            return True
        return False


def finish(ev: Event, continuation: list[str]) -> Event:
    """The record's event with its continuation lines (stack trace, SQL) attached."""
    if continuation:
        if ev.kind == "attempt_end" and ev.host is None:
            fields = {"detail": ev.detail}
            history_continued(fields, continuation)
            ev.host = fields.get("host")
        ev.raw = "\n".join([ev.raw or "", *continuation])[:MAX_RAW_CHARS]
        ev.detail = {**(ev.detail or {}), "continuation_lines": len(continuation)}
    return ev


def parse_lines(
    fmt: Format,
    lines: Iterable[tuple[int, int, str]],
    ctx: SourceContext,
    stats: ParseStats | None = None,
) -> Iterator[Event]:
    """Events stated by ``(line_no, byte_offset, text)`` lines of one source, in order.

    A record is a head line plus the continuation lines under it (stack traces, SQL); only
    records whose line carries a keyword reach the grammar. Lines before the first head of a
    headed format, and lines of binary junk, are rejected, counted in ``stats``.
    """
    stats = stats if stats is not None else ParseStats()
    if fmt.decoder is not None:
        yield from fmt.decoder(lines, ctx, stats)
        return
    parser = RecordParser(fmt, ctx, stats)
    headless = fmt.head is None
    pending: Event | None = None
    continuation: list[str] = []
    seen_head = headless

    try:
        for line_no, offset, text in lines:
            stats.lines += 1
            if "\x00" in text:
                stats.reject(BINARY, line_no, text)
                continue
            if headless:
                if parser.headless_attempt(text):
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
                stats.events += 1
                yield finish(pending, continuation)
                pending = None
            continuation = []
            pending = parser.event(line_no, offset, text)
    except Exception:
        # the lines stopped coming (a damaged stream): the record is kept as far as it was read
        if pending is not None:
            stats.events += 1
            yield finish(pending, continuation)
        raise
    if pending is not None:
        stats.events += 1
        yield finish(pending, continuation)


__all__ = ["ATTEMPT_RE", "Format", "ParseStats", "RecordParser", "Sample", "SourceContext",
           "attempt_fields", "finish", "parse_lines", "parse_ts"]
