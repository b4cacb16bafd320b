"""One name per task attempt, in every output (issue 32).

A Spark task attempt is logged under several names: the event log's and a driver log's
``task 1.0 in stage 1.0 (TID 5)``, a caller context's ``task attempt 0 in stage 1.0 (TID 7)``,
the ``1.1`` task id of an event, a ``000001_0`` file name. Shown to people it has one:

    app-20261126165527-0000/stage 1.0/task 1 attempt 0 (TID 5) on 127.0.0.2

application / stage and stage attempt / task index, attempt number, TID and host, the parts a log
does not give left out. MapReduce and Tez attempt ids (``attempt_…``) are their own name.

The store words the same label in SQL (migration 0060: the ``spark_attempt_label`` macro and
the ``attempt_labels`` view, which named queries join); events keep the names their logs gave,
so joins between them are untouched, and only what is shown is relabelled.
"""

from __future__ import annotations

import re
from typing import Iterable


def spark_attempt_label(app: str | None, stage: int | None, stage_attempt: int | None, index: int | None,
                        attempt: int | None, tid: int | None, host: str | None) -> str:
    """The label of one Spark task attempt from its facts (the ``spark_attempt_label`` macro)."""
    last = " ".join(p for p in (
        f"task {index}" if index is not None else None,
        f"attempt {attempt}" if attempt is not None else None,
        f"(TID {tid})" if tid is not None else None,
        f"on {host}" if host is not None else None) if p)
    stage_part = f"stage {stage}.{stage_attempt or 0}" if stage is not None else None
    return "/".join(p for p in (app, stage_part, last) if p)


def label_of(attempt: dict) -> str:
    """The label of a Spark attempt object (``SPARK_ATTEMPT_STRUCT``'s fields: app_id, stage,
    stage_attempt, task_index, attempt, tid, host, run). Of an application seen in several runs
    (a YARN restart: ``run`` set) the application is named as Spark names the run, ``<app>_<run>``."""
    app, run = attempt.get("app_id"), attempt.get("run")
    return spark_attempt_label(f"{app}_{run}" if app is not None and run is not None else app, attempt.get("stage"), attempt.get("stage_attempt"),
                               attempt.get("task_index"), attempt.get("attempt"), attempt.get("tid"),
                               attempt.get("host"))


# the store's own view, not a namesake in another database ATTACHed to the same connection
_VIEW_SQL = ("SELECT sql FROM duckdb_views() WHERE view_name = 'attempt_labels' AND schema_name = 'main'"
             " AND database_name = current_database()")
_TID = re.compile(r"\(TID (\d+)\)")
_FEW = 64  # up to this many TIDs a chain of suffix tests, else a join on the TID's text


def _narrowed(con, tids: list[str]) -> str | None:
    """The ``attempt_labels`` view's own text over the events of ``tids`` only: the view puts
    every Spark attempt of the store together (seconds on millions), a lookup needs a few. A
    TID's every name ends in ``(TID n)``, which a cheap suffix test finds."""
    found = con.execute(_VIEW_SQL).fetchone()
    if found is None:
        return None  # a store older than migration 0060, opened read-only
    body = re.sub(r"^CREATE VIEW \S+ AS ", "", found[0]).rstrip().rstrip(";")
    if len(tids) <= _FEW:
        where = " OR ".join(f"suffix(attempt_id, '(TID {int(t)})')" for t in tids)
    else:
        where = "split_part(attempt_id, '(TID ', 2) IN (SELECT unnest($tails::VARCHAR[]))"
    return body.replace("FROM events", f"FROM (SELECT * FROM events WHERE {where}) events", 1)


def labels_for_names(con, names: Iterable[tuple[str | None, str | None]]) -> dict[tuple, str]:
    """``(application, name) -> label`` for the Spark attempt names among ``names`` (pairs of
    the application an event names, or None, and its attempt name); other names are left out:
    they are their own label. A name without an application takes the label of the one
    application that uses it. Of an application seen in several runs (a YARN restart) a name
    also has ``(application, name, run) -> label``, and ``(application, name)`` only when one
    run uses it."""
    wanted = {(app, name) for app, name in names if name and name.startswith("task ") and "(TID " in name}
    if not wanted:
        return {}
    tids = sorted({m.group(1) for _, n in wanted for m in [_TID.search(n)] if m}, key=int)
    narrowed = _narrowed(con, tids) if tids else None
    if narrowed is None:
        return {}
    params = {"names": sorted({n for _, n in wanted})}
    if len(tids) > _FEW:
        params["tails"] = [f"{t})" for t in tids]
    rows = con.execute(f"SELECT app_id, attempt_id, label, run FROM ({narrowed}) "
                       "WHERE list_contains($names::VARCHAR[], attempt_id)", params).fetchall()
    out: dict[tuple, str] = {}
    by_name: dict[str, set[str]] = {}
    by_key: dict[tuple[str | None, str], set[str]] = {}
    for app, name, label, run in rows:
        by_key.setdefault((app, name), set()).add(label)
        by_name.setdefault(name, set()).add(label)
        if run is not None:  # of an application seen in several runs: (app, name, run) names it
            out[(app, name, run)] = label
    # a name two runs of one application both use (TIDs counted from 0 again) alone names neither
    out.update({key: next(iter(found)) for key, found in by_key.items() if len(found) == 1})
    for app, name in wanted:
        if (app, name) not in out and len(by_name.get(name, ())) == 1:
            out[(app, name)] = next(iter(by_name[name]))
    return out


def shown(labels: dict[tuple[str | None, str], str], app: str | None, name: str | None) -> str | None:
    """``name`` as shown: its label when it names a Spark attempt, else itself."""
    if name is None:
        return None
    return labels.get((app, name)) or labels.get((None, name)) or name


def label_objects(con, objects: list[list[dict]], apps: Iterable[str | None]) -> list[list[dict]]:
    """Actor objects (``forensics/actors.py``) with every Spark attempt name as its label; the
    name the logs gave stays in ``attempt_name``. ``apps`` are the applications of the
    findings' evidence (a caller context's name is looked up in them)."""
    apps = set(apps) | {None}
    names = {o["label"] for objs in objects for o in objs}
    labels = labels_for_names(con, [(app, name) for app in apps for name in names])
    by_name: dict[str, set[str]] = {}
    for key, label in labels.items():
        by_name.setdefault(key[1], set()).add(label)
    out = []
    for objs in objects:
        row = []
        for o in objs:
            name = o["label"]
            # the run the object names (a YARN restart's TIDs counted from 0 again): its label there
            label = labels.get((o.get("app_id"), name, o["run"])) if o.get("run") is not None else None
            if label is None:
                label = labels.get((o.get("app_id"), name))
            if label is None and len(by_name.get(name, ())) == 1:
                label = next(iter(by_name[name]))
            if label is None and o.get("kind") == "spark_attempt" and o.get("stage") is not None:
                label = label_of(o)
            row.append({**o, "label": label, "attempt_name": name} if label and label != name else o)
        out.append(row)
    return out


def relabel(finding, objects: list[dict]) -> None:
    """The finding's actors, summary and listed attempts under the labels of its ``objects``
    (one per actor, in order)."""
    renamed = {o["attempt_name"]: o["label"] for o in objects if "attempt_name" in o}
    if not renamed:
        return
    finding.actors = [renamed.get(a, a) for a in finding.actors]
    # longest first: no name is replaced inside a longer one
    for name in sorted(renamed, key=len, reverse=True):
        finding.summary = finding.summary.replace(name, renamed[name])
    for label in set(renamed.values()):  # a detector that said the host after the old name: the label says it now
        host = label.rsplit(" on ", 1)[1] if " on " in label else None
        if host:
            finding.summary = (finding.summary.replace(f"{label} (on {host})", label)
                               .replace(f"{label} (on {host}, ", f"{label} (")
                               .replace(f"{label} on {host}", label))
    attempts = (finding.detail or {}).get("attempts")
    if attempts:
        finding.detail = {**finding.detail, "attempts": [
            {**a, "label": renamed.get(a.get("label"), label_of(a)), "attempt_name": a.get("label")}
            if isinstance(a, dict) and a.get("kind") == "spark_attempt" and "attempt_name" not in a else a
            for a in attempts]}
