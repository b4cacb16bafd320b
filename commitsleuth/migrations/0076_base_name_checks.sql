-- A partition's plain subdirectory stays in its files' names since forensics/paths.py of round 8
-- (ds=19/sub/000005_0: file_name 'sub/000005_0'; HIVE_UNION_SUBDIR_1/…, list bucketing and ACID
-- delta_… directories alike), so a check of what a file is by how its name starts (a marker
-- '_SUCCESS', '_committed_…', a hidden '.part-0.crc') reads the name after the last '/'.
-- split_part, not a regex: a fifth of regexp_replace's time over every arriving file; its -1 (the
-- last part) means the same on DuckDB and Spark, and a name without '/' is itself.
CREATE OR REPLACE MACRO base_name(file_name) AS split_part(file_name, '/', -1);

-- file_fates_at of 0069 (of 0040 and 0063), its markers and hidden files judged by their base name.
CREATE OR REPLACE MACRO file_fates_at(keys) AS TABLE
WITH arrived AS MATERIALIZED (
    SELECT e.event_id, e.ts, e.kind, coalesce(e.target_path, e.path) AS path, e.part_table AS table_name,
           e.part_location AS location, e.part_spec AS partition_spec, e.file_name,
           CASE WHEN e.kind = 'file' THEN 'seen in a listing'
                WHEN e.kind = 'rename' AND contains(e.path, '/_temporary/') THEN 'commit of a task or job (rename out of _temporary)'
                WHEN e.kind = 'rename' AND contains(e.path, '/.spark-staging-') THEN 'commit of a job (rename out of .spark-staging)'
                WHEN e.kind = 'rename' AND regexp_matches(e.path, '/(\.hive-staging|_tmp\.|_task_tmp\.|-ext-[0-9])') THEN 'Hive move out of its staging directory'
                WHEN e.kind = 'rename' THEN 'rename into place'
                WHEN e.detail->>'cmd' = 'REST.COPY.OBJECT' THEN 'copy'
                WHEN e.detail->>'cmd' = 'REST.POST.UPLOAD' THEN 'multipart completion'
                ELSE 'direct create' END AS how,
           e.attempt_id, e.app_id, e.job_id, e.query_id, e.thread, e.host, e.actor,
           e.detail->>'user' AS user, e.detail->>'proxy' AS proxy, e.detail->>'ip' AS ip,
           e.detail->>'storage' AS storage
    FROM partition_events e
    WHERE e.kind IN ('file_create', 'rename', 'file') AND e.file_name IS NOT NULL AND NOT e.is_temp
      AND e.part_location IS NOT NULL AND e.ts IS NOT NULL
      -- markers and hidden files hold no rows, in a partition's subdirectory too (sub/_SUCCESS)
      AND NOT (base_name(e.file_name) LIKE '\_%' ESCAPE '\' OR base_name(e.file_name) LIKE '.%')
      AND coalesce(e.status, 'ok') <> 'failed'
      AND (keys IS NULL OR list_contains(keys, e.location || '|' || coalesce(e.partition_spec, ''))
           OR list_contains(keys, e.location || '|*'))
),
removals AS MATERIALIZED (
    SELECT r.event_id, r.ts, coalesce(t.dir, r.part_location) AS location,
           r.part_spec AS partition_spec, CASE WHEN t.dir IS NULL THEN r.file_name END AS file_name,
           CASE WHEN r.kind = 'dedup_remove' THEN 'dedup' WHEN r.detail->>'how' = 'trash' THEN 'trashed' ELSE 'deleted' END AS how,
           r.actor, list_filter([r.detail->>'user', r.actor, r.query_id, r.app_id, r.job_id], lambda x: x IS NOT NULL) AS principals
    FROM partition_events r
    -- a removal of a path that is itself the location of files (a table's directory deleted or
    -- trashed whole, which its record names as a file of the parent directory) removes every
    -- file there, as a partition directory's delete removes the partition's; not on an object
    -- store, where deleting a key removes no key under it
    LEFT JOIN (SELECT DISTINCT location AS dir FROM arrived) t
      ON r.file_name IS NOT NULL AND r.part_spec IS NULL AND t.dir = r.part_location || '/' || r.file_name
     AND coalesce(r.detail->>'storage', '') <> 's3'
    WHERE r.kind IN ('delete', 'dedup_remove') AND r.ts IS NOT NULL AND r.part_location IS NOT NULL AND NOT r.is_temp
      -- a directory marker's delete (an object store key ending in '/') removes no object under it
      AND NOT (r.file_name IS NULL AND coalesce(r.detail->>'storage', '') = 's3')
),
removed AS (
    SELECT a.event_id, arg_min({'event': r.event_id, 'ts': r.ts, 'how': r.how, 'by': r.actor, 'principals': r.principals}, r.ts) AS r
    -- the files of the few locations with a removal first (so no range join over every file)
    FROM (SELECT * FROM arrived SEMI JOIN (SELECT DISTINCT location FROM removals) USING (location)) a
    JOIN removals r
      ON r.location = a.location AND r.ts >= a.ts
     AND ((r.file_name = a.file_name AND r.partition_spec IS NOT DISTINCT FROM a.partition_spec)
          OR (r.file_name IS NULL AND (r.partition_spec = a.partition_spec OR r.partition_spec IS NULL)))
    GROUP BY a.event_id
),
rewritten AS (  -- the few paths written more than once (by their hashes: grouping paths costs more)
    SELECT hash(path) AS h FROM arrived GROUP BY h
    HAVING count(*) > 1 AND count(*) FILTER (WHERE kind <> 'file') > 0
),
overwritten AS (  -- the same path written again by another record (a listing only sees it)
    SELECT a.event_id, arg_min(b.event_id, b.ts) AS overwrite_event
    FROM (SELECT * FROM arrived WHERE hash(path) IN (SELECT h FROM rewritten)) a
    JOIN arrived b ON b.path = a.path AND b.ts > a.ts AND b.kind <> 'file'
    GROUP BY a.event_id
)
SELECT a.*, d.r.event AS removed_event, d.r.ts AS removed_at, d.r.how AS removed_how,
       d.r.by AS removed_by, d.r.principals AS removed_principals,
       o.overwrite_event, (d.r IS NULL AND o.overwrite_event IS NULL) AS live
FROM arrived a
LEFT JOIN removed d ON d.event_id = a.event_id
LEFT JOIN overwritten o ON o.event_id = a.event_id;
