"""Lark grammars from ``grammars/*.lark``, each built once (LALR, contextual lexer)."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from lark import Lark, Transformer


@lru_cache(maxsize=None)
def grammar(name: str, transformer: Transformer | None = None) -> Lark:
    """The grammar, built once. With a ``transformer``, LALR applies it while parsing and
    ``parse`` returns its result (no tree is built: the hot path of ingestion)."""
    text = resources.files("commitsleuth.parsers").joinpath("grammars", f"{name}.lark").read_text(
        encoding="utf-8"
    )
    return Lark(text, parser="lalr", lexer="contextual", maybe_placeholders=True, transformer=transformer)


def grammar_names() -> list[str]:
    folder = resources.files("commitsleuth.parsers").joinpath("grammars")
    return sorted(p.name[: -len(".lark")] for p in folder.iterdir() if p.name.endswith(".lark"))
