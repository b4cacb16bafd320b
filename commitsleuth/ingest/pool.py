"""How many worker processes an ingest runs, and how much work it hands them ahead of the writes.

Workers read and parse; only the parent writes the store, each batch with its checkpoint. Two
kinds of work go to them: ranges of one big plain text log, and whole sources (a compressed
file, an event log, a rolling directory, a small text log) — so a Spark History Server
directory of thousands of applications is spread across the cores as well as one big log is.
Starting a worker costs about a second of imports, so the pool starts only when there is enough
to share: one big file (``PARALLEL_MIN``), or several sources adding up to ``SPREAD_MIN``.

The environment tunes it (tests and benchmarks run the same directory both ways):
``COMMITSLEUTH_WORKERS`` caps the workers (1: everything in this process),
``COMMITSLEUTH_PARALLEL_MIN`` and ``COMMITSLEUTH_SPREAD_MIN`` are the two thresholds in bytes.
"""

from __future__ import annotations

import os
from typing import Iterable

MAX_WORKERS = 4
PARALLEL_MIN = int(os.environ.get("COMMITSLEUTH_PARALLEL_MIN", 128 << 20))
SPREAD_MIN = int(os.environ.get("COMMITSLEUTH_SPREAD_MIN", 16 << 20))
RANGE = int(os.environ.get("COMMITSLEUTH_RANGE", 64 << 20))  # per worker task: memory stays bounded
IN_FLIGHT_BYTES = 256 << 20  # source bytes handed out and not yet written (4 default ranges)


def workers_for(sizes: Iterable[int]) -> int:
    """Worker processes for sources of these sizes; 1 means none (the parent reads)."""
    sizes = list(sizes)
    total = sum(sizes)
    cap = int(os.environ.get("COMMITSLEUTH_WORKERS", 0)) or min(os.cpu_count() or 1, MAX_WORKERS)
    if max(sizes, default=0) >= PARALLEL_MIN or (len(sizes) > 1 and total >= SPREAD_MIN):
        return max(1, cap)
    return 1


def ahead(tasks: int, task_bytes: int, workers: int) -> bool:
    """True while the work handed out and not yet written is enough to keep ``workers`` busy:
    the parent writes before it plans more, so parsed results never pile up in memory."""
    return tasks > 2 * workers + 2 or task_bytes > IN_FLIGHT_BYTES
