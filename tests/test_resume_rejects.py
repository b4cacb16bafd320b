"""A stopped ingest continued by the same call counts every reject exactly once, as one run does.

A checkpoint is the start of the last event stored, and a continued read parses again from
there: the rejects counted after that line (the bad lines that end a block or a batch) are stored
by a later checkpoint, never with this one, or the continued read would count them a second time.
Each layout the ingest continues is stopped at every one of its checks in turn, then run again;
its events, its ``sources`` progress and its ``rejects`` rows must equal an uninterrupted run's.

Layouts: a Spark event log through the fast path (blocks of a few KiB, so blocks end in bad
lines) and through the decoder (batches of a few events); a text log (loghub's Spark_2k.log,
real lines, with lines of binary data among them); an HDFS audit log (the DefaultAuditLogger
line of test_parser_rejects, with renames without their dst among the creates).
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from commitsleuth.errors import IngestInterrupted
from commitsleuth.ingest import eventlog_fast, local, readers
from commitsleuth.ingest.local import ingest
from commitsleuth.parsers.base import ParseStats
from commitsleuth.store import Store
from test_parser_rejects import hdfs

REPO = Path(__file__).resolve().parent.parent
FACTS = "SELECT line_no, byte_offset, kind, attempt_id, job_id, status, detail, raw FROM {}.events ORDER BY ALL"
PROGRESS = "SELECT status, reason, bytes_read, lines, events, rejected FROM {}.sources"
REJECTS = "SELECT reason, count, first_line, sample FROM {}.rejects ORDER BY ALL"


def _task(kind: str, tid: int) -> str:
    info = {"Task ID": tid, "Index": tid, "Attempt": 0, "Partition ID": tid, "Launch Time": 1700000000000 + tid,
            "Executor ID": "1", "Host": "h1", "Speculative": False, "Finish Time": 1700000001000 + tid}
    ev = {"Event": f"SparkListenerTask{kind}", "Stage ID": 0, "Stage Attempt ID": 0, "Task Info": info}
    if kind == "End":
        ev["Task End Reason"] = {"Reason": "Success"}
    return json.dumps(ev, separators=(",", ":"))


def _event_log(path: Path) -> Path:
    """Groups of task events, each group ended by bad lines of two reasons."""
    lines = []
    for g in range(30):
        lines += [_task("Start", g), _task("End", g),
                  '{"Event":"SparkListenerTaskStart","Stage ID":0,"Task Info":{"Task ID":',  # truncated
                  '{"no": "event field"}']
    path.write_text("\n".join(lines) + "\n")
    return path


def _text_log(path: Path) -> Path:
    """Spark_2k.log's first 400 lines, a line of binary data after every 37th."""
    real = (REPO / "tests" / "corpus" / "loghub" / "Spark_2k.log").read_bytes().splitlines(keepends=True)[:400]
    out = bytearray()
    for n, line in enumerate(real, 1):
        out += line
        if n % 37 == 0:
            out += b"\x00\x00junk\x00\n"
    path.write_bytes(bytes(out))
    return path


def _audit_log(path: Path) -> Path:
    """Creates, each few followed by two renames without their dst (hdfs-audit rejects)."""
    lines = []
    for n in range(120):
        ts = f"2023-03-01 10:{n // 60:02d}:{n % 60:02d},120"
        lines.append(hdfs(src=f"/w/t/dt={n}/part-0", ts=ts))
        if n % 5 == 4:
            lines += [hdfs(cmd="rename", dst="null", ts=ts), hdfs(cmd="rename", drop="dst", ts=ts)]
    path.write_text("\n".join(lines) + "\n")
    return path


LAYOUTS = {  # name -> (the log's maker, the fast path or not)
    "eventlog-fast": (_event_log, True),
    "eventlog-decoder": (_event_log, False),
    "text": (_text_log, True),
    "hdfs-audit": (_audit_log, True),
}


def _ingest(db: Path, log: Path, stop=None):
    with Store(db) as store:
        return ingest(store, [str(log)], stop_requested=stop)


def _rows(db: Path) -> tuple:
    con = duckdb.connect()
    con.execute(f"ATTACH '{db}' AS s (READ_ONLY)")
    try:
        return tuple(con.execute(q.format("s")).fetchall() for q in (FACTS, PROGRESS, REJECTS))
    finally:
        con.close()


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_stopped_ingest_continued_counts_each_reject_once(tmp_path, monkeypatch, layout):
    make, fast = LAYOUTS[layout]
    monkeypatch.setenv(eventlog_fast.ENV, "1" if fast else "0")
    monkeypatch.setattr(eventlog_fast, "BLOCK", 2048)  # blocks of a few lines: many end in bad lines
    monkeypatch.setattr(readers, "CHUNK", min(2048, readers.CHUNK))
    monkeypatch.setattr(local, "BATCH", 7)  # batches of a few events: a stop can come after each
    log = make(tmp_path / f"app-resume-0001-{layout}")

    checks = {"n": 0}

    def count():
        checks["n"] += 1
        return 0

    report = _ingest(tmp_path / "whole.duckdb", log, count)
    whole = _rows(tmp_path / "whole.duckdb")
    assert report.results[0].rejected == whole[1][0][-1] > 0 and len(whole[0]) > 20
    assert sum(r[1] for r in whole[2]) == report.results[0].rejected
    assert checks["n"] > 5

    for stop_at in range(2, checks["n"] + 1):
        db = tmp_path / f"stopped-{stop_at}.duckdb"
        calls = {"n": 0}

        def stop():
            calls["n"] += 1
            return 2 if calls["n"] == stop_at else 0

        with pytest.raises(IngestInterrupted):
            _ingest(db, log, stop)
        stopped = _rows(db)
        # a status never claims more than was stored: the rejects it counts are the stored ones
        assert stopped[1][0][-1] == sum(r[1] for r in stopped[2]), f"stopped at check {stop_at}"
        report = _ingest(db, log)
        assert report.results[0].status == whole[1][0][0]
        assert _rows(db) == whole, f"stopped at check {stop_at} of {checks['n']}"
        db.unlink()


def test_rejects_after_a_line_wait_for_a_later_checkpoint():
    """The counters split at a line: runs of bad lines split inside, and once a checkpoint
    stored the rejects before its line their lines are forgotten."""
    stats = ParseStats()
    for line, reason in ((3, "a"), (4, "a"), (5, "a"), (6, "b"), (6, "b"), (9, "a")):
        stats.reject(reason, line, "x")
    assert stats.since(1) == {"a": 4, "b": 2}
    assert stats.since(5) == {"a": 2, "b": 2}
    assert stats.since(7) == {"a": 1}
    assert stats.since(10) == {}
    stats.forget_before(5)
    assert stats.since(1) == {"a": 2, "b": 2}
    copy = stats.snapshot()
    stats.forget_before(100)
    assert copy.since(1) == {"a": 2, "b": 2} and stats.since(1) == {}
    other = ParseStats()
    other.merge(copy, 10)
    assert other.since(16) == {"a": 1, "b": 2}
