"""CS103 racing-loaders."""

from __future__ import annotations

from commitsleuth.forensics import storage
from commitsleuth.forensics.detectors.base import SqlDetector, where

# A writer (view loading_steps: a query, else a thread or application) has a window on a
# partition: its first to last loading step there. Two windows on one partition that overlap are a
# race; the race lost data when one writer deleted or trashed the partition (or a file in it) after
# another writer had loaded it.
# Where the only record is the storage's (a NameNode audit log with Hive's caller context), a
# query's loading is the files it moved into the partition by rename (file_fates of migration
# 0040): two queries that each moved files into one partition, within overlapping windows of
# their steps and moves there, raced. Only query against query: a thread of one log and the query
# id of another may be the same load seen twice, and one query's several moves are one load.
_SQL = """
WITH renamed AS (  -- files queries renamed into final partitions
    SELECT location, partition_spec, part_location, part_spec, query_id
    FROM partition_events
    WHERE kind = 'rename' AND query_id IS NOT NULL AND part_spec IS NOT NULL AND NOT is_temp
),
moves_at AS MATERIALIZED (  -- the partitions two or more queries renamed files into (narrows only)
    SELECT coalesce(list(DISTINCT r.location || '|' || coalesce(r.partition_spec, '')), []::VARCHAR[]) AS keys
    FROM renamed r SEMI JOIN (
        SELECT part_location, part_spec FROM renamed
        GROUP BY part_location, part_spec HAVING count(DISTINCT query_id) > 1) p
      ON p.part_location IS NOT DISTINCT FROM r.part_location AND p.part_spec = r.part_spec
),
moves AS (
    SELECT event_id, ts, 'load' AS kind, table_name AS part_table, location AS part_location,
           partition_spec AS part_spec, location AS pkey, query_id AS writer
    FROM file_fates_at((SELECT keys FROM moves_at))
    WHERE kind = 'rename' AND query_id IS NOT NULL AND partition_spec IS NOT NULL
),
loading AS (SELECT * FROM loading_steps),
steps AS (  -- columns named, not BY NAME: the same SQL runs on Spark (analyze --engine spark)
    SELECT event_id, ts, kind, part_table, part_location, part_spec, pkey, writer FROM loading
    UNION ALL
    SELECT event_id, ts, kind, part_table, part_location, part_spec, pkey, writer FROM moves
),
windows AS (
    SELECT pkey, part_spec, writer, min(ts) AS t0, max(ts) AS t1
    FROM loading GROUP BY pkey, part_spec, writer
),
movers AS (  -- a query that moved files in: its window holds its loading steps and its moves
    SELECT s.pkey, s.part_spec, s.writer, min(s.ts) AS t0, max(s.ts) AS t1
    FROM steps s SEMI JOIN moves m ON m.pkey = s.pkey AND m.part_spec = s.part_spec AND m.writer = s.writer
    GROUP BY s.pkey, s.part_spec, s.writer
),
racing AS (
    SELECT a.pkey, a.part_spec, a.writer FROM windows a JOIN windows b
      ON a.pkey = b.pkey AND a.part_spec = b.part_spec AND a.writer <> b.writer
     AND a.t0 <= b.t1 AND b.t0 <= a.t1
    UNION
    SELECT x.pkey, x.part_spec, x.writer FROM movers x JOIN movers y
      ON x.pkey = y.pkey AND x.part_spec = y.part_spec AND x.writer <> y.writer
     AND x.t0 <= y.t1 AND y.t0 <= x.t1
),
losses AS (
    SELECT d.pkey, d.part_spec, d.writer AS deleter, l.writer AS loader,
           d.event_id AS delete_id, l.event_id AS load_id
    FROM steps d JOIN steps l
      ON d.pkey = l.pkey AND d.part_spec = l.part_spec AND d.writer <> l.writer AND l.ts < d.ts
    WHERE d.kind = 'delete' AND l.kind = 'load'
),
loss AS (
    SELECT pkey, part_spec, list(DISTINCT deleter ORDER BY deleter) AS deleters,
           list(DISTINCT loader ORDER BY loader) AS loaders
    FROM losses
    SEMI JOIN racing USING (pkey, part_spec)
    GROUP BY pkey, part_spec
),
raced AS (  -- when each raced partition's race began
    SELECT x.pkey, x.part_spec, min(x.ts) AS t0
    FROM steps x JOIN racing w ON w.pkey = x.pkey AND w.part_spec = x.part_spec AND w.writer = x.writer
    GROUP BY x.pkey, x.part_spec
),
cleanup AS (  -- deletes there from then on by no racing writer: a storage record of the losing loader
    -- cleanup (S3 access log) names its client, not the metastore thread or query that raced
    SELECT d.pkey, d.part_spec, list(d.event_id ORDER BY d.ts, d.event_id) AS ids,
           list(DISTINCT d.writer ORDER BY d.writer) AS cleaners
    FROM steps d JOIN raced p ON p.pkey = d.pkey AND p.part_spec = d.part_spec AND d.ts >= p.t0
    ANTI JOIN racing o ON o.pkey = d.pkey AND o.part_spec = d.part_spec AND o.writer = d.writer
    WHERE d.kind = 'delete'
    GROUP BY d.pkey, d.part_spec
)
SELECT any_value(s.part_location) AS location, s.part_spec AS partition_spec,
       any_value(s.part_table) AS table_name,
       list(DISTINCT s.writer ORDER BY s.writer) AS actors,
       list_concat(list(s.event_id ORDER BY s.ts, s.event_id), coalesce(any_value(c.ids), []::BIGINT[])) AS evidence,
       min(s.ts) AS t0, max(s.ts) AS t1,
       any_value(l.deleters) AS deleters, any_value(l.loaders) AS loaders, any_value(c.cleaners) AS cleaners,
       CASE WHEN any_value(l.deleters) IS NOT NULL THEN 'critical' END AS severity
FROM steps s
JOIN racing r ON r.pkey = s.pkey AND r.part_spec = s.part_spec AND r.writer = s.writer
LEFT JOIN cleanup c ON c.pkey = s.pkey AND c.part_spec = s.part_spec
LEFT JOIN loss l ON l.pkey = s.pkey AND l.part_spec = s.part_spec
GROUP BY s.pkey, s.part_spec
ORDER BY location NULLS LAST, table_name, partition_spec
"""


class RacingLoaders(SqlDetector):
    """Two writers loaded the same partition at the same time; one may have deleted the other's data.

    Symptom: the metastore lists the partition but its directory is empty or missing (or holds
    only one writer's files), while every load reported success.
    Cause: the same load ran twice concurrently (a doubly-submitted HiveServer2 request handled
    by two threads, two schedulers, a retried job): the loser of add_partition_core created the
    directory, failed to insert the partition (Duplicate entry / AlreadyExistsException) and
    deleted the directory the winner had just filled (HIVE-20725, HIVE-24428, HIVE-29744).
    Where only the NameNode audit log recorded the loads, the writers are two queries (Hive's
    caller context) that each renamed files out of their staging directories into the partition
    within overlapping windows; one query's several renames are one load. Where the metastore
    audit recorded them, the writers are its handler threads (one per connection, with the user
    and client address of their lines), each window running from the thread's get_partition
    check to its add_partition; deletes of the partition from the race on by a client outside
    it (an S3 access log's record of the losing loader's cleanup) are named with the finding.
    Severity is critical when a delete followed another writer's load: that data is gone.
    Remedy: apply HIVE-20725 (re-check the partition before deleting the directory it created),
    make loads idempotent and single-flight (one scheduler run per partition, reject duplicate
    submissions), then re-run the load of every partition listed here to restore its data.
    """

    code = "CS103"
    name = "racing-loaders"
    severity = "high"
    sql = _SQL

    def finish(self, con, findings):
        for f in findings:  # a metastore check is a step of its add's event: that event once
            f.evidence = list(dict.fromkeys(f.evidence))
        return storage.annotate(con, findings)  # who deleted it, per the storage's records

    def summary(self, row):
        writers = ", ".join(row["actors"])
        if row["deleters"]:
            return (
                f"{', '.join(row['deleters'])} deleted {where(row)} after "
                f"{', '.join(row['loaders'])} had loaded it: data lost (writers racing: {writers})"
            )
        return f"{len(row['actors'])} writers loaded {where(row)} at the same time: {writers}"

    def detail(self, row):
        d = {"writers": list(row["actors"])}
        if row["deleters"]:
            d.update(data_loss=True, deleted_by=list(row["deleters"]), loaded_by=list(row["loaders"]))
        if row["cleaners"]:
            d["deleted_after_race_by"] = list(row["cleaners"])
        return d
