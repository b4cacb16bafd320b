"""The one explicit list of formats, lookup with "did you mean", and detection per file."""

from __future__ import annotations

import difflib

from commitsleuth.errors import UnknownFormatError
from commitsleuth.parsers.base import Format
from commitsleuth.parsers.formats import hive_log4j1, mr1_task_stdout, spark_eventlog

FORMATS: tuple[Format, ...] = (
    hive_log4j1.FORMAT,
    mr1_task_stdout.FORMAT,
    spark_eventlog.FORMAT,
)
BY_NAME = {f.name: f for f in FORMATS}

DETECT_LINES = 200
MIN_SHARE = 0.2  # below this share of head-like lines a file is not in that format


def get_format(name: str) -> Format:
    try:
        return BY_NAME[name]
    except KeyError:
        close = difflib.get_close_matches(name, BY_NAME, n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise UnknownFormatError(
            f"unknown format {name!r}{hint} (known: {', '.join(sorted(BY_NAME))})"
        ) from None


def detect(path: str, head_lines: list[str]) -> Format | None:
    """The format most of a file's first lines match, the path hint breaking ties; None if none."""
    lines = [line for line in head_lines[:DETECT_LINES] if line.strip()]
    best, best_score = None, 0.0
    for fmt in FORMATS:
        hits = sum(1 for line in lines if fmt.matches_head(line))
        score = hits / len(lines) if lines else 0.0
        if fmt.path_hint is not None and fmt.path_hint.search(path.replace("\\", "/")):
            score += 1.0
        if score < MIN_SHARE:
            continue
        if (score, fmt.priority) > (best_score, best.priority if best else -1):
            best, best_score = fmt, score
    return best
