"""CS104 same-name-overwrite."""

from __future__ import annotations

from commitsleuth.forensics.detectors.base import SqlDetector, in_temp_layer, where

# LOAD DATA … INTO (no OVERWRITE) moves the source file into the partition under its own name;
# a file of that name already there is replaced. Two loads of one file name into one partition
# are that. Sources in Hive/Spark staging dirs (INSERT's -ext-10000, .hive-staging) are not
# user files and are left out.
_SQL = """
WITH queries AS (  -- a line's query: the last one its thread compiled in the same log
    SELECT source_id, thread, ts, query_id, raw FROM events
    WHERE kind = 'query_start' AND query_id IS NOT NULL AND thread IS NOT NULL AND ts IS NOT NULL
),
loads AS (
    SELECT l.event_id, l.ts, l.part_location, l.part_table, l.part_spec,
           coalesce(l.query_id, q.query_id, l.thread, l.app_id) AS actor,
           regexp_extract(rtrim(l.path, '/'), '[^/]+$') AS file,
           coalesce(l.detail->>'overwrite', 'false') = 'true'
               OR coalesce(regexp_matches(q.raw, '(?i)\\bOVERWRITE\\b'), false) AS overwrite
    FROM partition_events l
    ASOF LEFT JOIN queries q
      ON q.source_id = l.source_id AND q.thread = l.thread AND l.ts >= q.ts
    WHERE l.kind = 'load' AND l.path IS NOT NULL AND l.part_spec IS NOT NULL
      AND coalesce(l.part_location, l.part_table) IS NOT NULL
      AND NOT {temp_path}
)
SELECT any_value(part_location) AS location, part_spec AS partition_spec,
       any_value(part_table) AS table_name, file,
       list(actor ORDER BY ts, event_id) AS loaders,
       list(DISTINCT actor ORDER BY actor) AS actors,
       list(event_id ORDER BY ts, event_id) AS evidence, min(ts) AS t0, max(ts) AS t1
FROM loads
WHERE NOT overwrite
GROUP BY coalesce(part_location, part_table), part_spec, file
HAVING count(*) > 1
ORDER BY location NULLS LAST, table_name, partition_spec, file
""".format(temp_path=in_temp_layer("l.path"))


class SameNameOverwrite(SqlDetector):
    """A LOAD replaced a file of the same name already in the partition.

    Symptom: rows loaded earlier into a partition are gone; the partition holds only the last
    load's copy of a file that was loaded more than once.
    Cause: LOAD DATA … INTO TABLE … PARTITION without OVERWRITE moves each source file into the
    partition directory under its own name; when a file of that name is already there it is
    silently replaced (for example a log file appended to and loaded every 12 hours).
    Remedy: give every load its own partition level (loadseq=<epoch>_<host>_<pid> below the
    daily partition, as in the loadseq pattern) or rename each file to a unique name before
    LOAD; then reload the replaced data from its source.
    """

    code = "CS104"
    name = "same-name-overwrite"
    severity = "high"
    sql = _SQL

    def summary(self, row):
        n = len(row["loaders"])
        return (
            f"{row['file']} was loaded {n} times into {where(row)}; each load replaced the previous "
            f"copy (last by {row['loaders'][-1]})"
        )

    def detail(self, row):
        return {"file": row["file"], "loads": list(row["loaders"])}
