-- Every event that touched a partition, per partition in time order, with actor and file:line
-- (a Spark attempt by its one label: app/stage/task, attempt, TID and host; a listed file by the
-- attempt that wrote it).
SELECT coalesce(t.table_name, t.location) AS "table", t.partition_spec, t.ts, t.kind,
       coalesce(f.label, l.label, t.actor) AS actor, t.path, t.source || coalesce(':' || t.line_no, '') AS evidence
FROM timeline t
LEFT JOIN event_labels l ON l.event_id = t.event_id AND l.attempt_id = t.actor  -- in its run
LEFT JOIN (  -- a listed file drawn as the one Spark attempt that wrote it
    SELECT fa.event_id, al.label
    FROM file_attempts fa JOIN spark_task_attempts a ON a.event_id = fa.attempt_event
    JOIN event_labels al ON al.event_id = a.event_id
    WHERE fa.candidates = 1 AND fa.kind = 'spark_attempt'
) f ON f.event_id = t.event_id
ORDER BY t.location, t.partition_spec, t.ts NULLS LAST, t.source, t.line_no;
