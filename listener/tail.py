"""Reads the complete lines a spool file gained since the last read."""

from __future__ import annotations

from pathlib import Path

CHUNK = 8 << 20


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
