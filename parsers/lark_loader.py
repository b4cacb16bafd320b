"""Lark grammars from ``grammars/*.lark``, each built once (LALR, contextual lexer).

When lark-cython is installed, LALR runs compiled (about twice as fast on our messages); its
tokens are not ``str``, so transformers are handed plain strings either way.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from lark import Lark, Token, Transformer
from lark import __version__ as lark_version

from commitsleuth.cache import cache_dir

try:
    import lark_cython
except ImportError:  # pure-Python lark gives the same results, slower
    lark_cython = None


class _PlainTokens:
    """Wraps a transformer so its callbacks receive token values as ``str``, as in plain lark."""

    def __init__(self, inner: Transformer):
        self._inner = inner

    def __getattr__(self, name: str):
        fn = getattr(self._inner, name)
        if not callable(fn) or name.startswith("_"):
            return fn

        def call(children):
            return fn([_plain(c) for c in children])

        return call


def _plain(child):
    if child is None or isinstance(child, (str, dict, list, tuple, int)) and not isinstance(child, Token):
        return child
    value = getattr(child, "value", child)
    return Token(child.type, value) if hasattr(child, "type") else value


@lru_cache(maxsize=None)
def grammar(name: str, transformer: Transformer | None = None) -> Lark:
    """The grammar, built once. With a ``transformer``, LALR applies it while parsing and
    ``parse`` returns its result (no tree is built: the hot path of ingestion)."""
    text = resources.files("commitsleuth.parsers").joinpath("grammars", f"{name}.lark").read_text(
        encoding="utf-8"
    )
    kw = {}
    if lark_cython is not None and transformer is not None:
        kw["_plugins"] = lark_cython.plugins
        transformer = _PlainTokens(transformer)
    return Lark(text, parser="lalr", lexer="contextual", maybe_placeholders=True, transformer=transformer,
                cache=_cache_file(f"{name}-{'cython' if kw else 'python'}"), **kw)


def _cache_file(name: str) -> str | bool:
    """Where lark keeps the grammar's analysis (its LALR tables): building them costs about
    0.06 s of CPU in every process that parses messages, loading them 0.01 s. Lark checks the
    file against the grammar's text, its options and lark's version, and makes it again when
    any differs. In the user's own cache, never a shared temporary directory: it is a pickle.
    False (no cache) where that directory cannot be made."""
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return str(folder / f"lark-{name}-{lark_version}.cache")


def grammar_names() -> list[str]:
    folder = resources.files("commitsleuth.parsers").joinpath("grammars")
    return sorted(p.name[: -len(".lark")] for p in folder.iterdir() if p.name.endswith(".lark"))
