"""CS107 metastore-fs-mismatch."""

from __future__ import annotations

from commitsleuth.forensics.detectors.base import SqlDetector, where

# The metastore holds the partition (added, altered, or an add found it already there) and its
# directory itself was deleted afterwards, with no write into it and no drop of the partition
# since. 'load' lines state an intention, not files, so they do not count as a write.
_SQL = """
WITH reg AS (
    SELECT coalesce(part_location, part_table) AS pkey, part_spec,
           min(ts) AS ts, arg_min(event_id, ts) AS event_id
    FROM partition_events
    WHERE kind IN ('partition_add', 'partition_alter', 'partition_exists')
      AND coalesce(status, 'ok') <> 'failed' AND ts IS NOT NULL AND part_spec IS NOT NULL
    GROUP BY ALL
),
dir_deletes AS (
    SELECT coalesce(part_location, part_table) AS pkey, part_spec, ts, event_id, actor,
           any_value(part_location) OVER w AS location, any_value(part_table) OVER w AS table_name
    FROM partition_events
    WHERE kind = 'delete' AND file_name IS NULL AND part_spec IS NOT NULL AND ts IS NOT NULL
      AND NOT is_temp
    WINDOW w AS (PARTITION BY coalesce(part_location, part_table), part_spec)
),
after AS (
    SELECT coalesce(part_location, part_table) AS pkey, part_spec, max(ts) AS ts
    FROM partition_events
    WHERE kind IN ('dir_create', 'rename', 'task_commit', 'file', 'partition_drop') AND ts IS NOT NULL
      AND part_spec IS NOT NULL AND NOT is_temp
    GROUP BY ALL
)
SELECT d.location, d.part_spec AS partition_spec, d.table_name,
       list(DISTINCT d.actor ORDER BY d.actor) AS actors,
       list_sort(list_distinct(list(d.event_id) || [any_value(r.event_id)])) AS evidence,
       any_value(r.ts) AS t0, max(d.ts) AS t1
FROM dir_deletes d
JOIN reg r ON r.pkey = d.pkey AND r.part_spec = d.part_spec AND d.ts > r.ts
LEFT JOIN after a ON a.pkey = d.pkey AND a.part_spec = d.part_spec
WHERE a.ts IS NULL OR a.ts < d.ts
GROUP BY d.pkey, d.location, d.part_spec, d.table_name
ORDER BY location NULLS LAST, table_name, partition_spec
"""


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

    def summary(self, row):
        return (
            f"{where(row)} is registered in the metastore but {', '.join(row['actors'])} deleted "
            "its directory afterwards and nothing wrote it again"
        )
