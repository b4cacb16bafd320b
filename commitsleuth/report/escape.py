"""Log text must not drive the terminal: control characters (ESC above all, which starts the
sequences that retitle a terminal or clear it) are shown as '?'. Every command that prints
log-derived text passes it through ``printable``."""

from __future__ import annotations

_CONTROLS = [*range(0x20), 0x7F, *range(0x80, 0xA0)]
_ALL = {c: "?" for c in _CONTROLS}
_LAYOUT = {c: "?" for c in _CONTROLS if chr(c) not in "\n\t"}


def printable(text: str | None, *, keep_layout: bool = False) -> str:
    """``text`` with its control characters shown as '?'; ``keep_layout`` keeps newlines and
    tabs (a stack trace under an evidence line)."""
    return (text or "").translate(_LAYOUT if keep_layout else _ALL)
