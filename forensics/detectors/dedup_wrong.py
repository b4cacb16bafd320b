"""CS106 dedup-kept-wrong."""

from __future__ import annotations

from commitsleuth.forensics.detectors.base import SqlDetector, where

# Hive's removeTempOrDuplicateFiles keeps the largest file per task id. Each file is tied to the
# attempt that renamed it there (same location, partition, task and attempt suffix); the dedup
# picked wrong when the kept file's attempt did not succeed, or the removed file's attempt did.
_SQL = """
WITH dd AS (
    SELECT event_id, ts, location, partition_spec, table_name, file_task, file_attempt AS removed_attempt,
           size AS removed_size, detail->>'kept' AS kept, (detail->>'kept_size')::BIGINT AS kept_size,
           TRY_CAST(regexp_extract(detail->>'kept', '([0-9]+)_([0-9]{1,6})(_copy_[0-9]+)?(\\.[^/]*)?$', 2) AS INTEGER)
               AS kept_attempt
    FROM events WHERE kind = 'dedup_remove' AND file_task IS NOT NULL
),
writers AS (
    SELECT location, partition_spec, file_task, file_attempt, any_value(attempt_id) AS attempt_id,
           min(event_id) AS event_id
    FROM events WHERE kind = 'rename' AND attempt_id IS NOT NULL AND file_task IS NOT NULL
    GROUP BY ALL
),
outcome AS (
    SELECT attempt_id,
           CASE WHEN bool_or(status = 'success' OR upper(detail->>'to') = 'SUCCEEDED') THEN 'succeeded'
                WHEN bool_or(status = 'killed' OR upper(detail->>'to') LIKE 'KILL%') THEN 'killed'
                WHEN bool_or(status = 'failed' OR upper(detail->>'to') LIKE 'FAIL%') THEN 'failed' END AS result,
           max(event_id) AS event_id
    FROM events WHERE kind IN ('attempt_end', 'attempt_state') AND attempt_id IS NOT NULL
    GROUP BY attempt_id
),
judged AS (
    SELECT d.*, kw.attempt_id AS kept_by, rw.attempt_id AS removed_by,
           ko.result AS kept_result, ro.result AS removed_result,
           [d.event_id, kw.event_id, rw.event_id, ko.event_id, ro.event_id] AS ev
    FROM dd d
    LEFT JOIN writers kw ON kw.file_task = d.file_task AND kw.file_attempt = d.kept_attempt
         AND kw.partition_spec IS NOT DISTINCT FROM d.partition_spec AND kw.location = d.location
    LEFT JOIN writers rw ON rw.file_task = d.file_task AND rw.file_attempt = d.removed_attempt
         AND rw.partition_spec IS NOT DISTINCT FROM d.partition_spec AND rw.location = d.location
    LEFT JOIN outcome ko ON ko.attempt_id = kw.attempt_id
    LEFT JOIN outcome ro ON ro.attempt_id = rw.attempt_id
)
SELECT location, partition_spec, table_name, file_task AS task, kept, kept_by, removed_by,
       kept_result, removed_result, removed_size, kept_size,
       list_filter([kept_by, removed_by], lambda x: x IS NOT NULL) AS actors,
       list_sort(list_distinct(list_filter(ev, lambda x: x IS NOT NULL))) AS evidence, ts AS t0, ts AS t1
FROM judged
WHERE coalesce(kept_result, '') IN ('killed', 'failed') OR coalesce(removed_result, '') = 'succeeded'
ORDER BY location, partition_spec, task
"""


class DedupKeptWrong(SqlDetector):
    """Hive removed a duplicate task file but kept the file of an attempt that did not succeed.

    Symptom: after a job with retried or speculative attempts, a partition's rows for one task
    are partial or wrong although no duplicate file remains.
    Cause: removeTempOrDuplicateFiles keeps the largest file per task id and deletes the others;
    it does not know which attempt succeeded, so a larger file left by a killed or failed attempt
    (or one renamed late) wins over the successful attempt's output.
    Remedy: stop attempts from publishing outside the commit protocol (disable speculative
    execution for such writers, hive.merge.mapfiles=false, HIVE-27899/HIVE-27985), then recompute
    the partition: its data for the listed task came from the wrong attempt.
    """

    code = "CS106"
    name = "dedup-kept-wrong"
    severity = "medium"
    sql = _SQL

    def summary(self, row):
        kept = f"{row['kept_by']} ({row['kept_result'] or 'outcome unknown'})" if row["kept_by"] else row["kept"]
        removed = row["removed_by"] or "the other file"
        if row["removed_result"] == "succeeded":
            removed += " (succeeded)"
        return f"dedup of task {row['task']} in {where(row)} kept the file of {kept} and removed {removed}"

    def detail(self, row):
        return {k: row[k] for k in ("task", "kept", "kept_by", "removed_by", "kept_result",
                                    "removed_result", "kept_size", "removed_size")}
