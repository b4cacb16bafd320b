"""CS110 empty-partition."""

from __future__ import annotations

from commitsleuth.forensics.detectors.base import SqlDetector, in_temp_layer

# A listing shows a partition directory with no data file in it: only markers (_SUCCESS),
# hidden files, temp layers, or nothing.
_SQL = """
WITH dirs AS (
    SELECT location, partition_spec, any_value(table_name) AS table_name,
           min(event_id) AS event_id, max(ts) AS ts
    FROM partition_events
    WHERE kind = 'file' AND detail->>'dir' = 'true' AND partition_spec IS NOT NULL AND NOT is_temp
    GROUP BY ALL
),
data AS (  -- data files of those partitions only; temp layers judged on that small set
    SELECT DISTINCT e.location, e.partition_spec
    FROM events e SEMI JOIN dirs d ON d.location = e.location AND d.partition_spec = e.partition_spec
    WHERE e.kind = 'file' AND coalesce(e.detail->>'dir', 'false') <> 'true'
      AND NOT regexp_matches(base_name(e.file_name), '^[._]')  -- sub/_SUCCESS is a marker too
      AND NOT {temp_e_path}
)
SELECT d.location, d.partition_spec, d.table_name, [d.partition_spec] AS actors,
       [d.event_id] AS evidence, d.ts AS t0, d.ts AS t1
FROM dirs d ANTI JOIN data USING (location, partition_spec)
ORDER BY location, partition_spec
""".format(temp_e_path=in_temp_layer("e.path"))


class EmptyPartition(SqlDetector):
    """A partition directory holds no data file.

    Symptom: the partition exists (and may be listed by the metastore) but reads return no rows.
    Cause: its files were deleted or never arrived: a racing loader's cleanup, a failed load, a
    dynamic-partition insert that produced no rows for it, or retention deleting files but not
    directories.
    Remedy: find who emptied it with `commitsleuth timeline` over the logs of the day it was
    written; re-run its load, or drop the partition if it should not exist.
    """

    code = "CS110"
    name = "empty-partition"
    severity = "low"
    sql = _SQL

    def summary(self, row):
        return f"{row['partition_spec']} in {row['location']} has no data file"
