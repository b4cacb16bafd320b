"""Spark event-log layouts: single files and rolling ``eventlog_v2_<appId>/`` directories.

A single file is ``<appId>[_<attempt>][.<codec>][.inprogress]``. A rolling directory (Spark 3.0+,
the default since 4.0) holds ``events_<n>_<appId>[.<codec>]`` parts, written in order of ``n``
(compaction may replace the first ones by ``events_<n>_<appId>.compact``), and an empty marker
``appstatus_<appId>[.inprogress]`` saying whether the application is still running. A rolling
directory is one source: its parts are read as one stream, in order, so the decoder sees one
application from start to end.

Databricks writes an application's current events to ``eventlog`` and rolls older ones into
``eventlog-YYYY-MM-DD--HH-MM.gz`` beside it (the naming the NVIDIA spark-rapids tools match,
github.com/NVIDIA/spark-rapids PR 2732). Such a directory is one source too: the dated parts
first, oldest first, then ``eventlog``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

from commitsleuth.ingest.codecs import ChunkStream

ROLLING_PREFIX = "eventlog_v2_"
IN_PROGRESS = ".inprogress"  # a finished log was renamed from <name>.inprogress
_PART_RE = re.compile(r"^events_(?P<n>\d+)_(?P<app>.+?)(?P<compact>\.compact)?$")
_CODEC_SUFFIX = re.compile(r"\.(lz4|lzf|snappy|zstd|gz|bz2)$")  # gz, bz2: archived by people, not Spark
DATABRICKS_CURRENT = "eventlog"
_DATED_RE = re.compile(r"^eventlog-\d{4}-\d{2}-\d{2}--\d{2}-\d{2}")
IN_PROGRESS_NOTE = "application still running (event log in progress); ingest again to read what it adds"


def is_rolling_dir(path: Path) -> bool:
    return path.name.startswith(ROLLING_PREFIX) and path.is_dir()


def part_index(name: str) -> tuple[int, bool] | None:
    """``(n, compacted)`` of a rolling part's file name, None for anything else."""
    m = _PART_RE.match(_CODEC_SUFFIX.sub("", name))
    return (int(m["n"]), bool(m["compact"])) if m else None


def databricks_layout(names: Iterable[str]) -> bool:
    """True when a directory holds Databricks' dated parts (with or without ``eventlog``)."""
    return any(_DATED_RE.match(n) for n in names)


def databricks_part(name: str) -> bool:
    return name == DATABRICKS_CURRENT or bool(_DATED_RE.match(name))


def ordered_parts(names: Iterable[str]) -> list[str]:
    """The part names to read, in order: from the last compacted part on (it holds the ones before);
    in a Databricks directory the dated parts, oldest first (the date sorts as text), then ``eventlog``."""
    names = list(names)
    if databricks_layout(names):
        return sorted(n for n in names if _DATED_RE.match(n)) + [n for n in names if n == DATABRICKS_CURRENT]
    parts = sorted((part_index(n), n) for n in names if part_index(n) is not None)
    start = max((i for i, ((_, compact), _) in enumerate(parts) if compact), default=0)
    return [name for _, name in parts[start:]]


def rolling_parts(path: Path) -> list[Path]:
    return [path / name for name in ordered_parts(p.name for p in path.iterdir() if p.is_file())]


def in_progress(uri: str, names: Iterable[str] = ()) -> bool:
    """True for ``….inprogress`` single files and rolling dirs whose marker says so."""
    if uri.endswith(IN_PROGRESS):
        return True
    return any(n.startswith("appstatus_") and n.endswith(".inprogress") for n in names)


def state_note(path: Path) -> str | None:
    """The note a source gets when its application had not finished when read."""
    names = [p.name for p in path.iterdir()] if path.is_dir() else []
    return IN_PROGRESS_NOTE if in_progress(str(path), names) else None


def app_id_of(uri: str) -> str | None:
    """The application id an event-log path names (used until ApplicationStart says it), without
    the ``_<attempt>`` Spark appends on YARN (``application_<ts>_<n>_1``): one application, one id."""
    name = _app_name(uri)
    m = _YARN_ATTEMPT.match(name or "")
    return m[1] if m else name


_YARN_ATTEMPT = re.compile(r"^(application_\d+_\d+)_\d+$")


def _app_name(uri: str) -> str | None:
    name = uri.rstrip("/").rsplit("/", 1)[-1]
    name = name.removesuffix(IN_PROGRESS)
    name = _CODEC_SUFFIX.sub("", name)
    if name.startswith(ROLLING_PREFIX):
        return name[len(ROLLING_PREFIX):] or None
    m = _PART_RE.match(name)
    if m:
        return m["app"]
    return name if re.match(r"^(app|application|local)[-_]", name) else None


def group_rolling(files: list[Path]) -> list[Path]:
    """Files with every rolling or Databricks directory's files replaced by the directory itself, once."""
    out: list[Path] = []
    seen: set[Path] = set()
    layouts: dict[Path, bool] = {}
    for f in files:
        parent = f.parent
        if databricks_part(f.name) and parent not in layouts:
            layouts[parent] = databricks_layout(p.name for p in parent.iterdir() if p.is_file())
        if parent.name.startswith(ROLLING_PREFIX) or (databricks_part(f.name) and layouts[parent]):
            if parent not in seen:
                seen.add(parent)
                out.append(parent)
            continue
        out.append(f)
    return out


def size_of(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in rolling_parts(path))
    return path.stat().st_size


def first_part(path: Path) -> Path:
    """The file whose head fingerprints a source (a rolling dir's first part)."""
    if not path.is_dir():
        return path
    parts = rolling_parts(path)
    if not parts:
        raise FileNotFoundError(f"{path}: rolling event-log directory without events_ files")
    return parts[0]


def _part_chunks(parts: list[Path], open_part, size: int = 1 << 20) -> Iterator[bytes]:
    for part in parts:
        with open_part(part) as f:
            while chunk := f.read(size):
                yield chunk


def open_rolling(path: Path, open_part) -> BinaryIO:
    """One decoded stream over a rolling directory's parts, each opened with ``open_part``."""
    return ChunkStream(_part_chunks(rolling_parts(path), open_part))
