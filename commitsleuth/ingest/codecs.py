"""The Java stream formats Spark compresses event logs with, decoded in Python.

Spark's ``spark.eventLog.compress`` writes three of its four codecs as Java library streams,
not as the standard formats: lz4 is lz4-java's ``LZ4BlockOutputStream`` (``LZ4Block`` blocks),
snappy is snappy-java's ``SnappyOutputStream`` (``\\x82SNAPPY\\0`` header, then length-prefixed
raw snappy blocks) and lzf is compress-lzf's ``ZV`` chunks. zstd is standard zstd frames and is
read by ``readers`` like any ``.zst`` file. Each decoder here is a read-only stream, so a
gigabyte log is never held in memory, and a stream cut short raises ``EOFError`` after the
blocks before the cut were returned.
"""

from __future__ import annotations

import io
import struct
from typing import BinaryIO, Iterator

LZ4_MAGIC = b"LZ4Block"
SNAPPY_MAGIC = b"\x82SNAPPY\x00"
LZF_MAGIC = b"ZV"

_LZ4_RAW, _LZ4_COMPRESSED = 0x10, 0x20
# No block is bigger: lz4-java's largest is 32 MiB, snappy-java's default 32 KiB (Spark's
# blockSize setting); a length beyond it is damage, not a block to allocate.
MAX_BLOCK = 64 << 20


def java_codec_of(head: bytes) -> str | None:
    """``lz4``, ``snappy`` or ``lzf`` when ``head`` starts one of the Java stream formats."""
    if head.startswith(LZ4_MAGIC):
        return "lz4"
    if head.startswith(SNAPPY_MAGIC):
        return "snappy"
    if head[:3] in (b"ZV\x00", b"ZV\x01"):
        return "lzf"
    return None


def _read_exact(f: BinaryIO, n: int) -> bytes:
    data = f.read(n)
    if len(data) != n:
        raise EOFError("compressed stream ends early (truncated file)")
    return data


def lz4_blocks(f: BinaryIO) -> Iterator[bytes]:
    """lz4-java block stream: ``LZ4Block`` + token + compressed/original length + checksum."""
    import lz4.block

    while True:
        magic = f.read(len(LZ4_MAGIC))
        if not magic:
            return
        if magic != LZ4_MAGIC:
            raise OSError("damaged lz4 stream: block does not start with LZ4Block")
        token, clen, olen, _checksum = struct.unpack("<BiiI", _read_exact(f, 13))
        method = token & 0xF0
        # lz4-java's own bound (the token's level); a damaged length must not be allocated
        if not (0 <= olen <= 1 << (10 + (token & 0x0F)) and 0 <= clen <= MAX_BLOCK):
            raise OSError("damaged lz4 stream: impossible block length")
        data = _read_exact(f, clen)
        if olen == 0:
            continue  # the end mark written by finish(); another stream may follow
        if method == _LZ4_RAW:
            yield data
        elif method == _LZ4_COMPRESSED:
            yield lz4.block.decompress(data, uncompressed_size=olen)
        else:
            raise OSError(f"damaged lz4 stream: unknown block method {method:#x}")


def snappy_blocks(f: BinaryIO) -> Iterator[bytes]:
    """snappy-java stream: 16-byte header, then (big-endian length, raw snappy block)*."""
    import cramjam

    while True:
        size = f.read(4)
        if not size:
            return
        if len(size) < 4:
            raise EOFError("compressed stream ends early (truncated file)")
        if size == SNAPPY_MAGIC[:4]:
            _read_exact(f, 12)  # a header: the file starts with one, concatenated streams repeat it
            continue
        (n,) = struct.unpack(">i", size)
        if not 0 <= n <= MAX_BLOCK:
            raise OSError("damaged snappy stream: impossible block length")
        block = _read_exact(f, n)
        if _snappy_length(block) > MAX_BLOCK:
            raise OSError("damaged snappy stream: impossible block length")
        yield bytes(cramjam.snappy.decompress_raw(block))


def _snappy_length(block: bytes) -> int:
    """The decoded length a raw snappy block starts with (a little-endian base-128 varint)."""
    n = shift = 0
    for byte in block[:5]:
        n |= (byte & 0x7F) << shift
        if byte < 0x80:
            return n
        shift += 7
    return n


def lzf_blocks(f: BinaryIO) -> Iterator[bytes]:
    """compress-lzf chunks: ``ZV`` + type (0 stored, 1 compressed) + lengths + data."""
    while True:
        head = f.read(3)
        if not head:
            return
        if len(head) < 3 or head[:2] != LZF_MAGIC:
            raise OSError("damaged lzf stream: chunk does not start with ZV")
        if head[2] == 0:
            (n,) = struct.unpack(">H", _read_exact(f, 2))
            yield _read_exact(f, n)
        elif head[2] == 1:
            clen, olen = struct.unpack(">HH", _read_exact(f, 4))
            yield lzf_decompress(_read_exact(f, clen), olen)
        else:
            raise OSError(f"damaged lzf stream: unknown chunk type {head[2]}")


def lzf_decompress(data: bytes, size: int) -> bytes:
    """LZF: a control byte below 32 is a literal run, otherwise a back reference."""
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        ctrl = data[i]
        i += 1
        if ctrl < 32:
            out += data[i:i + ctrl + 1]
            i += ctrl + 1
            continue
        length = ctrl >> 5
        if length == 7:
            length += data[i]
            i += 1
        start = len(out) - ((ctrl & 0x1F) << 8) - data[i] - 1
        i += 1
        length += 2
        if start < 0:
            raise OSError("damaged lzf stream: back reference before the start")
        if start + length <= len(out):
            out += out[start:start + length]
        else:  # overlapping copy repeats the bytes it is writing
            for k in range(length):
                out.append(out[start + k])
    if len(out) != size:
        raise OSError(f"damaged lzf stream: chunk gave {len(out)} bytes, expected {size}")
    return bytes(out)


_BLOCKS = {"lz4": lz4_blocks, "snappy": snappy_blocks, "lzf": lzf_blocks}


class ChunkStream(io.RawIOBase):
    """A readable stream over an iterator of byte chunks (decoded blocks, or a rolling log's parts).

    A decoding error after some bytes were decoded is raised by the next read, so a reader
    gets every byte before a damaged or truncated spot, then the error.
    """

    def __init__(self, chunks: Iterator[bytes], on_close=None):
        self._chunks = chunks
        self._on_close = on_close
        self._buf = b""
        self._error: BaseException | None = None
        self._pos = 0  # bytes handed out: what ``tell`` says (progress of a rolling directory)

    def readable(self) -> bool:
        return True

    def _fill(self, n: int) -> None:
        parts, have = [self._buf], len(self._buf)
        while have < n and self._error is None:
            try:
                chunk = next(self._chunks, None)
            except Exception as exc:  # noqa: BLE001 - raised by the next read, after the good bytes
                self._error = exc
                break
            if chunk is None:
                break
            parts.append(chunk)
            have += len(chunk)
        self._buf = b"".join(parts)

    def read(self, n: int = -1) -> bytes:
        self._fill(n if n is not None and n >= 0 else 1 << 62)
        if not self._buf and self._error is not None:
            error, self._error = self._error, None
            raise error
        if n is None or n < 0:
            n = len(self._buf)
        out, self._buf = self._buf[:n], self._buf[n:]
        self._pos += len(out)
        return out

    def tell(self) -> int:
        return self._pos

    def readinto(self, b) -> int:
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed and self._on_close is not None:
            self._on_close()
        super().close()


def open_java_stream(raw: BinaryIO) -> BinaryIO | None:
    """A decoding stream when ``raw`` (seekable, at 0) holds a Java codec stream, else None."""
    codec = java_codec_of(raw.read(len(LZ4_MAGIC)))
    raw.seek(0)
    if codec is None:
        return None
    return ChunkStream(_whole_lines(_BLOCKS[codec](raw)), on_close=raw.close)


def _whole_lines(blocks: Iterator[bytes]) -> Iterator[bytes]:
    """The blocks, then ``EOFError`` when the last one ends inside a line: snappy and lzf
    streams have no end mark, and Spark ends every event with a newline and flushes whole
    blocks, so a stream cut at a block boundary shows as a last line without its end."""
    last = b"\n"
    for block in blocks:
        if block:
            last = block[-1:]
        yield block
    if last != b"\n":
        raise EOFError("compressed stream ends inside a line (truncated file)")
