"""Damaged compressed files keep every complete line before the damage. The log is generated
from the Hive fixture lines of test_ingest_text (exact source strings, not a real log)."""

from __future__ import annotations

import bz2
import gzip
import struct
import sys
import zlib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_ingest_text import hive_log, rows  # noqa: E402

EVENTS = "SELECT line_no, byte_offset, kind, raw FROM events ORDER BY byte_offset, line_no, kind"


def test_a_truncated_lz4_keeps_every_complete_line_before_the_damage(cli, tmp_path):
    import lz4.frame

    whole, cut = tmp_path / "whole.log", tmp_path / "cut.log.lz4"
    whole.write_text(hive_log(6000))
    packed = lz4.frame.compress(whole.read_bytes())
    cut.write_bytes(packed[: len(packed) * 6 // 10])
    db, clean = tmp_path / "store.duckdb", tmp_path / "clean.duckdb"
    r = cli("ingest", cut, "--db", db)
    assert r.exit_code == 0 and "partial" in r.out, r.out
    assert cli("ingest", whole, "--db", clean).exit_code == 0
    kept = rows(db, EVENTS)
    # at least half of the file decodes from 60% of its frame; the stored events are exactly
    # the clean ones up to the damage
    assert len(kept) >= 1000 and kept == rows(clean, EVENTS)[: len(kept)]


# -- every codec, cut at several points -------------------------------------------------------

def _complete_lines(decoded: bytes) -> int:
    return decoded[: decoded.rfind(b"\n") + 1].count(b"\n")


def assert_kept_up_to(db, expected_all: list, lines: int, where) -> None:
    """The stored events are the clean ingest's events of the first ``lines`` lines; the last
    record's raw text may end where the complete lines end (its stack trace ran on past the cut)."""
    got = rows(db, EVENTS)
    expected = [e for e in expected_all if e[0] <= lines]
    assert [e[:3] for e in got] == [e[:3] for e in expected], where
    last = max((e[0] for e in expected), default=None)
    for g, e in zip(got, expected):
        assert g[3] == e[3] or (g[0] == last and e[3].startswith(g[3])), (where, g)


def _gzip_prefix(blob: bytes) -> bytes:
    return zlib.decompressobj(wbits=31).decompress(blob)


def _bzip2_prefix(blob: bytes) -> bytes:
    return bz2.BZ2Decompressor().decompress(blob)


def _zstd_prefix(blob: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdDecompressor().decompressobj().decompress(blob)


STANDARD = {  # suffix: (compress, what the library's own decoder makes of a prefix)
    "gz": (lambda text: gzip.compress(text, 6), _gzip_prefix),
    "bz2": (lambda text: bz2.compress(text, 1), _bzip2_prefix),  # 100 kB blocks: several in the file
    "zst": (lambda text: __import__("zstandard").ZstdCompressor(level=3).compress(text), _zstd_prefix),
}


@pytest.mark.parametrize("suffix", sorted(STANDARD))
def test_a_cut_stream_keeps_every_complete_line_the_codec_decodes(cli, tmp_path, suffix):
    """Cut at every 5 % of the file: the events of every complete line that the library's own
    decoder gets from the cut file are stored, no more, and the source is partial. (A .gz cut
    mid-stream used to lose the record of the last complete line: the scan's pending record was
    dropped with the read error.)"""
    compress, prefix = STANDARD[suffix]
    whole = tmp_path / "whole.log"
    whole.write_text(hive_log(6000))
    clean = tmp_path / "clean.duckdb"
    assert cli("ingest", whole, "--db", clean).exit_code == 0
    expected_all = rows(clean, EVENTS)
    packed = compress(whole.read_bytes())
    for pct in range(5, 100, 5):
        cut = tmp_path / f"cut{pct}.log.{suffix}"
        cut.write_bytes(packed[: len(packed) * pct // 100])
        lines = _complete_lines(prefix(cut.read_bytes()))
        db = tmp_path / f"cut{pct}.duckdb"
        r = cli("ingest", cut, "--db", db)
        status = "partial" if lines else "failed"  # nothing decodes before the first block's end
        assert r.exit_code == (0 if lines else 2), r.err
        assert rows(db, "SELECT status, reason FROM sources") == [
            (status, "compressed stream ends early (truncated file)")], pct
        assert_kept_up_to(db, expected_all, lines, pct)
        assert pct < 50 or lines > 3000  # the cut keeps a real part of the file


def _java_blocks(blob: bytes, codec: str) -> list[tuple[int, int]]:
    """(end in the file, decoded bytes up to there) of each block, from the block headers:
    lz4-java ``LZ4Block`` + token + compressed and original length; snappy-java a 16-byte header,
    then big-endian length + raw snappy block (which starts with its decoded length, a varint);
    compress-lzf ``ZV`` + type + lengths."""
    out, pos, decoded = [], 0, 0
    if codec == "snappy":
        pos = 16
    while pos < len(blob):
        if codec == "lz4":
            clen, olen = struct.unpack("<ii", blob[pos + 9:pos + 17])
            pos += 21 + clen
        elif codec == "snappy":
            (clen,) = struct.unpack(">i", blob[pos:pos + 4])
            olen, shift, i = 0, 0, pos + 4
            while True:
                olen |= (blob[i] & 0x7F) << shift
                if blob[i] < 0x80:
                    break
                i, shift = i + 1, shift + 7
            pos += 4 + clen
        else:
            if blob[pos + 2] == 0:
                (olen,) = struct.unpack(">H", blob[pos + 3:pos + 5])
                pos += 5 + olen
            else:
                clen, olen = struct.unpack(">HH", blob[pos + 3:pos + 7])
                pos += 7 + clen
        decoded += olen
        out.append((pos, decoded))
    return out


@pytest.mark.parametrize("codec", ["lz4", "snappy", "lzf"])
def test_a_cut_spark_codec_stream_keeps_every_complete_line_before_the_cut(cli, corpus, tmp_path, codec):
    """A real Spark event log of each Java stream codec, cut inside every block and at every
    block's end: the events of every line whose block ends before the cut are stored, and the
    source is partial unless the cut falls where a block ends a line (snappy and lzf have no end
    mark; Spark flushes whole blocks after whole lines, so that is an event log still being
    written, read as far as it goes)."""
    from commitsleuth.ingest.readers import open_binary

    src = next((corpus / "spark-events" / "codecs").glob(f"*.{codec}"))
    blob = src.read_bytes()
    clean = tmp_path / "clean.duckdb"
    assert cli("ingest", src, "--db", clean).exit_code == 0
    expected_all = rows(clean, EVENTS)
    with open_binary(src) as f:
        text = f.read()
    blocks = _java_blocks(blob, codec)
    assert blocks[-1] == (len(blob), len(text)) and len(blocks) >= 2
    partial_at_a_block_end = 0
    for k, (end, decoded) in enumerate(blocks[:-1]):
        for at in (end, (end + blocks[k + 1][0]) // 2):
            cut = tmp_path / f"{at}-{src.name}"
            cut.write_bytes(blob[:at])
            db = tmp_path / f"{at}.duckdb"
            r = cli("ingest", cut, "--db", db)
            assert r.exit_code == 0, r.err
            lines = _complete_lines(text[:decoded])
            assert_kept_up_to(db, expected_all, lines, at)
            [(status, reason)] = rows(db, "SELECT status, reason FROM sources")
            # a cut log also lacks its application end: that note follows the status's reason
            notes = (reason or "").split("; ")
            if at == end and text[:decoded].endswith(b"\n"):
                assert status == "ok" and (reason is None or reason.startswith("application did not end")), at
            else:
                assert (status, notes[0]) == ("partial", "compressed stream ends early (truncated file)"), at
                partial_at_a_block_end += at == end
    assert partial_at_a_block_end or codec == "snappy"  # lz4 and lzf blocks here end inside lines
