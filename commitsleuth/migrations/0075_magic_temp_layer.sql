-- partition_events of 0013, its temp layer with the S3A magic committer's: an attempt writes
-- <dest>/__magic/job-<uuid>/tasks/<attempt>/__base/<relative path> (Hadoop 3.3.5+:
-- <dest>/__magic_job-<uuid>/…), a pending multipart upload of <dest>/<relative path> that only
-- the job's commit completes; the .pending and .pendingset files beside it are the commit's own
-- records. Nothing under __magic is published output. The pattern is the detectors' TEMP_LAYER
-- (forensics/detectors/base.py; tests/test_temp_layer.py holds the two to one another).
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
                 '/(_temporary|__magic(?:_job-[^/]*)?|\.spark-staging-[^/]*|\.hive-staging[^/]*|_task_tmp\.[^/]*|_tmp\.[^/]*|-ext-[0-9]+[^/]*)(/|$)')
       END
           AS is_temp
FROM keyed k
LEFT JOIN location_aliases al ON al.alias = k.raw_location
LEFT JOIN partition_values pv
  ON k.partition_spec LIKE '[%' AND pv.part_table = k.part_table AND pv.vals = k.partition_spec;
