"""CS107 metastore-fs-mismatch."""

from __future__ import annotations

from commitsleuth.forensics import storage
from commitsleuth.forensics.detectors.base import SqlDetector, in_temp_layer, where

# The metastore holds the partition (added, altered, or an add found it already there) and its
# directory itself was deleted afterwards, with no write into it and no drop of the partition
# since. 'load' lines state an intention, not files, so they do not count as a write.
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
                     'task_commit', 'file', 'partition_drop')
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
    WHERE kind IN ('dir_create', 'rename', 'task_commit', 'file', 'partition_drop') AND NOT {temp_p}
    GROUP BY ALL
)
SELECT any_value(d.part_location) AS location, d.part_spec AS partition_spec,
       any_value(d.part_table) AS table_name,
       list(DISTINCT d.actor ORDER BY d.actor) AS actors,
       list_sort(list_distinct(list(d.event_id) || [any_value(r.event_id)])) AS evidence,
       any_value(r.ts) AS t0, max(d.ts) AS t1
FROM dir_deletes d
JOIN reg r ON r.pkey = d.pkey AND r.part_spec = d.part_spec AND d.ts > r.ts
LEFT JOIN after a ON a.pkey = d.pkey AND a.part_spec = d.part_spec
WHERE (a.ts IS NULL OR a.ts < d.ts) AND NOT {temp_dp}
GROUP BY d.pkey, d.part_spec
ORDER BY location NULLS LAST, table_name, partition_spec
""".format(temp_p=in_temp_layer("p"), temp_dp=in_temp_layer("d.p"))


class MetastoreMismatch(SqlDetector):
    """The metastore lists a partition whose directory was deleted afterwards.

    Symptom: SHOW PARTITIONS lists the partition, but reading it fails or returns nothing: its
    directory is gone (or in the trash) on the filesystem.
    Cause: something deleted the partition directory after the partition was registered and
    nothing wrote it again: a racing loader's cleanup after a failed add_partition (HIVE-20725),
    a manual or scripted delete, a retention job working from the filesystem side.
    Remedy: restore the directory from the trash (the evidence shows who moved it there and
    when) or re-run the partition's load; apply HIVE-20725; drop partitions through the
    metastore (ALTER TABLE … DROP PARTITION), never by deleting directories; MSCK REPAIR TABLE
    only re-syncs what is left.
    """

    code = "CS107"
    name = "metastore-fs-mismatch"
    severity = "high"
    sql = _SQL

    def run(self, con):
        return storage.annotate(con, super().run(con))  # who deleted it, per the storage's records

    def summary(self, row):
        return (
            f"{where(row)} is registered in the metastore but {', '.join(row['actors'])} deleted "
            "its directory afterwards and nothing wrote it again"
        )
