-- Tasks whose output was published more than once: two Hive attempt files of one task surviving
-- in one partition (renamed or listed), or two attempts of one task that both committed.
WITH files AS (
    SELECT location, partition_spec, file_task AS task, file_attempt, attempt_id, file_name
    FROM partition_events
    WHERE file_task IS NOT NULL AND write_uuid IS NULL AND location IS NOT NULL
      AND (kind = 'rename' OR (kind = 'file' AND file_attempt IS NOT NULL AND NOT is_temp))
      AND (location, partition_spec, file_name) NOT IN (
          SELECT (location, partition_spec, file_name) FROM events
          WHERE kind IN ('dedup_remove', 'delete') AND file_name IS NOT NULL)
),
commits AS (
    SELECT app_id, location,
           coalesce(task_id, regexp_replace(attempt_id, '^attempt_(.*)_[0-9]+$', 'task_\1')) AS task, attempt_id
    FROM events
    WHERE attempt_id IS NOT NULL
      AND (kind = 'task_commit' OR (kind = 'attempt_end' AND status = 'success' AND size > 0))
)
SELECT location, partition_spec, task,
       list(DISTINCT attempt_id ORDER BY attempt_id) AS attempts,
       list(DISTINCT file_name ORDER BY file_name) AS files
FROM files
GROUP BY location, partition_spec, task
HAVING count(DISTINCT coalesce(file_attempt, -1)) > 1 OR count(DISTINCT attempt_id) > 1
UNION ALL
SELECT any_value(location), NULL, task, list(DISTINCT attempt_id ORDER BY attempt_id), NULL
FROM commits
GROUP BY app_id, task
HAVING count(DISTINCT attempt_id) > 1
ORDER BY location, partition_spec, task;
