"""Logs as people paste them: a wiki's indentation, a ticket's ``> `` or ``-- `` quoting, ``| ``
and ``# `` margins, an editor's line numbers. One prefix on every line is recognised and the
format's own patterns are matched after it; the raw line is kept as it was written.

A pasted variant of a format is a format of its own, named ``<format>+pasted:<prefix>`` so that
worker processes and a resumed ingest find it again by name (``registry.get_format``).
"""

from __future__ import annotations

import dataclasses
import re
from functools import lru_cache

from commitsleuth.parsers.base import Format

# name -> pattern of the margin; each is tried in this order against every non-blank line.
PREFIXES: dict[str, str] = {
    "quote": r"[ \t]*>[ \t]?",
    "sql-comment": r"[ \t]*--[ \t]?",
    "pipe": r"[ \t]*\|[ \t]?",
    "hash": r"[ \t]*#[ \t]?",
    "line-numbers": r"[ \t]*\d+[:.|]?[ \t]+",
    "indent": r"(?:[ ]{2,}|\t+)",
}
_COMPILED = {name: re.compile(p) for name, p in PREFIXES.items()}
SUFFIX = "+pasted:"


def common_prefix(lines: list[str]) -> str | None:
    """The name of the margin every non-blank line starts with, or None. Line numbers must count
    up by one (a log's own leading numbers, such as HDFS's yymmdd date, do not)."""
    lines = [line for line in lines if line.strip()]
    if len(lines) < 2:
        return None
    for name, pattern in _COMPILED.items():
        matches = [pattern.match(line) for line in lines]
        if not all(matches):
            continue
        if name == "line-numbers":
            numbers = [int(re.search(r"\d+", m.group(0)).group(0)) for m in matches]
            if any(b != a + 1 for a, b in zip(numbers, numbers[1:])):
                continue
        if name == "indent" and any(m.end() == len(line) for m, line in zip(matches, lines)):
            continue
        return name
    return None


def strip(lines: list[str], prefix: str) -> list[str]:
    """``lines`` without their margin (for detection)."""
    pattern = _COMPILED[prefix]
    return [pattern.sub("", line, count=1) if line.strip() else line for line in lines]


def can_paste(fmt: Format) -> bool:
    """Only line formats with a head have records to find after a margin."""
    return fmt.head is not None and fmt.decoder is None and SUFFIX not in fmt.name


@lru_cache(maxsize=None)
def pasted(fmt: Format, prefix: str) -> Format:
    """``fmt`` matched after the margin ``prefix``; continuation lines keep theirs."""
    margin = PREFIXES[prefix]

    def after(p: re.Pattern | None) -> re.Pattern | None:
        return None if p is None else re.compile(f"(?:{margin})" + p.pattern, p.flags)

    return dataclasses.replace(
        fmt, name=f"{fmt.name}{SUFFIX}{prefix}", head=after(fmt.head), record_start=after(fmt.record_start),
        description=f"{fmt.description} (pasted: every line after a {prefix} margin)",
    )


def split_name(name: str) -> tuple[str, str | None]:
    """``hive-log4j1+pasted:quote`` -> (``hive-log4j1``, ``quote``); a plain name -> (name, None)."""
    base, sep, prefix = name.partition(SUFFIX)
    return base, (prefix if sep else None)
