"""CS105 partial-output."""

from __future__ import annotations

from commitsleuth.forensics.detectors.base import SqlDetector, in_temp_layer, where
from commitsleuth.forensics.file_attempts import ATTEMPTS_LIST, file_attempts_sql, spark_attempt_words

# A failed or aborted job whose committed output is visible: files of its write-job UUID (Spark)
# or task commits of its attempts (MapReduce) outside any temp layer, not removed afterwards.
# Under FileOutputCommitter v1 a task commit lands in _temporary/ and is not counted.
_SQL = """
WITH failed AS (
    SELECT job_id, min(ts) AS ts, arg_min(event_id, ts) AS event_id, any_value(app_id) AS app_id
    FROM events
    WHERE job_id IS NOT NULL
      AND (kind = 'job_abort' OR (kind = 'job_end' AND status IN ('failed', 'killed', 'aborted')))
    GROUP BY job_id
),
committed AS (
    SELECT DISTINCT job_id FROM events WHERE kind = 'job_commit' AND job_id IS NOT NULL
),
removed AS (
    SELECT DISTINCT coalesce(target_path, path) AS p FROM events WHERE kind IN ('delete', 'dedup_remove')
),
-- Spark writes <output>/_SUCCESS when a write job commits: a listing where a write job's part
-- files are newer than every _SUCCESS marker shows a job that never committed. Only at the
-- output's root: the files it moved to a partition's own location (a custom LOCATION, same job
-- UUID in their names) have none beside them, so a job is unmarked when no location holding its
-- files has a _SUCCESS newer than them. Its files in a temp layer (an attempt still writing under
-- _temporary after the commit) are no output. Narrow scans first; only the few jobs found are
-- looked at closely.
markers AS (
    SELECT location, max(ts) AS ts FROM events
    WHERE kind = 'file' AND file_name = '_SUCCESS' AND partition_spec IS NULL
    GROUP BY location
),
unmarked AS (
    SELECT f.write_uuid AS job_id, any_value(f.app_id) AS app_id
    FROM (SELECT location, write_uuid, max(ts) AS ts, any_value(app_id) AS app_id FROM events
          WHERE kind = 'file' AND write_uuid IS NOT NULL AND NOT {temp_path} GROUP BY ALL) f
    LEFT JOIN markers m ON m.location = f.location
    WHERE f.write_uuid NOT IN (SELECT job_id FROM committed)
      AND f.write_uuid NOT IN (SELECT job_id FROM failed)
    GROUP BY f.write_uuid
    HAVING bool_and(f.ts > coalesce(m.ts, '-infinity'::TIMESTAMP))
),
jobs AS (
    SELECT job_id, event_id AS ref, ts AS ref_ts, 'failed' AS why, app_id FROM failed
    UNION ALL
    SELECT job_id, NULL, NULL, 'unmarked', app_id FROM unmarked
),
outputs AS (
    SELECT event_id, ts, location, partition_spec, table_name, file_name, attempt_id,
           coalesce(target_path, path) AS p,
           CASE WHEN write_uuid IS NOT NULL THEN write_uuid WHEN job_id IS NOT NULL THEN job_id
                WHEN attempt_id IS NOT NULL
                THEN 'job_' || regexp_extract(attempt_id, '^attempt_([0-9]+_[0-9]+)_', 1) END AS job_key
    FROM partition_events
    WHERE kind IN ('task_commit', 'rename', 'file') AND location IS NOT NULL
      AND (write_uuid IS NOT NULL OR job_id IS NOT NULL OR attempt_id IS NOT NULL)
      AND coalesce(detail->>'dir', 'false') <> 'true'
),
suspects AS (
    SELECT o.*, j.ref, j.ref_ts, j.why, j.app_id
    FROM outputs o JOIN jobs j ON j.job_id = o.job_key
),
visible AS (
    SELECT s.* FROM suspects s
    ANTI JOIN removed r ON r.p = s.p
    WHERE NOT {temp_s_p}
),
-- The committer algorithm of the failing job's own application; a store holding several
-- applications has one value each. Without an application, only a value the whole store agrees on.
conf AS (
    SELECT app_id, max(detail->>'value') AS algorithm FROM events
    WHERE kind = 'conf' AND detail->>'key' LIKE '%fileoutputcommitter.algorithm.version'
    GROUP BY app_id
),
agreed AS (
    SELECT CASE WHEN count(DISTINCT algorithm) = 1 THEN any_value(algorithm) END AS algorithm FROM conf
),
{file_attempts},
grouped AS (
SELECT location, partition_spec, any_value(table_name) AS table_name, job_key AS job, why,
       list(DISTINCT coalesce(v.attempt_id, fa.attempt_id, 'job ' || job_key)
            ORDER BY coalesce(v.attempt_id, fa.attempt_id, 'job ' || job_key)) AS actors,
       list(DISTINCT file_name ORDER BY file_name) FILTER (WHERE file_name IS NOT NULL) AS files,
       list_filter(list(DISTINCT v.event_id ORDER BY v.event_id) || [any_value(ref)]
                   || list(DISTINCT fa.attempt_event ORDER BY fa.attempt_event), lambda x: x IS NOT NULL) AS evidence,
       min(ts) AS t0, greatest(max(ts), any_value(ref_ts)) AS t1,
       any_value(app_id) AS app_id, {attempts_list} AS attempts
FROM visible v LEFT JOIN file_ties fa ON fa.event_id = v.event_id
GROUP BY location, partition_spec, job_key, why
)
SELECT g.* EXCLUDE (app_id),
       coalesce(c.algorithm, CASE WHEN g.app_id IS NULL THEN (SELECT algorithm FROM agreed) END) AS algorithm
FROM grouped g LEFT JOIN conf c ON c.app_id = g.app_id
ORDER BY location, partition_spec, job
""".format(temp_s_p=in_temp_layer("s.p"), temp_path=in_temp_layer("path"), file_attempts=file_attempts_sql("visible").strip(),
           attempts_list=ATTEMPTS_LIST)


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
        # Spark: the attempts that wrote those files (forensics/file_attempts.py)
        by = "; written by " + "; ".join(spark_attempt_words(a) for a in row["attempts"]) if row["attempts"] else ""
        if row["why"] == "unmarked":
            return (
                f"write job {row['job']} left {what} in {where(row)} and never wrote _SUCCESS after "
                f"them: it did not commit{algo}{by}"
            )
        return f"failed job {row['job']} left {what} in {where(row)}{algo}{by}"

    def detail(self, row):
        d = {"job": row["job"], "committed": False, "evidence": row["why"], "files": list(row["files"] or []),
             "algorithm": row["algorithm"]}
        if row["attempts"]:
            d["attempts"] = [dict(a) for a in row["attempts"]]
        return d
