"""Log text and paths must not drive the terminal: control characters (ESC above all, which
starts the sequences that retitle a terminal, write its clipboard or clear it; the C1 CSI; the
bidirectional overrides that show a name backwards) are shown as '?', and the bytes of a name
that is not UTF-8 (Python's surrogate escapes) as ``\\xNN``. Every command that prints
log-derived text passes it through ``printable``; every line that quotes a path or log text
(``Error:``, ``skipped:``, ``partial:``, ``format of``, ``report written to``) through
``shown``, which redacts it first."""

from __future__ import annotations

from commitsleuth.redact import redact, redact_user

# C0 and C1 controls and DEL; the bidirectional marks, embeddings, overrides and isolates
# (U+202E shows what follows right to left); the line and paragraph separators.
_CONTROLS = [*range(0x20), 0x7F, *range(0x80, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F),
             *range(0x2066, 0x206A), 0x2028, 0x2029]
# A name read with surrogateescape keeps each byte that is not UTF-8 as U+DC80..U+DCFF; any
# other lone surrogate cannot be printed at all.
_SURROGATES = {c: (f"\\x{c - 0xDC00:02x}" if 0xDC80 <= c <= 0xDCFF else "?") for c in range(0xD800, 0xE000)}
_ALL = {**{c: "?" for c in _CONTROLS}, **_SURROGATES}
_LAYOUT = {c: v for c, v in _ALL.items() if chr(c) not in "\n\t"}


def printable(text: str | None, *, keep_layout: bool = False) -> str:
    """``text`` with its control characters shown as '?' (and the user's redaction patterns of
    this run applied: what is shown gets them though it was stored before); ``keep_layout``
    keeps newlines and tabs (a stack trace under an evidence line)."""
    return (redact_user(text) or "").translate(_LAYOUT if keep_layout else _ALL)


def shown(text: str | None, keep: tuple[str, ...] = ()) -> str:
    """One line quoting paths or log text as the terminal gets it: secrets masked by the one
    redaction layer (``keep``: partition specs it quotes, kept), then every control character
    made visible (``printable``)."""
    return printable(redact(text, keep=keep))
