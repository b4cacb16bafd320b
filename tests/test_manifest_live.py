"""CS111 on a real write: Hadoop's manifest committer (bundled with PySpark 4's Hadoop) commits a
real CSV write; ``audit`` lists the directory (through the session's Hadoop FileSystem and through
the local walk), reads the real ``_SUCCESS`` manifest and compares it with the files."""

from __future__ import annotations

import json
import shutil

import pyspark
import pytest

from commitsleuth.forensics.audit import audit
from commitsleuth.store import Store

FACTORY = "org.apache.hadoop.mapreduce.lib.output.committer.manifest.ManifestCommitterFactory"


def _cs111(store: Store, path: str, spark=None):
    findings = audit(store, path, spark=spark).findings
    return [f for f in findings if f.code == "CS111"]


@pytest.mark.skipif(int(pyspark.__version__.split(".")[0]) < 4,
                    reason="Hadoop's manifest committer ships with Hadoop 3.3.5+, PySpark 4+")
def test_manifest_committer_success_against_the_directory(spark, tmp_path):
    out = tmp_path / "out"
    hconf = spark.sparkContext._jsc.hadoopConfiguration()
    key = "mapreduce.outputcommitter.factory.scheme.file"
    hconf.set(key, FACTORY)
    try:
        spark.range(0, 10, 1, 2).write.csv(str(out))
    finally:
        hconf.unset(key)
    manifest = json.loads((out / "_SUCCESS").read_text())
    assert manifest["committer"].endswith("ManifestCommitter") and manifest["success"] is True
    data = sorted(p for p in out.iterdir() if p.name.startswith("part-"))
    assert len(data) == 2

    with Store(tmp_path / "audit.duckdb") as store:
        # As committed: nothing on disk differs from what the committer listed (or, where its
        # list is empty, nothing can be judged): no finding either way.
        assert _cs111(store, "file://" + str(out), spark=spark) == []
        stored = json.loads(store.con.execute(
            "SELECT detail->'manifest' FROM events WHERE kind = 'file' AND file_name = '_SUCCESS'").fetchone()[0])
        assert stored["jobId"] == manifest["jobId"] and stored["filenames"] == manifest["filenames"]

        if not manifest["filenames"]:
            # Hadoop 3.5.0's manifest committer (PySpark 4.x) writes "filenames": [] here; its
            # RenameFilesStage would record each committed file's destination (FileOrDirEntry.getDest,
            # "file:/…"), as S3A's SuccessData does with "/key". Written in that form so the real
            # marker, committer and job id are compared with the real directory.
            manifest["filenames"] = ["file:" + str(p) for p in data]
            (out / "_SUCCESS").write_text(json.dumps(manifest))
            (out / "._SUCCESS.crc").unlink()  # the local FileSystem's checksum of the old bytes
            assert _cs111(store, "file://" + str(out), spark=spark) == []

        # A zombie attempt's file appears after the commit; a committed file is deleted.
        extra = out / data[0].name.replace("part-00000-", "part-00007-")
        shutil.copy(data[0], extra)
        data[1].unlink()
    for path, session in (("file://" + str(out), spark), (str(out), None)):  # Hadoop walk, local walk
        with Store(tmp_path / f"audit-{session is None}.duckdb") as store:
            (f,) = _cs111(store, path, spark=session)
            assert f.severity == "critical"
            assert f.detail["extra"] == [extra.name]
            assert f.detail["missing"] == [str(data[1])]
            assert f.detail["job_id"] == manifest["jobId"]
            assert f.actors == [f"job {manifest['jobId']}"]
            assert f"1 file(s) on disk it does not list ({extra.name})" in f.summary
            assert f"1 listed file(s) missing ({data[1].name})" in f.summary
            assert len(f.evidence) == 2  # the manifest and the extra file
