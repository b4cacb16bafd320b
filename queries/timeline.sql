-- Every event that touched a partition, per partition in time order, with actor and file:line.
SELECT coalesce(table_name, location) AS "table", partition_spec, ts, kind, actor, path,
       source || coalesce(':' || line_no, '') AS evidence
FROM timeline
ORDER BY location, partition_spec, ts NULLS LAST, source, line_no;
