-- Findings per detector and severity, most severe first: how much is wrong, and what kind.
SELECT code, name, severity, count(*) AS findings,
       count(DISTINCT coalesce(table_name, location) || '/' || coalesce(partition_spec, '')) AS partitions
FROM findings
GROUP BY code, name, severity
ORDER BY CASE severity WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2 ELSE 3 END, code;
