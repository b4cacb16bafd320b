"""The attempts an event log left running, counted batch by batch in bounded memory."""

from __future__ import annotations

import random

import pyarrow as pa

from commitsleuth.ingest.app_end import AppEnds


def _table(rows: list[tuple]) -> pa.Table:
    return pa.table({"kind": [r[0] for r in rows], "app_id": [r[1] for r in rows],
                     "attempt_id": [r[2] for r in rows]},
                    schema=pa.schema([("kind", pa.string()), ("app_id", pa.string()), ("attempt_id", pa.string())]))


def _log(attempts: int, seed: int) -> list[tuple]:
    """Attempts of two applications (one unnamed) starting and ending interleaved, as a
    scheduler runs a few at a time; some never end."""
    rng = random.Random(seed)
    rows, running = [], []
    for n in range(attempts):
        app = None if n % 7 == 0 else f"app-{n % 2}"
        rows.append(("attempt_start", app, f"task {n}.0 in stage 1.0 (TID {n})"))
        running.append((app, f"task {n}.0 in stage 1.0 (TID {n})"))
        while len(running) > rng.randint(1, 8):
            app_, attempt = running.pop(rng.randrange(len(running)))
            if rng.random() > 0.02:
                rows.append(("attempt_end", app_, attempt))
    return rows


def _never_finished(rows: list[tuple]) -> int:
    started = {(a, t) for k, a, t in rows if k == "attempt_start"}
    finished = {(a, t) for k, a, t in rows if k == "attempt_end"}
    return len(started - finished)


def test_counted_in_batches_as_in_one_set_wherever_batches_end():
    rows = _log(3000, seed=1)
    want = f"application did not end ({_never_finished(rows)} attempts never finished)"
    for size in (1, 7, 100, 1000, len(rows)):
        tally = AppEnds()
        for at in range(0, len(rows), size):
            tally.add(_table(rows[at:at + size]))
        assert tally.note() == want, size
    stored = AppEnds()  # a resumed read: what an earlier read stored, as rows
    stored.add_rows(rows)
    assert stored.note() == want


def test_memory_follows_the_attempts_running_not_the_log():
    rows = [(kind, "app-1", f"task {n}.0 in stage 1.0 (TID {n})")
            for n in range(100_000) for kind in ("attempt_start", "attempt_end")]
    rows.append(("app_end", "app-1", None))
    tally = AppEnds()
    for at in range(0, len(rows), 999):  # odd batches: starts and ends fall in different ones
        tally.add(_table(rows[at:at + 999]))
    assert tally.note() is None and not tally.open and not tally.closed_early


def test_an_end_before_its_start_and_a_start_read_twice():
    tally = AppEnds()
    tally.add(_table([("attempt_end", "a", "t1"), ("attempt_start", "a", "t2"), ("attempt_start", "a", "t2")]))
    tally.add(_table([("attempt_start", "a", "t1"), ("attempt_end", "a", "t2")]))
    assert tally.note() == "application did not end (0 attempts never finished)"
