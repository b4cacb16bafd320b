"""Pasted logs (issue 15): one margin on every line (``-- ``, ``> ``, ``| ``, ``# ``, indentation,
line numbers) is recognised for detection and parsing; the raw line is kept; ``--format`` works."""

from __future__ import annotations

import duckdb
import pytest

from commitsleuth.parsers import detect, get_format
from commitsleuth.parsers.pasted import common_prefix

from conftest import write_files

# REAL: a Hive 3.1 CLI session published in course notes, every line quoted with "-- " (console
# lines and hive.log lines interleaved, as the CLI printed them).
PASTED = """\
-- 2026-09-07 00:08:47,505 INFO  [778c135c-019f-4eef-9e9d-715460a5f645 main] HiveMetaStore.audit (HiveMetaStore.java:logAuditEvent(349)) - ugi=palomamusa  ip=unknown-ip-addr      cmd=Done cleaning up thread local RawStore
-- Moving data to directory hdfs://localhost:9000/user/hive/warehouse/teste_managed/.hive-staging_hive_2026-09-07_00-08-10_373_6713271316481655311-1/-ext-10000
-- 2026-09-07 00:08:47,509 INFO  [778c135c-019f-4eef-9e9d-715460a5f645 main] exec.Task (SessionState.java:printInfo(1227)) - Moving data to directory hdfs://localhost:9000/user/hive/warehouse/teste_managed/.hive-staging_hive_2026-09-07_00-08-10_373_6713271316481655311-1/-ext-10000 from hdfs://localhost:9000/user/hive/warehouse/teste_managed/.hive-staging_hive_2026-09-07_00-08-10_373_6713271316481655311-1/-ext-10002
-- 2026-09-07 00:08:47,524 INFO  [778c135c-019f-4eef-9e9d-715460a5f645 main] ql.Driver (Driver.java:launchTask(2662)) - Starting task [Stage-0:MOVE] in serial mode
-- Loading data to table default.teste_managed
-- 2026-09-07 00:08:47,525 INFO  [778c135c-019f-4eef-9e9d-715460a5f645 main] exec.Task (SessionState.java:printInfo(1227)) - Loading data to table default.teste_managed from hdfs://localhost:9000/user/hive/warehouse/teste_managed/.hive-staging_hive_2026-09-07_00-08-10_373_6713271316481655311-1/-ext-10000
-- 2026-09-07 00:08:49,596 INFO  [778c135c-019f-4eef-9e9d-715460a5f645 main] stats.BasicStatsTask (BasicStatsTask.java:aggregateStats(280)) - Table default.teste_managed stats: [numFiles=1, numRows=1, totalSize=17, rawDataSize=16]
"""
PLAIN = [line[3:] for line in PASTED.splitlines()]
# The same real lines under the other margins people paste with.
MARGINS = {
    "sql-comment": PASTED,
    "quote": "".join(f"> {line}\n" for line in PLAIN),
    "pipe": "".join(f"| {line}\n" for line in PLAIN),
    "hash": "".join(f"# {line}\n" for line in PLAIN),
    "indent": "".join(f"    {line}\n" for line in PLAIN),
    "line-numbers": "".join(f"{i:>3}: {line}\n" for i, line in enumerate(PLAIN, start=41)),
}


@pytest.mark.parametrize("margin", sorted(MARGINS))
def test_pasted_log_is_read_after_its_margin_raw_kept(cli, tmp_path, db_path, margin):
    text = MARGINS[margin]
    write_files(tmp_path / "in", {"ticket.txt": text})
    r = cli("ingest", tmp_path / "in", "--db", db_path)
    assert r.out == "ingested 1 file (1 ok): 3 events, 0 rejected lines\n"
    with duckdb.connect(str(db_path), read_only=True) as con:
        got = con.execute("SELECT s.format, e.line_no, e.kind, e.table_name, e.ts::VARCHAR, e.thread, e.raw "
                          "FROM events e JOIN sources s USING (source_id) ORDER BY e.line_no").fetchall()
    lines = text.splitlines()
    fmt = f"hive-log4j1+pasted:{margin}"
    thread = "778c135c-019f-4eef-9e9d-715460a5f645 main"
    assert got == [
        (fmt, 3, "publish", "default.teste_managed", "2026-09-07 00:08:47.509", thread, lines[2]),
        (fmt, 6, "load", "default.teste_managed", "2026-09-07 00:08:47.525", thread, lines[5]),
        (fmt, 7, "stats", "default.teste_managed", "2026-09-07 00:08:49.596", thread, lines[6]),
    ]


def test_format_option_works_on_pasted_text(cli, tmp_path, db_path):
    write_files(tmp_path / "in", {"ticket.txt": MARGINS["quote"]})
    r = cli("ingest", tmp_path / "in", "--db", db_path, "--format", "hive-log4j1")
    assert r.out == "ingested 1 file (1 ok): 3 events, 0 rejected lines\n"
    assert get_format("hive-log4j1+pasted:quote").name == "hive-log4j1+pasted:quote"


def test_no_margin_in_real_logs(corpus):
    """HDFS's lines all start with digits (yymmdd), but they do not count up: not line numbers."""
    for name in ("HDFS_2k.log", "Hadoop_2k.log", "Spark_2k.log", "Zookeeper_2k.log"):
        head = (corpus / "loghub" / name).read_text(encoding="utf-8").splitlines()[:200]
        assert common_prefix(head) is None, name
    head = (corpus / "loghub" / "HDFS_2k.log").read_text(encoding="utf-8").splitlines()[:200]
    assert detect("HDFS_2k.log", head) is None


def test_margin_must_be_on_every_line():
    lines = PASTED.splitlines()
    assert common_prefix(lines) == "sql-comment"
    assert common_prefix(lines + ["2026-09-07 00:08:49,600 INFO  [main] ql.Driver - OK"]) is None
    numbered = MARGINS["line-numbers"].splitlines()
    assert common_prefix(numbered) == "line-numbers"
    assert common_prefix(numbered[:2] + numbered[3:]) is None  # a gap: not a numbering
