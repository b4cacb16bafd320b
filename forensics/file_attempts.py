"""Which task attempt wrote a file, from what its name or path says.

The rules live in one place, the store's ``file_attempts`` view (migration 0018, documented in
docs/schema.md), so CS101, the timelines, actor objects and the plain duckdb shell read the same
ties: Hive-style ``NNNNNN_A`` names; Spark ``part-NNNNN-<writeJobUUID>[-c000]`` names through the
UUID's SQL execution (a live listing of that write, else a time window, labelled ``inferred``);
``.spark-staging-<uuid>/`` dirs; ``_temporary/<n>/_temporary/attempt_…/`` Hadoop attempt dirs;
storage caller contexts. A file that more than one attempt could have written lists each of
them with ``candidates`` > 1; this module ties only files with exactly one candidate.
"""

from __future__ import annotations

import re

from commitsleuth.forensics.attempt_labels import label_of

# One attempt as a finding names it (CS101's detail, actor objects): the fields of issue 12.
SPARK_ATTEMPT_STRUCT = """{'kind': 'spark_attempt', 'label': a.label, 'app_id': a.app_id,
    'job': a.job_id, 'execution': a.execution_id, 'stage': a.stage_id, 'stage_attempt': a.stage_attempt,
    'task_index': a.task_index, 'attempt': a.attempt_no, 'tid': a.tid, 'executor': a.executor_id,
    'host': a.host, 'speculative': a.speculative, 'status': a.status, 'end_reason': a.end_reason,
    'run': a.run}"""


def file_attempts_sql(files: str) -> str:
    """CTE ``file_ties`` (event_id -> attempt_id, attempt_event, candidates, who) over the
    relation ``files`` (a column event_id): the Spark attempts that wrote each file; a file more
    than one attempt could have written has a row per candidate (``candidates`` > 1)."""
    return f"""
file_ties AS (
    SELECT t.event_id, a.label AS attempt_id, a.event_id AS attempt_event, t.candidates,
           struct_insert({SPARK_ATTEMPT_STRUCT}, file := t.file_name, tie := t.how, rule := t.rule,
                         candidates := t.candidates) AS who
    FROM file_attempts t SEMI JOIN {files} f ON f.event_id = t.event_id
    JOIN spark_task_attempts a ON a.event_id = t.attempt_event
    WHERE t.kind = 'spark_attempt'
)"""

# How a detector lists the attempts of its files: ``attempts`` in its row, detail and summary.
# Ordered by the whole tie, not its label only: one attempt tied by two rules (a caller context and
# a Hive name) is listed in one order whatever plan the query gets (actors.py keeps a label's last).
ATTEMPTS_LIST = "list(DISTINCT fa.who ORDER BY fa.who) FILTER (WHERE fa.who IS NOT NULL)"


# A few files (a partition's timeline) need not tie every file of the store: the views' own text,
# run over those files and the files of their write jobs, and over the events of those files'
# applications (and of the executions writing their locations) only. Those applications and
# write jobs are looked up first and the views narrowed by them in their own text, as constant
# lists: the attempts' view finds each attempt's first end by a GROUP BY over every attempt end
# of the store, which neither a filter outside it nor a join with a subquery's few rows reaches.
_FEW_UUIDS = "SELECT list(DISTINCT write_uuid) FROM events WHERE event_id IN (SELECT unnest($ids))"
_FEW_APPS = """
WITH few AS (
    SELECT app_id, location FROM events WHERE event_id IN (SELECT unnest($ids))
    UNION ALL
    SELECT app_id, location FROM events WHERE list_contains($uuids, write_uuid)
)
SELECT list(DISTINCT app_id) FROM (
    SELECT app_id FROM few WHERE app_id IS NOT NULL
    UNION
    SELECT x.app_id FROM spark_executions x JOIN few ON few.location = x.write_location)
"""
_FEW = """WITH few_app_events AS (SELECT * FROM events WHERE list_contains($apps, app_id)),
few_attempts AS ({attempts}),
"""
# (two scans, not one with OR: each reads only the row groups it needs)
_FEW_FILES = ("FROM (SELECT * FROM events WHERE event_id IN (SELECT unnest($ids)) UNION ALL "
              "SELECT * FROM events WHERE list_contains($uuids, write_uuid) AND NOT list_contains($ids, event_id)"
              ") events WHERE ")


def _view_body(con, name: str) -> str:
    # the store's own view, not a namesake in another database ATTACHed to the same connection
    sql = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = ? AND schema_name = 'main'"
                      " AND database_name = current_database()", [name]).fetchone()[0]
    return re.sub(r"^CREATE VIEW \S+ AS ", "", sql).rstrip().rstrip(";")


def few_files_sql(con) -> str:
    """The ``file_attempts`` view's rules over the files ``$ids`` only (same rules, same columns),
    given their write jobs (``$uuids``) and the applications (``$apps``) that ``_FEW_UUIDS`` and
    ``_FEW_APPS`` find for them."""
    attempts = re.sub(r"\bFROM events\b", "FROM few_app_events", _view_body(con, "spark_task_attempts"))
    body = re.sub(r"^WITH ", "", _view_body(con, "file_attempts"))
    body = body.replace("FROM events WHERE ", _FEW_FILES, 1)  # the first is the files CTE
    return _FEW.format(attempts=attempts) + re.sub(r"\bspark_task_attempts\b", "few_attempts", body)


def attempts_of_files(con, event_ids: list[int]) -> dict[int, tuple[str, int]]:
    """``file event id -> (attempt label, attempt_end event id)`` for the files one attempt alone
    could have written."""
    if not event_ids:
        return {}
    ids = sorted(set(event_ids))
    uuids = con.execute(_FEW_UUIDS, {"ids": ids}).fetchone()[0] or []
    apps = con.execute(_FEW_APPS, {"ids": ids, "uuids": uuids}).fetchone()[0] or []
    sql = (f"SELECT t.event_id, t.label, t.attempt_event FROM ({few_files_sql(con)}) t "
           "WHERE list_contains($ids, t.event_id) AND t.candidates = 1 AND t.kind = 'spark_attempt'")
    return {e: (a, ae) for e, a, ae in con.execute(sql, {"ids": ids, "apps": apps, "uuids": uuids}).fetchall()}


def spark_attempt_words(a: dict) -> str:
    """``app-…/stage 1.0/task 1 attempt 1 (TID 5) on 127.0.0.3, executor 1, speculative, success,
    wrote 000001_1`` (the attempt's one label, forensics/attempt_labels.py); a tie from times
    alone says ``inferred``, a file several attempts could have written says so."""
    how = ", ".join(w for w in (
        f"executor {a['executor']}" if a.get("executor") is not None else None,
        "speculative" if a.get("speculative") else "not speculative",
        a.get("status") if a.get("end_reason") in (None, "Success") else f"{a.get('status')} ({a['end_reason']})",
        f"wrote {a['file']}" if a.get("file") else None,
        f"one of {a['candidates']} attempts that could have" if (a.get("candidates") or 1) > 1 else None,
        "inferred from times" if a.get("tie") == "inferred" else None) if w)
    return f"{label_of(a)}, {how}"
