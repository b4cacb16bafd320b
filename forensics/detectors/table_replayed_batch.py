"""CS205 table-replayed-batch."""

from __future__ import annotations

from commitsleuth.forensics.detectors.base import SqlDetector

# Idempotent writers stamp each commit: Delta's txn (appId, version), Iceberg's streaming
# summary (queryId, epochId). The same stamp on two completed commits is one batch written twice.
_SQL = """
WITH stamps AS (
    SELECT event_id, ts, location, table_name, app_id, detail->>'version' AS version,
           t->>'app_id' AS k1, t->>'version' AS k2, 'txn' AS how
    FROM (SELECT *, unnest(CAST(detail->'txn' AS JSON[])) AS t FROM events
          WHERE kind = 'table_commit' AND status = 'completed' AND (detail->'txn') IS NOT NULL)
    UNION ALL
    SELECT event_id, ts, location, table_name, app_id, detail->>'version',
           detail->'streaming'->>'query_id', detail->'streaming'->>'epoch_id', 'streaming'
    FROM events WHERE kind = 'table_commit' AND status = 'completed'
      AND (detail->'streaming'->>'query_id') IS NOT NULL
)
SELECT location, NULL AS partition_spec, any_value(table_name) AS table_name, min(ts) AS t0, max(ts) AS t1,
       list(version ORDER BY ts, event_id) AS versions, list(event_id ORDER BY ts, event_id) AS evidence,
       list_sort(list_distinct(coalesce(list(app_id) FILTER (WHERE app_id IS NOT NULL), []) || [k1])) AS actors, k1, k2, how
FROM stamps WHERE k1 IS NOT NULL AND k2 IS NOT NULL
GROUP BY location, how, k1, k2 HAVING count(DISTINCT event_id) > 1
ORDER BY location, t0
"""


class TableReplayedBatch(SqlDetector):
    """One batch of an idempotent writer committed twice to a table.

    Symptom: two versions of the table carry the same Delta ``txn`` (appId, version) or the
    same Iceberg streaming (queryId, epochId): the batch's rows are in the table twice.
    Cause: a streaming query restarted from a checkpoint older than its last commit, or two
    queries sharing one checkpoint, and a sink that did not check the stamp before committing
    (a hand-written foreachBatch, or a writer that ignores ``txnAppId``/``txnVersion``).
    Remedy: delete the second batch's rows (time travel to the version before it and
    ``RESTORE``, or delete by the batch's files); pass ``txnAppId``/``txnVersion`` (Delta) or let
    the Iceberg sink check ``spark.sql.streaming.epochId``, and never share a checkpoint.
    """

    code = "CS205"
    name = "table-replayed-batch"
    severity = "high"
    sql = _SQL

    def summary(self, row: dict) -> str:
        label = "txn (appId, version)" if row["how"] == "txn" else "streaming (queryId, epochId)"
        return (f"versions {' and '.join(str(v) for v in row['versions'])} of {row['location']} carry the same "
                f"{label} ({row['k1']}, {row['k2']}): one batch committed twice")

    def detail(self, row: dict) -> dict:
        return {"versions": row["versions"], "stamp": [row["k1"], row["k2"]], "how": row["how"]}
