"""Hadoop attempt ids taken apart: MR1/MR2 (Spark-made ones with multi-digit attempts) and Tez."""

from __future__ import annotations

import re

# MR1 attempt_201304111550_268224_m_000005_0, MR2 attempt_1445144423722_0020_m_000000_1,
# Spark-made attempt_201706092018_0024_m_000004_1026 (the attempt is Spark's task id),
# LocalJobRunner attempt_local_0001_m_000000_0 (Hadoop 1) and attempt_local1234567_0001_… (2.x+).
ATTEMPT_RE = re.compile(
    r"attempt_(?P<cluster>\d+|local\d*)_(?P<job>\d+)_(?P<type>[mr])_(?P<task>\d+)_(?P<attempt>\d+)"
)
# Tez attempt_<clusterTs>_<app>_<dag>_<vertex>_<task>_<attempt>.
TEZ_ATTEMPT_RE = re.compile(
    r"attempt_(?P<cluster>\d+)_(?P<app>\d+)_(?P<dag>\d+)_(?P<vertex>\d+)_(?P<task>\d+)_(?P<attempt>\d+)"
)
ANY_ATTEMPT_RE = re.compile(rf"{ATTEMPT_RE.pattern}|{TEZ_ATTEMPT_RE.pattern.replace('?P<', '?P<tez_')}")


# Each attempt-id dialect: its pattern, and how its parts name the job and the task.
_SHAPES = (
    (ATTEMPT_RE, "job_{cluster}_{job}", "task_{cluster}_{job}_{type}_{task}"),
    (TEZ_ATTEMPT_RE, "dag_{cluster}_{app}_{dag}", "task_{cluster}_{app}_{dag}_{vertex}_{task}"),
)


def attempt_fields(attempt_id: str) -> dict:
    """``attempt_id`` plus ``attempt_no``, ``task_id`` and ``job_id`` (a Tez DAG id) when it parses."""
    for pattern, job, task in _SHAPES:
        m = pattern.fullmatch(attempt_id)
        if m:
            parts = m.groupdict()
            return {
                "attempt_id": attempt_id,
                "attempt_no": int(parts["attempt"]),
                "job_id": job.format(**parts),
                "task_id": task.format(**parts),
            }
    return {"attempt_id": attempt_id}


# Where a log's own name says whose it is: MR userlogs/<attempt>/…, and Tez's syslog_<attempt>
# (TezChild.run gives each attempt's log that name; `yarn logs` shows it as the LogType).
LOG_NAME_ATTEMPT = re.compile(
    r"(?:^|/)(attempt_\d+_\d+_[mr]_\d+_\d+)(?:/|$)|(?:^|/)syslog_(attempt_\d+_\d+_\d+_\d+_\d+_\d+)(?:\.\w+)?$")


def attempt_of_log_name(path: str) -> str | None:
    """The attempt a log file's path or name belongs to, or None."""
    m = LOG_NAME_ATTEMPT.search(path.replace("\\", "/"))
    return (m.group(1) or m.group(2)) if m else None

