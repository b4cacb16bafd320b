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
    """Tallies the attempt starts, attempt ends and application ends of one source's events."""

    def __init__(self):
        self.ended = False
        self.started: set[tuple] = set()
        self.finished: set[tuple] = set()

    def add(self, table: pa.Table) -> None:
        """Count a batch of events (any table with ``kind``, ``app_id`` and ``attempt_id``)."""
        kind = table.column("kind")
        if pc.any(pc.equal(kind, "app_end")).as_py():
            self.ended = True
        # whole columns into the sets: a big log has an attempt start and end on most lines
        for name, seen in (("attempt_start", self.started), ("attempt_end", self.finished)):
            sub = table.filter(pc.equal(kind, name))
            if sub.num_rows:
                seen.update(zip(sub.column("app_id").to_pylist(), sub.column("attempt_id").to_pylist()))

    def add_rows(self, rows) -> None:
        """Count ``(kind, app_id, attempt_id)`` rows."""
        for kind, app, attempt in rows:
            if kind == "app_end":
                self.ended = True
            else:
                (self.started if kind == "attempt_start" else self.finished).add((app, attempt))

    def note(self) -> str | None:
        """The source's note when its application did not end, else None."""
        if self.ended:
            return None
        n = len(self.started - self.finished)
        return f"application did not end ({n} attempt{'' if n == 1 else 's'} never finished)"


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
