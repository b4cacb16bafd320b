"""The key facts of one evidence event, for the report to show before (or instead of) its line.

A listed file has no log line: its facts are its name, size and time. A JSON line (a Spark
listener event, a history event) is 1-2 KB of nested fields of which a handful matter: those
are shown as a table, and the raw line stays one click away. Values are plain text here; the
report's script puts them into the page as text, never as markup.
"""

from __future__ import annotations

import datetime as dt
import json

MAX_FACTS = 14
MAX_VALUE = 200

# A Spark listener event's fields that say what happened, in this order (SparkListenerTaskEnd,
# TaskStart, JobStart/End, StageSubmitted/Completed, ApplicationStart/End).
_SPARK = (
    ("Event",), ("App ID",), ("App Name",), ("Job ID",), ("Job Result", "Result"), ("Stage ID",),
    ("Stage Attempt ID",), ("Stage Info", "Stage ID"), ("Stage Info", "Stage Attempt ID"),
    ("Task Info", "Task ID"), ("Task Info", "Index"), ("Task Info", "Attempt"), ("Task Info", "Executor ID"),
    ("Task Info", "Host"), ("Task Info", "Speculative"), ("Task End Reason", "Reason"),
    ("Task End Reason", "Kill Reason"), ("Task End Reason", "Description"), ("Task End Reason", "Class Name"),
    ("Task Info", "Launch Time"), ("Task Info", "Finish Time"),
    ("Task Metrics", "Output Metrics", "Bytes Written"), ("Task Metrics", "Output Metrics", "Records Written"),
    ("Timestamp",), ("Completion Time",),
)
_TIMES = {"Launch Time", "Finish Time", "Timestamp", "Completion Time", "Submission Time"}


def file_facts(path: str | None, size: int | None, ts: dt.datetime | None, when: str) -> list[list[str]]:
    """A listed file: its name, size and time (``when``: the time as the report writes it)."""
    name = (path or "").rstrip("/").rsplit("/", 1)[-1]
    out = [["file", name]] if name else []
    if size is not None:
        out.append(["size", f"{size:,} bytes"])
    if ts is not None:
        out.append(["modified", when])
    return out


def json_facts(raw: str | None) -> list[list[str]]:
    """The key fields of a JSON line (empty when the line is not a JSON object)."""
    if not raw or not raw.lstrip().startswith("{"):
        return []
    try:
        data = json.loads(raw)
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    if "Event" in data:
        picked = [(p[-1], _at(data, p)) for p in _SPARK]  # Spark's own field names say enough
        out = [[k, _value(k, v)] for k, v in picked if v is not None and not isinstance(v, (dict, list))]
    else:
        out = [[k, _value(k, v)] for k, v in _leaves(data)]
    return out[:MAX_FACTS]


def _at(data, path):
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _leaves(data, prefix=""):
    """Scalar fields, depth first, with their dotted keys (a history event's nested record)."""
    for k, v in data.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            yield from _leaves(v, key + " / ")
        elif not isinstance(v, list) and v is not None:
            yield key, v


def _value(key: str, v) -> str:
    if key.rsplit(" / ", 1)[-1] in _TIMES and isinstance(v, int) and v > 0:
        text = dt.datetime.fromtimestamp(v / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"
        return text
    text = str(v).lower() if isinstance(v, bool) else str(v)
    return text if len(text) <= MAX_VALUE else text[:MAX_VALUE] + "…"
