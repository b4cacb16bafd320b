"""Partition identity: every temp and staging layer peels to the output location and partition."""

from __future__ import annotations

import pytest

from commitsleuth.forensics.paths import enrich, normalize_spec, resolve, resolve_parent, table_from_location
from commitsleuth.model import Event

U = "3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b"
W = "hdfs://nn:8020/user/hive/warehouse/db.db/t"


@pytest.mark.parametrize("path,location,spec,name,task,attempt,uuid", [
    # Hive task temp, job temp, dedup intermediate, published scratch
    ("hdfs://nn/tmp/hive/q/_task_tmp.-ext-10000/dt=1/_tmp.000005_0", "hdfs://nn/tmp/hive/q/-ext-10000", "dt=1", "_tmp.000005_0", "000005", 0, None),
    ("hdfs://nn/tmp/hive/q/_tmp.-ext-10000/dt=1/000005_1", "hdfs://nn/tmp/hive/q/-ext-10000", "dt=1", "000005_1", "000005", 1, None),
    ("hdfs://nn/tmp/hive/q/_tmp.-ext-10000.intermediate/dt=1/000005_1", "hdfs://nn/tmp/hive/q/-ext-10000", "dt=1", "000005_1", "000005", 1, None),
    ("hdfs://nn/tmp/hive/q/-ext-10000.moved/dt=1/000005_1", "hdfs://nn/tmp/hive/q/-ext-10000", "dt=1", "000005_1", "000005", 1, None),
    # .hive-staging inside the table publishes into the table
    (f"{W}/.hive-staging_hive_2015-03-02_11-03-55_093_1/-ext-10000/dt=1/000000_0", W, "dt=1", "000000_0", "000000", 0, None),
    # UNION ALL subdirs, in a partition and in an unpartitioned table
    # (the subdir stays in the file's name: deleting HIVE_UNION_SUBDIR_1 deletes its files only)
    (f"{W}/dt=1/HIVE_UNION_SUBDIR_2/000000_0", W, "dt=1", "HIVE_UNION_SUBDIR_2/000000_0", "000000", 0, None),
    (f"{W}/HIVE_UNION_SUBDIR_1/000001_0_copy_1", W, None, "HIVE_UNION_SUBDIR_1/000001_0_copy_1", "000001", 0, None),
    # any plain subdirectory of a partition (list bucketing's default dir, Hive ACID's delta dirs)
    # is inside the partition: ds=18/sub and ds=19/sub are not one location
    (f"{W}/ds=19/sub/000005_0", W, "ds=19", "sub/000005_0", "000005", 0, None),
    (f"{W}/ds=18/sub/000005_1", W, "ds=18", "sub/000005_1", "000005", 1, None),
    (f"{W}/ds=19/h=2/HIVE_DEFAULT_LIST_BUCKETING_DIR_NAME/000007_1", W, "ds=19/h=2", "HIVE_DEFAULT_LIST_BUCKETING_DIR_NAME/000007_1", "000007", 1, None),
    (f"{W}/ds=19/delta_0000005_0000005_0000/bucket_00000", W, "ds=19", "delta_0000005_0000005_0000/bucket_00000", None, None, None),
    (f"{W}/ds=19/a/b/part-00003-{U}.c000", W, "ds=19", f"a/b/part-00003-{U}.c000", "00003", None, U),
    # a k=v run above the table stays in the location: before a <db>.db or warehouse directory,
    # or before another k=v run
    (f"s3a://lake/env=prod/w/db.db/t/dt=1/part-00000-{U}.c000.snappy.parquet", "s3a://lake/env=prod/w/db.db/t", "dt=1", f"part-00000-{U}.c000.snappy.parquet", "00000", None, U),
    ("s3a://lake/env=prod/w/db.db/t/000000_0", "s3a://lake/env=prod/w/db.db/t", None, "000000_0", "000000", 0, None),
    ("hdfs://nn/env=prod/warehouse/t/000000_0", "hdfs://nn/env=prod/warehouse/t", None, "000000_0", "000000", 0, None),
    ("hdfs://nn/data/env=prod/t/ds=1/000005_1", "hdfs://nn/data/env=prod/t", "ds=1", "000005_1", "000005", 1, None),
    # a table's directory under a k=v directory, deleted (the path reads as a file of the k=v dir)
    ("hdfs://nn/data/env=prod/t", "hdfs://nn/data", "env=prod", "t", None, None, None),
    # FileOutputCommitter: task attempt dir, committed task dir (v1)
    (f"{W}/_temporary/0/_temporary/attempt_202401101015_0003_m_000001_0/dt=1/part-00001-{U}.c000.snappy.parquet", W, "dt=1", f"part-00001-{U}.c000.snappy.parquet", "00001", None, U),
    (f"{W}/_temporary/1/task_202401101015_0003_r_000002/dt=1/part-r-00002", W, "dt=1", "part-r-00002", "00002", None, None),
    # Spark dynamic partition overwrite staging
    (f"{W}/.spark-staging-{U}/dt=1/part-00003-{U}.c000", W, "dt=1", f"part-00003-{U}.c000", "00003", None, U),
    # final files
    (f"{W}/dt=1/h=2/part-00003-{U}-c000.snappy.parquet", W, "dt=1/h=2", f"part-00003-{U}-c000.snappy.parquet", "00003", None, U),
    ("file:/data/t/dt=1/000005_0_copy_1", "file:/data/t", "dt=1", "000005_0_copy_1", "000005", 0, None),
    ("s3a://bucket/t/dt=1", "s3a://bucket/t", "dt=1", None, None, None, None),
])
def test_resolve(path, location, spec, name, task, attempt, uuid):
    info = resolve(path)
    assert (info.location, info.partition_spec, info.file_name, info.file_task, info.file_attempt,
            info.write_uuid) == (location, spec, name, task, attempt, uuid)


@pytest.mark.parametrize("spec,want", [
    ("dt=1/h=2", "dt=1/h=2"), ("dt=1,h=2", "dt=1/h=2"), ("(dt='1', h='2')", "dt=1/h=2"),
    ("{dt=1, h=2}", "dt=1/h=2"), ("[20170830]", "[20170830]"), ("[v1, 'v2']", "[v1,v2]"), (None, None),
    # Hive's PARTITION clause quotes its values, in either quote: the quotes are syntax
    ("(ds='2024-01-01')", "ds=2024-01-01"), ('(ds="2024-01-01", h=\'2\')', "ds=2024-01-01/h=2"),
    # a value that really holds quotes (a Delta/Iceberg partition value, a path's k=v) keeps them
    ("name='quoted'", "name='quoted'"), ("name=it's/h=2", "name=it's/h=2"), ("{name=\"x\"}", 'name="x"'),
    ("(name=it's)", "name=it's"), ("(name='it''s')", "name=it''s"), ("['it's']", "[it's]"), ("[x']", "[x']"),
])
def test_normalize_spec(spec, want):
    assert normalize_spec(spec) == want


def test_table_names_from_warehouse_paths():
    assert table_from_location(W) == "db.t"
    assert table_from_location("hdfs://nn/user/hive/warehouse/Sales") == "default.sales"
    assert table_from_location("hdfs://nn/tmp/hive/q/-ext-10000") is None


def test_enrich_a_load_names_its_destination_not_its_source():
    ev = enrich(Event("load", table_name="db.t", partition_spec="(dt='1')", path="hdfs://nn/in/a.log"))
    assert (ev.location, ev.partition_spec, ev.file_name) == (None, "dt=1", None)
    ev = enrich(Event("load", partition_spec="{dt=1}", target_path=f"{W}/dt=1"))
    assert (ev.location, ev.table_name, ev.partition_spec) == (W, "db.t", "dt=1")
    ev = enrich(Event("task_commit", target_path="hdfs://nn/out"))
    assert (ev.location, ev.file_name) == ("hdfs://nn/out", None)


def test_a_directory_resolves_as_the_files_in_it_do():
    """resolve_parent (a listing's or a table log's directory, resolved once) gives what resolve
    gives each file of it; a directory itself (a load's target) keeps a plain subdirectory of a
    k=v directory in its location (a table under env=prod as often as a partition's subdir), a
    UNION ALL subdir in its name (trashing it is no partition delete)."""
    for directory in (f"{W}/ds=19/sub", f"{W}/ds=19/HIVE_UNION_SUBDIR_1", f"{W}/ds=19", W,
                      "s3a://lake/env=prod/w/db.db/t/dt=1", "hdfs://nn/data/env=prod/t"):
        parent, own = resolve_parent(directory), resolve(directory + "/000005_1")
        assert (parent.location, parent.partition_spec, (parent.file_name or "") + "000005_1") == \
            (own.location, own.partition_spec, own.file_name)
    for directory, want in ((f"{W}/ds=19/sub", (f"{W}/ds=19/sub", None, None)),
                            ("hdfs://nn/data/env=prod/t", ("hdfs://nn/data/env=prod/t", None, None)),
                            (f"{W}/ds=19/HIVE_UNION_SUBDIR_1", (W, "ds=19", "HIVE_UNION_SUBDIR_1"))):
        info = resolve(directory, is_dir=True)
        assert (info.location, info.partition_spec, info.file_name) == want
