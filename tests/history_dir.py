"""A Spark History Server directory of many applications, made from the real corpus event logs.

How it is built (used by tests/test_ingest_many.py and bench/ingest_many.py):
- every real corpus event log is copied once as it is (tests/corpus/spark-events: three plain
  logs, the lz4/snappy/zstd/lzf logs Spark wrote, a rolling ``eventlog_v2_`` directory; the
  zstd rolling directory of spark-rapids-tools), beside two real text logs (loghub);
- then copies of two plain corpus logs (a Spark 2.0 and a Spark 1.2 application) up to ``n``
  sources, each under an application id of its own, laid out in turn as a plain file, lz4,
  snappy, zstd, lzf, and a rolling directory. The decoder takes an event's ``app_id`` from the
  file name until ``SparkListenerApplicationStart`` names it (``eventlogs.app_id_of``,
  ``SparkEventDecoder``), so a copy's id is rewritten everywhere at once: every occurrence of
  the original id in the log (``App ID``, paths) is replaced by a new one of the same shape, and
  the name says the new id. Compressed copies are encoded here in Spark's stream formats as
  ``commitsleuth.ingest.codecs`` documents them (Java lz4/snappy/lzf streams, standard zstd
  frames; the lz4 block checksum is left 0: lz4-java checks it, commitsleuth does not). Distinct
  ids give distinct bytes, so no copy is taken for another (a file met again under another
  name is read once);
- one copy in 25 is an in-progress log (``.inprogress``, or a rolling directory whose
  ``appstatus_`` marker ends in ``.inprogress``): its first half of whole lines.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

CORPUS = Path(__file__).parent / "corpus"
EVENTS = CORPUS / "spark-events"
TEXT_LOGS = ("loghub/Hadoop_2k.log", "loghub/Spark_2k.log")  # real text logs the formats read

# the plain corpus logs copies are made of (the Spark 3-4 logs spend most of their time in one
# huge SparkListenerEnvironmentUpdate line: they are read once each, as they are), with how a
# new application id of the same shape is made from k
TEMPLATES = (
    ("app-20161116163331-0000", lambda k: f"app-20161116163331-{k:04d}"),
    ("local-1422981780767", lambda k: f"local-{1422981780767 + 1000 + k}"),
)
LAYOUTS = ("plain", "lz4", "snappy", "zstd", "lzf", "rolling")


def make_history_dir(root: Path, n: int = 1000) -> Path:
    """``root`` filled with ``n`` sources (files or rolling directories); returns ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for entry in EVENTS.iterdir():  # the real logs, once each, as they are
        target = root / entry.name
        (shutil.copytree if entry.is_dir() else shutil.copy)(entry, target)
    shutil.copytree(CORPUS / "spark-rapids-tools" / "eventlog_v2_local-1623876083964",
                    root / "eventlog_v2_local-1623876083964")
    for rel in TEXT_LOGS:
        shutil.copy(CORPUS / rel, root / rel.replace("/", "-"))
    made = sum(1 for _ in root.iterdir()) - 1 + 4  # codecs/ holds four sources
    templates = [(old, (EVENTS / old).read_bytes(), new_id) for old, new_id in TEMPLATES]
    k = 0
    while made < n:
        k += 1
        old, data, new_id = templates[k % len(templates)]
        layout = LAYOUTS[(k // len(templates)) % len(LAYOUTS)]
        running = k % 25 == 0
        app = new_id(k)
        body = data.replace(old.encode(), app.encode())
        body = _half(body) if running else body
        mark = ".inprogress" if running else ""
        if layout == "plain":
            (root / f"{app}{mark}").write_bytes(body)
        elif layout == "rolling":
            d = root / f"eventlog_v2_{app}"
            d.mkdir()
            (d / f"events_1_{app}").write_bytes(body)
            (d / f"appstatus_{app}{mark}").write_bytes(b"")
        else:
            (root / f"{app}.{layout}{mark}").write_bytes(_ENCODE[layout](body))
        made += 1
    return root


def _half(data: bytes) -> bytes:
    """The first half of a log's whole lines: what an application still running has written."""
    lines = data.splitlines(keepends=True)
    return b"".join(lines[: max(1, len(lines) // 2)])


def _blocks(data: bytes, size: int) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)] or [b""]


def _lz4(data: bytes) -> bytes:
    import lz4.block

    out = []
    for block in _blocks(data, 64 << 10):
        packed = lz4.block.compress(block, store_size=False)
        # token: method 0x20 (compressed) | compression level 6 (log2(64 KiB) - 10)
        out.append(b"LZ4Block" + struct.pack("<BiiI", 0x26, len(packed), len(block), 0) + packed)
    out.append(b"LZ4Block" + struct.pack("<BiiI", 0x16, 0, 0, 0))  # the end mark finish() writes
    return b"".join(out)


def _snappy(data: bytes) -> bytes:
    import cramjam

    out = [b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)]
    for block in _blocks(data, 32 << 10):
        packed = bytes(cramjam.snappy.compress_raw(block))
        out.append(struct.pack(">i", len(packed)) + packed)
    return b"".join(out)


def _lzf(data: bytes) -> bytes:
    # stored chunks (type 0): compress-lzf writes them too when a chunk does not compress
    return b"".join(b"ZV\x00" + struct.pack(">H", len(c)) + c for c in _blocks(data, 0xFFFF))


def _zstd(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


_ENCODE = {"lz4": _lz4, "snappy": _snappy, "lzf": _lzf, "zstd": _zstd}
