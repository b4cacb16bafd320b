-- Issue 30: one fact model for partitions, files and attempts, built from every source
-- (docs/schema.md, "Fact model"). Views only: they stay right as events arrive, and the plain
-- duckdb shell sees them. Detectors read these facts, not one source's shape.

-- partition_values of 0005, and more: a values-only spec (the metastore audit's t[v1,v2], or a
-- Hive 3 add_partition whose values came from the get_partition… line before it) takes its key
-- names from the table's partition columns as any other source shows them (a path, a Hive log,
-- a listing), also when no source spells out that very partition with keys.
CREATE OR REPLACE VIEW partition_values AS
WITH specs AS (
    SELECT DISTINCT coalesce(e.table_name, l.table_name) AS part_table, e.partition_spec
    FROM events e
    LEFT JOIN (SELECT location, min(table_name) AS table_name FROM table_locations GROUP BY location) l
      ON e.table_name IS NULL AND l.location = e.location
    WHERE e.partition_spec LIKE '%=%'
),
known AS (
    SELECT part_table, partition_spec,
           '[' || array_to_string(list_transform(string_split(partition_spec, '/'),
                                                 lambda x: split_part(x, '=', 2)), ',') || ']' AS vals
    FROM specs WHERE part_table IS NOT NULL
),
columns_seen AS (  -- a table's partition columns, as its k=v specs name them (the most often seen)
    SELECT part_table, arg_max(cols, n) AS cols FROM (
        SELECT part_table, list_transform(string_split(partition_spec, '/'), lambda x: split_part(x, '=', 1)) AS cols,
               count(*) AS n
        FROM known GROUP BY ALL)
    GROUP BY part_table
),
bare AS (
    SELECT DISTINCT table_name AS part_table, partition_spec AS vals,
           string_split(partition_spec[2:-2], ',') AS vs
    FROM events WHERE partition_spec LIKE '[%]' AND table_name IS NOT NULL
)
SELECT part_table, partition_spec, vals FROM known
UNION ALL
SELECT b.part_table,
       array_to_string(list_transform(list_zip(c.cols, b.vs), lambda kv: kv[1] || '=' || kv[2]), '/'),
       b.vals
FROM bare b JOIN columns_seen c ON c.part_table = b.part_table AND len(c.cols) = len(b.vs)
WHERE NOT EXISTS (SELECT 1 FROM known k WHERE k.part_table = b.part_table AND k.vals = b.vals);

-- spark_task_attempts of 0018, with the attempts whose end was never seen (killed after their
-- speculative copy won, lost with their executor, still running when the record stops): such an
-- attempt is its start, status 'no end seen', finished NULL. One row per (app_id, stage_id,
-- stage_attempt, attempt_id): its first end, else its first start.
CREATE OR REPLACE VIEW spark_task_attempts AS
SELECT a.event_id, a.app_id, sj.job_id, sj.execution_id,
       x.write_command, x.write_location, x.write_table, x.write_partition, x.write_format, x.write_mode,
       a.stage_id, a.stage_attempt, TRY_CAST(split_part(a.task_id, '.', 2) AS INTEGER) AS task_index,
       a.attempt_no, TRY_CAST(a.detail->>'tid' AS BIGINT) AS tid, a.executor_id, a.host,
       a.speculative, CASE WHEN a.kind = 'attempt_end' THEN a.status ELSE 'no end seen' END AS status,
       a.detail->>'reason' AS end_reason,
       coalesce(epoch_ms(TRY_CAST(a.detail->>'launch_time' AS BIGINT)), a.ts) AS launched,
       CASE WHEN a.kind = 'attempt_end' THEN a.ts END AS finished, a.attempt_id AS label
FROM events a
LEFT JOIN spark_stage_jobs sj ON sj.app_id = a.app_id AND sj.stage_id = a.stage_id
LEFT JOIN spark_executions x ON x.app_id = a.app_id AND x.execution_id = sj.execution_id
WHERE a.kind IN ('attempt_end', 'attempt_start') AND a.stage_id IS NOT NULL AND a.app_id IS NOT NULL
  AND a.task_id LIKE '%.%'
  AND a.event_id IN (SELECT coalesce(min(event_id) FILTER (WHERE kind = 'attempt_end'), min(event_id)) FROM events
                     WHERE kind IN ('attempt_end', 'attempt_start') AND stage_id IS NOT NULL AND app_id IS NOT NULL
                       AND task_id LIKE '%.%'
                     GROUP BY app_id, stage_id, stage_attempt, attempt_id);

-- file_attempts of 0018, with a tie to an attempt that has no end seen.
CREATE OR REPLACE VIEW file_attempts AS
WITH files AS (
    SELECT event_id, ts, app_id, query_id, location, partition_spec, file_name, file_task,
           file_attempt, coalesce(target_path, path) AS p, write_uuid, stage_id, stage_attempt, task_id
    FROM events
    WHERE kind IN ('file', 'file_create', 'rename') AND coalesce(target_path, path) IS NOT NULL
      AND (attempt_id IS NULL OR task_id LIKE 'TID %')
),
staged AS (  -- the UUID of a .spark-staging dir must be the one in the file's own name
    SELECT *, CASE WHEN contains(p, '/.spark-staging-')  -- the cheap test spares the regexp on other paths
                   THEN regexp_extract(p, '/\.spark-staging-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/', 1)
                   ELSE '' END AS staging_uuid
    FROM files WHERE write_uuid IS NOT NULL AND file_task IS NOT NULL
),
uuids AS (
    SELECT * EXCLUDE (staging_uuid), CASE WHEN staging_uuid <> '' THEN 'spark_staging' ELSE 'spark_part' END AS rule
    FROM staged WHERE staging_uuid = '' OR staging_uuid = write_uuid
),
-- a write-job UUID to its SQL execution: a live listing of that write tagged files of the UUID
-- with the execution, else the executions writing the location (of the listing's application
-- when it names one); the attempts' own windows below hold the file's time (a tie through a
-- listing outranks one inferred from times)
listed AS (
    SELECT DISTINCT write_uuid, app_id, query_id AS execution_id
    FROM uuids WHERE query_id IS NOT NULL AND app_id IS NOT NULL
),
spans AS (
    SELECT DISTINCT write_uuid, location, app_id FROM uuids
),
windowed AS (
    SELECT DISTINCT s.write_uuid, x.app_id, x.execution_id
    FROM spans s JOIN spark_executions x
      ON x.write_location = s.location AND (s.app_id IS NULL OR s.app_id = x.app_id)
),
uuid_exec AS (
    SELECT write_uuid, app_id, execution_id, 'listing' AS how FROM listed
    UNION ALL
    SELECT write_uuid, app_id, execution_id, 'inferred' FROM windowed
),
-- the few executions found first, then their attempts, keyed by UUID and index in one value
-- (so the planner cannot join every file to every attempt of its index first)
exec_attempts AS (
    SELECT x.write_uuid || '/' || a.task_index AS uuid_index, x.how, a.event_id AS attempt_event, a.label,
           a.launched, a.finished
    FROM uuid_exec x JOIN spark_task_attempts a ON a.app_id = x.app_id AND a.execution_id = x.execution_id
),
hadoop AS (
    SELECT *, regexp_extract(p, '/_temporary/[0-9]+/_temporary/(attempt_[0-9]+_([0-9]+)_[mr]_([0-9]+)_([0-9]+))/',
                             ['id', 'job', 'task', 'n']) AS hid
    FROM files WHERE contains(p, '/_temporary/')
),
ties AS (
    SELECT f.event_id, f.file_name, f.partition_spec, 'hive_name' AS rule, 'named' AS how,
           a.event_id AS attempt_event, 'spark_attempt' AS kind, a.label
    FROM files f JOIN spark_task_attempts a
      ON a.app_id = f.app_id AND a.attempt_no = f.file_attempt
     AND a.task_index = TRY_CAST(f.file_task AS INTEGER)
     AND f.ts BETWEEN date_trunc('second', a.launched) AND a.finished + INTERVAL 1 SECOND
    WHERE f.file_attempt IS NOT NULL AND f.write_uuid IS NULL AND f.app_id IS NOT NULL
    QUALIFY a.launched = max(a.launched) OVER (PARTITION BY f.event_id)  -- a retried stage: the latest
    UNION ALL
    -- a Hive-style name whose attempt has no end seen (killed after its speculative copy won):
    -- it was running from its launch on, when no attempt with an end holds the file's time
    SELECT f.event_id, f.file_name, f.partition_spec, 'hive_name', 'named', a.event_id, 'spark_attempt', a.label
    FROM files f JOIN spark_task_attempts a
      ON a.app_id = f.app_id AND a.attempt_no = f.file_attempt
     AND a.task_index = TRY_CAST(f.file_task AS INTEGER)
     AND a.finished IS NULL AND f.ts >= date_trunc('second', a.launched)
    WHERE f.file_attempt IS NOT NULL AND f.write_uuid IS NULL AND f.app_id IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM spark_task_attempts b
                      WHERE b.app_id = f.app_id AND b.attempt_no = f.file_attempt
                        AND b.task_index = TRY_CAST(f.file_task AS INTEGER)
                        AND f.ts BETWEEN date_trunc('second', b.launched) AND b.finished + INTERVAL 1 SECOND)
    QUALIFY a.launched = max(a.launched) OVER (PARTITION BY f.event_id)
    UNION ALL
    SELECT u.event_id, u.file_name, u.partition_spec, u.rule, a.how, a.attempt_event, 'spark_attempt', a.label
    FROM uuids u JOIN exec_attempts a
      ON a.uuid_index = u.write_uuid || '/' || TRY_CAST(u.file_task AS INTEGER)
     AND u.ts BETWEEN date_trunc('second', a.launched) AND a.finished + INTERVAL 1 SECOND
    UNION ALL
    SELECT h.event_id, h.file_name, h.partition_spec, 'hadoop_attempt', 'named', m.event_id, 'hadoop_attempt', m.attempt_id
    FROM hadoop h JOIN (SELECT attempt_id, min(event_id) AS event_id FROM events
                        WHERE attempt_id IN (SELECT hid.id FROM hadoop) GROUP BY attempt_id) m
      ON m.attempt_id = h.hid.id
    WHERE h.hid.id <> ''
    UNION ALL
    SELECT h.event_id, h.file_name, h.partition_spec, 'hadoop_attempt', 'named', a.event_id, 'spark_attempt', a.label
    FROM hadoop h JOIN spark_task_attempts a
      ON a.app_id = h.app_id AND a.stage_id = TRY_CAST(h.hid.job AS INTEGER)
     AND a.task_index = TRY_CAST(h.hid.task AS INTEGER)
     AND (a.tid = TRY_CAST(h.hid.n AS BIGINT) OR a.attempt_no = TRY_CAST(h.hid.n AS INTEGER))
    WHERE h.hid.id <> ''
    QUALIFY a.tid = TRY_CAST(h.hid.n AS BIGINT) OR count(*) FILTER (WHERE a.tid = TRY_CAST(h.hid.n AS BIGINT))
                                               OVER (PARTITION BY h.event_id) = 0
    UNION ALL
    SELECT f.event_id, f.file_name, f.partition_spec, 'caller_context', 'named', a.event_id, 'spark_attempt', a.label
    FROM files f JOIN spark_task_attempts a
      ON a.app_id = f.app_id AND a.stage_id = f.stage_id AND a.stage_attempt IS NOT DISTINCT FROM f.stage_attempt
     AND 'TID ' || a.tid = f.task_id
    WHERE f.task_id LIKE 'TID %'
),
-- one row per (file, attempt); a tie the name or path states outranks one through the UUID's
-- execution, which outranks one from time windows
ranked AS (
    SELECT *, CASE how WHEN 'named' THEN 0 WHEN 'listing' THEN 1 ELSE 2 END AS how_rank FROM ties
    QUALIFY row_number() OVER (PARTITION BY event_id, attempt_event ORDER BY how_rank, rule) = 1
),
best AS (
    SELECT * EXCLUDE (how_rank) FROM ranked
    QUALIFY how_rank = min(how_rank) OVER (PARTITION BY event_id)
)
SELECT b.*, count(*) OVER (PARTITION BY b.event_id) AS candidates FROM best b;

-- file_fates: every data file that reached a final location (not a temp or staging layer, not a
-- marker such as _SUCCESS), how it got there, and what happened to it later: the first removal
-- (a delete or trash move of the file, or of its partition directory or table directory on a
-- filesystem; an object store's directory marker removes no object) and the first later write
-- of the same path by another record (an overwrite). Its own view so detectors read the fates
-- without the attempt ties file_lineage adds.
-- file_fates_at(keys): the same for the partitions named in keys only (NULL: all), so a detector
-- that starts from the few removals reads the few partitions they touch, not every file of the
-- store. A key is '<location>|<spec>' of the events' own columns ('<location>|*' for every
-- partition of a location), so the filter reaches their scan; fate_keys() gives the keys of the
-- removals, with each location's aliases (a bare HDFS audit path, the namespaced one of another
-- log). Keys only narrow: the joins still key on part_location.
CREATE MACRO fate_keys() AS TABLE
WITH removed AS (
    SELECT DISTINCT location, coalesce(partition_spec, '*') AS spec FROM events
    WHERE kind IN ('delete', 'dedup_remove') AND location IS NOT NULL
)
SELECT list(DISTINCT k) AS keys FROM (
    SELECT location || '|' || spec AS k FROM removed
    UNION ALL
    SELECT a.alias || '|' || r.spec FROM removed r JOIN location_aliases a ON a.location = r.location
    UNION ALL
    SELECT a.location || '|' || r.spec FROM removed r JOIN location_aliases a ON a.alias = r.location);

CREATE MACRO file_fates_at(keys) AS TABLE
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
    SELECT r.event_id, r.ts, r.part_location AS location, r.part_spec AS partition_spec, r.file_name,
           CASE WHEN r.kind = 'dedup_remove' THEN 'dedup' WHEN r.detail->>'how' = 'trash' THEN 'trashed' ELSE 'deleted' END AS how,
           r.actor, list_filter([r.detail->>'user', r.actor, r.query_id, r.app_id, r.job_id], lambda x: x IS NOT NULL) AS principals
    FROM partition_events r
    WHERE r.kind IN ('delete', 'dedup_remove') AND r.ts IS NOT NULL AND r.part_location IS NOT NULL AND NOT r.is_temp
      -- a directory marker's delete (an object store key ending in '/') removes no object under it
      AND NOT (r.file_name IS NULL AND r.detail->>'storage' = 's3')
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

CREATE VIEW file_fates AS SELECT * FROM file_fates_at(NULL);

-- file_lineage: file_fates with who created each file: the attempt the record itself names
-- (a caller context, an S3A Referer's ta=, a task log), else the one file_attempts ties it to by
-- its name or path, with that tie's rule and confidence ('stated' on the record; 'named',
-- 'listing', 'inferred' from file_attempts; 'one of N' when N attempts could have written it),
-- and who removed it (the removing record's actor, user, proxy, address, trash path).
CREATE VIEW file_lineage AS
WITH ties AS (
    SELECT event_id, min(label) AS label, any_value(rule) AS rule, any_value(how) AS how, max(candidates) AS candidates
    FROM file_attempts GROUP BY event_id
)
SELECT f.event_id, f.ts AS created_at, f.path, f.table_name, f.location, f.partition_spec, f.file_name,
       f.how AS arrived_how,
       coalesce(f.attempt_id, t.label) AS attempt,
       CASE WHEN f.attempt_id IS NOT NULL THEN 'record' ELSE t.rule END AS tie_rule,
       CASE WHEN f.attempt_id IS NOT NULL THEN 'stated' WHEN t.candidates > 1 THEN 'one of ' || t.candidates
            ELSE t.how END AS tie_confidence,
       f.app_id, f.job_id, f.query_id, f.thread, f.user, f.proxy, f.host, f.ip,
       f.removed_event, f.removed_at, f.removed_how,
       r.actor AS removed_by, r.detail->>'user' AS removed_user, r.detail->>'proxy' AS removed_proxy,
       r.detail->>'ip' AS removed_ip, r.detail->>'trash' AS trash_path,
       f.overwrite_event, f.live
FROM file_fates f
LEFT JOIN ties t ON t.event_id = f.event_id
LEFT JOIN partition_events r ON r.event_id = f.removed_event;

-- attempts: every task attempt any source names, merged into one identity: a Spark attempt is
-- its application and TID (event log, live capture, driver and executor logs, caller contexts
-- SPARK_TASK_…_TId_<tid>_<n>); every other attempt its attempt id (MR/Tez task logs, job
-- history, the S3A Referer's ta=, _temporary/…/attempt_… paths). Each with its start, its end or
-- 'no end seen' (killed, lost, or running when the record stops), host and speculation.
CREATE VIEW attempts AS
WITH named AS (
    SELECT event_id, kind, ts, app_id, job_id, stage_id, stage_attempt, task_id, attempt_id, attempt_no,
           speculative, executor_id, host, status, detail->>'reason' AS reason,
           coalesce(TRY_CAST(detail->>'tid' AS BIGINT), TRY_CAST(regexp_extract(task_id, '^TID ([0-9]+)$', 1) AS BIGINT),
                    TRY_CAST(regexp_extract(attempt_id, '\(TID ([0-9]+)\)', 1) AS BIGINT)) AS tid,
           CASE WHEN kind IN ('attempt_start', 'attempt_end', 'attempt_state', 'speculate') THEN 'scheduler'
                WHEN detail->>'caller_context' IS NOT NULL THEN 'caller context'
                WHEN detail->'s3a_audit'->>'ta' IS NOT NULL THEN 'S3A referer ta='
                WHEN kind IN ('task_commit', 'commit_allowed', 'commit_denied') THEN 'commit'
                ELSE kind END AS seen_by
    FROM events WHERE attempt_id IS NOT NULL
),
keyed AS (
    SELECT *, CASE WHEN tid IS NOT NULL AND app_id IS NOT NULL THEN app_id || ' TID ' || tid ELSE attempt_id END AS attempt_key
    FROM named
)
SELECT attempt_key, any_value(app_id) AS app_id, any_value(job_id) AS job_id,
       any_value(stage_id) AS stage_id, any_value(stage_attempt) AS stage_attempt, any_value(tid) AS tid,
       any_value(attempt_no) AS attempt_no,
       arg_min(attempt_id, (kind NOT IN ('attempt_start', 'attempt_end'))::INTEGER * 1000000000000 + event_id) AS label,
       list(DISTINCT attempt_id ORDER BY attempt_id) AS names,
       -- where it ran: its scheduler's word before a storage client's address
       arg_min(host, (host IS NULL)::INTEGER * 2 + (kind NOT IN ('attempt_start', 'attempt_end'))::INTEGER) AS host,
       any_value(executor_id) AS executor_id, bool_or(speculative) AS speculative,
       min(ts) FILTER (WHERE kind = 'attempt_start') AS started,
       min(ts) AS first_seen, max(ts) AS last_seen,
       max(ts) FILTER (WHERE kind = 'attempt_end') AS ended,
       coalesce(arg_max(status, ts) FILTER (WHERE kind = 'attempt_end'), 'no end seen') AS end_status,
       arg_max(reason, ts) FILTER (WHERE kind = 'attempt_end') AS end_reason,
       list(DISTINCT seen_by ORDER BY seen_by) AS sources, min(event_id) AS first_event, count(*) AS events
FROM keyed GROUP BY attempt_key;

-- partitions: every partition any source knows (a metastore add or audit line, a Hive load or
-- MoveTask, a k=v directory created under a table, a Spark write's target, a file seen), with its
-- registration history (added, dropped, added again), its loads and its files' fates.
CREATE VIEW partitions AS
WITH facts AS (
    SELECT part_table AS table_name, part_location AS location, part_spec AS partition_spec, kind, ts, event_id, actor, status,
           CASE WHEN kind IN ('partition_add', 'partition_alter', 'partition_exists', 'partition_drop') THEN 'metastore'
                WHEN kind IN ('load', 'publish') THEN 'load'
                WHEN kind = 'dir_create' THEN 'directory'
                WHEN kind = 'query_start' THEN 'spark write'
                WHEN kind IN ('file', 'file_create', 'rename') THEN 'files'
                WHEN kind IN ('delete', 'dedup_remove') THEN 'removals'
                ELSE 'other' END AS source
    FROM partition_events
    WHERE part_spec IS NOT NULL AND part_spec NOT LIKE '[%' AND coalesce(part_location, part_table) IS NOT NULL
),
files AS (
    SELECT location, partition_spec, count(*) AS files, count(*) FILTER (WHERE live) AS live_files,
           max(removed_at) AS last_removed
    FROM file_fates GROUP BY ALL
)
SELECT coalesce(f.location, f.table_name) AS pkey, any_value(f.table_name) AS table_name,
       any_value(f.location) AS location, f.partition_spec,
       list(DISTINCT f.source ORDER BY f.source) AS sources,
       min(f.ts) AS first_seen, max(f.ts) AS last_seen,
       min(f.ts) FILTER (WHERE f.kind IN ('partition_add', 'partition_alter', 'partition_exists') AND coalesce(f.status, 'ok') <> 'failed') AS registered_at,
       max(f.ts) FILTER (WHERE f.kind = 'partition_drop') AS dropped_at,
       list({'ts': f.ts, 'kind': f.kind, 'by': f.actor} ORDER BY f.ts, f.event_id)
           FILTER (WHERE f.kind IN ('partition_add', 'partition_alter', 'partition_exists', 'partition_drop')) AS registrations,
       list({'ts': f.ts, 'kind': f.kind, 'by': f.actor} ORDER BY f.ts, f.event_id)
           FILTER (WHERE f.kind IN ('load', 'publish', 'rename', 'file_create', 'task_commit')) AS loads,
       any_value(x.files) AS files, any_value(x.live_files) AS live_files, any_value(x.last_removed) AS last_removed
FROM facts f
LEFT JOIN files x ON x.location IS NOT DISTINCT FROM f.location AND x.partition_spec = f.partition_spec
GROUP BY coalesce(f.location, f.table_name), f.partition_spec;
