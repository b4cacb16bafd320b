"""Shared fixtures: a real DuckDB store in a temp dir, the CLI run in-process, the corpus."""

from __future__ import annotations

import os
import signal
import tempfile
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from commitsleuth.cli import main
from commitsleuth.store import Store

REPO = Path(__file__).resolve().parent.parent
# The real corpus lives in the repository (tests/corpus/, each source with its licence and
# provenance), so a lone clone runs the whole suite; COMMITSLEUTH_CORPUS points elsewhere.
CORPUS = Path(os.environ.get("COMMITSLEUTH_CORPUS", REPO / "tests" / "corpus"))
# Every event log any test ingests through the fast path is decoded by the decoder too and
# compared block by block (commitsleuth/ingest/eventlog_fast.py); a difference fails the test.
os.environ.setdefault("COMMITSLEUTH_EVENTLOG_VERIFY", "1")
# ... and every block takes the SQL, however few its lines (small blocks go to the decoder
# alone by default; tests/test_eventlog_fast.py checks that default apart).
os.environ.setdefault("COMMITSLEUTH_EVENTLOG_SQL_MIN_LINES", "0")
# Live capture's lean spool writer is compiled once per test session, into a cache of its own
# (listener/lean_writer.py), not the user's.
os.environ.setdefault("COMMITSLEUTH_CACHE", tempfile.mkdtemp(prefix="commitsleuth-cache-"))


@dataclass
class CliResult:
    exit_code: int
    out: str
    err: str


@pytest.fixture
def db_path(tmp_path) -> Path:
    return tmp_path / "store.duckdb"


@pytest.fixture
def store(db_path):
    with Store(db_path) as s:
        yield s


@pytest.fixture
def cli(capsys, monkeypatch):
    """Run ``commitsleuth ARGS`` in this process; returns exit code, stdout and stderr."""
    monkeypatch.delenv("COMMITSLEUTH_DB", raising=False)

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.fail(f"the corpus is missing at {CORPUS}; set COMMITSLEUTH_CORPUS")
    return CORPUS


def kill_driver(proc) -> None:
    """SIGKILL a Spark driver started with ``start_new_session``: the Python process, mid-job,
    then its JVM (in the process group the driver leads)."""
    for kill in (os.kill, os.killpg):
        try:
            kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if kill is os.kill:
            proc.wait(timeout=30)


def write_files(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def spark():
    """One real local PySpark session shared by the whole test session (costs seconds once)."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers import this commitsleuth
    session = (
        SparkSession.builder.master("local[2]")
        .appName("commitsleuth-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        # Tungsten pages of 1 MB, not the default heap/cores/16 (16 MB at 1 GB, 32 MB at 2 GB):
        # each broadcast hash relation takes at least one page, and the equivalence test's analyze
        # broadcasts the small kept views into every join that reads them. With the default pages
        # the driver ran out of heap on 3,160 events ("Not enough memory to build and broadcast
        # the table", CS107 at 2 GB, CS103 at 1 GB with two sessions); with 1 MB pages the same
        # store peaks at about 1 GB of old generation (jstat).
        .config("spark.buffer.pageSize", "1m")
        .config("spark.driver.memory", "2g")
        .config("spark.driver.host", "127.0.0.1")
        # Spark's own event log, for the live-vs-log test (test_live_vs_eventlog.py)
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", tempfile.mkdtemp(prefix="commitsleuth-eventlog-"))
        .getOrCreate()
    )
    yield session
    session.stop()


@pytest.fixture(scope="session")
def spark_rig(tmp_path_factory):
    """A Spark standalone master and two workers on 127.0.0.2 / 127.0.0.3 (listener/rig.py)."""
    from commitsleuth.listener.rig import start_rig, stop_rig

    rig = start_rig(tmp_path_factory.mktemp("spark-rig"))
    try:
        yield rig
    finally:
        stop_rig(rig)


# Started first, in this order (`make test`'s two workers take files as collected, --dist loadfile):
# - the two files that ingest the shared session's own event log, still being written: after the
#   equivalence's thousands of stages in that session both read it as partial (CI on dde18bb);
# - the files that take longest (minutes each, --durations): one begun last runs on alone at the end.
READ_THE_SESSION_LOG = ("test_live_vs_eventlog.py", "test_live_lean_spool.py")
LONGEST = ("test_spark_equivalence.py", "test_spark_rig_analyze.py", "test_live_rig.py", "test_spark_analyze.py",
           "test_timeline_keys.py", "test_ingest_many.py")


def pytest_collection_modifyitems(items):
    rank = {name: n for n, name in enumerate(READ_THE_SESSION_LOG + LONGEST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest as collected
