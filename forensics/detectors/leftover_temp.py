"""CS109 leftover-temp."""

from __future__ import annotations

from commitsleuth.forensics.detectors.base import SqlDetector

# Only a listing (audit, inventory 'file' events) sees what is left on disk: entries inside
# _temporary, .spark-staging-<uuid>, .hive-staging_*, _tmp.* or _task_tmp.* layers of a table.
_SQL = """
WITH temp AS (
    SELECT event_id, ts, location, table_name, path,
           CASE WHEN is_temp THEN
               regexp_extract(path, '^(.*?/(_temporary|\\.spark-staging-[^/]*|\\.hive-staging[^/]*|_task_tmp\\.[^/]*|_tmp\\.[^/]*))(/|$)', 1)
           END AS temp_dir
    FROM partition_events
    WHERE kind = 'file' AND is_temp AND location IS NOT NULL
)
SELECT location, NULL::VARCHAR AS partition_spec, any_value(table_name) AS table_name, temp_dir,
       [temp_dir] AS actors, list(event_id ORDER BY event_id)[1:20] AS evidence,
       count(*) AS entries, min(ts) AS t0, max(ts) AS t1
FROM temp WHERE temp_dir <> ''
GROUP BY location, temp_dir
ORDER BY location, temp_dir
"""


class LeftoverTemp(SqlDetector):
    """Temp or staging directories of a writer are left in the table location.

    Symptom: the table directory holds _temporary, .spark-staging-*, .hive-staging_* or _tmp.*
    directories long after the jobs ended; some engines read them, and they hide what a failed
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
        return f"leftover {row['temp_dir'].rsplit('/', 1)[-1]} with {row['entries']} entries in {row['location']}"

    def detail(self, row):
        return {"dir": row["temp_dir"], "entries": row["entries"]}
