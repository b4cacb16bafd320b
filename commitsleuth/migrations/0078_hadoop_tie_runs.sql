-- Round 10: a YARN restart's runs (0074, 0077) in the file ties of a Hadoop attempt directory.
-- Spark's HadoopMapReduceCommitProtocol names a task's attempt directory
-- _temporary/<appAttempt>/_temporary/attempt_<jobTracker>_<stage>_m_<index>_<TID>/: the first
-- number is FileOutputCommitter's application attempt (getJobAttemptPath; mapreduce.job.application.attempt.id,
-- which Spark never sets: 0 in every run), the rest names stage, index and TID, which run 2 counts
-- from 0 again. Tied on those alone, run 2's file had run 1's attempt of that TID as a second
-- candidate. The tie now keeps to the file's run where it is known: the run its record's caller
-- context states (SPARK_TASK_<app>_<run>_…) or, for a record naming none (a live capture's
-- listing), the run its source holds (source_runs of 0074).

-- file_attempts of 0077 (of 0040): a file's run from its source too, and the Hadoop attempt
-- directory's tie within it.
CREATE OR REPLACE VIEW file_attempts AS
WITH file_records AS (
    SELECT event_id, ts, app_id, query_id, location, partition_spec, file_name, file_task,
           file_attempt, coalesce(target_path, path) AS p, write_uuid, stage_id, stage_attempt, task_id,
           source_id, spark_run(detail->>'caller_context', app_id) AS said_run
    FROM events
    WHERE kind IN ('file', 'file_create', 'rename') AND coalesce(target_path, path) IS NOT NULL
      AND (attempt_id IS NULL OR task_id LIKE 'TID %')
),
-- a file's run: the one its record states (a caller context), else the one its source holds (a
-- live capture's listing of the files its application wrote); a source holding two runs (never
-- written so) gives its files a row per run, each tied in its run: two candidates, as with none
files AS (
    SELECT f.* EXCLUDE (said_run, source_id), coalesce(f.said_run, s.run) AS run
    FROM file_records f LEFT JOIN source_runs s ON s.source_id = f.source_id AND s.app_id = f.app_id
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
    -- a Hive-style name whose attempt has no end seen (killed after its speculative copy won):
    -- it was running from its launch on, when no attempt with an end holds the file's time
    SELECT f.event_id, f.file_name, f.partition_spec, 'hive_name', 'named', a.event_id, 'spark_attempt', a.label
    FROM files f JOIN spark_task_attempts a
      ON a.app_id = f.app_id AND a.attempt_no = f.file_attempt
     AND a.task_index = TRY_CAST(f.file_task AS INTEGER)
     AND a.finished IS NULL AND f.ts >= date_trunc('second', a.launched)
    WHERE f.file_attempt IS NOT NULL AND f.write_uuid IS NULL AND f.app_id IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM spark_task_attempts b
                      WHERE b.app_id = f.app_id AND b.attempt_no = f.file_attempt
                        AND b.task_index = TRY_CAST(f.file_task AS INTEGER)
                        AND f.ts BETWEEN date_trunc('second', b.launched) AND b.finished + INTERVAL 1 SECOND)
    QUALIFY a.launched = max(a.launched) OVER (PARTITION BY f.event_id)
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
     AND coalesce(a.run = h.run, TRUE)  -- the path names stage, index and TID, not the run
    WHERE h.hid.id <> ''
    QUALIFY a.tid = TRY_CAST(h.hid.n AS BIGINT) OR count(*) FILTER (WHERE a.tid = TRY_CAST(h.hid.n AS BIGINT))
                                               OVER (PARTITION BY h.event_id) = 0
    UNION ALL
    SELECT f.event_id, f.file_name, f.partition_spec, 'caller_context', 'named', a.event_id, 'spark_attempt', a.label
    FROM files f JOIN spark_task_attempts a
      ON a.app_id = f.app_id AND a.stage_id = f.stage_id AND a.stage_attempt IS NOT DISTINCT FROM f.stage_attempt
     AND 'TID ' || a.tid = f.task_id AND coalesce(a.run = f.run, TRUE)  -- an attempt of no known run: either
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

-- attempt_event_runs: the run of each record naming an attempt of an application seen in several
-- runs (a YARN restart): the one its record states (a caller context), else the one its source
-- holds (an event log, a live capture); NULL for a record naming neither (a driver log). As 0077
-- keys attempt_labels and spark_task_attempts; an application of one run has no rows.
CREATE OR REPLACE VIEW attempt_event_runs AS
SELECT e.event_id, coalesce(spark_run(e.detail->>'caller_context', e.app_id), s.run) AS run
FROM events e LEFT JOIN source_runs s ON s.source_id = e.source_id AND s.app_id = e.app_id
WHERE e.attempt_id IS NOT NULL AND e.app_id IN (SELECT app_id FROM multi_run_apps);

-- event_labels: each event naming a Spark attempt ('task 1.0 in stage 1.0 (TID 5)', a caller
-- context's 'task attempt 0 in stage 1.0 (TID 5)') with the label of that attempt in the event's
-- own run (attempt_event_runs). attempt_labels (0077) has a row per run of a name two runs of one
-- application used (a YARN restart counts TIDs from 0 again): a join on the name alone gave an
-- event both runs' labels, a row each.
CREATE OR REPLACE VIEW event_labels AS
SELECT e.event_id, e.attempt_id, r.run, l.label
FROM events e LEFT JOIN attempt_event_runs r ON r.event_id = e.event_id
JOIN attempt_labels l
  ON l.app_id IS NOT DISTINCT FROM e.app_id AND l.attempt_id = e.attempt_id AND l.run IS NOT DISTINCT FROM r.run
WHERE e.attempt_id LIKE 'task %' AND e.attempt_id LIKE '%(TID %';
