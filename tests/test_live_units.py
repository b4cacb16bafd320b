"""The pieces of live capture that need no Spark: the spool reader and the plan reader."""

from __future__ import annotations

import pytest

from commitsleuth.listener.inventory import leftover
from commitsleuth.parsers.spark_plan import normalize_path, write_target
from commitsleuth.listener.tail import SpoolTail

# As Spark 4.x prints it (Spark 3.5 prints the same Arguments line).
PARTITIONED = """== Physical Plan ==
Execute InsertIntoHadoopFsRelationCommand (5)

(5) Execute InsertIntoHadoopFsRelationCommand
Input: []
Arguments: file:/tmp/i3/out, false, [p#7L], Parquet, [__partition_columns=["p"], path=/tmp/i3/out], Overwrite, [id, p]
"""
# Spark 3.5.9, DataFrameWriter.insertInto on a partitioned table (from a live capture).
TABLE = """(5) Execute InsertIntoHadoopFsRelationCommand
Input: []
Arguments: file:/tmp/i3/wh35/sales, false, [dt#13L], Parquet, [path=file:/tmp/i3/wh35/sales], Append, `spark_catalog`.`default`.`sales`, org.apache.spark.sql.execution.datasources.CatalogFileIndex(file:/tmp/i3/wh35/sales), [id, dt]
"""
# Spark 3.5.9, saveAsTable: the CTAS names the table; a nested insert writes the files.
CTAS = """(1) Execute CreateDataSourceTableAsSelectCommand
Output: []
Arguments: `spark_catalog`.`default`.`sales`, ErrorIfExists, [id, dt]
"""


def test_a_half_written_last_line_waits_for_its_end(tmp_path):
    spool = tmp_path / "app.inprogress"
    spool.write_bytes(b'{"Event":"A"}\n{"Event":"B"}\n{"Eve')
    tail = SpoolTail(spool)
    assert tail.read() == (1, 0, b'{"Event":"A"}\n{"Event":"B"}\n')
    assert tail.read() is None
    with open(spool, "ab") as fh:
        fh.write(b'nt":"C"}\n')
    assert tail.read() == (3, 28, b'{"Event":"C"}\n')
    assert tail.offset == spool.stat().st_size and tail.line_no == 3


def test_a_line_longer_than_a_chunk_is_read_whole(tmp_path):
    spool = tmp_path / "app.inprogress"
    long = '{"Event":"' + "x" * 5000 + '"}'
    spool.write_text(long + "\n" + '{"Event":"B"}\n')
    tail = SpoolTail(spool)
    assert tail.read(limit=1000) == (1, 0, long.encode() + b"\n")
    assert tail.read(limit=1000) == (2, 5013, b'{"Event":"B"}\n')


def test_scrub_masks_a_secret_in_place_at_its_byte_length(tmp_path):
    spool = tmp_path / "app.inprogress"
    lines = [b'{"Event":"A","Reason":"ok"}', b'{"Event":"B","Reason":"password=hunter2 \xc3\xa9"}',
             b'{"Event":"C"}']
    spool.write_bytes(b"\n".join(lines) + b"\n")
    tail = SpoolTail(spool)
    _, offset, data = tail.read()
    assert tail.scrub(offset, data) == 1
    after = spool.read_bytes().split(b"\n")
    assert after[0] == lines[0] and after[2] == lines[2]
    assert len(after[1]) == len(lines[1]) and b"hunter2" not in after[1]


@pytest.mark.parametrize("user_pattern", [None, r"Acme-[0-9]+"])
def test_scrub_masks_every_secret_line_of_a_later_block_at_its_own_offset(tmp_path, user_pattern):
    """A block read after another (a non-zero offset) with several lines to mask, by the
    built-in patterns' word search or, with a user's pattern, line by line."""
    from commitsleuth import redact as layer

    spool = tmp_path / "app.inprogress"
    first = b'{"Event":"A","Reason":"password=first1"}\n'
    later = [b'{"Event":"B","Reason":"fine"}', b'{"Event":"C","Reason":"token=later2 Acme-7"}',
             b'{"Event":"D","Reason":"still fine Acme-8"}', b'{"Event":"E","Reason":"secret=later3"}']
    spool.write_bytes(first)
    tail = SpoolTail(spool)
    tail.read()
    with open(spool, "ab") as fh:
        fh.write(b"\n".join(later) + b"\n")
    _, offset, data = tail.read()
    assert offset == len(first)
    if user_pattern:
        layer.add_pattern(user_pattern)
    try:
        assert tail.scrub(offset, data) == (3 if user_pattern else 2)
    finally:
        layer.clear_user_patterns()
    after = spool.read_bytes()
    assert after.startswith(first) and len(after) == len(first) + len(data)  # the first block as it was
    lines = after[len(first):].split(b"\n")[:-1]
    assert [len(x) for x in lines] == [len(x) for x in later]
    assert lines[0] == later[0] and b"later2" not in lines[1] and b"later3" not in lines[3]
    assert (b"Acme-8" not in lines[2]) if user_pattern else (lines[2] == later[2])


def test_write_target_of_a_partitioned_path_and_a_table():
    t = write_target(PARTITIONED)
    assert (t.path, t.mode, t.partition_columns, t.file_format, t.table) == (
        "file:///tmp/i3/out", "Overwrite", ("p",), "Parquet", None)
    t = write_target(TABLE)
    assert (t.path, t.mode, t.partition_columns, t.file_format, t.table) == (
        "file:///tmp/i3/wh35/sales", "Append", ("dt",), "Parquet", "default.sales")
    t = write_target(CTAS)
    assert (t.command, t.path, t.mode, t.table) == (
        "CreateDataSourceTableAsSelectCommand", None, "ErrorIfExists", "default.sales")
    assert write_target("== Physical Plan ==\nAdaptiveSparkPlan (6)\n") is None
    assert write_target(None) is None


def test_paths_and_leftovers():
    assert normalize_path("file:/tmp/x") == "file:///tmp/x"
    assert normalize_path("hdfs://nn/x") == "hdfs://nn/x"
    assert leftover("file:///t/_temporary/0/_temporary/attempt_1/p=1/part-0") == "_temporary"
    assert leftover("s3a://b/t/.spark-staging-0f3e/p=1/part-0") == ".spark-staging"
    assert leftover("file:///t/p=1/part-0") is None
