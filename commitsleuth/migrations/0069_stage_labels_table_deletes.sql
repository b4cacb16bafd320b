-- attempt_labels of 0060, one label per TID and stage attempt: a TID names one attempt of one run
-- of an application, and every name of it says its stage attempt ('… in stage 1.1 (TID 17)':
-- the event log's, a Spark log's, a caller context's). Two runs under one application id (YARN
-- restarting the driver: the event logs <app>_1 and <app>_2, the caller contexts'
-- SPARK_TASK_<app>_<appAttempt>_…) count their TIDs from 0 again, so one TID can name attempts of
-- two stage attempts: each keeps its own task index and host.
CREATE OR REPLACE VIEW attempt_labels AS
WITH named AS (
    SELECT app_id, attempt_id, kind, stage_id, stage_attempt, attempt_no, host,
           coalesce(TRY_CAST(regexp_extract(attempt_id, '^task (\d+)\.\d+ in stage', 1) AS INTEGER),
                    CASE WHEN task_id LIKE '%.%' THEN TRY_CAST(split_part(task_id, '.', 2) AS INTEGER) END) AS idx,
           coalesce(TRY_CAST(regexp_extract(attempt_id, '\(TID (\d+)\)', 1) AS BIGINT),
                    TRY_CAST(regexp_extract(task_id, '^TID (\d+)$', 1) AS BIGINT)) AS tid,
           -- the TID and the stage attempt its name states ('… in stage 1.1 (TID 17)')
           regexp_extract(attempt_id, ' in stage (\d+\.\d+) \(TID (\d+)\)', ['stage', 'tid']) AS tid_key
    FROM events
    WHERE attempt_id LIKE 'task %' AND attempt_id LIKE '%(TID %'
),
per_tid AS (
    SELECT app_id, tid_key, any_value(tid) AS tid,
           arg_max(stage_id, stage_id IS NOT NULL) AS stage_id,
           arg_max(stage_attempt, stage_attempt IS NOT NULL) AS stage_attempt,
           arg_max(idx, idx IS NOT NULL) AS idx,
           arg_max(attempt_no, attempt_no IS NOT NULL) AS attempt_no,
           -- where it ran: its scheduler's word (start, end) before a storage record's client
           arg_max(host, (host IS NOT NULL)::INTEGER * 2 + (kind IN ('attempt_start', 'attempt_end'))::INTEGER) AS host
    FROM named GROUP BY app_id, tid_key
)
SELECT DISTINCT n.app_id, n.attempt_id,
       spark_attempt_label(p.app_id, p.stage_id, p.stage_attempt, p.idx, p.attempt_no, p.tid, p.host) AS label
FROM named n JOIN per_tid p ON p.app_id IS NOT DISTINCT FROM n.app_id AND p.tid_key = n.tid_key;


-- fate_keys of 0040 and file_fates_at of 0063, with a table directory's delete: an HDFS audit
-- log's `delete src=/warehouse/sales.db/orders` (hdfs dfs -rm -r, DROP TABLE without a metastore
-- record) or a trash move of it names the table's directory as a file ('orders') of the
-- database's directory, so neither the removal's key nor its join reached the table's files:
-- its partitions' data was deleted and no finding said so. A delete of a path that is itself a
-- location of files now removes every file of that location.
CREATE OR REPLACE MACRO fate_keys() AS TABLE
WITH removed AS (
    SELECT DISTINCT location, coalesce(partition_spec, '*') AS spec FROM events
    WHERE kind IN ('delete', 'dedup_remove') AND location IS NOT NULL
    UNION
    -- a delete of a path that is itself a location the events name: a table's directory (keys
    -- only narrow: file_fates_at's join decides what such a delete removes)
    SELECT d.dir, '*' FROM (
        SELECT location || '/' || file_name AS dir FROM events
        WHERE kind = 'delete' AND location IS NOT NULL AND file_name IS NOT NULL) d
    SEMI JOIN (SELECT DISTINCT location FROM events WHERE location IS NOT NULL) l ON l.location = d.dir
)
SELECT list(DISTINCT k) AS keys FROM (
    SELECT location || '|' || spec AS k FROM removed
    UNION ALL
    SELECT a.alias || '|' || r.spec FROM removed r JOIN location_aliases a ON a.location = r.location
    UNION ALL
    SELECT a.location || '|' || r.spec FROM removed r JOIN location_aliases a ON a.alias = r.location);

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
      AND NOT (e.file_name LIKE '\_%' ESCAPE '\' OR e.file_name LIKE '.%')  -- markers and hidden files hold no rows
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
