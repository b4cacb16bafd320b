"""BlockReader hands the block scan whole lines, every byte once, whatever the block size, the
chunk a read returns, the range or the codec (it joins each block once, without its tail)."""

from __future__ import annotations

import gzip
import random

import pytest

from commitsleuth.ingest.readers import CHUNK, BlockReader, line_bounds


def varied_lines(seed: int = 7) -> bytes:
    """Lines from empty to most of a chunk long, so a chunk may hold no newline at all."""
    rnd = random.Random(seed)
    out = []
    for i in range(400):
        n = rnd.choice([0, 1, 80, 200, 5000, CHUNK // 3, CHUNK - 1]) if i % 7 == 0 else rnd.randrange(1, 300)
        out.append(bytes(rnd.randrange(32, 127) for _ in range(min(n, 64))) * (n // 64 + 1))
        out[-1] = out[-1][:n] + b"\n"
    return b"".join(out) + b"no newline at the end"


def blocks_of(path, **kw) -> list[tuple[int, bytes]]:
    return list(BlockReader(path, **kw))


@pytest.mark.parametrize("block", [64, 100_000, CHUNK, 3 * CHUNK, 8 * CHUNK])
@pytest.mark.parametrize("codec", ["plain", "gzip"])
def test_blocks_are_whole_lines_covering_the_file(tmp_path, block, codec):
    data = varied_lines()
    path = tmp_path / ("v.log" if codec == "plain" else "v.log.gz")
    path.write_bytes(data if codec == "plain" else gzip.compress(data))
    reader = BlockReader(path, block=block)
    got = list(reader)
    assert b"".join(d for _, d in got) == data
    assert [o for o, _ in got] == [sum(len(d) for _, d in got[:i]) for i in range(len(got))]
    assert all(d.endswith(b"\n") for _, d in got[:-1])
    assert reader.bytes_read == len(data) and reader.long_lines == 0


@pytest.mark.parametrize("parts", [2, 5, 13])
def test_ranges_cover_the_file_once(tmp_path, parts):
    data = varied_lines(seed=parts)
    path = tmp_path / "v.log"
    path.write_bytes(data)
    bounds = line_bounds(path, parts)
    pieces = []
    for a, b in zip(bounds, bounds[1:]):
        got = blocks_of(path, start_offset=a, end=b, block=100_000)
        assert not got or got[0][0] == a
        pieces.append(b"".join(d for _, d in got))
    assert b"".join(pieces) == data


@pytest.mark.parametrize("block", [64, CHUNK * 3 // 2])
def test_a_chunk_without_a_newline_waits_for_the_next(tmp_path, block):
    """The first chunk ends a line, the second holds none (a line of exactly the longest kept
    length), the third ends it: the block before it is yielded alone, the line whole after."""
    data = b"x" * (CHUNK - 1) + b"\n" + b"y" * CHUNK + b"\nend\n"
    path = tmp_path / "edge.log"
    path.write_bytes(data)
    reader = BlockReader(path, block=block)
    got = list(reader)
    assert [(o, len(d)) for o, d in got] == [(0, CHUNK), (CHUNK, CHUNK + 5)]
    assert b"".join(d for _, d in got) == data and reader.long_lines == 0
