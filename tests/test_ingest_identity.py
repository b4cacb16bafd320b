"""File identity (docs/schema.md, "Sources: versions of a file"): a file that shrank is a new
version read from its start, the old version's events kept in superseded_events; a file that
only grew continues where it stopped. Logs generated from the Hive fixture lines of
test_ingest_text (exact source strings, not a real log)."""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from test_ingest_text import hive_log, rows  # noqa: E402

EVENTS = "SELECT line_no, byte_offset, kind, raw FROM events ORDER BY byte_offset, line_no, kind"


def test_a_file_that_shrank_is_a_new_version_never_doubled(cli, tmp_path):
    log, db, clean = tmp_path / "hive.log", tmp_path / "store.duckdb", tmp_path / "clean.duckdb"
    log.write_text(hive_log(300))
    assert cli("ingest", log, "--db", db).out.startswith("ingested 1 file (1 ok): 100 events")
    log.write_text(hive_log(150))  # truncated and rewritten shorter: same head
    r = cli("ingest", log, "--db", db)
    assert r.exit_code == 0 and r.out.startswith("ingested 1 file (1 ok): 50 events"), r.out
    assert cli("ingest", log, "--db", clean).exit_code == 0
    assert rows(db, EVENTS) == rows(clean, EVENTS)
    assert rows(db, "SELECT source_id, status, reason, events FROM sources ORDER BY source_id") == [
        (1, "superseded", "its first bytes changed: read again as a new version", 100),
        (2, "ok", None, 50),
    ]
    assert rows(db, "SELECT count(*), min(source_id), max(source_id) FROM superseded_events") == [(100, 1, 1)]
    again = cli("ingest", log, "--db", db)
    assert again.out.startswith("ingested 1 file (1 unchanged): 0 events")


def test_a_compressed_file_that_shrank_is_a_new_version(cli, tmp_path):
    log, db, clean = tmp_path / "hive.log.gz", tmp_path / "store.duckdb", tmp_path / "clean.duckdb"
    log.write_bytes(gzip.compress(hive_log(3000).encode()))
    assert cli("ingest", log, "--db", db).exit_code == 0
    log.write_bytes(gzip.compress(hive_log(1500).encode()))
    assert cli("ingest", log, "--db", db).out.startswith("ingested 1 file (1 ok): 500 events")
    assert cli("ingest", log, "--db", clean).exit_code == 0
    assert rows(db, EVENTS) == rows(clean, EVENTS)


def test_a_file_that_only_grew_continues(cli, tmp_path):
    log, db, clean = tmp_path / "hive.log", tmp_path / "store.duckdb", tmp_path / "clean.duckdb"
    log.write_text(hive_log(150))
    assert cli("ingest", log, "--db", db).exit_code == 0
    log.write_text(hive_log(300))
    assert cli("ingest", log, "--db", db).out.startswith("ingested 1 file (1 ok): 50 events")
    assert cli("ingest", log, "--db", clean).exit_code == 0
    assert rows(db, EVENTS) == rows(clean, EVENTS)
    assert rows(db, "SELECT status, events FROM sources") == [("ok", 100)]
    assert rows(db, "SELECT count(*) FROM superseded_events") == [(0,)]


def test_a_big_file_cut_shorter_keeps_its_head_and_is_a_new_version(cli, tmp_path):
    log, db, clean = tmp_path / "hive.log", tmp_path / "store.duckdb", tmp_path / "clean.duckdb"
    log.write_text(hive_log(3000))  # over the 64 KiB fingerprint: the head stays the same
    assert cli("ingest", log, "--db", db).exit_code == 0
    log.write_text(hive_log(1500))
    r = cli("ingest", log, "--db", db)
    assert r.out.startswith("ingested 1 file (1 ok): 500 events"), r.out
    assert cli("ingest", log, "--db", clean).exit_code == 0
    assert rows(db, EVENTS) == rows(clean, EVENTS)
    assert rows(db, "SELECT status, reason FROM sources ORDER BY source_id") == [
        ("superseded", f"it shrank to {log.stat().st_size} bytes: read again as a new version"), ("ok", None)]

