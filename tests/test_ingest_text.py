"""Text-log ingestion end to end: the real corpus with exact counts, hostile input, re-ingest,
compression, rotation, redaction, and the block scan agreeing with the line parse."""

from __future__ import annotations

import bz2
import gzip
import lz4.frame
import zstandard
from pathlib import Path

import duckdb
import pytest

from commitsleuth.parsers import ParseStats, SourceContext, detect, get_format, parse_lines
from commitsleuth.parsers.attempts import attempt_fields
from commitsleuth.parsers import scan
from commitsleuth.parsers.messages import KEYWORDS
from commitsleuth.parsers.scan import scan_blocks
from commitsleuth.ingest.readers import BlockReader, LineReader, peek_lines

HEAD = "2018-09-28T10:15:01,{ms:03d}  INFO [HiveServer2-Background-Pool: Thread-{t}] "
LOAD = (HEAD + "exec.Task: Loading data to table db.t partition (dt=2018-09-{d:02d}) from "
        "hdfs://nn/warehouse/db.db/t/.hive-staging_hive_1/-ext-10000\n")
NOISE = HEAD + "ql.Driver: Concurrency mode is disabled, not creating a lock manager\n"
TRACE = "java.lang.RuntimeException: boom\n\tat org.apache.hadoop.hive.ql.exec.Task.execute(Task.java:1)\n"


def hive_log(n: int, offset: int = 0) -> str:
    """``n`` records, every third a load of partition dt=2018-09-<i>, some with stack traces."""
    out = []
    for i in range(offset, offset + n):
        line = LOAD if i % 3 == 0 else NOISE
        out.append(line.format(ms=i % 1000, t=i % 7, d=i % 28 + 1))
        if i % 5 == 0:
            out.append(TRACE)
    return "".join(out)


def rows(db_path, sql):
    with duckdb.connect(str(db_path), read_only=True) as con:
        return con.execute(sql).fetchall()


def sources(db_path):
    return rows(db_path, "select regexp_extract(uri, '[^/]+$'), status, reason from sources order by uri")


# -- the real corpus ---------------------------------------------------------------------------

def test_loghub_corpus_exact_counts(cli, corpus, db_path):
    r = cli("ingest", corpus / "loghub", "--db", db_path)
    assert r.exit_code == 0, r.err
    assert r.out.splitlines()[0] == "ingested 5 files (2 ok, 3 skipped): 738 events, 0 rejected lines"
    assert sources(db_path) == [
        ("HDFS_2k.log", "skipped", "not a log format commitsleuth reads"),
        ("Hadoop_2k.log", "ok", None),
        ("LICENSE", "skipped", "not a log format commitsleuth reads"),
        ("Spark_2k.log", "ok", None),
        ("Zookeeper_2k.log", "skipped", "not a log format commitsleuth reads"),
    ]
    spark = "select e.kind, count(*) filter (where target_path is not null), count(*) from events e " \
            "join sources s using (source_id) where s.uri like '%{}' group by e.kind order by e.kind"
    # 30 "Saved output of task '…' to …" and 30 "<attempt>: Committed", one per task attempt.
    # and each executor's "Running task" (305) and "Finished task" (300).
    assert rows(db_path, spark.format("Spark_2k.log")) == [
        ("attempt_end", 0, 300), ("attempt_start", 0, 305), ("conf", 0, 30), ("task_commit", 30, 60)]
    assert rows(db_path, "select attempt_id, task_id, stage_id, attempt_no from events "
                         "where kind = 'attempt_start' order by line_no limit 1") == [
        ("task 0.0 in stage 0.0 (TID 0)", "0.0", 0, 0)]
    saved = rows(db_path, "select attempt_id, attempt_no, task_id, job_id, location from events "
                          "where kind = 'task_commit' and attempt_id like '%m_000004_1026' order by line_no")
    ids = ("attempt_201706092018_0024_m_000004_1026", 1026, "task_201706092018_0024_m_000004",
           "job_201706092018_0024")
    assert saved == [(*ids, "hdfs://10.10.34.11:9000/pjhe/test/1"), (*ids, None)]
    # Hadoop_2k: one speculation (task m_000000), 42 attempt transitions of which 3 are of
    # second attempts: m_000000_1 (the speculative copy), m_000001_1 and m_000002_1 (retries).
    assert rows(db_path, "select kind, count(*) from events where attempt_id like 'attempt_1445144423722%' "
                         "or task_id like 'task_1445144423722%' group by kind order by kind") == [
        ("attempt_state", 42), ("speculate", 1)]
    assert rows(db_path, "select task_id, thread from events where kind = 'speculate'") == [
        ("task_1445144423722_0020_m_000000", "DefaultSpeculator background processing")]
    assert rows(db_path, "select attempt_id, detail->>'from', detail->>'to' from events "
                         "where kind = 'attempt_state' and attempt_no = 1 order by attempt_id") == [
        ("attempt_1445144423722_0020_m_000000_1", "NEW", "UNASSIGNED"),
        ("attempt_1445144423722_0020_m_000001_1", "NEW", "UNASSIGNED"),
        ("attempt_1445144423722_0020_m_000002_1", "NEW", "UNASSIGNED"),
    ]


def test_reingesting_a_directory_adds_nothing(cli, corpus, tmp_path, db_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "hive.log").write_text(hive_log(300))
    (logs / "Spark_2k.log").write_bytes((corpus / "loghub" / "Spark_2k.log").read_bytes())
    cli("ingest", logs, "--db", db_path)
    first = rows(db_path, "select count(*) from events")[0][0]
    assert first == 100 + 695
    r = cli("ingest", logs, "--db", db_path)
    assert r.out == "ingested 2 files (2 unchanged): 0 events, 0 rejected lines\n"
    assert rows(db_path, "select count(*) from events")[0][0] == first


def test_a_grown_file_is_read_from_where_it_stopped(cli, tmp_path, db_path):
    log = tmp_path / "hive.log"
    log.write_text(hive_log(30))
    cli("ingest", log, "--db", db_path)
    with log.open("a") as f:
        f.write(hive_log(30, offset=30))
    r = cli("ingest", log, "--db", db_path)
    assert r.out.startswith("ingested 1 file (1 ok): 10 events")
    assert rows(db_path, "select count(*), count(distinct line_no) from events") == [(20, 20)]


# -- input handling ------------------------------------------------------------------------------

@pytest.mark.parametrize("name,pack", [
    ("hive.log.2018-09-28.gz", gzip.compress),
    ("hive.log.1.bz2", bz2.compress),
    ("hive.log.zst", lambda b: zstandard.ZstdCompressor().compress(b)),
    ("hive.log.2.lz4", lz4.frame.compress),
    ("hive.log.2018-09-28", lambda b: b),
])
def test_compressed_and_rotated_files_give_the_same_events(cli, tmp_path, db_path, name, pack):
    (tmp_path / name).write_bytes(pack(hive_log(90).encode()))
    r = cli("ingest", tmp_path / name, "--db", db_path)
    assert r.out == "ingested 1 file (1 ok): 30 events, 0 rejected lines\n"
    assert rows(db_path, "select count(distinct partition_spec), min(line_no), max(line_no) from events") == [
        (28, 1, 124)]


def test_glob_and_forced_format(cli, tmp_path, db_path):
    (tmp_path / "a.log").write_text(hive_log(9))
    (tmp_path / "b.txt").write_text(hive_log(9))
    r = cli("ingest", str(tmp_path / "*.log"), "--format", "hive-log4j2", "--db", db_path)
    assert r.out == "ingested 1 file (1 ok): 3 events, 0 rejected lines\n"


def test_continuation_lines_attach_to_the_record_above():
    lines = hive_log(1).splitlines()
    events = list(parse_lines(get_format("hive-log4j2"), [(i + 1, 0, t) for i, t in enumerate(lines)],
                              SourceContext("x")))
    assert len(events) == 1
    assert events[0].detail["continuation_lines"] == 2
    assert events[0].raw.endswith("Task.execute(Task.java:1)")


def test_attempt_ids_taken_apart():
    assert attempt_fields("attempt_1445144423722_0020_1_00_000005_2") == {
        "attempt_id": "attempt_1445144423722_0020_1_00_000005_2", "attempt_no": 2,
        "job_id": "dag_1445144423722_0020_1", "task_id": "task_1445144423722_0020_1_00_000005"}
    assert attempt_fields("attempt_201304111550_268224_m_000005_0")["task_id"] == "task_201304111550_268224_m_000005"


def test_metastore_call_and_its_audit_line_are_one_event():
    fmt = get_format("hive-log4j1")
    lines = [
        "2018-09-28 10:15:02,448 INFO  [pool-7-thread-121]: metastore.HiveMetaStore (HiveMetaStore.java:logInfo(773))"
        " - 121: append_partition : db=db tbl=t[2018-09-28]",
        "2018-09-28 10:15:02,448 INFO  [pool-7-thread-121]: HiveMetaStore.audit (HiveMetaStore.java:logAuditEvent(309))"
        " - ugi=hive\tip=10.1.2.3\tcmd=append_partition : db=db tbl=t[2018-09-28]\t",
        "2018-09-28 10:15:02,519 INFO  [pool-7-thread-9]: HiveMetaStore.audit (HiveMetaStore.java:logAuditEvent(309))"
        " - ugi=hive\tip=10.1.2.3\tcmd=drop_partition_by_name : db=db tbl=t part=dt=2018-09-27\t",
    ]
    stats = ParseStats()
    events = list(parse_lines(fmt, [(i + 1, 0, t) for i, t in enumerate(lines)], SourceContext("x"), stats))
    assert [(e.kind, e.table_name, e.partition_spec, e.thread, e.status) for e in events] == [
        ("partition_add", "db.t", None, "pool-7-thread-121", "ok"),
        ("partition_drop", "db.t", "dt=2018-09-27", "pool-7-thread-9", "ok"),
    ]
    assert events[0].detail["values"] == ["2018-09-28"]
    assert stats.merged == 1


def _audit(ts: str, thread: str, cmd: str) -> str:
    """HiveMetaStore.logAuditEvent's line (log4j2 head): ``ugi=%s\\tip=%s\\tcmd=%s\\t``."""
    return f"{ts}  INFO [{thread}] HiveMetaStore.audit: ugi=hive\tip=10.20.9.10\tcmd=source:10.20.9.10 {cmd}\t"


@pytest.mark.parametrize("table", ["db=sales tbl=orders", "tbl=hive.sales.orders"])  # Hive 2.x, 3.x
@pytest.mark.parametrize("get", ["get_partition", "get_partition_with_auth"])
def test_an_add_takes_its_threads_check_values_and_time(table, get):
    """Hive.loadPartition's check-then-add on two handler threads at once: each add (naming only
    the table) takes the values and the time of its own thread's check, not the other's."""
    lines = [_audit("2024-05-19T10:00:00,000", "pool-7-thread-12", f"{get} : {table}[2024-05-19]"),
             _audit("2024-05-19T10:00:00,100", "pool-7-thread-13", f"{get} : {table}[2024-05-20]"),
             _audit("2024-05-19T10:00:00,200", "pool-7-thread-12", f"add_partition : {table}"),
             _audit("2024-05-19T10:00:00,300", "pool-7-thread-13", f"add_partition : {table}")]
    events = list(parse_lines(get_format("hive-metastore-audit"), [(i + 1, 0, t) for i, t in enumerate(lines)],
                              SourceContext("x"), ParseStats()))
    assert [(e.kind, e.thread, e.line_no, e.detail["values"], e.detail["checked_at"], e.detail["check_line"],
             e.detail["check_call"]) for e in events] == [
        ("partition_add", "pool-7-thread-12", 3, ["2024-05-19"], "2024-05-19 10:00:00", 1, get),
        ("partition_add", "pool-7-thread-13", 4, ["2024-05-20"], "2024-05-19 10:00:00.100000", 2, get),
    ]


def test_a_check_gives_its_time_only_to_a_call_on_what_it_checked():
    """An add naming the values its thread checked keeps the check's time; one naming other values
    keeps its own and no check; a check whose time or values the line does not give gives none."""
    def parsed(*lines):
        return list(parse_lines(get_format("hive-metastore-audit"), [(i + 1, 0, t) for i, t in enumerate(lines)],
                                SourceContext("x"), ParseStats()))
    t = "pool-7-thread-12"
    same = parsed(_audit("2024-05-19T10:00:00,000", t, "get_partition : db=sales tbl=orders[2024-05-19]"),
                  _audit("2024-05-19T10:00:00,200", t, "add_partition : db=sales tbl=orders[2024-05-19]"))
    other = parsed(_audit("2024-05-19T10:00:00,000", t, "get_partition : db=sales tbl=orders[2024-05-19]"),
                   _audit("2024-05-19T10:00:00,200", t, "add_partition : db=sales tbl=orders[2024-05-18]"))
    no_time = parsed(_audit("2024-02-30T10:00:00,000", t, "get_partition : db=sales tbl=orders[2024-05-19]"),
                     _audit("2024-05-19T10:00:00,200", t, "add_partition : db=sales tbl=orders"))
    no_values = parsed(_audit("2024-05-19T10:00:00,000", t, "get_partition : db=sales tbl=orders"),
                       _audit("2024-05-19T10:00:00,200", t, "add_partition : db=sales tbl=orders"))
    assert (same[0].detail["values"], same[0].detail["checked_at"]) == (["2024-05-19"], "2024-05-19 10:00:00")
    assert (other[0].detail["values"], "checked_at" in other[0].detail) == (["2024-05-18"], False)
    assert (no_time[0].detail["values"], "checked_at" in no_time[0].detail) == (["2024-05-19"], False)
    assert ("values" in no_values[0].detail, "checked_at" in no_values[0].detail) == (False, False)


# -- the block scan is the line parse, faster -----------------------------------------------------

HOSTILE = (
    b"garbage before the first head\n"
    + hive_log(40).encode()
    + b"\x00\x01\x02 binary junk\n"
    + hive_log(1, offset=3).encode().replace(b"db.t partition", b"db.t\xff partition")
    + hive_log(40, offset=41).encode()
    + LOAD.format(ms=1, t=1, d=1).encode() + TRACE.encode() * 30  # past the continuation limit
    + hive_log(3).encode()
)


@pytest.mark.parametrize("block", [64, 4096, 1 << 20])
def test_block_scan_equals_line_parse(corpus, tmp_path, block):
    hostile = tmp_path / "hostile.log"
    hostile.write_bytes(HOSTILE)
    for path in [corpus / "loghub" / "Spark_2k.log", corpus / "loghub" / "Hadoop_2k.log", hostile]:
        fmt = detect(str(path), peek_lines(path))
        s1, s2 = ParseStats(), ParseStats()
        by_line = list(parse_lines(fmt, LineReader(path), SourceContext(str(path)), s1))
        by_block = list(scan_blocks(fmt, BlockReader(path, block=block), SourceContext(str(path)), s2))
        assert by_block == by_line, path
        assert (s2.lines, s2.rejected, s2.rejects) == (s1.lines, s1.rejected, s1.rejects)
    assert s1.rejects["no head before first record"][0] == 1
    assert s1.rejects["binary data (NUL bytes)"][0] == 1


def test_keyword_search_finds_the_lines_that_hold_a_keyword(corpus):
    """The multi-literal searcher (a declared dependency) against Arrow's RE2 and a plain
    per-line check, on every corpus file and on lines built to trip it: keywords overlapping,
    one inside another, several to a line, at a line's edges, at the block's end unterminated."""
    assert scan.ahocorasick_rs is not None, "ahocorasick-rs is a dependency: pip install -e ."
    tricky = b"\n".join([
        b"x Starting task Starting task: y", b"Moved to trash at to trash at", b"",
        b"renamed pathRenamed path", b"no keyword here", b"add_partitionalter_partition",
        b"] submitted. Is using containerIdx", b"deleting  deleting  ", b"Starting Job",
        b"a get_partition_with_auth b", HOSTILE.replace(b"\n", b" ")[:5000], b"Duplicate entry",
    ])
    blocks = [tricky, tricky + b"\n", b"", b"Loading data to table"]
    blocks += [f.read_bytes() for f in sorted(corpus.rglob("*")) if f.is_file()]
    keywords = [k.encode() for k in KEYWORDS]
    hits = 0
    for data in blocks:
        expected, at = [], 0
        for line in data.split(b"\n"):
            if any(k in line for k in keywords):
                expected.append(at)
            at += len(line) + 1
        assert scan.hit_line_starts(data) == expected
        assert scan.hit_line_starts_re2(data) == expected
        hits += len(expected)
    assert hits > 100


def test_keywords_are_searched_in_groups_the_simd_prefilter_takes():
    """Past 64 patterns aho-corasick's Teddy prefilter is off and the search costs twice as much
    (bench/ingest_text.py): every keyword in exactly one group, none of more than 64."""
    groups = scan.keyword_groups()
    assert sorted(k for g in groups for k in g) == sorted(KEYWORDS)
    assert all(len(g) <= 64 for g in groups) and len(groups) == -(-len(KEYWORDS) // scan.GROUP)


def test_worker_processes_give_the_same_store_as_one_pass(cli, corpus, tmp_path, monkeypatch):
    """Big inputs go to worker processes: plain logs cut into ranges, small files whole. The
    store must come out as a single in-process pass writes it."""
    import commitsleuth.ingest.local as ingest_mod

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "big.log").write_text(hive_log(3000))
    (logs / "hostile.log").write_bytes(HOSTILE)
    (logs / "rotated.log.1.gz").write_bytes(gzip.compress(hive_log(300).encode()))
    (logs / "truncated.log.gz").write_bytes(gzip.compress(hive_log(6000).encode())[:20000])
    (logs / "Hadoop_2k.log").write_bytes((corpus / "loghub" / "Hadoop_2k.log").read_bytes())
    (logs / "notes.txt").write_text("nothing\n")
    one, split = tmp_path / "one.duckdb", tmp_path / "split.duckdb"
    r1 = cli("ingest", logs, "--db", one)
    monkeypatch.setattr(ingest_mod, "PARALLEL_MIN", 1)
    monkeypatch.setattr(ingest_mod, "RANGE", 100_000)  # several ranges per plain file
    monkeypatch.setattr(ingest_mod, "_workers", lambda size: 2)
    r2 = cli("ingest", logs, "--db", split)
    assert r2.out == r1.out
    # 2792: truncated.log.gz's last complete line is a load, kept (it was dropped with the damage)
    assert r1.out.startswith("ingested 6 files (3 ok, 2 partial, 1 skipped): 2792 events, 3 rejected lines")
    query = "select event_id, kind, source_id, line_no, byte_offset, partition_spec, detail, raw from events"
    assert rows(split, query + " order by event_id") == rows(one, query + " order by event_id")
    sources = "select uri, status, reason, lines, bytes_read, events, rejected from sources order by source_id"
    assert rows(split, sources) == rows(one, sources)
    assert rows(split, "select * from rejects order by all") == rows(one, "select * from rejects order by all")


# -- bad input: a status and a one-line reason each, the good lines kept -------------------------

def test_bad_inputs_each_end_with_a_status(cli, tmp_path, db_path):
    good = hive_log(30).encode()
    d = tmp_path / "in"
    d.mkdir()
    packed = gzip.compress(hive_log(6000).encode())
    (d / "truncated.log.gz").write_bytes(packed[: len(packed) * 6 // 10])
    (d / "junk-inside.log").write_bytes(good + b"\x00\x7fELF\x02\x01\x01\x00\x00\n\x89PNG\x00\x1a\n" + good)
    (d / "junk.bin").write_bytes(bytes(range(256)) * 64)
    (d / "latin1.log").write_bytes(good.replace(b"-ext-10000", "-ext-10000-\xe9t\xe9".encode("latin-1"), 1))
    (d / "long-line.log").write_bytes(good + b"x" * (50 << 20) + b"\n" + good)
    (d / "empty.log").write_bytes(b"")
    (d / "notes.txt").write_text("just some notes\nnothing to see\n")
    r = cli("ingest", d, "--db", db_path)
    assert r.exit_code == 0, r.err
    assert r.out.splitlines() == [
        "ingested 7 files (4 partial, 3 skipped): 1227 events, 2 rejected lines",
        f"  skipped: {d / 'empty.log'}: empty file",
        f"  partial: {d / 'junk-inside.log'}: 2 lines of binary data rejected (from line 43)",
        f"  skipped: {d / 'junk.bin'}: not a log format commitsleuth reads",
        f"  partial: {d / 'latin1.log'}: 1 line not valid UTF-8 (bad bytes replaced)",
        f"  partial: {d / 'long-line.log'}: 1 line longer than 1 MiB cut to 1 MiB",
        f"  skipped: {d / 'notes.txt'}: not a log format commitsleuth reads",
        f"  partial: {d / 'truncated.log.gz'}: compressed stream ends early (truncated file)",
    ]
    per_file = dict((n, c) for n, c in rows(
        db_path, "select regexp_extract(uri, '[^/]+$'), events from sources"))
    assert per_file["junk-inside.log"] == per_file["long-line.log"] == 20  # both halves kept
    assert per_file["latin1.log"] == 10
    assert per_file["truncated.log.gz"] == 1177  # of 2000: the lines before the damage
    assert rows(db_path, "select count(*) from events where raw like '%-ext-10000-\ufffdt\ufffd%'") == [(1,)]


def test_unknown_format_name_is_a_usage_error(cli, tmp_path, db_path):
    (tmp_path / "a.log").write_text(hive_log(3))
    r = cli("ingest", tmp_path, "--format", "spark-lgo", "--db", db_path)
    assert r.exit_code == 2
    assert r.err.startswith("Error: unknown format 'spark-lgo'; did you mean 'spark-log'")


def test_secrets_are_redacted_before_storage(cli, tmp_path, db_path):
    log = tmp_path / "hive.log"
    log.write_text(
        hive_log(1).replace("hdfs://nn/warehouse", "s3a://AKIAABCDEFGHIJKLMNOP:s3cr3tKey@bucket/warehouse")
        + "javax.jdo.option.ConnectionURL=jdbc:mysql://hive:hunter2@db:3306/metastore?password=hunter3\n"
        + "hive.server2.token=abc123def\n"
    )
    cli("ingest", log, "--db", db_path)
    (raw, path), = rows(db_path, "select raw, path from events")
    stored = raw + path
    for secret in ("AKIAABCDEFGHIJKLMNOP", "s3cr3tKey", "hunter2", "hunter3", "abc123def"):
        assert secret not in stored
    assert "jdbc:mysql://hive:***@db:3306/metastore?password=***" in raw


def test_progress_bar_shows_speed_and_events_on_a_terminal_only(monkeypatch):
    import io
    import re
    import sys
    import time

    from commitsleuth.cli import _progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with _progress(10 << 20) as callbacks:
        assert callbacks == (None, None)
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    with _progress(10 << 20) as (advance, add_events):
        advance(1 << 20)
        time.sleep(0.3)  # the speed needs two samples apart in time
        advance(4 << 20)
        add_events(1234)
        add_events(1)
    shown = term.getvalue()
    assert "1,235 events" in shown and "5.2/10.5 MB" in shown
    assert re.search(r"\d+(\.\d)? MB/s", shown), shown


def test_progress_bar_is_drawn_before_its_total_is_known(monkeypatch):
    """The ingest draws the bar before it imports the engine, lists the paths and opens the store
    (progress within a second), and gives it the total once the paths are listed."""
    import io
    import sys

    from commitsleuth.cli import _progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    bar = _progress(None)
    with bar as (advance, _):
        assert advance is not None
        bar.set_total(10 << 20)
        advance(5 << 20)
    assert "5.2/10.5 MB" in term.getvalue()


def test_hadoop1_userlogs_tree_names_the_attempt_in_the_path(cli, tmp_path, db_path):
    attempt = "attempt_201304111550_268224_m_000005_1"
    where = tmp_path / "userlogs" / "job_201304111550_268224" / attempt
    where.mkdir(parents=True)
    (where / "stdout").write_text(
        "renamed path hdfs://nn/tmp/hive/_task_tmp.-ext-10000/dt=1/_tmp.000005_1 to "
        "hdfs://nn/tmp/hive/_tmp.-ext-10000/dt=1/000005_1 . File size is 42\n")
    (where / "syslog").write_text(
        "2013-04-11 16:02:10,101 INFO org.apache.hadoop.mapred.Task: Task:attempt_201304111550_268224_m_000005_1 "
        "is done. And is in the process of commiting\n"
        "2013-04-11 16:02:11,517 INFO org.apache.hadoop.mapred.FileOutputCommitter: Saved output of task "
        f"'{attempt}' to hdfs://nn/tmp/hive/_tmp.-ext-10000\n")
    r = cli("ingest", tmp_path / "userlogs", "--db", db_path)
    assert r.out == "ingested 2 files (2 ok): 3 events, 0 rejected lines\n"
    assert rows(db_path, "select s.format, e.kind, e.attempt_id, e.attempt_no, e.size from events e "
                         "join sources s using (source_id) order by s.format, e.line_no") == [
        ("mr1-task-stdout", "rename", attempt, 1, 42),
        ("mr1-task-syslog", "attempt_state", attempt, 1, None),  # commit pending (Hadoop 1 "commiting")
        ("mr1-task-syslog", "task_commit", attempt, 1, None),
    ]


def test_formats_lists_every_format_with_what_it_yields(cli):
    from commitsleuth.parsers import FORMATS

    r = cli("formats")
    lines = r.out.splitlines()
    text = lines[:2 * len(FORMATS)]
    assert [line.split()[0] for line in text[::2]] == [f.name for f in FORMATS]
    assert lines[1].split() == ["yields:", *(k + "," for k in FORMATS[0].kinds[:-1]), FORMATS[0].kinds[-1]]
    # then the table formats (issue 31), each with what it yields
    tables = lines[2 * len(FORMATS):]
    assert tables[:2] == ["", "Table formats (give the table's directory or its log directory):"]
    assert [line.split()[0] for line in tables[2::2]] == ["delta-log", "iceberg-metadata", "hudi-timeline"]
    assert {line.strip() for line in tables[3::2]} == {"yields: table_commit, table_add, table_remove"}
    assert "_delta_log/" in tables[2] and ".hoodie/" in tables[6]


def test_already_exists_names_the_table_wherever_the_exception_text_ends():
    """The Partition(…) dump may end the message right after tableName: no ')' in the name."""
    from commitsleuth.parsers.messages import parse_message

    for tail in ("tableName:t))", "tableName:t, createTime:0, lastAccessTime:0))"):
        fields = parse_message(
            "AlreadyExistsException(message:Partition already exists: Partition(values:[20170830], "
            f"dbName:dw, {tail}"
        )
        assert fields["kind"] == "partition_exists"
        assert fields["table_name"] == "dw.t"
        assert fields["detail"]["values"] == ["20170830"]


def test_truncated_zstd_is_partial_and_keeps_what_precedes_the_damage(cli, tmp_path, db_path):
    """zstandard's stream reader ends a cut frame silently; the damage must still be named."""
    import zstandard

    text = hive_log(6000).encode()
    packed = zstandard.ZstdCompressor().compress(text)
    d = tmp_path / "in"
    d.mkdir()
    (d / "cut.log.zst").write_bytes(packed[: len(packed) * 6 // 10])
    (d / "two-frames.log.zst").write_bytes(packed + zstandard.ZstdCompressor().compress(text))
    r = cli("ingest", d, "--db", db_path)
    assert r.out.splitlines()[1:] == [
        f"  partial: {d / 'cut.log.zst'}: compressed stream ends early (truncated file)",
    ]
    per_file = dict(rows(db_path, "select regexp_extract(uri, '[^/]+$'), events from sources"))
    whole = per_file["two-frames.log.zst"] // 2
    assert 0 < per_file["cut.log.zst"] < whole
