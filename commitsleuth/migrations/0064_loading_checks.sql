-- loading_steps of 0005, with the metastore check before an add or alter as a step of its own:
-- Hive.loadPartition asks get_partition[_with_auth] on its metastore connection (one handler
-- thread each), then adds what it did not find; the audit line of the add names only the table,
-- so the parser gives it the values and time of that check (detail checked_at). Two connections
-- that both checked before either added raced, though their adds are apart: the check starts the
-- window. The check is a row of the add (same event, same writer), added after the ASOF join,
-- which keeps one row per event.
CREATE OR REPLACE VIEW loading_steps AS
WITH queries AS (
    SELECT source_id, thread, ts, query_id FROM events
    WHERE kind = 'query_start' AND query_id IS NOT NULL AND thread IS NOT NULL AND ts IS NOT NULL
),
steps AS MATERIALIZED (
    SELECT e.event_id, e.ts, e.kind, e.part_table, e.part_location, e.part_spec,
           coalesce(e.part_location, e.part_table) AS pkey,
           coalesce(e.query_id, q.query_id, e.thread, e.app_id) AS writer,
           e.detail->>'checked_at' AS checked_at
    FROM partition_events e
    ASOF LEFT JOIN queries q ON q.source_id = e.source_id AND q.thread = e.thread AND e.ts >= q.ts
    WHERE e.kind IN ('dir_create', 'partition_add', 'partition_alter', 'partition_exists', 'load', 'delete')
      AND e.ts IS NOT NULL AND e.part_spec IS NOT NULL
      AND coalesce(e.query_id, e.thread, e.app_id) IS NOT NULL
      AND coalesce(e.part_location, e.part_table) IS NOT NULL
)
SELECT event_id, ts, kind, part_table, part_location, part_spec, pkey, writer FROM steps
UNION ALL
SELECT event_id, CAST(checked_at AS TIMESTAMP) AS ts, 'partition_check' AS kind, part_table, part_location,
       part_spec, pkey, writer
FROM steps WHERE checked_at IS NOT NULL;
