"""Mutations of the views and macros the detectors read (tests/mutations/__init__.py says the
format): each WHERE, ON, HAVING and CASE condition of their live definitions."""

M0005 = "commitsleuth/migrations/0005_forensics.sql"
M0013 = "commitsleuth/migrations/0013_storage.sql"
M0074 = "commitsleuth/migrations/0074_attempt_runs.sql"
M0075 = "commitsleuth/migrations/0075_magic_temp_layer.sql"
M0018 = "commitsleuth/migrations/0018_spark_attempts.sql"
M0040 = "commitsleuth/migrations/0040_fact_model.sql"
M0060 = "commitsleuth/migrations/0060_attempt_labels.sql"
M0064 = "commitsleuth/migrations/0064_loading_checks.sql"
M0069 = "commitsleuth/migrations/0069_stage_labels_table_deletes.sql"
M0076 = "commitsleuth/migrations/0076_base_name_checks.sql"
M0077 = "commitsleuth/migrations/0077_attempt_label_runs.sql"
M0078 = "commitsleuth/migrations/0078_hadoop_tie_runs.sql"

MUTATIONS: list[tuple] = [
    # --- table_locations (0005): a table's location from lines naming both, or one thread naming each
    (M0005, "    WHERE table_name IS NOT NULL AND location IS NOT NULL\n    UNION ALL", "    WHERE false\n    UNION ALL"),
    (M0005, "ON n.thread = p.thread AND n.partition_spec = p.partition_spec", "ON n.thread = p.thread"),
    (M0005, "ON n.thread = p.thread AND n.partition_spec = p.partition_spec", "ON n.partition_spec = p.partition_spec"),
    (M0005, "ON n.thread = p.thread AND n.partition_spec = p.partition_spec", "ON false"),
    (M0005, "WHERE table_name IS NOT NULL AND location IS NULL\n", "WHERE table_name IS NOT NULL\n"),
    (M0005, "WHERE table_name IS NULL AND location IS NOT NULL\n", "WHERE location IS NOT NULL\n"),
    (M0005, "SELECT table_name, arg_max(location, n) AS location", "SELECT table_name, arg_min(location, n) AS location"),
    # --- loading_steps (0064, 0005's with the metastore checks): a writer is the query of the line's own thread
    (M0064, "WHERE kind = 'query_start' AND query_id IS NOT NULL AND thread IS NOT NULL AND ts IS NOT NULL",
     "WHERE kind = 'query_end' AND query_id IS NOT NULL AND thread IS NOT NULL AND ts IS NOT NULL"),
    (M0064, "ON q.source_id = e.source_id AND q.thread = e.thread AND e.ts >= q.ts", "ON q.source_id = e.source_id AND e.ts >= q.ts"),
    (M0064, "ON q.source_id = e.source_id AND q.thread = e.thread AND e.ts >= q.ts", "ON q.thread = e.thread AND e.ts >= q.ts"),
    (M0064, "coalesce(e.query_id, q.query_id, e.thread, e.app_id) AS writer", "coalesce(e.query_id, e.thread, e.app_id) AS writer"),
    (M0064, "coalesce(e.part_location, e.part_table) AS pkey", "e.part_table AS pkey"),
    (M0064, "'partition_exists', 'load', 'delete')\n", "'partition_exists', 'load')\n"),
    (M0064, "WHERE e.kind IN ('dir_create', 'partition_add',", "WHERE e.kind IN ("),
    (M0064, "  AND e.ts IS NOT NULL AND e.part_spec IS NOT NULL\n", "  AND e.ts IS NOT NULL\n",
     'equivalent: CS103, the one detector reading loading_steps, joins steps only on part_spec = part_spec (NULL never equal): a step without a spec takes part in no window pair, loss or finding'),
    (M0064, "  AND coalesce(e.query_id, e.thread, e.app_id) IS NOT NULL\n", "\n",
     "equivalent: such a step's writer is NULL (its query comes through q.thread = e.thread, NULL here), and CS103 pairs writers only by <> and = (NULL never true): it takes part in no race, loss or finding"),
    # the check (get_partition) an add took its values from starts that thread's load
    (M0064, "FROM steps WHERE checked_at IS NOT NULL", "FROM steps WHERE false"),
    (M0064, "CAST(checked_at AS TIMESTAMP) AS ts", "ts"),
    (M0064, "FROM steps WHERE checked_at IS NOT NULL", "FROM steps",
     "equivalent: a step without a check gets a NULL time there; CS103, the one detector reading loading_steps, reads "
     "its times through min/max (NULL ignored) and comparisons (NULL never true), its kind is no 'delete' or 'load', and "
     "its event is the step's own, kept once in the evidence"),
    # --- location_aliases (0013): a bare HDFS path is the namespaced location with that path
    (M0013, "FROM locs WHERE location LIKE 'hdfs://%' OR location LIKE 'viewfs://%'", "FROM locs WHERE location LIKE 'viewfs://%'"),
    (M0013, "FROM locs WHERE location LIKE 'hdfs://%' OR location LIKE 'viewfs://%'", "FROM locs"),
    (M0013, "FROM locs l JOIN named n ON n.bare = l.location", "FROM locs l JOIN named n ON n.location = l.location"),
    # --- partition_events (0075; of 0013): every event keyed on (table, location, spec), actor, temp layer
    (M0075, "LEFT JOIN location_aliases al ON al.alias = k.raw_location", "LEFT JOIN location_aliases al ON false"),
    (M0075, "ON k.partition_spec LIKE '[%' AND pv.part_table = k.part_table AND pv.vals = k.partition_spec",
     "ON k.partition_spec LIKE '[%' AND pv.vals = k.partition_spec"),
    (M0075, "ON k.partition_spec LIKE '[%' AND pv.part_table = k.part_table AND pv.vals = k.partition_spec", "ON false"),
    (M0075, "LEFT JOIN table_locations tl ON e.location IS NULL AND tl.table_name = e.table_name", "LEFT JOIN table_locations tl ON false"),
    (M0075, "LEFT JOIN loc_tables lt ON e.table_name IS NULL AND lt.location = e.location", "LEFT JOIN loc_tables lt ON false"),
    (M0075, "coalesce(k.attempt_id, k.thread, k.query_id, k.app_id) AS actor", "coalesce(k.thread, k.attempt_id, k.query_id, k.app_id) AS actor"),
    (M0075, "CASE WHEN e.kind = 'load' THEN e.target_path ELSE coalesce(e.target_path, e.path) END", "coalesce(e.target_path, e.path)",
     "equivalent: it changes is_temp of 'load' events only, and nothing reads that: the readers of is_temp (CS101, CS103, CS109, CS110, storage.py, file_fates_at) select file, file_create, rename, delete and dedup_remove events; CS104 tests a load's own path with in_temp_layer"),
    (M0075, "OR contains(k.temp_probe, '-ext-'))", ")"),
    (M0075, "CASE WHEN NOT (contains(k.temp_probe, '/_')", "CASE WHEN true OR NOT (contains(k.temp_probe, '/_')"),
    (M0075, "|\\.spark-staging-[^/]*|", "|"),
    # round 8, genB: the S3A magic committer's __magic layer is temp
    (M0075, "|__magic(?:_job-[^/]*)?|", "|"),
    (M0075, "|\\.hive-staging[^/]*|_task_tmp", "|_task_tmp"),
    (M0075, "|-ext-[0-9]+[^/]*)(/|$)')", ")(/|$)')"),
    # --- spark_executions, spark_stage_jobs (0018)
    (M0018, "LEFT JOIN ends e ON e.app_id = s.app_id AND e.query_id = s.query_id", "LEFT JOIN ends e ON e.query_id = s.query_id"),
    (M0018, "s.location AS write_location", "NULL AS write_location"),
    (M0018, "arg_min(job_id, coalesce(ts, TIMESTAMP '9999-12-31')) AS job_id", "arg_max(job_id, coalesce(ts, TIMESTAMP '9999-12-31')) AS job_id"),
    (M0018, "arg_min(query_id, coalesce(ts, TIMESTAMP '9999-12-31')) AS execution_id", "NULL AS execution_id"),
    # --- partition_values (0040): values-only specs given key names
    (M0040, "ON e.table_name IS NULL AND l.location = e.location", "ON false"),
    (M0040, "lambda x: split_part(x, '=', 2)", "lambda x: x"),
    (M0040, "SELECT part_table, arg_max(cols, n) AS cols FROM (", "SELECT part_table, arg_min(cols, n) AS cols FROM ("),
    (M0040, "FROM events WHERE partition_spec LIKE '[%]' AND table_name IS NOT NULL", "FROM events WHERE false"),
    (M0040, "lambda kv: kv[1] || '=' || kv[2]", "lambda kv: kv[2] || '=' || kv[1]"),
    (M0040, "JOIN columns_seen c ON c.part_table = b.part_table AND len(c.cols) = len(b.vs)",
     "JOIN columns_seen c ON len(c.cols) = len(b.vs)"),
    (M0040, "JOIN columns_seen c ON c.part_table = b.part_table AND len(c.cols) = len(b.vs)",
     "JOIN columns_seen c ON c.part_table = b.part_table"),
    (M0040, "WHERE NOT EXISTS (SELECT 1 FROM known k WHERE k.part_table = b.part_table AND k.vals = b.vals);",
     "WHERE true;"),
    # --- spark_task_attempts (0077; of 0040): grouped by application and run, attempts with no end seen
    (M0077, "GROUP BY app_id, run, stage_id, stage_attempt, attempt_id);", "GROUP BY run, stage_id, stage_attempt, attempt_id);"),
    (M0077, "LEFT JOIN spark_stage_jobs sj ON sj.app_id = a.app_id AND sj.stage_id = a.stage_id", "LEFT JOIN spark_stage_jobs sj ON sj.stage_id = a.stage_id"),
    (M0077, "LEFT JOIN spark_executions x ON x.app_id = a.app_id AND x.execution_id = sj.execution_id",
     "LEFT JOIN spark_executions x ON x.execution_id = sj.execution_id"),
    (M0077, "CASE WHEN a.kind = 'attempt_end' THEN a.status ELSE 'no end seen' END AS status", "a.status AS status"),
    (M0077, "CASE WHEN a.kind = 'attempt_end' THEN a.ts END AS finished", "a.ts AS finished"),
    (M0077, "coalesce(epoch_ms(TRY_CAST(a.detail->>'launch_time' AS BIGINT)), a.ts) AS launched", "a.ts AS launched"),
    (M0077, "WHERE a.kind IN ('attempt_end', 'attempt_start') AND a.stage_id", "WHERE a.kind IN ('attempt_end') AND a.stage_id"),
    (M0077, "coalesce(min(event_id) FILTER (WHERE kind = 'attempt_end'), min(event_id))", "min(event_id)"),
    # --- file_attempts (0078; of 0077, 0040): which attempt wrote a file
    (M0078, "      AND (attempt_id IS NULL OR task_id LIKE 'TID %')\n),\n-- a file's run", "\n),\n-- a file's run"),
    (M0078, "WHERE staging_uuid = '' OR staging_uuid = write_uuid", "WHERE true"),
    (M0078, "ON x.write_location = s.location AND (s.app_id IS NULL OR s.app_id = x.app_id)", "ON x.write_location = s.location"),
    (M0078, "FROM uuid_exec x JOIN spark_task_attempts a ON a.app_id = x.app_id AND a.execution_id = x.execution_id",
     "FROM uuid_exec x JOIN spark_task_attempts a ON a.app_id = x.app_id"),
    (M0078, "           a.event_id AS attempt_event, 'spark_attempt' AS kind, a.label\n    FROM files f JOIN spark_task_attempts a\n      ON a.app_id = f.app_id AND a.attempt_no = f.file_attempt",
     "           a.event_id AS attempt_event, 'spark_attempt' AS kind, a.label\n    FROM files f JOIN spark_task_attempts a\n      ON a.app_id = f.app_id"),
    (M0078, "     AND f.ts BETWEEN date_trunc('second', a.launched) AND a.finished + INTERVAL 1 SECOND\n    WHERE f.file_attempt",
     "    WHERE f.file_attempt"),
    (M0078, "    QUALIFY a.launched = max(a.launched) OVER (PARTITION BY f.event_id)  -- a retried stage: the latest\n", ""),
    (M0078, "     AND a.finished IS NULL AND f.ts >= date_trunc('second', a.launched)", "     AND f.ts >= date_trunc('second', a.launched)"),
    (M0078, "     AND a.finished IS NULL AND f.ts >= date_trunc('second', a.launched)", "     AND a.finished IS NULL"),
    (M0078, "      AND NOT EXISTS (SELECT 1 FROM spark_task_attempts b", "      AND EXISTS (SELECT 1 FROM spark_task_attempts b"),
    (M0078, "     AND u.ts BETWEEN date_trunc('second', a.launched) AND a.finished + INTERVAL 1 SECOND\n", ""),
    (M0078, "AND (a.tid = TRY_CAST(h.hid.n AS BIGINT) OR a.attempt_no = TRY_CAST(h.hid.n AS INTEGER))",
     "AND (a.attempt_no = TRY_CAST(h.hid.n AS INTEGER))"),
    (M0078, "ON a.app_id = h.app_id AND a.stage_id = TRY_CAST(h.hid.job AS INTEGER)", "ON a.app_id = h.app_id"),
    (M0078, "AND a.stage_attempt IS NOT DISTINCT FROM f.stage_attempt", ""),
    (M0078, "     AND 'TID ' || a.tid = f.task_id", ""),
    (M0078, "CASE how WHEN 'named' THEN 0 WHEN 'listing' THEN 1 ELSE 2 END AS how_rank", "0 AS how_rank"),
    (M0078, "    QUALIFY how_rank = min(how_rank) OVER (PARTITION BY event_id)\n", ""),
    (M0078, "SELECT b.*, count(*) OVER (PARTITION BY b.event_id) AS candidates FROM best b", "SELECT b.*, 1 AS candidates FROM best b"),
    # --- fate_keys (0069), file_fates_at (0076; of 0069, 0063 and 0040): what happened to each file later
    (M0069, "WHERE kind IN ('delete', 'dedup_remove') AND location IS NOT NULL\n    UNION", "WHERE kind IN ('dedup_remove') AND location IS NOT NULL\n    UNION"),
    # a table directory's delete (a file of the database's directory to its record)
    (M0069, "    SEMI JOIN (SELECT DISTINCT location FROM events WHERE location IS NOT NULL) l ON l.location = d.dir\n", "    WHERE false\n"),
    (M0076, "      ON r.file_name IS NOT NULL AND r.part_spec IS NULL AND t.dir = r.part_location || '/' || r.file_name", "      ON false"),
    (M0076, "      ON r.file_name IS NOT NULL AND r.part_spec IS NULL AND t.dir", "      ON r.file_name IS NOT NULL AND t.dir"),
    (M0076, "CASE WHEN t.dir IS NULL THEN r.file_name END AS file_name", "r.file_name AS file_name"),
    (M0076, "     AND coalesce(r.detail->>'storage', '') <> 's3'\n", "\n"),
    (M0069, "SELECT a.alias || '|' || r.spec FROM removed r JOIN location_aliases a ON a.location = r.location", "SELECT NULL"),
    (M0069, "SELECT a.location || '|' || r.spec FROM removed r JOIN location_aliases a ON a.alias = r.location", "SELECT NULL"),
    (M0076, "    WHERE e.kind IN ('file_create', 'rename', 'file') AND e.file_name IS NOT NULL AND NOT e.is_temp",
     "    WHERE e.kind IN ('file_create', 'rename', 'file') AND e.file_name IS NOT NULL"),
    (M0076, "    WHERE e.kind IN ('file_create', 'rename', 'file') AND e.file_name IS NOT NULL AND NOT e.is_temp",
     "    WHERE e.kind IN ('rename', 'file') AND e.file_name IS NOT NULL AND NOT e.is_temp"),
    (M0076, "      AND NOT (base_name(e.file_name) LIKE '\\_%' ESCAPE '\\' OR base_name(e.file_name) LIKE '.%')", ""),
    # round 9, base9: a marker or hidden file in a partition's subdirectory (sub/_SUCCESS) by its base name
    (M0076, "AND NOT (base_name(e.file_name) LIKE '\\_%' ESCAPE", "AND NOT (e.file_name LIKE '\\_%' ESCAPE"),
    (M0076, "OR base_name(e.file_name) LIKE '.%')", "OR e.file_name LIKE '.%')"),
    (M0076, "AS split_part(file_name, '/', -1);", "AS file_name;"),
    (M0076, "AS split_part(file_name, '/', -1);", "AS split_part(file_name, '/', 1);"),
    (M0076, "      AND coalesce(e.status, 'ok') <> 'failed'\n      AND (keys IS NULL", "      AND (keys IS NULL"),
    (M0076, "      AND (keys IS NULL OR list_contains(keys, e.location || '|' || coalesce(e.partition_spec, ''))",
     "      AND (keys IS NULL OR false"),
    (M0076, "           OR list_contains(keys, e.location || '|*'))", "           OR false)"),

    (M0076, "CASE WHEN r.kind = 'dedup_remove' THEN 'dedup' WHEN r.detail->>'how' = 'trash' THEN 'trashed' ELSE 'deleted' END AS how",
     "'deleted' AS how"),
    (M0076, "    WHERE r.kind IN ('delete', 'dedup_remove') AND r.ts IS NOT NULL AND r.part_location IS NOT NULL AND NOT r.is_temp",
     "    WHERE r.kind IN ('delete') AND r.ts IS NOT NULL AND r.part_location IS NOT NULL AND NOT r.is_temp"),
    (M0076, "    WHERE r.kind IN ('delete', 'dedup_remove') AND r.ts IS NOT NULL AND r.part_location IS NOT NULL AND NOT r.is_temp",
     "    WHERE r.kind IN ('delete', 'dedup_remove') AND r.ts IS NOT NULL AND r.part_location IS NOT NULL"),
    (M0076, "      AND NOT (r.file_name IS NULL AND coalesce(r.detail->>'storage', '') = 's3')\n", "\n"),
    (M0076, "      AND NOT (r.file_name IS NULL AND coalesce(r.detail->>'storage', '') = 's3')\n", "      AND NOT (r.file_name IS NULL)\n"),
    (M0076, "coalesce(r.detail->>'storage', '') = 's3'", "r.detail->>'storage' = 's3'"),
    (M0076, "ON r.location = a.location AND r.ts >= a.ts", "ON r.location = a.location"),
    (M0076, "     AND ((r.file_name = a.file_name AND r.partition_spec IS NOT DISTINCT FROM a.partition_spec)",
     "     AND ((r.file_name = a.file_name)"),
    (M0076, "          OR (r.file_name IS NULL AND (r.partition_spec = a.partition_spec OR r.partition_spec IS NULL)))",
     "          OR (r.file_name IS NULL AND (r.partition_spec = a.partition_spec)))"),
    (M0076, "          OR (r.file_name IS NULL AND (r.partition_spec = a.partition_spec OR r.partition_spec IS NULL)))", ")"),
    (M0076, "    HAVING count(*) > 1 AND count(*) FILTER (WHERE kind <> 'file') > 0", "    HAVING count(*) > 1",
     "equivalent: rewritten only narrows which paths overwritten looks at: overwritten joins b.kind <> 'file' on the "
     "exact path, so a path every arrival of which is a listing ('file') gets no overwrite_event with or without the "
     "filter (and a hash shared by another path lets in rows the path join then drops)"),
    (M0076, "JOIN arrived b ON b.path = a.path AND b.ts > a.ts AND b.kind <> 'file'", "JOIN arrived b ON b.path = a.path AND b.ts > a.ts"),
    (M0076, "(d.r IS NULL AND o.overwrite_event IS NULL) AS live", "(d.r IS NULL) AS live"),
    # --- spark_run (0074), round 8, genB: the run a task's caller context states (a YARN restart)
    (M0074, "THEN TRY_CAST(split_part(split_part(context, 'SPARK_TASK_' || app || '_', 2), '_', 1) AS INTEGER)::VARCHAR",
     "THEN NULL"),
    # --- spark_attempt_label (0060), attempt_labels (0077; of 0069): one name per attempt (per TID, stage attempt and run)
    (M0060, "'stage ' || stage || '.' || coalesce(stage_attempt, 0)", "'stage ' || stage"),
    (M0060, "'(TID ' || tid || ')', 'on ' || host", "'(TID ' || tid || ')'"),
    (M0077, "WHERE attempt_id LIKE 'task %' AND attempt_id LIKE '%(TID %'", "WHERE attempt_id LIKE '%(TID %'",
     "equivalent: every attempt id holding '(TID ' that the product writes starts 'task ': the event log's and live "
     "capture's 'task <index>.<attempt> in stage <s>.<a> (TID <n>)' (parsers/spark_events.py attempt_label, "
     "commitsleuth/ingest/eventlog_fast.py's attempt_id), a Spark log's (parsers/messages.py spark_task, same words) and a caller "
     "context's 'task attempt <n> in stage <s>.<a> (TID <n>)' (parsers/callers.py spark_attempt_label); MapReduce, Tez "
     "and S3A ta= ids are attempt_…, and an executor thread's '(TID n)' is a thread, not an attempt id"),
    (M0077, "arg_max(host, (host IS NOT NULL)::INTEGER * 2 + (kind IN ('attempt_start', 'attempt_end'))::INTEGER) AS host",
     "arg_max(host, (host IS NOT NULL)::INTEGER) AS host"),
    (M0077, "CASE WHEN task_id LIKE '%.%' THEN TRY_CAST(split_part(task_id, '.', 2) AS INTEGER) END", "NULL",
     "equivalent: idx is coalesce(the index in the attempt id 'task <index>.<attempt> in stage …', this); every row named "
     "here with a task id holding '.' comes from parsers/spark_events.py, commitsleuth/ingest/eventlog_fast.py or "
     "parsers/messages.py spark_task, which write task_id '<stage>.<index>' beside that very attempt id, so the "
     "regexp already gives the same index; a caller context's row (parsers/callers.py) has task_id 'TID <n>' and "
     "no '.', and commit_denied rows (task_id '<stage>.<partition>') carry no attempt id, so are not named"),
    (M0077, "  ON p.app_id IS NOT DISTINCT FROM n.app_id AND p.tid_key = n.tid_key AND p.run IS NOT DISTINCT FROM n.run;",
     "  ON p.tid_key = n.tid_key AND p.run IS NOT DISTINCT FROM n.run;"),
    (M0077, "regexp_extract(attempt_id, ' in stage (\\d+\\.\\d+) \\(TID (\\d+)\\)', ['stage', 'tid']) AS tid_key",
     "regexp_extract(attempt_id, '\\(TID (\\d+)\\)', ['tid']) AS tid_key"),
    # round 9, runs9: a YARN restart's runs in the views naming Spark attempts (0077)
    (M0074, "WHERE kind = 'app_start' AND app_id IS NOT NULL AND detail->>'attempt' IS NOT NULL;", "WHERE false;"),
    (M0077, "GROUP BY app_id HAVING count(DISTINCT run) > 1;", "GROUP BY app_id HAVING count(DISTINCT run) > 0;"),
    (M0077, "    WHERE attempt_id IS NOT NULL AND task_id LIKE 'TID %'\n    UNION ALL", "    WHERE false\n    UNION ALL"),
    (M0077, "SELECT e.*, CASE WHEN e.app_id IN (SELECT app_id FROM multi_run_apps) THEN s.run END AS run", "SELECT e.*, NULL AS run"),
    (M0077, "SELECT e.*, CASE WHEN e.app_id IN (SELECT app_id FROM multi_run_apps) THEN s.run END AS run", "SELECT e.*, s.run AS run"),
    (M0077, "GROUP BY app_id, run, stage_id, stage_attempt, attempt_id);", "GROUP BY app_id, stage_id, stage_attempt, attempt_id);"),
    (M0078, "source_id, spark_run(detail->>'caller_context', app_id) AS said_run", "source_id, NULL AS said_run"),
    # round 10, gen10: a Hadoop attempt directory's tie (stage, index, TID: not the run) within the
    # file's run, the one its caller context states or its source holds (a live capture's listing)
    (M0078, "     AND coalesce(a.run = h.run, TRUE)  -- the path names stage, index and TID, not the run\n", "\n"),
    (M0078, "     AND coalesce(a.run = h.run, TRUE)  -- the path names stage, index and TID, not the run\n",
     "     AND coalesce(a.run = h.run, FALSE)\n"),
    (M0078, "coalesce(f.said_run, s.run) AS run", "f.said_run AS run"),
    (M0078, "LEFT JOIN source_runs s ON s.source_id = f.source_id AND s.app_id = f.app_id", "LEFT JOIN source_runs s ON s.app_id = f.app_id"),
    # --- attempt_event_runs (0078), round 10, gen10: the run of a record naming an attempt of an application seen in several runs
    (M0078, "SELECT e.event_id, coalesce(spark_run(e.detail->>'caller_context', e.app_id), s.run) AS run\nFROM events e",
     "SELECT e.event_id, s.run AS run\nFROM events e",
     "equivalent: the detectors read the view in CS101's commit_rows, whose records (task_commit; attempt_end with bytes) "
     "never hold a caller context (only hdfs-audit's fs_context, dir_create, file_create, delete and rename do: "
     "parsers/formats/hdfs_audit.py), and in actors.py's _EVENTS_SQL, which takes the context's run first itself "
     "(coalesce(spark_run(…), r.run)); the context's run serves event_labels, the named queries' join, whose "
     "tests/test_queries.py test_attempts_per_task_counts_each_run_apart fails without it"),
    (M0078, "SELECT e.event_id, coalesce(spark_run(e.detail->>'caller_context', e.app_id), s.run) AS run\nFROM events e",
     "SELECT e.event_id, spark_run(e.detail->>'caller_context', e.app_id) AS run\nFROM events e"),
    (M0078, "WHERE e.attempt_id IS NOT NULL AND e.app_id IN (SELECT app_id FROM multi_run_apps);", "WHERE e.attempt_id IS NOT NULL;",
     "equivalent: of an application seen in one run the mutant gives a run only to records of a source holding it (an "
     "event log's or live capture's application start) or naming it (a caller context). CS101's commit_rows keys on it "
     "the Spark task ids '<stage>.<index>' (a Hadoop-named commit's members arm ignores the run), whose records with "
     "bytes (attempt_end: the only size an attempt_end gets is Task Metrics' bytes written, parsers/spark_events.py, "
     "ingest/eventlog_fast.py, the live capture) all come from that one run's sources, one run for all; actors.py "
     "looks the run up in spark_task_attempts, whose run is NULL for such an application (0077's ran), so (app, name, "
     "run) finds nothing and (app, name), one attempt, answers as before; the filter keeps the view to the few "
     "restarted applications (a join over every attempt record otherwise)"),
    (M0078, "FROM events e LEFT JOIN source_runs s ON s.source_id = e.source_id AND s.app_id = e.app_id\nWHERE e.attempt_id IS NOT NULL",
     "FROM events e LEFT JOIN source_runs s ON s.app_id = e.app_id\nWHERE e.attempt_id IS NOT NULL"),
    (M0078, " AND coalesce(a.run = f.run, TRUE)", ""),
    (M0078, " AND coalesce(a.run = f.run, TRUE)", " AND coalesce(a.run = f.run, FALSE)"),
    (M0077, "CASE WHEN n.app_id IN (SELECT app_id FROM multi_run_apps) THEN coalesce(n.said_run, s.run) END AS run", "NULL AS run"),
    (M0077, "CASE WHEN n.app_id IN (SELECT app_id FROM multi_run_apps) THEN coalesce(n.said_run, s.run) END AS run",
     "coalesce(n.said_run, s.run) AS run"),
    (M0077, "THEN coalesce(n.said_run, s.run) END AS run", "THEN s.run END AS run"),
    (M0077, "THEN coalesce(n.said_run, s.run) END AS run", "THEN n.said_run END AS run"),
    (M0077, " AND p.run IS NOT DISTINCT FROM n.run;", ";"),
    (M0077, "spark_attempt_label(coalesce(p.app_id || '_' || p.run, p.app_id), p.stage_id", "spark_attempt_label(p.app_id, p.stage_id"),
]
