"""The shared message grammar: message text of any log head -> partial event fields."""

from __future__ import annotations

import re

from lark import Token, Transformer, UnexpectedInput

from commitsleuth.parsers.lark_loader import grammar

# The literal each message alternative of messages.lark starts with. A line without one of
# them is never handed to the LALR parser; tests check that every sample line has one.
KEYWORDS = (
    "renamed path",
    "Duplicate taskid file removed",
    "Moving tmp dir",
)
KEYWORD_RE = re.compile("|".join(re.escape(k) for k in KEYWORDS))


def _path(tok: Token) -> str:
    return str(tok)


class MessageTransformer(Transformer):
    """Each rule returns ``dict`` of Event fields, ``kind`` included."""

    def renamed(self, items):
        src, dst, size = items
        return {"kind": "rename", "path": _path(src), "target_path": _path(dst), "size": int(size)}

    def dedup_removed(self, items):
        removed, _kw1, len1, kept, _kw2, len2 = items
        removed = _path(removed)
        if len1 is None:
            removed = removed.rstrip(".")  # 0.x: "… removed: <p>. Existing file: <q>"
        detail = {"kept": _path(kept)}
        if len2 is not None:
            detail["kept_size"] = int(len2)
        return {
            "kind": "dedup_remove",
            "path": removed,
            "size": int(len1) if len1 is not None else None,
            "detail": detail,
        }

    def moving_tmp(self, items):
        src, dst = items
        return {"kind": "publish", "path": _path(src), "target_path": _path(dst)}


_TRANSFORMER = MessageTransformer()


def parse_message(text: str) -> dict | None:
    """Fields of the event a message states, or None when it states none we know."""
    if KEYWORD_RE.search(text) is None:
        return None
    try:
        tree = grammar("messages").parse(text.strip())
    except UnexpectedInput:
        return None
    return _TRANSFORMER.transform(tree)
