"""Reading ahead: the next batch is prepared in a thread while the last one is written.

An event log's batch spends most of its time in DuckDB and Arrow (parsing, mapping, the store's
commit), all of which release the GIL, so on two cores the parse of block n + 1 runs while block
n commits. Order is kept, only ``depth`` batches wait (memory stays bounded), an exception in
the reader is raised in the caller as it was, and whatever ends the caller's loop (an error,
Ctrl-C, a ``break``) stops the reader thread before this generator returns.
"""

from __future__ import annotations

import queue
import threading
from typing import Iterable, Iterator, TypeVar

T = TypeVar("T")
_END = object()


def ahead(items: Iterable[T], depth: int = 1) -> Iterator[T]:
    """``items`` produced in a thread of its own, at most ``depth`` of them ready and waiting."""
    ready: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        source = iter(items)
        try:
            for item in source:
                if not put((item, None)):
                    break
            else:
                put((_END, None))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, raised there
            put((None, exc))
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()  # a generator's own cleanup runs in its thread

    worker = threading.Thread(target=produce, name="commitsleuth-read-ahead", daemon=True)
    worker.start()
    try:
        while True:
            item, exc = ready.get()
            if exc is not None:
                raise exc
            if item is _END:
                return
            yield item
    finally:
        stop.set()
        worker.join()
