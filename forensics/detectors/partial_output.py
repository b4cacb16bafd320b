"""CS105 partial-output."""

from __future__ import annotations

from commitsleuth.forensics.detectors.base import SqlDetector, where

# A failed or aborted job whose committed output is visible: files of its write-job UUID (Spark)
# or task commits of its attempts (MapReduce) outside any temp layer, not removed afterwards.
# Under FileOutputCommitter v1 a task commit lands in _temporary/ and is not counted.
_SQL = """
WITH failed AS (
    SELECT job_id, min(ts) AS ts, arg_min(event_id, ts) AS event_id
    FROM events
    WHERE job_id IS NOT NULL
      AND (kind = 'job_abort' OR (kind = 'job_end' AND status IN ('failed', 'killed', 'aborted')))
    GROUP BY job_id
),
outputs AS (
    SELECT event_id, ts, location, partition_spec, table_name, file_name, attempt_id,
           coalesce(coalesce(target_path, path), '') AS p,
           coalesce(write_uuid, job_id, 'job_' || regexp_extract(attempt_id, '^attempt_([0-9]+_[0-9]+)_', 1)) AS job_key
    FROM partition_events
    WHERE kind IN ('task_commit', 'rename', 'file') AND location IS NOT NULL AND NOT is_temp
      AND coalesce(detail->>'dir', 'false') <> 'true'
),
removed AS (
    SELECT DISTINCT coalesce(target_path, path) AS p FROM events WHERE kind IN ('delete', 'dedup_remove')
),
conf AS (
    SELECT max(detail->>'value') AS algorithm FROM events
    WHERE kind = 'conf' AND detail->>'key' LIKE '%fileoutputcommitter.algorithm.version'
)
SELECT o.location, o.partition_spec, any_value(o.table_name) AS table_name, o.job_key AS job,
       list(DISTINCT coalesce(o.attempt_id, 'job ' || o.job_key) ORDER BY coalesce(o.attempt_id, 'job ' || o.job_key)) AS actors,
       list(DISTINCT o.file_name ORDER BY o.file_name) FILTER (WHERE o.file_name IS NOT NULL) AS files,
       list(o.event_id ORDER BY o.event_id) || [any_value(f.event_id)] AS evidence,
       min(o.ts) AS t0, greatest(max(o.ts), any_value(f.ts)) AS t1,
       any_value((SELECT algorithm FROM conf)) AS algorithm
FROM outputs o
JOIN failed f ON f.job_id = o.job_key
ANTI JOIN removed r ON r.p = o.p
GROUP BY o.location, o.partition_spec, o.job_key
ORDER BY o.location, o.partition_spec, job
"""


class PartialOutput(SqlDetector):
    """A job failed or was aborted, yet output its tasks committed is visible in the destination.

    Symptom: a partition holds part of a job's rows although the job failed: readers see a
    partial result (7 of 8 part files, say) and a retry appends to it.
    Cause: FileOutputCommitter algorithm version 2 (mapreduce.fileoutputcommitter.algorithm.version=2)
    moves each task's output straight into the destination at task commit, so when the job later
    fails, abortJob cannot take the committed files back; direct committers behave the same.
    Remedy: use algorithm version 1 (spark.hadoop.mapreduce.fileoutputcommitter.algorithm.version=1)
    or an atomic committer (S3A magic/staging committers, a table format); delete the listed
    files of the failed job before retrying it.
    """

    code = "CS105"
    name = "partial-output"
    severity = "high"
    sql = _SQL

    def summary(self, row):
        files = row["files"] or []
        what = f"{len(files)} file{'s' if len(files) != 1 else ''}" if files else "committed task output"
        algo = f" (committer algorithm v{row['algorithm']})" if row["algorithm"] else ""
        return f"failed job {row['job']} left {what} in {where(row)}{algo}"

    def detail(self, row):
        return {"job": row["job"], "files": list(row["files"] or []), "algorithm": row["algorithm"]}
