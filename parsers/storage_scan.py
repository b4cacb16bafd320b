"""The block scan of storage records (HDFS audit, S3 access logs): most lines are reads, and
they are only counted, so one regular expression over a whole block finds their (principal,
call, hour) keys and a Counter adds them up; only the lines of writes (found by a second
expression) go through the format's line decoder. Same events as the line parse
(``parse_lines`` with the format's decoder); a test checks it.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Callable, Iterator

from commitsleuth.model import Event
from commitsleuth.parsers.base import MAX_RAW_CHARS, Format, ParseStats, SourceContext
from commitsleuth.parsers.scan import invalid_utf8_lines


class ReadCounts:
    """A storage decoder's read counts: key -> [count, first line_no, its offset, its text]."""

    def __init__(self):
        self.reads: dict[tuple, list] = {}

    def count(self, key: tuple, line_no: int, offset: int, text: str, n: int = 1) -> None:
        entry = self.reads.get(key)
        if entry is None:
            self.reads[key] = [n, line_no, offset, text]
        else:
            entry[0] += n


def _text(raw: bytes) -> str:
    return raw[:MAX_RAW_CHARS * 16].decode("utf-8", "replace").rstrip("\r")


class RecordBlockScan:
    """``feed(offset, block)`` of whole lines in order; ``close()`` at the end of the source.

    ``reads``: a multi-line pattern whose three groups are (hour, principal, call) of every
    record; ``writes``: a pattern found on the lines the decoder must see; ``writes_set``: the
    calls that are not reads. ``decoder``: the format's line decoder class (``line``,
    ``count``, ``finish``, ``reads``).
    """

    def __init__(self, decoder: Callable, reads: re.Pattern, writes: re.Pattern, writes_set: set[str],
                 fmt: Format, ctx: SourceContext, stats: ParseStats, first_line: int = 1, at_start: bool = True):
        self.decoder = decoder(ctx, stats)
        self.reads_re, self.writes_re, self.writes_set = reads, writes, writes_set
        self.ctx, self.stats = ctx, stats
        self.line_no = first_line
        self.invalid_utf8 = 0
        self.parser = self  # the engine resets ``parser.stats`` only when ``wants_more``

    def feed(self, offset: int, data: bytes) -> Iterator[Event]:
        if not data:
            return
        n_lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
        self.stats.lines += n_lines
        base = self.line_no
        self.line_no = base + n_lines
        if not data.isascii():
            self.invalid_utf8 += invalid_utf8_lines(data)
        if self.ctx.keep_reads:
            yield from self._every_line(offset, data, base, skip=set())
            return
        done: set[int] = set()  # starts of the lines the decoder saw
        line_at, line_no, last_end = 0, base, -1
        for m in self.writes_re.finditer(data):
            start = data.rfind(b"\n", 0, m.start()) + 1
            if start <= last_end:
                continue  # a second hit on the same line
            line_no += data.count(b"\n", line_at, start)
            line_at = start
            end = data.find(b"\n", m.end())
            end = len(data) if end < 0 else end
            last_end = end
            raw = data[start:end]
            r = self.reads_re.match(raw)
            if r is not None and r.group(3).decode("utf-8", "replace") not in self.writes_set:
                continue  # the write's name elsewhere in a read's line: the read is counted below
            done.add(start)
            yield from self._events(self.decoder.line(line_no, offset + start, _text(raw)))
        keys = self.reads_re.findall(data)
        counted = 0
        new = {}
        for (hour, who, call), n in Counter(keys).items():
            call_s = call.decode("utf-8", "replace")
            if call_s in self.writes_set:
                continue
            counted += n
            key = (who.decode("utf-8", "replace"), call_s, hour.decode("utf-8", "replace"))
            if key in self.decoder.reads:
                self.decoder.reads[key][0] += n
            else:
                new[(hour, who, call)] = (key, n)
        if new:
            self._first_lines(offset, data, base, new)
        self.stats.records += counted
        if len(keys) < n_lines - data.count(b"\n\n") - data.startswith(b"\n"):
            # some line is no record the pattern knows: let the decoder judge each such line
            yield from self._every_line(offset, data, base, skip=done, only_unmatched=True)

    def _first_lines(self, offset: int, data: bytes, base: int, new: dict) -> None:
        """The first line of each key seen for the first time: its evidence."""
        line_at, line_no = 0, base
        for m in self.reads_re.finditer(data):
            hit = new.pop(m.groups(), None)
            if hit is None:
                continue
            start = m.start()
            line_no += data.count(b"\n", line_at, start)
            line_at = start
            end = data.find(b"\n", start)
            key, n = hit
            self.decoder.count(key, line_no, offset + start, _text(data[start:len(data) if end < 0 else end]), n)
            if not new:
                break

    def _every_line(self, offset: int, data: bytes, base: int, skip: set[int], only_unmatched: bool = False):
        start, line_no = 0, base
        size = len(data)
        while start < size:
            end = data.find(b"\n", start)
            end = size if end < 0 else end
            if start not in skip:
                raw = data[start:end]
                if not only_unmatched or (raw.strip() and not self.reads_re.match(raw)):
                    yield from self._events(self.decoder.line(line_no, offset + start, _text(raw)))
            start, line_no = end + 1, line_no + 1

    @staticmethod
    def _events(out) -> Iterator[Event]:
        if out is None:
            return
        if isinstance(out, Event):
            yield out
        else:
            yield from out

    def feed_continuation(self, offset: int, data: bytes) -> Iterator[Event]:
        return iter(())  # every record is one line

    def close(self) -> Iterator[Event]:
        yield from self.decoder.finish()

    def wants_more(self) -> bool:
        return False
