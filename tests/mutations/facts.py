"""Mutations of the fact model's own views as the user and `analyze --explain` read them
(migration 0040: file_lineage, attempts, partitions; 0018: spark_attempts). No detector reads
them, so tests/mutation_coverage.py cannot reach them through a detector's probes;
tests/test_fact_mutations.py runs them against the YAML cases' ``facts:`` expectations
(tests/test_detector_cases.py checks those). Format as tests/mutations/__init__.py says."""

M0018 = "commitsleuth/migrations/0018_spark_attempts.sql"
M0040 = "commitsleuth/migrations/0040_fact_model.sql"
M0074 = "commitsleuth/migrations/0074_attempt_runs.sql"

MUTATIONS: list[tuple] = [
    # --- file_lineage: who created each file, how it got there, who removed it
    (M0040, "coalesce(f.attempt_id, t.label) AS attempt", "f.attempt_id AS attempt"),
    (M0040, "coalesce(f.attempt_id, t.label) AS attempt", "coalesce(t.label, f.attempt_id) AS attempt"),
    (M0040, "CASE WHEN f.attempt_id IS NOT NULL THEN 'record' ELSE t.rule END AS tie_rule", "t.rule AS tie_rule"),
    (M0040, "CASE WHEN f.attempt_id IS NOT NULL THEN 'stated' WHEN t.candidates > 1", "CASE WHEN t.candidates > 1"),
    (M0040, "r.detail->>'user' AS removed_user", "f.user AS removed_user"),
    (M0040, "r.detail->>'proxy' AS removed_proxy", "NULL AS removed_proxy"),
    (M0040, "r.detail->>'ip' AS removed_ip", "NULL AS removed_ip"),
    (M0040, "r.detail->>'trash' AS trash_path", "NULL AS trash_path"),
    (M0040, "LEFT JOIN partition_events r ON r.event_id = f.removed_event", "LEFT JOIN partition_events r ON false"),
    (M0040, "LEFT JOIN ties t ON t.event_id = f.event_id", "LEFT JOIN ties t ON false"),
    # --- attempts (0074; of 0040): every attempt merged into one identity, its end or 'no end seen'
    # (round 8: the key's CASE gained the run; its mutation 'attempt_id AS attempt_key' kept on the new text)
    (M0074, "CASE WHEN r.tid IS NULL OR r.app_id IS NULL THEN r.attempt_id", "CASE WHEN true THEN r.attempt_id"),
    (M0074, "TRY_CAST(regexp_extract(attempt_id, '\\(TID ([0-9]+)\\)', 1) AS BIGINT)) AS tid", "NULL) AS tid"),
    (M0074, "coalesce(arg_max(status, ts) FILTER (WHERE kind = 'attempt_end'), 'no end seen') AS end_status",
     "arg_max(status, ts) FILTER (WHERE kind = 'attempt_end') AS end_status"),
    (M0074, "WHEN detail->>'caller_context' IS NOT NULL THEN 'caller context'", "WHEN false THEN ''"),
    (M0074, "list(DISTINCT attempt_id ORDER BY attempt_id) AS names", "[any_value(attempt_id)] AS names"),
    (M0074, "arg_min(attempt_id, (kind NOT IN ('attempt_start', 'attempt_end'))::INTEGER * 1000000000000 + event_id) AS label",
     "max(attempt_id) AS label"),
    (M0074, "bool_or(speculative) AS speculative", "NULL::BOOLEAN AS speculative"),
    # round 8, genB: a YARN restart's two runs of one application id (their TIDs from 0 again)
    (M0074, "coalesce(n.said_run, s.run) AS run", "s.run AS run"),
    (M0074, "coalesce(n.said_run, s.run) AS run", "n.said_run AS run"),
    (M0074, "LEFT JOIN source_runs s ON s.source_id = n.source_id AND s.app_id = n.app_id", "LEFT JOIN source_runs s ON false"),
    (M0074, "WHEN a.runs > 1 AND r.run IS NOT NULL THEN r.app_id || '_' || r.run || ' TID ' || r.tid", "WHEN false THEN NULL"),
    (M0074, "WHEN a.runs > 1 AND r.run IS NOT NULL THEN", "WHEN r.run IS NOT NULL THEN"),
    (M0074, "WHEN a.runs > 1 AND r.run IS NOT NULL THEN", "WHEN a.runs > 1 THEN"),
    # --- partitions: every partition any source knows, its registrations, its files
    (M0040, "WHEN kind = 'dir_create' THEN 'directory'", "WHEN false THEN ''"),
    (M0040, "WHEN kind IN ('delete', 'dedup_remove') THEN 'removals'", "WHEN false THEN ''"),
    (M0040, "max(f.ts) FILTER (WHERE f.kind = 'partition_drop') AS dropped_at", "NULL AS dropped_at"),
    (M0040, "FILTER (WHERE f.kind IN ('partition_add', 'partition_alter', 'partition_exists', 'partition_drop')) AS registrations",
     "FILTER (WHERE f.kind IN ('partition_add', 'partition_alter', 'partition_exists')) AS registrations"),
    (M0040, "LEFT JOIN files x ON x.location IS NOT DISTINCT FROM f.location AND x.partition_spec = f.partition_spec",
     "LEFT JOIN files x ON false"),
    (M0040, "count(*) FILTER (WHERE live) AS live_files", "count(*) AS live_files"),
    # --- spark_attempts (0018): each Spark attempt with the partitions and files it wrote
    (M0018, "FROM file_attempts WHERE candidates = 1 AND kind = 'spark_attempt'", "FROM file_attempts WHERE false"),
    (M0018, "coalesce(array_to_string(w.parts, ', '), a.write_partition, 'partition not known') AS partitions",
     "coalesce(a.write_partition, 'partition not known') AS partitions"),
    (M0018, "CASE WHEN bool_or(rule = 'caller_context') THEN 'storage' ELSE 'files' END AS source", "'files' AS source"),
]
