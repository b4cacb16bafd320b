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
    # "12 text", "12: text", "12 | text", cat -n's "    12\ttext": one blank after the number
    # or its mark, so that the pasted line's own indentation (a stack frame's) stays
    "line-numbers": r"[ \t]*\d+(?:[ \t]*[:.|][ \t]?|[ \t])",
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
    """Line formats with a head have records to find after a margin; formats with a decoder of
    their own (audit logs, S3 access logs, .jhist) get their lines without it."""
    return (fmt.head is not None or fmt.decoder is not None) and SUFFIX not in fmt.name


def _unmargined(decoder, pattern: re.Pattern):
    """``decoder`` fed each line with its margin cut off (its events' raw text is the line's
    own, after the margin: these decoders keep the record they parsed)."""
    def decode(lines, ctx, stats):
        def cut(text: str) -> str:
            m = pattern.match(text)
            return text[m.end():] if m else text
        return decoder(((n, o, cut(t)) for n, o, t in lines), ctx, stats)
    return decode


@lru_cache(maxsize=None)
def pasted(fmt: Format, prefix: str) -> Format:
    """``fmt`` matched after the margin ``prefix``; continuation lines keep theirs."""
    margin = PREFIXES[prefix]

    def after(p: re.Pattern | None) -> re.Pattern | None:
        return None if p is None else re.compile(f"(?:{margin})" + p.pattern, p.flags)

    decoded = {}
    if fmt.decoder is not None:
        # the block scan finds records at line starts: a pasted copy is read line by line
        decoded = dict(decoder=_unmargined(fmt.decoder, _COMPILED[prefix]), scanner=None, claims=after(fmt.claims))
    return dataclasses.replace(
        fmt, name=f"{fmt.name}{SUFFIX}{prefix}", head=after(fmt.head), record_start=after(fmt.record_start),
        description=f"{fmt.description} (pasted: every line after a {prefix} margin)", **decoded,
    )


def split_name(name: str) -> tuple[str, str | None]:
    """``hive-log4j1+pasted:quote`` -> (``hive-log4j1``, ``quote``); a plain name -> (name, None)."""
    base, sep, prefix = name.partition(SUFFIX)
    return base, (prefix if sep else None)
