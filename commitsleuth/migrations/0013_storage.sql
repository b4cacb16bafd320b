-- Storage records (HDFS audit, S3 access logs) meet every other source's partitions.
-- An HDFS audit log names paths without the namespace (/user/hive/warehouse/…), every other
-- log names them with it (hdfs://ns/user/hive/warehouse/…): a bare location is an alias of the
-- one namespaced location with the same path, when the events know one.
CREATE VIEW location_aliases AS
WITH locs AS (SELECT DISTINCT location FROM events WHERE location IS NOT NULL),
named AS (
    SELECT location, regexp_replace(location, '^[A-Za-z][A-Za-z0-9+.-]*://[^/]*', '') AS bare
    FROM locs WHERE location LIKE 'hdfs://%' OR location LIKE 'viewfs://%'  -- never an object store's
)
SELECT l.location AS alias, min(n.location) AS location
FROM locs l JOIN named n ON n.bare = l.location
GROUP BY l.location;

-- partition_events of 0005, its part_location passed through the aliases.
CREATE OR REPLACE VIEW partition_events AS
WITH loc_tables AS (
    SELECT location, min(table_name) AS table_name FROM table_locations GROUP BY location
),
keyed AS (
    SELECT e.*,
           coalesce(e.table_name, lt.table_name) AS part_table,
           coalesce(e.location, tl.location) AS raw_location,
           coalesce(CASE WHEN e.kind = 'load' THEN e.target_path ELSE coalesce(e.target_path, e.path) END, '')
               AS temp_probe
    FROM events e
    LEFT JOIN table_locations tl ON e.location IS NULL AND tl.table_name = e.table_name
    LEFT JOIN loc_tables lt ON e.table_name IS NULL AND lt.location = e.location
)
SELECT k.* EXCLUDE (temp_probe, raw_location),
       coalesce(al.location, k.raw_location) AS part_location,
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
LEFT JOIN location_aliases al ON al.alias = k.raw_location
LEFT JOIN partition_values pv
  ON k.partition_spec LIKE '[%' AND pv.part_table = k.part_table AND pv.vals = k.partition_spec;
