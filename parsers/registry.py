"""The one explicit list of formats, lookup with "did you mean", and detection per file."""

from __future__ import annotations

import difflib

from commitsleuth.errors import UnknownFormatError
from commitsleuth.parsers import pasted
from commitsleuth.parsers.base import Format
from commitsleuth.parsers.formats import (hdfs_audit, hive_log4j1, hive_log4j2, hive_metastore_audit,
                                          hs2_operation_log, mr1_task_stdout, mr_task_syslog, s3_access,
                                          spark_eventlog, spark_log, tez_task)

FORMATS: tuple[Format, ...] = (
    hive_log4j1.FORMAT,
    hive_log4j2.FORMAT,
    hive_metastore_audit.FORMAT,
    hs2_operation_log.VERBOSE,
    hs2_operation_log.TERSE,
    mr1_task_stdout.FORMAT,
    mr_task_syslog.MR1,
    mr_task_syslog.MR2,
    tez_task.FORMAT,
    spark_log.YY,
    spark_log.ISO,
    spark_eventlog.FORMAT,
    hdfs_audit.FORMAT,
    s3_access.FORMAT,
)
BY_NAME = {f.name: f for f in FORMATS}

DETECT_LINES = 200
MIN_SHARE = 0.2  # below this share of head-like lines a file is not in that format
# A specific format (a narrower head of the same shape, e.g. Hadoop loggers in the log4j2
# layout) wins over a generic one when it matches nearly as many of the file's lines.
NEARLY = 0.1


def get_format(name: str) -> Format:
    base, prefix = pasted.split_name(name)
    if prefix is not None and prefix in pasted.PREFIXES:
        return pasted.pasted(get_format(base), prefix)
    try:
        return BY_NAME[name]
    except KeyError:
        close = difflib.get_close_matches(name, BY_NAME, n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise UnknownFormatError(
            f"unknown format {name!r}{hint} (known: {', '.join(sorted(BY_NAME))})"
        ) from None


def detect(path: str, head_lines: list[str], forced: Format | None = None) -> Format | None:
    """The format most of a file's first lines match, the path hint and then the more specific
    format breaking near-ties; None if no format matches enough of them. A file whose every
    line carries one pasted margin (``> ``, ``-- ``, indentation, line numbers…) is read in the
    pasted variant of its format; so is a ``forced`` format (``--format``) that only matches
    after the margin."""
    lines = [line for line in head_lines[:DETECT_LINES] if line.strip()]
    if forced is not None:
        if not pasted.can_paste(forced) or _share(forced, lines) >= MIN_SHARE:
            return forced
        prefix = pasted.common_prefix(lines)
        if prefix is not None and _share(pasted.pasted(forced, prefix), lines) >= MIN_SHARE:
            return pasted.pasted(forced, prefix)
        return forced
    fmt = _best(path, lines)
    if fmt is None:
        prefix = pasted.common_prefix(lines)
        if prefix is not None:
            fmt = _best(path, pasted.strip(lines, prefix))
            if fmt is not None and pasted.can_paste(fmt):
                return pasted.pasted(fmt, prefix)
            return None
    return fmt


def _share(fmt: Format, lines: list[str]) -> float:
    return sum(1 for line in lines if fmt.matches_head(line)) / len(lines) if lines else 0.0


def _best(path: str, lines: list[str]) -> Format | None:
    scored = []
    for fmt in FORMATS:
        score = _share(fmt, lines)
        if score < MIN_SHARE:
            continue
        if fmt.path_hint is not None and fmt.path_hint.search(path.replace("\\", "/")):
            score += 1.0
        scored.append((score, fmt))
    if not scored:
        return None
    best = max(score for score, _ in scored)
    near = [(fmt.priority, score, fmt) for score, fmt in scored if score >= best - NEARLY]
    return max(near, key=lambda t: (t[0], t[1]))[2]
