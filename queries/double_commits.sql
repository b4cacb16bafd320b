-- Tasks whose output was published into one partition by more than one attempt, with the files.
SELECT location, partition_spec, file_task AS task,
       list(DISTINCT attempt_id ORDER BY attempt_id) AS attempts,
       list(DISTINCT file_name ORDER BY file_name) AS files
FROM events
WHERE kind = 'rename' AND file_task IS NOT NULL
  AND (location, partition_spec, file_name) NOT IN (
      SELECT (location, partition_spec, file_name) FROM events WHERE kind = 'dedup_remove')
GROUP BY location, partition_spec, file_task
HAVING count(DISTINCT coalesce(file_attempt, -1)) > 1
ORDER BY location, partition_spec, task;
