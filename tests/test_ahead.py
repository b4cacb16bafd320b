"""commitsleuth.ingest.ahead: batches prepared in a thread, in order, errors and stops passed on."""

from __future__ import annotations

import threading

import pytest

from commitsleuth.ingest.ahead import ahead


def _threads() -> set[str]:
    return {t.name for t in threading.enumerate()}


def test_items_come_in_order_from_another_thread():
    seen = []

    def items():
        for i in range(50):
            seen.append(threading.current_thread().name)
            yield i

    assert list(ahead(items())) == list(range(50))
    assert set(seen) == {"commitsleuth-read-ahead"}
    assert "commitsleuth-read-ahead" not in _threads()


class Mismatch(BaseException):
    pass


@pytest.mark.parametrize("error", [ValueError("bad block"), Mismatch("fast path != decoder")])
def test_an_error_in_the_reader_is_raised_in_the_caller_after_what_came_before(error):
    def items():
        yield 1
        yield 2
        raise error

    got = []
    with pytest.raises(type(error)) as caught:
        for item in ahead(items()):
            got.append(item)
    assert got == [1, 2] and caught.value is error
    assert "commitsleuth-read-ahead" not in _threads()


def test_a_caller_that_stops_early_stops_the_reader_and_runs_its_cleanup():
    cleaned = threading.Event()
    produced = []

    def items():
        try:
            for i in range(1_000):
                produced.append(i)
                yield i
        finally:
            cleaned.set()

    gen = ahead(items(), depth=1)
    assert next(gen) == 0
    gen.close()  # what a raise or break in the caller's loop does
    assert cleaned.is_set()
    assert len(produced) <= 3  # one handed over, at most one waiting and one being made
    assert "commitsleuth-read-ahead" not in _threads()
