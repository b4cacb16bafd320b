"""The ingest command's start cost: what it imports and when its workers' server starts
(their speed is measured in bench/ingest_text.py, never here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SEED = Path(__file__).resolve().parents[1] / "commitsleuth" / "samples" / "seed000"


def _program(code: str, *args, env: dict | None = None) -> list[str]:
    """Lines ``code`` prints, run as its own Python process (the state checked is per process)."""
    import os

    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                         env={**os.environ, **(env or {})}, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.splitlines()


def test_the_ingest_program_never_imports_pandas(tmp_path):
    """pyarrow would import pandas (0.2-0.5 cpu-s) at the first array it builds from a list."""
    probe = ("import atexit, sys\n"
             "atexit.register(lambda: print('pandas' in sys.modules))\n"
             "from commitsleuth.cli import run\n"
             "sys.argv = ['commitsleuth'] + sys.argv[1:]\n"
             "run()\n")
    lines = _program(probe, "ingest", SEED, "--db", tmp_path / "s.duckdb")
    assert lines[0].startswith("ingested ") and not lines[0].endswith(": 0 events, 0 rejected lines"), lines
    assert lines[-1] == "False"


def test_pandas_still_imports_and_arrow_still_builds_tables_after():
    probe = ("import sys\n"
             "from commitsleuth.ingest.pool import arrow_without_pandas\n"
             "arrow_without_pandas()\n"
             "import pyarrow as pa\n"
             "t = pa.table({'x': ['a', None], 'n': [1, 2]})\n"
             "print('pandas' in sys.modules, t.column('x').to_pylist(), t.column('n').to_pylist())\n"
             "import pandas\n"
             "print(pandas.__name__)\n")
    assert _program(probe) == ["False ['a', None] [1, 2]", "pandas"]


def _children_after_prestart(path: Path, parallel_min: int, range_bytes: int = 64 << 20) -> int:
    probe = ("import os, sys\n"
             "from commitsleuth.ingest import pool\n"
             "pool.prestart([sys.argv[1], sys.argv[1] + '.missing'])\n"
             "pid = os.getpid()\n"
             "print(len(open(f'/proc/{pid}/task/{pid}/children').read().split()))\n")
    return int(_program(probe, path, env={"COMMITSLEUTH_PARALLEL_MIN": str(parallel_min),
                                          "COMMITSLEUTH_RANGE": str(range_bytes)})[-1])


def test_workers_server_starts_before_the_store_opens_only_for_a_file_that_needs_workers(tmp_path):
    log = tmp_path / "big.log"
    log.write_bytes(b"x\n" * 5000)
    assert _children_after_prestart(log, 1000) > 0  # the fork server (and its resource tracker)
    assert _children_after_prestart(log, 1 << 30) == 0
    assert _children_after_prestart(tmp_path, 1000) == 0  # a directory is not looked into


def test_no_workers_server_for_a_spark_event_log_read_in_this_process(tmp_path):
    """A plain event log bigger than a range is read here (eventlog_fast), never by workers; one
    that fits a range is handed to a worker whole, and a text log of the same size in ranges."""
    line = b'{"Event":"SparkListenerTaskEnd","Stage ID":0}\n'
    log = tmp_path / "app-1"
    log.write_bytes(b'{"Event":"SparkListenerLogStart","Spark Version":"3.5.0"}\n' + line * 2000)
    assert _children_after_prestart(log, 1000, range_bytes=10_000) == 0
    assert _children_after_prestart(log, 1000, range_bytes=1 << 20) > 0
    text = tmp_path / "hive.log"
    text.write_bytes(b"2018-09-28T10:14:57,310 INFO [main] ql.Driver: x\n" * 2000)
    assert _children_after_prestart(text, 1000, range_bytes=10_000) > 0


def _forked_by_prestart(path: Path, parallel_min: int) -> list[str]:
    """What ``prestart(fork=True)`` (the CLI program's) leaves: its children, how many run this
    very program (forked, not exec'd: no fork server), duckdb imported or not, the pool taken."""
    probe = ("import os, sys\n"
             "from commitsleuth.ingest import pool\n"
             "pool.prestart([sys.argv[1]], fork=True)\n"
             "pid = os.getpid()\n"
             "kids = open(f'/proc/{pid}/task/{pid}/children').read().split()\n"
             "me = open(f'/proc/{pid}/cmdline', 'rb').read()\n"
             "print(len(kids), sum(open(f'/proc/{k}/cmdline', 'rb').read() == me for k in kids))\n"
             "print('duckdb' in sys.modules)\n"
             "taken = pool.take_forked(2)\n"
             "print(taken is not None, pool.take_forked(2))\n"
             "if taken is not None:\n"
             "    print(taken.submit(sum, [1, 2]).result(timeout=60))\n"
             "    taken.shutdown()\n")
    return _program(probe, path, env={"COMMITSLEUTH_PARALLEL_MIN": str(parallel_min), "COMMITSLEUTH_WORKERS": "2"})


def test_the_program_forks_its_workers_itself_before_it_opens_a_store(tmp_path):
    """No fork server importing everything again: the workers are the program's own forks, made
    before any store (no DuckDB thread to copy), and the ingest takes that pool once."""
    log = tmp_path / "big.log"
    log.write_bytes(b"x\n" * 5000)
    assert _forked_by_prestart(log, 1000) == ["2 2", "False", "True None", "3"]
    assert _forked_by_prestart(log, 1 << 30) == ["0 0", "False", "False None"]
    assert _forked_by_prestart(tmp_path, 1000) == ["0 0", "False", "False None"]  # a directory: not looked into


def _ending(*args) -> tuple[int, str, str]:
    """The program run on ``args``: exit code, stdout, stderr; stderr says whether the exit
    handlers ran and whether the interpreter tore down ``__main__`` (an object's ``__del__``)."""
    import os

    probe = ("import atexit, sys\n"
             "class Torn:\n"
             "    def __del__(self):\n"
             "        sys.stderr.write('torn down\\n')\n"
             "kept = Torn()\n"
             "atexit.register(lambda: sys.stderr.write('exit handlers ran\\n'))\n"
             "from commitsleuth.cli import run\n"
             "sys.argv = ['commitsleuth', *sys.argv[1:]]\n"
             "run()\n")
    out = subprocess.run([sys.executable, "-c", probe, *map(str, args)], capture_output=True, text=True,
                         env={**os.environ, "COMMITSLEUTH_WORKERS": "1"}, timeout=300)
    return out.returncode, out.stdout, out.stderr


def test_an_ingest_program_ends_without_the_interpreters_teardown_once_its_store_is_closed(tmp_path):
    log = tmp_path / "hive.log"
    log.write_text("2018-09-28T10:14:57,310 INFO [main] exec.Task: Loading data to table db.t from "
                   "hdfs://nn/w/db.db/t/.hive-staging_hive_1/-ext-10000\n")
    code, out, err = _ending("ingest", log, "--db", tmp_path / "s.duckdb")
    assert code == 0 and out == "ingested 1 file (1 ok): 1 events, 0 rejected lines\n", err
    assert err.splitlines() == ["exit handlers ran"]
    # its negative twin: an ingest that failed before its store (a missing file) ends as any program
    code, out, err = _ending("ingest", tmp_path / "missing.log", "--db", tmp_path / "t.duckdb")
    assert code == 2 and "Error: no such file or directory" in err
    assert err.splitlines()[-2:] == ["exit handlers ran", "torn down"]


def test_phases_print_the_timeline_of_every_process_only_when_asked(tmp_path):
    """COMMITSLEUTH_PHASES=1 (bench/ingest_text.py --phases): the command's steps and each
    worker's range, with their process and cpu seconds; nothing of it otherwise."""
    import os

    log = tmp_path / "hive.log"
    log.write_bytes(b"2018-09-28T10:14:57,310 INFO [main] exec.Task: Loading data to table db.t from "
                    b"hdfs://nn/w/db.db/t/.hive-staging_hive_1/-ext-10000\n" * 20_000)
    cli = str(Path(sys.executable).with_name("commitsleuth"))
    env = {**os.environ, "COMMITSLEUTH_WORKERS": "2", "COMMITSLEUTH_PARALLEL_MIN": "1000"}
    for asked in ("1", ""):
        out = subprocess.run([cli, "ingest", str(log), "--db", str(tmp_path / f"s{asked}.duckdb")], capture_output=True,
                             text=True, env={**env, "COMMITSLEUTH_PHASES": asked}, timeout=300)
        assert out.returncode == 0, out.stderr
        marks = [line.split(" ", 4) for line in out.stderr.splitlines() if line.startswith("phase ")]
        if not asked:
            assert out.stderr == ""
            continue
        steps = [m[4] for m in marks]
        assert steps[0] == "command entered" and steps[-1] == "store closed"
        assert {"store opening", "store open: ingest begins", "ingest ends"} <= set(steps)
        ranges = [m for m in marks if m[4].startswith("worker: range")]
        assert len(ranges) == 4  # two ranges, each begun and done, in the workers' processes
        assert marks[0][2] not in {m[2] for m in ranges}
        assert all(float(m[1]) > 1e9 and float(m[3]) >= 0 for m in marks)


def test_a_big_file_is_cut_into_ranges_every_worker_gets_as_many_of():
    from commitsleuth.ingest.pool import ranges_for

    mb = 1 << 20
    assert ranges_for(212 * mb, 2, 64 * mb) == 4  # not 64, 64, 64, 20: one worker idle at the end
    assert ranges_for(130 * mb, 2, 64 * mb) == 4
    assert ranges_for(1024 * mb, 4, 64 * mb) == 16
    assert ranges_for(10 * mb, 1, 64 * mb) == 1 and ranges_for(200 * mb, 1, 64 * mb) == 4
    assert ranges_for(10 * mb, 3, 64 * mb) == 3


def test_the_cli_and_the_workers_server_import_no_duckdb_before_a_store_is_opened():
    """The workers' fork server starts once the CLI is imported, and parses text without duckdb
    (0.05-0.1 cpu-s of import): neither imports it before a store is opened."""
    probe = ("import sys\n"
             "import commitsleuth.cli\n"
             "print('duckdb' in sys.modules)\n"
             "import commitsleuth.ingest.worker_preload\n"
             "print('duckdb' in sys.modules)\n"
             "from commitsleuth.store import Store\n"
             "with Store(':memory:') as s:\n"
             "    print('duckdb' in sys.modules, s.count('events'))\n")
    assert _program(probe) == ["False", "False", "True 0"]


def test_what_the_workers_inherit_from_their_server_is_never_collected():
    """Frozen in the server: a collection in a worker then never walks (and copies on write) the
    pages of the server's objects; the collector itself runs as usual."""
    probe = ("import gc\n"
             "import commitsleuth.ingest.worker_preload\n"
             "print(gc.isenabled(), gc.get_freeze_count() > 10000)\n")
    assert _program(probe) == ["True True"]


def test_a_new_store_closed_holding_a_source_is_kept_without_opening_it_again(tmp_path, monkeypatch):
    """At the ingest's end the new store is known filled from its own connection: no second
    DuckDB instance (0.02 cpu-s) opens it to count its sources. One left without a source is
    still looked at, and removed."""
    from commitsleuth import store
    from commitsleuth.store import Store, removed_unless_filled

    looked = []
    real = store.holds_no_source
    monkeypatch.setattr(store, "holds_no_source", lambda path: looked.append(path) or real(path))
    filled, empty = tmp_path / "filled.duckdb", tmp_path / "empty.duckdb"
    with removed_unless_filled(str(filled)), Store(filled) as s:
        s.add_source(str(tmp_path / "x.log"), "file", format="hive-log4j2")
    assert filled.exists() and looked == []
    with removed_unless_filled(str(empty)), Store(empty):
        pass
    assert looked == [str(empty)] and not empty.exists()
    filled.unlink()  # the same name again, left empty this time: removed
    with removed_unless_filled(str(filled)), Store(filled):
        pass
    assert looked == [str(empty), str(filled)] and not filled.exists()


def _wal_before_close(log: Path, db: Path, workers: int) -> list[str]:
    probe = ("import os, sys\n"
             "from commitsleuth.store import Store\n"
             "from commitsleuth.ingest import ingest\n"
             "with Store(sys.argv[2]) as s:\n"
             "    report = ingest(s, [sys.argv[1]])\n"
             "    wal = sys.argv[2] + '.wal'\n"
             "    print(report.events, os.path.getsize(wal) if os.path.exists(wal) else 0)\n"
             "print(os.path.exists(sys.argv[2] + '.wal'))\n")
    return _program(probe, log, db, env={"COMMITSLEUTH_WORKERS": str(workers), "COMMITSLEUTH_PARALLEL_MIN": str(1 << 20),
                                         "COMMITSLEUTH_RANGE": str(256 << 10)})


def test_a_file_read_in_ranges_commits_its_rows_as_a_checkpoint(tmp_path):
    """Its rows are compressed into the store's file by its last commit, not written into the
    write-ahead log first and again by the closing checkpoint (the command's last work). A file
    read here, not in ranges, still commits into the log."""
    sys.path.insert(0, str(Path(__file__).parent))
    from test_ingest_text import hive_log

    log = tmp_path / "hive.log"
    log.write_text(hive_log(12_000))
    assert log.stat().st_size > 1 << 20
    ranged = _wal_before_close(log, tmp_path / "ranged.duckdb", 2)
    here = _wal_before_close(log, tmp_path / "here.duckdb", 1)
    events = ranged[0].split()[0]
    assert int(events) == 4000 and here[0].split()[0] == events
    assert int(ranged[0].split()[1]) < 64 << 10, ranged  # at most a sources row's commit
    assert int(here[0].split()[1]) > 256 << 10, here  # the 4,000 events' rows
    assert ranged[1] == here[1] == "False"


def _faults_of_a_second_8_mib_block(preload: bool) -> int:
    probe = ("import resource, sys\n"
             + ("import commitsleuth.ingest.worker_preload\n" if preload else "")
             + "block = b'x' * (8 << 20)\n"
             "del block\n"
             "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
             "block = b'x' * (8 << 20)\n"
             "print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)\n")
    return int(_program(probe)[-1])


def test_the_workers_server_keeps_freed_blocks_for_the_next(tmp_path):
    """A worker reads a range in 8 MiB blocks: each one again in memory already touched, not a
    new mapping faulting page by page (2,048 faults each). glibc only (a Linux box's libc)."""
    assert _faults_of_a_second_8_mib_block(preload=False) > 1500
    assert _faults_of_a_second_8_mib_block(preload=True) < 200
