"""A store with thousands of real-shaped double commits, fast enough for a test.

The seed-000 task log (two attempts of map task 000005 renaming into one partition) is repeated
for ``partitions * tasks`` (partition, task) pairs into one log file on disk. Parsing 20,000
lines through the real parser takes longer than a test may, so the store is filled by parsing
the seed once and replaying its events for every block with the same substitutions and line
offsets; ``test_report_browser`` checks on a small file that this replay equals what ``ingest``
stores for the same file. ``analyze`` then runs for real.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from commitsleuth.demo import sample_dir
from commitsleuth.forensics.analyze import analyze
from commitsleuth.ingest import ingest
from commitsleuth.model import Event, EVENT_COLUMNS
from commitsleuth.store import Store

SEED_LOG = sample_dir() / "seed000" / "logs" / "task-logs.txt"
SEED_PARTITION, SEED_TASK = "hp_cal_month=2013-04", "000005"


def _pairs(partitions: int, tasks: int):
    for p in range(partitions):
        for t in range(tasks):
            yield f"{SEED_PARTITION}/hp_store={p:05d}", f"{t:06d}"


def _subst(text, part: str, task: str):
    if not isinstance(text, str):
        return text
    return text.replace(SEED_PARTITION, part).replace(SEED_TASK, task)


def write_task_logs(path: Path, partitions: int, tasks: int) -> Path:
    """The seed log, once per (partition, task), blocks separated by a blank line."""
    seed = SEED_LOG.read_text(encoding="utf-8").rstrip("\n") + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for part, task in _pairs(partitions, tasks):
            out.write(_subst(seed, part, task) + "\n")
    return path


def seed_events() -> list[Event]:
    """The events the real parser makes of the seed log."""
    with tempfile.TemporaryDirectory() as tmp:
        with Store(Path(tmp) / "seed.duckdb") as store:
            ingest(store, [str(SEED_LOG)])
            cols = [c for c in EVENT_COLUMNS if c != "event_id"]
            rows = store.con.execute(f"SELECT {', '.join(cols)} FROM events ORDER BY event_id").fetchall()
    return [Event(**dict(zip(cols, r))) for r in rows]


def many_findings_store(db_path: Path, logs_dir: Path, partitions: int, tasks: int) -> Store:
    """An open store holding the replayed log and the findings ``analyze`` stored for it."""
    log = write_task_logs(logs_dir / "task-logs.txt", partitions, tasks)
    template = [  # each seed event with the names of its fields that hold the partition or task
        (ev, [f.name for f in dataclasses.fields(ev)
              if isinstance(getattr(ev, f.name), str) and _subst(getattr(ev, f.name), "p", "t") != getattr(ev, f.name)])
        for ev in seed_events()
    ]
    seed = SEED_LOG.read_text(encoding="utf-8").rstrip("\n") + "\n"
    store = Store(db_path)
    source_id = store.add_source(str(log.resolve()), "file", format="mr1-task-stdout", status="ok",
                                 size_bytes=log.stat().st_size, bytes_read=log.stat().st_size)
    events, line, offset = [], 0, 0
    for part, task in _pairs(partitions, tasks):
        block = _subst(seed, part, task) + "\n"
        starts = [0]
        for text in block.splitlines(keepends=True):
            starts.append(starts[-1] + len(text.encode("utf-8")))
        for ev, varying in template:
            events.append(dataclasses.replace(
                ev, source_id=source_id, line_no=ev.line_no + line, byte_offset=starts[ev.line_no - 1] + offset,
                **{name: _subst(getattr(ev, name), part, task) for name in varying}))
        line += block.count("\n")
        offset += len(block.encode("utf-8"))
    store.write_events(events)
    store.update_source(source_id, lines=line, events=len(events), rejected=0)
    analyze(store)
    return store
