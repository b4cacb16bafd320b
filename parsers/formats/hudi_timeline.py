"""Apache Hudi's timeline: ``.hoodie/`` (0.x) or ``.hoodie/timeline/`` (1.x) instants.

0.x names an instant ``<time>.<action>`` when completed and ``<time>.<action>.requested`` /
``<time>.<action>.inflight`` before (a plain commit's inflight is ``<time>.inflight``); 1.x
names a completed instant ``<time>_<completion time>.<action>``. Actions: commit, deltacommit,
replacecommit, clean, rollback, compaction, clustering, savepoint, restore.

Every instant is a ``table_commit`` in its latest state (``requested``, ``inflight`` or
``completed``). A completed commit's metadata (JSON in 0.x, Avro in 1.x) lists
``partitionToWriteStats[].path``: each becomes a ``table_add`` on its partition; a completed
rollback's ``partitionMetadata[].successDeleteFiles`` are kept in its detail as the files it
deleted. Data file names carry the writer: ``{fileId}_{partitionId-stageId-TID}_{instant}``.
"""

from __future__ import annotations

import io
import re

import orjson

from commitsleuth.model import Event
from commitsleuth.parsers.lakehouse import LogFiles, TableFormat, TableLog

LOG = ".hoodie"
_ACTIONS = ("commit", "deltacommit", "replacecommit", "clean", "rollback", "compaction", "clustering",
            "savepoint", "restore", "logcompaction", "indexing")
_INSTANT = re.compile(r"^(?P<time>\d{8,17})(?:_(?P<done>\d{8,17}))?\.(?P<action>" + "|".join(_ACTIONS)
                      + r"|inflight)(?:\.(?P<state>requested|inflight))?$")
_STATES = {"requested": 0, "inflight": 1, "completed": 2}


def recognise(files: LogFiles) -> bool:
    return files.is_dir(LOG) and any(n == "hoodie.properties" or _INSTANT.match(n) for n, _, _ in files.list(LOG))


def read(log: TableLog):
    rel_dirs = [f"{LOG}/timeline", LOG] if log.files.is_dir(f"{LOG}/timeline") else [LOG]
    instants: dict[tuple[str, str], tuple[str, str, str | None]] = {}  # (time, action) -> (state, rel, done)
    for rel_dir in rel_dirs:
        for name, _, _ in log.files.list(rel_dir):
            m = _INSTANT.match(name)
            if not m:
                continue
            action, state = m["action"], m["state"] or "completed"
            if action == "inflight":  # 0.x: <time>.inflight is a plain commit in flight
                action, state = "commit", "inflight"
            key = (m["time"], action)
            have = instants.get(key)
            if have is None or _STATES[state] > _STATES[have[0]]:
                instants[key] = (state, f"{rel_dir}/{name}", m["done"])
    fields = partition_fields(log)
    slices: dict[str, Event] = {}  # fileId -> the add of its latest base file
    for (time, action), (state, rel, done) in sorted(instants.items()):
        ts = _instant_ts(time)
        meta = _metadata(log, rel) if state == "completed" else {}
        if meta is None:
            yield log.commit(time, ts, rel, status="unreadable", action=action,
                             reason="instant file not readable")
            continue
        extra = meta.get("extraMetadata") or {}
        deleted = []
        for part in (meta.get("partitionMetadata") or {}).values():
            if isinstance(part, dict):
                deleted.extend(part.get("successDeleteFiles") or [])
        commit = log.commit(time, ts, rel, status=state, action=action, completed_at=done,
                            operation=meta.get("operationType") or action,
                            app_id=extra.get("spark.app.id") if isinstance(extra, dict) else None,
                            rolled_back=meta.get("commitsRollback") or None,
                            deleted_files=deleted or None, engine="hudi")
        yield commit
        # a file group's new slice supersedes its previous base file, and a replacecommit
        # (insert overwrite, clustering) retires whole file groups: the cleaner may delete those
        replaced = [fid for ids in (meta.get("partitionToReplaceFileIds") or {}).values() for fid in ids or []]
        for fid in replaced:
            if fid in slices:
                yield _retire(log, slices.pop(fid), time, ts, "file group replaced")
        for partition, stats in (meta.get("partitionToWriteStats") or {}).items():
            for stat in stats or []:
                if not isinstance(stat, dict) or not isinstance(stat.get("path"), str):
                    continue
                spec = partition_spec(partition, fields)
                add = log.data_file("table_add", time, ts, stat["path"], partition_spec=spec,
                                    size=stat.get("totalWriteBytes") or stat.get("fileSizeInBytes"),
                                    hudi_partition=partition or None, prev_commit=stat.get("prevCommit"),
                                    num_writes=stat.get("numWrites"), num_inserts=stat.get("numInserts"),
                                    operation=meta.get("operationType"))
                fid = stat.get("fileId")
                if fid and add.file_name and not add.file_name.startswith("."):  # base files, not log files
                    previous = slices.get(fid)
                    if previous is not None and previous.path != add.path:
                        yield _retire(log, previous, time, ts, "superseded by a newer slice")
                    slices[fid] = add
                yield add


def partition_fields(log: TableLog) -> list[str]:
    """The partition fields ``hoodie.properties`` names (``hoodie.table.partition.fields``, a
    custom key generator's ``field:type`` as its field); [] when absent or unreadable."""
    try:
        data = log.files.read(f"{LOG}/hoodie.properties")
    except OSError:
        return []
    for line in data.decode("utf-8", "replace").splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "hoodie.table.partition.fields":
            value = value.strip().replace("\\:", ":")  # java.util.Properties escapes ':'
            return [f.split(":")[0].strip() for f in value.split(",") if f.strip()]
    return []


def partition_spec(partition: str | None, fields: list[str]) -> str | None:
    """The key of a Hudi partition path, as every other source keys it: a hive-style path
    (``dt=2024-05-19``) as it is; a default one (``2024/05/19``) with the table's partition fields
    (``year=2024/month=05/day=19``), one field with a multi-level path (a timestamp key
    generator's ``yyyy/MM/dd``) as one value with ``/`` escaped as Hive escapes it (%2F)."""
    if not partition:
        return None
    if "=" in partition:
        return partition
    levels = partition.strip("/").split("/")
    if len(fields) == len(levels):
        return "/".join(f"{k}={v}" for k, v in zip(fields, levels))
    if len(fields) == 1:
        return f"{fields[0]}={partition.strip('/').replace('/', '%2F')}"
    return None


def _retire(log: TableLog, add: Event, time: str, ts, why: str) -> Event:
    return log.data_file("table_remove", time, ts, add.path, partition_spec=add.partition_spec,
                         hudi_partition=add.detail.get("hudi_partition"), reason=why)


def _instant_ts(time: str):
    import datetime as dt

    for fmt, n in (("%Y%m%d%H%M%S%f", 17), ("%Y%m%d%H%M%S", 14)):
        if len(time) == n:
            try:
                return dt.datetime.strptime(time, fmt)
            except ValueError:
                return None
    return None


def _metadata(log: TableLog, rel: str) -> dict | None:
    """An instant's metadata: JSON (0.x commits), Avro (1.x, and clean/rollback); {} when empty."""
    try:
        data = log.files.read(rel)
    except OSError as exc:
        log.problem(rel, f"cannot read: {exc.strerror or exc}")
        return None
    log.files_read += 1
    if not data.strip():
        return {}
    if data[:4] == b"Obj\x01":
        import fastavro

        try:
            records = list(fastavro.reader(io.BytesIO(data)))
        except Exception as exc:
            log.problem(rel, f"not readable Avro: {str(exc)[:100] or type(exc).__name__}")
            return None
        return records[0] if records and isinstance(records[0], dict) else {}
    try:
        doc = orjson.loads(data)
    except ValueError as exc:
        log.problem(rel, f"not JSON: {str(exc).splitlines()[0][:100]}")
        return None
    return doc if isinstance(doc, dict) else {}


FORMAT = TableFormat(
    name="hudi-timeline",
    description="Apache Hudi timeline (.hoodie/ instants, 0.x and 1.x naming, commit metadata)",
    log_dir=LOG,
    recognise=recognise,
    read=read,
)
