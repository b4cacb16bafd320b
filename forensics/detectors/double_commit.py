"""CS101 double-commit."""

from __future__ import annotations

from commitsleuth.forensics.detectors.base import Detector

# A file is published into an output location when a task renames it there (outside the commit
# protocol) or an attempt's commit lands it there; Hive's dedup may remove it again later.
_SQL = """
WITH published AS (
    SELECT event_id, ts, location, partition_spec, file_name, file_task, file_attempt,
           coalesce(attempt_id, 'file ' || file_name) AS actor, table_name
    FROM events
    WHERE kind = 'rename' AND file_task IS NOT NULL AND location IS NOT NULL
),
removed AS (
    SELECT DISTINCT location, partition_spec, file_name FROM events WHERE kind = 'dedup_remove'
),
surviving AS (
    SELECT p.* FROM published p
    ANTI JOIN removed r
      ON r.location = p.location
     AND r.partition_spec IS NOT DISTINCT FROM p.partition_spec
     AND r.file_name = p.file_name
)
SELECT location, partition_spec, file_task, any_value(table_name),
       list(DISTINCT actor ORDER BY actor), list(event_id ORDER BY event_id),
       min(ts), max(ts), list(DISTINCT file_name ORDER BY file_name)
FROM surviving
GROUP BY location, partition_spec, file_task
HAVING count(DISTINCT coalesce(file_attempt, -1)) > 1 OR count(DISTINCT actor) > 1
ORDER BY location, partition_spec, file_task
"""


class DoubleCommit(Detector):
    """Two or more attempts of one task published output into the same partition.

    Symptom: the partition holds the rows of one task twice, once per attempt (files such as
    000005_0 and 000005_1 side by side), so counts and sums over it are inflated.
    Cause: a writer that publishes its own output instead of going through the output commit
    protocol (Hive's RCFileMergeMapper renames in close(); Hive on Tez names files per attempt
    and never asks canCommit) ran more than once for the same task, typically because
    speculative execution launched a second attempt, and both attempts finished.
    Remedy: disable speculative execution for jobs whose writer does not commit through the
    protocol (mapred.map.tasks.speculative.execution=false, or hive.mapred.reduce.tasks.speculative.execution=false),
    or set hive.merge.mapfiles=false so RCFileMergeMapper is not used; apply HIVE-3149 for dynamic
    partitions. Then delete the duplicate file of each listed task from the partition.
    """

    code = "CS101"
    name = "double-commit"
    severity = "high"

    def run(self, con):
        findings = []
        for loc, part, task, table, actors, evidence, t0, t1, files in con.execute(_SQL).fetchall():
            findings.append(
                self.finding(
                    f"task {task} published by {len(actors)} attempts into "
                    f"{part or 'the unpartitioned table'}: {', '.join(actors)}",
                    location=loc,
                    partition_spec=part,
                    table_name=table,
                    window_start=t0,
                    window_end=t1,
                    actors=list(actors),
                    evidence=list(evidence),
                    detail={"task": task, "files": list(files)},
                )
            )
        return findings
