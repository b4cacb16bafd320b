-- Tasks whose output was published more than once: two Hive attempt files of one task surviving
-- in one partition (renamed or listed), or two attempts of one task that both committed. Each
-- attempt by its one label (a Spark attempt: app/stage/task, attempt, TID and host; a listed
-- file by the attempt its name or path ties it to), a Spark task by its label's app/stage/task.
WITH spark_ties AS (  -- a listed file to the one Spark attempt that wrote it
    SELECT t.event_id, l.label
    FROM file_attempts t JOIN spark_task_attempts a ON a.event_id = t.attempt_event
    JOIN event_labels l ON l.event_id = a.event_id  -- its label in its run (a YARN restart's TIDs repeat)
    WHERE t.candidates = 1 AND t.kind = 'spark_attempt'
),
files AS (
    SELECT p.location, p.partition_spec, p.file_task AS task, p.file_attempt,
           coalesce(l.label, p.attempt_id, s.label) AS attempt_id, p.file_name,
           regexp_replace(s.label, ' attempt \d+ .*$', '') AS spark_task  -- app/stage/task of the label
    FROM partition_events p
    LEFT JOIN event_labels l ON l.event_id = p.event_id
    LEFT JOIN spark_ties s ON s.event_id = p.event_id
    WHERE p.file_task IS NOT NULL AND p.write_uuid IS NULL AND p.location IS NOT NULL
      AND (p.kind = 'rename' OR (p.kind = 'file' AND p.file_attempt IS NOT NULL AND NOT p.is_temp))
      AND (p.location, p.partition_spec, p.file_name) NOT IN (
          SELECT (location, partition_spec, file_name) FROM events
          WHERE kind IN ('dedup_remove', 'delete') AND file_name IS NOT NULL)
),
commits AS (
    SELECT e.app_id, e.location,
           coalesce(e.task_id, regexp_replace(e.attempt_id, '^attempt_(.*)_[0-9]+$', 'task_\1')) AS task,
           coalesce(l.label, e.attempt_id) AS attempt_id, regexp_replace(l.label, ' attempt \d+ .*$', '') AS spark_task,
           l.run  -- a YARN restart's runs each commit their own tasks
    FROM events e
    LEFT JOIN event_labels l ON l.event_id = e.event_id
    WHERE e.attempt_id IS NOT NULL
      AND (e.kind = 'task_commit' OR (e.kind = 'attempt_end' AND e.status = 'success' AND e.size > 0))
)
SELECT location, partition_spec, coalesce(min(spark_task), task) AS task,
       list(DISTINCT attempt_id ORDER BY attempt_id) FILTER (WHERE attempt_id IS NOT NULL) AS attempts,
       list(DISTINCT file_name ORDER BY file_name) AS files
FROM files
GROUP BY location, partition_spec, task
HAVING count(DISTINCT coalesce(file_attempt, -1)) > 1 OR count(DISTINCT attempt_id) > 1
UNION ALL
SELECT any_value(location), NULL, coalesce(min(spark_task), task), list(DISTINCT attempt_id ORDER BY attempt_id), NULL
FROM commits
GROUP BY app_id, run, task
HAVING count(DISTINCT attempt_id) > 1
ORDER BY location, partition_spec, task;
