"""The fast path of ``parse_lines``: the same events from whole byte blocks of a headed log.

Splitting every line of a gigabyte in Python costs more than the whole budget, so a block is
searched for the message keywords in one call (ahocorasick-rs: Rust's aho-corasick with its SIMD
multi-literal prefilter, about 2.6 GB/s a core on the bench's log; Arrow's RE2 kernel, about
570 MB/s, where it is not installed), and only the lines holding a hit are decoded and parsed. Lines around a hit are looked at
only as far as the record needs (its continuation lines). Pure like ``parse_lines``; a test
checks both yield identical events on the corpus and on hostile input.
"""

from __future__ import annotations

import re
import struct
from typing import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

try:
    import ahocorasick_rs
except ImportError:  # Arrow's RE2 finds the same lines, about 4 times slower
    ahocorasick_rs = None

from commitsleuth.model import Event
from commitsleuth.parsers.base import (BINARY, MAX_CONTINUATION_LINES, Format, ParseStats,
                                       RecordParser, SourceContext, finish)
from commitsleuth.parsers.messages import KEYWORDS
from commitsleuth.ingest.readers import MAX_LINE  # lines are cut there, as the line reader cuts them

_RE2 = "|".join(re.sub(r"([\\^$.|?*+()\[\]{}])", r"\\\1", k) for k in KEYWORDS)
_BY_FIRST: dict[int, list[bytes]] = {}
for _k in KEYWORDS:
    _BY_FIRST.setdefault(_k.encode()[0], []).append(_k.encode())


# Several searchers of at most GROUP keywords each, not one of all: past 64 patterns the
# aho-corasick crate's SIMD prefilter (Teddy) is off, and one search of the 69 keywords costs
# twice what two searches of 35 do (0.11 against 0.05 cpu-s on 64 MB of the bench's log).
GROUP = 40


def keyword_groups() -> list[tuple[str, ...]]:
    """The keywords dealt into the fewest groups of at most ``GROUP``, one searcher each."""
    n = -(-len(KEYWORDS) // GROUP)
    return [KEYWORDS[i::n] for i in range(n)]


_SEARCHERS = ([ahocorasick_rs.BytesAhoCorasick([k.encode() for k in group],
                                               matchkind=ahocorasick_rs.MATCHKIND_LEFTMOST_FIRST)
               for group in keyword_groups()] if ahocorasick_rs is not None else [])


def hit_line_starts(data: bytes) -> list[int]:
    """Start offsets of the lines of ``data`` that hold a keyword, in order, each once.

    No keyword holds a newline, so each group's leftmost-first matches, taken without overlap,
    fall in exactly the lines that hold one of its keywords anywhere; together, in the lines
    that hold any keyword: the lines ``hit_line_starts_re2`` gives."""
    if not _SEARCHERS:
        return hit_line_starts_re2(data)
    positions = [pos for searcher in _SEARCHERS for _, pos, _ in searcher.find_matches_as_indexes(data)]
    if len(_SEARCHERS) > 1:
        positions.sort()
    starts: list[int] = []
    line_end = -1  # of the last hit line: more matches before it add nothing
    for pos in positions:
        if pos < line_end:
            continue
        starts.append(data.rfind(b"\n", 0, pos) + 1)
        line_end = data.find(b"\n", pos)
        if line_end < 0:
            break
    return starts


def hit_line_starts_re2(data: bytes) -> list[int]:
    """``hit_line_starts`` through Arrow's RE2 kernel (one alternation of the keywords)."""
    arr = pa.Array.from_buffers(
        pa.large_binary(), 1, [None, pa.py_buffer(struct.pack("<qq", 0, len(data))), pa.py_buffer(data)]
    )
    pieces = pc.binary_length(pc.split_pattern_regex(arr, pattern=_RE2)[0].values).to_pylist()
    starts: list[int] = []
    pos = 0
    for n in pieces[:-1]:
        pos += n  # a match starts here; which keyword tells how long it is
        kw = next(k for k in _BY_FIRST[data[pos]] if data.startswith(k, pos))
        start = data.rfind(b"\n", 0, pos) + 1
        if not starts or starts[-1] != start:
            starts.append(start)
        pos += len(kw)
    return starts


def _text(raw: bytes) -> str:
    if len(raw) > MAX_LINE:
        raw = raw[:MAX_LINE]
    return raw.decode("utf-8", "replace").rstrip("\r")


def invalid_utf8_lines(data: bytes) -> int:
    """How many lines of a block are not valid UTF-8 (binary lines are counted apart)."""
    try:
        data.decode("utf-8")
        return 0
    except UnicodeDecodeError:
        pass
    n = 0
    for raw in data.split(b"\n"):
        try:
            raw[:MAX_LINE].decode("utf-8")
        except UnicodeDecodeError:
            n += b"\x00" not in raw[:MAX_LINE]
    return n


class BlockScanner:
    """Feed it ``(byte_offset, block)`` pairs of one source in order; it yields the events
    ``parse_lines`` would yield for the same lines.

    ``at_start``: the blocks begin the source (lines before the first head are rejected); a
    later range of a split file starts with the tail of the record above, already handled.
    """

    def __init__(self, fmt: Format, ctx: SourceContext, stats: ParseStats, first_line: int = 1,
                 at_start: bool = True):
        if fmt.head is None or fmt.decoder is not None:
            raise ValueError(f"{fmt.name} has no head: use parse_lines")
        self.fmt = fmt
        self.stats = stats
        self.parser = RecordParser(fmt, ctx, stats, tie_queries=at_start)
        self.line_no = first_line  # of the next block's first line
        self.seen_head = not at_start
        self.pending: Event | None = None
        self.continuation: list[str] = []
        self.invalid_utf8 = 0

    def feed(self, offset: int, data: bytes) -> Iterator[Event]:
        if not data:
            return
        binary = self._binary_lines(data) if b"\x00" in data else frozenset()
        if not data.isascii():
            self._count_invalid(data)
        base_line = self.line_no
        pos = 0
        if self.pending is not None or not self.seen_head:
            pos, done = yield from self._walk(data, 0, base_line, binary)
        line_at, line_no = 0, base_line  # running line count, positions only grow
        # newlines counted in slices of one mask: 4x faster than bytes.count's byte loop
        newline, count = np.frombuffer(data, np.uint8) == 10, np.count_nonzero
        for start in hit_line_starts(data):
            if start < pos:
                continue
            line_no += int(count(newline[line_at:start]))
            line_at = start
            if line_no in binary:
                continue
            end = data.find(b"\n", start)
            end = len(data) if end < 0 else end
            text = _text(data[start:end])
            if not self.fmt.matches_head(text):
                continue
            # A line cut at MAX_LINE may have lost its keyword: only then look again.
            ev = self.parser.event(line_no, offset + start, text, hit=end - start <= MAX_LINE)
            if ev is None:
                continue
            self.pending, self.continuation = ev, []
            pos, done = yield from self._walk(data, end + 1, line_no + 1, binary)
            if not done:
                break  # the record runs into the next block
        # every byte is counted once: up to the hits above, then the rest of the block
        n_lines = line_no - base_line + int(count(newline[line_at:])) + (0 if data.endswith(b"\n") else 1)
        self.stats.lines += n_lines
        self.line_no = base_line + n_lines

    def feed_continuation(self, offset: int, data: bytes) -> Iterator[Event]:
        """Only the continuation lines of the pending record, from a block past a range's end."""
        binary = self._binary_lines(data) if b"\x00" in data else frozenset()
        yield from self._walk(data, 0, self.line_no, binary)

    def close(self) -> Iterator[Event]:
        if self.pending is not None:
            self.stats.events += 1
            yield finish(self.pending, self.continuation)
            self.pending = None

    def wants_more(self) -> bool:
        """True while the last record may still get continuation lines from what follows."""
        return self.pending is not None

    def _walk(self, data: bytes, pos: int, line_no: int, binary) -> Iterator[Event]:
        """Lines from ``pos`` that continue the pending record (or precede the first head).
        Returns (position after them, whether the record ended in this block)."""
        n = len(data)
        while pos < n:
            end = data.find(b"\n", pos)
            end = n if end < 0 else end
            if line_no not in binary:
                text = _text(data[pos:end])
                if self.fmt.matches_head(text):
                    self.seen_head = True
                    yield from self.close()
                    return pos, True
                if self.pending is not None:
                    if len(self.continuation) < MAX_CONTINUATION_LINES:
                        self.continuation.append(text)
                    else:
                        yield from self.close()  # nothing further can change it
                        if self.seen_head:
                            return end + 1, True
                elif not self.seen_head and text.strip():
                    self.stats.reject("no head before first record", line_no, text)
            pos = end + 1
            line_no += 1
        return pos, False

    def _binary_lines(self, data: bytes) -> frozenset[int]:
        out = set()
        for i, raw in enumerate(data.split(b"\n")):
            if b"\x00" in raw[:MAX_LINE]:
                out.add(self.line_no + i)
                self.stats.reject(BINARY, self.line_no + i, _text(raw))
        return frozenset(out)

    def _count_invalid(self, data: bytes) -> None:
        self.invalid_utf8 += invalid_utf8_lines(data)


def scan_blocks(fmt: Format, blocks: Iterable[tuple[int, bytes]], ctx: SourceContext,
                stats: ParseStats | None = None, first_line: int = 1) -> Iterator[Event]:
    """Events of a headed source read as ``(byte_offset, block)`` pairs of whole lines."""
    scanner = BlockScanner(fmt, ctx, stats if stats is not None else ParseStats(), first_line)
    for offset, data in blocks:
        yield from scanner.feed(offset, data)
    yield from scanner.close()
