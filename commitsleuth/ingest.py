"""The local ingest engine: files on this machine -> parse -> canonical events in the store.

Reading (``readers``) and parsing (``commitsleuth.parsers``) are pure; only this module writes.
"""

from __future__ import annotations

import datetime as dt
import glob
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from commitsleuth.errors import InputError
from commitsleuth.forensics.paths import enrich
from commitsleuth.parsers import ParseStats, SourceContext, detect, get_format, parse_lines
from commitsleuth.parsers.base import ATTEMPT_RE, Format
from commitsleuth.readers import ReadError, fingerprint, open_lines, peek_lines, same_head
from commitsleuth.redact import redact
from commitsleuth.store import Store

BATCH = 50_000
_USERLOGS_ATTEMPT = re.compile(r"(?:^|/)(attempt_\d+_\d+_[mr]_\d+_\d+)(?:/|$)")


@dataclass
class SourceResult:
    uri: str
    status: str  # ok | partial | failed | skipped | unchanged
    format: str | None = None
    events: int = 0
    lines: int = 0
    rejected: int = 0
    reason: str | None = None
    source_id: int | None = None


@dataclass
class IngestReport:
    results: list[SourceResult] = field(default_factory=list)

    @property
    def events(self) -> int:
        return sum(r.events for r in self.results)

    def by_status(self, status: str) -> list[SourceResult]:
        return [r for r in self.results if r.status == status]

    @property
    def failed(self) -> list[SourceResult]:
        return self.by_status("failed")


def expand_paths(paths: Iterable[str]) -> list[Path]:
    """Files named by paths, directories (recursive) and globs; a missing one is an InputError."""
    files: list[Path] = []
    for raw in paths:
        matches = sorted(glob.glob(raw, recursive=True)) if glob.has_magic(raw) else [raw]
        if not matches or not all(os.path.lexists(m) for m in matches):
            raise InputError(f"no such file or directory: {raw}")
        for m in matches:
            p = Path(m)
            if p.is_dir():
                files.extend(sorted(q for q in p.rglob("*") if q.is_file()))
            else:
                files.append(p)
    seen, unique = set(), []
    for f in files:
        key = os.path.abspath(f)
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique


def attempt_from_path(path: str) -> str | None:
    m = _USERLOGS_ATTEMPT.search(path.replace("\\", "/"))
    return m.group(1) if m else None


def ingest(
    store: Store,
    paths: Iterable[str],
    *,
    format_name: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> IngestReport:
    """Ingest files into ``store``; each file gets a ``sources`` row whatever happens to it."""
    fmt_forced = get_format(format_name) if format_name else None
    files = expand_paths(paths)
    report = IngestReport()
    for path in files:
        report.results.append(_ingest_file(store, path, fmt_forced, progress))
    return report


def _ingest_file(store: Store, path: Path, fmt_forced: Format | None, progress) -> SourceResult:
    uri = str(path.resolve())
    try:
        size = path.stat().st_size
        fp = fingerprint(path)
    except OSError as exc:
        return _failed(store, uri, None, f"cannot read: {exc.strerror or exc}")

    # The same file under the same or another name (rotation): compare the stored head.
    previous = store.find_source(uri) or store.find_source_by_fingerprint(fp)
    resume_at, first_line = 0, 1
    if previous is not None and same_head(path, previous["fingerprint"]):
        if size == previous["size_bytes"] and (previous["status"] != "skipped" or not fmt_forced):
            return SourceResult(uri, "unchanged", previous["format"], source_id=previous["source_id"])
        if previous["status"] == "ok" and size > previous["size_bytes"] and previous["format"]:
            resume_at, first_line = previous["bytes_read"], previous["lines"] + 1
            fmt_forced = fmt_forced or get_format(previous["format"])

    try:
        head = peek_lines(path)
    except ReadError as exc:
        return _failed(store, uri, fp, str(exc), size=size)
    fmt = fmt_forced or detect(uri, head)
    if fmt is None:
        sid = store.add_source(
            uri, "file", fingerprint=fp, size_bytes=size, status="skipped",
            reason="not a log format commitsleuth reads", finished_at=_now(),
        )
        return SourceResult(uri, "skipped", None, reason="not a log format commitsleuth reads", source_id=sid)

    if resume_at:
        sid = previous["source_id"]
        store.update_source(sid, uri=uri, status="running", fingerprint=fp)
    else:
        sid = store.add_source(uri, "file", format=fmt.name, fingerprint=fp, size_bytes=size)
    ctx = SourceContext(uri=uri, source_id=sid, attempt_id=attempt_from_path(uri))
    stats = ParseStats()
    reader = open_lines(path, start_offset=resume_at, first_line=first_line, progress=progress)
    batch, written = [], 0
    try:
        for ev in parse_lines(fmt, reader, ctx, stats):
            ev.raw = redact(ev.raw)
            batch.append(enrich(ev))
            if len(batch) >= BATCH:
                written += store.write_events(batch)
                batch = []
    except ReadError as exc:
        status, reason = "partial", str(exc)
    except Exception as exc:  # noqa: BLE001 - one file's bug must not stop the other files
        status, reason = "partial", f"internal error after line {stats.lines}: {type(exc).__name__}: {exc}"
    else:
        status, reason = "ok", None
    written += store.write_events(batch)
    store.add_rejects(sid, {k: [c, line, redact(sample)] for k, (c, line, sample) in stats.rejects.items()})
    base_lines = first_line - 1
    store.update_source(
        sid,
        status=status,
        reason=reason,
        size_bytes=size,
        bytes_read=reader.bytes_read,
        lines=base_lines + stats.lines,
        events=(previous["events"] if resume_at else 0) + written,
        rejected=(previous["rejected"] if resume_at else 0) + stats.rejected,
        finished_at=_now(),
    )
    return SourceResult(uri, status, fmt.name, written, stats.lines, stats.rejected, reason, sid)


def _failed(store: Store, uri: str, fp: str | None, reason: str, size: int | None = None) -> SourceResult:
    sid = store.add_source(
        uri, "file", fingerprint=fp, size_bytes=size, status="failed", reason=reason, finished_at=_now()
    )
    return SourceResult(uri, "failed", reason=reason, source_id=sid)


def _now() -> dt.datetime:
    return dt.datetime.now().replace(microsecond=0)


__all__ = ["IngestReport", "SourceResult", "expand_paths", "ingest", "ATTEMPT_RE"]
