"""CS203 table-missing-file."""

from __future__ import annotations

from commitsleuth.forensics.detectors.base import SqlDetector, where
from commitsleuth.forensics.table_log import TABLE_FILES

# A live file the listing does not show. The storage's own delete records (HDFS audit, S3
# access logs) of the path, or of a directory above it, name who deleted it.
_SQL = """
WITH {files},
gone AS (
    SELECT v.* FROM live v
    WHERE v.location IN (SELECT location FROM audited)
      AND starts_with(v.path, v.location || '/')  -- files outside the root (add_files) were not listed
      AND NOT EXISTS (SELECT 1 FROM listed l WHERE l.location = v.location AND l.path = v.path)
),
deletes AS (
    SELECT g.path AS gone_path, d.event_id, d.ts, coalesce(d.thread, d.detail->>'user', d.attempt_id, d.app_id) AS who
    FROM gone g JOIN events d ON d.kind = 'delete'
         AND (d.path = g.path OR starts_with(g.path, rtrim(d.path, '/') || '/'))
)
SELECT g.location, g.partition_spec, any_value(g.table_name) AS table_name,
       min(a.ts) AS t0, max(coalesce(d.ts, a.ts)) AS t1,
       list(DISTINCT g.path ORDER BY g.path) AS paths, list(DISTINCT a.v) AS versions,
       list(DISTINCT g.add_event) || coalesce(list(DISTINCT d.event_id) FILTER (WHERE d.event_id IS NOT NULL), []) AS evidence,
       coalesce(list(DISTINCT d.who ORDER BY d.who) FILTER (WHERE d.who IS NOT NULL), []) AS actors
FROM gone g JOIN table_files a ON a.event_id = g.add_event
LEFT JOIN deletes d ON d.gone_path = g.path
GROUP BY g.location, g.partition_spec
ORDER BY g.location, g.partition_spec
"""


class TableMissingFile(SqlDetector):
    """A file the table's current version references is not on storage.

    Symptom: the log's latest state holds a data file (added, never removed) that the listing
    of the table does not show; reads of the table fail with FileNotFoundException.
    Cause: a VACUUM or ``remove_orphan_files`` with a retention shorter than a running write
    (delta-io/delta#1515, apache/iceberg#4194), cleanup of a failed write that deleted files a
    retried commit then referenced (delta-rs#3645), or a manual delete. When the storage's
    audit log is ingested, the finding names who deleted it and when.
    Remedy: restore the file from the trash or a bucket version if there is one; otherwise
    remove the reference (Delta ``FSCK REPAIR TABLE``, Iceberg ``delete_files``) and re-load
    the partition. Keep VACUUM and orphan-removal retention longer than the longest write.
    """

    code = "CS203"
    name = "table-missing-file"
    severity = "critical"

    @property
    def sql(self) -> str:
        return _SQL.format(files=TABLE_FILES.strip())

    def summary(self, row: dict) -> str:
        n = len(row["paths"])
        who = f"; deleted by {', '.join(row['actors'])}" if row["actors"] else ""
        versions = ", ".join(str(v) for v in sorted(row["versions"]))
        return (f"{n} file{'s' if n != 1 else ''} the table's current version references "
                f"(added in version {versions}) {'are' if n != 1 else 'is'} missing from {where(row)}: "
                f"{', '.join(p.rsplit('/', 1)[-1] for p in row['paths'][:5])}{' …' if n > 5 else ''}{who}")

    def detail(self, row: dict) -> dict:
        return {"paths": row["paths"], "versions": sorted(row["versions"])}
