"""CS104 same-name-overwrite."""

from __future__ import annotations

import json

from commitsleuth.forensics.detectors.base import SqlDetector, in_temp_layer, where

# LOAD DATA … INTO (no OVERWRITE) moves the source file into the partition under its own name;
# a file of that name already there is replaced. Two loads of one file name into one partition
# are that; an unpartitioned table's loads too (Hive.copyFiles moves files for loadTable and
# loadPartition alike). Sources in Hive/Spark staging dirs (INSERT's -ext-10000, .hive-staging)
# are not user files and are left out.
# A directory loaded (its path ends in '/' in the command) moves the files under it: its name is no
# file's, so the name arm leaves it out, and the stats arm below judges it.
# Where the log names no source file (the console, a directory loaded, Hive 0.x without
# threads), StatsTask's lines still tell: a LOAD INTO after which the partition's num_files did
# not grow while its total_size changed replaced a file. That is inferred, so stated as medium
# confidence, with the stats lines before and after as evidence.
_SQL = """
WITH queries AS (  -- a line's query: the last one its thread (or its threadless log) started
    SELECT source_id, coalesce(thread, '') AS thread, ts, line_no, query_id, raw FROM events
    WHERE kind = 'query_start' AND ts IS NOT NULL
      AND (query_id IS NOT NULL OR thread IS NULL)
),
commands AS (  -- each command of a thread, and the file it names if it is a LOAD DATA [LOCAL] INPATH '<path>'
               -- (Driver's 'Starting command: …'; Hive's grammar takes the path in '…' or "…"); another
               -- command in between names none. A path ending in '/' is a directory: the load moves
               -- the files under it, which the command does not name (its own name is no file's)
    SELECT source_id, thread, ts, cmd_event, cmd_path LIKE '%/' AS cmd_dir,
           nullif(regexp_extract(cmd_path, '([^/]+)$', 1), '') AS cmd_file
    FROM (SELECT source_id, coalesce(thread, '') AS thread, ts, event_id AS cmd_event,
                 regexp_extract(raw, '(?i)LOAD\\s+DATA\\s+(?:LOCAL\\s+)?INPATH\\s+[''"]([^''"]+)[''"]', 1) AS cmd_path
          FROM events
          WHERE ts IS NOT NULL AND kind = 'query_start')
),
loads AS (
    SELECT l.event_id, l.ts, l.source_id, l.part_location, l.part_table, l.part_spec, l.path,
           coalesce(l.query_id, q.query_id, l.thread, l.app_id,
                    CASE WHEN q.line_no IS NOT NULL THEN 'query at line ' || q.line_no END) AS actor,
           regexp_extract(rtrim(l.path, '/'), '[^/]+$') AS file,
           coalesce(l.detail->>'overwrite', 'false') = 'true'
               OR coalesce(regexp_matches(q.raw, '(?i)\\bOVERWRITE\\b'), false) AS overwrite,
           c.cmd_file, c.cmd_event, coalesce(c.cmd_dir, false) AS cmd_dir
    FROM partition_events l
    ASOF LEFT JOIN queries q
      ON q.source_id = l.source_id AND q.thread = coalesce(l.thread, '') AND l.ts >= q.ts
    ASOF LEFT JOIN commands c
      ON c.source_id = l.source_id AND c.thread = coalesce(l.thread, '') AND l.ts >= c.ts
    WHERE l.kind = 'load' AND coalesce(l.part_location, l.part_table) IS NOT NULL
      AND NOT {temp_path}
),
by_name AS (  -- two loads of one file name into one partition
    SELECT any_value(part_location) AS location, part_spec AS partition_spec,
           any_value(part_table) AS table_name, file,
           list(actor ORDER BY ts, event_id) AS loaders,
           list(DISTINCT actor ORDER BY actor) AS actors,
           list(event_id ORDER BY ts, event_id) AS evidence, min(ts) AS t0, max(ts) AS t1,
           NULL::JSON AS stats
    FROM loads
    WHERE NOT overwrite AND path IS NOT NULL AND NOT cmd_dir  -- a directory's name is no file's
    GROUP BY coalesce(part_location, part_table), part_spec, file
    HAVING count(*) > 1
),
stats AS (  -- StatsTask's view of the partition after each write
    SELECT event_id, ts, source_id, part_table, part_spec,
           TRY_CAST(detail->>'num_files' AS BIGINT) AS num_files,
           TRY_CAST(detail->>'total_size' AS BIGINT) AS total_size
    FROM partition_events
    WHERE kind = 'stats' AND part_spec IS NOT NULL AND ts IS NOT NULL
      AND detail->>'num_files' IS NOT NULL AND detail->>'total_size' IS NOT NULL
),
named_loads AS (  -- each load with the file name the previous load into its partition named
    SELECT *, lag(cmd_file) OVER w AS prev_file, lag(cmd_event) OVER w AS prev_event FROM loads
    WINDOW w AS (PARTITION BY part_table, part_spec ORDER BY ts, event_id)
),
stats_after AS (  -- each INTO load with the stats printed after it and those printed before it
    SELECT l.*, s1.event_id AS s1_id, s1.num_files AS files1, s1.total_size AS size1,
           s0.event_id AS s0_id, s0.num_files AS files0, s0.total_size AS size0
    FROM named_loads l
    JOIN LATERAL (
        SELECT * FROM stats s WHERE s.source_id = l.source_id AND s.part_table = l.part_table
          AND s.part_spec = l.part_spec AND s.ts >= l.ts
        ORDER BY s.ts, s.event_id LIMIT 1) s1 ON true
    JOIN LATERAL (
        SELECT * FROM stats s WHERE s.source_id = l.source_id AND s.part_table = l.part_table
          AND s.part_spec = l.part_spec AND s.ts < l.ts
        ORDER BY s.ts DESC, s.event_id DESC LIMIT 1) s0 ON true
    WHERE NOT l.overwrite
),
by_stats AS (  -- the load added bytes but no file: it replaced one of the same name
    SELECT any_value(part_location) AS location, part_spec AS partition_spec,
           any_value(part_table) AS table_name,
           -- the commands name one file for the replaced load and its replacement: stated, not inferred
           CASE WHEN bool_and(cmd_file = prev_file) THEN any_value(cmd_file) END AS file,
           list(actor ORDER BY ts, event_id) AS loaders,
           list(DISTINCT actor ORDER BY actor) FILTER (WHERE actor IS NOT NULL) AS actors,
           list_sort(list_distinct(flatten(list([s0_id, event_id, s1_id] ORDER BY ts, event_id))
               || coalesce(flatten(list([prev_event, cmd_event]) FILTER (WHERE cmd_file = prev_file)), []))) AS evidence,
           min(ts) AS t0, max(ts) AS t1,
           to_json(list({{files_before: files0, files_after: files1, size_before: size0, size_after: size1}}
                        ORDER BY ts, event_id)) AS stats
    FROM stats_after
    WHERE files1 <= files0 AND size1 <> size0
    GROUP BY part_table, part_spec
)
SELECT * FROM by_name
UNION ALL
SELECT * FROM by_stats b  -- only where the file names did not already say it
WHERE NOT EXISTS (SELECT 1 FROM by_name n WHERE n.table_name = b.table_name
                  AND n.partition_spec = b.partition_spec)
ORDER BY location NULLS LAST, table_name, partition_spec, file
""".format(temp_path=in_temp_layer("l.path"))


class SameNameOverwrite(SqlDetector):
    """A LOAD replaced a file of the same name already in the partition.

    Symptom: rows loaded earlier into a partition are gone; the partition holds only the last
    load's copy of a file that was loaded more than once.
    Cause: LOAD DATA … INTO TABLE … PARTITION without OVERWRITE moves each source file into the
    partition directory under its own name; when a file of that name is already there it is
    silently replaced (for example a log file appended to and loaded every 12 hours). Where the
    log names no source file, Hive's stats lines still show it: after a LOAD INTO the partition's
    num_files did not grow while its total_size changed (stated as medium confidence).
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
        if row["stats"] is not None and row["file"]:
            st = json.loads(row["stats"])[-1]
            return (
                f"{row['file']} was loaded again into {where(row)} by {row['loaders'][-1]} (the LOAD "
                f"commands name it) and num_files stayed at {st['files_after']} while total_size went "
                f"{st['size_before']} -> {st['size_after']}: the load replaced the earlier copy"
            )
        if row["stats"] is not None:
            st = json.loads(row["stats"])[-1]
            return (
                f"a LOAD INTO {where(row)} (by {row['loaders'][-1]}) left num_files at "
                f"{st['files_after']} while total_size went {st['size_before']} -> {st['size_after']}: "
                f"it replaced a file of the same name (medium confidence: inferred from Hive's stats "
                f"lines, the file names are not in the log)"
            )
        return (
            f"{row['file']} was loaded {n} times into {where(row)}; each load replaced the previous "
            f"copy (last by {row['loaders'][-1]})"
        )

    def detail(self, row):
        if row["stats"] is not None and row["file"]:
            return {"file": row["file"], "confidence": "high", "inferred_from": "commands and stats",
                    "loads": list(row["loaders"]), "stats": json.loads(row["stats"])}
        if row["stats"] is not None:
            return {"confidence": "medium", "inferred_from": "stats", "loads": list(row["loaders"]),
                    "stats": json.loads(row["stats"])}
        return {"file": row["file"], "loads": list(row["loaders"]), "confidence": "high"}
