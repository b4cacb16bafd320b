"""Apache Iceberg table metadata: ``metadata/vN.metadata.json`` (Hadoop catalog) or
``NNNNN-<uuid>.metadata.json`` (every other catalog), each holding the snapshots (snapshot-id,
parent-snapshot-id, sequence-number, timestamp-ms, manifest-list, summary) and the metadata log;
manifest lists and manifests are Avro, read with fastavro (a maintained reader).

Every snapshot any metadata file names is a ``table_commit``; every manifest entry ADDED (1) or
DELETED (2) is a ``table_add`` / ``table_remove`` at the snapshot that wrote it (EXISTING
entries only carry a file over). Two metadata files of one version number (two writers that
both thought they committed version N) are kept as ``status='conflict'`` commits for the one
the table's metadata log does not lead through.
"""

from __future__ import annotations

import gzip
import io
import re

import orjson

from commitsleuth.parsers.lakehouse import LogFiles, TableFormat, TableLog, millis

LOG = "metadata"
_METADATA = re.compile(r"^(?:v(?P<v>\d+)|(?P<n>\d{5,})-[0-9a-f-]{36})(?:\.gz)?\.metadata\.json(?:\.gz)?$")
_STREAMING = ("spark.sql.streaming.queryId", "spark.sql.streaming.epochId")


def recognise(files: LogFiles) -> bool:
    return files.is_dir(LOG) and any(_METADATA.match(n) for n, _, _ in files.list(LOG))


def _version(name: str) -> int:
    m = _METADATA.match(name)
    return int(m["v"] if m["v"] is not None else m["n"])


def read(log: TableLog):
    names = sorted((n for n, _, _ in log.files.list(LOG) if _METADATA.match(n)), key=lambda n: (_version(n), n))
    metadata: dict[str, dict] = {}
    for name in names:
        rel = f"{LOG}/{name}"
        try:
            data = log.files.read(rel)
            if name.endswith(".gz") or ".gz." in name:
                data = gzip.decompress(data)
            doc = orjson.loads(data)
            if not isinstance(doc, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError, EOFError) as exc:
            log.problem(rel, f"metadata file not readable: {str(exc).splitlines()[0][:100]}")
            continue
        log.files_read += 1
        metadata[name] = doc
    if not metadata:
        return
    latest_name = max(metadata, key=lambda n: (_version(n), metadata[n].get("last-updated-ms") or 0))
    latest = metadata[latest_name]
    chain = {str(e.get("metadata-file", "")).rsplit("/", 1)[-1] for e in latest.get("metadata-log") or []}
    chain.add(latest_name)
    specs = {s.get("spec-id"): [f.get("name") for f in s.get("fields") or []] for s in latest.get("partition-specs") or []}
    # snapshots: the latest metadata's first, then those only older (or losing) files name
    snapshots: dict[int, tuple[dict, str]] = {}
    for name in [latest_name, *sorted(metadata, key=_version, reverse=True)]:
        for snap in metadata[name].get("snapshots") or []:
            if isinstance(snap, dict) and snap.get("snapshot-id") is not None:
                snapshots.setdefault(snap["snapshot-id"], (snap, name))
    live_ids = {s.get("snapshot-id") for s in latest.get("snapshots") or [] if isinstance(s, dict)}
    off = _off_lineage(latest, snapshots)
    by_version: dict[int, list[str]] = {}
    for name in metadata:
        by_version.setdefault(_version(name), []).append(name)
    for version, files in sorted(by_version.items()):
        if len(files) < 2:
            continue
        for name in files:
            if name in chain:
                continue
            doc = metadata[name]
            current = doc.get("current-snapshot-id")
            yield log.commit(version, millis(doc.get("last-updated-ms")), f"{LOG}/{name}", status="conflict",
                             metadata_file=name, snapshot_id=current, snapshot_kept=current in live_ids,
                             reason=f"a second metadata file of version {version}; the table's log leads through "
                                    f"{', '.join(sorted(set(files) & chain)) or 'neither'}")
    yield from _gaps(log, latest, latest_name, snapshots, set(metadata))
    manifests_read: set[str] = set()
    for snap_id, (snap, name) in sorted(snapshots.items(), key=lambda kv: (kv[1][0].get("sequence-number") or 0,
                                                                          kv[1][0].get("timestamp-ms") or 0)):
        summary = snap.get("summary") or {}
        ts = millis(snap.get("timestamp-ms"))
        manifest_list = snap.get("manifest-list")
        status = "completed" if snap_id in live_ids else "dropped"
        facts = dict(snapshot_id=snap_id, parent=snap.get("parent-snapshot-id"), operation=summary.get("operation"),
                     summary=summary or None, metadata_file=name,
                     engine=" ".join(filter(None, (summary.get("engine-name"), summary.get("engine-version")))) or None,
                     streaming={"query_id": summary.get(_STREAMING[0]), "epoch_id": summary.get(_STREAMING[1])}
                     if summary.get(_STREAMING[0]) else None,
                     in_latest=snap_id in live_ids, off_lineage=True if snap_id in off else None)
        entries = None
        if manifest_list:
            entries = _entries(log, manifest_list, manifests_read, snap_id)
            if entries is None:
                status = "unreadable"
                facts["reason"] = f"manifest list or a manifest of snapshot {snap_id} not readable"
        yield log.commit(snap.get("sequence-number"), ts, f"{LOG}/{name}", status=status,
                         app_id=summary.get("spark.app.id"), **facts)
        for entry, spec_id in entries or ():
            data_file = entry.get("data_file") or {}
            path = data_file.get("file_path")
            if not isinstance(path, str):
                continue
            kind = {1: "table_add", 2: "table_remove"}[entry["status"]]
            owner = entry.get("snapshot_id") or snap_id
            yield log.data_file(kind, snapshots.get(owner, (snap,))[0].get("sequence-number"),
                                millis(snapshots.get(owner, (snap,))[0].get("timestamp-ms")) or ts, path,
                                partition_spec=_spec(data_file.get("partition"), specs.get(spec_id)),
                                size=data_file.get("file_size_in_bytes"), app_id=summary.get("spark.app.id"),
                                snapshot_id=owner, content=data_file.get("content") or 0,
                                off_lineage=True if owner in off else None,
                                records=data_file.get("record_count"), operation=summary.get("operation"))


def _off_lineage(latest: dict, snapshots: dict) -> set:
    """Snapshots not in the current snapshot's ancestry though newer than its oldest known
    ancestor: rolled back, or on another branch. Their files are referenced (no orphans) but
    not live in the table's current state."""
    current = latest.get("current-snapshot-id")
    if current is None or current == -1 or current not in snapshots:
        return set()
    ancestors, node = set(), current
    while node in snapshots and node not in ancestors:
        ancestors.add(node)
        node = snapshots[node][0].get("parent-snapshot-id")
    floor = min(snapshots[a][0].get("sequence-number") or 0 for a in ancestors)
    return {sid for sid, (snap, _) in snapshots.items()
            if sid not in ancestors and (snap.get("sequence-number") or 0) > floor}


def _gaps(log: TableLog, latest: dict, latest_name: str, snapshots: dict, present: set[str]):
    """Holes in the chains: a snapshot whose parent no metadata file holds while older
    snapshots are still there (expiry removes the oldest, never one in the middle), and a
    metadata file the metadata log names that is absent."""
    oldest = min((s.get("sequence-number") or 0 for s, _ in snapshots.values()), default=0)
    for snap_id, (snap, name) in snapshots.items():
        parent = snap.get("parent-snapshot-id")
        if parent is None or parent in snapshots or (snap.get("sequence-number") or 0) <= oldest:
            continue
        yield log.commit((snap.get("sequence-number") or 1) - 1, millis(snap.get("timestamp-ms")), f"{LOG}/{name}",
                         status="missing", snapshot_id=parent,
                         reason=f"snapshot {snap_id} names parent {parent}, which no metadata file holds, "
                                f"while older snapshots are still there")
    for entry in latest.get("metadata-log") or []:
        file = str(entry.get("metadata-file", ""))
        name = file.rsplit("/", 1)[-1]
        if name and name not in present and _METADATA.match(name):
            yield log.commit(_version(name), millis(entry.get("timestamp-ms")), f"{LOG}/{name}", status="missing",
                             reason=f"the metadata log of {latest_name} names {name}, which is absent")


def _entries(log: TableLog, manifest_list: str, seen: set[str], snap_id):
    """ADDED and DELETED entries of the manifests a snapshot's list names that no earlier
    snapshot's list named; None when the list or one of those manifests cannot be read."""
    import fastavro

    out = []
    listed = _avro(log, manifest_list, fastavro)
    if listed is None:
        return None
    for m in listed:
        path = m.get("manifest_path")
        if not isinstance(path, str) or path in seen:
            continue
        entries = _avro(log, path, fastavro, project=_ENTRY_FIELDS)
        if entries is None:
            return None
        seen.add(path)
        for e in entries:
            if e.get("status") in (1, 2):
                if e.get("snapshot_id") is None:  # v2 inherits the snapshot that added the manifest
                    e["snapshot_id"] = m.get("added_snapshot_id")
                out.append((e, m.get("partition_spec_id")))
    return out


# What an event takes from a manifest entry. The column statistics (sizes, counts, bounds: most
# of an entry's bytes) are skipped, not decoded into dicts: a manifest holds up to millions.
_ENTRY_FIELDS = {"status": None, "snapshot_id": None, "sequence_number": None, "file_sequence_number": None,
                 "data_file": {"content", "file_path", "partition", "record_count", "file_size_in_bytes"}}


def _projection(schema: dict, keep: dict) -> dict:
    """The writer's schema cut to the fields ``keep`` names (those it has: v1 manifests lack some)."""
    out = dict(schema, fields=[])
    for f in schema.get("fields") or []:
        if f["name"] not in keep:
            continue
        inner = keep[f["name"]]
        if inner is not None and isinstance(f["type"], dict) and f["type"].get("type") == "record":
            f = dict(f, type=_projection(f["type"], dict.fromkeys(inner)))
        out["fields"].append(f)
    return out


def _avro(log: TableLog, uri: str, fastavro, project: dict | None = None) -> list[dict] | None:
    path = log.absolute(uri)
    try:
        data = log.files.read_uri(uri)
        reader = fastavro.reader(io.BytesIO(data))
        if project is not None:
            reader = fastavro.reader(io.BytesIO(data), reader_schema=_projection(reader.writer_schema, project))
        records = list(reader)
    except FileNotFoundError:
        log.problem(path, "missing: named by the table's metadata but absent")
        return None
    except Exception as exc:  # fastavro raises ValueError/EOFError/SchemaResolutionError on damage
        log.problem(path, f"not readable Avro: {str(exc).splitlines()[0][:100] if str(exc) else type(exc).__name__}")
        return None
    log.files_read += 1
    return records


def _spec(partition, names) -> str | None:
    if not isinstance(partition, dict) or not partition:
        return None
    keys = [n for n in (names or []) if n in partition] + [k for k in partition if k not in (names or [])]
    return "/".join(f"{k}={'null' if partition[k] is None else partition[k]}" for k in keys)


FORMAT = TableFormat(
    name="iceberg-metadata",
    description="Apache Iceberg table metadata (metadata/*.metadata.json, Avro manifest lists and manifests)",
    log_dir=LOG,
    recognise=recognise,
    read=read,
)
