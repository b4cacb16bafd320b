-- A YARN restart's two runs (migration 0074) in the views that name Spark task attempts. Run 2
-- counts its TIDs from 0 again, so both runs have a "task 3.0 in stage 0.0 (TID 3)": keyed by
-- application and name (or TID) alone, spark_task_attempts kept one of the two, file_attempts
-- tied run 2's file to run 1's attempt of that TID, and attempt_labels gave both one label with
-- either run's task index and host. Each view now keys a Spark attempt on its run as the
-- attempts view of 0074 does: the run only where an application was seen in several runs, the
-- run its record states (a caller context) or its source holds (an event log, a live capture);
-- a record that names no run (a driver log) stays its own, merged into neither.

-- multi_run_apps: the applications whose records name more than one run (0074's app_runs).
CREATE OR REPLACE VIEW multi_run_apps AS
SELECT app_id FROM (
    SELECT app_id, spark_run(detail->>'caller_context', app_id) AS run FROM events
    WHERE attempt_id IS NOT NULL AND task_id LIKE 'TID %'
    UNION ALL
    SELECT app_id, run FROM source_runs)
WHERE run IS NOT NULL
GROUP BY app_id HAVING count(DISTINCT run) > 1;

-- spark_task_attempts of 0040, one row per (app_id, run, stage_id, stage_attempt, attempt_id):
-- `run` is the run its source holds, of an application seen in several runs (else NULL).
CREATE OR REPLACE VIEW spark_task_attempts AS
WITH ran AS (
    SELECT e.*, CASE WHEN e.app_id IN (SELECT app_id FROM multi_run_apps) THEN s.run END AS run
    FROM events e LEFT JOIN source_runs s ON s.source_id = e.source_id AND s.app_id = e.app_id
    WHERE e.kind IN ('attempt_end', 'attempt_start')
)
SELECT a.event_id, a.app_id, sj.job_id, sj.execution_id,
       x.write_command, x.write_location, x.write_table, x.write_partition, x.write_format, x.write_mode,
       a.stage_id, a.stage_attempt, TRY_CAST(split_part(a.task_id, '.', 2) AS INTEGER) AS task_index,
       a.attempt_no, TRY_CAST(a.detail->>'tid' AS BIGINT) AS tid, a.executor_id, a.host,
       a.speculative, CASE WHEN a.kind = 'attempt_end' THEN a.status ELSE 'no end seen' END AS status,
       a.detail->>'reason' AS end_reason,
       coalesce(epoch_ms(TRY_CAST(a.detail->>'launch_time' AS BIGINT)), a.ts) AS launched,
       CASE WHEN a.kind = 'attempt_end' THEN a.ts END AS finished, a.attempt_id AS label, a.run
FROM ran a
LEFT JOIN spark_stage_jobs sj ON sj.app_id = a.app_id AND sj.stage_id = a.stage_id
LEFT JOIN spark_executions x ON x.app_id = a.app_id AND x.execution_id = sj.execution_id
WHERE a.kind IN ('attempt_end', 'attempt_start') AND a.stage_id IS NOT NULL AND a.app_id IS NOT NULL
  AND a.task_id LIKE '%.%'
  AND a.event_id IN (SELECT coalesce(min(event_id) FILTER (WHERE kind = 'attempt_end'), min(event_id)) FROM ran
                     WHERE kind IN ('attempt_end', 'attempt_start') AND stage_id IS NOT NULL AND app_id IS NOT NULL
                       AND task_id LIKE '%.%'
                     GROUP BY app_id, run, stage_id, stage_attempt, attempt_id);

-- file_attempts of 0040, a caller context's tie within its run: the attempt of the TID the
-- context names in the run it names (SPARK_TASK_<app>_<run>_…), not the other run's of that TID.
CREATE OR REPLACE VIEW file_attempts AS
WITH files AS (
    SELECT event_id, ts, app_id, query_id, location, partition_spec, file_name, file_task,
           file_attempt, coalesce(target_path, path) AS p, write_uuid, stage_id, stage_attempt, task_id,
           spark_run(detail->>'caller_context', app_id) AS run
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

-- attempt_labels of 0069, one label per TID, stage attempt and run: of an application seen in
-- several runs, a name's run is the one its record states (a caller context) or its source holds
-- (an event log, a live capture), and the label names the run as Spark does, <app>_<run>/… (as
-- CS101's storage arm does); a name no record gives a run keeps the application's label of its
-- own. A name both runs use has a row per run (`run`): a join on the name alone cannot tell them.
CREATE OR REPLACE VIEW attempt_labels AS
WITH named AS (
    SELECT app_id, attempt_id, kind, stage_id, stage_attempt, attempt_no, host, source_id,
           spark_run(detail->>'caller_context', app_id) AS said_run,
           coalesce(TRY_CAST(regexp_extract(attempt_id, '^task (\d+)\.\d+ in stage', 1) AS INTEGER),
                    CASE WHEN task_id LIKE '%.%' THEN TRY_CAST(split_part(task_id, '.', 2) AS INTEGER) END) AS idx,
           coalesce(TRY_CAST(regexp_extract(attempt_id, '\(TID (\d+)\)', 1) AS BIGINT),
                    TRY_CAST(regexp_extract(task_id, '^TID (\d+)$', 1) AS BIGINT)) AS tid,
           -- the TID and the stage attempt its name states ('… in stage 1.1 (TID 17)')
           regexp_extract(attempt_id, ' in stage (\d+\.\d+) \(TID (\d+)\)', ['stage', 'tid']) AS tid_key
    FROM events
    WHERE attempt_id LIKE 'task %' AND attempt_id LIKE '%(TID %'
),
ran AS (
    SELECT n.* EXCLUDE (said_run, source_id),
           CASE WHEN n.app_id IN (SELECT app_id FROM multi_run_apps) THEN coalesce(n.said_run, s.run) END AS run
    FROM named n LEFT JOIN source_runs s ON s.source_id = n.source_id AND s.app_id = n.app_id
),
per_tid AS (
    SELECT app_id, run, tid_key, any_value(tid) AS tid,
           arg_max(stage_id, stage_id IS NOT NULL) AS stage_id,
           arg_max(stage_attempt, stage_attempt IS NOT NULL) AS stage_attempt,
           arg_max(idx, idx IS NOT NULL) AS idx,
           arg_max(attempt_no, attempt_no IS NOT NULL) AS attempt_no,
           -- where it ran: its scheduler's word (start, end) before a storage record's client
           arg_max(host, (host IS NOT NULL)::INTEGER * 2 + (kind IN ('attempt_start', 'attempt_end'))::INTEGER) AS host
    FROM ran GROUP BY app_id, run, tid_key
)
SELECT DISTINCT n.app_id, n.attempt_id,
       spark_attempt_label(coalesce(p.app_id || '_' || p.run, p.app_id), p.stage_id, p.stage_attempt, p.idx,
                           p.attempt_no, p.tid, p.host) AS label,
       n.run
FROM ran n JOIN per_tid p
  ON p.app_id IS NOT DISTINCT FROM n.app_id AND p.tid_key = n.tid_key AND p.run IS NOT DISTINCT FROM n.run;
