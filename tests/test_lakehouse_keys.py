"""Table logs keyed like every other source: Hudi's default (non-hive-style) partition paths keyed
from the partition fields its ``hoodie.properties`` names. Spark-written Hudi tables from
apache/hudi-rs (tests/corpus/lakehouse.NOTICE)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from commitsleuth.parsers.formats.hudi_timeline import partition_spec
from commitsleuth.parsers.lakehouse import read_table, table_root

HUDI = Path(__file__).parent / "corpus" / "lakehouse" / "hudi-rs"
TABLES = ("v6_simplekeygen_nonhivestyle_overwritetable", "v8_simplekeygen_nonhivestyle")


def hudi_table(tmp_path: Path, name: str) -> Path:
    with zipfile.ZipFile(HUDI / f"{name}.zip") as z:
        z.extractall(tmp_path)
    return tmp_path / name


def adds(table: Path):
    root, fmt = table_root(str(table))
    log, events = read_table(root, fmt)
    assert log.problems == []
    return [e for e in events if e.kind == "table_add"]


@pytest.mark.parametrize("name", TABLES)
def test_non_hive_style_partitions_are_keyed_by_the_tables_partition_field(tmp_path, name):
    table = hudi_table(tmp_path, name)
    found = adds(table)
    # the written paths are <byteField value>/<file> (hoodie.datasource.write.hive_style_partitioning=false)
    assert found and all(e.partition_spec == f"byteField={Path(e.path).parent.name}" for e in found)
    assert {e.partition_spec for e in found} >= {"byteField=10", "byteField=20"}


@pytest.mark.parametrize("name", TABLES)
def test_a_table_whose_properties_name_no_partition_field_stays_unkeyed(tmp_path, name):
    """The negative twin: the same table with hoodie.table.partition.fields removed (as a
    non-partitioned table's properties are): its directories are not guessed into keys."""
    table = hudi_table(tmp_path, name)
    props = table / ".hoodie" / "hoodie.properties"
    props.write_text("".join(line for line in props.read_text().splitlines(keepends=True)
                             if not line.startswith("hoodie.table.partition.fields=")))
    found = adds(table)
    assert found and all(e.partition_spec is None for e in found)


def test_partition_paths_in_each_published_layout():
    # hive-style (hoodie.datasource.write.hive_style_partitioning=true): the path is the key
    assert partition_spec("dt=2024-05-19", ["dt"]) == "dt=2024-05-19"
    # default layout, one level per field (ComplexKeyGenerator: values joined with '/')
    assert partition_spec("2024/05/19", ["year", "month", "day"]) == "year=2024/month=05/day=19"
    # one field, several levels (TimestampBasedKeyGenerator output format yyyy/MM/dd)
    assert partition_spec("2024/05/19", ["ts"]) == "ts=2024%2F05%2F19"
    # levels and fields that do not pair up, a non-partitioned table: no key is guessed
    assert partition_spec("2024/05", ["a", "b", "c"]) is None
    assert partition_spec("", ["a"]) is None and partition_spec("2024", []) is None
