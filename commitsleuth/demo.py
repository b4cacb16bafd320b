"""The demo: ingest the shipped sample logs into a fresh store, analyze, show the findings;
then capture a live speculative double write on a loopback Spark cluster into the same store."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from commitsleuth.forensics.analyze import analyze
from commitsleuth.forensics.detectors import Finding
from commitsleuth.ingest import IngestReport, ingest
from commitsleuth.store import Store


def sample_dir() -> Path:
    return Path(str(resources.files("commitsleuth").joinpath("samples")))


def run_demo(db_path: str | Path) -> tuple[Store, IngestReport, list[Finding]]:
    """A fresh store at ``db_path`` holding the samples and their findings (caller closes it)."""
    db_path = Path(db_path)
    for leftover in (db_path, Path(f"{db_path}.wal")):
        if leftover.exists():
            leftover.unlink()
    store = Store(db_path)
    report = ingest(store, [str(p) for p in sorted(sample_dir().glob("*/logs"))])
    findings = analyze(store)
    return store, report, findings


# -- the live part: a real speculative double write, captured as it happens -----------------
LIVE_TIMEOUT = 120.0


@dataclass
class LiveDemo:
    location: str | None = None
    attempts: list[tuple] = field(default_factory=list)  # (attempt label, speculative, status)
    files: list[tuple] = field(default_factory=list)  # (file, partition, label of the attempt that wrote it)
    error: str | None = None


HEARTBEAT = 10.0  # seconds between "the job runs" lines while the Spark driver works


def run_live_demo(db_path: str | Path, workdir: str | Path, progress=None) -> LiveDemo:
    """Start a loopback Spark cluster, run the speculative double write attached to the store.

    Spark runs in its own driver process (commitsleuth.listener.scenarios); every wait is
    bounded and the cluster is stopped whatever happens. Needs Java 17+. ``progress(line)``
    hears each step and, while the driver runs, a line every HEARTBEAT seconds: the JVMs take
    half a minute, which must not pass in silence.
    """
    from commitsleuth.listener.rig import start_rig, stop_rig

    say = progress or (lambda line: None)
    workdir = Path(workdir)
    demo = LiveDemo()
    began = time.monotonic()
    say("  starting the Spark master and two workers (three JVMs) ...")
    try:
        rig = start_rig(workdir)
    except (OSError, RuntimeError, TimeoutError) as exc:
        demo.error = f"could not start a local Spark cluster: {exc}"
        return demo
    say(f"  cluster up after {time.monotonic() - began:.0f} s; starting the driver and its job, "
        "live capture attached ...")
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "commitsleuth.listener.scenarios", rig.master_url, str(workdir),
             str(db_path)],
            env=rig.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            stdout, stderr = _wait_saying(proc, say, began)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            demo.error = f"the live run took longer than {LIVE_TIMEOUT:.0f} s and was stopped"
            return demo
    finally:
        stop_rig(rig)
    say(f"  done after {time.monotonic() - began:.0f} s")
    facts = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not facts:
        last = (stderr.strip().splitlines() or ["no output"])[-1]
        demo.error = f"the Spark driver failed ({proc.returncode}): {last}"
        return demo
    demo.location = facts[0]["location"]
    with Store(db_path, read_only=True) as store:
        # every attempt by its one label (migration 0060), as analyze and the report name it
        demo.attempts = store.con.execute(
            """SELECT l.label, e.speculative, e.status FROM events e
               JOIN attempt_labels l ON l.app_id = e.app_id AND l.attempt_id = e.attempt_id
               WHERE e.kind = 'attempt_end' AND e.task_id IN (
                   SELECT task_id FROM events WHERE kind = 'attempt_start'
                   GROUP BY task_id HAVING count(*) > 1)
               ORDER BY e.task_id, e.attempt_no""").fetchall()
        demo.files = store.con.execute(
            """SELECT e.file_name, e.partition_spec, l.label FROM events e
               LEFT JOIN file_attempts t ON t.event_id = e.event_id AND t.candidates = 1
                    AND t.kind = 'spark_attempt'
               LEFT JOIN spark_task_attempts a ON a.event_id = t.attempt_event
               LEFT JOIN attempt_labels l ON l.app_id = a.app_id AND l.attempt_id = a.label
               WHERE e.kind = 'file' AND e.location = ? ORDER BY e.file_name""",
            [demo.location.rsplit("/", 1)[0]]).fetchall()
    return demo


def _wait_saying(proc: subprocess.Popen, say, began: float) -> tuple[str, str]:
    """The driver's output once it exits, saying every HEARTBEAT seconds that it still runs;
    TimeoutExpired past LIVE_TIMEOUT."""
    deadline = time.monotonic() + LIVE_TIMEOUT
    while True:
        try:
            return proc.communicate(timeout=max(0.0, min(HEARTBEAT, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                raise
            say(f"  ... the job runs ({time.monotonic() - began:.0f} s)")
