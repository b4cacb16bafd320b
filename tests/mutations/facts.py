"""Mutations of the fact model's own views as the user and `analyze --explain` read them
(migration 0040: file_lineage, attempts, partitions; 0018: spark_attempts). No detector reads
them, so tests/mutation_coverage.py cannot reach them through a detector's probes;
tests/test_fact_mutations.py runs them against the YAML cases' ``facts:`` expectations
(tests/test_detector_cases.py checks those). Format as tests/mutations/__init__.py says."""

M0018 = "commitsleuth/migrations/0018_spark_attempts.sql"
M0040 = "commitsleuth/migrations/0040_fact_model.sql"

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
    # --- attempts: every attempt merged into one identity, its end or 'no end seen'
    (M0040, "CASE WHEN tid IS NOT NULL AND app_id IS NOT NULL THEN app_id || ' TID ' || tid ELSE attempt_id END AS attempt_key",
     "attempt_id AS attempt_key"),
    (M0040, "TRY_CAST(regexp_extract(attempt_id, '\\(TID ([0-9]+)\\)', 1) AS BIGINT)) AS tid", "NULL) AS tid"),
    (M0040, "coalesce(arg_max(status, ts) FILTER (WHERE kind = 'attempt_end'), 'no end seen') AS end_status",
     "arg_max(status, ts) FILTER (WHERE kind = 'attempt_end') AS end_status"),
    (M0040, "WHEN detail->>'caller_context' IS NOT NULL THEN 'caller context'", "WHEN false THEN ''"),
    (M0040, "list(DISTINCT attempt_id ORDER BY attempt_id) AS names", "[any_value(attempt_id)] AS names"),
    (M0040, "arg_min(attempt_id, (kind NOT IN ('attempt_start', 'attempt_end'))::INTEGER * 1000000000000 + event_id) AS label",
     "max(attempt_id) AS label"),
    (M0040, "bool_or(speculative) AS speculative", "NULL::BOOLEAN AS speculative"),
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
