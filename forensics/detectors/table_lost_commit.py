"""CS204 table-lost-commit."""

from __future__ import annotations

from commitsleuth.forensics.detectors.base import SqlDetector, where
from commitsleuth.forensics.table_log import TABLE_FILES

# Three shapes of one failure: a version missing from the chain (Delta N.json absent between
# versions that exist); the same commit file written twice in the storage's own records; and a
# full overwrite that left files live it should have removed.
# Retries (delta-rs num_retries) are context only: a retried commit is a healthy one.
_SQL = """
WITH {files},
gaps AS (
    SELECT location, NULL AS partition_spec, table_name, ts AS t0, ts AS t1, [event_id] AS evidence,
           [detail->>'version'] AS versions, [path] AS paths, [] AS actors, 'gap' AS how,
           detail->>'reason' AS reason
    FROM events WHERE kind = 'table_commit' AND status = 'missing'
),
log_writes AS (
    SELECT coalesce(target_path, path) AS p, event_id, ts,
           coalesce(attempt_id, thread, detail->>'user', app_id) AS who
    FROM events
    WHERE kind IN ('file_create', 'rename')
      AND regexp_matches(coalesce(target_path, path), '(/_delta_log/\\d{{20}}\\.json|/metadata/v\\d+\\.metadata\\.json|/\\.hoodie/[^/]+\\.(commit|deltacommit|replacecommit))$')
),
twice AS (
    SELECT regexp_replace(p, '/(_delta_log|metadata|\\.hoodie)/[^/]+$', '') AS location, NULL,
           NULL, min(ts), max(ts), list(event_id ORDER BY ts), [regexp_extract(p, '([^/]+)$', 1)], [p],
           coalesce(list(DISTINCT who ORDER BY who) FILTER (WHERE who IS NOT NULL), []), 'written twice',
           'the storage records ' || count(*) || ' writes of one commit file'
    FROM log_writes GROUP BY p HAVING count(*) > 1
),
stale AS (  -- a full overwrite removes every file live before it: one that survives it was
            -- added by a commit the overwrite's writer never saw (a stale snapshot)
    SELECT c.location, a.partition_spec, c.table_name, min(a.ts), c.ts, [c.event_id] || list(DISTINCT a.event_id),
           [min(a.v)::VARCHAR, c.detail->>'version'], list(DISTINCT a.path ORDER BY a.path),
           CASE WHEN c.app_id IS NOT NULL THEN [c.app_id] ELSE [] END, 'stale overwrite',
           'full overwrite at version ' || (c.detail->>'version')
    FROM events c
    JOIN table_files a ON a.location = c.location AND a.kind = 'table_add'
         AND a.v < TRY_CAST(c.detail->>'version' AS BIGINT)
    WHERE c.kind = 'table_commit' AND c.status = 'completed' AND c.detail->>'format' = 'delta-log'
      AND lower(coalesce(c.detail->'parameters'->>'mode', '')) = 'overwrite'
      -- a partial overwrite, as delta-rs and Spark's WriteIntoDelta record it (DeltaOperations.Write:
      -- replaceWhere as predicate; dynamic partition overwrite, INSERT REPLACE ON / USING by name)
      AND NOT regexp_matches(CAST(c.detail->'parameters' AS VARCHAR), '"(predicate|isDynamicPartitionOverwrite|replaceOnCond|replaceUsingCols)"')
      AND c.location NOT IN (SELECT location FROM unreliable)
      AND NOT EXISTS (SELECT 1 FROM table_files r WHERE r.kind = 'table_remove' AND r.location = a.location
                      AND r.path = a.path AND r.v > a.v AND r.v <= TRY_CAST(c.detail->>'version' AS BIGINT))
    GROUP BY c.event_id, c.location, a.partition_spec, c.table_name, c.ts, c.detail, c.app_id
)
SELECT * FROM gaps UNION ALL SELECT * FROM twice UNION ALL SELECT * FROM stale
ORDER BY location, t0, partition_spec
"""


class TableLostCommit(SqlDetector):
    """A commit of the table lost, written twice, or overwritten by a writer with a stale view.

    Symptom: a version is missing from the table's log between versions that exist; the
    storage records two writes of one commit file (``N.json``, ``vN.metadata.json``); or a full
    overwrite left files live that an earlier commit added, which it should have removed.
    Cause: a commit protocol without put-if-absent or atomic rename on this store (S3 without a
    LogStore / DynamoDB lock, delta-io/delta#1830; Iceberg's Hadoop catalog on object stores,
    apache/iceberg#970), or a writer that committed an overwrite from a stale snapshot
    (delta-rs#3622, #1254). Retries reported in ``num_retries`` are healthy and not judged.
    Remedy: use a catalog or LogStore with atomic commits (S3DynamoDBLogStore, a REST/Glue/JDBC
    catalog); re-run the lost write or the overwrite; for a missing version, restore the commit
    file from the storage's versioning before any writer checkpoints past it.
    """

    code = "CS204"
    name = "table-lost-commit"
    severity = "critical"

    @property
    def sql(self) -> str:
        return _SQL.format(files=TABLE_FILES.strip())

    def summary(self, row: dict) -> str:
        how = row["how"]
        if how == "gap":
            return f"version {row['versions'][0]} is missing from the log of {row['location']}: {row['reason']}"
        if how == "written twice":
            return f"{row['versions'][0]} of {row['location']} was written twice ({row['reason']})"
        n = len(row["paths"])
        return (f"full overwrite at version {row['versions'][1]} left {n} file{'s' if n != 1 else ''} live in {where(row)} that "
                f"version {row['versions'][0]} added (a concurrent commit its stale snapshot never saw): "
                f"{', '.join(p.rsplit('/', 1)[-1] for p in row['paths'][:5])}")

    def detail(self, row: dict) -> dict:
        return {"how": row["how"], "versions": row["versions"], "paths": row["paths"]}
