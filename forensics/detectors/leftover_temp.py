"""CS109 leftover-temp."""

from __future__ import annotations

from commitsleuth.forensics.attempt_labels import label_of
from commitsleuth.forensics.detectors.base import TEMP_DIRS, SqlDetector
from commitsleuth.forensics.file_attempts import ATTEMPTS_LIST, file_attempts_sql

# Only a listing (audit, inventory 'file' events) sees what is left on disk: entries inside
# _temporary, __magic, .spark-staging-<uuid>, .hive-staging_*, _tmp.* or _task_tmp.* layers of a table.
_SQL = """
WITH temp AS (
    SELECT event_id, ts, location, table_name, path,
           CASE WHEN is_temp THEN
               regexp_extract(path, '^(.*?/({temp_dirs}))(/|$)', 1)
           END AS temp_dir
    FROM partition_events
    WHERE kind = 'file' AND is_temp AND location IS NOT NULL
),
{file_attempts}
SELECT location, NULL::VARCHAR AS partition_spec, any_value(table_name) AS table_name, temp_dir,
       [temp_dir] AS actors, list(DISTINCT t.event_id ORDER BY t.event_id)[1:20] AS evidence,
       count(DISTINCT t.event_id) AS entries, min(ts) AS t0, max(ts) AS t1, {attempts_list} AS attempts
FROM temp t LEFT JOIN file_ties fa ON fa.event_id = t.event_id WHERE temp_dir <> ''
GROUP BY location, temp_dir
ORDER BY location, temp_dir
""".replace("{temp_dirs}", TEMP_DIRS).replace("{file_attempts}", file_attempts_sql("temp").strip()).replace("{attempts_list}", ATTEMPTS_LIST)


class LeftoverTemp(SqlDetector):
    """Temp or staging directories of a writer are left in the table location.

    Symptom: the table directory holds _temporary, __magic (the S3A magic committer's),
    .spark-staging-*, .hive-staging_* or _tmp.* directories long after the jobs ended; some engines read them, and they hide what a failed
    job left behind.
    Cause: a job was killed, or its driver died, before commitJob/abortJob cleaned up; or the
    job is still running (then this is expected: check its time).
    Remedy: when no job is writing the table, delete the listed directories; look for the failed
    job that left them (partial-output findings) and re-run it.
    """

    code = "CS109"
    name = "leftover-temp"
    severity = "low"
    sql = _SQL

    def summary(self, row):
        left = f"leftover {row['temp_dir'].rsplit('/', 1)[-1]} with {row['entries']} entries in {row['location']}"
        if row["attempts"]:  # the task attempts whose files they are (forensics/file_attempts.py)
            left += ", written by " + ", ".join(sorted({label_of(a) for a in row["attempts"]}))
        return left

    def detail(self, row):
        d = {"dir": row["temp_dir"], "entries": row["entries"]}
        if row["attempts"]:
            d["attempts"] = [dict(a) for a in row["attempts"]]
        return d
