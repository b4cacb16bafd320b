-- loading_steps of 0005, with the metastore check before an add or alter as a step of its own:
-- Hive.loadPartition asks get_partition[_with_auth] on its metastore connection (one handler
-- thread each), then adds what it did not find; the audit's add names only the table, so the
-- parser gives it the check's values and time (detail checked_at). Two connections that both
-- checked before either added raced, though their adds are apart: the check starts the window.
CREATE OR REPLACE VIEW loading_steps AS
WITH queries AS (
    SELECT source_id, thread, ts, query_id FROM events
    WHERE kind = 'query_start' AND query_id IS NOT NULL AND thread IS NOT NULL AND ts IS NOT NULL
),
steps AS MATERIALIZED (
    SELECT e.event_id, e.ts, e.kind, e.source_id, e.thread, e.query_id, e.app_id, e.part_table,
           e.part_location, e.part_spec, e.detail->>'checked_at' AS checked_at
    FROM partition_events e
    WHERE e.kind IN ('dir_create', 'partition_add', 'partition_alter', 'partition_exists', 'load', 'delete')
),
with_checks AS (
    SELECT event_id, ts, kind, source_id, thread, query_id, app_id, part_table, part_location, part_spec FROM steps
    UNION ALL
    SELECT event_id, CAST(checked_at AS TIMESTAMP) AS ts, 'partition_check' AS kind, source_id, thread, query_id,
           app_id, part_table, part_location, part_spec
    FROM steps WHERE checked_at IS NOT NULL
)
SELECT e.event_id, e.ts, e.kind, e.part_table, e.part_location, e.part_spec,
       coalesce(e.part_location, e.part_table) AS pkey,
       coalesce(e.query_id, q.query_id, e.thread, e.app_id) AS writer
FROM with_checks e
ASOF LEFT JOIN queries q ON q.source_id = e.source_id AND q.thread = e.thread AND e.ts >= q.ts
WHERE e.ts IS NOT NULL AND e.part_spec IS NOT NULL
  AND coalesce(e.query_id, e.thread, e.app_id) IS NOT NULL
  AND coalesce(e.part_location, e.part_table) IS NOT NULL;
