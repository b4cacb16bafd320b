-- Tasks that ran a speculative attempt, every attempt of them with how it ended (status, kill
-- reason, bytes written): a killed copy 'another attempt succeeded' is healthy, two successes are not.
-- A Spark attempt by its one label (app/stage/task, attempt, TID and host).
WITH speculated AS (
    SELECT DISTINCT app_id, task_id FROM events
    WHERE task_id IS NOT NULL AND (speculative OR kind = 'speculate')
)
SELECT e.app_id, e.task_id, coalesce(l.label, e.attempt_id) AS attempt_id, e.speculative, e.status,
       e.detail->>'kill_reason' AS kill_reason, e.size AS bytes_written, e.ts AS ended
FROM events e
JOIN speculated s ON s.task_id = e.task_id AND s.app_id IS NOT DISTINCT FROM e.app_id
LEFT JOIN event_labels l ON l.event_id = e.event_id  -- its label in its run (a YARN restart's TIDs repeat)
WHERE e.kind = 'attempt_end'
ORDER BY e.app_id, e.task_id, attempt_id;
