-- How many attempts each task had and which published output: retries and speculation at a glance
-- (a Spark attempt by its one label: app/stage/task, attempt, TID and host; its task by the
-- label's app/stage/task part).
SELECT coalesce(regexp_replace(l.label, ' attempt \d+ .*$', ''), e.task_id, e.location || '/' || coalesce(e.partition_spec, '') || ' task ' || e.file_task) AS task,
       count(DISTINCT e.attempt_id) AS attempts,
       list(DISTINCT coalesce(l.label, e.attempt_id) ORDER BY coalesce(l.label, e.attempt_id))
           FILTER (WHERE e.attempt_id IS NOT NULL) AS attempt_ids,
       count(*) FILTER (WHERE e.kind IN ('rename', 'task_commit')) AS publishes
FROM events e
LEFT JOIN attempt_labels l ON l.app_id IS NOT DISTINCT FROM e.app_id AND l.attempt_id = e.attempt_id
WHERE e.attempt_id IS NOT NULL OR e.file_task IS NOT NULL
GROUP BY 1
ORDER BY attempts DESC, task;
