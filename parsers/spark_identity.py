"""The identity of a Spark listener event, the same whichever way it reached the store.

Live capture, its spool and Spark's own event log of one application carry the same events,
but not the same bytes: the spool lacks what Spark posted before the capture attached, Spark's
own log may be redacted differently, and line numbers and offsets differ. So the identity is
built from what names an event inside its application: the Spark event's type, its ids (job,
stage and stage attempt, task id and attempt, SQL execution id) and its own time (which tells
the attempts of one YARN application apart: task ids restart in each), plus the canonical
event's kind, and for a ``conf`` event its key and value. It is stored as ``events.event_key``
(a signed 64-bit hash) beside ``app_id``; ingest compares ``(app_id, event_key)``
(``Store.unseen_events``).

Only ids, times, event types and commit-relevant conf values go into the hash, never free
text: the key does not depend on redaction and reveals nothing a redacted row hides.
"""

from __future__ import annotations

import hashlib
import re

import orjson

_EXCLUSION = re.compile(r"(Excluded|Unexcluded|Blacklisted|Unblacklisted)(ForStage)?$")


def _fields(*names):
    return lambda e: ":".join(str(e.get(n)) for n in names)


def _stage(e: dict) -> str:
    info = e.get("Stage Info") or {}
    return f"{info.get('Stage ID')}.{info.get('Stage Attempt ID')}@{info.get('Submission Time')}"


def _task(e: dict) -> str:
    info = e.get("Task Info") or {}
    return (f"{e.get('Stage ID')}.{e.get('Stage Attempt ID', 0)}:{info.get('Task ID')}."
            f"{info.get('Attempt', 0)}@{info.get('Launch Time')}")


# Every event type the decoder reads; an environment is one per application (conf key=value).
_RULES = {
    "SparkListenerApplicationStart": _fields("Timestamp"),
    "SparkListenerApplicationEnd": _fields("Timestamp"),
    "SparkListenerEnvironmentUpdate": lambda e: "",
    "SparkListenerJobStart": _fields("Job ID", "Submission Time"),
    "SparkListenerJobEnd": _fields("Job ID", "Completion Time"),
    "SparkListenerStageSubmitted": _stage,
    "SparkListenerStageCompleted": _stage,
    "SparkListenerTaskStart": _task,
    "SparkListenerTaskEnd": _task,
    "SparkListenerSQLExecutionStart": _fields("executionId", "time"),
    "SparkListenerSQLExecutionEnd": _fields("executionId", "time"),
}
_EXCLUSION_FIELDS = _fields("time", "executorId", "hostId", "nodeId", "stageId", "stageAttemptId")


def spark_event_name(event: dict) -> str:
    """``type:ids@time`` of one Spark listener event (a JSON object of an event log or spool)."""
    short = event.get("Event", "").rsplit(".", 1)[-1]
    rule = _RULES.get(short)
    if rule is None and _EXCLUSION.search(short):
        rule = _EXCLUSION_FIELDS
    if rule is not None:
        return f"{short}:{rule(event)}"
    # an event type without a rule of its own: its whole content, keys sorted
    content = orjson.dumps(event, option=orjson.OPT_SORT_KEYS)
    return f"{short}:{hashlib.blake2b(content, digest_size=16).hexdigest()}"


def event_key(name: str, kind: str, detail: dict | None = None) -> int:
    """The stored identity of one canonical event made from the Spark event called ``name``."""
    text = f"{name}|{kind}"
    if kind == "conf" and detail:
        # an environment yields several conf events, and live capture builds its own
        text += f"|{detail.get('key')}={detail.get('value')}"
    return identity_hash(text)


def identity_hash(text: str) -> int:
    """``name|kind[|key=value]`` as the signed 64-bit number stored in ``events.event_key``
    (the event-log fast path builds the same text in SQL)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big", signed=True)


def identity_hashes(texts: "pa.Array | pa.ChunkedArray") -> "pa.Array":
    """``identity_hash`` of every text of an Arrow string array (no nulls), as an int64 array:
    one digest call per text and one conversion for them all."""
    import numpy as np
    import pyarrow as pa

    digest = hashlib.blake2b
    joined = b"".join([digest(t, digest_size=8).digest() for t in texts.cast(pa.binary()).to_pylist()])
    return pa.array(np.frombuffer(joined, dtype=">i8").astype(np.int64))
