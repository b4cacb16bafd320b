"""The one explicit list of formats, lookup with "did you mean", and detection per file."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from commitsleuth.errors import UnknownFormatError
from commitsleuth.parsers import pasted
from commitsleuth.parsers.base import Format
from commitsleuth.parsers.formats import (hadoop_client, hdfs_audit, hive_cli, hive_log4j1, hive_log4j2,
                                          hive_metastore_audit, hs2_operation_log, mr1_task_stdout,
                                          mr_jobhistory, mr_task_syslog, s3_access, spark_eventlog, spark_log, tez_task,
                                          yarn_logs)

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
    spark_log.DRIVER,
    spark_log.LOG4J2,
    hadoop_client.FORMAT,
    hive_cli.FORMAT,
    yarn_logs.FORMAT,
    spark_eventlog.FORMAT,
    mr_jobhistory.FORMAT,
    hdfs_audit.FORMAT,
    s3_access.FORMAT,
)
BY_NAME = {f.name: f for f in FORMATS}

DETECT_LINES = 200
MIN_SHARE = 0.2  # below this share of head-like lines a file is not in that format
# A specific format (a narrower head of the same shape, e.g. Hadoop loggers in the log4j2
# layout) wins over a generic one when it matches nearly as many of the file's lines.
NEARLY = 0.1


# Lines of a Java stack trace (frames, "Caused by:", "... 12 more", the exception's own line):
# the continuation of the record above them, whatever the format. A failed task's log is mostly
# these, so they do not count in the share of head lines that tells a format.
STACK_LINE = re.compile(
    r"\s+at [\w$.<>]+\(|\s*\.\.\. \d+ (?:more|common frames omitted)|\s*(?:Caused by|Suppressed): "
    r"|(?:[a-z][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable)(?::|\s*$)"
)


def get_format(name: str) -> Format:
    base, prefix = pasted.split_name(name)
    if prefix is not None and prefix in pasted.PREFIXES:
        return pasted.pasted(get_format(base), prefix)
    try:
        return BY_NAME[name]
    except KeyError:
        close = difflib.get_close_matches(name, BY_NAME, n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise UnknownFormatError(
            f"unknown format {name!r}{hint} (known: {', '.join(sorted(BY_NAME))})"
        ) from None


# A format's markers (its producers' own loggers) decide a near-tie when at least this share of
# the lines carries them: a Spark driver log with a few Hive session lines stays spark-log.
MARKER_SHARE = 0.1
CLAIM_LINES = 20  # a claiming header comes first, after a pasted command line or two


@dataclass(frozen=True)
class Detection:
    """The format chosen for a file, and why, in words ``ingest -v`` shows."""

    format: Format | None
    why: str


def detect(path: str, head_lines: list[str], forced: Format | None = None) -> Format | None:
    """The format most of a file's first lines match, the path hint and then the more specific
    format breaking near-ties; None if no format matches enough of them. A file whose every
    line carries one pasted margin (``> ``, ``-- ``, indentation, line numbers…) is read in the
    pasted variant of its format; so is a ``forced`` format (``--format``) that only matches
    after the margin."""
    return detection(path, head_lines, forced).format


def detection(path: str, head_lines: list[str], forced: Format | None = None) -> Detection:
    """``detect`` with its reasons: each candidate scored over the first lines."""
    lines = [line for line in head_lines[:DETECT_LINES] if line.strip() and not STACK_LINE.match(line)]
    n = len(lines)
    if forced is not None:
        hits = _hits(forced, lines)
        if not pasted.can_paste(forced) or hits >= MIN_SHARE * n:
            return Detection(forced, f"{forced.name}: --format ({hits} of {n} heads)")
        prefix = pasted.common_prefix(lines)
        if prefix is not None:
            fmt = pasted.pasted(forced, prefix)
            if _hits(fmt, lines) >= MIN_SHARE * n:
                return Detection(fmt, f"{fmt.name}: --format ({_hits(fmt, lines)} of {n} heads after a {prefix} margin)")
        return Detection(forced, f"{forced.name}: --format ({hits} of {n} heads)")
    found = _best(path, lines)
    if found.format is None:
        prefix = pasted.common_prefix(lines)
        if prefix is not None:
            inner = _best(path, pasted.strip(lines, prefix))
            if inner.format is not None and pasted.can_paste(inner.format):
                return Detection(pasted.pasted(inner.format, prefix), f"{inner.why}, after a {prefix} margin")
    return found


def _hits(fmt: Format, lines: list[str]) -> int:
    return sum(1 for line in lines if fmt.matches_head(line))


def _best(path: str, lines: list[str]) -> Detection:
    n = len(lines)
    if not n:
        return Detection(None, "no lines to tell")
    for fmt in FORMATS:
        if fmt.claims is not None:
            at = next((i for i, line in enumerate(lines[:CLAIM_LINES]) if fmt.claims.match(line)), None)
            if at is not None:
                return Detection(fmt, f"{fmt.name}: its header on line {at + 1}")
    scored = []
    for fmt in FORMATS:
        hits = _hits(fmt, lines)
        hinted = fmt.path_hint is not None and fmt.path_hint.search(path.replace("\\", "/")) is not None
        marked = fmt.marker is not None and sum(1 for line in lines if fmt.marker.match(line)) >= MARKER_SHARE * n
        scored.append((hits / n + (1.0 if hinted and hits else 0.0), hits, hinted, marked, fmt))
    scored.sort(key=lambda t: -t[1])
    enough = [t for t in scored if t[1] >= MIN_SHARE * n]
    if not enough:
        best = f"; best {scored[0][4].name}: {scored[0][1]} of {n} heads" if scored[0][1] else ""
        return Detection(None, f"no format: none matches {MIN_SHARE:.0%} of the first {n} lines{best}")
    top_score = max(t[0] for t in enough)
    near = [t for t in enough if t[0] >= top_score - NEARLY]
    score, hits, hinted, marked, fmt = max(near, key=lambda t: (t[3], t[4].priority, t[0]))
    why = f"{fmt.name}: {hits} of {n} heads" + (", path" if hinted else "") + (", its loggers" if marked else "")
    others = [f"{t[4].name} {t[1]}" for t in scored if t[4] is not fmt and t[1]][:2]
    return Detection(fmt, why + (f" (also {', '.join(others)})" if others else ""))
