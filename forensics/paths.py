"""Resolve temp, staging and final paths to one output location and partition.

A Hive task writes ``<scratch>/_task_tmp.-ext-10000/<part>/_tmp.000005_0``, renames it into
``<scratch>/_tmp.-ext-10000/<part>/000005_0``; the job moves ``_tmp.-ext-10000`` to
``-ext-10000`` (through ``.intermediate``) and then into the table. Spark writes under
``<table>/_temporary/0/_temporary/attempt_…/<part>/`` or ``<table>/.spark-staging-<uuid>/``.
All of these name the same (location, partition): the location with every temp layer peeled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from commitsleuth.model import Event

_S3_SCHEMES = ("s3", "s3n", "s3a")
# S3A magic committer (CommitConstants MAGIC, BASE; CommitUtilsWithMR): an attempt writes
# <dest>/__magic/job-<uuid>/tasks/<attempt>/__base/<relative path> (Hadoop 3.3.5+:
# <dest>/__magic_job-<uuid>/…) for <dest>/<relative path>; the .pending and .pendingset files
# under it are the commit's own records.
_MAGIC = re.compile(r"^__magic(?:_job-.*)?$")
_MAGIC_BASE = "__base"
_PART_SEG = re.compile(r"^[^=/]+=[^/]*$")
_HIVE_EXT = re.compile(r"^(?:_task_tmp\.|_tmp\.)?(-ext-\d+)(?:\.intermediate|\.moved)?$")
_HIVE_STAGING = re.compile(r"^\.hive-staging_|^\.staging_|^_tmp\.")
_SPARK_STAGING = re.compile(r"^\.spark-staging-(?P<uuid>[0-9a-f-]{36})$")
_UNION_SUBDIR = re.compile(r"^HIVE_UNION_SUBDIR_\d+$")
# a directory that holds tables: a k=v run before it is above the table, not a partition
_TABLE_PARENT = re.compile(r"^(?:[^/]+\.db|warehouse)$", re.IGNORECASE)
_ATTEMPT_DIR = re.compile(r"^(attempt|task)_[\w]+$")
# Hive: ^.*?([0-9]+)(_[0-9]{1,6})?(\..*)?$ after stripping the temp prefix and _copy_N.
_HIVE_FILE = re.compile(r"^(?:_tmp\.|_task_tmp\.)?(?P<task>\d+)(?:_(?P<attempt>\d{1,6}))?(?P<copy>_copy_\d+)?(?:\..*)?$")
# MapReduce / Hadoop output files: part-00003, part-m-00003, part-r-00003.snappy
_MR_FILE = re.compile(r"^part-(?:[mr]-)?(?P<task>\d{5})(?:\..*)?$")
# <warehouse>/<db>.db/<table> names the table db.table; <warehouse>/<table> is in default.
_WAREHOUSE_TABLE = re.compile(r"/(?P<db>[^/]+)\.db/(?P<table>[^/.][^/]*)$")
_DEFAULT_TABLE = re.compile(r"/warehouse/(?P<table>[^/.][^/]*)$")
_SPARK_FILE = re.compile(
    r"^part-(?P<task>\d{5})-(?P<uuid>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
    r"(?:[-_.]c\d{3})?(?:\..*)?$"
)


@dataclass(frozen=True)
class PathInfo:
    location: str | None
    partition_spec: str | None
    file_name: str | None
    file_task: str | None = None
    file_attempt: int | None = None
    write_uuid: str | None = None


def split_scheme(path: str) -> tuple[str, str]:
    """``hdfs://nn:8020/a/b`` -> (``hdfs://nn:8020``, ``/a/b``); ``file:/a`` -> (``file:``, ``/a``)."""
    m = re.match(r"^([a-zA-Z][\w+.-]+:(?://[^/]*)?)(/.*)?$", path)
    if m:
        prefix = m.group(1)
        scheme, sep, rest = prefix.partition(":")
        if scheme.lower() in _S3_SCHEMES:
            prefix = "s3a:" + rest  # s3://, s3n://, s3a:// of one bucket are one store
        return prefix, m.group(2) or "/"
    return "", path


def resolve(path: str, *, is_dir: bool = False) -> PathInfo:
    """The (location, partition, file) a path belongs to, temp layers peeled.

    Plain directories after the partition (``ds=19/sub/``, ``ds=19/HIVE_UNION_SUBDIR_1/``, Hive
    ACID's ``delta_…/``) are inside it: they stay in the file's name, relative to the partition
    (``sub/000005_0``), so each file of ds=19 is one of ds=19's and two subdirectories' files of
    one name stay two. A k=v run followed by another k=v run or by a table directory
    (``<db>.db``, ``warehouse``) is above the table and stays in the location
    (``s3a://lake/env=prod/w/db.db/t``).
    """
    prefix, rest = split_scheme(path.rstrip("/") or "/")
    segs = [s for s in rest.split("/") if s]
    file_name = None
    if segs and not is_dir and not _PART_SEG.match(segs[-1]):
        file_name = segs.pop()
    kept: list[str] = []
    parts: list[str] = []
    sub: list[str] = []  # plain directories after the partition (or a UNION ALL subdir of the table)
    after_temporary = False
    in_magic = False
    for seg in segs:
        if in_magic:  # the committer's own directories up to __base: the path below it is the output's
            in_magic = seg != _MAGIC_BASE
            continue
        if _MAGIC.match(seg):
            temp = in_magic = True
            continue
        if after_temporary and seg.isdigit():
            after_temporary = False
            continue  # _temporary/<appAttempt>/
        after_temporary = False
        if _PART_SEG.match(seg):
            if sub:  # a k=v run, then plain directories, then this one: the first run was above the table
                kept.extend(parts + [s for s in sub if not _UNION_SUBDIR.match(s)])
                parts, sub = [], []
            parts.append(seg)
            continue
        if _UNION_SUBDIR.match(seg) or (parts or sub) and _plain(seg) and not _TABLE_PARENT.match(seg):
            sub.append(seg)  # HIVE_UNION_SUBDIR_N (UNION ALL on Tez) sits inside the table or partition
            continue
        if sub:  # a layer under a partition's subdirectory: they are all the location's
            kept.extend(parts + sub)
            parts, sub = [], []
        mid, parts = parts, []  # a k=v segment in the middle of a path is not a partition
        ext = _HIVE_EXT.match(seg)
        if ext:
            if kept and _HIVE_STAGING.match(kept[-1]):
                kept.pop()  # <table>/.hive-staging_…/-ext-10000 publishes into <table>
                continue
            kept.append(ext.group(1))
            continue
        if seg == "_temporary" or _SPARK_STAGING.match(seg) or _ATTEMPT_DIR.match(seg):
            after_temporary = seg == "_temporary"
            continue
        if not _HIVE_STAGING.match(seg):  # before a plain directory it names the location (s3a://b/env=prod/w/t)
            kept.extend(mid)
        kept.append(seg)
    plain = [s for s in sub if not _UNION_SUBDIR.match(s)]
    if plain and (is_dir or not parts):
        # no partition before them, or a directory itself (a load's or a commit's target: a table
        # under a k=v directory as often as a partition's subdirectory): the location's own.
        # A UNION ALL subdir is always inside: deleting it deletes some of the partition's files.
        kept.extend(parts + plain)
        parts, sub = [], [s for s in sub if _UNION_SUBDIR.match(s)]
    # A peeled Hive scratch ext dir stays as the location: it is where the job publishes.
    location = prefix + "/" + "/".join(kept) if kept or prefix else None
    base = file_name
    if sub:
        file_name = "/".join(sub + ([file_name] if file_name else []))
    info = dict(location=location, partition_spec="/".join(parts) or None, file_name=file_name)
    if base:
        m = _SPARK_FILE.match(base)
        mr = _MR_FILE.match(base)
        if m:
            info.update(file_task=m["task"], write_uuid=m["uuid"])
        elif mr:
            info.update(file_task=mr["task"])
        else:
            m = _HIVE_FILE.match(base)
            if m:
                info.update(
                    file_task=m["task"],
                    file_attempt=int(m["attempt"]) if m["attempt"] is not None else None,
                )
    return PathInfo(**info)


def _plain(seg: str) -> bool:
    """A directory that is no temp, staging or scratch layer."""
    return not (_HIVE_EXT.match(seg) or _HIVE_STAGING.match(seg) or seg == "_temporary"
                or _SPARK_STAGING.match(seg) or _ATTEMPT_DIR.match(seg))


def resolve_parent(directory: str) -> PathInfo:
    """What ``resolve`` gives every file of ``directory``: its location and partition, and as
    ``file_name`` the subdirectory inside the partition the files' names start with
    (``HIVE_UNION_SUBDIR_1/``), or None. A listing or a table log resolves each directory once."""
    info = resolve(directory.rstrip("/") + "/x")
    return PathInfo(info.location, info.partition_spec, info.file_name[:-1] or None)


def table_from_location(location: str | None) -> str | None:
    """``db.t`` for ``…/db.db/t`` and ``default.t`` for ``…/warehouse/t``; None otherwise."""
    if not location:
        return None
    m = _WAREHOUSE_TABLE.search(location)
    if m:
        return f"{m['db']}.{m['table']}".lower()
    m = _DEFAULT_TABLE.search(location)
    return f"default.{m['table']}".lower() if m else None


def normalize_spec(spec: str | None) -> str | None:
    """One spelling per partition: ``dt=1/h=2`` for ``dt=1,h=2``, ``(dt='1', h='2')``, ``{dt=1, h=2}``.

    A value list without keys (the metastore audit's ``t[v1,v2]``) stays ``[v1,v2]``; the
    ``partition_events`` view matches it to the table's ``k=v`` spec with those values.
    Quotes are taken off only where Hive's syntax puts them, around a whole value of a
    ``PARTITION (ds='2024-01-01')`` clause or a value list; elsewhere (a path, a Delta or Iceberg
    partition value, a Java map's ``{k=v}``) a quote is part of the value.
    """
    if spec is None:
        return None
    spec = spec.strip()
    if spec.startswith("[") or "=" not in spec:
        values = [_unquote(v.strip()) for v in spec.strip("[]").split(",")]
        return "[" + ",".join(values) + "]" if spec else None
    quoted = spec.startswith("(")
    parts = [p.strip() for p in spec.strip("(){}").replace(",", "/").split("/") if p.strip()]
    out = []
    for p in parts:
        k, _, v = p.partition("=")
        out.append(f"{k.strip()}={_unquote(v.strip()) if quoted else v.strip()}")
    return "/".join(out) or None


def _unquote(value: str) -> str:
    """A value quoted whole, in either of Hive's quotes, without them."""
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else value


def enrich(ev: Event) -> Event:
    """Fill an event's identity columns from the path it acted on (its target, if moved).

    A ``load`` names its *source* in ``path`` (``Loading data to table db.t partition (k=v)
    from <src>``), so only its ``target_path`` says where the data went.
    """
    if ev.partition_spec is None and ev.detail and ev.detail.get("values"):
        # the metastore audit names a partition by its values only: tbl=t[v1,v2]
        ev.partition_spec = "[" + ",".join(str(v) for v in ev.detail["values"]) + "]"
    ev.partition_spec = normalize_spec(ev.partition_spec)
    if ev.location is not None:
        ev.table_name = ev.table_name or table_from_location(ev.location)
        return ev
    path = ev.target_path if ev.kind == "load" else ev.target_path or ev.path
    if not path:
        return ev
    info = resolve(path, is_dir=ev.kind in ("publish", "dir_create", "task_commit", "load") or bool(ev.detail and ev.detail.get("dir")))
    ev.location = info.location
    ev.table_name = ev.table_name or table_from_location(info.location)
    ev.partition_spec = ev.partition_spec or info.partition_spec
    ev.file_name = info.file_name
    ev.file_task = info.file_task
    ev.file_attempt = info.file_attempt
    ev.write_uuid = ev.write_uuid or info.write_uuid
    return ev


def resolve_names(names) -> dict:
    """``resolve``'s file part (``file_task``, ``file_attempt``, ``write_uuid``) of every file
    name in an Arrow string array at once, by the same patterns: a table log or a listing names
    up to millions of files, where a Python call per name is most of the time."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = pc.replace_substring_regex(names, "^.*/", "")  # a partition's subdirectory, as resolve's base name
    spark = pc.extract_regex(names, _SPARK_FILE.pattern)
    mr = pc.extract_regex(names, _MR_FILE.pattern)
    hive = pc.extract_regex(names, _HIVE_FILE.pattern)
    # resolve's order: a Spark name, else a MapReduce one, else Hive's (only Hive's has an attempt)
    task = pc.coalesce(pc.struct_field(spark, "task"), pc.struct_field(mr, "task"), pc.struct_field(hive, "task"))
    attempt = pc.if_else(pc.or_(pc.is_valid(spark), pc.is_valid(mr)), pa.scalar(None, pa.string()),
                         pc.struct_field(hive, "attempt"))
    attempt = pc.if_else(pc.equal(attempt, ""), pa.scalar(None, pa.string()), attempt)  # group not taken
    return {"file_task": task, "file_attempt": attempt.cast(pa.int32()), "write_uuid": pc.struct_field(spark, "uuid")}
