"""CS107 metastore-fs-mismatch."""

from __future__ import annotations

from commitsleuth.forensics import storage
from commitsleuth.forensics.detectors.base import SqlDetector, in_temp_layer, where

# The metastore holds the partition (added, altered, or an add found it already there) and its
# directory itself was deleted afterwards, with no write into it and no drop of the partition
# since. 'load' lines state an intention, not files, so they do not count as a write; a file
# created in the directory (HDFS create makes its parent, an object store PUT needs none) does.
_SQL = """
WITH dir_deletes AS (
    SELECT coalesce(part_location, part_table) AS pkey, part_spec, ts, event_id, actor,
           part_location, part_table, coalesce(target_path, path) AS p
    FROM partition_events
    WHERE kind = 'delete' AND file_name IS NULL AND part_spec IS NOT NULL AND ts IS NOT NULL
),
-- only the partitions whose directory was deleted are looked at further
touched AS (
    SELECT coalesce(e.part_location, e.part_table) AS pkey, e.part_spec, e.kind, e.status, e.ts,
           e.event_id, coalesce(e.target_path, e.path) AS p
    FROM partition_events e
    SEMI JOIN dir_deletes d ON d.pkey = coalesce(e.part_location, e.part_table) AND d.part_spec = e.part_spec
    WHERE e.kind IN ('partition_add', 'partition_alter', 'partition_exists', 'dir_create', 'rename',
                     'file_create', 'task_commit', 'file', 'partition_drop')
      AND e.ts IS NOT NULL
),
reg AS (
    SELECT pkey, part_spec, min(ts) AS ts, arg_min(event_id, ts) AS event_id
    FROM touched
    WHERE kind IN ('partition_add', 'partition_alter', 'partition_exists') AND coalesce(status, 'ok') <> 'failed'
    GROUP BY ALL
),
after AS (
    SELECT pkey, part_spec, max(ts) AS ts
    FROM touched
    WHERE kind IN ('dir_create', 'rename', 'file_create', 'task_commit', 'file', 'partition_drop') AND NOT {temp_p}
    GROUP BY ALL
),
-- each delete with the last registration of its partition before it (reg_ts): a running max over
-- the partition's deletes and registrations in time order, deletes first at a tie, so only what
-- came strictly before counts. Not a correlated max(): Spark decorrelates that into a nested loop
-- join on ts < ts over every ts of partition_events, quadratic (issue 33, 10M events).
deletes AS (
    SELECT * FROM (
        SELECT *, max(reg) OVER (PARTITION BY pkey, part_spec ORDER BY ts, reg NULLS FIRST
                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reg_ts
        FROM (SELECT *, NULL AS reg FROM dir_deletes
              UNION ALL
              SELECT y.pkey, y.part_spec, y.ts, NULL, NULL, NULL, NULL, NULL, y.ts FROM touched y
              WHERE coalesce(y.status, 'ok') <> 'failed'
                AND y.kind IN ('partition_add', 'partition_alter', 'partition_exists')
             ) AS u
    ) AS w
    WHERE reg IS NULL
)
SELECT any_value(d.part_location) AS location, d.part_spec AS partition_spec,
       any_value(d.part_table) AS table_name,
       -- an unnamed actor (a delete with no user, thread or job) is left out, as Spark's lists do
       coalesce(list(DISTINCT d.actor ORDER BY d.actor) FILTER (WHERE d.actor IS NOT NULL), []) AS actors,
       list_sort(list_distinct(list(d.event_id) || [any_value(r.event_id)])) AS evidence,
       any_value(r.ts) AS t0, max(d.ts) AS t1
FROM deletes d
JOIN reg r ON r.pkey = d.pkey AND r.part_spec = d.part_spec AND d.ts > r.ts
LEFT JOIN after a ON a.pkey = d.pkey AND a.part_spec = d.part_spec
WHERE (a.ts IS NULL OR a.ts < d.ts) AND NOT {temp_dp}
  -- a drop since the last registration before the delete: the partition was no longer registered
  AND NOT EXISTS (SELECT 1 FROM touched x
                  WHERE x.pkey = d.pkey AND x.part_spec = d.part_spec AND x.kind = 'partition_drop' AND x.ts < d.ts
                    AND x.ts >= d.reg_ts)
GROUP BY d.pkey, d.part_spec
"""

# Deleted data, whatever registered the partition (or nothing did): every data file that reached
# the partition (file_fates of migration 0040: renamed, created, copied or listed there) was
# removed afterwards - each object on its own, as object stores delete, or with its directory -
# by a principal (storage user, query, application, job, thread) that wrote none of them, nothing
# was written there again, and no metastore drop of the partition said it was meant (a drop after
# the data came, or one before it that no registration followed: the files were then in a
# dropped partition's directory).
_DELETED_DATA_SQL = """
lost AS MATERIALIZED (SELECT keys FROM fate_keys()),  -- the partitions a removal touched
fates AS MATERIALIZED (
    SELECT * FROM file_fates_at((SELECT keys FROM lost)) WHERE partition_spec IS NOT NULL
),
gone AS MATERIALIZED (
    SELECT location, partition_spec, any_value(table_name) AS table_name, min(ts) AS t0, max(removed_at) AS t1,
           list(DISTINCT {'event': removed_event, 'by': removed_by, 'principals': removed_principals}) AS removals,
           list(event_id) AS files,
           list_distinct(flatten(list([user, actor, query_id, app_id, job_id]))) AS writers
    FROM fates
    GROUP BY location, partition_spec
    HAVING bool_and(removed_event IS NOT NULL) AND bool_or(removed_how <> 'dedup')
),
removers AS (  -- the removals by a principal (storage user, actor, query, application, job) that wrote none of the files
    SELECT location, partition_spec, x.event AS event_id, x.by AS actor
    FROM (SELECT *, unnest(removals) AS x FROM gone)
    WHERE NOT list_has_any(writers, x.principals)
),
drops AS (
    SELECT DISTINCT part_location AS location, part_spec AS partition_spec, ts FROM partition_events
    WHERE kind = 'partition_drop' AND part_spec IS NOT NULL AND ts IS NOT NULL
),
readded AS (
    SELECT DISTINCT part_location AS location, part_spec AS partition_spec, ts FROM partition_events
    WHERE kind IN ('partition_add', 'partition_alter', 'partition_exists')
      AND coalesce(status, 'ok') <> 'failed' AND part_spec IS NOT NULL AND ts IS NOT NULL
),
dropped AS (  -- each drop with the first registration after it (a join, not a subquery two levels
              -- deep in deleted_data: Spark resolves no column of a query two levels out)
    SELECT d.location, d.partition_spec, d.ts, min(r.ts) AS readded_at
    FROM drops d LEFT JOIN readded r ON r.location IS NOT DISTINCT FROM d.location
         AND r.partition_spec = d.partition_spec AND r.ts > d.ts
    GROUP BY d.location, d.partition_spec, d.ts
),
deleted_data AS (
    SELECT g.location, g.partition_spec, any_value(g.table_name) AS table_name,
           coalesce(list(DISTINCT x.actor ORDER BY x.actor) FILTER (WHERE x.actor IS NOT NULL), []) AS actors,
           list_sort(list_distinct(any_value(g.files) || list(x.event_id))) AS evidence,
           any_value(g.t0) AS t0, any_value(g.t1) AS t1, 'deleted data' AS how
    FROM gone g JOIN removers x ON x.location = g.location AND x.partition_spec = g.partition_spec
    WHERE NOT EXISTS (SELECT 1 FROM dropped d WHERE d.location IS NOT DISTINCT FROM g.location
                      AND d.partition_spec = g.partition_spec
                      AND (d.ts >= g.t0  -- dropped after its data came: the removal was meant
                           -- dropped before, not registered again: files a late writer left in
                           -- a dropped partition's directory are no partition's data
                           OR d.readded_at IS NULL OR d.readded_at > g.t1))
    GROUP BY g.location, g.partition_spec
)"""

_SQL = """
WITH registered AS ({registered}),
{deleted_data}
SELECT *, 'registered' AS how FROM registered
UNION ALL
SELECT * FROM deleted_data d  -- the registered arm already tells of these
WHERE NOT EXISTS (SELECT 1 FROM registered r WHERE r.location IS NOT DISTINCT FROM d.location
                  AND r.partition_spec = d.partition_spec)
ORDER BY location NULLS LAST, table_name, partition_spec
""".format(registered=_SQL.format(temp_p=in_temp_layer("p"), temp_dp=in_temp_layer("d.p")),
           deleted_data=_DELETED_DATA_SQL.strip())


_UNNAMED = "by a principal its record does not name"


def _named(row) -> str | None:
    """The finding's actors, named (the SQL leaves out an actor the evidence does not name), or
    None when no record names one (a Hive 0.x log line, no thread, no query)."""
    return ", ".join(row["actors"]) or None


class MetastoreMismatch(SqlDetector):
    """A partition's data was deleted: its directory after the metastore registered it, or every
    file loaded into it by someone who wrote none of them.

    Symptom: SHOW PARTITIONS lists the partition (or a job reads it), but reading it fails or
    returns nothing: its directory is gone (or in the trash), or each of its objects was deleted.
    Cause: something deleted the partition directory after the partition was registered and
    nothing wrote it again, or a principal other than its writers (another user through
    HiveServer2, a cleanup or retention job) deleted or trashed every file loaded into it - on an
    object store object by object, usually without a directory marker - and nothing reloaded it:
    a racing loader's cleanup after a failed add_partition (HIVE-20725), a manual or scripted
    delete, a retention job working from the filesystem side.
    Remedy: restore the directory from the trash (the evidence shows who moved it there and
    when), or the objects' previous versions on a versioned bucket, or re-run the partition's load; apply HIVE-20725; drop partitions through the
    metastore (ALTER TABLE … DROP PARTITION), never by deleting directories; MSCK REPAIR TABLE
    only re-syncs what is left.
    """

    code = "CS107"
    name = "metastore-fs-mismatch"
    severity = "high"
    sql = _SQL

    def finish(self, con, findings):
        return storage.annotate(con, findings)  # who deleted it, per the storage's records

    def summary(self, row):
        named = _named(row)
        if row["how"] == "deleted data":
            by = f" by {named}, who wrote none of them," if named else f", {_UNNAMED},"
            return f"every file loaded into {where(row)} was removed afterwards{by} and nothing wrote it again"
        if named is None:
            return (f"{where(row)} is registered in the metastore but its directory was deleted afterwards, "
                    f"{_UNNAMED}, and nothing wrote it again")
        return (
            f"{where(row)} is registered in the metastore but {named} deleted "
            "its directory afterwards and nothing wrote it again"
        )
