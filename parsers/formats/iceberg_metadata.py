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
import os
import re

import orjson

from commitsleuth.forensics.paths import normalize_spec
from commitsleuth.parsers import lakehouse
from commitsleuth.parsers.lakehouse import LogFiles, TableFormat, TableLog, millis, storage_path

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
    # A format-version 1 table's snapshots have no sequence number: versioned by their commit
    # time (timestamp-ms, as Hudi's instants by theirs), or the detectors could order none of
    # its adds and removes. A table upgraded to version 2 keeps the older ones at the number
    # the spec gives them, 0.
    unnumbered = [s for s, _ in snapshots.values() if s.get("sequence-number") is None]
    for snap in unnumbered:
        snap["sequence-number"] = snap.get("timestamp-ms") if len(unnumbered) == len(snapshots) else 0
    live_ids = {s.get("snapshot-id") for s in latest.get("snapshots") or [] if isinstance(s, dict)}
    # the metadata file of the table's log that first made each snapshot current: the commit's
    # own file, which a storage audit log shows created (or renamed onto) by its writer
    written_in: dict = {}
    for name in sorted(set(metadata) & chain, key=lambda n: (_version(n), n)):
        written_in.setdefault(metadata[name].get("current-snapshot-id"), name)
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
    ordered = sorted(snapshots.items(), key=lambda kv: (kv[1][0].get("sequence-number") or 0,
                                                       kv[1][0].get("timestamp-ms") or 0))
    ahead = _ahead(log, ordered, specs)
    try:
        yield from _snapshots(log, ordered, live_ids, off, snapshots, specs, manifests_read, ahead, written_in)
    finally:
        ahead.close()


def _snapshots(log: TableLog, ordered, live_ids, off, snapshots, specs, manifests_read, ahead, written_in):
    for snap_id, (snap, name) in ordered:
        summary = snap.get("summary") or {}
        ts = millis(snap.get("timestamp-ms"))
        manifest_list = snap.get("manifest-list")
        status = "completed" if snap_id in live_ids else "dropped"
        facts = dict(snapshot_id=snap_id, parent=snap.get("parent-snapshot-id"), operation=summary.get("operation"),
                     summary=summary or None, metadata_file=name,
                     engine=" ".join(filter(None, (summary.get("engine-name"), summary.get("engine-version")))) or None,
                     streaming={"query_id": summary.get(_STREAMING[0]), "epoch_id": summary.get(_STREAMING[1])}
                     if summary.get(_STREAMING[0]) else None,
                     in_latest=snap_id in live_ids, off_lineage=True if snap_id in off else None,
                     written_in=written_in.get(snap_id))
        entries = None
        if manifest_list:
            entries = _entries(log, manifest_list, manifests_read, specs, ahead)
            if entries is None:
                status = "unreadable"
                facts["reason"] = f"manifest list or a manifest of snapshot {snap_id} not readable"
        yield log.commit(snap.get("sequence-number"), ts, f"{LOG}/{name}", status=status,
                         app_id=summary.get("spark.app.id"), **facts)
        for raw in entries or ():
            # a manifest of a million entries is events a batch at a time: its Python strings
            # (paths, details) are built and freed per batch, not held for the whole manifest
            for start in range(0, raw.num_rows, lakehouse.BATCH):
                yield _file_events(log, raw.slice(start, lakehouse.BATCH), snapshots, off, snap, ts)


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


def _entries(log: TableLog, manifest_list: str, seen: set[str], specs: dict, ahead: "_Ahead"):
    """The ADDED and DELETED entries (``manifest_columns``) of the manifests a snapshot's list
    names that no earlier snapshot's list named, one Arrow table per manifest; None when the
    list or one of those manifests cannot be read (then none of its entries is an event)."""
    import fastavro

    out = []
    # read ahead once (its problem, if any, said then); a list named again is read again
    listed = ahead.lists.pop(manifest_list) if manifest_list in ahead.lists else _avro(log, manifest_list, fastavro)
    if listed is None:
        return None
    for m in listed:
        path = m.get("manifest_path")
        if not isinstance(path, str) or path in seen:
            continue
        entries, problem, size = ahead.take(path, m.get("added_snapshot_id"), specs.get(m.get("partition_spec_id")))
        log.files.bytes_read += size
        if entries is None:
            log.problem(log.absolute(path, decode=False), problem)
            return None
        log.files_read += 1
        seen.add(path)
        out.append(entries)
    return out


# Manifests of a table on local disk bigger than this together may be decoded in worker
# processes, ahead of the reading (fastavro's decoding is most of a big table's read, and holds
# the GIL).
AHEAD_BYTES = 64 << 20
# None by default: a worker is a second Python with pyarrow and fastavro (about 280 MiB beside
# this process's 880 on a million entries, over 1 GB together) and saves no CPU (the same
# decoding, plus its start), only wall time where a core is free. COMMITSLEUTH_MANIFEST_WORKERS
# (1 or 2) trades that memory for that time.
WORKERS_ENV = "COMMITSLEUTH_MANIFEST_WORKERS"


def workers() -> int:
    """How many processes decode manifests ahead (``COMMITSLEUTH_MANIFEST_WORKERS``, 0 to 2)."""
    try:
        return max(0, min(2, int(os.environ.get(WORKERS_ENV, "0"))))
    except ValueError:
        return 0


class _Ahead:
    """Every manifest the snapshots' lists name, decoded in their reading's order by worker
    processes (``workers()``, none by default), at most one more than them ahead of it (each a manifest's columns held in memory);
    ``take`` gives the one the reading asks for, decoding it here when it was not sent ahead
    (a table through a Hadoop FileSystem, a small table, a manifest asked for again)."""

    def __init__(self, log: TableLog, lists: dict, order: list):
        self.log, self.lists, self.order, self.sent, self.pool = log, lists, order, {}, None
        n = workers()
        if type(log.files) is LogFiles and order and n:
            total = sum(os.path.getsize(storage_path(u, decode=False)) for u, _, _ in order
                        if os.path.isfile(storage_path(u, decode=False)))
            if total > AHEAD_BYTES:
                import multiprocessing
                from concurrent.futures import ProcessPoolExecutor

                try:  # spawned, not forked: this process holds DuckDB's threads
                    self.pool = ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn"))
                    for _ in range(n + 1):
                        self._send()
                except OSError:  # no processes to be had: every manifest is decoded here
                    self.close()
                    self.pool, self.sent = None, {}

    def _send(self) -> None:
        if self.order and self.pool is not None:
            uri, added, names = self.order.pop(0)
            self.sent.setdefault(uri, self.pool.submit(decode_manifest, storage_path(uri, decode=False), added, names))

    def take(self, uri: str, added, names):
        future = self.sent.pop(uri, None)
        if future is not None:
            try:
                result = future.result()
                self._send()
                return result
            except Exception:  # a worker gone (killed, out of memory): the rest decoded here
                self.close()
                self.pool, self.sent = None, {}
        try:
            data = self.log.files.read_uri(uri)
        except FileNotFoundError:
            return None, _MISSING, 0
        except OSError as exc:
            return None, _unreadable(exc), 0
        self.log.files.bytes_read -= len(data)  # counted by the caller, as a worker's
        return (*_decoded(data, added, names), len(data))

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


_MISSING = "missing: named by the table's metadata but absent"


def decode_manifest(path: str, added_snapshot, spec_names) -> tuple:
    """(``manifest_columns`` or None, the problem, bytes read) of a local manifest: what a
    worker process decodes ahead of the reading."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return None, _MISSING, 0
    except OSError as exc:
        return None, _unreadable(exc), 0
    return (*_decoded(data, added_snapshot, spec_names), len(data))


def _decoded(data: bytes, added_snapshot, spec_names) -> tuple:
    try:
        return manifest_columns(data, added_snapshot, spec_names), None
    except Exception as exc:  # fastavro raises ValueError/EOFError/SchemaResolutionError on damage
        return None, _unreadable(exc)


def _unreadable(exc: Exception) -> str:
    return f"not readable Avro: {str(exc).splitlines()[0][:100] if str(exc) else type(exc).__name__}"


def manifest_columns(data: bytes, added_snapshot, spec_names):
    """One manifest's ADDED and DELETED entries as an Arrow table (status, snapshot_id,
    file_path, partition_spec, content, records, size), decoded entry by entry into columns: a
    manifest holds up to millions of entries, never all held as dicts at once. Raises when it
    cannot be read whole."""
    import fastavro
    import pyarrow as pa

    types = {"status": pa.int32(), "snapshot_id": pa.int64(), "file_path": pa.string(), "partition_spec": pa.string(),
             "content": pa.int32(), "records": pa.int64(), "size": pa.int64()}
    cols: dict[str, list] = {k: [] for k in types}
    status, owner, file_path, partition, content, records, size = cols.values()
    chunks: list = []  # Arrow every CHUNK entries: a million Python strings and ints would be most of the memory
    spec_of: dict = {}  # a partition tuple's spec, computed once: a manifest holds few partitions
    reader = fastavro.reader(io.BytesIO(data))
    reader = fastavro.reader(io.BytesIO(data), reader_schema=_projection(reader.writer_schema, _ENTRY_FIELDS))
    for e in reader:
        data_file = e.get("data_file") or {}
        where = data_file.get("file_path")
        if e.get("status") not in (1, 2) or not isinstance(where, str):
            continue  # EXISTING entries only carry a file over
        status.append(e["status"])
        # v2 inherits the snapshot that added the manifest
        owner.append(e.get("snapshot_id") if e.get("snapshot_id") is not None else added_snapshot)
        file_path.append(where)
        values = data_file.get("partition")
        key = tuple(values.items()) if isinstance(values, dict) else None
        if key not in spec_of:
            spec_of[key] = normalize_spec(_spec(values, spec_names))
        partition.append(spec_of[key])
        content.append(data_file.get("content") or 0)
        records.append(data_file.get("record_count"))
        size.append(data_file.get("file_size_in_bytes"))
        if len(status) >= CHUNK:
            chunks.append(pa.record_batch([pa.array(v, types[k]) for k, v in cols.items()], names=list(types)))
            for v in cols.values():
                v.clear()
    chunks.append(pa.record_batch([pa.array(v, types[k]) for k, v in cols.items()], names=list(types)))
    return pa.Table.from_batches(chunks).combine_chunks()


CHUNK = 8192


def _ahead(log: TableLog, ordered: list, specs: dict) -> _Ahead:
    """The manifest lists of ``ordered`` snapshots read, and their manifests sent ahead."""
    import fastavro

    lists, order, named = {}, [], set()
    for _, (snap, _) in ordered:
        uri = snap.get("manifest-list")
        if not uri or uri in lists:
            continue
        lists[uri] = listed = _avro(log, uri, fastavro)
        for m in listed or ():
            path = m.get("manifest_path")
            if isinstance(path, str) and path not in named:
                named.add(path)
                order.append((path, m.get("added_snapshot_id"), specs.get(m.get("partition_spec_id"))))
    return _Ahead(log, {k: v for k, v in lists.items() if v is not None}, order)


def _file_events(log: TableLog, raw, snapshots: dict, off: set, snap: dict, ts):
    """The ``table_add`` / ``table_remove`` events of one manifest's entries (``_read_manifest``),
    as an Arrow table of the store's event columns, the same facts ``TableLog.data_file`` gives
    one file: each at the snapshot that wrote it, keyed by the table root and its partition."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from commitsleuth.model import event_schema
    from commitsleuth.parsers.lakehouse import file_columns

    n = raw.num_rows
    summary = snap.get("summary") or {}
    absolute = log.absolute
    # file:///x is the local path /x (storage_path); only other spellings need the general rule.
    # Never decoded: Iceberg names each file as its directory is named on storage.
    full = pa.array([p[7:] if p.startswith("file:///") else absolute(p, decode=False)
                     for p in raw.column("file_path").to_pylist()], pa.string())
    files = file_columns(full)
    names, dir_specs, writers = files["file_name"], files["dir_spec"], files["writers"]
    facts = {k: files[k] for k in ("file_task", "file_attempt", "write_uuid")}
    specs = raw.column("partition_spec")
    owners = raw.column("snapshot_id").to_pylist()
    of = {o: snapshots.get(o, (snap,))[0] for o in set(owners)}
    when = {o: millis(s.get("timestamp-ms")) or ts for o, s in of.items()}
    # detail as TableLog.data_file writes it: every snapshot's fixed part rendered once
    head = {o: '{"format": %s, "version": %s, "snapshot_id": %s' % (
        _json(log.format), _json(s.get("sequence-number")), _json(o)) + (', "off_lineage": true' if o in off else "")
        for o, s in of.items()}
    tail = f', "operation": {_json(summary["operation"])}' if summary.get("operation") is not None else ""
    wrote = [writers[k].to_pylist() for k in ("tid", "spark_partition", "operation_id", "stage_id", "file_id", "instant")]
    detail = [
        f'{head[o]}, "content": {c}' + (f', "records": {r}' if r is not None else "") + tail
        + (f', "tid": {tid}, "spark_partition": {part}' if tid is not None else "")
        + (f', "operation_id": "{op}"' if op is not None else "") + (f', "stage_id": {st}' if st is not None else "")
        + (f', "file_id": {_json(fid)}, "instant": "{inst}"' if fid is not None else "") + "}"
        for o, c, r, tid, part, op, st, fid, inst in zip(owners, raw.column("content").to_pylist(),
                                                         raw.column("records").to_pylist(), *wrote)]
    schema = event_schema()
    cols = {
        "kind": pc.if_else(pc.equal(raw.column("status"), 1), "table_add", "table_remove"),
        "ts": pa.array([when[o] for o in owners], pa.timestamp("us")),
        "location": pa.nulls(n, pa.string()).fill_null(log.root),
        "table_name": pa.nulls(n, pa.string()) if log.table_name is None else pa.nulls(n, pa.string()).fill_null(log.table_name),
        "partition_spec": pc.coalesce(specs, dir_specs), "path": full, "file_name": names,
        "size": raw.column("size"), "detail": pa.array(detail, pa.string()),
        "app_id": pa.nulls(n, pa.string()) if summary.get("spark.app.id") is None
        else pa.nulls(n, pa.string()).fill_null(str(summary["spark.app.id"])),
        **facts,
    }
    return pa.table([cols[f.name].cast(f.type) if f.name in cols else pa.nulls(n, f.type) for f in schema],
                    schema=schema)


def _json(value) -> str:
    return orjson.dumps(value).decode()


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
    path = log.absolute(uri, decode=False)
    try:
        data = log.files.read_uri(uri)
        reader = fastavro.reader(io.BytesIO(data))
        if project is not None:
            reader = fastavro.reader(io.BytesIO(data), reader_schema=_projection(reader.writer_schema, project))
        records = list(reader)
    except FileNotFoundError:
        log.problem(path, _MISSING)
        return None
    except Exception as exc:  # fastavro raises ValueError/EOFError/SchemaResolutionError on damage
        log.problem(path, _unreadable(exc))
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
