"""Why a partition has (or has no) finding: for each detector, the facts it saw there and what it
needed (``analyze --explain TABLE PARTITION``). Silence is only worth trusting when one can see
which facts the detectors had.

The facts come from the fact model of migration 0040 (``partitions``, ``file_lineage``,
``attempts``) and from the partition's events (``partition_events``), counted by kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from commitsleuth.errors import InputError
from commitsleuth.forensics.analyze import analyze
from commitsleuth.forensics.detectors import DETECTORS
from commitsleuth.forensics.paths import normalize_spec
from commitsleuth.store import Store

# What each detector needs to fire, in the user's words, and the event kinds it reads on a
# partition (their counts are shown as what it saw).
NEEDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "CS101": ("two attempts of one task that both left a live file in the partition (any committer, "
              "direct writes included), or two commits of one task",
              ("rename", "file_create", "file", "task_commit", "dedup_remove", "delete")),
    "CS102": ("a rename or task commit after its attempt was killed, after its job's commit or "
              "move, or after the job's dedup had begun",
              ("rename", "task_commit", "publish", "job_commit", "dedup_remove")),
    "CS103": ("two writers whose loading steps on the partition overlap in time",
              ("dir_create", "partition_add", "partition_alter", "partition_exists", "load", "delete")),
    "CS104": ("two LOAD INTOs of one file name (from the load lines or the LOAD commands), or a LOAD "
              "INTO after which num_files did not grow while total_size changed",
              ("load", "stats")),
    "CS105": ("a failed or aborted write job whose files are still in the partition (the job's verdict "
              "from its commit or abort lines, its SQL execution's end, a move out of its staging "
              "directory, or _SUCCESS)",
              ("file", "file_create", "rename", "task_commit", "job_commit", "job_abort", "job_end",
               "query_end", "conf")),
    "CS106": ("a Hive dedup that kept a file from a failed or killed attempt", ("dedup_remove",)),
    "CS107": ("its directory deleted after the metastore registered it, or every file loaded into it "
              "removed by someone who wrote none of them, with nothing written after",
              ("partition_add", "partition_alter", "partition_exists", "partition_drop", "delete")),
    "CS108": ("files of two write jobs (two UUIDs) in the partition", ("file", "file_create", "rename")),
    "CS109": ("a temp or staging layer left behind in the partition", ("file", "dir_create")),
    "CS110": ("a registered partition with no data files", ("partition_add", "file")),
    "CS111": ("a committer manifest (_SUCCESS) that disagrees with the files", ("manifest", "file")),
    "CS201": ("a file under a Delta/Iceberg/Hudi table that no version of its log references, older "
              "than the retention window", ("table_commit", "table_add", "table_remove", "table_file")),
    "CS202": ("a table log that adds a file already live, or twice in one commit, or keeps two "
              "attempts' twins live", ("table_commit", "table_add", "table_remove")),
    "CS203": ("a file the table's current version references that is absent on storage",
              ("table_add", "table_remove", "table_file", "delete")),
    "CS204": ("a version missing from the table's log, a commit file written twice, or a stale "
              "overwrite that a concurrent append survived", ("table_commit", "table_add", "table_remove")),
    "CS205": ("two table commits with one Delta txn (appId, version) or one streaming (queryId, epochId)",
              ("table_commit",)),
    "CS206": ("files of a Hudi instant never completed, or deleted by a completed rollback, still on "
              "storage", ("table_commit", "table_add", "table_file")),
}


@dataclass
class DetectorExplanation:
    code: str
    name: str
    fired: bool
    needs: str
    saw: dict[str, int]
    findings: list[str] = field(default_factory=list)
    why: str = ""


@dataclass
class Explanation:
    table: str
    partition: str
    facts: dict
    detectors: list[DetectorExplanation]


_EVENTS = """
SELECT kind, count(*) FROM partition_events
WHERE (part_table = $t OR part_location = $t) AND part_spec = $p
GROUP BY kind ORDER BY kind
"""
_PARTITION = """
SELECT table_name, location, sources, registered_at, dropped_at, files, live_files, last_removed
FROM partitions WHERE (table_name = $t OR location = $t) AND partition_spec = $p
"""
_FILES = """
SELECT file_name, arrived_how, attempt, tie_confidence, coalesce(user, thread, query_id, app_id) AS writer,
       live, removed_how, coalesce(removed_user, removed_by) AS remover, trash_path
FROM file_lineage WHERE (table_name = $t OR location = $t) AND partition_spec = $p
ORDER BY created_at, event_id
"""
# A file's attempt by its name, of the file's application and run (migration 0074: a YARN
# restart's second run names its attempts as the first did); a run the file's record does not
# state leaves either run's.
_ATTEMPTS = """
SELECT CASE WHEN starts_with(a.attempt_key, a.app_id || '_' || a.run || ' ')
            THEN a.label || ' of ' || a.app_id || '_' || a.run ELSE a.label END AS shown,
       a.host, a.speculative, a.end_status, list(DISTINCT l.file_name ORDER BY l.file_name)
FROM file_lineage l JOIN events e ON e.event_id = l.event_id
LEFT JOIN source_runs s ON s.source_id = e.source_id AND s.app_id = e.app_id
JOIN attempts a ON (a.attempt_key = l.attempt OR list_contains(a.names, l.attempt))
 AND (l.app_id IS NULL OR a.app_id = l.app_id)
 AND (a.run IS NULL OR a.run = coalesce(spark_run(e.detail->>'caller_context', e.app_id), s.run, a.run))
WHERE (l.table_name = $t OR l.location = $t) AND l.partition_spec = $p
GROUP BY ALL ORDER BY shown
"""


def explain(store: Store, table: str, partition: str) -> Explanation:
    """Run every detector and say, for ``table`` (name or location) and ``partition``, what each saw."""
    spec = normalize_spec(partition)
    key = {"t": table.lower() if "/" not in table else table.rstrip("/"), "p": spec}
    con = store.con
    saw_kinds = dict(con.execute(_EVENTS, key).fetchall())
    if not saw_kinds:
        raise InputError(f"no events for {table} {partition}")
    part = con.execute(_PARTITION, key).fetchone()
    facts = {
        "sources": list(part[2]) if part else [],
        "registered_at": part[3] if part else None,
        "dropped_at": part[4] if part else None,
        "files": part[5] if part else 0,
        "live_files": part[6] if part else 0,
        "last_removed": part[7] if part else None,
        "events": saw_kinds,
        "file_lineage": [dict(zip(("file", "how", "attempt", "tie", "writer", "live", "removed", "by", "trash"), r))
                         for r in con.execute(_FILES, key).fetchall()],
        "attempts": [dict(zip(("attempt", "host", "speculative", "end", "files"), r))
                     for r in con.execute(_ATTEMPTS, key).fetchall()],
    }
    findings = analyze(store)
    mine = [f for f in findings if f.partition_spec == spec and table in (f.table_name, f.location)]
    out = []
    for det in DETECTORS:
        needs, kinds = NEEDS.get(det.code, ("its own conditions", ()))
        saw = {k: saw_kinds[k] for k in kinds if k in saw_kinds}
        hits = [f.summary for f in mine if f.code == det.code]
        if hits:
            why = "fired: " + "; ".join(hits)
        elif det.code in _REASONS and facts["file_lineage"]:
            why = "did not fire: " + _REASONS[det.code](facts)
        elif not saw:
            why = "did not fire: none of the facts it reads is in the store for this partition"
        else:
            why = f"did not fire: it needs {needs}; the facts above do not show that"
        out.append(DetectorExplanation(det.code, det.name, bool(hits), needs, saw, hits, why))
    return Explanation(table, spec, facts, out)


def _task_of(name: str) -> str | None:
    m = re.match(r"^(?:part-)?(?:[mr]-)?(\d+)", name or "")
    return m.group(1) if m else None


def _double_write_reason(facts: dict) -> str:
    """Per task of the partition, how many attempts left a live file."""
    live: dict[str, set] = {}
    for x in facts["file_lineage"]:
        task = _task_of(x["file"])
        if task is not None and x["live"]:
            live.setdefault(task, set()).add(x["attempt"] or x["file"])
    if not live:
        return "no live data file named after a task is left in the partition"
    counts = ", ".join(f"task {t}: {len(a)}" for t, a in sorted(live.items())[:10])
    return f"no task has live files of two attempts (live files' attempts per task: {counts})"


def _deleted_data_reason(facts: dict) -> str:
    """Whether the files are gone, and by whom."""
    files = facts["file_lineage"]
    live = [x for x in files if x["live"]]
    if live:
        return f"{len(live)} of its {len(files)} data files are live (not removed or overwritten)"
    writers = {x["writer"] for x in files} | {x["attempt"] for x in files}
    removers = {x["by"] for x in files if x["by"]}
    if removers <= writers:
        return f"every file was removed, but by its own writers ({', '.join(sorted(removers))})"
    if facts["dropped_at"]:
        return f"every file was removed, but the partition was dropped through the metastore ({facts['dropped_at']})"
    return "every file was removed by another principal, but a later write or drop of the partition cancels it"


# Specific reasons of the detectors that read the fact model, when the partition has files.
_REASONS = {"CS101": _double_write_reason, "CS107": _deleted_data_reason}


_SPECULATIVE = {True: "speculative", False: "not speculative", None: "speculation not known"}


def explanation_text(e: Explanation) -> str:
    """The explanation as the terminal shows it (callers escape it for the terminal)."""
    f = e.facts
    lines = [f"{e.partition} in {e.table}",
             f"  known from: {', '.join(f['sources']) or 'no source'}; registered: {f['registered_at'] or 'not seen'}"
             + (f"; dropped: {f['dropped_at']}" if f["dropped_at"] else ""),
             f"  data files: {f['files'] or 0}, live {f['live_files'] or 0}"
             + (f"; last removed {f['last_removed']}" if f["last_removed"] else ""),
             "  events: " + ", ".join(f"{k} {n}" for k, n in f["events"].items())]
    for x in f["file_lineage"]:
        fate = "live" if x["live"] else f"{x['removed'] or 'overwritten'}" + (f" by {x['by']}" if x["by"] else "") \
            + (f" (trash: {x['trash']})" if x["trash"] else "")
        who = x["attempt"] or x["writer"] or "writer not named"
        tie = f", {x['tie']}" if x["tie"] else ""
        lines.append(f"  file {x['file']}: {x['how']} by {who}{tie}; {fate}")
    for a in f["attempts"]:
        lines.append(f"  attempt {a['attempt']}: on {a['host'] or '?'}, "
                     f"{_SPECULATIVE[a['speculative']]}, {a['end']}, wrote {', '.join(a['files'])}")
    lines.append("")
    for d in e.detectors:
        saw = ", ".join(f"{k} {n}" for k, n in d.saw.items()) or "nothing it reads"
        lines.append(f"{d.code} {d.name}: {'FIRED' if d.fired else 'silent'}")
        lines.append(f"  saw: {saw}")
        lines.append(f"  {d.why}")
    return "\n".join(lines)
