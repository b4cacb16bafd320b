"""CS102 late-commit."""

from __future__ import annotations

from commitsleuth.forensics.detectors.base import SqlDetector, in_temp_layer, where

# A task-level publish (a rename into the output, a task commit) is late when it happens after
#  - the job-level move of output of the same Hive query ('Moving tmp dir', whose first move starts
#    dedup: HIVE-27985; jobCloseOp on Tez), or after the write job it belongs to committed (same
#    write-job id), or
#  - its own attempt was killed (a zombie: SPARK-39195 / SPARK-48292, MR kill transitions), or
#  - the job's dedup of the same Hive scratch directory had already begun (its first 'Duplicate
#    taskid file removed'): a rename then is one the dedup's listing missed (HIVE-25561/27985).
#    Modern Hive stages under <table>/.hive-staging_…, which the location peels: the scratch
#    directory (the path up to -ext-N) is what ties a rename to its own query's move and dedup.
# Equi-joins only, so it stays cheap on millions of events.
_SCRATCH = "regexp_extract({p}, '^(.*)/(?:_task_tmp\\.|_tmp\\.)?-ext-[0-9]+(?:\\.moved|\\.intermediate)?(?:/|$)', 1)"
_SQL = """
WITH pubs AS (
    SELECT event_id, ts, kind, location, partition_spec, table_name, attempt_id, app_id, task_id,
           coalesce(write_uuid, job_id) AS write_job, coalesce(attempt_id, thread) AS actor,
           {scratch_target} AS scratch
    FROM events
    WHERE kind IN ('rename', 'task_commit') AND ts IS NOT NULL
),
dedups AS (
    SELECT {scratch_path} AS scratch, min(ts) AS ts, arg_min(event_id, ts) AS event_id
    FROM events WHERE kind = 'dedup_remove' AND ts IS NOT NULL
    GROUP BY ALL HAVING scratch <> ''
),
job_moves AS (
    SELECT {scratch_target} AS scratch, min(ts) AS ts, arg_min(event_id, ts) AS event_id
    FROM events
    WHERE kind = 'publish' AND ts IS NOT NULL
    GROUP BY ALL HAVING scratch <> ''
),
job_commits AS (
    SELECT job_id, min(ts) AS ts, arg_min(event_id, ts) AS event_id
    FROM events WHERE kind = 'job_commit' AND ts IS NOT NULL AND job_id IS NOT NULL
    GROUP BY job_id
),
kills AS (
    SELECT attempt_id, min(ts) AS ts, arg_min(event_id, ts) AS event_id
    FROM events
    WHERE ts IS NOT NULL AND attempt_id IS NOT NULL
      AND ((kind = 'attempt_end' AND status = 'killed')
        OR (kind = 'attempt_state' AND upper(detail->>'to') LIKE 'KILL%'))
    GROUP BY attempt_id
),
late AS (
    SELECT p.*, 'after the job-level move of its output' AS why, j.event_id AS ref, j.ts AS ref_ts
    FROM pubs p JOIN job_moves j ON j.scratch = p.scratch AND p.ts > j.ts
    WHERE p.kind = 'rename'
    UNION ALL
    SELECT p.*, 'after write job ' || p.write_job || ' committed', j.event_id, j.ts
    FROM pubs p JOIN job_commits j ON j.job_id = p.write_job AND p.ts > j.ts
    UNION ALL
    SELECT p.*, 'after its attempt was killed', k.event_id, k.ts
    FROM pubs p JOIN kills k ON k.attempt_id = p.attempt_id AND p.ts > k.ts
    UNION ALL
    SELECT p.*, 'after the job began removeTempOrDuplicateFiles', d.event_id, d.ts
    FROM pubs p JOIN dedups d ON d.scratch = p.scratch AND p.ts > d.ts
    UNION ALL  -- Spark names the Hadoop attempt attempt_<ts>_<stage>_m_<index>_<TID> (migration 0018)
    SELECT p.* EXCLUDE (h), 'after its attempt was killed', a.event_id, a.finished
    FROM (SELECT *, regexp_extract(attempt_id, '^attempt_[0-9]+_([0-9]+)_m_([0-9]+)_([0-9]+)$',
                                   ['stage', 'task', 'tid']) AS h FROM pubs WHERE app_id IS NOT NULL) p
    JOIN spark_task_attempts a
      ON a.app_id = p.app_id AND a.stage_id = TRY_CAST(p.h.stage AS INTEGER)
     AND a.task_index = TRY_CAST(p.h.task AS INTEGER) AND a.tid = TRY_CAST(p.h.tid AS BIGINT)
    WHERE a.status = 'killed' AND p.ts > a.finished
    UNION ALL  -- a storage record's caller context names the attempt by its TID (task_id 'TID 58'):
               -- one attempt with the event log's or live capture's of that application and TID
    SELECT p.*, 'after its attempt was killed', a.event_id, a.finished
    FROM pubs p JOIN spark_task_attempts a
      ON a.app_id = p.app_id AND 'TID ' || a.tid = p.task_id
    WHERE p.task_id LIKE 'TID %' AND a.status = 'killed' AND p.ts > a.finished
    UNION ALL  -- a direct write seen by its time alone (a listing, live capture's inventory): a
               -- Hive-named file (000003_1) of the application's attempt with that index and attempt
               -- number, written more than a second after that attempt was killed (a zombie)
    SELECT w.event_id, w.ts, w.kind, w.location, w.partition_spec, w.table_name, w.label, w.app_id, NULL,
           NULL, w.label, NULL, 'after its attempt was killed', w.attempt_event, w.finished
    FROM (SELECT f.event_id, f.ts, f.kind, f.location, f.partition_spec, f.table_name, f.app_id,
                 a.label, a.event_id AS attempt_event, a.status, a.finished
          FROM events f JOIN spark_task_attempts a
            ON a.app_id = f.app_id AND a.task_index = TRY_CAST(f.file_task AS INTEGER)
           AND a.attempt_no = f.file_attempt AND a.launched <= f.ts
          WHERE f.kind IN ('file', 'file_create') AND f.file_attempt IS NOT NULL AND f.write_uuid IS NULL
            AND f.app_id IS NOT NULL AND f.ts IS NOT NULL AND NOT {temp_file}
          QUALIFY a.launched = max(a.launched) OVER (PARTITION BY f.event_id)) w  -- a retried stage: the latest
    WHERE w.status = 'killed' AND w.ts > w.finished + INTERVAL 1 SECOND
)
SELECT location, partition_spec, any_value(table_name) AS table_name, actor,
       [actor] AS actors, list(DISTINCT why ORDER BY why) AS whys,
       list(DISTINCT x ORDER BY x) AS evidence, min(ref_ts) AS t0, max(ts) AS t1
FROM (SELECT *, unnest([event_id, ref]) AS x FROM late)
GROUP BY location, partition_spec, actor
ORDER BY location NULLS LAST, partition_spec, actor
""".replace("{scratch_target}", _SCRATCH.format(p="target_path")).replace("{scratch_path}", _SCRATCH.format(p="path")) \
 .replace("{temp_file}", in_temp_layer("coalesce(f.target_path, f.path)"))


class LateCommit(SqlDetector):
    """A task published output after its job was already published, or after it was killed.

    Symptom: files that no dedup or job commit accounted for appear in the output: duplicated
    rows from a zombie attempt, or output of an attempt the scheduler believes it killed.
    Cause: the publish is not fenced by the commit protocol: a killed or losing attempt (often a
    speculative one) keeps running and renames or commits its file after the driver ran
    removeTempOrDuplicateFiles and moved the output (HIVE-27985), or after the write job
    committed; Spark tasks whose commit succeeded but which then failed are retried and commit
    again (SPARK-39195, SPARK-48292).
    Remedy: disable speculative execution for writers that publish outside the protocol
    (spark.speculation=false, hive.mapred.reduce.tasks.speculative.execution=false,
    tez.am.speculation.enabled=false), upgrade to
    releases with HIVE-27985/HIVE-27899 or SPARK-39195/SPARK-48292, and delete the late files
    listed here from the partition.
    """

    code = "CS102"
    name = "late-commit"
    severity = "high"
    sql = _SQL

    def summary(self, row):
        return f"{row['actor']} published into {where(row)} {' and '.join(row['whys'])}"

    def detail(self, row):
        return {"reasons": list(row["whys"])}
