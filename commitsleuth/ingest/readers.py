"""Open log files whatever their compression, and yield numbered lines with byte offsets.

Compression is recognised by magic bytes, not by name: gzip, bzip2, zstd and lz4 frames.
A damaged stream ends the iteration with ``ReadError``; the lines before it were yielded.
"""

from __future__ import annotations

import bz2
import hashlib
import io
import zlib
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from commitsleuth.ingest import eventlogs

HEAD_BYTES = 64 * 1024
BOM = b"\xef\xbb\xbf"
MAX_LINE = 1 << 20  # longer lines are cut here for parsing; the rest is counted, not kept
CHUNK = 1 << 20


class ReadError(Exception):
    """The file could not be read to its end; the message says why, in one line."""


def codec_of(head: bytes) -> str | None:
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(b"BZh"):
        return "bzip2"
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        return "zstd"
    if head.startswith(b"\x04\x22\x4d\x18"):
        return "lz4"
    return None


def open_binary(path: Path) -> BinaryIO:
    return open_stream(path)[0]


def open_stream(path: Path) -> tuple[BinaryIO, BinaryIO]:
    """(decompressed stream, the raw file under it); the raw position tells the progress."""
    if path.is_dir():  # a rolling Spark event-log directory, read as one stream
        stream = eventlogs.open_rolling(path, open_binary)
        return stream, stream
    raw = open(path, "rb")
    return _decoded(raw), raw


def _decoded(raw: BinaryIO) -> BinaryIO:
    codec = codec_of(raw.read(4))
    raw.seek(0)
    if codec == "gzip":
        return _Inflate(raw, _Gzip)
    if codec == "bzip2":
        return _Inflate(raw, bz2.BZ2Decompressor)
    if codec == "zstd":
        # Through _Inflate, like gzip: zstandard's stream reader ends a truncated frame silently.
        return _Inflate(raw, _ZstdFrame)
    if codec == "lz4":
        import lz4.frame

        # Through _Inflate too: LZ4FrameFile drops every block of a truncated frame.
        return _Inflate(raw, lz4.frame.LZ4FrameDecompressor)
    from commitsleuth.ingest.codecs import open_java_stream  # Spark event logs' lz4/snappy/lzf

    return open_java_stream(raw) or raw


STEP = 1 << 20  # most bytes one decoder call returns: 2 GB of NULs compress to 2 MB or less
RAW_READ = 256 * 1024


class _Inflate(io.RawIOBase):
    """A compressed stream (concatenated members too) read in bounded steps, that hands out
    everything decoded before a damage, then raises: ``GzipFile.read`` drops a whole read's
    output when the stream ends early, and a decoder fed freely inflates a run of NULs whole.

    ``make`` gives a decoder of one member with the ``bz2.BZ2Decompressor`` interface:
    ``decompress(data, max_length)``, ``needs_input``, ``eof``, ``unused_data``.
    """

    def __init__(self, raw: BinaryIO, make: Callable):
        self.raw, self.make = raw, make
        self.dec, self.started = make(), False
        self.pending = b""  # raw bytes after a member's end, for the next member
        self.out = bytearray()
        self.damage: BaseException | None = None
        self.done = False

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        want = (1 << 62) if n is None or n < 0 else n
        while len(self.out) < want and not self.done:
            self.out += self._step()
        if not self.out and self.damage is not None:
            raise self.damage
        got = bytes(self.out[:want])
        del self.out[:want]
        return got

    def _step(self) -> bytes:
        data = b""
        if self.dec.needs_input:
            data, self.pending = self.pending or self.raw.read(RAW_READ), b""
            if not data:
                self.done = True
                if self.started and not self.dec.eof:
                    self.damage = EOFError("compressed stream ends early")
                return b""
            self.started = True
        try:
            got = self.dec.decompress(data, STEP)
        except Exception as exc:  # noqa: BLE001 - zlib.error, OSError, ZstdError: after the good part
            self.damage, self.done = exc, True
            return b""
        if self.dec.eof:  # the next member of a concatenated stream, if any, starts here
            self.pending = self.dec.unused_data
            self.dec, self.started = self.make(), False
        return got

    def close(self) -> None:
        self.raw.close()
        super().close()


class _Gzip:
    """zlib's gzip decoder with the ``BZ2Decompressor`` interface ``_Inflate`` uses."""

    def __init__(self):
        self.z = zlib.decompressobj(wbits=31)
        self.needs_input = True

    @property
    def eof(self) -> bool:
        return self.z.eof

    @property
    def unused_data(self) -> bytes:
        return self.z.unused_data

    def decompress(self, data: bytes, max_length: int) -> bytes:
        got = self.z.decompress(self.z.unconsumed_tail or data, max_length)
        self.needs_input = not self.z.unconsumed_tail and len(got) < max_length
        return got


_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_ZSTD_BLOCK_MAX = 128 << 10  # what one block regenerates at most (RFC 8878, Block_Maximum_Size)


class _ZstdFrame:
    """One zstd frame, given to zstandard's decoder a whole block at a time, so a call returns
    at most ``max_length`` bytes plus one block (zstandard's decoder has no output bound; one
    RLE block of 4 bytes regenerates 128 KiB). The ``BZ2Decompressor`` interface."""

    def __init__(self):
        import zstandard

        self.dec = zstandard.ZstdDecompressor().decompressobj()
        self.buf = b""
        self.state = "header"  # header, block, checksum
        self.checksum = False
        self.eof, self.unused_data, self.needs_input = False, b"", True

    def decompress(self, data: bytes, max_length: int) -> bytes:
        buf = self.buf + data if self.buf else data
        out: list[bytes] = []
        produced = pos = 0
        self.needs_input = True
        while not self.eof:
            if produced and produced + _ZSTD_BLOCK_MAX > max_length:
                self.needs_input = False
                break
            unit = self._unit(buf, pos)
            if unit is None:
                break
            size, skip = unit
            if not skip:
                got = self.dec.decompress(buf[pos:pos + size])
                produced += len(got)
                out.append(got)
            pos += size
        if self.eof:
            self.unused_data, self.needs_input, buf = buf[pos:], False, b""
        self.buf = buf[pos:]
        return b"".join(out)

    def _unit(self, buf: bytes, pos: int) -> tuple[int, bool] | None:
        """(length, skipped) of the next whole header, block or checksum at ``pos``, or None
        when ``buf`` does not hold it all yet; moves the state past it."""
        have = len(buf) - pos
        if self.state == "header":
            if have < 8:
                return None
            magic = buf[pos:pos + 4]
            if magic[1:] == b"\x2a\x4d\x18" and magic[0] & 0xF0 == 0x50:  # a skippable frame
                size = 8 + int.from_bytes(buf[pos + 4:pos + 8], "little")
                if have < size:
                    return None
                self.eof = True
                return size, True
            if magic != _ZSTD_MAGIC:
                return have, False  # the decoder says what is wrong
            fhd = buf[pos + 4]
            single, dict_flag, fcs_flag = fhd >> 5 & 1, fhd & 3, fhd >> 6
            size = 5 + (0 if single else 1) + (0, 1, 2, 4)[dict_flag] + ((1 if single else 0), 2, 4, 8)[fcs_flag]
            self.checksum = bool(fhd >> 2 & 1)
            self.state = "block"
            return size, False
        if self.state == "block":
            if have < 3:
                return None
            head = int.from_bytes(buf[pos:pos + 3], "little")
            size = 3 + (1 if head >> 1 & 3 == 1 else head >> 3)  # an RLE block holds one byte
            if have < size:
                return None
            if head & 1:  # the last block
                self.state = "checksum"
                if not self.checksum:
                    self.eof = True
            return size, False
        if have < 4:
            return None
        self.eof = True
        return 4, False


def is_plain(path: Path) -> bool:
    """True for an uncompressed file, which can be read from any offset (not a standard
    compressed one, nor one of Spark's Java lz4/snappy/lzf streams)."""
    from commitsleuth.ingest.codecs import java_codec_of

    with open(path, "rb") as f:
        head = f.read(16)
    return codec_of(head) is None and java_codec_of(head) is None


def line_bounds(path: Path, parts: int) -> list[int]:
    """``parts + 1`` offsets cutting a plain file into ranges that start at line starts."""
    size = Path(path).stat().st_size
    bounds = [0]
    with open(path, "rb") as f:
        for i in range(1, parts):
            at = size * i // parts
            if at < bounds[-1]:
                continue  # inside the long line that ended the range before
            at = min(_next_line(f, at), size)
            if at > bounds[-1]:
                bounds.append(at)
    if bounds[-1] < size:
        bounds.append(size)
    return bounds


def _next_line(f: BinaryIO, at: int) -> int:
    """Where the first line starting after ``at`` starts (the file's end if none does), found
    a chunk at a time: ``readline`` would hold a gigabyte line (a run of NULs) in memory."""
    f.seek(at)
    while True:
        chunk = f.read(CHUNK)
        if not chunk:
            return f.tell()
        nl = chunk.find(b"\n")
        if nl >= 0:
            return at + nl + 1
        at += len(chunk)


def fingerprint(path: Path, limit: int = HEAD_BYTES) -> str:
    """``sha1:<n>`` of the file's first ``n = min(limit, size)`` raw bytes."""
    with open(eventlogs.first_part(path), "rb") as f:
        head = f.read(limit)
    return f"{hashlib.sha1(head).hexdigest()}:{len(head)}"


def same_head(path: Path, stored: str | None) -> bool:
    """True when the file still starts with the bytes a stored fingerprint was taken of."""
    if not stored or ":" not in stored:
        return False
    n = int(stored.rsplit(":", 1)[1])
    try:
        return fingerprint(path, limit=n) == stored
    except OSError:
        return False


def unfinished_line(path: Path, end: int) -> int | None:
    """Where the last line before ``end`` starts when it has no newline yet (a writer is in the
    middle of it, or the file ends without one), else None. Looked for a chunk at a time back
    to ``LONG_LINE_WINDOW``: a longer line was cut and counted as long already."""
    if end <= 0:
        return None
    with open(path, "rb") as f:
        f.seek(end - 1)
        if f.read(1) == b"\n":
            return None
        pos = end
        while pos > 0 and end - pos < LONG_LINE_WINDOW:
            step = min(CHUNK, pos)
            pos -= step
            f.seek(pos)
            nl = f.read(step).rfind(b"\n")
            if nl >= 0:
                return pos + nl + 1
    return 0 if pos == 0 else None


def record_start(path: Path, start: int, is_head: Callable[[str], bool], floor: int = 0) -> tuple[int, int] | None:
    """Where the record holding the line at ``start`` begins: (byte offset, lines before ``start``),
    the nearest line at or before ``start`` that ``is_head`` takes, looked for back to ``floor``
    and at most ``LONG_LINE_WINDOW`` bytes; None when none is there (the record began earlier)."""
    low = max(floor, start - LONG_LINE_WINDOW)
    with open(path, "rb") as f:
        f.seek(low)
        data = f.read(start - low)
        last = f.readline()
    lines = data.split(b"\n")
    if low > floor and lines:
        lines = lines[1:]  # cut mid-line at the window's edge
    offsets, at = [], start
    for line in reversed(lines[:-1]):  # the text ends with the newline before ``start``
        at -= len(line) + 1
        offsets.append((at, line))
    for back, (offset, line) in enumerate([(start, last)] + offsets):
        if is_head(line.decode("utf-8", "replace").rstrip("\r\n")):
            return offset, back
    return None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return "compressed stream ends early (truncated file)"
    if isinstance(exc, (OSError, zlib.error)) and not getattr(exc, "strerror", None):
        return f"damaged compressed stream: {exc}"
    if isinstance(exc, OSError) and exc.strerror:
        return f"cannot read: {exc.strerror}"
    return f"cannot read: {exc}"


def peek_lines(path: Path, n: int = 200) -> list[str]:
    """The first ``n`` lines, decoded leniently, for format detection."""
    out: list[str] = []
    data = b""
    try:
        with open_binary(path) as f:
            while len(data) < HEAD_BYTES:  # small reads: a damaged stream still shows its head
                got = f.read(8192)
                if not got:
                    break
                data += got
    except Exception as exc:  # noqa: BLE001 - zstandard/lz4 raise their own error types
        if not data:
            raise ReadError(_describe(exc)) from None
    for line in data.removeprefix(BOM).split(b"\n")[:n]:
        out.append(line.decode("utf-8", "replace").rstrip("\r"))
    return out


class LineReader:
    """Iterates ``(line_no, byte_offset, text)``; ``bytes_read`` is the end of the last full line.

    The lines of ``BlockReader``'s blocks, so both readers always agree on what a line is.
    """

    def __init__(self, path: Path, start_offset: int = 0, first_line: int = 1,
                 progress: Callable[[int], None] | None = None):
        self.path = path
        self.first_line = first_line
        self.blocks = BlockReader(path, start_offset, progress=progress, block=CHUNK)
        self.invalid_utf8 = 0

    @property
    def bytes_read(self) -> int:
        return self.blocks.bytes_read

    @property
    def long_lines(self) -> int:
        return self.blocks.long_lines

    def __iter__(self) -> Iterator[tuple[int, int, str]]:
        line_no = self.first_line
        for offset, data in self.blocks:
            raws = data.split(b"\n")
            if data.endswith(b"\n"):
                raws.pop()
            for raw in raws:
                yield line_no, offset, self._decode(raw)
                offset += len(raw) + 1
                line_no += 1

    def _decode(self, raw: bytes) -> str:
        if len(raw) > MAX_LINE:
            raw = raw[:MAX_LINE]
        try:
            return raw.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError:
            self.invalid_utf8 += 1
            return raw.decode("utf-8", "replace").rstrip("\r")


def _skip(f: BinaryIO, n: int) -> None:
    """Move past the first ``n`` (decompressed) bytes already ingested."""
    if isinstance(f, io.BufferedReader):
        f.seek(n)
        return
    while n > 0:
        got = f.read(min(n, CHUNK))
        if not got:
            break
        n -= len(got)


BLOCK = 8 << 20
LONG_LINE_WINDOW = 4 * MAX_LINE  # a line still unfinished after this many bytes is cut


class BlockReader:
    """Iterates ``(byte_offset, block)``: big blocks of whole lines for the fast scan.

    Lines longer than ``MAX_LINE`` are cut there (the rest is skipped and counted in
    ``long_lines``); when a compressed stream breaks, the whole lines before the damage are
    yielded and then ``ReadError`` is raised. ``LineReader`` splits these same blocks.
    ``end``: stop at the first line starting at or after this offset (a range of a plain file).
    """

    def __init__(self, path: Path, start_offset: int = 0, end: int | None = None,
                 progress: Callable[[int], None] | None = None, block: int = BLOCK):
        self.path = path
        self.start_offset = start_offset
        self.end = end
        self.bytes_read = start_offset
        self.progress = progress
        self.block = block
        self.long_lines = 0

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        try:
            f, self._raw = open_stream(self.path)
        except OSError as exc:
            raise ReadError(_describe(exc)) from None
        self._reported = 0
        with f, self._raw:
            yield from self._blocks(f)

    def _advance(self) -> None:
        """Progress in bytes of the file on disk (compressed bytes for a compressed file)."""
        at = self._raw.tell()
        self.progress(at - self._reported)
        self._reported = at

    def _blocks(self, f: BinaryIO) -> Iterator[tuple[int, bytes]]:
        offset = self.start_offset  # of the first byte held in ``parts``
        parts: list[bytes] = []
        size = tail = 0  # bytes held; bytes after the last newline held
        discarding = False  # inside a line longer than MAX_LINE, whose start was yielded
        remaining = None if self.end is None else self.end - offset
        try:
            if offset:
                _skip(f, offset)
            at_start = offset == 0
            while True:
                want = CHUNK if remaining is None else min(CHUNK, remaining)
                chunk = f.read(want) if want > 0 else b""
                if not chunk:
                    break
                if remaining is not None:
                    remaining -= len(chunk)
                if at_start:  # a UTF-8 byte order mark is no part of the first line
                    at_start = False
                    if chunk.startswith(BOM):
                        chunk, offset = chunk[len(BOM):], offset + len(BOM)
                        if not chunk:
                            continue
                if self.progress:
                    self._advance()
                if discarding:
                    nl = chunk.find(b"\n")
                    if nl < 0:
                        offset += len(chunk)
                        continue
                    offset += nl + 1
                    chunk = chunk[nl + 1:]
                    discarding = False
                nl = chunk.rfind(b"\n")
                tail = tail + len(chunk) if nl < 0 else len(chunk) - nl - 1
                parts.append(chunk)
                size += len(chunk)
                if tail > MAX_LINE:
                    buf = b"".join(parts)
                    whole = len(buf) - tail
                    if whole:
                        yield offset, buf[:whole]
                    self.long_lines += 1
                    yield offset + whole, buf[whole:whole + MAX_LINE] + b"\n"
                    offset += len(buf)
                    parts, size, tail, discarding = [], 0, 0, True
                    self.bytes_read = offset
                elif size >= self.block and tail < size:
                    if tail < len(chunk):
                        # the last newline is in this chunk: the block is joined once, without
                        # its tail (copying 8 MiB twice costs a fifth of the scan's CPU)
                        cut = len(chunk) - tail
                        whole = b"".join([*parts[:-1], chunk[:cut]]) if tail else b"".join(parts)
                        parts = [chunk[cut:]] if tail else []
                    else:
                        buf = b"".join(parts)
                        whole = buf[:len(buf) - tail]
                        parts = [buf[len(buf) - tail:]]
                    yield offset, whole
                    offset += len(whole)
                    size = tail
                    self.bytes_read = offset
            if parts and not discarding:
                buf = b"".join(parts)
                yield offset, buf
                offset += len(buf)
            self.bytes_read = offset
        except Exception as exc:  # noqa: BLE001 - every decoder error ends the file the same way
            # The whole lines read before the damage are kept.
            buf = b"".join(parts)
            cut = len(buf) - tail
            if cut > 0 and not discarding:
                self.bytes_read = offset + cut
                yield offset, buf[:cut]
            raise ReadError(_describe(exc)) from None


def open_lines(path: Path, start_offset: int = 0, first_line: int = 1, progress=None) -> LineReader:
    return LineReader(path, start_offset, first_line, progress)
