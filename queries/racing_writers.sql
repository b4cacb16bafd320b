-- Writers (queries, else threads or applications) of each partition with their time windows; a writer
-- whose window overlaps another's on the same partition is racing, and its deletes are listed.
WITH steps AS (SELECT * FROM loading_steps),
windows AS (
    SELECT pkey, any_value(part_table) AS part_table, part_spec, writer,
           min(ts) AS first_step, max(ts) AS last_step, count(*) AS steps,
           count(*) FILTER (WHERE kind = 'delete') AS deletes
    FROM steps GROUP BY pkey, part_spec, writer
)
SELECT coalesce(a.part_table, a.pkey) AS "table", a.part_spec AS partition_spec, a.writer,
       a.first_step, a.last_step, a.steps, a.deletes,
       list(b.writer ORDER BY b.writer) FILTER (WHERE b.writer IS NOT NULL) AS racing_with
FROM windows a
LEFT JOIN windows b
  ON b.pkey = a.pkey AND b.part_spec = a.part_spec AND b.writer <> a.writer
 AND a.first_step <= b.last_step AND b.first_step <= a.last_step
GROUP BY ALL
ORDER BY count(b.writer) = 0, "table", partition_spec, a.first_step;
