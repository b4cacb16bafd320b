-- Files tied to the task attempt that wrote them, and by which rule: a Hive-style NNNNNN_A name,
-- a part-NNNNN-<writeJobUUID> name (through the UUID's SQL execution: a live listing of that
-- write, or a time window, 'inferred'), a .spark-staging-<uuid> dir, a Hadoop attempt dir
-- _temporary/<n>/_temporary/attempt_…, a storage caller context; `candidates` > 1 when several
-- attempts could have written the file.
-- A Spark attempt by its one label (app/stage/task, attempt, TID and host).
SELECT f.event_id, coalesce(e.target_path, e.path) AS path, e.ts AS modified, f.rule, f.how,
       f.kind, coalesce(l.label, f.label) AS attempt, f.candidates
FROM file_attempts f JOIN events e ON e.event_id = f.event_id
LEFT JOIN spark_task_attempts a ON f.kind = 'spark_attempt' AND a.event_id = f.attempt_event
LEFT JOIN event_labels l ON l.event_id = a.event_id  -- its label in its run (a YARN restart's TIDs repeat)
ORDER BY path, attempt;
