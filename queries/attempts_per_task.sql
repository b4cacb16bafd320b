-- How many attempts each task had and which published output: retries and speculation at a glance
-- (a Spark attempt by its one label: app/stage/task, attempt, TID and host; its task by the
-- label's app/stage/task part).
SELECT coalesce(regexp_replace(l.label, ' attempt \d+ .*$', ''), e.task_id, e.location || '/' || coalesce(e.partition_spec, '') || ' task ' || e.file_task) AS task,
       count(DISTINCT coalesce(l.label, e.attempt_id)) AS attempts,  -- one attempt by any of its names: one
       list(DISTINCT coalesce(l.label, e.attempt_id) ORDER BY coalesce(l.label, e.attempt_id))
           FILTER (WHERE e.attempt_id IS NOT NULL) AS attempt_ids,
       count(*) FILTER (WHERE e.kind IN ('rename', 'task_commit')) AS publishes
FROM events e
LEFT JOIN event_labels l ON l.event_id = e.event_id  -- its label in its run (a YARN restart's TIDs repeat)
WHERE e.attempt_id IS NOT NULL OR e.file_task IS NOT NULL
GROUP BY 1
ORDER BY attempts DESC, task;
