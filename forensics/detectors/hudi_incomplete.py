"""CS206 hudi-incomplete-instant."""

from __future__ import annotations

from commitsleuth.forensics.detectors.base import SqlDetector

# A Hudi base or log file names its instant: {fileId}_{writeToken}_{instant}.parquet. Files of
# an instant that never completed, and that no completed rollback took back, are still on
# storage; files a completed rollback lists as deleted are still there too.
_SQL = """
WITH instants AS (
    SELECT event_id, ts, location, table_name, status, detail->>'version' AS instant,
           detail->>'action' AS action, detail FROM events
    WHERE kind = 'table_commit' AND detail->>'format' = 'hudi-timeline'
),
rolled_back AS (
    SELECT location, unnest(CAST(detail->'rolled_back' AS VARCHAR[])) AS instant FROM instants
    WHERE action = 'rollback' AND status = 'completed' AND (detail->'rolled_back') IS NOT NULL
),
hudi_files AS (
    SELECT event_id, ts, location, partition_spec, path, file_name,
           regexp_extract(base_name(file_name), '^[\\w-]+?_(\\d+-\\d+-\\d+)_(\\d+)\\.\\w+$', 2) AS instant,
           regexp_extract(base_name(file_name), '^[\\w-]+?_\\d+-\\d+-(\\d+)_\\d+\\.\\w+$', 1) AS tid
    FROM events WHERE kind = 'table_file' AND coalesce(detail->>'log', 'false') <> 'true'
      -- a base file in a partition's subdirectory too (sub/<fileId>_<token>_<instant>.parquet)
      AND regexp_matches(base_name(file_name), '^[\\w-]+?_\\d+-\\d+-\\d+_\\d+\\.\\w+$')
),
incomplete AS (
    SELECT f.location, f.partition_spec, i.table_name, i.ts AS t0, max(f.ts) AS t1,
           [i.event_id] || list(f.event_id ORDER BY f.path) AS evidence, list(f.path ORDER BY f.path) AS paths,
           list(DISTINCT 'TID ' || f.tid ORDER BY 'TID ' || f.tid) AS actors, i.instant, i.status, 'incomplete' AS how
    FROM hudi_files f JOIN instants i ON i.location = f.location AND i.instant = f.instant
    WHERE i.status IN ('requested', 'inflight') AND i.action IN ('commit', 'deltacommit', 'replacecommit')
      AND NOT EXISTS (SELECT 1 FROM rolled_back r WHERE r.location = i.location AND r.instant = i.instant)
    GROUP BY f.location, f.partition_spec, i.table_name, i.ts, i.event_id, i.instant, i.status
),
leftovers AS (
    SELECT f.location, f.partition_spec, i.table_name, i.ts, max(f.ts), [i.event_id] || list(f.event_id),
           list(f.path ORDER BY f.path), list(DISTINCT 'TID ' || f.tid ORDER BY 'TID ' || f.tid), i.instant, i.status, 'rollback leftover'
    FROM instants i, unnest(CAST(i.detail->'deleted_files' AS VARCHAR[])) AS d(deleted)
    JOIN hudi_files f ON f.location = i.location AND (f.path = d.deleted OR ends_with(d.deleted, '/' || f.file_name))
    WHERE i.action = 'rollback' AND i.status = 'completed'
    GROUP BY f.location, f.partition_spec, i.table_name, i.ts, i.event_id, i.instant, i.status
)
SELECT * FROM incomplete UNION ALL SELECT * FROM leftovers ORDER BY location, partition_spec, t0
"""


class HudiIncompleteInstant(SqlDetector):
    """Files of a Hudi write that never completed, or that its rollback should have deleted.

    Symptom: base files named with an instant that is still ``requested`` or ``inflight`` on the
    timeline (no rollback took it back), or files a completed rollback lists as deleted, are
    still in the table's partitions.
    Cause: a writer killed mid-write whose rollback has not run yet, or a rollback whose deletes
    failed or raced a speculative task that wrote again after it (apache/hudi#14200).
    Readers skip uncommitted instants, but compaction, clustering and external readers that
    list files may pick them up.
    Remedy: let the next writer (or ``hudi-cli`` ``commit rollback``) roll the instant back, then
    check the files are gone; delete leftovers a completed rollback lists only after confirming
    no later instant references their file group.
    """

    code = "CS206"
    name = "hudi-incomplete-instant"
    severity = "medium"
    sql = _SQL

    def summary(self, row: dict) -> str:
        n = len(row["paths"])
        names = ", ".join(p.rsplit("/", 1)[-1] for p in row["paths"][:3])
        if row["how"] == "incomplete":
            return f"{n} file{'s' if n != 1 else ''} of {row['status']} instant {row['instant']} still on storage: {names}"
        return f"rollback {row['instant']} deleted {n} file{'s' if n != 1 else ''} that are still on storage: {names}"

    def detail(self, row: dict) -> dict:
        return {"instant": row["instant"], "paths": row["paths"], "how": row["how"]}
