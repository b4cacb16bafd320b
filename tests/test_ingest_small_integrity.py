"""Issue 34's smaller ingest points, each with its negative twin: a UTF-8 byte order mark is no
part of the first record; a file name that is not UTF-8 is ingested (kept as bytes, shown
readable) and `timeline` shows it; an unreadable subdirectory is one Error line, exit 2, the rest
ingested; files never read (a FIFO, the store's own file in the ingested directory) are one
sources row, not one per run; an interrupted compressed read never compares its decompressed
bytes with the file's size. Logs from the Hive fixture lines of test_ingest_text."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_ingest_text import hive_log, rows  # noqa: E402

from commitsleuth.errors import IngestInterrupted  # noqa: E402

EVENTS = "SELECT line_no, byte_offset, kind, raw FROM events ORDER BY line_no, kind"


@pytest.mark.parametrize("bom", [b"\xef\xbb\xbf", b""], ids=["with a BOM", "without"])
def test_a_byte_order_mark_is_stripped_and_the_first_record_kept(cli, tmp_path, bom):
    log = tmp_path / "hs2.log"
    log.write_bytes(bom + hive_log(30).encode())
    r = cli("ingest", log, "--db", tmp_path / "store.duckdb")
    assert r.exit_code == 0 and r.out.startswith("ingested 1 file (1 ok): 10 events, 0 rejected lines"), r.out
    first = rows(tmp_path / "store.duckdb", "SELECT line_no, byte_offset, raw FROM events ORDER BY line_no LIMIT 1")
    assert first[0][:2] == (1, len(bom))
    assert not first[0][2].startswith("\ufeff")


def test_a_name_that_is_not_utf8_is_ingested_and_shown_readable(cli, tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    odd = os.path.join(os.fsencode(d), b"hs2-\xff.log")
    with open(odd, "w") as f:
        f.write(hive_log(30))
    (d / "plain.log").write_text(hive_log(30, offset=30))
    db = tmp_path / "store.duckdb"
    r = cli("ingest", d, "--db", db)
    assert r.exit_code == 0 and r.out.startswith("ingested 2 files (2 ok): 20 events"), (r.out, r.err)
    assert rows(db, "SELECT uri, uri_bytes FROM sources WHERE uri LIKE '%hs2-%'") == [
        (f"{d}/hs2-\\xff.log", odd)]
    assert rows(db, "SELECT uri_bytes FROM sources WHERE uri LIKE '%plain.log'") == [(None,)]
    assert cli("ingest", d, "--db", db).out.startswith("ingested 2 files (2 unchanged)")
    shown = cli("timeline", "db.t", "--db", db)
    assert shown.exit_code in (0, 1), shown.err
    assert "hs2-\\xff.log" in shown.out


def test_an_unreadable_subdirectory_is_an_error_and_the_rest_is_ingested(tmp_path):
    """As root every directory is readable: the CLI runs without root's capabilities (setpriv)."""
    d = tmp_path / "logs"
    (d / "closed").mkdir(parents=True)
    (d / "open").mkdir()
    (d / "closed" / "hs2.log").write_text(hive_log(30))
    (d / "open" / "hs2.log").write_text(hive_log(30, offset=30))
    (d / "listed").mkdir()  # its names can be read, not its files (no search permission)
    (d / "listed" / "hs2.log").write_text(hive_log(30, offset=60))
    (d / "closed").chmod(0o000)
    (d / "listed").chmod(0o444)
    cli = str(Path(sys.executable).with_name("commitsleuth"))
    env = {k: v for k, v in os.environ.items() if k != "COMMITSLEUTH_DB"}
    try:
        r = subprocess.run(["setpriv", "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all",
                            cli, "ingest", str(d), "--db", str(tmp_path / "store.duckdb")],
                           env=env, capture_output=True, text=True)
    finally:
        (d / "closed").chmod(0o755)
        (d / "listed").chmod(0o755)
    assert r.returncode == 2, r.stderr
    assert r.stdout.startswith("ingested 3 files (1 ok, 2 failed): 10 events"), r.stdout
    assert sorted(r.stderr.splitlines()) == [f"Error: {d / 'closed'}: cannot read the directory: Permission denied",
                                             f"Error: {d / 'listed'}: cannot read the directory: Permission denied"]
    readable = subprocess.run([cli, "ingest", str(d / "open"), "--db", str(tmp_path / "other.duckdb")],
                              env=env, capture_output=True, text=True)
    assert readable.returncode == 0 and not readable.stderr


def test_files_never_read_are_one_row_whatever_the_runs(cli, tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    (d / "hs2.log").write_text(hive_log(30))
    os.mkfifo(d / "pipe.log")
    (d / "empty.log").write_text("")
    (d / "notes.txt").write_text("nothing a grammar knows\n")
    db = d / "commitsleuth.duckdb"  # the store inside the directory it ingests
    for _ in range(3):
        r = cli("ingest", d, "--db", db)
        assert r.exit_code == 0, r.err
    assert f"  skipped: {db}: the store this ingest writes: not read" in r.out.splitlines()
    found = rows(db, "SELECT regexp_extract(uri, '[^/]+$'), status, count(*) FROM sources GROUP BY ALL")
    # the store's write-ahead log is there at some runs, skipped as the store is
    assert sorted(row for row in found if row[0] != "commitsleuth.duckdb.wal") == [
        ("commitsleuth.duckdb", "skipped", 1), ("empty.log", "skipped", 1), ("hs2.log", "ok", 1),
        ("notes.txt", "skipped", 1), ("pipe.log", "skipped", 1)]
    assert all(n == 1 for _, _, n in found)
    # the negative twin: a file whose outcome changed gets a row of its own
    (d / "notes.txt").write_text(hive_log(3))
    assert cli("ingest", d, "--db", db).exit_code == 0
    assert rows(db, "SELECT status FROM sources WHERE uri LIKE '%notes.txt' ORDER BY source_id") == [
        ("skipped",), ("ok",)]


def test_an_interrupted_compressed_read_says_which_bytes_it_counts():
    plain = str(IngestInterrupted("/l/hs2.log", 4096, 5227, 2))
    packed = str(IngestInterrupted("/l/hs2.log.gz", 68246, 5227, 2, decompressed=True))
    assert plain == "interrupted: 4096 of 5227 bytes of /l/hs2.log stored; run the same command to continue"
    assert packed == ("interrupted: 68246 decompressed bytes of /l/hs2.log.gz (a 5227-byte compressed file) "
                      "stored; run the same command to continue")
