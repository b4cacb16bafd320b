"""What the storage's own records add to findings: who deleted or trashed a partition's files
(user, proxy user, client address, the query, job or attempt of the caller context) and whether
the data can still be restored from the trash; which attempts wrote one file twice.

Storage events come from the ``hdfs-audit`` and ``s3-access`` formats: their ``detail`` holds
``storage`` (``hdfs`` or ``s3``), ``user``, ``proxy``, ``ip`` and, for a trash move, ``trash``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # detectors import this module: a runtime import would be circular
    from commitsleuth.forensics.detectors.base import Finding

# CS101's storage arm: one application's (or, on S3, one job's) attempts, named by the caller
# context or the S3A audit Referer, that created or published the same final path. Paths inside a temp or staging layer
# are the commit protocol's own business (each attempt rewrites its own there). A YARN restart
# runs the application again under its id, TIDs from 0 again: the caller context's run
# (SPARK_TASK_<app>_<run>_…, migration 0074's spark_run) tells its attempts from the first run's
# of the same name, and names each as Spark names the run, <app>_<run>. Spark's CallerContext
# writes the run before the JId/SId/TId part (and an upstream context after it), and a context
# longer than hadoop.caller.context.max.size is cut from the end, by Spark to the client's value
# and by the NameNode to its own: a record can keep its run and lose its TId (no attempt_id). It
# still says a task of that run wrote the path, so it counts as its run, not as an attempt.
DOUBLE_WRITES_SQL = """
SELECT any_value(location) AS location, any_value(partition_spec) AS partition_spec,
       any_value(table_name) AS table_name, any_value(file_name) AS task, coalesce(app_id, job_id) AS app_id,
       CASE WHEN count(DISTINCT run) > 1 THEN list(DISTINCT run_label ORDER BY run_label) FILTER (WHERE run_label IS NOT NULL)
            ELSE list(DISTINCT attempt_id ORDER BY attempt_id) FILTER (WHERE attempt_id IS NOT NULL) END AS actors,
       list(event_id ORDER BY event_id) AS evidence,
       min(ts) AS t0, max(ts) AS t1, [coalesce(target_path, path)] AS files, 'storage' AS how
FROM (
    SELECT *, CASE WHEN attempt_id IS NOT NULL
                   -- a record naming no run (its context has no attempt id) keeps its application
                   THEN spark_attempt_label(coalesce(app_id || '_' || run, app_id), stage_id, stage_attempt, CAST(NULL AS INTEGER), attempt_no,
                                            TRY_CAST(regexp_extract(task_id, '^TID ([0-9]+)$', 1) AS BIGINT), host)
                   -- NULL without a run (a driver's record): no task of either run
                   ELSE app_id || '_' || run || '/a task (its caller context names no TID)' || coalesce(' on ' || host, '')
              END AS run_label
    FROM (SELECT *, spark_run(detail->>'caller_context', app_id) AS run
          FROM partition_events
          WHERE kind IN ('file_create', 'rename') AND NOT is_temp))
GROUP BY coalesce(app_id, job_id), coalesce(target_path, path)
HAVING count(DISTINCT attempt_id) > 1
    OR count(DISTINCT run) > 1
"""

DELETES_SQL = """
SELECT event_id, ts, path, query_id, job_id, attempt_id, app_id, detail FROM events
WHERE event_id IN (SELECT unnest(?::BIGINT[])) AND kind = 'delete' AND detail LIKE '%"storage":%'
ORDER BY ts, event_id
"""

# After a trash move: a delete of the moved path or of a directory above it, or of the checkpoint
# the trash emptier renamed .Trash/Current to after the move, empties it.
EMPTIED_SQL = """
SELECT d.ts, d.path FROM events d
WHERE d.ts >= $ts AND d.detail LIKE '%"cmd": "delete"%'
  AND (starts_with($trash, d.path || '/') OR d.path = $trash
       OR EXISTS (SELECT 1 FROM events c
                  WHERE c.path = $current AND c.target_path = d.path AND c.ts >= $ts AND c.ts <= d.ts))
ORDER BY d.ts LIMIT 1
"""


def who(detail: dict, row: dict) -> str:
    """``bob (proxy hive) from 10.1.2.3, query hive_…`` for a storage event."""
    text = detail.get("user") or "?"
    if detail.get("proxy"):
        text += f" (proxy {detail['proxy']})"
    if detail.get("ip"):
        text += f" from {detail['ip']}"
    names = []
    if row.get("query_id"):
        names.append(f"query {row['query_id']}")
    if row.get("attempt_id"):
        names.append(f"attempt {row['attempt_id']}")
    if row.get("job_id"):
        names.append(f"job {row['job_id']}")
    if row.get("app_id"):
        names.append(f"application {row['app_id']}")
    if not names and detail.get("caller_context"):
        names.append(f"caller context {detail['caller_context']}")
    return text + (", " + ", ".join(names) if names else "")


def recovery(con, ts, trash: str | None, storage: str, version_id: str | None = None) -> tuple[bool, str]:
    """Whether the data is still in the trash (or, on S3, behind a delete marker), and the words
    that say so."""
    if not trash:
        if storage == "s3" and version_id:  # a versioned bucket logs the delete marker's version id
            return True, (f"deleted on a versioned S3 bucket (delete marker {version_id}): "
                          "the previous version can be restored")
        if storage == "s3":
            return False, "deleted on S3 (no trash: only a versioned bucket keeps it)"
        return False, "deleted, not moved to the trash: not recoverable from it"
    root = trash[: trash.index("/.Trash/") + len("/.Trash/")]
    current = root + "Current"
    if not trash.startswith(current + "/"):
        # an encryption zone's (or a snapshottable directory's) trash is <dir>/.Trash/<user>/Current
        current = root + trash[len(root):].split("/", 1)[0] + "/Current"
    if not trash.startswith(current + "/"):
        current = None  # not in Current: no checkpoint takes it
    row = con.execute(EMPTIED_SQL, {"ts": ts, "trash": trash, "current": current}).fetchone()
    if row:
        return False, f"moved to {trash}, but the trash was emptied ({row[1]} deleted at {row[0]})"
    return True, f"recoverable from the trash: {trash}"


def annotate(con, findings: list[Finding]) -> list[Finding]:
    """Name the storage client behind each delete in a finding's evidence, and the recovery."""
    for f in findings:
        if not f.evidence:
            continue
        cur = con.execute(DELETES_SQL, [list(f.evidence)])
        cols = [c[0] for c in cur.description]
        said = []
        for values in cur.fetchall():
            row = dict(zip(cols, values))
            detail = json.loads(row["detail"])
            ok, words = recovery(con, row["ts"], detail.get("trash"), detail.get("storage"), detail.get("version_id"))
            said.append({"event_id": row["event_id"], "path": row["path"], "by": who(detail, row),
                         "user": detail.get("user"), "proxy": detail.get("proxy"), "ip": detail.get("ip"),
                         "recoverable": ok, "recovery": words})
        if said:
            f.summary += "; storage: " + "; ".join(_removals_words(said))
            f.detail = {**(f.detail or {}), "storage_deletes": said}
    return findings


def _removals_words(said: list[dict]) -> list[str]:
    """One phrase per client and recovery: the many objects of one multi-object delete are said once."""
    groups: dict[tuple[str, str], list[str]] = {}
    for s in said:
        groups.setdefault((s["by"], s["recovery"]), []).append(s["path"])
    out = []
    for (by, words), paths in groups.items():
        what = paths[0] if len(paths) == 1 else f"{len(paths)} objects ({paths[0]}, …)"
        out.append(f"{by} removed {what}, {words}")
    return out
