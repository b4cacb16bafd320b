-- Issue 32: one name per attempt. A Spark task attempt is named by its application, stage and
-- stage attempt, task index, attempt number, TID and host:
--   app-20261126165527-0000/stage 1.0/task 1 attempt 0 (TID 5) on 127.0.0.2
-- the parts a log does not give left out. forensics/attempt_labels.py words the same label in
-- Python (tests/test_attempt_labels.py holds the two to one another). MapReduce and Tez attempt
-- ids (attempt_…) are their own label.
CREATE MACRO spark_attempt_label(app, stage, stage_attempt, idx, attempt, tid, host) AS
    concat_ws('/', app,
              'stage ' || stage || '.' || coalesce(stage_attempt, 0),
              concat_ws(' ', 'task ' || idx, 'attempt ' || attempt, '(TID ' || tid || ')', 'on ' || host));

-- Every Spark attempt name the events carry (the event log's and a driver log's
-- "task 1.0 in stage 1.0 (TID 5)", a caller context's "task attempt 0 in stage 1.0 (TID 7)")
-- to its one label. A TID names one attempt of an application, so every name of it gets the
-- facts of all of them: the task index and host of its start or end most of all.
CREATE VIEW attempt_labels AS
WITH named AS (
    SELECT app_id, attempt_id, kind, stage_id, stage_attempt, attempt_no, host,
           coalesce(TRY_CAST(regexp_extract(attempt_id, '^task (\d+)\.\d+ in stage', 1) AS INTEGER),
                    CASE WHEN task_id LIKE '%.%' THEN TRY_CAST(split_part(task_id, '.', 2) AS INTEGER) END) AS idx,
           coalesce(TRY_CAST(regexp_extract(attempt_id, '\(TID (\d+)\)', 1) AS BIGINT),
                    TRY_CAST(regexp_extract(task_id, '^TID (\d+)$', 1) AS BIGINT)) AS tid
    FROM events
    WHERE attempt_id LIKE 'task %' AND attempt_id LIKE '%(TID %'
),
per_tid AS (
    SELECT app_id, tid,
           arg_max(stage_id, stage_id IS NOT NULL) AS stage_id,
           arg_max(stage_attempt, stage_attempt IS NOT NULL) AS stage_attempt,
           arg_max(idx, idx IS NOT NULL) AS idx,
           arg_max(attempt_no, attempt_no IS NOT NULL) AS attempt_no,
           -- where it ran: its scheduler's word (start, end) before a storage record's client
           arg_max(host, (host IS NOT NULL)::INTEGER * 2 + (kind IN ('attempt_start', 'attempt_end'))::INTEGER) AS host
    FROM named GROUP BY app_id, tid
)
SELECT DISTINCT n.app_id, n.attempt_id,
       spark_attempt_label(p.app_id, p.stage_id, p.stage_attempt, p.idx, p.attempt_no, p.tid, p.host) AS label
FROM named n JOIN per_tid p ON p.app_id IS NOT DISTINCT FROM n.app_id AND p.tid = n.tid;
