"""CS201 table-orphan-file."""

from __future__ import annotations

from commitsleuth.forensics.detectors.base import SqlDetector, where
from commitsleuth.forensics.table_log import TABLE_FILES, retention_hours
from commitsleuth.forensics.table_writers import tie_file_writers

_SQL = """
WITH {files},
latest AS (
    SELECT location, max(ts) AS ts FROM events
    WHERE kind = 'table_commit' AND status = 'completed' GROUP BY location
),
uncommitted AS (  -- commit files a writer staged and never published
    SELECT location, list(event_id) AS ids, list(path) AS paths FROM events
    WHERE kind = 'table_commit' AND status = 'uncommitted' GROUP BY location
),
orphans AS (
    SELECT l.* FROM listed l JOIN latest c ON c.location = l.location
    WHERE l.location NOT IN (SELECT location FROM unreliable)
      -- checksums, markers, Hudi log files, in a partition's subdirectory too (sub/.part-….crc)
      AND NOT regexp_matches(base_name(l.file_name), '^[._]')
      AND NOT contains(l.path, '/_change_data/')
      AND l.ts < c.ts - to_microseconds(CAST({retention} * 3600e6 AS BIGINT))
      -- any table's log: a file another table references by absolute path (a Delta SHALLOW
      -- CLONE, files added in place) is that table's data, whichever root it lies under
      AND NOT EXISTS (SELECT 1 FROM referenced s WHERE s.path = l.path)
      -- a Hudi twin (a second write token of a file group and instant the log holds) is CS202's
      AND NOT EXISTS (SELECT 1 FROM table_files a WHERE a.location = l.location AND a.kind = 'table_add'
                      AND a.file_name <> l.file_name
                      AND regexp_replace(a.file_name, '_\\d+-\\d+-\\d+_', '_') = regexp_replace(l.file_name, '_\\d+-\\d+-\\d+_', '_'))
      -- a Hudi file of an instant on the timeline that never completed is CS206's
      AND NOT EXISTS (SELECT 1 FROM events h WHERE h.kind = 'table_commit' AND h.location = l.location
                      AND h.detail->>'format' = 'hudi-timeline' AND h.status <> 'completed'
                      AND h.detail->>'version' = regexp_extract(l.file_name, '_(\\d+)\\.\\w+$', 1))
)
SELECT o.location, o.partition_spec, any_value(o.table_name) AS table_name, min(o.ts) AS t0, max(o.ts) AS t1,
       list(o.path ORDER BY o.path) AS paths, sum(o.size) AS bytes,
       list_sort(list(DISTINCT regexp_extract(o.file_name, '^\\d{{5}}-(\\d+)-[0-9a-f-]{{36}}-\\d{{5}}', 1))) AS tids,
       list(o.event_id ORDER BY o.path) || coalesce(any_value(u.ids), []) AS evidence,
       any_value(u.paths) AS staged
FROM orphans o LEFT JOIN uncommitted u ON u.location = o.location
GROUP BY o.location, o.partition_spec
ORDER BY o.location, o.partition_spec
"""


class TableOrphanFile(SqlDetector):
    """Files under a Delta, Iceberg or Hudi table that no version of its log references.

    Symptom: data files sit in the table's directories but no commit of the table's log ever
    added them, nor any other table's log (a shallow clone or an in-place import names files
    under another table's root by absolute path: those are its data); they were written before the latest commit, older than the retention window.
    The writer is named when the log's file name holds its TID (Iceberg) or the storage recorded
    the file's create (an HDFS audit callerContext or an S3A audit Referer names the task attempt).
    Cause: a write that failed or was killed after writing its files and before its commit
    (its staged commit file may still be in the log directory), or a writer that lost a commit
    race and did not clean up. Readers ignore these files: they are orphans, not data.
    Remedy: confirm no writer is still running, then remove them with the format's own tool:
    Delta ``VACUUM`` (keep ``delta.deletedFileRetentionDuration``, default 7 days, so a running
    writer's files survive), Iceberg ``remove_orphan_files`` with ``older_than`` past your longest
    write (never a short window: it deletes live files of commits in flight, apache/iceberg#4194),
    Hudi's cleaner. Set COMMITSLEUTH_ORPHAN_RETENTION_HOURS to the same window here.
    """

    code = "CS201"
    name = "table-orphan-file"
    severity = "medium"

    @property
    def sql(self) -> str:
        return _SQL.format(files=TABLE_FILES.strip(), retention=retention_hours())

    def to_finding(self, row: dict):
        row["actors"] = [f"TID {t}" for t in row["tids"] if t]
        return super().to_finding(row)

    def finish(self, con, findings):
        tie_file_writers(con, findings)  # the attempt that wrote each orphan, from the storage's record
        return findings

    def summary(self, row: dict) -> str:
        n = len(row["paths"])
        staged = f"; a writer staged and never published {', '.join(row['staged'])}" if row.get("staged") else ""
        return (f"{n} file{'s' if n != 1 else ''} in {where(row)} no version of the table's log references "
                f"(orphans, not data): {', '.join(p.rsplit('/', 1)[-1] for p in row['paths'][:5])}"
                f"{' …' if n > 5 else ''}{staged}")

    def detail(self, row: dict) -> dict:
        return {"paths": row["paths"], "bytes": row["bytes"], "staged_commits": row.get("staged"),
                "retention_hours": retention_hours()}
