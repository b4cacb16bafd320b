"""Damaged compressed files keep every complete line before the damage. The log is generated
from the Hive fixture lines of test_ingest_text (exact source strings, not a real log)."""

from __future__ import annotations

import sys
from pathlib import Path

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
