"""CS101 double-commit."""

from __future__ import annotations

from commitsleuth.forensics.detectors.base import SqlDetector, where

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
named AS (
    SELECT event_id, ts, location, partition_spec, table_name, file_name, file_task, file_attempt,
           attempt_id, coalesce(attempt_id, 'file ' || file_name) AS actor
    FROM partition_events
    WHERE file_task IS NOT NULL AND location IS NOT NULL AND write_uuid IS NULL
      AND (kind = 'rename' OR (kind = 'file' AND file_attempt IS NOT NULL AND NOT is_temp))
),
surviving AS (
    SELECT n.* FROM named n
    ANTI JOIN removed r
      ON r.location = n.location
     AND r.partition_spec IS NOT DISTINCT FROM n.partition_spec
     AND r.file_name = n.file_name
),
-- Cheap aggregates find the few suspect groups among millions; lists are built for those only.
file_suspects AS (
    SELECT location, partition_spec, file_task FROM surviving
    GROUP BY ALL
    HAVING min(coalesce(file_attempt, -1)) <> max(coalesce(file_attempt, -1))
        OR min(attempt_id) <> max(attempt_id)
),
by_file AS (
    SELECT location, partition_spec, any_value(table_name) AS table_name, file_task AS task,
           NULL::VARCHAR AS app_id,
           list(DISTINCT actor ORDER BY actor) AS actors, list(event_id ORDER BY event_id) AS evidence,
           min(ts) AS t0, max(ts) AS t1, list(DISTINCT file_name ORDER BY file_name) AS files,
           'files' AS how
    FROM surviving SEMI JOIN file_suspects USING (location, partition_spec, file_task)
    GROUP BY location, partition_spec, file_task
),
commits AS (
    SELECT event_id, ts, app_id, location, partition_spec, table_name, attempt_id,
           CASE WHEN task_id IS NOT NULL THEN task_id
                ELSE regexp_replace(attempt_id, '^attempt_(.*)_[0-9]+$', 'task_\\1') END AS task
    FROM events
    WHERE attempt_id IS NOT NULL
      AND (kind = 'task_commit' OR (kind = 'attempt_end' AND status = 'success' AND size > 0))
),
commit_suspects AS (
    SELECT app_id, task FROM commits GROUP BY ALL HAVING min(attempt_id) <> max(attempt_id)
),
by_commit AS (
    SELECT any_value(location) AS location, any_value(partition_spec) AS partition_spec,
           any_value(table_name) AS table_name, task, app_id,
           list(DISTINCT attempt_id ORDER BY attempt_id) AS actors,
           list(event_id ORDER BY event_id) AS evidence, min(ts) AS t0, max(ts) AS t1,
           NULL::VARCHAR[] AS files, 'commits' AS how
    FROM commits SEMI JOIN commit_suspects s
      ON s.app_id IS NOT DISTINCT FROM commits.app_id AND s.task = commits.task
    GROUP BY app_id, task
)
SELECT * FROM by_file
UNION ALL
SELECT * FROM by_commit
ORDER BY location NULLS LAST, partition_spec, task
"""


class DoubleCommit(SqlDetector):
    """Two or more attempts of one task published output into the same partition.

    Symptom: the partition holds the rows of one task twice, once per attempt (files such as
    000005_0 and 000005_1 side by side, or two commits of one Spark task), so counts and sums
    over it are inflated.
    Cause: a writer that publishes its own output instead of going through the output commit
    protocol (Hive's RCFileMergeMapper renames in close(); Hive on Tez names files per attempt
    and never asks canCommit; a Spark job with a direct, non-coordinated committer) ran more than
    once for the same task, typically because speculative execution launched a second attempt,
    and both attempts finished.
    Remedy: disable speculative execution for jobs whose writer does not commit through the
    protocol (mapred.map.tasks.speculative.execution=false, hive.mapred.reduce.tasks.speculative.execution=false,
    spark.speculation=false), or set hive.merge.mapfiles=false so RCFileMergeMapper is not used;
    apply HIVE-3149 for dynamic partitions and HIVE-27899/HIVE-27985 on Tez. Then delete the
    duplicate file of each listed task from the partition.
    """

    code = "CS101"
    name = "double-commit"
    severity = "high"
    sql = _SQL

    def summary(self, row):
        n = len(row["actors"])
        if row["how"] == "commits":
            app = f" of {row['app_id']}" if row["app_id"] else ""
            return f"task {row['task']}{app} committed by {n} attempts: {', '.join(row['actors'])}"
        return f"task {row['task']} published by {n} attempts into {where(row)}: {', '.join(row['actors'])}"

    def detail(self, row):
        d = {"task": row["task"]}
        if row["files"]:
            d["files"] = list(row["files"])
        if row["app_id"]:
            d["app_id"] = row["app_id"]
        return d
