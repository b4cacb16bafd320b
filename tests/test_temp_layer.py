"""One definition of a writer's temp layer (forensics/detectors/base.py TEMP_DIRS): the detectors' TEMP_LAYER,
the store's is_temp (migration 0075), CS109's leftover directories, audit's listing and the path
resolution all read it, the S3A magic committer's __magic included."""

from __future__ import annotations

import re

import pytest

from commitsleuth.forensics import audit
from commitsleuth.forensics.detectors.base import TEMP_DIRS, TEMP_LAYER
from commitsleuth.forensics.detectors.leftover_temp import LeftoverTemp
from commitsleuth.forensics.paths import resolve
from commitsleuth.forensics.spark_engine import live_objects

# S3A's magic layouts (CommitConstants MAGIC "__magic", BASE "__base"; CommitUtilsWithMR
# "job-<uuid>/tasks/<attempt>"; Hadoop 3.3.5+ "__magic_job-<uuid>"), a task commit's pendingset
MAGIC = [
    "s3a://lake/w/orders/__magic/job-6b1d2c3e/tasks/attempt_20240519100000_0001_m_000003_0/__base/ds=1/000003_0",
    "s3a://lake/w/orders/__magic_job-6b1d2c3e/tasks/attempt_20240519100000_0001_m_000003_0/__base/ds=1/000003_0.pending",
    "s3a://lake/w/orders/__magic/job-6b1d2c3e/task_20240519100000_0001_m_000003.pendingset",
]


def test_the_store_and_the_detectors_share_one_pattern():
    _, _, statement = live_objects()["partition_events"]
    assert f"'{TEMP_LAYER}'" in statement
    assert TEMP_LAYER.startswith(f"/({TEMP_DIRS}|")
    assert f"/({TEMP_DIRS}))" in LeftoverTemp.sql
    assert audit._TEMP_DIR.pattern == f"^({TEMP_DIRS})$"


@pytest.mark.parametrize("path", MAGIC)
def test_a_magic_path_is_temp_and_resolves_to_its_destination(path):
    assert re.search(TEMP_LAYER, path)
    info = resolve(path)
    assert info.location == "s3a://lake/w/orders"  # temp: the store's is_temp, below (PathInfo has no temp)
    assert info.partition_spec == ("ds=1" if "/__base/" in path else None)


def test_a_magic_lookalike_is_not_temp():
    for path in ("s3a://lake/w/orders/magic/ds=1/f", "s3a://lake/w/orders/__magical/ds=1/f", "s3a://lake/w/orders/ds=1/__magical_f", "s3a://lake/w/x__magic/ds=1/f"):
        assert not re.search(TEMP_LAYER, path.rsplit("/", 1)[0]), path


def test_the_store_says_is_temp_of_magic_paths(tmp_path):
    from commitsleuth.forensics.paths import enrich
    from commitsleuth.model import Event
    from commitsleuth.store import Store
    with Store(tmp_path / "s.duckdb") as store:
        store.write_events([enrich(Event("file_create", path=p)) for p in MAGIC]
                           + [enrich(Event("file_create", path="s3a://lake/w/orders/ds=1/000003_0"))])
        got = store.con.execute("SELECT file_name, is_temp, part_location FROM partition_events ORDER BY event_id").fetchall()
    assert got == [("000003_0", True, "s3a://lake/w/orders"), ("000003_0.pending", True, "s3a://lake/w/orders"),
                   ("task_20240519100000_0001_m_000003.pendingset", True, "s3a://lake/w/orders"),
                   ("000003_0", False, "s3a://lake/w/orders")]
