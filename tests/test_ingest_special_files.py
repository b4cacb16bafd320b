"""FIFOs, sockets and devices are skipped with a status and never opened; a symlink loop named on
the command line is one Error line, exit 2. Real special files made in a temporary directory."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from test_ingest_text import hive_log, sources  # noqa: E402


def test_fifo_socket_and_device_are_skipped_never_opened(cli, tmp_path, db_path):
    d = tmp_path / "in"
    d.mkdir()
    (d / "hive.log").write_text(hive_log(30))
    os.mkfifo(d / "pipe.log")  # opening it for reading would block forever: no writer
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(d / "listener.sock"))
    os.symlink("/dev/zero", d / "zero.log")  # reading it would never end
    try:
        r = cli("ingest", d, "--db", db_path)
        named = cli("ingest", d / "pipe.log", "--db", db_path)
    finally:
        sock.close()
    assert r.exit_code == 0, r.err
    assert r.out.splitlines() == [
        "ingested 4 files (1 ok, 3 skipped): 10 events, 0 rejected lines",
        f"  skipped: {d / 'listener.sock'}: a socket, not a regular file: not opened",
        f"  skipped: {d / 'pipe.log'}: a FIFO, not a regular file: not opened",
        f"  skipped: /dev/zero: a character device, not a regular file: not opened",
    ]
    assert named.exit_code == 0 and named.out.splitlines()[1:] == [
        f"  skipped: {d / 'pipe.log'}: a FIFO, not a regular file: not opened"]


def test_a_symlink_loop_is_one_error(cli, tmp_path, db_path):
    loop = tmp_path / "loop.log"
    os.symlink(loop, loop)
    r = cli("ingest", loop, "--db", db_path)
    assert (r.exit_code, r.out, r.err) == (2, "", f"Error: symlink loop: {loop}\n")
