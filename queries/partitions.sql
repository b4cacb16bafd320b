-- Every partition the events name, with the table name and location met on one key: how many
-- events, writers and sources touched it, and when. Start here to pick a timeline.
SELECT part_table AS "table", part_location AS location, part_spec AS partition_spec,
       count(*) AS events, count(DISTINCT actor) AS actors, count(DISTINCT source_id) AS sources,
       min(ts) AS first_seen, max(ts) AS last_seen
FROM partition_events
WHERE part_spec IS NOT NULL
GROUP BY ALL
ORDER BY "table", location, partition_spec;
