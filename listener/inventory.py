"""What a write left on disk: a listing through the session's own Hadoop FileSystem.

Listing through ``Path.getFileSystem(hadoopConfiguration)`` means hdfs://, s3a:// and file://
all work with the credentials and settings the job itself used. Every file becomes a ``file``
event (path, size, ts = modification time); ``forensics.paths.enrich`` fills location,
partition, write-job UUID and the task/attempt in the name. Leftovers of an unfinished commit
(``_temporary``, ``.spark-staging-*``) and ``_SUCCESS`` markers are noted in ``detail``; a
``_SUCCESS`` that holds a committer's JSON manifest (S3A, manifest committers) is read.
"""

from __future__ import annotations

import datetime as dt

from commitsleuth.forensics.paths import enrich
from commitsleuth.forensics.success_manifest import read_hadoop_manifest
from commitsleuth.parsers.spark_plan import normalize_path
from commitsleuth.model import Event

MAX_FILES = 100_000


def leftover(path: str) -> str | None:
    """Which unfinished-commit layer a path sits in, if any."""
    for seg in path.split("/"):
        if seg == "_temporary":
            return "_temporary"
        if seg.startswith(".spark-staging-"):
            return ".spark-staging"
    return None


class Lister:
    """Lists output locations through the JVM; one instance per live session."""

    def __init__(self, jvm, hadoop_conf, max_files: int = MAX_FILES):
        self.jvm = jvm
        self.hadoop_conf = hadoop_conf
        self.max_files = max_files

    def list(self, location: str, query_id: str | None = None,
             window: tuple[dt.datetime | None, dt.datetime | None] | None = None) -> tuple[list[Event], bool]:
        """``file`` events for everything under ``location``; (events, truncated)."""
        path = self.jvm.org.apache.hadoop.fs.Path(location)
        fs = path.getFileSystem(self.hadoop_conf)
        if not fs.exists(path):
            return [], False
        out: list[Event] = []
        it = fs.listFiles(path, True)
        while it.hasNext():
            if len(out) >= self.max_files:
                return out, True
            st = it.next()
            name = normalize_path(st.getPath().toString())
            ev = Event("file", ts=_utc_ms(st.getModificationTime()), path=name, size=st.getLen())
            enrich(ev)
            detail = {"listed_for": location}
            layer = leftover(name)
            if layer:
                detail["leftover"] = layer
            if name.rsplit("/", 1)[-1] == "_SUCCESS":
                detail["success_marker"] = True
                if st.getLen() > 0:
                    detail["manifest"] = manifest = self._manifest(fs, st)
                    commit = _manifest_commit(manifest, ev)
                    if commit is not None:
                        out.append(commit)
            if query_id is not None and window and _within(ev.ts, window):
                ev.query_id = query_id  # written while that SQL write ran
            ev.detail = detail
            out.append(ev)
        return out, False

    def _manifest(self, fs, status) -> dict | str:
        """A committer's JSON ``_SUCCESS`` manifest (committer, files, job id), or why not."""
        return read_hadoop_manifest(self.jvm, fs, status)


def _manifest_commit(manifest, marker: Event) -> Event | None:
    """A committer's manifest names the job it committed (Spark's ``writeJobUUID``, which is
    not the UUID in the part-file names)."""
    if not isinstance(manifest, dict) or not manifest.get("jobId") or manifest.get("success") is False:
        return None
    ts = _utc_ms(manifest["timestamp"]) if isinstance(manifest.get("timestamp"), int) else marker.ts
    return Event("job_commit", ts=ts, job_id=str(manifest["jobId"]), path=marker.path,
                 location=marker.location,
                 detail={"from": "_SUCCESS manifest", "committer": manifest.get("committer"),
                         "job_id_source": manifest.get("jobIdSource")})


def _utc_ms(ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).replace(tzinfo=None)


def _within(ts, window) -> bool:
    start, end = window
    return ts is not None and (start is None or ts >= start - dt.timedelta(seconds=1)) and (
        end is None or ts <= end + dt.timedelta(seconds=1))
