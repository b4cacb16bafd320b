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

import ctypes
import multiprocessing
import os
import sys
from typing import Iterable

from commitsleuth.ingest import phases

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


def ranges_for(size: int, workers: int, range_bytes: int = RANGE) -> int:
    """How many ranges a plain file of ``size`` bytes is cut into: none larger than ``range_bytes``
    (memory stays bounded), and a multiple of ``workers``, so the last ones end together
    (200 MB in 64 MB ranges left one worker parsing its second range while the other, done
    with a 20 MB one, waited)."""
    n = max(1, -(-size // range_bytes))
    return -(-n // workers) * workers if workers > 1 else n


def ahead(tasks: int, task_bytes: int, workers: int) -> bool:
    """True while the work handed out and not yet written is enough to keep ``workers`` busy:
    the parent writes before it plans more, so parsed results never pile up in memory."""
    return tasks > 2 * workers + 2 or task_bytes > IN_FLIGHT_BYTES


def context():
    """The multiprocessing context the workers start from. Workers fork from a server process
    that imported the ingest once: no fork of a process holding DuckDB's threads, and no
    start-up import per worker (0.5-0.8 cpu-s each, the CLI script included, which spawn runs
    again in every child), nor a grammar build per worker."""
    if "forkserver" in multiprocessing.get_all_start_methods() and can_watch():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["__main__", "commitsleuth.ingest.worker_preload"])
        return ctx
    return multiprocessing.get_context("spawn")


def can_watch() -> bool:
    """True where a worker can watch the ingest's process end (a pidfd: Linux >= 5.3)."""
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True


def prestart(paths: Iterable[str], fork: bool = False, format_name: str | None = None,
             keep_reads: bool = False) -> None:
    """Start the workers' fork server now when the files named will need workers: its imports
    (about 0.6 cpu-s) then run on the other core while this process imports the ingest and
    opens the store, instead of after. Directories and globs are not looked into here (the
    server then starts when the pool does).

    ``fork``: this process is the CLI program, which has started no thread yet and opened no
    store: the workers are forked from it now, once it has imported the ingest, and the ingest
    takes them (``take_forked``). No server then imports everything a second time (its 0.3
    cpu-s, on the 200 MB log's critical path: the workers waited for it). One file named alone
    then has its first ranges handed to them at once (``local.start_early``: ``format_name``
    and ``keep_reads`` are the ingest's), the store opened while they parse."""
    paths = list(paths)
    sizes = []
    for p in paths:
        try:
            st = os.stat(p)
        except (OSError, ValueError):
            continue
        if os.path.isfile(p) and not (st.st_size > RANGE and _spark_event_log(p)):
            sizes.append(st.st_size)
    workers = workers_for(sizes)
    if workers < 2:
        return
    if fork and "fork" in multiprocessing.get_all_start_methods():
        from commitsleuth.ingest import local  # what the workers run, imported once, before they fork

        _FORKED[workers] = local.forked_pool(workers)
        if len(paths) == 1:
            local.start_early(_FORKED[workers], paths[0], workers, format_name, keep_reads)
        return
    ctx = context()
    if ctx.get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()
        phases.mark("fork server started")


# The pool ``prestart`` forked, by its number of workers, until the ingest takes it.
_FORKED: dict = {}


def take_forked(workers: int):
    """The pool of ``workers`` processes ``prestart`` forked, or None; the ingest owns it then."""
    return _FORKED.pop(workers, None)


def _spark_event_log(path: str) -> bool:
    """Whether the file is a plain Spark event log by its first bytes. One bigger than a range is
    read in this process (the fast path's SQL threads), never by workers: for it the server would
    only cost its imports (a sixth of the CPU of a 100k-event log's ingest)."""
    try:
        with open(path, "rb") as f:
            return f.read(len(_EVENT_LOG_START)) == _EVENT_LOG_START
    except OSError:
        return False


_EVENT_LOG_START = b'{"Event":"SparkListener'


# glibc's mallopt parameters
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def keep_freed_memory() -> None:
    """glibc's malloc takes blocks up to 32 MiB from its heap and keeps what is freed there, in
    this process and the processes forked from it after. By default each block of 128 KiB and
    more is mapped afresh (one page fault per 4 KiB touched) until frees raise that bound, and
    freed memory goes back to the system: a worker reading a range in 8 MiB blocks, each a new
    mapping, took 13,000 page faults for 53 MB (8,000 with this; 0.01-0.02 cpu-s). For the
    ingest's workers' fork server. Elsewhere (not glibc) nothing changes."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_THRESHOLD, 32 << 20)
    mallopt(_M_TRIM_THRESHOLD, 256 << 20)


class _NoPandas:
    """An import finder that says pandas is not there."""

    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("pandas is not looked up by pyarrow in this process")
        return None


def arrow_without_pandas() -> None:
    """Keep pyarrow from importing pandas (0.2-0.5 cpu-s, more than a small ingest's work): it
    does so the first time it builds an array from a Python list, only to ask whether the list
    is a pandas object, and commitsleuth never hands it one. pyarrow asks once per process;
    asked here with pandas out of sight, it takes pandas as absent for the rest of the process
    (and its forks); ``import pandas`` itself still works. Only for processes that ingest and
    end: the CLI program and the ingest's workers."""
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    finder = _NoPandas()
    sys.meta_path.insert(0, finder)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(finder)
