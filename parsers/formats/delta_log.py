"""Delta Lake's transaction log: ``_delta_log/NNNNNNNNNNNNNNNNNNNN.json`` commits (one action per
line: commitInfo, add, remove, txn, metaData, protocol), Parquet checkpoints
``N.checkpoint.parquet`` or ``N.checkpoint.PPPPPPPPPP.TTTTTTTTTT.parquet`` and the pointer
``_last_checkpoint``. The protocol (PROTOCOL.md) defines every field read here.

Commits below the oldest JSON still present (log cleanup) are known only through a checkpoint:
its ``add`` rows become the table's files at that version. A version missing between two that
exist is a gap (``status='missing'``); a commit or checkpoint that cannot be read is
``status='unreadable'`` with the reason, and none of its actions is taken.
"""

from __future__ import annotations

import io
import re

import orjson

from commitsleuth.model import Event
from commitsleuth.parsers.lakehouse import LogFiles, TableFormat, TableLog, millis

LOG = "_delta_log"
_COMMIT = re.compile(r"^(\d{20})\.json$")
_CHECKPOINT = re.compile(r"^(\d{20})\.checkpoint(?:\.(\d{10})\.(\d{10}))?\.parquet$")
# Spark / delta-rs temp commit files: a writer that died before its put-if-absent left one
_TEMP_COMMIT = re.compile(r"^(?:_commit_[0-9a-f-]+\.json\.tmp|\.\d{20}\.json\.[0-9a-f-]+\.tmp|\d{20}\.json\.tmp)$")
# Application ids a commit may carry (userMetadata, custom commitInfo keys)
_APP_ID = re.compile(r"\b(application_\d{10,13}_\d{4,}|app-\d{14}-\d{4,}|local-\d{13})\b")
_COMMIT_INFO_KEYS = {
    "timestamp": None, "inCommitTimestamp": None, "operation": "operation",
    "operationParameters": "parameters", "readVersion": "read_version", "isolationLevel": "isolation_level",
    "isBlindAppend": "blind_append", "engineInfo": "engine", "clientVersion": "client_version",
    "txnId": "txn_id", "userMetadata": "user_metadata", "operationMetrics": "metrics",
    "clusterId": "cluster_id", "job": "job", "notebook": "notebook", "userId": "user_id", "userName": "user_name",
}
MAX_RAW = 1000


def recognise(files: LogFiles) -> bool:
    return files.is_dir(LOG) and any(_COMMIT.match(n) or _CHECKPOINT.match(n) or n == "_last_checkpoint"
                                     for n, _, _ in files.list(LOG))


def read(log: TableLog):
    listing = log.files.list(LOG)
    commits = {int(m[1]): name for name, _, _ in listing if (m := _COMMIT.match(name))}
    sizes = {name: size for name, size, _ in listing}
    mtimes = {name: mtime for name, _, mtime in listing}
    checkpoints: dict[int, list[str]] = {}
    for name, _, _ in listing:
        m = _CHECKPOINT.match(name)
        if m:
            checkpoints.setdefault(int(m[1]), []).append(name)
    for name, _, mtime in listing:
        if _TEMP_COMMIT.match(name):
            # a commit a writer staged and never published (killed, or lost its put-if-absent race)
            yield log.commit(None, _epoch(mtime), f"{LOG}/{name}", status="uncommitted",
                             log_file=name, size=sizes[name])
    yield from _last_checkpoint(log, listing, checkpoints)
    if not commits and not checkpoints:
        return
    first = min(commits) if commits else None
    start = 0
    partition_columns: list[str] = []
    if first is None or first > 0:
        # older commits cleaned up: the state before the oldest JSON comes from a checkpoint
        usable = sorted(v for v in checkpoints if first is None or v >= first - 1)
        base = None
        for version in usable:
            state = _read_checkpoint(log, version, checkpoints[version], sizes)
            if state is not None:
                base = version
                break
        if base is None:
            yield log.commit(first - 1 if first else None, None, f"{LOG}", status="unreadable",
                             reason=f"log starts at version {first} and no readable checkpoint covers the versions before it")
            start = first if first is not None else 0
        else:
            yield from _checkpoint_events(log, base, checkpoints[base], state)
            partition_columns = state["partition_columns"]
            start = base + 1
    last = max(commits) if commits else start - 1
    for version in range(start, last + 1):
        name = commits.get(version)
        if name is None:
            yield log.commit(version, None, f"{LOG}/{version:020d}.json", status="missing",
                             reason=f"{version:020d}.json is absent between versions that exist")
            continue
        try:
            data = log.files.read(f"{LOG}/{name}")
        except OSError as exc:
            log.problem(f"{LOG}/{name}", f"cannot read: {exc.strerror or exc}")
            yield log.commit(version, _epoch(mtimes.get(name)), f"{LOG}/{name}", status="unreadable",
                             reason=f"cannot read: {exc.strerror or exc}")
            continue
        log.files_read += 1
        events, partition_columns = _commit_events(log, version, name, data, mtimes.get(name), partition_columns)
        yield from events


def _epoch(seconds):
    return millis(seconds * 1000) if seconds else None


def _commit_events(log: TableLog, version: int, name: str, data: bytes, mtime, partition_columns):
    """The events of one JSON commit; one ``unreadable`` commit event if any line is damaged."""
    rel = f"{LOG}/{name}"
    actions = []
    for line_no, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            action = orjson.loads(line)
            if not isinstance(action, dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            reason = f"line {line_no} is not a JSON action ({str(exc).splitlines()[0][:80]})"
            log.problem(rel, reason)
            return [log.commit(version, _epoch(mtime), rel, status="unreadable", reason=reason)], partition_columns
        actions.append((line_no, line, action))
    if not actions:
        log.problem(rel, "empty commit file")
        return [log.commit(version, _epoch(mtime), rel, status="unreadable", reason="empty commit file")], partition_columns
    info = next((a["commitInfo"] for _, _, a in actions if isinstance(a.get("commitInfo"), dict)), {})
    ts = millis(info.get("inCommitTimestamp") or info.get("timestamp")) or _epoch(mtime)
    facts = {key: info.get(src) for src, key in _COMMIT_INFO_KEYS.items() if key and src in info}
    custom = {k: v for k, v in info.items() if k not in _COMMIT_INFO_KEYS}
    if custom:
        facts["custom"] = custom
    metrics = info.get("operationMetrics") or {}
    if isinstance(metrics, dict) and "num_retries" in metrics:
        facts["num_retries"] = metrics.get("num_retries")
    txns = [{"app_id": a["txn"].get("appId"), "version": a["txn"].get("version")}
            for _, _, a in actions if isinstance(a.get("txn"), dict)]
    for _, _, a in actions:
        meta = a.get("metaData")
        if isinstance(meta, dict) and isinstance(meta.get("partitionColumns"), list):
            partition_columns = meta["partitionColumns"]
    app = _APP_ID.search(orjson.dumps(info).decode()) if info else None
    app_id = app.group(1) if app else None
    commit = log.commit(version, ts, rel, app_id=app_id, txn=txns or None, log_file=name, **facts)
    commit.raw = _raw(name, actions[0][0], actions[0][1])
    out: list[Event] = [commit]
    for line_no, line, a in actions:
        for kind, key in (("table_add", "add"), ("table_remove", "remove")):
            act = a.get(key)
            if not isinstance(act, dict) or not isinstance(act.get("path"), str):
                continue
            ev = log.data_file(
                kind, version, ts, act["path"], partition_spec=_spec(act.get("partitionValues"), partition_columns),
                size=act.get("size") if isinstance(act.get("size"), int) else None, app_id=app_id,
                data_change=act.get("dataChange"), modified=millis(act.get("modificationTime")),
                deleted_at=millis(act.get("deletionTimestamp")), operation=facts.get("operation"),
                line=line_no, log_file=name,
            )
            ev.line_no = line_no
            ev.raw = _raw(name, line_no, line)
            out.append(ev)
    return out, partition_columns


def _raw(name: str, line_no: int, line: bytes) -> str:
    text = line.decode("utf-8", "replace")
    return f"{name} line {line_no}: {text[:MAX_RAW]}"


def _spec(values, columns: list[str]) -> str | None:
    """``k=v/k2=v2`` in the table's partition column order (Hive's default partition for null)."""
    if not isinstance(values, dict) or not values:
        return None
    keys = [c for c in columns if c in values] + [k for k in values if k not in columns]
    return "/".join(f"{k}={'__HIVE_DEFAULT_PARTITION__' if values[k] is None else values[k]}" for k in keys)


def _last_checkpoint(log: TableLog, listing, checkpoints):
    names = {n for n, _, _ in listing}
    if "_last_checkpoint" not in names:
        return
    rel = f"{LOG}/_last_checkpoint"
    try:
        pointer = orjson.loads(log.files.read(rel))
        version = int(pointer["version"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.problem(rel, f"not a checkpoint pointer ({type(exc).__name__})")
        return
    parts = pointer.get("parts")
    have = checkpoints.get(version, [])
    if not have:
        log.problem(rel, f"points to checkpoint {version}, which is absent")
    elif parts and len(have) != int(parts):
        log.problem(rel, f"points to checkpoint {version} of {parts} parts; {len(have)} present")
    return
    yield  # a generator, like the other readers


def _read_checkpoint(log: TableLog, version: int, names: list[str], sizes) -> dict | None:
    """A checkpoint's adds, removes and txns; None (and a problem) when a part is missing or
    cannot be read."""
    import pyarrow.parquet as pq

    multi = [n for n in names if _CHECKPOINT.match(n)[2]]
    if multi:
        total = int(_CHECKPOINT.match(multi[0])[3])
        parts = {int(_CHECKPOINT.match(n)[2]): n for n in multi}
        missing = [p for p in range(1, total + 1) if p not in parts]
        if missing:
            log.problem(f"{LOG}/{multi[0]}", f"checkpoint {version} part {missing[0]} of {total} is absent")
            return None
        names = [parts[p] for p in range(1, total + 1)]
    else:
        names = names[:1]
    state = {"add": [], "remove": [], "txn": [], "partition_columns": []}
    for name in names:
        rel = f"{LOG}/{name}"
        try:
            table = pq.read_table(io.BytesIO(log.files.read(rel)))
        except Exception as exc:  # pyarrow raises ArrowInvalid/OSError for truncated files
            log.problem(rel, f"checkpoint not readable: {str(exc).splitlines()[0][:120]}")
            return None
        log.files_read += 1
        cols = set(table.column_names)
        for key in ("add", "remove", "txn"):
            if key in cols:
                state[key].extend(r for r in table.column(key).to_pylist() if r)
        if "metaData" in cols:
            for meta in table.column("metaData").to_pylist():
                if meta and meta.get("partitionColumns"):
                    state["partition_columns"] = list(meta["partitionColumns"])
    return state


def _checkpoint_events(log: TableLog, version: int, names: list[str], state: dict):
    rel = f"{LOG}/{sorted(names)[0]}"
    txns = [{"app_id": t.get("appId"), "version": t.get("version")} for t in state["txn"]]
    yield log.commit(version, None, rel, checkpoint=True, txn=txns or None, log_file=sorted(names)[0],
                     reason="state at this version read from its checkpoint (older commits cleaned up)")
    for act in state["add"]:
        values = act.get("partitionValues")
        if isinstance(values, list):  # pyarrow reads a map as (key, value) pairs
            values = dict(values)
        yield log.data_file("table_add", version, millis(act.get("modificationTime")), act["path"],
                            partition_spec=_spec(values, state["partition_columns"]), size=act.get("size"),
                            checkpoint=True, log_file=sorted(names)[0])


FORMAT = TableFormat(
    name="delta-log",
    description="Delta Lake transaction log (_delta_log/: JSON commits, Parquet checkpoints, _last_checkpoint)",
    log_dir=LOG,
    recognise=recognise,
    read=read,
)
