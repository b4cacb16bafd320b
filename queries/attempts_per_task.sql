-- How many attempts each task had and which published output: retries and speculation at a glance.
SELECT coalesce(task_id, location || '/' || coalesce(partition_spec, '') || ' task ' || file_task) AS task,
       count(DISTINCT attempt_id) AS attempts,
       list(DISTINCT attempt_id ORDER BY attempt_id) AS attempt_ids,
       count(*) FILTER (WHERE kind IN ('rename', 'task_commit')) AS publishes
FROM events
WHERE attempt_id IS NOT NULL OR file_task IS NOT NULL
GROUP BY 1
ORDER BY attempts DESC, task;
