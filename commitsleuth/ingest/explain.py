"""Why a file was read as the format it was (``ingest -v``): the detection's scores, again."""

from __future__ import annotations

from pathlib import Path

from commitsleuth.ingest.readers import ReadError, peek_lines
from commitsleuth.parsers import detection, get_format


def why(uri: str, format_name: str | None = None) -> str:
    """``hive-log4j1: 37 of 40 heads (also hive-log4j2 3)`` for a file; a directory is an event log."""
    path = Path(uri)
    if path.is_dir():
        return "a Spark event-log directory"
    try:
        head = peek_lines(path)
    except (OSError, ReadError) as exc:
        return f"unreadable: {exc}"
    return detection(uri, head, get_format(format_name) if format_name else None).why
