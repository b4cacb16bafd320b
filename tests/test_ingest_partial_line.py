"""A last line still being written (no newline yet) is stored as it stands, but the checkpoint
stays before its record: when the writer ends it, the next ingest reads that record again whole
(the old, cut version moves to superseded_events), the completing bytes are no reject, and every
line number is the file's own. The store then equals a clean ingest of the finished file.

A Hive log from the fixture lines of test_ingest_text (exact source strings), cut inside a head
line and inside a stack-trace line; and a real Spark event log of the corpus (JSON lines, one
event each), cut inside a line. Negative twin: a file that merely ends without a newline and
does not change stays ``unchanged``, its last event kept.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_ingest_crash import events  # noqa: E402
from test_ingest_text import hive_log, rows  # noqa: E402

CORPUS = Path(__file__).parent / "corpus"
EVENTLOG = CORPUS / "spark-events" / "local-1422981780767"


def cut_inside(text: bytes, marker: bytes, nth: int = -1) -> int:
    """An offset in the middle of the ``nth`` line holding ``marker``."""
    starts, at = [], text.find(marker)
    while at >= 0:
        starts.append(at)
        at = text.find(marker, at + 1)
    return starts[nth] + len(marker) // 2


def cases():
    hive = hive_log(400).encode()
    yield "hive head line", "hs2.log", hive, cut_inside(hive, b"Loading data to table")
    yield "hive trace line", "hs2.log", hive, cut_inside(hive, b"Task.execute(Task.java:1)", nth=-3)
    log = EVENTLOG.read_bytes()
    yield "event log line", EVENTLOG.name, log, cut_inside(log, b'"Event":"SparkListenerTaskEnd"', nth=len(
        log.split(b"SparkListenerTaskEnd")) // 2)


@pytest.mark.parametrize("name,filename,text,cut", list(cases()), ids=[c[0] for c in cases()])
def test_a_line_completed_later_is_read_whole_with_its_own_line_numbers(cli, tmp_path, name, filename, text, cut):
    logs, db = tmp_path / "logs", tmp_path / "store.duckdb"
    logs.mkdir()
    log = logs / filename
    log.write_bytes(text[:cut])
    assert cli("ingest", logs, "--db", db).exit_code == 0
    log.write_bytes(text)
    r = cli("ingest", logs, "--db", db)
    assert r.exit_code == 0 and r.out.startswith("ingested 1 file (1 ok): "), r.out
    clean = tmp_path / "clean.duckdb"
    assert cli("ingest", logs, "--db", clean).exit_code == 0
    assert events(db) == events(clean)
    assert set(events(db).values()) == {1}
    assert rows(db, "SELECT lines, bytes_read, rejected FROM sources WHERE status <> 'superseded'") == rows(
        clean, "SELECT lines, bytes_read, rejected FROM sources")
    assert rows(db, "SELECT count(*) FROM rejects WHERE reason LIKE '%head%'") == [(0,)]
    assert cli("ingest", logs, "--db", db).out.startswith("ingested 1 file (1 unchanged)")


def test_a_file_without_a_final_newline_keeps_its_last_event_and_stays_unchanged(cli, tmp_path):
    logs, db = tmp_path / "logs", tmp_path / "store.duckdb"
    logs.mkdir()
    (logs / "hs2.log").write_bytes(hive_log(30).encode().rstrip(b"\n"))
    (logs / "whole.log").write_bytes(hive_log(30).encode())
    assert cli("ingest", logs, "--db", db).exit_code == 0
    per_file = rows(db, "SELECT regexp_extract(uri, '[^/]+$'), events FROM sources ORDER BY uri")
    assert per_file == [("hs2.log", 10), ("whole.log", 10)]
    assert cli("ingest", logs, "--db", db).out.startswith("ingested 2 files (2 unchanged): 0 events")
    assert rows(db, "SELECT count(*) FROM superseded_events") == [(0,)]


def test_a_finished_file_without_a_newline_holds_back_its_last_record_only(cli, tmp_path):
    """A real MR2 AppMaster log (loghub Hadoop_2k.log, CRLF lines, no final newline) whose last
    event is ~930 lines before its end: the checkpoint stays at the last line's record, not at the
    last event (which left half the file to be read again and said 1066 of its 2000 lines)."""
    log = tmp_path / "Hadoop_2k.log"
    log.write_bytes((CORPUS / "loghub" / "Hadoop_2k.log").read_bytes())
    data = log.read_bytes()
    assert not data.endswith(b"\n")
    db = tmp_path / "s.duckdb"
    assert cli("ingest", log, "--db", db).exit_code == 0
    assert rows(db, "select bytes_read, lines, events, status from sources") == [
        (data.rindex(b"\n") + 1, data.count(b"\n"), 43, "ok")]


def test_a_held_back_record_that_is_rejected_leaves_no_reason_and_no_reject(cli, tmp_path):
    """The cut keyword line of the last record is a reject while cut ("keyword line not
    understood"); it is held back, so neither its reject nor its reason belongs to the source."""
    text = hive_log(30).encode()
    cut = text.index(b"(dt=", cut_inside(text, b"Loading data to table")) + 9  # "(dt=2018-" is no partition
    log, db = tmp_path / "hs2.log", tmp_path / "s.duckdb"
    log.write_bytes(text[:cut])
    assert cli("ingest", log, "--db", db).exit_code == 0
    assert rows(db, "select status, reason, rejected from sources") == [("ok", None, 0)]
    assert rows(db, "select count(*) from rejects") == [(0,)]
