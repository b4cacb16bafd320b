"""Reads the complete lines a spool file gained since the last read, as one block of bytes."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import orjson
import pyarrow as pa

from commitsleuth.redact import has_user_patterns, lines_may_hold_secret, may_hold_secret, redact_keeping_length

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

    def read(self, limit: int = CHUNK) -> tuple[int, int, bytes] | None:
        """``(first line_no, byte_offset, data)`` of the next complete lines, at most ``limit``
        bytes (one longer line whole); None when no line is complete yet."""
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read(limit)
                end = data.rfind(b"\n")
                if end < 0:
                    if len(data) < limit:
                        return None
                    fh.seek(self.offset)  # one line longer than a chunk: read it whole
                    data = fh.readline()
                    if not data.endswith(b"\n"):
                        return None
                    end = len(data) - 1
        except FileNotFoundError:
            return None
        data = data[: end + 1]
        block = (self.line_no + 1, self.offset, data)
        self.line_no += data.count(b"\n")
        self.offset += len(data)
        return block

    def scrub(self, offset: int, data: bytes) -> int:
        """Rewrite in place, each at its own byte length, the lines of a block just read that
        hold a secret: Spark redacts conf and descriptions as it writes the spool, but not
        failure reasons nor a SQL execution's job group and tags. Spark only appends past them,
        so the bytes it is writing are never touched. Returns the lines rewritten."""
        if not data:
            return 0
        nl = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)  # a block ends with one
        starts = np.concatenate(([0], nl[:-1] + 1))
        if has_user_patterns():  # a user's pattern may be anchored to a line: RE2 line by line
            texts = pa.array(data[:-1].decode("utf-8", "replace").split("\n"), pa.string())
            hits = may_hold_secret(texts).to_numpy(zero_copy_only=False)
        else:  # most blocks are task lines: one search for the patterns' words says which may
            hits = lines_may_hold_secret(data, starts)
        hits = np.flatnonzero(hits)
        if not len(hits):
            return 0
        rewritten = 0
        fd = None
        try:
            for k in hits.tolist():
                raw = data[starts[k]:nl[k]]
                text = raw.decode("utf-8", "replace")
                new = redact_keeping_length(text)
                if new == text:
                    continue
                size = len(raw)  # the line's bytes, newline excluded
                line = new.encode()
                if len(line) != size or not _is_json(line):  # bad UTF-8 read as U+FFFD, or broken
                    line = (_BLANK if size >= len(_BLANK) else b"").ljust(size)
                if fd is None:
                    fd = os.open(self.path, os.O_WRONLY)
                os.pwrite(fd, line, offset + int(starts[k]))
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
