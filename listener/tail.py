"""Reads the complete lines a spool file gained since the last read."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pyarrow as pa

from commitsleuth.redact import may_hold_secret, redact_keeping_length

CHUNK = 8 << 20
# What a line that cannot be masked in place becomes (padded with spaces to its length).
_BLANK = b'{"Event":"commitsleuth.Redacted"}'


class SpoolTail:
    """Incremental reader of a growing JSON-lines file; a half-written last line waits."""

    def __init__(self, path: Path, offset: int = 0, line_no: int = 0):
        self.path = path
        self.offset = offset
        self.line_no = line_no

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return self.offset

    def read(self, limit: int = CHUNK) -> list[tuple[int, int, str]]:
        """``(line_no, byte_offset, text)`` of the next complete lines, at most ``limit`` bytes."""
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read(limit)
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n")
        if end < 0:
            if len(data) >= limit:  # one line longer than a chunk: read it whole
                return self._long_line()
            return []
        out = []
        pos = 0
        for raw in data[: end + 1].split(b"\n")[:-1]:
            self.line_no += 1
            out.append((self.line_no, self.offset + pos, raw.decode("utf-8", "replace")))
            pos += len(raw) + 1
        self.offset += end + 1
        return out

    def _long_line(self) -> list[tuple[int, int, str]]:
        with open(self.path, "rb") as fh:
            fh.seek(self.offset)
            raw = fh.readline()
        if not raw.endswith(b"\n"):
            return []
        self.line_no += 1
        line = (self.line_no, self.offset, raw[:-1].decode("utf-8", "replace"))
        self.offset += len(raw)
        return [line]

    def scrub(self, lines: list[tuple[int, int, str]]) -> int:
        """Rewrite in place, each at its own byte length, the lines just read that hold a
        secret: Spark redacts conf and descriptions as it writes the spool, but not failure
        reasons nor a SQL execution's job group and tags. Spark only appends past them, so the
        bytes it is writing are never touched. Returns the lines rewritten."""
        if not lines:
            return 0
        hits = may_hold_secret(pa.array([text for _, _, text in lines], pa.string())).to_pylist()
        ends = [offset for _, offset, _ in lines[1:]] + [self.offset]
        rewritten = 0
        fd = None
        try:
            for (_, offset, text), end, hit in zip(lines, ends, hits):
                new = redact_keeping_length(text) if hit else text
                if new == text:
                    continue
                size = end - offset - 1  # the line's bytes, newline excluded
                data = new.encode()
                if len(data) != size or not _is_json(data):  # bad UTF-8 read as U+FFFD, or broken
                    data = (_BLANK if size >= len(_BLANK) else b"").ljust(size)
                if fd is None:
                    fd = os.open(self.path, os.O_WRONLY)
                os.pwrite(fd, data, offset)
                rewritten += 1
        finally:
            if fd is not None:
                os.close(fd)
        return rewritten


def _is_json(data: bytes) -> bool:
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError:
        return False
    return True
