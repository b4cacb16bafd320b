-- Issue 12: Spark writes meet partitions. Join keys (job -> SQL execution, stage -> job,
-- task attempt -> stage), the rules that tie a file to the task attempt that wrote it, and what
-- each attempt wrote. Views only: they stay right as events arrive and the plain duckdb shell
-- sees them. forensics/file_attempts.py is their Python face (CS101, timelines, actors).

-- One row per SQL execution of a Spark application: its window and the write its plan names
-- (parsers/spark_plan.py). Live capture and an event log of one application give the same rows.
CREATE VIEW spark_executions AS
WITH starts AS (
    SELECT app_id, query_id, min(ts) AS started, any_value(location) AS location,
           any_value(table_name) AS table_name, any_value(partition_spec) AS partition_spec,
           any_value(detail->'write'->>'command') AS command, any_value(detail->'write'->>'format') AS format,
           any_value(detail->'write'->>'mode') AS mode
    FROM events WHERE kind = 'query_start' AND app_id IS NOT NULL AND query_id IS NOT NULL
    GROUP BY app_id, query_id
),
ends AS (
    SELECT app_id, query_id, max(ts) AS ended, any_value(status) AS status
    FROM events WHERE kind = 'query_end' AND app_id IS NOT NULL AND query_id IS NOT NULL
    GROUP BY app_id, query_id
)
SELECT s.app_id, s.query_id AS execution_id, s.started, e.ended, e.status,
       s.command AS write_command, s.location AS write_location, s.table_name AS write_table,
       s.partition_spec AS write_partition, s.format AS write_format, s.mode AS write_mode
FROM starts s LEFT JOIN ends e ON e.app_id = s.app_id AND e.query_id = s.query_id;

-- Each stage to the job that first submitted it (a later job that lists it skipped it), and the
-- job to its SQL execution (spark.sql.execution.id in the job's properties).
CREATE VIEW spark_stage_jobs AS
WITH listed AS (
    SELECT app_id, job_id, query_id, ts,
           unnest(TRY_CAST(detail->'stages' AS INTEGER[])) AS stage_id
    FROM events WHERE kind = 'job_start' AND app_id IS NOT NULL AND job_id IS NOT NULL
)
SELECT app_id, stage_id, arg_min(job_id, coalesce(ts, TIMESTAMP '9999-12-31')) AS job_id,
       arg_min(query_id, coalesce(ts, TIMESTAMP '9999-12-31')) AS execution_id
FROM listed WHERE stage_id IS NOT NULL
GROUP BY app_id, stage_id;

-- spark_task_attempts: one row per (app_id, stage_id, stage_attempt, attempt_id), the one of the lowest
-- event_id (live capture and the event log may both hold an attempt). A QUALIFY row_number()
-- carried every column of every attempt through DuckDB's grouping (0.6 s of 1.1 s per analyze at
-- 1M events); this groups the keys and event ids only and keeps the rows whose event_id won
-- (GROUP BY, like PARTITION BY, puts NULL keys in one group).
CREATE VIEW spark_task_attempts AS
SELECT a.event_id, a.app_id, sj.job_id, sj.execution_id,
       x.write_command, x.write_location, x.write_table, x.write_partition, x.write_format, x.write_mode,
       a.stage_id, a.stage_attempt, TRY_CAST(split_part(a.task_id, '.', 2) AS INTEGER) AS task_index,
       a.attempt_no, TRY_CAST(a.detail->>'tid' AS BIGINT) AS tid, a.executor_id, a.host,
       a.speculative, a.status, a.detail->>'reason' AS end_reason,
       coalesce(epoch_ms(TRY_CAST(a.detail->>'launch_time' AS BIGINT)), a.ts) AS launched,
       a.ts AS finished, a.attempt_id AS label
FROM events a
LEFT JOIN spark_stage_jobs sj ON sj.app_id = a.app_id AND sj.stage_id = a.stage_id
LEFT JOIN spark_executions x ON x.app_id = a.app_id AND x.execution_id = sj.execution_id
WHERE a.kind = 'attempt_end' AND a.stage_id IS NOT NULL AND a.app_id IS NOT NULL
  AND a.task_id LIKE '%.%'
  AND a.event_id IN (SELECT min(event_id) FROM events
                     WHERE kind = 'attempt_end' AND stage_id IS NOT NULL AND app_id IS NOT NULL
                       AND task_id LIKE '%.%'
                     GROUP BY app_id, stage_id, stage_attempt, attempt_id);

-- file_attempts: a substring test spares the .spark-staging regexp on the paths without a
-- staging dir (the regexp cannot match them; staging_uuid is '' there).
CREATE VIEW file_attempts AS
WITH files AS (
    SELECT event_id, ts, app_id, query_id, location, partition_spec, file_name, file_task,
           file_attempt, coalesce(target_path, path) AS p, write_uuid, stage_id, stage_attempt, task_id
    FROM events
    WHERE kind IN ('file', 'file_create', 'rename') AND coalesce(target_path, path) IS NOT NULL
      AND (attempt_id IS NULL OR task_id LIKE 'TID %')
),
staged AS (  -- the UUID of a .spark-staging dir must be the one in the file's own name
    SELECT *, CASE WHEN contains(p, '/.spark-staging-')  -- the cheap test spares the regexp on other paths
                   THEN regexp_extract(p, '/\.spark-staging-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/', 1)
                   ELSE '' END AS staging_uuid
    FROM files WHERE write_uuid IS NOT NULL AND file_task IS NOT NULL
),
uuids AS (
    SELECT * EXCLUDE (staging_uuid), CASE WHEN staging_uuid <> '' THEN 'spark_staging' ELSE 'spark_part' END AS rule
    FROM staged WHERE staging_uuid = '' OR staging_uuid = write_uuid
),
-- a write-job UUID to its SQL execution: a live listing of that write tagged files of the UUID
-- with the execution, else the executions writing the location (of the listing's application
-- when it names one); the attempts' own windows below hold the file's time (a tie through a
-- listing outranks one inferred from times)
listed AS (
    SELECT DISTINCT write_uuid, app_id, query_id AS execution_id
    FROM uuids WHERE query_id IS NOT NULL AND app_id IS NOT NULL
),
spans AS (
    SELECT DISTINCT write_uuid, location, app_id FROM uuids
),
windowed AS (
    SELECT DISTINCT s.write_uuid, x.app_id, x.execution_id
    FROM spans s JOIN spark_executions x
      ON x.write_location = s.location AND (s.app_id IS NULL OR s.app_id = x.app_id)
),
uuid_exec AS (
    SELECT write_uuid, app_id, execution_id, 'listing' AS how FROM listed
    UNION ALL
    SELECT write_uuid, app_id, execution_id, 'inferred' FROM windowed
),
-- the few executions found first, then their attempts, keyed by UUID and index in one value
-- (so the planner cannot join every file to every attempt of its index first)
exec_attempts AS (
    SELECT x.write_uuid || '/' || a.task_index AS uuid_index, x.how, a.event_id AS attempt_event, a.label,
           a.launched, a.finished
    FROM uuid_exec x JOIN spark_task_attempts a ON a.app_id = x.app_id AND a.execution_id = x.execution_id
),
hadoop AS (
    SELECT *, regexp_extract(p, '/_temporary/[0-9]+/_temporary/(attempt_[0-9]+_([0-9]+)_[mr]_([0-9]+)_([0-9]+))/',
                             ['id', 'job', 'task', 'n']) AS hid
    FROM files WHERE contains(p, '/_temporary/')
),
ties AS (
    SELECT f.event_id, f.file_name, f.partition_spec, 'hive_name' AS rule, 'named' AS how,
           a.event_id AS attempt_event, 'spark_attempt' AS kind, a.label
    FROM files f JOIN spark_task_attempts a
      ON a.app_id = f.app_id AND a.attempt_no = f.file_attempt
     AND a.task_index = TRY_CAST(f.file_task AS INTEGER)
     AND f.ts BETWEEN date_trunc('second', a.launched) AND a.finished + INTERVAL 1 SECOND
    WHERE f.file_attempt IS NOT NULL AND f.write_uuid IS NULL AND f.app_id IS NOT NULL
    QUALIFY a.launched = max(a.launched) OVER (PARTITION BY f.event_id)  -- a retried stage: the latest
    UNION ALL
    SELECT u.event_id, u.file_name, u.partition_spec, u.rule, a.how, a.attempt_event, 'spark_attempt', a.label
    FROM uuids u JOIN exec_attempts a
      ON a.uuid_index = u.write_uuid || '/' || TRY_CAST(u.file_task AS INTEGER)
     AND u.ts BETWEEN date_trunc('second', a.launched) AND a.finished + INTERVAL 1 SECOND
    UNION ALL
    SELECT h.event_id, h.file_name, h.partition_spec, 'hadoop_attempt', 'named', m.event_id, 'hadoop_attempt', m.attempt_id
    FROM hadoop h JOIN (SELECT attempt_id, min(event_id) AS event_id FROM events
                        WHERE attempt_id IN (SELECT hid.id FROM hadoop) GROUP BY attempt_id) m
      ON m.attempt_id = h.hid.id
    WHERE h.hid.id <> ''
    UNION ALL
    SELECT h.event_id, h.file_name, h.partition_spec, 'hadoop_attempt', 'named', a.event_id, 'spark_attempt', a.label
    FROM hadoop h JOIN spark_task_attempts a
      ON a.app_id = h.app_id AND a.stage_id = TRY_CAST(h.hid.job AS INTEGER)
     AND a.task_index = TRY_CAST(h.hid.task AS INTEGER)
     AND (a.tid = TRY_CAST(h.hid.n AS BIGINT) OR a.attempt_no = TRY_CAST(h.hid.n AS INTEGER))
    WHERE h.hid.id <> ''
    QUALIFY a.tid = TRY_CAST(h.hid.n AS BIGINT) OR count(*) FILTER (WHERE a.tid = TRY_CAST(h.hid.n AS BIGINT))
                                               OVER (PARTITION BY h.event_id) = 0
    UNION ALL
    SELECT f.event_id, f.file_name, f.partition_spec, 'caller_context', 'named', a.event_id, 'spark_attempt', a.label
    FROM files f JOIN spark_task_attempts a
      ON a.app_id = f.app_id AND a.stage_id = f.stage_id AND a.stage_attempt IS NOT DISTINCT FROM f.stage_attempt
     AND 'TID ' || a.tid = f.task_id
    WHERE f.task_id LIKE 'TID %'
),
-- one row per (file, attempt); a tie the name or path states outranks one through the UUID's
-- execution, which outranks one from time windows
ranked AS (
    SELECT *, CASE how WHEN 'named' THEN 0 WHEN 'listing' THEN 1 ELSE 2 END AS how_rank FROM ties
    QUALIFY row_number() OVER (PARTITION BY event_id, attempt_event ORDER BY how_rank, rule) = 1
),
best AS (
    SELECT * EXCLUDE (how_rank) FROM ranked
    QUALIFY how_rank = min(how_rank) OVER (PARTITION BY event_id)
)
SELECT b.*, count(*) OVER (PARTITION BY b.event_id) AS candidates FROM best b;

-- Every Spark task attempt with what it wrote: the partitions of the files tied to it (only
-- files no other attempt could have written), else of its write's static partition, else
-- 'partition not known'.
CREATE VIEW spark_attempts AS
WITH wrote AS (
    SELECT attempt_event, list(DISTINCT coalesce(partition_spec, '(unpartitioned)') ORDER BY coalesce(partition_spec, '(unpartitioned)')) AS parts,
           list(DISTINCT file_name ORDER BY file_name) FILTER (WHERE file_name IS NOT NULL) AS files,
           CASE WHEN bool_or(rule = 'caller_context') THEN 'storage' ELSE 'files' END AS source
    FROM file_attempts WHERE candidates = 1 AND kind = 'spark_attempt'
    GROUP BY attempt_event
)
SELECT a.*, w.files,
       coalesce(array_to_string(w.parts, ', '), a.write_partition, 'partition not known') AS partitions,
       CASE WHEN w.parts IS NOT NULL THEN w.source WHEN a.write_partition IS NOT NULL THEN 'plan' END AS partitions_from
FROM spark_task_attempts a LEFT JOIN wrote w ON w.attempt_event = a.event_id;

-- Who each finding names, as objects: {kind, label, …} (spark_attempt, hadoop_attempt,
-- hive_thread, query, storage_principal, file, job, …), in the order of `actors`.
ALTER TABLE findings ADD COLUMN actor_objects JSON;
