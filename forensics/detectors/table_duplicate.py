"""CS202 table-duplicate-file."""

from __future__ import annotations

from commitsleuth.forensics.detectors.base import SqlDetector, where
from commitsleuth.forensics.table_log import TABLE_FILES, live_files, writer
from commitsleuth.forensics.table_writers import commit_executions, tie_file_writers

# A path added while already live (no remove since its last add), or twice in one commit; and
# speculative twins: two attempts (TIDs) of one Spark task whose files are both live.
_SQL = """
WITH {files},
-- a path added twice at least, found by its hash (a number, not a string, to group a million
-- by): only these paths' adds are ordered below, the rest cannot be added again
readded AS (
    SELECT location, hash(path) AS h FROM table_files WHERE kind = 'table_add'
    GROUP BY location, hash(path) HAVING count(*) > 1
),
adds AS (
    SELECT t.*, lag(t.v) OVER w AS prev_v, lag(t.event_id) OVER w AS prev_event
    FROM table_files t JOIN readded r ON r.location = t.location AND r.h = hash(t.path)
    WHERE t.kind = 'table_add'
    WINDOW w AS (PARTITION BY t.location, t.path ORDER BY t.v, t.event_id)
),
again AS (
    SELECT a.* FROM adds a
    WHERE a.prev_v IS NOT NULL AND a.location NOT IN (SELECT location FROM unreliable)
      AND NOT EXISTS (SELECT 1 FROM table_files r WHERE r.kind = 'table_remove' AND r.location = a.location
                      AND r.path = a.path AND r.v > a.prev_v AND r.v <= a.v)
),
spark_files AS (
    SELECT t.*, regexp_extract(t.file_name, '^(\\d{{5}})-\\d+-([0-9a-f-]{{36}})-\\d{{5}}', ['part', 'op']) AS k
    FROM table_files t
    WHERE t.kind = 'table_add' AND t.tid IS NOT NULL AND regexp_matches(t.file_name, '^\\d{{5}}-\\d+-[0-9a-f-]{{36}}-\\d{{5}}')
),
-- tasks whose files two TIDs added, live or not: only their paths' state is needed (a table
-- written by one attempt per task, the usual, has none)
twin_tasks AS (
    SELECT location, partition_spec, k.op AS op, k.part AS part FROM spark_files
    GROUP BY location, partition_spec, k.op, k.part HAVING count(DISTINCT tid) > 1
),
twin_candidates AS (
    SELECT f.* FROM spark_files f JOIN twin_tasks k ON k.location = f.location
         AND k.partition_spec IS NOT DISTINCT FROM f.partition_spec AND k.op = f.k.op AND k.part = f.k.part
),
twin_live AS (
    {twin_live}
),
twins AS (
    SELECT t.location, t.partition_spec, t.table_name, t.path, t.event_id, t.ts, t.v, t.app_id, t.tid, t.k
    FROM twin_candidates t JOIN twin_live l ON l.location = t.location AND l.path = t.path AND l.add_event = t.event_id
),
twin_groups AS (
    SELECT location, partition_spec, any_value(table_name) AS table_name, min(ts) AS t0, max(ts) AS t1,
           list(DISTINCT v ORDER BY v) AS versions, list(path ORDER BY path) AS paths,
           list(event_id ORDER BY event_id) AS evidence,
           list_sort(list_distinct(flatten(list({writer})))) AS actors, 'twins' AS how
    -- one task of one write (its partition id): two TIDs are two attempts of it, whatever file
    -- count each reached (an attempt reading its shuffle input in another order numbers its
    -- files otherwise)
    FROM twins tw GROUP BY location, partition_spec, k.op, k.part
    HAVING count(DISTINCT tid) > 1
),
-- Hudi: two base files of one file group and instant, two write tokens (two attempts of one
-- task), on storage after the instant completed (apache/hudi#9615)
hudi_listed AS (
    SELECT l.*, regexp_extract(l.file_name, '^([\\w-]+?)_(\\d+-\\d+-(\\d+))_(\\d+)\\.\\w+$',
                               ['fid', 'token', 'tid', 'instant']) AS k
    FROM listed l WHERE regexp_matches(l.file_name, '^[\\w-]+?_\\d+-\\d+-\\d+_\\d+\\.\\w+$')
),
hudi_twins AS (
    SELECT h.location, h.partition_spec, any_value(h.table_name), min(h.ts), max(h.ts),
           [TRY_CAST(h.k.instant AS BIGINT)], list(h.path ORDER BY h.path), list(h.event_id ORDER BY h.path),
           list_sort(list_distinct(list('TID ' || h.k.tid))), 'twins'
    FROM hudi_listed h
    WHERE EXISTS (SELECT 1 FROM events c WHERE c.kind = 'table_commit' AND c.location = h.location
                  AND c.status = 'completed' AND c.detail->>'version' = h.k.instant)
    GROUP BY h.location, h.partition_spec, regexp_replace(h.path, '/[^/]+$', ''), h.k.fid, h.k.instant
    HAVING count(DISTINCT h.k.token) > 1
)
SELECT a.location, a.partition_spec, a.table_name, p.ts AS t0, a.ts AS t1,
       [p.v, a.v] AS versions, [a.path] AS paths, [p.event_id, a.event_id] AS evidence,
       list_sort(list_distinct({writer_a} || {writer_p})) AS actors,
       CASE WHEN a.prev_v = a.v THEN 'same commit' ELSE 'while live' END AS how
FROM again a JOIN table_files p ON p.event_id = a.prev_event
UNION ALL
SELECT * FROM twin_groups
UNION ALL
SELECT * FROM hudi_twins
ORDER BY location, partition_spec, t1, how
"""


class TableDuplicateFile(SqlDetector):
    """One data file referenced twice by a table's log, or two attempts' copies both live.

    Symptom: the table's log adds a path that is already live (no remove in between), adds it
    twice in one commit, or keeps the files of two attempts of one Spark task (same partition,
    operation and task partition id, two TIDs) both live; or two base files of one Hudi file group
    and completed instant, with two write tokens, are both on storage. Each file is named with
    the task attempt whose create of it the storage recorded, and a re-adding commit with the
    SQL execution whose plan wrote the table while it ran.
    Cause: a retried or replayed commit that re-added files (delta-io/delta#3784), Iceberg
    ``add_files`` run twice or with ``check_duplicate_files=False`` (iceberg-python#2130), or a
    speculative attempt whose output was committed next to the original's (apache/hudi#9615).
    Readers that trust the log read the rows twice; delta-rs silently keeps one.
    Remedy: remove the extra reference with the format's own tool (Delta: rewrite the
    partition, or ``FSCK``-style repair; Iceberg: ``delete_files`` / ``rewrite_data_files`` on the
    duplicate entry), and make the writer idempotent (``check_duplicate_files=True``, streaming
    ``txnAppId``/``txnVersion``, speculation off for non-idempotent committers).
    """

    code = "CS202"
    name = "table-duplicate-file"
    severity = "high"

    @property
    def sql(self) -> str:
        # the state of the candidates' paths from every row of those paths (their removes too)
        paths = ("(SELECT f.* FROM table_files f JOIN (SELECT DISTINCT location, path FROM twin_candidates) c "
                 "ON c.location = f.location AND c.path = f.path)")
        return _SQL.format(files=TABLE_FILES.strip(), twin_live=live_files(paths), writer=writer("tw.app_id", "tw.tid"),
                           writer_a=writer("a.app_id", "a.tid"), writer_p=writer("p.app_id", "p.tid"))

    def finish(self, con, findings):
        # the attempt that wrote each file, from the storage's record; and the SQL execution whose
        # commit added a live file again (the replayed or retried write)
        tie_file_writers(con, findings)
        again = [f for f in findings if f.detail["how"] != "twins"]
        executions = commit_executions(con, [(f.location, f.detail["versions"][1]) for f in again])
        for f in again:
            x = executions.get((f.location, str(f.detail["versions"][1])))
            if x and x not in f.actors:
                f.actors = f.actors + [x]
        return findings

    def summary(self, row: dict) -> str:
        names = ", ".join(p.rsplit("/", 1)[-1] for p in row["paths"])
        versions = " and ".join(str(v) for v in row["versions"])
        if row["how"] == "twins":
            return (f"files of two attempts of one Spark task are both live in {where(row)} "
                    f"(version {versions}): {names}")
        if row["how"] == "same commit":
            return f"version {row['versions'][1]} adds {names} twice in {where(row)}"
        return f"version {row['versions'][1]} adds {names} in {where(row)} while version {row['versions'][0]}'s add of it is live"

    def detail(self, row: dict) -> dict:
        return {"versions": row["versions"], "paths": row["paths"], "how": row["how"]}
