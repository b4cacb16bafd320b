-- A Spark application run twice under one id: YARN restarts a failed driver
-- (spark.yarn.maxAppAttempts) as a second application attempt, which counts its jobs, stages and
-- TIDs from 0 again. Spark names each run '<appId>_<attemptId>': the event log's file
-- (EventLoggingListener.nameForAppAndAttempt), the caller contexts' SPARK_TASK_<appId>_<attemptId>_…
-- and SPARK_DRIVER_<appId>_<attemptId>; the SparkListenerApplicationStart says "App Attempt ID".
-- So "application + TID" names one attempt of each run: keyed on it alone, attempts of two runs
-- merged into one identity, with the start, end and host of either.

-- spark_run(context, app): the application attempt a task's caller context states after the
-- application's id (SPARK_TASK_<app>_<n>_JId_…), else NULL (a client-mode application has no
-- attempt id, so its context goes straight on to _JId_).
CREATE OR REPLACE MACRO spark_run(context, app) AS
    CASE WHEN contains(context, 'SPARK_TASK_' || app || '_')
         THEN TRY_CAST(split_part(split_part(context, 'SPARK_TASK_' || app || '_', 2), '_', 1) AS INTEGER)::VARCHAR
    END;

-- source_runs: the run each source holds. An event log (a single file or a rolling directory,
-- one source) and a live capture hold one run of one application, which their application
-- start names ("App Attempt ID", absent outside YARN cluster mode).
CREATE OR REPLACE VIEW source_runs AS
SELECT DISTINCT source_id, app_id, detail->>'attempt' AS run
FROM events
WHERE kind = 'app_start' AND app_id IS NOT NULL AND detail->>'attempt' IS NOT NULL;

-- attempts of 0040, each Spark attempt keyed on its run too: the run its record states (a
-- caller context) or its source holds (an event log, a live capture); an application seen in
-- one run only keeps the key '<app> TID <n>' for every name of its TIDs (a driver or executor
-- log names no run). Of an application seen in several runs, an attempt whose run is known is
-- '<app>_<run> TID <n>' (Spark's own name of the run), one whose run no record says stays
-- '<app> TID <n>': never merged into either run. `run` is what its records say, never guessed
-- (a log of a run whose event log is missing would be taken for the one run seen).
CREATE OR REPLACE VIEW attempts AS
WITH named AS (
    SELECT event_id, kind, ts, source_id, app_id, job_id, stage_id, stage_attempt, task_id, attempt_id, attempt_no,
           speculative, executor_id, host, status, detail->>'reason' AS reason,
           spark_run(detail->>'caller_context', app_id) AS said_run,
           coalesce(TRY_CAST(detail->>'tid' AS BIGINT), TRY_CAST(regexp_extract(task_id, '^TID ([0-9]+)$', 1) AS BIGINT),
                    TRY_CAST(regexp_extract(attempt_id, '\(TID ([0-9]+)\)', 1) AS BIGINT)) AS tid,
           CASE WHEN kind IN ('attempt_start', 'attempt_end', 'attempt_state', 'speculate') THEN 'scheduler'
                WHEN detail->>'caller_context' IS NOT NULL THEN 'caller context'
                WHEN detail->'s3a_audit'->>'ta' IS NOT NULL THEN 'S3A referer ta='
                WHEN kind IN ('task_commit', 'commit_allowed', 'commit_denied') THEN 'commit'
                ELSE kind END AS seen_by
    FROM events WHERE attempt_id IS NOT NULL
),
ran AS (
    SELECT n.* EXCLUDE (said_run), coalesce(n.said_run, s.run) AS run
    FROM named n LEFT JOIN source_runs s ON s.source_id = n.source_id AND s.app_id = n.app_id
),
app_runs AS (  -- the runs of each application any record names
    SELECT app_id, count(DISTINCT run) AS runs FROM (
        SELECT app_id, run FROM ran WHERE run IS NOT NULL AND tid IS NOT NULL
        UNION ALL
        SELECT app_id, run FROM source_runs)
    GROUP BY app_id
),
keyed AS (
    SELECT r.*,
           CASE WHEN r.tid IS NULL OR r.app_id IS NULL THEN r.attempt_id
                WHEN a.runs > 1 AND r.run IS NOT NULL THEN r.app_id || '_' || r.run || ' TID ' || r.tid
                ELSE r.app_id || ' TID ' || r.tid END AS attempt_key
    FROM ran r LEFT JOIN app_runs a ON a.app_id = r.app_id
)
SELECT attempt_key, any_value(app_id) AS app_id, any_value(run) AS run, any_value(job_id) AS job_id,
       any_value(stage_id) AS stage_id, any_value(stage_attempt) AS stage_attempt, any_value(tid) AS tid,
       any_value(attempt_no) AS attempt_no,
       arg_min(attempt_id, (kind NOT IN ('attempt_start', 'attempt_end'))::INTEGER * 1000000000000 + event_id) AS label,
       list(DISTINCT attempt_id ORDER BY attempt_id) AS names,
       -- where it ran: its scheduler's word before a storage client's address
       arg_min(host, (host IS NULL)::INTEGER * 2 + (kind NOT IN ('attempt_start', 'attempt_end'))::INTEGER) AS host,
       any_value(executor_id) AS executor_id, bool_or(speculative) AS speculative,
       min(ts) FILTER (WHERE kind = 'attempt_start') AS started,
       min(ts) AS first_seen, max(ts) AS last_seen,
       max(ts) FILTER (WHERE kind = 'attempt_end') AS ended,
       coalesce(arg_max(status, ts) FILTER (WHERE kind = 'attempt_end'), 'no end seen') AS end_status,
       arg_max(reason, ts) FILTER (WHERE kind = 'attempt_end') AS end_reason,
       list(DISTINCT seen_by ORDER BY seen_by) AS sources, min(event_id) AS first_event, count(*) AS events
FROM keyed GROUP BY attempt_key;
