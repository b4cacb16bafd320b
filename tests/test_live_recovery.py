"""A SIGKILLed driver's live store, recovered as the README says: ingest its spool, or Spark's own
event log of the application, into the same store. Each Spark event is stored once, whichever
sources hold it and in whatever order they are ingested (docs/schema.md "One Spark event, one
row"). Real PySpark driver process (tests/live_driver.py recover), real DuckDB files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import kill_driver

from commitsleuth.store import Store, open_waiting

DRIVER = Path(__file__).with_name("live_driver.py")
ATTEMPT_KINDS = ("attempt_start", "attempt_end")


def identities(db: Path) -> Counter:
    """Multiset of (app_id, event_key) of the stored Spark events."""
    with Store(db, read_only=True) as store:
        rows = store.con.execute("SELECT app_id, event_key FROM events WHERE event_key IS NOT NULL").fetchall()
    return Counter(rows)


def attempt_facts(db: Path) -> Counter:
    """Multiset of (kind, attempt, task) of the stored task-attempt events."""
    with Store(db, read_only=True) as store:
        rows = store.con.execute("SELECT kind, attempt_id, task_id FROM events WHERE kind IN ? ",
                                 [list(ATTEMPT_KINDS)]).fetchall()
    return Counter(rows)


def copy_store(src: Path, dst_dir: Path) -> Path:
    dst_dir.mkdir()
    for f in src.parent.glob(src.name + "*"):
        if f.is_file():
            shutil.copy(f, dst_dir / f.name)
    return dst_dir / src.name


def stored_at_least(db: Path, n: int, within: float = 60) -> None:
    """Wait until the live store holds ``n`` Spark events (read between the capture's loads)."""
    deadline = time.monotonic() + within
    while True:
        held = 0
        if db.exists():  # the capture creates it at its first load
            with open_waiting(db, read_only=True, wait=30) as store:
                held = store.con.execute("SELECT count(*) FROM events WHERE event_key IS NOT NULL").fetchone()[0]
        if held >= n or time.monotonic() > deadline:
            return
        time.sleep(0.2)


@pytest.fixture(scope="module")
def killed(tmp_path_factory):
    """A driver capturing live and writing Spark's own event log, SIGKILLed mid-job after a few
    seconds in which another process held the store (so its spool holds events the store lacks)."""
    work = tmp_path_factory.mktemp("recover")
    db, eventlog = work / "live.duckdb", work / "eventlog"
    eventlog.mkdir()
    proc = subprocess.Popen([sys.executable, str(DRIVER), "recover", str(db), str(eventlog)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    jobs, holder = [], None
    try:
        deadline = time.monotonic() + 240
        for line in proc.stdout:
            fact = json.loads(line)
            if "job" in fact:
                jobs.append(fact["job"])
            # after three jobs: the capture has loaded some of them
            if len(jobs) == 3 and holder is None:
                stored_at_least(db, 150)  # some are in the store
                holder = open_waiting(db, wait=60)  # live batches now wait in the spool
                held_at = time.monotonic()
            if holder is not None and time.monotonic() - held_at > 3 and len(jobs) >= 5:
                break
            if time.monotonic() > deadline:
                break
    finally:
        kill_driver(proc)  # mid-job
        if holder is not None:
            holder.close()
    assert len(jobs) >= 5, "the driver ran its jobs"
    spool = Path(f"{db}.spool")
    assert list(spool.rglob("*.inprogress")), "the killed capture left its spool"
    # What each recovery source holds on its own, each ingested into a fresh store.
    alone = {}
    for name, path in (("spool", spool), ("eventlog", eventlog)):
        fresh = work / f"{name}-alone.duckdb"
        proc = subprocess.run([str(Path(sys.executable).with_name("commitsleuth")), "ingest", "--db",
                               str(fresh), str(path)], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        alone[name] = fresh
    return {"db": db, "spool_dir": spool, "log_dir": eventlog, **alone}


def ingest_line(added: int, known: int, alone: Path) -> str:
    """The line `ingest` prints; its rejected lines (a line cut by the kill) as when read alone."""
    with Store(alone, read_only=True) as store:
        rejected = store.con.execute("SELECT sum(rejected) FROM sources").fetchone()[0]
    tail = f", {known} events already in the store" if known else ""
    return f"ingested 1 file (1 ok): {added} events, {rejected} rejected lines{tail}"


def assert_once(db: Path, *parts: Path) -> None:
    """Every Spark event and every attempt fact once, and every one any part holds."""
    keys, facts = identities(db), attempt_facts(db)
    assert keys and max(keys.values()) == 1, [k for k, n in keys.items() if n > 1][:5]
    assert facts and max(facts.values()) == 1, [f for f, n in facts.items() if n > 1][:5]
    assert set(keys) == set().union(*(identities(p) for p in parts))
    assert set(facts) == set().union(*(attempt_facts(p) for p in parts))


def test_ingesting_the_spool_of_a_killed_driver_adds_only_what_live_capture_missed(killed, tmp_path, cli):
    db = copy_store(killed["db"], tmp_path / "store")
    live, spool = identities(db), identities(killed["spool"])
    assert max(live.values()) == 1
    missed = set(spool) - set(live)
    assert missed, "the store was held while jobs ran: the spool has events the live store lacks"

    res = cli("ingest", "--db", db, killed["spool_dir"])
    assert (res.exit_code, res.out.strip()) == (0, ingest_line(len(missed), len(set(spool) & set(live)), killed["spool"]))
    assert_once(db, killed["db"], killed["spool"])

    before = identities(db)
    again = cli("ingest", "--db", db, killed["spool_dir"])  # the README's recovery, run twice
    assert again.exit_code == 0 and ": 0 events," in again.out, again.out
    assert identities(db) == before

    # Spark's own event log of the same application: only what neither held.
    logged = identities(killed["eventlog"])
    new = set(logged) - set(live) - set(spool)
    res = cli("ingest", "--db", db, killed["log_dir"])
    assert res.exit_code == 0 and f": {len(new)} events," in res.out, res.out
    assert_once(db, killed["db"], killed["spool"], killed["eventlog"])


def test_spark_event_log_first_then_spool_adds_each_event_once(killed, tmp_path, cli):
    db = copy_store(killed["db"], tmp_path / "store")
    live, logged = identities(db), identities(killed["eventlog"])
    shared = set(live) & set(logged)
    assert len(shared) >= 100, "Spark's own log and live capture name the same events alike"

    res = cli("ingest", "--db", db, killed["log_dir"])
    assert res.exit_code == 0 and f"{len(shared)} events already in the store" in res.out, res.out
    assert_once(db, killed["db"], killed["eventlog"])
    # the start and conf live capture builds itself (it attaches after Spark posted them) meet
    # the ones in Spark's log: one application start, one row per conf key
    with Store(db, read_only=True) as store:
        starts = store.con.execute("SELECT count(*) FROM events WHERE kind = 'app_start'").fetchone()[0]
        confs = store.con.execute("SELECT detail->>'key', count(*) FROM events WHERE kind = 'conf' "
                                  "GROUP BY ALL HAVING count(*) > 1").fetchall()
    assert (starts, confs) == (1, [])

    spool = identities(killed["spool"])
    res = cli("ingest", "--db", db, killed["spool_dir"])
    assert res.out.strip() == ingest_line(len(set(spool) - set(live) - set(logged)),
                                          len(set(spool) & (set(live) | set(logged))), killed["spool"])
    assert_once(db, killed["db"], killed["eventlog"], killed["spool"])
