"""Whether an event log's application ended, and how many task attempts it left running.

A Spark event log ends with ``SparkListenerApplicationEnd``. A log without it (cut off, still
being written, the driver killed) is kept, and its source says so: "application did not end
(N attempts never finished)", N being the attempts with a TaskStart and no TaskEnd, so a reader
knows the attempts' ends (and what they wrote) may be missing.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

FORMAT = "spark-eventlog"


class AppEnds:
    """Tallies the attempt starts, attempt ends and application ends of one source's events.

    Memory follows the attempts running at a time, not the log's length: an attempt's start
    and end in one batch settle each other in Arrow, and only the attempts still open (or
    whose end came before any start of theirs) are remembered from batch to batch. A start
    read again after its attempt ended in an earlier batch counts it as open again."""

    def __init__(self):
        self.ended = False
        self.open: set[str] = set()
        self.closed_early: set[str] = set()  # ended before a start of theirs was seen

    def add(self, table: pa.Table) -> None:
        """Count a batch of events (any table with ``kind``, ``app_id`` and ``attempt_id``)."""
        kind = table.column("kind")
        if pc.any(pc.equal(kind, "app_end")).as_py():
            self.ended = True
        ids = table.select(["app_id", "attempt_id"])  # filtering the whole table copies its raw lines
        starts, ends = (_attempts(ids.filter(pc.equal(kind, name))) for name in ("attempt_start", "attempt_end"))
        self._settle(starts.filter(pc.invert(pc.is_in(starts, value_set=ends))).to_pylist(),
                     ends.filter(pc.invert(pc.is_in(ends, value_set=starts))).to_pylist())

    def add_rows(self, rows) -> None:
        """Count ``(kind, app_id, attempt_id)`` rows."""
        starts, ends = [], []
        for kind, app, attempt in rows:
            if kind == "app_end":
                self.ended = True
            else:
                (starts if kind == "attempt_start" else ends).append(_key(app, attempt))
        self._settle(starts, ends)

    def _settle(self, starts: list, ends: list) -> None:
        for key in starts:
            if key not in self.closed_early:
                self.open.add(key)
        for key in ends:
            if key in self.open:
                self.open.discard(key)
            else:
                self.closed_early.add(key)

    def note(self) -> str | None:
        """The source's note when its application did not end, else None."""
        if self.ended:
            return None
        n = len(self.open)
        return f"application did not end ({n} attempt{'' if n == 1 else 's'} never finished)"


def _key(app: str | None, attempt: str | None) -> str:
    return f"{app or ''}\x1f{attempt or ''}"


def _attempts(table: pa.Table) -> pa.Array:
    """Each row's attempt as one string (application and attempt id)."""
    app = pc.fill_null(table.column("app_id"), "").combine_chunks()
    attempt = pc.fill_null(table.column("attempt_id"), "").combine_chunks()
    return pc.binary_join_element_wise(app, attempt, "\x1f")


def tally_of(con, source_id: int | None) -> AppEnds:
    """A tally for a source's read, holding what an earlier read of it stored (a resumed read
    sees only the file's tail); a first read (``source_id`` None) starts empty."""
    tally = AppEnds()
    if source_id is not None:
        tally.add_rows(con.execute(
            "SELECT kind, app_id, attempt_id FROM events "
            "WHERE source_id = ? AND kind IN ('attempt_start', 'attempt_end', 'app_end')", [source_id]).fetchall())
    return tally


def joined(*notes: str | None) -> str | None:
    """Notes of one source in one reason, ``; `` between them."""
    return "; ".join(n for n in notes if n) or None
