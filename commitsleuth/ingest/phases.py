"""``COMMITSLEUTH_PHASES=1``: each process of an ingest writes ``phase <unix time> <pid> <its cpu seconds> <what>``
lines on stderr at the points of its timeline (the command entered, the store opened, each range
scanned and written, the closing checkpoint): where its seconds go, as ``bench/ingest_text.py
--phases`` prints. Off (the default) a mark costs one test of a constant."""

from __future__ import annotations

import os
import sys
import time

ON = bool(os.environ.get("COMMITSLEUTH_PHASES"))


def mark(what: str) -> None:
    if ON:
        sys.stderr.write(f"phase {time.time():.4f} {os.getpid()} {time.process_time():.3f} {what}\n")
        sys.stderr.flush()
