"""What the lakehouse detectors (CS201-CS219) share: a table log's files and their state.

A Delta, Iceberg or Hudi table's log (``parsers/lakehouse.py``) is ``table_commit``,
``table_add`` and ``table_remove`` events keyed by the table root (``location``); audit's
listing of the table is ``table_file`` events. A file is *live* when its last add is later than
its last remove, counting only the commits on the current lineage (an Iceberg snapshot rolled
back or on another branch still references its files, but they are not live). A table whose log has a commit that could not be read, or a version missing
from the chain, has no reliable state: no finding that rests on the state is made for it (the
gap itself is a finding of CS204).
"""

from __future__ import annotations

import os

# A file's state: its last add and last remove (by version, then event) among the rows of
# ``{source}`` (table_files, or a detector's share of it).
FILE_STATE = """SELECT location, path,
           max(v) FILTER (WHERE kind = 'table_add') AS added_v,
           max(v) FILTER (WHERE kind = 'table_remove') AS removed_v,
           arg_max(event_id, (v, event_id)) FILTER (WHERE kind = 'table_add') AS add_event,
           arg_max(event_id, (v, event_id)) FILTER (WHERE kind = 'table_remove') AS remove_event,
           any_value(partition_spec) AS partition_spec, any_value(table_name) AS table_name,
           any_value(file_name) AS file_name
    FROM {source} GROUP BY location, path"""

# Live: last added later than last removed, in a table whose log is whole.
LIVE = """SELECT * FROM {state}
    WHERE added_v IS NOT NULL AND (removed_v IS NULL OR added_v > removed_v)
      AND location NOT IN (SELECT location FROM unreliable)"""


def live_files(source: str) -> str:
    """SQL of the live files among the rows of ``source`` (every row of each of its paths):
    what ``live`` is over all of ``table_files``, for a detector that needs only some paths'."""
    return LIVE.format(state=f"({FILE_STATE.format(source=source)})")


# Versions order the log: Delta's version, Iceberg's sequence number, Hudi's instant time.
TABLE_FILES = """
table_files AS (
    SELECT event_id, kind, ts, location, partition_spec, table_name, path, file_name, app_id, size,
           TRY_CAST(detail->>'version' AS BIGINT) AS v, detail->>'format' AS fmt,
           TRY_CAST(detail->>'tid' AS BIGINT) AS tid
    FROM events WHERE kind IN ('table_add', 'table_remove') AND location IS NOT NULL
      AND (detail->>'off_lineage') IS NULL  -- rolled back or another branch: not the current state
),
referenced AS (  -- every file any commit names, whichever lineage: none of them is an orphan
    SELECT DISTINCT location, path FROM events
    WHERE kind IN ('table_add', 'table_remove') AND location IS NOT NULL
),
unreliable AS (
    SELECT DISTINCT location FROM events
    WHERE kind = 'table_commit' AND status IN ('unreadable', 'missing')
),
file_state AS (
    {state}
),
live AS (
    {live}
),
listed AS (
    SELECT event_id, ts, location, path, partition_spec, table_name, file_name, size FROM events
    WHERE kind = 'table_file' AND coalesce(detail->>'dir', 'false') <> 'true'
      AND coalesce(detail->>'log', 'false') <> 'true'
),
-- log files count: a table may have lost every data file
audited AS (SELECT DISTINCT location FROM events WHERE kind = 'table_file')
""".format(state=FILE_STATE.format(source="table_files"), live=LIVE.format(state="file_state"))

# A TID the log holds names the Spark attempt itself when the store has that attempt (event
# log or live capture) in the same application; otherwise it stays ``TID n``. Every application
# numbers its tasks from 0: with no application in the log, a TID names an attempt only when
# one application alone has it.
WRITER = """list_distinct(list_filter([{app}, CASE WHEN {tid} IS NOT NULL THEN coalesce(
    (SELECT CASE WHEN count(DISTINCT s.app_id) = 1 THEN min(s.label) END FROM spark_task_attempts s
     WHERE s.tid = {tid} AND ({app} IS NULL OR s.app_id = {app})),
    'TID ' || {tid}) END], lambda x: x IS NOT NULL))"""


def writer(app: str, tid: str) -> str:
    """SQL for a file's writer identities the log holds: spark.app.id and the task attempt
    (its TID, from a Spark-written Iceberg file name or a Hudi write token). ``app`` and
    ``tid`` must be qualified: spark_task_attempts has columns of the same names."""
    return WRITER.format(app=app, tid=tid)


RETENTION_ENV = "COMMITSLEUTH_ORPHAN_RETENTION_HOURS"


def retention_hours(default: float = 0.0) -> float:
    """The orphan retention window: files younger than this before the latest commit are a
    writer's work in progress, not orphans (``COMMITSLEUTH_ORPHAN_RETENTION_HOURS``)."""
    try:
        return max(0.0, float(os.environ.get(RETENTION_ENV, default)))
    except ValueError:
        return default
