-- Forensics: where table names meet paths, each event's partition key and actor, and a timeline
-- built on them. Views only (no data): they stay right as events arrive, and the plain duckdb
-- shell sees them too.

-- The output location a table name stands for, learned from the events themselves: a line that
-- names both (a partition_add with its location, a load with its destination, a warehouse path
-- db.db/t), or one thread that names the table for a partition and acts on that partition's
-- directory (HiveServer2: 'add_partition' then 'Creating directory … dt=…').
CREATE VIEW table_locations AS
WITH pairs AS (
    SELECT table_name, location FROM events
    WHERE table_name IS NOT NULL AND location IS NOT NULL
    UNION ALL
    SELECT n.table_name, p.location
    FROM (SELECT DISTINCT thread, partition_spec, table_name FROM events
          WHERE table_name IS NOT NULL AND location IS NULL
            AND thread IS NOT NULL AND partition_spec IS NOT NULL) n
    JOIN (SELECT DISTINCT thread, partition_spec, location FROM events
          WHERE table_name IS NULL AND location IS NOT NULL
            AND thread IS NOT NULL AND partition_spec IS NOT NULL) p
      ON n.thread = p.thread AND n.partition_spec = p.partition_spec
)
SELECT table_name, arg_max(location, n) AS location
FROM (SELECT table_name, location, count(*) AS n FROM pairs GROUP BY ALL)
GROUP BY table_name;

-- The k=v spec of each (table, values) pair, so a metastore audit's values-only spec (t[v1,v2],
-- stored as '[v1,v2]') meets the spec paths give. Its own view so analyze can compute it once.
CREATE VIEW partition_values AS
WITH specs AS (
    SELECT DISTINCT coalesce(e.table_name, l.table_name) AS part_table, e.partition_spec
    FROM events e
    LEFT JOIN (SELECT location, min(table_name) AS table_name FROM table_locations GROUP BY location) l
      ON e.table_name IS NULL AND l.location = e.location
    WHERE e.partition_spec LIKE '%=%'
)
SELECT part_table, partition_spec,
       '[' || array_to_string(list_transform(string_split(partition_spec, '/'),
                                             lambda x: split_part(x, '=', 2)), ',') || ']' AS vals
FROM specs WHERE part_table IS NOT NULL;

-- Every event with its partition key (part_table, part_location, part_spec), its actor and
-- whether its path lies in a temp or staging layer.
CREATE VIEW partition_events AS
WITH loc_tables AS (
    SELECT location, min(table_name) AS table_name FROM table_locations GROUP BY location
),
keyed AS (
    SELECT e.*,
           coalesce(e.table_name, lt.table_name) AS part_table,
           coalesce(e.location, tl.location) AS part_location,
           coalesce(CASE WHEN e.kind = 'load' THEN e.target_path ELSE coalesce(e.target_path, e.path) END, '')
               AS temp_probe
    FROM events e
    LEFT JOIN table_locations tl ON e.location IS NULL AND tl.table_name = e.table_name
    LEFT JOIN loc_tables lt ON e.table_name IS NULL AND lt.location = e.location
)
SELECT k.* EXCLUDE (temp_probe),
       coalesce(pv.partition_spec, k.partition_spec) AS part_spec,
       coalesce(k.attempt_id, k.thread, k.query_id, k.app_id) AS actor,
       -- every temp layer name holds '/_', '/.' or '-ext-': the cheap test spares the regexp
       CASE WHEN NOT (contains(k.temp_probe, '/_') OR contains(k.temp_probe, '/.') OR contains(k.temp_probe, '-ext-'))
            THEN false
            ELSE regexp_matches(k.temp_probe,
                 '/(_temporary|\.spark-staging-[^/]*|\.hive-staging[^/]*|_task_tmp\.[^/]*|_tmp\.[^/]*|-ext-[0-9]+[^/]*)(/|$)')
       END
           AS is_temp
FROM keyed k
LEFT JOIN partition_values pv
  ON k.partition_spec LIKE '[%' AND pv.part_table = k.part_table AND pv.vals = k.partition_spec;

-- The loading steps on each partition and who took them. A writer is a query: named on the line,
-- or the last one the line's thread compiled in the same log (two Hive CLI sessions both log
-- from thread 'main'); else the thread or the application. Racing loaders and the
-- racing_writers query read this.
CREATE VIEW loading_steps AS
WITH queries AS (
    SELECT source_id, thread, ts, query_id FROM events
    WHERE kind = 'query_start' AND query_id IS NOT NULL AND thread IS NOT NULL AND ts IS NOT NULL
)
SELECT e.event_id, e.ts, e.kind, e.part_table, e.part_location, e.part_spec,
       coalesce(e.part_location, e.part_table) AS pkey,
       coalesce(e.query_id, q.query_id, e.thread, e.app_id) AS writer
FROM partition_events e
ASOF LEFT JOIN queries q ON q.source_id = e.source_id AND q.thread = e.thread AND e.ts >= q.ts
WHERE e.kind IN ('dir_create', 'partition_add', 'partition_alter', 'partition_exists', 'load', 'delete')
  AND e.ts IS NOT NULL AND e.part_spec IS NOT NULL
  AND coalesce(e.query_id, e.thread, e.app_id) IS NOT NULL
  AND coalesce(e.part_location, e.part_table) IS NOT NULL;

-- The timeline of 0001, now with table names and paths met: `timeline db.t dt=…` finds the
-- lines that only named a path, and a location finds the lines that only named the table.
CREATE OR REPLACE VIEW timeline AS
SELECT e.event_id, e.ts, e.kind, e.actor,
       coalesce(e.target_path, e.path) AS path, e.status,
       e.part_table AS table_name, e.part_location AS location, e.part_spec AS partition_spec,
       s.uri AS source, e.line_no, e.raw
FROM partition_events e LEFT JOIN sources s ON s.source_id = e.source_id
WHERE e.part_location IS NOT NULL OR e.part_table IS NOT NULL;
