"""CS105 partial-output."""

from __future__ import annotations

from commitsleuth.forensics.detectors.base import SqlDetector, in_temp_layer, where
from commitsleuth.forensics.file_attempts import ATTEMPTS_LIST, file_attempts_sql, spark_attempt_words

# A failed or aborted job whose committed output is visible: files of its write-job UUID (Spark)
# or task commits of its attempts (MapReduce) outside any temp layer, not removed afterwards.
# Under FileOutputCommitter v1 a task commit lands in _temporary/ and is not counted.
# <output>/.spark-staging-<write job UUID>/ (HadoopMapReduceCommitProtocol.getStagingDir)
STAGING_DIR = r"/\.spark-staging-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(/|$)"

# Whether a write job committed, from whatever the store holds of it (CS105 reports what a job
# that did not commit left visible; CS111 takes a later, committed write's files as no extra files
# of an older manifest). _SUCCESS is no part of it: it is optional (see CS105's markers below).
_VERDICTS = """
job_ends AS (
    SELECT job_id, ts, event_id, app_id FROM events
    WHERE job_id IS NOT NULL
      AND (kind = 'job_abort' OR (kind = 'job_end' AND status IN ('failed', 'killed', 'aborted')))
),
-- A Spark write job's files outside any temp layer, per location; a live listing of the write
-- tags them with its SQL execution (query_id).
uuid_files AS (
    SELECT location, write_uuid, min(ts) AS t0, max(ts) AS ts, any_value(app_id) AS app_id,
           any_value(query_id) AS query_id
    FROM events
    WHERE kind = 'file' AND write_uuid IS NOT NULL AND NOT {temp_path}
    GROUP BY ALL
),
-- The end of the SQL execution that wrote a write job (SparkListenerSQLExecutionEnd: its
-- errorMessage makes it failed): the one the listing names, else those writing the location
-- (of the files' application when they name one) while all of the job's files were written.
-- FileFormatWriter commits the job inside the execution: an execution that ended without error
-- committed it, whatever _SUCCESS says.
exec_ends AS (
    SELECT f.write_uuid, x.status, x.app_id,
           (SELECT max(e.event_id) FROM events e WHERE e.kind = 'query_end' AND e.app_id = x.app_id
              AND e.query_id = x.execution_id) AS event_id, x.ended AS ts
    FROM uuid_files f JOIN spark_executions x
      ON CASE WHEN f.query_id IS NOT NULL AND f.app_id IS NOT NULL
              THEN x.app_id = f.app_id AND x.execution_id = f.query_id
              ELSE x.write_location = f.location AND (f.app_id IS NULL OR x.app_id = f.app_id)
                   AND f.t0 >= x.started - INTERVAL 1 SECOND AND f.ts <= x.ended + INTERVAL 1 SECOND END
),
exec_verdict AS (  -- every tied execution failed: failed; one ended well: committed (no end: NULL, neither)
    SELECT write_uuid, bool_and(status = 'failed') AS failed, arg_max(event_id, ts) AS event_id, max(ts) AS ts,
           any_value(app_id) AS app_id
    FROM exec_ends GROUP BY write_uuid
),
-- Spark's dynamic partition overwrite (spark.sql.sources.partitionOverwriteMode=dynamic,
-- HadoopMapReduceCommitProtocol) stages the job under <output>/.spark-staging-<uuid>/, where
-- FileOutputCommitter's commitJob writes the _SUCCESS; the job's commit then renames each staged
-- partition into the output and deletes the staging dir, _SUCCESS with it. A partition moved out
-- shows the commit ran; a staged partition never moved out shows it stopped half-way.
staged AS (
    SELECT regexp_extract(path, '{staging}', 1)
               AS job_id, partition_spec, event_id, ts, app_id,
           kind = 'rename' AND NOT {temp_target} AS moved_out
    FROM events
    WHERE contains(path, '/.spark-staging-') AND partition_spec IS NOT NULL
),
staged_parts AS (
    SELECT job_id, partition_spec, bool_or(moved_out) AS moved,
           max(event_id) FILTER (WHERE moved_out) AS move_event, max(ts) FILTER (WHERE moved_out) AS move_ts,
           any_value(app_id) AS app_id
    FROM staged GROUP BY ALL
),
staged_commits AS (
    SELECT job_id, bool_and(moved) AS whole, max(move_event) AS event_id, max(move_ts) AS ts, any_value(app_id) AS app_id
    FROM staged_parts GROUP BY job_id HAVING bool_or(moved)
),
write_failed AS (
    SELECT job_id, min(ts) AS ts, arg_min(event_id, ts) AS event_id, any_value(app_id) AS app_id
    FROM (SELECT * FROM job_ends
          UNION ALL
          SELECT write_uuid, ts, event_id, app_id FROM exec_verdict WHERE failed
          UNION ALL
          SELECT job_id, ts, event_id, app_id FROM staged_commits WHERE NOT whole)
    GROUP BY job_id
),
write_committed AS (
    SELECT job_id FROM events WHERE kind = 'job_commit' AND job_id IS NOT NULL
    UNION
    SELECT write_uuid FROM exec_verdict WHERE NOT failed
    UNION
    SELECT job_id FROM staged_commits WHERE whole
    UNION
    -- Hive's load (Spark's InsertIntoHiveTable, a Hive MoveTask) moves a job's files out of its
    -- .hive-staging_…/-ext-NNNNN dir into the table only after the job committed there
    SELECT write_uuid FROM events
    WHERE kind = 'rename' AND write_uuid IS NOT NULL AND regexp_matches(path, '/(\\.hive-staging[^/]*|-ext-[0-9]+)/')
      AND NOT {temp_target}
)
"""


def write_verdicts_sql() -> str:
    """CTEs (no WITH) ``write_failed`` (job_id, ts, event_id, app_id) and ``write_committed``
    (job_id): the write jobs the store shows failed (their end or abort, their SQL execution's
    failed end, a dynamic partition overwrite stopped half-way) or committed (their commit line,
    their SQL execution's good end, a whole dynamic overwrite, Hive's load of their files).
    ``job_id`` is the job's id as its events name it: a Spark write job's UUID, a MapReduce job."""
    return _VERDICTS.format(temp_path=in_temp_layer("path"), temp_target=in_temp_layer("target_path"),
                            staging=STAGING_DIR).strip()


_SQL = """
WITH {verdicts},
-- A removal takes away what was there before it: a dynamic overwrite deletes the final partition
-- dir and then renames the staged one there.
removed AS (
    SELECT coalesce(target_path, path) AS p, max(ts) AS ts FROM events WHERE kind IN ('delete', 'dedup_remove')
    GROUP BY ALL
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
-- _SUCCESS is optional: FileOutputCommitter writes none with
-- mapreduce.fileoutputcommitter.marksuccessfuljobs=false, and a dynamic partition overwrite
-- deletes it with its staging dir. An application set either way, or (for files naming no
-- application) every application of the store that sets one, says nothing by a missing marker.
markerless AS (
    SELECT app_id, bool_or(
               (detail->>'key' LIKE '%mapreduce.fileoutputcommitter.marksuccessfuljobs' AND lower(detail->>'value') = 'false')
               OR (detail->>'key' LIKE '%spark.sql.sources.partitionOverwriteMode' AND lower(detail->>'value') = 'dynamic'))
               AS off
    FROM events
    WHERE kind = 'conf' AND (detail->>'key' LIKE '%mapreduce.fileoutputcommitter.marksuccessfuljobs'
                             OR detail->>'key' LIKE '%spark.sql.sources.partitionOverwriteMode')
    GROUP BY app_id
),
unmarked_files AS (
    SELECT f.write_uuid AS job_id, f.app_id, f.ts, m.ts AS marker_ts,
           coalesce(k.off, CASE WHEN f.app_id IS NULL THEN g.all_off END, false) AS no_marker_expected
    FROM uuid_files f
    LEFT JOIN markers m ON m.location = f.location
    LEFT JOIN markerless k ON k.app_id IS NOT DISTINCT FROM f.app_id
    CROSS JOIN (SELECT bool_and(off) AS all_off FROM markerless) g
    WHERE f.write_uuid NOT IN (SELECT job_id FROM write_committed)
      AND f.write_uuid NOT IN (SELECT job_id FROM write_failed)
),
unmarked AS (
    SELECT job_id, any_value(app_id) AS app_id,
           -- an older _SUCCESS in the output: its writers mark their commits and this job did not
           bool_or(marker_ts IS NOT NULL) AS marked_before
    FROM unmarked_files
    GROUP BY job_id
    HAVING bool_and(ts > coalesce(marker_ts, '-infinity'::TIMESTAMP)) AND NOT bool_or(no_marker_expected)
),
jobs AS (
    SELECT job_id, event_id AS ref, ts AS ref_ts, 'failed' AS why, app_id, NULL AS marked_before FROM write_failed
    UNION ALL
    SELECT job_id, NULL, NULL, 'unmarked', app_id, marked_before FROM unmarked
),
outputs AS (
    SELECT event_id, ts, location, partition_spec, table_name, file_name, attempt_id,
           coalesce(target_path, path) AS p,
           CASE WHEN write_uuid IS NOT NULL THEN write_uuid WHEN job_id IS NOT NULL THEN job_id
                WHEN attempt_id IS NOT NULL
                THEN 'job_' || regexp_extract(attempt_id, '^attempt_([0-9]+_[0-9]+)_', 1)
                -- a dynamic overwrite's commit moving a staged partition dir into the output
                WHEN kind = 'rename' THEN nullif(regexp_extract(path, '{staging}', 1), '') END AS job_key
    FROM partition_events
    WHERE kind IN ('task_commit', 'rename', 'file') AND location IS NOT NULL
      AND (write_uuid IS NOT NULL OR job_id IS NOT NULL OR attempt_id IS NOT NULL
           OR (kind = 'rename' AND contains(path, '/.spark-staging-')))
      AND coalesce(detail->>'dir', 'false') <> 'true'
),
suspects AS (
    SELECT o.*, j.ref, j.ref_ts, j.why, j.app_id, j.marked_before
    FROM outputs o JOIN jobs j ON j.job_id = o.job_key
),
visible AS (
    SELECT s.* FROM suspects s
    ANTI JOIN removed r ON r.p = s.p AND NOT r.ts < s.ts
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
       any_value(app_id) AS app_id, bool_or(marked_before) AS marked_before, {attempts_list} AS attempts
FROM visible v LEFT JOIN file_ties fa ON fa.event_id = v.event_id
GROUP BY location, partition_spec, job_key, why
)
SELECT g.* EXCLUDE (app_id),
       coalesce(c.algorithm, CASE WHEN g.app_id IS NULL THEN (SELECT algorithm FROM agreed) END) AS algorithm
FROM grouped g LEFT JOIN conf c ON c.app_id = g.app_id
ORDER BY location, partition_spec, job
""".format(verdicts=write_verdicts_sql(), staging=STAGING_DIR, temp_s_p=in_temp_layer("s.p"), temp_path=in_temp_layer("path"), file_attempts=file_attempts_sql("visible").strip(),
           attempts_list=ATTEMPTS_LIST)


def _confidence(row) -> str:
    """A job's own failure is certain; a missing _SUCCESS alone is not (the marker is optional),
    less so where the output never had one."""
    if row["why"] != "unmarked":
        return "high"
    return "medium" if row["marked_before"] else "low"


def _weak(row) -> str:
    if row["marked_before"]:
        return "medium confidence: an older _SUCCESS in the output shows its writers mark their commits"
    return "low confidence: the output holds no _SUCCESS at all; marksuccessfuljobs=false and Hive loads write none"


class PartialOutput(SqlDetector):
    """A job failed or was aborted, yet output its tasks committed is visible in the destination.

    Symptom: a partition holds part of a job's rows although the job failed: readers see a
    partial result (7 of 8 part files, say) and a retry appends to it.
    Cause: FileOutputCommitter algorithm version 2 (mapreduce.fileoutputcommitter.algorithm.version=2)
    moves each task's output straight into the destination at task commit, so when the job later
    fails, abortJob cannot take the committed files back; direct committers behave the same.
    A write job the store shows neither failing nor committing (no end, commit line, SQL
    execution end, dynamic-overwrite move or Hive load of it) whose files are newer than every
    _SUCCESS of the output is reported too, with medium or low confidence: _SUCCESS is optional
    (marksuccessfuljobs=false, a dynamic partition overwrite, a Hive load leave none), and an
    application that turns it off is not judged by it.
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
            # no end, commit or abort of the job in the store: only the missing _SUCCESS speaks
            return (
                f"write job {row['job']} left {what} in {where(row)} and never wrote _SUCCESS after "
                f"them, and the store holds no end of it: it did not commit, unless its committer "
                f"wrote no _SUCCESS ({_weak(row)}){algo}{by}"
            )
        return f"failed job {row['job']} left {what} in {where(row)}{algo}{by}"

    def detail(self, row):
        d = {"job": row["job"], "committed": False, "evidence": row["why"], "files": list(row["files"] or []),
             "algorithm": row["algorithm"], "confidence": _confidence(row)}
        if row["attempts"]:
            d["attempts"] = [dict(a) for a in row["attempts"]]
        return d
