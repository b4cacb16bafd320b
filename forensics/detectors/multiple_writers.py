"""CS108 multiple-writers."""

from __future__ import annotations

from commitsleuth.forensics.detectors.base import SqlDetector, in_temp_layer, where

# Spark names every file of one write job part-NNNNN-<jobUUID>-cNNN; Hive names a second INSERT
# INTO's files NNNNNN_N_copy_M; a MapReduce job (Sqoop import, a streaming job) part-m-NNNNN or
# part-r-NNNNN: no UUID, no attempt, only its task. Published files of two UUIDs, of a UUID and
# Hive or MapReduce names, of Hive and MapReduce names, or copies, in one partition are two
# writers' output side by side. Two MapReduce jobs' files are not told apart by their names
# (Sqoop's --append renumbers its files so they do not collide): one writer.
_SQL = """
WITH raw_files AS NOT MATERIALIZED (
    SELECT event_id, ts, location, partition_spec, table_name, file_name, write_uuid, file_attempt,
           coalesce(target_path, path) AS p
    FROM events
    WHERE kind IN ('file', 'task_commit', 'rename') AND location IS NOT NULL
      AND file_task IS NOT NULL
      AND coalesce(detail->>'dir', 'false') <> 'true'
),
-- Integer aggregates over hashed keys find the partitions with two writers (temp copies may add
-- a suspect; they are judged below); the detail is built for those only.
suspects AS (
    SELECT hash(location, partition_spec) AS h FROM raw_files
    GROUP BY h
    HAVING min(hash({family})) <> max(hash({family}))
        OR bool_or(write_uuid IS NULL AND contains(file_name, '_copy_'))
),
files AS (
    SELECT f.*,
           coalesce(write_uuid, CASE WHEN regexp_matches(file_name, '_copy_[0-9]+')
                                     THEN 'hive _copy_' || regexp_extract(file_name, '_copy_([0-9]+)', 1)
                                     WHEN file_attempt IS NULL THEN 'mapreduce files'
                                     ELSE 'hive files' END) AS writer
    FROM raw_files f
    WHERE hash(location, partition_spec) IN (SELECT h FROM suspects)
      AND NOT {temp_p}
),
removed AS (
    SELECT DISTINCT coalesce(target_path, path) AS p FROM events WHERE kind IN ('delete', 'dedup_remove')
),
writers AS (
    SELECT location, partition_spec, any_value(table_name) AS table_name, writer,
           min(event_id) AS event_id, min(ts) AS t0, max(ts) AS t1, count(*) AS files
    FROM files ANTI JOIN removed USING (p)
    GROUP BY ALL
)
SELECT location, partition_spec, any_value(table_name) AS table_name,
       list(writer ORDER BY writer) AS actors, list(event_id ORDER BY event_id) AS evidence,
       list(files ORDER BY writer) AS counts, min(t0) AS t0, max(t1) AS t1
FROM writers
GROUP BY location, partition_spec
HAVING count(*) > 1
ORDER BY location, partition_spec
""".format(temp_p=in_temp_layer("p"),
           family="coalesce(write_uuid, CASE WHEN file_attempt IS NULL THEN 'mapreduce' ELSE 'hive' END)")


class MultipleWriters(SqlDetector):
    """Files of more than one write job sit in one partition.

    Symptom: a partition that should hold one job's output holds files of two or more write jobs
    (two Spark job UUIDs in the part file names, Hive _copy_N files, MapReduce part-m-/part-r-
    files beside Spark's or Hive's): rows are duplicated or mixed from different runs.
    Cause: two jobs wrote the same partition (a retry after a partial failure, two schedulers, an
    INSERT INTO where INSERT OVERWRITE was meant, a failed job's leftovers next to the rerun). For
    tables that are appended to on purpose this is expected: judge by the job ids listed.
    Remedy: write partitions with INSERT OVERWRITE (spark.sql.sources.partitionOverwriteMode=dynamic
    for Spark), make each partition's load single-flight, and remove the files of the unwanted
    write job (their UUID is in the file name).
    """

    code = "CS108"
    name = "multiple-writers"
    severity = "medium"
    sql = _SQL

    def summary(self, row):
        parts = [f"{a} ({n} file{'s' if n != 1 else ''})" for a, n in zip(row["actors"], row["counts"])]
        return f"{where(row)} holds files of {len(parts)} writers: {', '.join(parts)}"
