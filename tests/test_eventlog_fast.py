"""The event-log fast path (DuckDB SQL over blocks of lines) equals the decoder, row for row.

Each log is ingested twice into two real stores: through the fast path, and through the
reference decoder (``COMMITSLEUTH_EVENTLOG_FAST=0``); every column of ``events``, ``sources``
and ``rejects`` must be equal (the run times of a source aside), or the test names the first
difference. Logs: every corpus event log (plain, the four codecs, the rolling directory), a log
made by bench/ingest_spark.py's generator, and logs written here with what the SQL path must
hand to the decoder (bad lines, missing fields and times, texts JSON escapes, failures, commit
denials, events before the application's id, a user's redaction regex, CRLF, bad UTF-8, a
1 MiB line), each also with blocks of a few KiB so the decoder's carried state crosses blocks.

Every other test's event logs are checked too: the suite sets COMMITSLEUTH_EVENTLOG_VERIFY
(tests/conftest.py), so each block any test ingests is decoded by both and compared.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import duckdb
import pytest

from commitsleuth.ingest import eventlog_fast, ingest, readers
from commitsleuth.parsers.spark_events import decode_line
from commitsleuth.redact import clear_user_patterns
from commitsleuth.store import Store

REPO = Path(__file__).resolve().parent.parent
EVENTS = "spark-events"
CORPUS_LOGS = ("app-20161116163331-0000", "application_1628109047826_1317105", "local-1422981780767",
               "codecs/local-1795296595467.lz4", "codecs/local-1795296602547.snappy",
               "codecs/local-1795296610133.zstd", "codecs/local-1795296617196.lzf",
               "eventlog_v2_local-1766844910796")
_RUN_TIMES = {"started_at", "finished_at"}


def _blocks(monkeypatch, size: int) -> None:
    """Blocks of about ``size`` bytes (the reader reads CHUNK bytes at a time, so both shrink)."""
    monkeypatch.setattr(eventlog_fast, "BLOCK", size)
    monkeypatch.setattr(readers, "CHUNK", min(size, readers.CHUNK))


def _ingest(db: Path, paths: list[Path], fast: bool, monkeypatch, stop=None):
    monkeypatch.setenv(eventlog_fast.ENV, "1" if fast else "0")
    monkeypatch.setenv(eventlog_fast.VERIFY_ENV, "0")  # the two stores are compared here instead
    clear_user_patterns()  # a log's spark.redaction.regex must not carry over to the other run
    with Store(db) as store:
        return ingest(store, [str(p) for p in paths], stop_requested=stop)


def assert_same_store(fast_db: Path, ref_db: Path) -> int:
    """Every row of events, sources and rejects equal in both stores; returns the events compared."""
    con = duckdb.connect()
    con.execute(f"ATTACH '{fast_db}' AS f (READ_ONLY); ATTACH '{ref_db}' AS r (READ_ONLY)")
    compared = 0
    for table, order in (("events", "event_id"), ("sources", "source_id"), ("rejects", "source_id, reason")):
        cols = [c[0] for c in con.execute(f"DESCRIBE r.{table}").fetchall() if c[0] not in _RUN_TIMES]
        sel = ", ".join(f'"{c}"' for c in cols)
        got = con.execute(f"SELECT {sel} FROM f.{table} ORDER BY {order}").fetchall()
        want = con.execute(f"SELECT {sel} FROM r.{table} ORDER BY {order}").fetchall()
        assert len(got) == len(want), f"{table}: {len(got)} rows by the fast path, {len(want)} by the decoder"
        for n, (a, b) in enumerate(zip(got, want)):
            if a != b:
                diff = [f"{c}: fast path {x!r}, decoder {y!r}" for c, x, y in zip(cols, a, b) if x != y]
                pytest.fail(f"{table} row {n + 1} differs:\n  " + "\n  ".join(diff))
        if table == "events":
            compared = len(want)
    con.close()
    return compared


def _both(tmp_path: Path, paths: list[Path], monkeypatch) -> int:
    fast_report = _ingest(tmp_path / "fast.duckdb", paths, True, monkeypatch)
    ref_report = _ingest(tmp_path / "ref.duckdb", paths, False, monkeypatch)
    assert [(r.status, r.events, r.lines, r.rejected) for r in fast_report.results] == \
        [(r.status, r.events, r.lines, r.rejected) for r in ref_report.results]
    return assert_same_store(tmp_path / "fast.duckdb", tmp_path / "ref.duckdb")


@pytest.mark.parametrize("name", CORPUS_LOGS)
@pytest.mark.parametrize("block", [eventlog_fast.BLOCK, 4096])
def test_corpus_event_log_equals_the_decoder(tmp_path, corpus, monkeypatch, name, block):
    _blocks(monkeypatch, block)
    assert _both(tmp_path, [corpus / EVENTS / name], monkeypatch) > 0


def _generated(log: Path, lines: int) -> Path:
    """A log of about ``lines`` lines by bench/ingest_spark.py's generator."""
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from ingest_spark import make_event_log
    finally:
        sys.path.remove(str(REPO / "bench"))
    make_event_log(log, lines)
    return log


def test_generated_event_log_equals_the_decoder(tmp_path, monkeypatch):
    """bench/ingest_spark.py's generator: the corpus's job, stage, task, exclusion events
    replicated with new ids (the benchmark's own log, smaller)."""
    log = _generated(tmp_path / "local-1700000000000-gen", 20_000)
    _blocks(monkeypatch, 1 << 20)
    assert _both(tmp_path, [log], monkeypatch) >= 20_000


def _line(event: dict) -> str:
    return json.dumps(event, separators=(",", ":"))  # as Spark writes it: no spaces


def _task(kind: str, tid: int, **over) -> dict:
    info = {"Task ID": tid, "Index": tid % 4, "Attempt": 0, "Partition ID": tid % 4,
            "Launch Time": 1700000000000 + tid, "Executor ID": str(tid % 3), "Host": f"host{tid % 2}",
            "Speculative": tid % 5 == 0, "Finish Time": 1700000001000 + tid}
    info.update(over.pop("info", {}))
    ev = {"Event": f"SparkListenerTask{kind}", "Stage ID": tid // 10, "Stage Attempt ID": 0, "Task Info": info}
    if kind == "End":
        ev["Task End Reason"] = over.pop("reason", {"Reason": "Success"})
        ev["Task Metrics"] = {"Output Metrics": {"Bytes Written": 100 + tid, "Records Written": tid}}
    ev.update(over)
    return ev


def _edge_lines() -> list[str]:
    """Lines the SQL path maps and lines it must leave to the decoder, interleaved."""
    secret = "s3cr3tValue"
    lines = [
        _line({"Event": "SparkListenerLogStart", "Spark Version": "3.5.1"}),
        _line({"Event": "SparkListenerEnvironmentUpdate",
               "Spark Properties": {"spark.speculation": "true", "spark.redaction.regex": "(?i)mytoken",
                                    "spark.mytoken.value": "abc"},
               "Hadoop Properties": {"mapreduce.fileoutputcommitter.algorithm.version": "2"}}),
        _line(_task("Start", 0)),  # before the application start: releases the held environment
        _line({"Event": "SparkListenerApplicationStart", "App Name": "edge", "App ID": "app-edge-0001",
               "Timestamp": 1700000000000, "User": "alice"}),
        _line({"Event": "SparkListenerJobStart", "Job ID": 0, "Submission Time": 1700000000100,
               "Stage IDs": [0, 1], "Properties": {"spark.jobGroup.id": "grp 1", "spark.sql.execution.id": "7"}}),
        _line({"Event": "SparkListenerJobStart", "Job ID": 1, "Stage IDs": []}),  # no time, no properties
        _line({"Event": "SparkListenerJobStart", "Job ID": 2, "Submission Time": 1700000000200,
               "Stage IDs": [2], "Properties": {"spark.jobGroup.id": "grp \"quoted\" \\ é"}}),
        _line({"Event": "SparkListenerStageSubmitted", "Stage Info": {
            "Stage ID": 0, "Stage Attempt ID": 0, "Stage Name": "save at <console>:27", "Number of Tasks": 4,
            "Submission Time": 1700000000300}}),
        _line({"Event": "SparkListenerStageSubmitted", "Stage Info": {
            "Stage ID": 1, "Stage Attempt ID": 1, "Stage Name": "naïve stage", "Number of Tasks": 2}}),
        _line({"Event": "SparkListenerStageSubmitted", "Stage Info": {"Stage ID": 2}}),
        "",
        "   ",
        '{"Event":"SparkListenerTaskStart","Stage ID":0,"Task Info":{"Task ID":',  # truncated
        '["not", "an event"]',
        '{"no": "event field"}',
        '{"Event": "SparkListenerTaskStart", "Stage ID": 0, "Stage Attempt ID": 0, "Task Info": '
        '{"Task ID": 90, "Index": 1, "Attempt": 0, "Launch Time": 1700000000400}}',  # spaced JSON
        _line(_task("Start", 1)),
        _line(_task("Start", 2, info={"Partition ID": -1})),
        _line(_task("Start", 3, info={"Launch Time": 0})),  # time 0: the decoder's last time
        _line(_task("Start", 4, info={"Executor ID": "<driver>"})),
        _line({k: v for k, v in _task("Start", 5).items() if k != "Stage Attempt ID"}),
        _line(_task("Start", 6, info={"Attempt": None})),
        _line(_task("Start", 7, info={"Speculative": None, "Host": None})),
        _line(_task("End", 1)),
        _line(_task("End", 2, reason={"Reason": "TaskKilled", "Kill Reason": "another attempt succeeded"})),
        _line(_task("End", 3, reason={"Reason": "TaskKilled", "Kill Reason": "killed: ünïcode"})),
        _line(_task("End", 4, reason={"Reason": "TaskCommitDenied", "Job ID": 0, "Partition ID": 0,
                                      "Attempt Number": 1})),
        _line(_task("End", 5, reason={"Reason": "ExceptionFailure", "Class Name": "java.io.IOException",
                                      "Description": "disk full\n\tat X.y(X.java:1)", "Stack Trace": []})),
        _line(_task("End", 6, reason={"Reason": "ExceptionFailure", "Class Name": "java.lang.Error",
                                      "Description": ""})),
        _line(_task("End", 7, reason={"Reason": "FetchFailed", "Description": f"password={secret}"})),
        _line(_task("End", 8, reason={"Reason": "Resubmitted"})),
        _line(_task("End", 9, info={"Finish Time": None})),
        _line(_task("End", 10, reason={"Reason": "TaskKilled", "Kill Reason": f"token {secret}"})),
        _line(_task("End", 11, **{"Task Metrics": None})),
        _line(_task("End", 12, reason=None)),
        _line(_task("End", 13, reason={})),
        _line(_task("End", 14, reason={"Reason": "TaskKilled", "Kill Reason": "mytoken=abc"})),
        _line({"Event": "SparkListenerStageCompleted", "Stage Info": {
            "Stage ID": 0, "Stage Attempt ID": 0, "Completion Time": 1700000000900}}),
        _line({"Event": "SparkListenerStageCompleted", "Stage Info": {
            "Stage ID": 1, "Stage Attempt ID": 1, "Completion Time": 1700000000950,
            "Failure Reason": "Job aborted"}}),
        _line({"Event": "SparkListenerStageCompleted", "Stage Info": {"Stage ID": 2, "Failure Reason": ""}}),
        _line({"Event": "SparkListenerJobEnd", "Job ID": 0, "Completion Time": 1700000001000,
               "Job Result": {"Result": "JobSucceeded"}}),
        _line({"Event": "SparkListenerJobEnd", "Job ID": 1, "Job Result": {"Result": "JobSucceeded"}}),
        _line({"Event": "SparkListenerJobEnd", "Job ID": 2, "Completion Time": 1700000001100,
               "Job Result": {"Result": "JobFailed", "Exception": {"Message": "boom"}}}),
        _line({"Event": "org.apache.spark.scheduler.SparkListenerExecutorBlacklisted", "time": 1700000001200,
               "executorId": "1", "taskFailures": 4}),
        _line({"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart", "executionId": 7,
               "description": "insert", "time": 1700000001300,
               "physicalPlanDescription": "== Physical Plan ==\nExecute InsertIntoHadoopFsRelationCommand "
                                          "hdfs://nn/warehouse/db.db/t, false, [dt#1], Parquet, "
                                          "[path=hdfs://nn/warehouse/db.db/t], Append, `spark_catalog`.`db`.`t`"}),
        _line({"Event": "SparkListenerTaskStart", "Stage ID": 3, "Stage Attempt ID": 0,
               "Task Info": {"Task ID": 30, "Index": 0, "Attempt": 0, "Launch Time": 1700000001400}}),
        _line({"Event": "SparkListenerApplicationEnd", "Timestamp": 1700000002000}),
    ]
    return lines


def _write(path: Path, lines: list[str], crlf_every: int = 0, extra: bytes = b"") -> Path:
    out = bytearray()
    for n, line in enumerate(lines):
        out += line.encode() + (b"\r\n" if crlf_every and n % crlf_every == 0 else b"\n")
    out += extra
    path.write_bytes(bytes(out))
    return path


@pytest.mark.parametrize("block", [eventlog_fast.BLOCK, 512])
@pytest.mark.parametrize("named", [True, False], ids=["app-id-in-name", "no-app-id-in-name"])
def test_edge_cases_equal_the_decoder(tmp_path, monkeypatch, block, named):
    _blocks(monkeypatch, block)
    name = "app-edge-0001" if named else "events.json"
    # repeated so block boundaries fall everywhere; CRLF on every third line; an unfinished
    # last line as an in-progress log ends
    lines = _edge_lines() * 3
    log = _write(tmp_path / name, lines, crlf_every=3, extra=b'{"Event":"SparkListenerTaskEnd","Stage')
    assert _both(tmp_path, [log], monkeypatch) > 100


def test_secrets_where_the_sql_reads_nothing_are_redacted_as_the_decoder_does(tmp_path, monkeypatch):
    """Lines the SQL could map whole but whose raw text holds a secret in a field it does not
    read: the redaction trigger sends them to the decoder (no user pattern here, so the SQL rows
    are not tested again)."""
    lines = [_line({"Event": "SparkListenerApplicationStart", "App Name": "s", "App ID": "app-secret-0001",
                    "Timestamp": 1700000000000, "User": "alice"})]
    for tid in range(30):
        lines.append(_line(_task("Start", tid)))
        lines.append(_line(_task("End", tid)))
    lines[10] = _line(_task("End", 4, **{"Accumulables": [{"Name": "conf", "Value": "password=hunter2"}]}))
    # written as Spark writes it (UTF-8, not escaped): the Kelvin sign folds to k, so this is an
    # access key to the patterns, though no ASCII-lowered byte of it spells "key"
    lines[20] = json.dumps(_task("End", 9, **{"Accumulables": [{"Name": "conf", "Value": "access\u212aey=hunter4"}]}),
                           separators=(",", ":"), ensure_ascii=False)
    # other text past ASCII folds to nothing a pattern looks for: the SQL maps this line
    lines[30] = json.dumps(_task("End", 14, **{"Accumulables": [{"Name": "naïve 日本", "Value": "1"}]}),
                           separators=(",", ":"), ensure_ascii=False)
    log = _write(tmp_path / "app-secret-0001", lines)
    assert _both(tmp_path, [log], monkeypatch) == 61
    con = duckdb.connect(str(tmp_path / "fast.duckdb"), read_only=True)
    raws = [r for (r,) in con.execute("SELECT raw FROM events WHERE raw LIKE '%Accumulables%'").fetchall()]
    con.close()
    assert len(raws) == 3 and not any("hunter" in r for r in raws), raws


def test_the_trigger_finds_every_line_redact_changes_and_leaves_other_unicode():
    """lines_may_hold_secret is a superset of what ``redact`` changes, line by line, on the
    edge-case lines and on lines past ASCII; text past ASCII alone is not a hit (a log in
    another language keeps the SQL path)."""
    import numpy as np
    import pyarrow as pa

    from commitsleuth.redact import lines_may_hold_secret, redact

    texts = _edge_lines() + [
        "naïve 日本 stage", "Password=x", "access\u212aey=y", "\u0130", "hdfs://u:p@h/x", "?sig=abc",
        "AKIAABCDEFGHIJKLMNOP", "beeline -u jdbc:hive2://h -p s3cret", "Authorization: Basic eHl6"]
    data = "".join(t + "\n" for t in texts).encode()
    starts = np.cumsum([0] + [len(t.encode()) + 1 for t in texts[:-1]])
    hits = lines_may_hold_secret(data, starts, pa.array(texts)).tolist()
    assert all(hit for text, hit in zip(texts, hits) if redact(text) != text)
    assert sum(redact(t) != t for t in texts) >= 8
    assert hits[len(texts) - 9:len(texts) - 7] == [False, True]


def test_bad_utf8_and_a_long_line_equal_the_decoder(tmp_path, monkeypatch):
    """A block holding bytes that are not UTF-8 or a line over 1 MiB is read as the reader
    reads it (bad bytes replaced, the line cut), by the decoder, the rest by SQL."""
    _blocks(monkeypatch, 64 << 10)
    lines = [_line(_task("Start", i)) for i in range(200)]
    bad = _line(_task("End", 1, reason={"Reason": "TaskKilled", "Kill Reason": "XX"})).replace("XX", "\udcff")
    long = _line({"Event": "SparkListenerJobStart", "Job ID": 9, "Submission Time": 1700000000000,
                  "Properties": {"spark.jobGroup.id": "g" * (1 << 20)}})
    log = tmp_path / "app-utf8-0001"
    with open(log, "wb") as f:
        f.write(("\n".join(lines[:100]) + "\n").encode())
        f.write(bad.encode("utf-8", "surrogateescape") + b"\n")
        f.write((long + "\n").encode())
        f.write(("\n".join(lines[100:]) + "\n").encode())
    assert _both(tmp_path, [log], monkeypatch) >= 200


def test_compressed_and_rolling_logs_of_the_edge_cases(tmp_path, monkeypatch, corpus):
    """The edge-case log as a zstd file and as a rolling directory of three parts."""
    import zstandard

    _blocks(monkeypatch, 2048)
    lines = _edge_lines() * 2
    plain = "".join(line + "\n" for line in lines).encode()
    zst = tmp_path / "logs" / "app-edge-0002.zstd"
    zst.parent.mkdir()
    zst.write_bytes(zstandard.ZstdCompressor().compress(plain))
    rolling = tmp_path / "logs" / "eventlog_v2_app-edge-0003"
    rolling.mkdir()
    third = len(lines) // 3
    for n, part in enumerate((lines[:third], lines[third:2 * third], lines[2 * third:]), 1):
        _write(rolling / f"events_{n}_app-edge-0003", part)
    (rolling / "appstatus_app-edge-0003").write_bytes(b"")
    # both hold one application (the edge lines' start names it): the second source adds only
    # the events the first lacks (events.event_key), on both paths alike
    assert _both(tmp_path, [tmp_path / "logs"], monkeypatch) > 50


def test_a_damaged_compressed_log_keeps_every_block_read_before_the_damage(tmp_path, monkeypatch):
    """A zstd log cut short: the block before the damage is scanned while the next is read,
    and the read that fails must not take it along. Both paths store the same events, the
    source is partial, and most of the log is kept."""
    import zstandard

    _blocks(monkeypatch, 8192)
    lines = [_line({"Event": "SparkListenerApplicationStart", "App Name": "cut", "App ID": "app-cut-0001",
                    "Timestamp": 1700000000000, "User": "alice"})]
    lines += [_line(_task(kind, tid)) for tid in range(1500) for kind in ("Start", "End")]
    packed = zstandard.ZstdCompressor().compress("".join(line + "\n" for line in lines).encode())
    log = tmp_path / "app-cut-0001.zstd"
    log.write_bytes(packed[: len(packed) * 6 // 10])
    stored = _both(tmp_path, [log], monkeypatch)
    with Store(tmp_path / "fast.duckdb") as store:
        status = store.con.execute("SELECT status FROM sources").fetchall()
    assert status == [("partial",)] and stored > 1000


def test_a_stopped_fast_ingest_continued_stores_each_event_once(tmp_path, monkeypatch):
    """Exactly once: stopped at a checkpoint after its first blocks, the same call continues;
    each event is stored once, as one ingest by the decoder stores it. (What a decoder carries
    from line to line, the last time and an application id the file name does not give, starts
    afresh on a continued read, on both paths: the facts compared are the ones of the line.)"""
    _blocks(monkeypatch, 4096)
    log = _write(tmp_path / "app-edge-0001", _edge_lines() * 6)
    calls = {"n": 0}

    def stop_at_the_third_check():
        calls["n"] += 1
        return 2 if calls["n"] == 3 else 0

    from commitsleuth.errors import IngestInterrupted

    with pytest.raises(IngestInterrupted):
        _ingest(tmp_path / "fast.duckdb", [log], True, monkeypatch, stop=stop_at_the_third_check)
    with Store(tmp_path / "fast.duckdb") as store:
        stored = store.count("events")
    report = _ingest(tmp_path / "fast.duckdb", [log], True, monkeypatch)
    assert 0 < stored and report.results[0].status == "ok"
    _ingest(tmp_path / "ref.duckdb", [log], False, monkeypatch)
    facts = ("SELECT line_no, byte_offset, kind, attempt_id, job_id, status, detail, raw FROM {}.events "
             "ORDER BY ALL")
    progress = "SELECT status, bytes_read, lines, events, rejected FROM {}.sources"
    con = duckdb.connect()
    con.execute(f"ATTACH '{tmp_path / 'fast.duckdb'}' AS f (READ_ONLY); "
                f"ATTACH '{tmp_path / 'ref.duckdb'}' AS r (READ_ONLY)")
    fast, ref = con.execute(facts.format("f")).fetchall(), con.execute(facts.format("r")).fetchall()
    assert len(fast) == len(ref) > stored
    assert fast == ref
    assert con.execute(progress.format("f")).fetchall() == con.execute(progress.format("r")).fetchall()


def test_a_difference_is_found_and_named(tmp_path, monkeypatch):
    """The checks can fail: a fast path that maps one status wrongly is caught by both the
    store comparison and the block verification, each naming the column."""
    broken = eventlog_fast._SQL.replace("WHEN 'TaskKilled' THEN 'killed'", "WHEN 'TaskKilled' THEN 'success'")
    assert broken != eventlog_fast._SQL
    monkeypatch.setattr(eventlog_fast, "_SQL", broken)
    log = _write(tmp_path / "app-edge-0005", _edge_lines())
    _ingest(tmp_path / "fast.duckdb", [log], True, monkeypatch)
    _ingest(tmp_path / "ref.duckdb", [log], False, monkeypatch)
    with pytest.raises(pytest.fail.Exception, match="status: fast path 'success', decoder 'killed'"):
        assert_same_store(tmp_path / "fast.duckdb", tmp_path / "ref.duckdb")
    monkeypatch.setenv(eventlog_fast.ENV, "1")
    monkeypatch.setenv(eventlog_fast.VERIFY_ENV, "1")
    with Store(tmp_path / "verify.duckdb") as store:
        with pytest.raises(eventlog_fast.FastPathMismatch, match="column status: fast path 'success', decoder 'killed'"):
            ingest(store, [str(log)])


def test_the_suite_verifies_every_event_log_it_ingests():
    """tests/conftest.py turns the block-by-block verification on for every test."""
    import os

    assert os.environ.get(eventlog_fast.VERIFY_ENV) == "1"


def test_two_logs_in_one_ingest(tmp_path, corpus, monkeypatch):
    """A corpus log and the edge cases in one directory: one ingest, several sources, equal."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(corpus / EVENTS / "application_1628109047826_1317105", logs)
    _write(logs / "app-edge-0006", _edge_lines())
    assert _both(tmp_path, [logs], monkeypatch) > 50


def _block_table(fast: eventlog_fast.FastEventLog, lines: list[str], offset: int = 0):
    return fast.table(offset, "".join(f"{line}\n" for line in lines).encode())


@pytest.mark.parametrize("layout", ["decoded-first-and-last", "two-events-from-one-line", "no-sql-rows",
                                    "sql-rows-around-lines-without-events"])
def test_sql_rows_and_decoded_events_merge_in_line_order(layout):
    """One block's SQL rows and decoded events interleave as the decoder gives them (the
    suite's verification compares each block with the decoder's, cell for cell), ``raw`` of
    every row its own line: decoded lines at the block's edges, a line giving two events, a
    block of decoded lines only, SQL rows on both sides of lines that give no event."""
    from commitsleuth.parsers.base import ParseStats, SourceContext

    excluded = _line({"Event": "org.apache.spark.scheduler.SparkListenerExecutorBlacklisted",
                      "time": 1700000001200, "executorId": "1", "taskFailures": 4})
    denied = _line(_task("End", 4, reason={"Reason": "TaskCommitDenied", "Job ID": 0, "Partition ID": 0,
                                           "Attempt Number": 1}))
    tasks = [_line(_task("Start", t)) for t in range(1, 6)]
    lines = {"decoded-first-and-last": [excluded, *tasks, excluded, excluded, *tasks, excluded],
             "two-events-from-one-line": [*tasks, denied, denied, *tasks],
             "no-sql-rows": [excluded, denied, excluded],
             "sql-rows-around-lines-without-events": [*tasks, "", '{"Event":"SparkListenerBlockManagerAdded"}',
                                                      *tasks, ""]}[layout]
    start = _line({"Event": "SparkListenerApplicationStart", "App Name": "m", "App ID": "app-merge-0001",
                   "Timestamp": 1700000000000, "User": "alice"})
    fast = eventlog_fast.FastEventLog(SourceContext(uri="app-merge-0001", source_id=1), ParseStats())
    try:
        _block_table(fast, [start])
        table = _block_table(fast, lines, 1000)
    finally:
        fast.close()
    got = table.to_pydict()
    assert got["line_no"] == sorted(got["line_no"])
    assert got["raw"] == [lines[n - 2] for n in got["line_no"]]
    assert got["kind"].count("exclude") == lines.count(excluded)
    assert got["kind"].count("commit_denied") == lines.count(denied)
    assert got["kind"].count("attempt_start") == lines.count(tasks[0]) * len(tasks)


def test_the_line_by_line_fallback_reads_lines_as_a_block_does():
    """Live capture's fallback (``decode_lines``, after the fast path failed on a block) stores
    what ingest stores of the same lines: CRs cut, a line over ``MAX_LINE`` cut, bad UTF-8
    replaced; a spool ingested later then holds the same events with the same raw lines."""
    from commitsleuth.parsers.base import ParseStats, SourceContext

    lines = [_line(_task("Start", t)) for t in range(1, 4)]
    long = _line({"Event": "SparkListenerJobStart", "Job ID": 9, "Submission Time": 1700000000000,
                  "Properties": {"spark.jobGroup.id": "g" * readers.MAX_LINE}})
    data = (lines[0] + "\r\n" + lines[1] + "\n" + long + "\n").encode() + b"\xff\xfe\n" + (lines[2] + "\r\n").encode()
    tables = []
    for read in ("block", "line by line"):
        fast = eventlog_fast.FastEventLog(SourceContext(uri="app-lines-0001", source_id=1), ParseStats())
        try:
            tables.append(fast.table(0, data) if read == "block" else fast.decode_lines(1, 0, data))
        finally:
            fast.close()
    block, by_line = (t.select(["kind", "line_no", "byte_offset", "raw", "detail"]).to_pylist() for t in tables)
    assert by_line == block
    assert [row["raw"] for row in block if row["kind"] == "attempt_start"] == lines


def with_value(event: dict, path: tuple, value) -> dict:
    """A copy of a Spark event with the value at ``path`` (keys into nested objects) replaced."""
    event = json.loads(json.dumps(event))
    node = event
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return event


_STAGE = {"Event": "SparkListenerStageSubmitted", "Stage Info": {
    "Stage ID": 0, "Stage Attempt ID": 0, "Stage Name": "save at <console>:27", "Number of Tasks": 4,
    "Submission Time": 1700000000300}}
_JOB = {"Event": "SparkListenerJobStart", "Job ID": 0, "Submission Time": 1700000000100, "Stage IDs": [0, 1],
        "Properties": {"spark.jobGroup.id": "grp 1", "spark.sql.execution.id": "7"}}
_START, _END = _task("Start", 1), _task("End", 1)
# Task, stage and job lines the SQL must leave to the decoder: a value of a type Spark never
# writes there, which a typed json_transform would read loosely (1.5 as 2, "7" as 7, true as 1,
# an array as no object, a year past 9999 as a time; the decoder rejects each, or stores it as
# it reads the usual type), or text json.dumps would escape. Each condition of the SQL's
# ``plain`` has a case here that fails without it.
_LEFT_TO_THE_DECODER = {
    "stage id 1.0": with_value(_START, ("Stage ID",), 1.0),
    "stage id 2^31": with_value(_START, ("Stage ID",), 2 ** 31),
    "stage attempt text": with_value(_START, ("Stage Attempt ID",), "0"),
    "attempt true": with_value(_START, ("Task Info", "Attempt"), True),
    "attempt -2^31-1": with_value(_START, ("Task Info", "Attempt"), -2 ** 31 - 1),
    "task id text": with_value(_START, ("Task Info", "Task ID"), "1"),
    "index 1.5": with_value(_START, ("Task Info", "Index"), 1.5),
    "partition id text": with_value(_START, ("Task Info", "Partition ID"), "1"),
    "launch time 0.5 ms": with_value(_START, ("Task Info", "Launch Time"), 1700000000000.5),
    "launch time 1e3": with_value(_START, ("Task Info", "Launch Time"), 1e3),
    "launch time after 9999": with_value(_START, ("Task Info", "Launch Time"), 253402300800000),
    "finish time true": with_value(_END, ("Task Info", "Finish Time"), True),
    "bytes written text": with_value(_END, ("Task Metrics", "Output Metrics", "Bytes Written"), "101"),
    "bytes written 2^63": with_value(_END, ("Task Metrics", "Output Metrics", "Bytes Written"), 2 ** 63),
    "records written 1.0": with_value(_END, ("Task Metrics", "Output Metrics", "Records Written"), 1.0),
    "executor id a number": with_value(_START, ("Task Info", "Executor ID"), 3),
    "host a number": with_value(_START, ("Task Info", "Host"), 5),
    "host with an escape": with_value(_START, ("Task Info", "Host"), 'h"1'),
    "speculative text": with_value(_START, ("Task Info", "Speculative"), "true"),
    "reason a number": with_value(_END, ("Task End Reason",), {"Reason": 5}),
    "kill reason not ascii": with_value(_END, ("Task End Reason",), {"Reason": "TaskKilled", "Kill Reason": "ünïcode"}),
    "description not ascii": with_value(_END, ("Task End Reason",), {"Reason": "ExceptionFailure", "Description": "é"}),
    "task metrics a list": with_value(_END, ("Task Metrics",), []),
    "output metrics a number": with_value(_END, ("Task Metrics", "Output Metrics"), 5),
    "stage info a number": with_value(_STAGE, ("Stage Info",), 5),
    "stage's id text": with_value(_STAGE, ("Stage Info", "Stage ID"), "0"),
    "stage's attempt 2^31": with_value(_STAGE, ("Stage Info", "Stage Attempt ID"), 2 ** 31),
    "number of tasks 4.0": with_value(_STAGE, ("Stage Info", "Number of Tasks"), 4.0),
    "stage submission text": with_value(_STAGE, ("Stage Info", "Submission Time"), "1700000000300"),
    "stage name not ascii": with_value(_STAGE, ("Stage Info", "Stage Name"), "naïve stage"),
    "job id text": with_value(_JOB, ("Job ID",), "0"),
    "job submission 0.5 ms": with_value(_JOB, ("Submission Time",), 1700000000100.5),
    "stage ids a text": with_value(_JOB, ("Stage IDs",), "0,1"),
    "stage ids of texts": with_value(_JOB, ("Stage IDs",), ["0,1"]),
    "execution id a number": with_value(_JOB, ("Properties", "spark.sql.execution.id"), 12),
    "properties a list": with_value(_JOB, ("Properties",), []),
    "job group not ascii": with_value(_JOB, ("Properties", "spark.jobGroup.id"), "grüppe"),
}


@pytest.mark.parametrize("odd", list(_LEFT_TO_THE_DECODER.values()), ids=list(_LEFT_TO_THE_DECODER))
def test_a_value_of_another_type_is_left_to_the_decoder(odd, monkeypatch):
    """The odd line alone goes to the decoder: its neighbours are still mapped in SQL (a DuckDB
    error would send the whole block), and the suite's verification compares the block."""
    from commitsleuth.parsers.base import ParseStats, SourceContext

    decoded = []

    def recording(decoder, line_no, offset, text, stats):
        if decoder is fast.decoder:  # not the verification's own decoder
            decoded.append(text)
        return decode_line(decoder, line_no, offset, text, stats)

    monkeypatch.setattr(eventlog_fast, "decode_line", recording)
    lines = [_line(_task("Start", 2)), _line(odd), _line(_task("Start", 3))]
    fast = eventlog_fast.FastEventLog(SourceContext(uri="app-odd-0001", source_id=1), ParseStats())
    try:
        _block_table(fast, lines)
    finally:
        fast.close()
    assert decoded == [lines[1]]


def test_the_suite_takes_the_sql_for_every_block():
    """tests/conftest.py sends every block to the SQL, however few its lines, so that the
    verification checks the SQL on every event log the suite ingests."""
    import os

    assert os.environ.get(eventlog_fast.SQL_MIN_LINES_ENV) == "0"


def _sql_passes(monkeypatch) -> list[int]:
    """The line counts of the blocks the SQL maps, as they happen."""
    passes: list[int] = []
    bulk = eventlog_fast._bulk

    def counted(con, lines, secret):
        passes.append(len(lines))
        return bulk(con, lines, secret)

    monkeypatch.setattr(eventlog_fast, "_bulk", counted)
    return passes


def test_a_small_block_goes_to_the_decoder_alone_by_default(tmp_path, corpus, monkeypatch):
    """A block of fewer than SQL_MIN_LINES lines (a small application's whole log) is read by
    the decoder alone, a DuckDB pass costing more than its lines; the store is the same."""
    monkeypatch.delenv(eventlog_fast.SQL_MIN_LINES_ENV)
    passes = _sql_passes(monkeypatch)
    log = corpus / EVENTS / "application_1628109047826_1317105"
    lines = log.read_bytes().count(b"\n")
    assert 0 < lines < eventlog_fast.SQL_MIN_LINES
    assert _both(tmp_path, [log], monkeypatch) > 0
    assert passes == []


def test_a_block_of_sql_min_lines_takes_the_sql(tmp_path, corpus, monkeypatch):
    """At SQL_MIN_LINES lines a block takes the SQL, below it the decoder: both ways the store
    equals the decoder's (the corpus log in blocks of 4 KiB, the threshold between their sizes)."""
    _blocks(monkeypatch, 4096)
    log = corpus / EVENTS / "application_1628109047826_1317105"
    monkeypatch.setenv(eventlog_fast.SQL_MIN_LINES_ENV, "5")
    passes = _sql_passes(monkeypatch)
    assert _both(tmp_path, [log], monkeypatch) > 0
    assert passes and min(passes) >= 5
    sql_blocks = len(passes)
    monkeypatch.setenv(eventlog_fast.SQL_MIN_LINES_ENV, "0")
    passes.clear()
    (tmp_path / "all").mkdir()
    assert _both(tmp_path / "all", [log], monkeypatch) > 0
    assert min(passes) < 5 and len(passes) > sql_blocks  # the smaller blocks went to the decoder before


def _log_context(name: str):
    from commitsleuth.parsers.base import ParseStats, SourceContext

    return SourceContext(uri=name, source_id=1), ParseStats()


def test_a_closed_logs_connection_serves_the_next_log_with_nothing_of_the_first():
    """Opening a DuckDB connection and defining the SQL cost about as much as a small log:
    a closed log's connection serves the next one, its lines no longer registered."""
    first = eventlog_fast.FastEventLog(*_log_context("a"))
    con = first.con
    first.close()
    first.close()  # twice is once
    second = eventlog_fast.FastEventLog(*_log_context("b"))
    try:
        assert second.con is con
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'lines'").fetchone() == (0,)
        with pytest.raises(duckdb.CatalogException):
            con.execute("SELECT * FROM lines")
    finally:
        second.close()


def test_a_forked_child_opens_connections_of_its_own():
    """A process forked while it keeps idle connections must not use its parent's DuckDB."""
    import os

    log = eventlog_fast.FastEventLog(*_log_context("a"))
    parents = id(log.con)
    log.close()
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only with a connection of its own that works
        code = 1
        try:
            child = eventlog_fast.FastEventLog(*_log_context("b"))
            table = child.table(0, b'{"Event":"SparkListenerJobEnd","Job ID":1,"Completion Time":5,'
                                   b'"Job Result":{"Result":"JobSucceeded"}}\n')
            code = 0 if id(child.con) != parents and table.num_rows == 1 else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_big_event_logs_commits_hold_whole_row_groups(tmp_path):
    """Each checkpoint commit of a big event log holds whole row groups of DuckDB's (the size
    read from a real store), at least two: at half a row group DuckDB compressed each row group
    about twice (a 300k-line log: the store's writes 3.1-3.8 CPU-s against 1.9-2.3, the ingest
    10.4-10.6 against 8.6-8.7; docs/BENCHMARKS.md round 10)."""
    con = duckdb.connect(str(tmp_path / "groups.duckdb"))
    con.execute("CREATE TABLE t AS SELECT range AS x FROM range(300000)")
    con.execute("CHECKPOINT")
    groups = con.execute("SELECT row_group_id, sum(count) FROM pragma_storage_info('t') WHERE column_name = 'x' "
                         "AND segment_type <> 'VALIDITY' GROUP BY 1 ORDER BY 1").fetchall()
    con.close()
    group = groups[0][1]
    assert len(groups) > 1 and group < 300000
    assert eventlog_fast.CHECKPOINT_ROWS % group == 0 and eventlog_fast.CHECKPOINT_ROWS >= 2 * group


@pytest.mark.parametrize("big", [True, False])
def test_a_big_event_log_commits_as_checkpoints_with_the_decoders_store(tmp_path, monkeypatch, big):
    """A big event log commits every eventlog_fast.CHECKPOINT_ROWS events, each commit a checkpoint, its
    last one too: after each, no row waits in the write-ahead log (each commit's rows were
    compressed into the file, while the next blocks are mapped). The store equals the decoder's.
    A small log (here: the limit above its events) commits once, into the log."""
    from commitsleuth.ingest import local

    log = _generated(tmp_path / "local-1700000000001-gen", 5_000)
    _blocks(monkeypatch, 128 << 10)
    monkeypatch.setattr(eventlog_fast, "CHECKPOINT_ROWS", 1_000 if big else 100_000)
    monkeypatch.setattr(local, "COMMIT_SECONDS", 1e9)  # commits by count alone, whatever the machine's load
    wal = tmp_path / "fast.duckdb.wal"
    logged = []
    commit = Store.commit_pending

    def commit_pending(self, *args):
        commit(self, *args)
        logged.append(wal.stat().st_size if wal.exists() else 0)

    monkeypatch.setattr(Store, "commit_pending", commit_pending)
    report = _ingest(tmp_path / "fast.duckdb", [log], True, monkeypatch)
    assert report.results[0].status == "ok" and report.results[0].events >= 5_000
    monkeypatch.undo()
    _blocks(monkeypatch, 128 << 10)
    _ingest(tmp_path / "ref.duckdb", [log], False, monkeypatch)
    assert assert_same_store(tmp_path / "fast.duckdb", tmp_path / "ref.duckdb") >= 5_000
    if big:
        assert len(logged) >= 5 and max(logged) < 1_000  # DuckDB may leave a marker of a few bytes
    else:
        assert len(logged) == 1 and logged[0] > log.stat().st_size  # every row in the log
