"""Who a finding names, as objects a machine can read (``analyze --format json``: ``actor_objects``).

A finding's ``actors`` are labels (today's text). Each becomes ``{"kind", "label", …}``, one per
label, in the same order, resolved from the finding's own evidence events:

- ``spark_attempt``: a Spark task attempt (the ``spark_task_attempts`` view of migration 0018):
  application, job, SQL execution, stage and stage attempt, task index, attempt number, TID,
  executor, host, speculative flag, end status and reason; and the file it published when the
  detector tied one (CS101's ``detail.attempts``);
- ``hadoop_attempt``: a MapReduce/Tez attempt id with its job, task and attempt number;
- ``storage_principal``: who a storage record (HDFS audit, S3 access log) names: user, proxy,
  client address, and the query/attempt/application of its caller context;
- ``hive_thread``: a Hive/HiveServer2 thread and the query it ran (``thread``, ``query_id``); a
  metastore handler thread also the user and client address its audit lines name (``user``, ``ip``);
- ``query``, ``application``, ``file``, ``job``; anything else is a ``name``.

A Spark attempt's ``label`` is its one label (``app/stage 1.0/task 1 attempt 0 (TID 5) on host``,
forensics/attempt_labels.py), the name the finding's detector gave kept as ``attempt_name``.
"""

from __future__ import annotations

import json
import re

from commitsleuth.forensics.attempt_labels import label_objects
from commitsleuth.forensics.detectors.base import Finding
from commitsleuth.forensics.file_attempts import SPARK_ATTEMPT_STRUCT
from commitsleuth.parsers.attempts import ATTEMPT_RE, attempt_fields

_EVENTS_SQL = """
SELECT e.event_id, e.attempt_id, e.thread, e.query_id, e.app_id, e.job_id, e.host,
       e.detail->>'storage' AS storage, e.detail->>'user' AS user, e.detail->>'proxy' AS proxy,
       e.detail->>'ip' AS ip, e.detail->>'ugi' AS ugi,
       -- the run a caller context states, else (an application seen in several runs) its source's
       coalesce(spark_run(e.detail->>'caller_context', e.app_id), r.run) AS run,
       coalesce(e.query_id, (SELECT arg_max(q.query_id, q.ts) FROM events q
                             WHERE q.kind = 'query_start' AND q.source_id = e.source_id
                               AND q.thread = e.thread AND q.ts <= e.ts)) AS thread_query
FROM events e LEFT JOIN attempt_event_runs r ON r.event_id = e.event_id
WHERE e.event_id IN (SELECT unnest(?::BIGINT[]))
ORDER BY e.event_id
"""

_SPARK_SQL = f"""
SELECT a.app_id, a.label, a.run, {SPARK_ATTEMPT_STRUCT} AS who
FROM spark_task_attempts a
WHERE a.label IN (SELECT unnest(?::VARCHAR[]))
"""

_SPARK_IN_APPS_SQL = _SPARK_SQL + "  AND a.app_id IN (SELECT unnest(?::VARCHAR[]))\n"

# Storage records whose caller context names a Spark attempt, and files in a Hadoop attempt dir:
# the attempt they were tied to (the file_attempts view, one candidate only).
_TIES_SQL = f"""
SELECT t.event_id, {SPARK_ATTEMPT_STRUCT} AS who
FROM file_attempts t JOIN spark_task_attempts a ON a.event_id = t.attempt_event
WHERE t.event_id IN (SELECT unnest(?::BIGINT[])) AND t.candidates = 1 AND t.kind = 'spark_attempt'
"""

# A Hadoop attempt id Spark made (attempt_<ts>_<stage>_m_<index>_<TID>): that Spark attempt.
_SPARK_HADOOP_SQL = f"""
SELECT a.app_id, a.stage_id, a.task_index, a.tid, {SPARK_ATTEMPT_STRUCT} AS who
FROM spark_task_attempts a WHERE a.app_id IN (SELECT unnest(?::VARCHAR[]))
  AND a.tid IN (SELECT unnest(?::BIGINT[]))
"""

_PATH = re.compile(r"^(?:[A-Za-z][\w+.-]*:/|/)\S*$")  # a temp dir (CS109)
_SPEC = re.compile(r"^[^=/\s]+=[^/\s]*(?:/[^=/\s]+=[^/\s]*)*$")  # a partition (CS110)
_PREFIXES = (("file ", "file", "file"), ("job ", "job", "job_id"))


def _storage(label: str, e: dict) -> dict:
    out = {"kind": "storage_principal", "label": label, "user": e["user"], "proxy": e["proxy"],
           "ip": e["ip"], "storage": e["storage"]}
    for key in ("query_id", "attempt_id", "app_id", "job_id", "run"):  # job: an S3A Referer's ji=
        if e[key]:
            out[key] = e[key]
    return out


def _hadoop(label: str) -> dict:
    f = attempt_fields(label)
    return {"kind": "hadoop_attempt", "label": label, "job": f.get("job_id"), "task": f.get("task_id"),
            "attempt": f.get("attempt_no")}


def resolve(label: str, events: list[dict], spark: dict, named: dict, tied: dict | None = None,
            hadoop: dict | None = None, lookup: tuple = ({}, {})) -> dict:
    """The object for one label, from the finding's evidence events (``events``), every
    application's Spark attempts of the findings' names (``spark``: (app, label, run) -> fields, and (app, label) where one run has it), what the detector
    already named (``named``: label -> fields), the Spark attempts evidence events were tied to
    (``tied``: event id -> fields), Spark attempts by (app, stage, index, TID) (``hadoop``) and
    ``name_index(spark)`` (``lookup``)."""
    tied, hadoop = tied or {}, hadoop or {}
    if label in named:
        return {"kind": "spark_attempt", **named[label], "label": label}
    for e in events:
        if label == e["attempt_id"] and e["event_id"] in tied:  # a caller context's Spark attempt
            out = {**tied[e["event_id"]], "label": label, "spark_label": tied[e["event_id"]]["label"]}
            if e["storage"]:
                out.update({k: v for k, v in _storage(label, e).items() if k not in ("kind", "label")})
            return out
    for e in events:
        if label in (e["attempt_id"], e["thread"], e["query_id"]) and e["storage"]:
            return _storage(label, e)
    m = ATTEMPT_RE.fullmatch(label)
    if m:
        for e in events:
            key = (e["app_id"], int(m["job"]), int(m["task"]), int(m["attempt"]))
            if key in hadoop:  # Spark writes its TID as the Hadoop attempt number
                return {**hadoop[key], "label": label, "spark_label": hadoop[key]["label"]}
    for e in events:  # a name two runs used (a YARN restart): the attempt of the run its evidence names
        if (e["app_id"], label, e["run"]) in spark:
            return dict(spark[(e["app_id"], label, e["run"])])
    for e in events:
        if (e["app_id"], label) in spark:
            return dict(spark[(e["app_id"], label)])
    apps_of, runs = lookup  # name_index(spark), built once by the caller
    apps = apps_of.get(label, set())
    if len(apps) == 1:
        return dict(spark[(next(iter(apps)), label)])
    ambiguous = _runs_using(label, events, runs)
    if ambiguous:
        return ambiguous
    if label.startswith("attempt_") and "attempt_no" in attempt_fields(label):
        return _hadoop(label)
    for e in events:
        if label == e["thread"] or (label == e["query_id"] and e["thread"]):
            out = {"kind": "hive_thread", "label": label, "thread": e["thread"],
                   "query_id": e["query_id"] or e["thread_query"]}
            if e["ugi"]:  # a metastore handler thread: the audit names its connection's user and address
                out.update(user=e["ugi"], ip=e["ip"])
            return out
    for e in events:
        if label == e["query_id"]:
            return {"kind": "query", "label": label, "query_id": label, "app_id": e["app_id"]}
        if label == e["app_id"]:
            return {"kind": "application", "label": label, "app_id": label}
    for prefix, kind, key in _PREFIXES:
        if label.startswith(prefix):
            return {"kind": kind, "label": label, key: label[len(prefix):]}
    if _PATH.match(label):
        return {"kind": "path", "label": label, "path": label}
    if _SPEC.match(label):
        return {"kind": "partition", "label": label, "partition": label}
    return {"kind": "name", "label": label}


def _runs_using(label: str, events: list[dict], runs: dict) -> dict | None:
    """A Spark attempt name several runs of the evidence's application used (a YARN restart
    counts TIDs from 0 again) when nothing says which run: no attempt, but the application and
    the runs it could be (``runs``: (app, name) -> its runs, of the names several runs used)."""
    for app in sorted({e["app_id"] for e in events if e["app_id"]}):
        if (app, label) in runs:
            return {"kind": "name", "label": label, "app_id": app, "runs": runs[(app, label)]}
    return None


def name_index(spark: dict) -> tuple[dict[str, set], dict[tuple, list[str]]]:
    """Once per analyze run, not per actor (a scan of every attempt per actor took minutes on
    10M events): ``name -> applications`` where one attempt alone has the name (the (app, name)
    keys of ``spark_by_name``), and ``(app, name) -> runs`` of the names several runs of one
    application used."""
    apps: dict[str, set] = {}
    runs: dict[tuple, list[str]] = {}
    for key in spark:
        if len(key) == 2:
            apps.setdefault(key[1], set()).add(key[0])
        else:
            runs.setdefault(key[:2], []).append(str(key[2]))
    return apps, {key: sorted(found) for key, found in runs.items() if len(found) > 1}


def spark_by_name(rows) -> dict[tuple, dict]:
    """``(app, name, run) -> attempt`` for each Spark attempt row ``(app, name, run, who)``, and
    ``(app, name) -> attempt`` where one attempt alone has that name: a YARN restart's runs
    count TIDs from 0 again, so a name both runs used names neither without its run."""
    out: dict[tuple, dict] = {}
    by_name: dict[tuple, list] = {}
    for app, label, run, who in rows:
        out[(app, label, run)] = who
        by_name.setdefault((app, label), []).append(who)
    out.update({key: found[0] for key, found in by_name.items() if len(found) == 1})
    return out


def actor_objects(con, findings: list[Finding]) -> list[list[dict]]:
    """For each finding, one object per actor label (same order as ``actors``)."""
    ids = sorted({i for f in findings for i in f.evidence})
    cur = con.execute(_EVENTS_SQL, [ids]) if ids else None
    cols = [c[0] for c in cur.description] if cur else []
    by_id = {r[0]: dict(zip(cols, r)) for r in cur.fetchall()} if cur else {}
    labels = sorted({a for f in findings for a in f.actors})
    apps = sorted({e["app_id"] for e in by_id.values() if e["app_id"]})
    rows = con.execute(_SPARK_IN_APPS_SQL, [labels, apps]).fetchall() if labels and apps else []
    # a name no application of its finding's evidence has: every application's attempts of it. A
    # writer the table's log names by TID alone (table_log.WRITER, a snapshot naming no
    # application) is the one application's attempt of that TID in the store, whichever other
    # findings share this analyze run. Only those names: every application's attempts of every
    # name are hundreds of thousands of rows on a big store
    found = {(r[0], r[1]) for r in rows}
    others = sorted({a for f in findings for a in f.actors
                     if not any((by_id[i]["app_id"], a) in found for i in f.evidence if i in by_id)})
    if others:
        rows += [r for r in con.execute(_SPARK_SQL, [others]).fetchall() if (r[0], r[1]) not in found]
    spark = spark_by_name(rows)
    lookup = name_index(spark)  # once, not a scan of every attempt per actor
    tied = dict(con.execute(_TIES_SQL, [ids]).fetchall()) if ids else {}
    tids = sorted({int(m["attempt"]) for a in labels for m in [ATTEMPT_RE.fullmatch(a)] if m})
    hadoop = {}
    if tids and apps:
        hadoop = {(app, stage, index, tid): who
                  for app, stage, index, tid, who in con.execute(_SPARK_HADOOP_SQL, [apps, tids]).fetchall()}
    out = []
    for f in findings:
        events = [by_id[i] for i in f.evidence if i in by_id]
        named = {a["label"]: a for a in (f.detail or {}).get("attempts") or [] if isinstance(a, dict)}
        out.append([resolve(a, events, spark, named, tied, hadoop, lookup) for a in f.actors])
    return label_objects(con, out, apps)  # one name per attempt: its label, the logged name kept


def dumps(objects: list[dict]) -> str:
    return json.dumps(objects, default=str)
