"""Formats as data: every sample parses under its own format and is claimed by no other first."""

from __future__ import annotations

import pytest

from commitsleuth.parsers import FORMATS, ParseStats, SourceContext, detect, get_format, parse_lines
from commitsleuth.parsers.lark_loader import grammar, grammar_names
from commitsleuth.parsers.messages import KEYWORD_RE

SAMPLES = [pytest.param(f, s, id=f"{f.name}:{i}") for f in FORMATS for i, s in enumerate(f.samples)]


def test_every_format_has_samples_and_a_unique_name():
    assert len({f.name for f in FORMATS}) == len(FORMATS)
    for f in FORMATS:
        assert f.samples, f.name
        assert f.description, f.name


@pytest.mark.parametrize("fmt,sample", SAMPLES)
def test_sample_parses_under_its_own_format(fmt, sample):
    stats = ParseStats()
    events = list(parse_lines(fmt, [(1, 0, sample.line)], SourceContext("sample"), stats))
    assert stats.rejected == 0, stats.rejects
    assert [e.kind for e in events] == ([sample.kind] if sample.kind else [])
    assert sample.kind is None or sample.kind in fmt.kinds  # the declared kinds tell the truth


@pytest.mark.parametrize("fmt,sample", SAMPLES)
def test_sample_is_detected_as_its_own_format(fmt, sample):
    assert detect("sample.log", [sample.line]) is fmt


@pytest.mark.parametrize("fmt,sample", [p for p in SAMPLES if p.values[1].kind and not p.values[0].decoder])
def test_keyword_prefilter_lets_every_event_sample_through(fmt, sample):
    assert KEYWORD_RE.search(sample.line)


def test_every_grammar_builds():
    for name in grammar_names():
        assert grammar(name) is grammar(name)  # built once


def test_unknown_format_suggests_the_closest():
    with pytest.raises(Exception, match=r"unknown format 'mr1-task-stdot'; did you mean 'mr1-task-stdout' or 'mr1-task-syslog'\?"):
        get_format("mr1-task-stdot")


def test_compiled_and_pure_lalr_agree_on_every_message(corpus):
    """lark-cython (when installed) and plain lark give the same fields for every message."""
    from importlib import resources

    from lark import Lark, UnexpectedInput

    from commitsleuth.parsers import messages
    from commitsleuth.parsers.lark_loader import grammar, lark_cython

    assert lark_cython is not None, "lark-cython is a dependency: the fast path must be tested"
    text = resources.files("commitsleuth.parsers").joinpath("grammars", "messages.lark").read_text()
    pure = Lark(text, parser="lalr", lexer="contextual", maybe_placeholders=True,
                transformer=messages.MessageTransformer())
    fast = grammar("messages", messages._TRANSFORMER)
    lines = [s.line for f in FORMATS for s in f.samples]
    for path in (corpus / "loghub").glob("*.log"):
        lines += [ln for ln in path.read_text(errors="replace").splitlines() if KEYWORD_RE.search(ln)]
    compared = 0
    for line in lines:
        for start in range(len(line)):  # every suffix that begins with a keyword is a message
            if not KEYWORD_RE.match(line, start):
                continue
            msg = line[start:].strip()
            try:
                want = pure.parse(msg)
            except UnexpectedInput:
                want = "error"
            try:
                got = fast.parse(msg)
            except UnexpectedInput:
                got = "error"
            assert got == want, msg
            compared += 1
    assert compared > 60
