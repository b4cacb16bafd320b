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

from commitsleuth.parsers import lakehouse
from commitsleuth.parsers.lakehouse import LogFiles, TableFormat, TableLog, file_columns, millis, normal_spec

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
    # Every commit file is read and parsed here, into columns, not one Event object per action:
    # a log of 100k versions is 100k files, and per-event objects were most of its ingest time.
    rows = Rows(log)
    for version in range(start, last + 1):
        name = commits.get(version)
        if name is None:
            rows.commit(version, None, f"{LOG}/{version:020d}.json", status="missing",
                        reason=f"{version:020d}.json is absent between versions that exist")
        else:
            try:
                data = log.files.read(f"{LOG}/{name}")
            except OSError as exc:
                log.problem(f"{LOG}/{name}", f"cannot read: {exc.strerror or exc}")
                rows.commit(version, _ms(mtimes.get(name), 1000), f"{LOG}/{name}", status="unreadable",
                            reason=f"cannot read: {exc.strerror or exc}")
            else:
                log.files_read += 1
                partition_columns = _commit_rows(rows, log, version, name, data, mtimes.get(name),
                                                 partition_columns)
        if len(rows) >= lakehouse.STEP:  # a table a progress step long: the bar moves as files are read
            yield rows.table()
            rows = Rows(log)
    if len(rows):
        yield rows.table()


def _epoch(seconds):
    return millis(seconds * 1000) if seconds else None


# years 1 to 9999: what ``millis`` turns into a time, and a timestamp column holds
_MIN_MS, _MAX_MS = -62135596800000, 253402300799999


def _ms(value, scale: int = 1) -> int | None:
    """Epoch milliseconds (``value`` × ``scale``) as an int, None for nothing or nonsense, as
    ``millis`` reads them."""
    if type(value) is int:
        ms = value * scale
    elif not value:
        return None
    else:
        try:
            ms = int(float(value) * scale) if scale != 1 else int(value)
        except (TypeError, ValueError, OverflowError):
            return None
    return ms if _MIN_MS <= ms <= _MAX_MS else None


def _commit_rows(rows: "Rows", log: TableLog, version: int, name: str, data: bytes, mtime, partition_columns):
    """The rows of one JSON commit into ``rows``; one ``unreadable`` commit if any line is
    damaged. Returns the table's partition columns after this commit."""
    rel = f"{LOG}/{name}"
    info, txns, files, other, parsed = None, [], [], [], 0
    for line_no, line in enumerate(data.splitlines(), 1):
        if not line or line.isspace():
            continue
        try:
            action = orjson.loads(line)
            if not isinstance(action, dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            reason = f"line {line_no} is not a JSON action ({str(exc).splitlines()[0][:80]})"
            log.problem(rel, reason)
            rows.commit(version, _ms(mtime, 1000), rel, status="unreadable", reason=reason)
            return partition_columns
        parsed += 1
        is_file = False
        for kind, key in (("table_add", "add"), ("table_remove", "remove")):
            act = action.get(key)
            if isinstance(act, dict) and isinstance(act.get("path"), str):
                files.append((line_no, line, kind, act))
                is_file = True
        if is_file and len(action) == 1:
            continue  # nothing else on an add or remove line
        if not is_file:
            other.append((line_no, line))
        found = action.get("commitInfo")
        if info is None and isinstance(found, dict):
            info = found
        txn = action.get("txn")
        if isinstance(txn, dict):
            txns.append({"app_id": txn.get("appId"), "version": txn.get("version")})
        meta = action.get("metaData")
        if isinstance(meta, dict) and isinstance(meta.get("partitionColumns"), list):
            partition_columns = meta["partitionColumns"]
    if not parsed:
        log.problem(rel, "empty commit file")
        rows.commit(version, _ms(mtime, 1000), rel, status="unreadable", reason="empty commit file")
        return partition_columns
    info = info or {}
    ts = _ms(info.get("inCommitTimestamp") or info.get("timestamp")) or _ms(mtime, 1000)
    facts = {key: info[src] for src, key in _COMMIT_INFO_KEYS.items() if key and src in info}
    custom = {k: v for k, v in info.items() if k not in _COMMIT_INFO_KEYS}
    if custom:
        facts["custom"] = custom
    metrics = info.get("operationMetrics") or {}
    if isinstance(metrics, dict) and "num_retries" in metrics:
        facts["num_retries"] = metrics.get("num_retries")
    app_id = None
    if info:
        text = orjson.dumps(info).decode()
        if "app" in text or "local-" in text:  # the pattern's every id holds one: most commits skip it
            app = _APP_ID.search(text)
            app_id = app.group(1) if app else None
    # the commit's own lines (commitInfo, protocol, metaData, txn …) whole, its files' on theirs:
    # the store gives every line of the commit file back
    rows.commit(version, ts, rel, app_id=app_id, raw="\n".join(_raw(name, n, line) for n, line in other) or None,
                txn=txns or None, log_file=name, **facts)
    operation = facts.get("operation")
    columns = tuple(partition_columns)
    for line_no, line, kind, act in files:
        size = act.get("size")
        rows.data_file(kind, version, ts, act["path"], _spec(act.get("partitionValues"), columns),
                       size if type(size) is int else None, app_id, _raw(name, line_no, line), line_no, name,
                       act.get("dataChange"), act.get("modificationTime"), act.get("deletionTimestamp"), operation)
    return partition_columns


class Rows:
    """Events of a table log as columns, ``table()`` an Arrow table of the store's columns
    (redacted when written, by ``record_table``, as every event is)."""

    COLUMNS = ("kind", "ts", "path", "location", "table_name", "app_id", "status", "detail", "raw", "line_no",
               "partition_spec", "file_name", "file_task", "file_attempt", "write_uuid", "size")

    def __init__(self, log: TableLog):
        self.log, self.rows = log, []
        self.under_root = log.files.path("")  # the root and a slash: a log file's path is this and its name

    def __len__(self) -> int:
        return len(self.rows)

    def commit(self, version, ts: int | None, rel: str, *, status: str = "completed", app_id: str | None = None,
               raw: str | None = None, **facts) -> None:
        detail = {"format": self.log.format, "version": version, **{k: v for k, v in facts.items() if v is not None}}
        self.rows.append(("table_commit", ts, self.under_root + rel, self.log.root, self.log.table_name, app_id,
                          status, orjson.dumps(detail, option=orjson.OPT_SORT_KEYS).decode(), raw, None,
                          None, None, None, None, None, None))

    def data_file(self, kind: str, version, ts: int | None, path: str, partition_spec: str | None, size,
                  app_id: str | None, raw: str, line_no: int, log_file: str, data_change, modified, deleted_at,
                  operation) -> None:
        """One add or remove; ``modified`` and ``deleted_at`` in epoch ms as the log has them,
        in ``detail`` as the time's text (as other formats' events show a time). What its path
        tells (``file_facts``) is read in ``table``, for all the batch's files at once."""
        detail = {"format": self.log.format, "version": version, "line": line_no, "log_file": log_file}
        if data_change is not None:
            detail["data_change"] = data_change
        if operation is not None:
            detail["operation"] = operation
        for key, value in (("modified", modified), ("deleted_at", deleted_at)):
            if value is not None and (value := millis(value)) is not None:
                detail[key] = str(value)
        spec = normal_spec(partition_spec) if partition_spec else None
        self.rows.append((kind, ts, self.log.absolute(path), self.log.root, self.log.table_name, app_id, None,
                          detail, raw, line_no, spec, None, None, None, None, size))

    def table(self):
        import pyarrow as pa

        from commitsleuth.model import event_schema

        schema, n = event_schema(), len(self.rows)
        cols = {k: list(v) for k, v in zip(self.COLUMNS, zip(*self.rows))}
        files = [i for i, kind in enumerate(cols["kind"]) if kind != "table_commit"]
        if files:
            facts = file_columns(pa.array([cols["path"][i] for i in files], pa.string()))
            writers = {k: v.to_pylist() for k, v in facts.pop("writers").items()}
            dir_specs = facts.pop("dir_spec").to_pylist()
            facts = {k: v.to_pylist() for k, v in facts.items()}
            details, specs = cols["detail"], cols["partition_spec"]
            for j, i in enumerate(files):
                detail = details[i]
                if writers["tid"][j] is not None:  # writer_of's facts: those the name holds
                    detail.update({k: v[j] for k, v in writers.items() if v[j] is not None})
                details[i] = orjson.dumps(detail, option=orjson.OPT_SORT_KEYS).decode()
                if specs[i] is None:
                    specs[i] = dir_specs[j]
                for key, values in facts.items():
                    cols[key][i] = values[j]
        arrays = []
        for fld in schema:
            if fld.name == "ts":
                arrays.append(pa.array(cols["ts"], pa.timestamp("ms")).cast(fld.type))
            elif fld.name in cols:
                arrays.append(pa.array(cols[fld.name], fld.type))
            else:
                arrays.append(pa.nulls(n, fld.type))
        return pa.Table.from_arrays(arrays, schema=schema)


def _raw(name: str, line_no: int, line: bytes) -> str:
    return f"{name} line {line_no}: {line.decode('utf-8', 'replace')}"


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
