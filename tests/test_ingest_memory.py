"""Memory stays under 1 GB whatever a file holds: a log with a 2 GB run of NUL bytes between its
lines, plain (one process and the worker path) and compressed (.gz, and .zst, whose NULs
compress about 30,000:1). The run is one line far over the 1 MiB limit: it is counted and
skipped a chunk at a time, never held whole.

The plain file is sparse (a 2 GB hole reads as NULs), so it takes no disk; the compressed ones
are a few MB. The CLI runs as a subprocess; its peak is the largest resident size of it and
every worker it waited for (``wait4``), and the sum over the process tree sampled every 50 ms.
The log lines are generated from the Hive fixture lines of test_ingest_text (exact source
strings, not a real log).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_ingest_text import hive_log, rows  # noqa: E402

CLI = str(Path(sys.executable).with_name("commitsleuth"))
RUN = 2 << 30  # bytes of NUL
LIMIT_KIB = 1 << 20  # 1 GiB
BEFORE, AFTER = hive_log(300).encode(), hive_log(300, 300).encode()
EVENTS = "SELECT kind, raw FROM events ORDER BY kind, raw"


def write_plain(path: Path) -> None:
    with open(path, "wb") as f:
        f.write(BEFORE)
        f.seek(len(BEFORE) + RUN)  # a hole: the file reads as NULs there
        f.write(b"\n" + AFTER)


def write_gzip(path: Path) -> None:
    """One gzip member; the NUL part is one deflate piece repeated (a full flush makes pieces
    that do not refer back), so 2 GB is never compressed here."""
    piece_len = 16 << 20
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = co.compress(BEFORE) + co.flush(zlib.Z_FULL_FLUSH)
    piece = co.compress(bytes(piece_len)) + co.flush(zlib.Z_FULL_FLUSH)
    tail = co.compress(b"\n" + AFTER) + co.flush()
    crc = zlib.crc32(BEFORE)
    zeros = bytes(piece_len)
    for _ in range(RUN // piece_len):
        crc = zlib.crc32(zeros, crc)
    crc = zlib.crc32(b"\n" + AFTER, crc)
    size = len(BEFORE) + RUN + 1 + len(AFTER)
    with open(path, "wb") as f:
        f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + head)
        for _ in range(RUN // piece_len):
            f.write(piece)
        f.write(tail + crc.to_bytes(4, "little") + (size & 0xFFFFFFFF).to_bytes(4, "little"))


def write_zstd(path: Path) -> None:
    import zstandard

    co = zstandard.ZstdCompressor(level=1).compressobj()
    zeros = bytes(16 << 20)
    with open(path, "wb") as f:
        f.write(co.compress(BEFORE))
        for _ in range(RUN // len(zeros)):
            f.write(co.compress(zeros))
        f.write(co.compress(b"\n" + AFTER) + co.flush())


def _tree_rss_kib(pid: int) -> int:
    """Resident KiB of ``pid`` and every process under it, from /proc."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            total = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                total += sum(_tree_rss_kib(int(child)) for child in f.read().split())
    except (OSError, ValueError):
        return 0  # ended meanwhile
    return total


def ingest_measured(log: Path, db: Path, env: dict) -> tuple[int, str, str, int, int]:
    """(exit code, stdout, stderr, peak KiB of the largest process, peak KiB of the tree)."""
    # Started by a small launcher that reaps it and writes its ru_maxrss: a process started straight
    # from pytest inherits pytest's own peak resident size as its ru_maxrss (the kernel records the
    # old memory's high-water mark at exec, and the vfork child's old memory is pytest's, over 1 GiB
    # late in a whole run), so the figure would be pytest's, not the ingest's.
    maxrss = db.with_suffix(".maxrss")
    proc = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(maxrss), CLI, "ingest", str(log), "--db", str(db)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    tree_peak, done = 0, threading.Event()

    def sample():
        nonlocal tree_peak
        while not done.is_set():
            tree_peak = max(tree_peak, _tree_rss_kib(proc.pid))
            if tree_peak > LIMIT_KIB:
                os.killpg(proc.pid, signal.SIGKILL)  # over the limit already: the launcher and the ingest
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.wait()
    done.set()
    sampler.join()
    peak = int(maxrss.read_text()) if maxrss.exists() else tree_peak  # killed over the limit: no figure
    return proc.returncode, out, err, peak, tree_peak


# argv: the file for the peak, then the command. ru_maxrss from wait4: the ingest and the workers
# it reaped; the launcher's own few MiB are not in it.
_LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


@pytest.fixture(scope="module")
def clean_events(tmp_path_factory):
    """The events of the same lines with no NUL run between them."""
    tmp = tmp_path_factory.mktemp("clean")
    (tmp / "clean.log").write_bytes(BEFORE + AFTER)
    db = tmp / "clean.duckdb"
    run = subprocess.run([CLI, "ingest", str(tmp / "clean.log"), "--db", str(db)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return rows(db, EVENTS)


@pytest.mark.parametrize("kind,workers", [("plain", False), ("plain", True), ("gz", False), ("zst", False),
                                          ("zst", True)])
def test_a_2gb_nul_run_keeps_memory_under_1gb_and_the_lines_around_it(tmp_path, clean_events, kind, workers):
    log = tmp_path / {"plain": "hive.log", "gz": "hive.log.gz", "zst": "hive.log.zst"}[kind]
    {"plain": write_plain, "gz": write_gzip, "zst": write_zstd}[kind](log)
    env = {**os.environ, "COMMITSLEUTH_PARALLEL_MIN": str(1 << 10 if workers else 1 << 40)}
    env.pop("COMMITSLEUTH_DB", None)
    db = tmp_path / "store.duckdb"

    code, out, err, peak, tree_peak = ingest_measured(log, db, env)

    print(f"{kind}{' workers' if workers else ''}: peak {peak >> 10} MiB, tree {tree_peak >> 10} MiB")
    assert peak <= LIMIT_KIB and tree_peak <= LIMIT_KIB, (peak, tree_peak)
    assert code == 0, err
    assert rows(db, EVENTS) == clean_events  # the lines before and after the run
    (status, reason, rejected), = rows(db, "SELECT status, reason, rejected FROM sources")
    assert status == "partial" and "\n" not in reason, reason
    assert reason == "1 line of binary data rejected (from line 421); 1 line longer than 1 MiB cut to 1 MiB"
    assert rows(db, "SELECT reason, count, first_line FROM rejects") == [("binary data (NUL bytes)", 1, 421)]
    assert rejected == 1
    assert f"partial: {log}: {reason}" in out
