-- Every event that touched a partition, per partition in time order, with actor and file:line
-- (a Spark attempt by its one label: app/stage/task, attempt, TID and host; a listed file by the
-- attempt that wrote it).
SELECT coalesce(t.table_name, t.location) AS "table", t.partition_spec, t.ts, t.kind,
       coalesce(f.label, l.label, t.actor) AS actor, t.path, t.source || coalesce(':' || t.line_no, '') AS evidence
FROM timeline t
LEFT JOIN events e ON e.event_id = t.event_id
LEFT JOIN attempt_labels l ON l.app_id IS NOT DISTINCT FROM e.app_id AND l.attempt_id = t.actor
LEFT JOIN (  -- a listed file drawn as the one Spark attempt that wrote it
    SELECT fa.event_id, al.label
    FROM file_attempts fa JOIN spark_task_attempts a ON a.event_id = fa.attempt_event
    JOIN attempt_labels al ON al.app_id = a.app_id AND al.attempt_id = a.label
    WHERE fa.candidates = 1 AND fa.kind = 'spark_attempt'
) f ON f.event_id = t.event_id
ORDER BY t.location, t.partition_spec, t.ts NULLS LAST, t.source, t.line_no;
