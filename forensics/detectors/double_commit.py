"""CS101 double-commit."""

from __future__ import annotations

import re

from commitsleuth.forensics.detectors.base import SqlDetector, where
from commitsleuth.forensics.storage import DOUBLE_WRITES_SQL
from commitsleuth.forensics.file_attempts import ATTEMPTS_LIST, file_attempts_sql, spark_attempt_words

# Three ways one task's output lands twice:
#  - Hive-named files: a task renamed its file into the output (outside the commit protocol) or
#    an inventory lists it, and two attempt suffixes of one task id survive (000005_0, 000005_1);
#  - commits: two attempts of one task both committed (Saved output of task / Committed);
#  - Spark attempts: two attempts of one (stage, partition) both ended Success having written
#    bytes. A speculative copy killed by 'another attempt succeeded' ended Killed: it is not one.
_SQL = """
WITH removed AS (
    SELECT DISTINCT location, partition_spec, file_name FROM events
    WHERE kind IN ('dedup_remove', 'delete') AND file_name IS NOT NULL
),
-- the S3A magic committer: an attempt's pending write under __magic names the final path its
-- upload becomes when the job commits (s3-access's detail.magic_dest); one attempt per path
magic AS (
    SELECT detail->>'magic_dest' AS dest, min(attempt_id) AS magic_attempt, arg_min(host, event_id) AS magic_host FROM events
    WHERE contains(path, '/__magic') AND attempt_id IS NOT NULL AND detail->>'magic_dest' IS NOT NULL
    GROUP BY 1 HAVING count(DISTINCT attempt_id) = 1
),
named AS (
    SELECT event_id, ts, app_id, location, partition_spec, table_name, file_name,
           -- a task per subdirectory of the partition: each UNION ALL branch numbers its own tasks
           CASE WHEN contains(file_name, '/') THEN regexp_extract(file_name, '^.*/') ELSE '' END || file_task AS file_task,
           file_attempt,
           coalesce(attempt_id, magic_attempt) AS attempt_id, coalesce(attempt_id, magic_attempt, 'file ' || file_name) AS actor,
           -- the writing client's address (of a completed upload: the attempt's that wrote it)
           CASE WHEN kind = 'file_create' THEN CASE WHEN p.attempt_id IS NULL THEN magic_host ELSE host END END AS create_host
    FROM partition_events p LEFT JOIN magic m ON p.attempt_id IS NULL AND m.dest = p.path
    WHERE file_task IS NOT NULL AND location IS NOT NULL AND write_uuid IS NULL
      AND (kind = 'rename' OR (kind = 'file' AND file_attempt IS NOT NULL AND NOT is_temp)
           -- an S3A committer's job commit completed a task's multipart upload into place (the
           -- job's record: the attempt is the one whose magic path named it, else the file); a
           -- rename on S3 (Hive's MoveTask out of .hive-staging, a v1 commit) copies into place
           OR (kind = 'file_create' AND NOT is_temp AND file_attempt IS NOT NULL
               AND detail->>'cmd' IN ('REST.POST.UPLOAD', 'REST.COPY.OBJECT'))
           -- a direct write: an attempt created its own file (NNNNNN_A) in the final partition, no rename;
           -- one name created by two attempts is the storage arm's
           OR (kind = 'file_create' AND file_attempt IS NOT NULL AND attempt_id IS NOT NULL AND NOT is_temp))
),
-- a delete of the partition directory, of a directory above it (a day's dt=1 holding its hr=N
-- partitions) or of the location after a file removes it too
dir_removed AS (
    SELECT location, partition_spec, max(ts) AS ts FROM (
        SELECT location, partition_spec, ts FROM events
        WHERE kind = 'delete' AND file_name IS NULL AND location IS NOT NULL AND ts IS NOT NULL
        UNION ALL  -- a table's directory (DROP TABLE): the path reads as a file of its parent,
                   -- of a partition of it where a k=v directory holds tables (hdfs://nn/d/env=prod/t)
        SELECT location || '/' || coalesce(partition_spec || '/', '') || file_name, NULL, ts FROM events
        WHERE kind = 'delete' AND file_name IS NOT NULL AND location IS NOT NULL AND ts IS NOT NULL)
    GROUP BY ALL
),
-- a delete of a directory inside the partition (or table): HIVE_UNION_SUBDIR_1, a list-bucketing
-- directory, reads as a file of the partition; the files whose names start with it go with it
subdir_removed AS (
    SELECT location, partition_spec, file_name || '/' AS subdir, max(ts) AS ts FROM events
    WHERE kind = 'delete' AND file_name IS NOT NULL AND location IS NOT NULL AND ts IS NOT NULL
    GROUP BY ALL
),
surviving AS (
    SELECT n.* FROM named n
    ANTI JOIN removed r
      ON r.location = n.location
     AND r.partition_spec IS NOT DISTINCT FROM n.partition_spec
     AND r.file_name = n.file_name
    ANTI JOIN dir_removed d
      ON d.location = n.location
     AND (d.partition_spec IS NULL OR d.partition_spec = n.partition_spec
          OR starts_with(n.partition_spec, d.partition_spec || '/'))
     AND d.ts > n.ts
    ANTI JOIN subdir_removed s
      ON s.location = n.location AND s.partition_spec IS NOT DISTINCT FROM n.partition_spec
     AND starts_with(n.file_name, s.subdir) AND s.ts > n.ts
),
-- Any duplicate involves an attempt other than the first (suffix _1, attempt 1, a stage retry):
-- those few groups are the suspects among millions, and lists are built for them only.
file_suspects AS (
    SELECT DISTINCT location, partition_spec, file_task FROM surviving
    WHERE file_attempt IS DISTINCT FROM 0 OR attempt_id NOT LIKE '%\\_0' ESCAPE '\\'
),
file_rows AS (
    SELECT surviving.* FROM surviving SEMI JOIN file_suspects f
      ON f.location = surviving.location AND f.partition_spec IS NOT DISTINCT FROM surviving.partition_spec
     AND f.file_task = surviving.file_task
),
{file_attempts},
-- Where a renaming attempt ran, when its scheduler logged it (the Tez AM's "TaskAttempt: […]
-- submitted. Is using containerId: […] on NM: […]"): its first start that names a host.
started AS (
    SELECT s.attempt_id, arg_min(s.host, s.event_id) AS start_host,
           arg_min(s.detail->>'container', s.event_id) AS start_container, min(s.event_id) AS start_event
    FROM events s SEMI JOIN file_rows f ON f.attempt_id = s.attempt_id
    WHERE s.kind = 'attempt_start' AND s.host IS NOT NULL
    GROUP BY s.attempt_id
),
by_file AS (
    SELECT location, partition_spec, any_value(table_name) AS table_name, file_task AS task,
           any_value(r.app_id) AS app_id,
           list(DISTINCT coalesce(fa.attempt_id, actor) ORDER BY coalesce(fa.attempt_id, actor)) AS actors,
           list_sort(list_distinct(list(r.event_id)
               || coalesce(list(fa.attempt_event) FILTER (WHERE fa.attempt_event IS NOT NULL), [])
               || coalesce(list(st.start_event) FILTER (WHERE st.start_event IS NOT NULL), []))) AS evidence,
           min(ts) AS t0, max(ts) AS t1, list(DISTINCT file_name ORDER BY file_name) AS files,
           'files' AS how,
           {attempts_list} AS attempts,
           list_sort(list(DISTINCT {'attempt': coalesce(st.attempt_id, r.attempt_id),
                                    'host': coalesce(st.start_host, r.create_host), 'container': st.start_container})
                FILTER (WHERE st.attempt_id IS NOT NULL OR r.create_host IS NOT NULL)) AS ran
    FROM file_rows r LEFT JOIN file_ties fa ON fa.event_id = r.event_id
    LEFT JOIN started st ON st.attempt_id = r.attempt_id
    GROUP BY location, partition_spec, file_task
    HAVING count(DISTINCT coalesce(file_attempt, -1)) > 1 OR count(DISTINCT r.attempt_id) > 1
),
commit_rows AS (  -- narrow on purpose: millions of rows, only what finds the suspects
    -- of an application seen in several runs (a YARN restart, TIDs from 0 again) each run commits
    -- its own tasks: its run (migration 0078), NULL for an application of one run
    SELECT e.event_id, e.app_id, e.task_id, e.attempt_id, e.attempt_no, e.stage_attempt, r.run
    FROM events e LEFT JOIN attempt_event_runs r ON r.event_id = e.event_id
    WHERE e.attempt_id IS NOT NULL
      AND (e.kind = 'task_commit' OR (e.kind = 'attempt_end' AND e.status = 'success' AND e.size > 0))
),
later AS (  -- attempts other than a task's first (attempt 1, suffix _1, a stage retry)
    SELECT event_id, app_id, run, task_id,
           -- attempt_<job>_m_000005_1 -> task_<job>_m_000005 (string slicing, no regexp)
           coalesce(task_id, 'task' || attempt_id[8:length(attempt_id) - position('_' IN reverse(attempt_id))]) AS task
    FROM commit_rows
    WHERE NOT (coalesce(stage_attempt, 0) = 0
               AND CASE WHEN attempt_no IS NOT NULL THEN attempt_no = 0
                        ELSE attempt_id LIKE '%\\_0' ESCAPE '\\' END)
),
suspects AS (SELECT DISTINCT app_id, run, task_id, task FROM later),
members AS (
    SELECT event_id, run, task FROM later
    UNION
    SELECT c.event_id, s.run, s.task FROM commit_rows c JOIN suspects s
      ON c.task_id = s.task_id AND c.app_id IS NOT DISTINCT FROM s.app_id AND c.run IS NOT DISTINCT FROM s.run
    UNION
    -- (a Hadoop attempt id names no run: no record of one gives it a run, as no caller context does)
    SELECT c.event_id, s.run, s.task FROM commit_rows c JOIN suspects s
      ON s.task_id IS NULL AND c.attempt_id = 'attempt' || s.task[5:] || '_0'
     AND c.app_id IS NOT DISTINCT FROM s.app_id
),
by_commit AS (
    SELECT any_value(e.location) AS location, any_value(e.partition_spec) AS partition_spec,
           any_value(e.table_name) AS table_name, m.task, any_value(e.app_id) AS app_id,  -- one per group: the GROUP BY keys on it
           list(DISTINCT e.attempt_id ORDER BY e.attempt_id) AS actors,
           list(e.event_id ORDER BY e.event_id) AS evidence, min(e.ts) AS t0, max(e.ts) AS t1,
           NULL::VARCHAR[] AS files, 'commits' AS how, NULL AS attempts, NULL AS ran
    FROM members m JOIN events e ON e.event_id = m.event_id
    GROUP BY e.app_id, m.run, m.task
    HAVING count(DISTINCT e.attempt_id) > 1
)
SELECT * FROM by_file
UNION ALL
SELECT * FROM by_commit
UNION ALL
SELECT *, NULL AS attempts, NULL AS ran FROM ({storage})
ORDER BY location NULLS LAST, partition_spec, task, app_id NULLS LAST, t0 NULLS LAST
""".replace("{file_attempts}", file_attempts_sql("file_rows").strip()).replace("{attempts_list}", ATTEMPTS_LIST)


class DoubleCommit(SqlDetector):
    """Two or more attempts of one task published output into the same partition.

    Symptom: the partition holds the rows of one task twice, once per attempt (files such as
    000005_0 and 000005_1 side by side, or two commits of one Spark task), so counts and sums
    over it are inflated.
    Cause: a writer that publishes its own output instead of going through the output commit
    protocol (Hive's RCFileMergeMapper renames in close(); Hive on Tez names files per attempt
    and never asks canCommit; a Spark job with a direct, non-coordinated committer) ran more than
    once for the same task, typically because speculative execution launched a second attempt,
    and the output of both attempts survived.
    Remedy: disable speculative execution for jobs whose writer does not commit through the
    protocol (mapred.map.tasks.speculative.execution=false, hive.mapred.reduce.tasks.speculative.execution=false,
    spark.speculation=false; tez.am.speculation.enabled=false for Hive on Tez), or set
    hive.merge.mapfiles=false so RCFileMergeMapper is not used;
    apply HIVE-3149 for dynamic partitions and HIVE-27899/HIVE-27985 on Tez. Then delete the
    duplicate file of each listed task from the partition.
    """

    code = "CS101"
    name = "double-commit"
    severity = "high"
    sql = _SQL.replace("{storage}", DOUBLE_WRITES_SQL)

    def summary(self, row):
        n = len(row["actors"])
        if row["how"] == "storage":  # the storage's records: no file-naming convention needed
            return (f"{row['files'][0]} written by {n} attempts of {row['app_id']}: {', '.join(row['actors'])}")
        if row["how"] == "commits":
            app = f" of {row['app_id']}" if row["app_id"] else ""
            spark = re.fullmatch(r"(\d+)\.(\d+)", row["task"] or "")  # Spark's task id: <stage>.<index>
            task = f"{spark[2]} of stage {spark[1]}" if spark else row["task"]
            return f"task {task}{app} committed by {n} attempts: {', '.join(row['actors'])}"
        if row.get("attempts"):  # Spark's own task index names the task, not the file's number
            task = next((a["task_index"] for a in row["attempts"] if a.get("task_index") is not None), row["task"])
            return (f"task {task} of {row['app_id']} published by {n} attempts into {where(row)}: "
                    + "; ".join(spark_attempt_words(a) for a in row["attempts"]))
        ran = {r["attempt"]: r for r in row.get("ran") or ()}
        names = [_where_ran(a, ran[a]) if a in ran else a for a in row["actors"]]
        return f"task {row['task']} published by {n} attempts into {where(row)}: {', '.join(names)}"

    def detail(self, row):
        d = {"task": row["task"]}
        if row["files"]:
            d["files"] = list(row["files"])
        if row["app_id"]:
            d["app_id"] = row["app_id"]
        if row.get("attempts"):
            d["attempts"] = [dict(a) for a in row["attempts"]]
        if row.get("ran"):
            d["ran"] = [dict(r) for r in row["ran"]]
        return d


def _where_ran(actor: str, ran: dict) -> str:
    """The actor with its host and container, the host once (an attempt's label can end with it)."""
    said = [] if actor.endswith(f" on {ran['host']}") else [f"on {ran['host']}"]
    said += [ran["container"]] if ran["container"] else []
    return f"{actor} ({', '.join(said)})" if said else actor
