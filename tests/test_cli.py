"""The CLI in-process: exact messages, exit codes, and the seed-000 case through every layer."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb

from commitsleuth.demo import sample_dir

SEED = sample_dir() / "seed000" / "logs"
A0 = "attempt_201304111550_268224_m_000005_0"
A1 = "attempt_201304111550_268234_m_000005_1"


def test_demo_prints_the_double_commit_with_evidence(cli, tmp_path):
    r = cli("demo", "--db", tmp_path / "demo.duckdb", "--no-live")  # live part: test_live_demo.py
    assert r.exit_code == 0, r.err
    assert "CS101 double-commit [high] - 1 finding" in r.out
    assert "  hp_cal_month=2013-04 in hdfs://10.2.6.102/tmp/hive-deploy/" in r.out
    assert f"task 000005 published by 2 attempts into hp_cal_month=2013-04: {A0}, {A1}" in r.out
    assert f"{SEED / 'task-logs.txt'}:2" in r.out
    assert f"{SEED / 'task-logs.txt'}:5" in r.out
    assert "remedy: disable speculative execution" in r.out
    report = (tmp_path / "demo.html").resolve()
    assert r.out.endswith(f"\nReport: {report} (open it in a browser)\n")
    assert A0 in report.read_text() and A1 in report.read_text()


def test_ingest_analyze_exit_codes(cli, db_path):
    r = cli("ingest", SEED, "--db", db_path)
    assert (r.exit_code, r.out, r.err) == (0, "ingested 1 file (1 ok): 2 events, 0 rejected lines\n", "")
    r = cli("analyze", "--db", db_path)
    assert r.exit_code == 1
    assert r.out.endswith("1 finding (1 high).\n")
    r = cli("analyze", "--db", db_path, "--fail-on", "critical")
    assert r.exit_code == 0
    r = cli("analyze", "--db", db_path, "--format", "json")
    data = json.loads(r.out)
    assert [f["code"] for f in data] == ["CS101"]
    assert data[0]["actors"] == [A0, A1]
    assert [e["where"] for e in data[0]["evidence"]] == [
        f"{SEED / 'task-logs.txt'}:2",
        f"{SEED / 'task-logs.txt'}:5",
    ]


def test_reingest_adds_nothing(cli, db_path):
    cli("ingest", SEED, "--db", db_path)
    r = cli("ingest", SEED, "--db", db_path)
    assert r.out == "ingested 1 file (1 unchanged): 0 events, 0 rejected lines\n"
    assert duckdb.connect(str(db_path)).execute("select count(*) from events").fetchone()[0] == 2


def test_env_var_selects_the_store(cli, tmp_path, monkeypatch):
    target = tmp_path / "from-env.duckdb"
    monkeypatch.setenv("COMMITSLEUTH_DB", str(target))
    r = cli("ingest", SEED)
    assert r.exit_code == 0
    assert target.exists()


def test_unknown_subcommand(cli):
    r = cli("injest", "x")
    assert (r.exit_code, r.out) == (2, "")
    assert r.err == "Error: No such command 'injest'. Did you mean 'ingest'? (see 'commitsleuth --help')\n"


def test_missing_path(cli, db_path):
    r = cli("ingest", "/no/such/dir", "--db", db_path)
    assert (r.exit_code, r.out, r.err) == (2, "", "Error: no such file or directory: /no/such/dir\n")


def test_unknown_format_suggests(cli, db_path):
    r = cli("ingest", SEED, "--format", "hive-log4j", "--db", db_path)
    assert r.exit_code == 2
    assert r.err.startswith("Error: unknown format 'hive-log4j'; did you mean 'hive-log4j2' or 'hive-log4j1'?")
    assert r.err.count("\n") == 1


def test_unreadable_file_real(cli, tmp_path, db_path):
    """A file whose bytes cannot be read (Linux /proc/self/mem fails at offset 0 for root too)."""
    bad = tmp_path / "task.log"
    bad.symlink_to("/proc/self/mem")
    good = tmp_path / "other" / "task-logs.txt"
    good.parent.mkdir()
    good.write_text((SEED / "task-logs.txt").read_text())
    r = cli("ingest", bad, good.parent, "--db", db_path)
    assert r.exit_code == 2
    assert r.err == f"Error: {bad.resolve()}: cannot read: Input/output error\n"
    assert r.out == "ingested 2 files (1 ok, 1 failed): 2 events, 0 rejected lines\n"
    rows = duckdb.connect(str(db_path), read_only=True).execute(
        "select status, reason from sources order by source_id").fetchall()
    assert rows == [("failed", "cannot read: Input/output error"), ("ok", None)]


def test_permission_denied(cli, tmp_path, db_path, monkeypatch):
    """chmod 000 does not stop root (CI runs as root), so the denial itself is faked here."""
    secret = tmp_path / "hive.log"
    secret.write_text("x\n")
    secret.chmod(0o000)
    if os.geteuid() == 0:
        import commitsleuth.ingest.local as ingest_mod

        real = ingest_mod.fingerprint

        def deny(path, *a, **kw):
            if Path(path) == secret.resolve():
                raise PermissionError(13, "Permission denied", str(path))
            return real(path, *a, **kw)

        monkeypatch.setattr(ingest_mod, "fingerprint", deny)
    r = cli("ingest", secret, "--db", db_path)
    assert (r.exit_code, r.err) == (2, f"Error: {secret.resolve()}: cannot read: Permission denied\n")


def test_query_named_and_raw_sql(cli, db_path):
    cli("ingest", SEED, "--db", db_path)
    cli("analyze", "--db", db_path)
    r = cli("query", "findings_summary", "--db", db_path, "--format", "csv")
    assert (r.exit_code, r.out) == (0, "code,name,severity,findings,partitions\nCS101,double-commit,high,1,1\n")
    r = cli("query", "select count(*) as n from events", "--db", db_path)
    assert r.out == "n\n-\n2\n(1 row)\n"
    r = cli("query", "double_comits", "--db", db_path)
    assert (r.exit_code, r.err) == (2, "Error: no query named 'double_comits'; did you mean 'double_commits'?\n")
    r = cli("query", "select * from nowhere", "--db", db_path)
    assert r.exit_code == 2 and r.err.startswith("Error: query failed: Catalog Error")


def test_plain_duckdb_reads_the_store(cli, db_path):
    """Another process with only the duckdb module opens the store and reads findings."""
    cli("ingest", SEED, "--db", db_path)
    cli("analyze", "--db", db_path)
    code = (
        "import duckdb,sys; c=duckdb.connect(sys.argv[1], read_only=True);"
        "print(c.execute('select code, partition_spec from findings').fetchall())"
    )
    p = subprocess.run([sys.executable, "-c", code, str(db_path)], capture_output=True, text=True)
    assert p.stdout.strip() == "[('CS101', 'hp_cal_month=2013-04')]", p.stderr


def test_duckdb_shell_reads_the_store(cli, db_path):
    """The plain duckdb shell (the duckdb-cli package, a 1.x release) opens the store."""
    import shutil

    cli("ingest", SEED, "--db", db_path)
    cli("analyze", "--db", db_path)
    shell = shutil.which("duckdb", path=os.path.dirname(sys.executable)) or shutil.which("duckdb")
    assert shell, "the duckdb shell is a test dependency (duckdb-cli)"
    p = subprocess.run(
        [shell, "-readonly", "-csv", str(db_path), "-c", "select code, partition_spec from findings"],
        capture_output=True, text=True,
    )
    assert (p.returncode, p.stdout) == (0, "code,partition_spec\nCS101,hp_cal_month=2013-04\n"), p.stderr


LOC = "hdfs://10.2.6.102/tmp/hive-deploy/hive_2013-05-30_10-13-59_124_8643833043783438119/-ext-10000"


def test_timeline_draws_one_lane_per_attempt(cli, db_path):
    from commitsleuth.report.terminal import path_lines

    cli("ingest", SEED, "--db", db_path)
    r = cli("timeline", LOC, "hp_cal_month=2013-04", "--db", db_path, "--no-color")
    assert r.exit_code == 0
    lines = r.out.splitlines()
    track = 100 - 38 - 3
    assert lines[:7] == [
        "hp_cal_month=2013-04 in hdfs://10.2.6.102/tmp/hiv…-05-30_10-13-59_124_8643833043783438119/-ext-10000",
        "event order, not time: these events carry no timestamp; #N is the N-th event in file order",
        f"{A0} │" + "━" * 14 + "R" + "━" * 15 + " " * (track - 30) + "│",
        f"{A1} │" + " " * 29 + "━" * 15 + "R" + "━" * 14 + "│",
        " " * 39 + "└" + "─" * 14 + "┴" + "─" * 29 + "┴" + "─" * 14 + "┘",
        " " * 52 + "#1" + " " * 28 + "#2",
        "legend: R rename into the output; ━ first..last event",
    ]
    assert lines[7:11] == [
        "",
        "#  time                    kind             actor",
        f"1  no timestamp            rename           {A0}",
        # the file name whole, the directory cut (issue 32)
        "   path hdfs://10.2.6.102/tmp/hive-deploy/hive_20…8119/_tmp.-ext-10000/hp_cal_month=2013-04/000005_0",
    ]
    assert lines[11:12] == ["   at   " + line for line in path_lines(f"{SEED / 'task-logs.txt'}:2", 92)]
    assert lines[-1] == "(2 events)"
    assert max(len(line) for line in lines) <= 100
    assert "\x1b" not in r.out
    r = cli("timeline", "db.nothing", "--db", db_path)
    assert r.exit_code == 2
    assert r.err == f"Error: no events for db.nothing; known: {LOC}\n"


def test_reading_commands_do_not_import_arrow(cli, db_path):
    """timeline and query only read the store: pyarrow, numpy and pandas (which pyarrow imports)
    stay unloaded, a third of such a command's time otherwise."""
    cli("ingest", SEED, "--db", db_path)
    probe = ("import sys\nfrom commitsleuth.cli import main\ncode = main(sys.argv[1:])\n"
             "print(code, sorted(m for m in ('pyarrow', 'numpy', 'pandas') if m in sys.modules))")
    for args in (["timeline", LOC, "hp_cal_month=2013-04"], ["query", "file_attempts"]):
        out = subprocess.run([sys.executable, "-c", probe, *args, "--db", str(db_path)], capture_output=True,
                             text=True, check=True).stdout
        assert out.splitlines()[-1] == "0 []", (args, out[-300:])


def test_timeline_colour_only_when_allowed(cli, db_path, monkeypatch):
    cli("ingest", SEED, "--db", db_path)
    cli("analyze", "--db", db_path)
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    coloured = cli("timeline", LOC, "hp_cal_month=2013-04", "--db", db_path).out
    assert "\x1b[1;4;32mR\x1b[0m" in coloured  # evidence of a finding: bold underlined green
    plain = cli("timeline", LOC, "hp_cal_month=2013-04", "--db", db_path, "--no-color").out
    assert "\x1b" not in plain
    # Without colour or underline, evidence is starred in the list and the legend says so.
    assert "legend: R rename into the output; ━ first..last event; * in the list = evidence of a finding" in plain
    assert f"\n1* no timestamp            rename           {A0}\n" in plain
    assert "green ok" in coloured and "green ok" not in plain
    monkeypatch.setenv("NO_COLOR", "1")
    assert cli("timeline", LOC, "hp_cal_month=2013-04", "--db", db_path).out == plain


def test_report_is_written_and_escaped(cli, db_path, tmp_path):
    cli("ingest", SEED, "--db", db_path)
    cli("analyze", "--db", db_path)
    out = tmp_path / "r.html"
    r = cli("report", "-o", out, "--db", db_path)
    assert r.out == f"report written to {out}\n"
    html = out.read_text()
    assert A0 in html and A1 in html and "hp_cal_month=2013-04" in html


def test_report_to_a_place_that_cannot_be_written(cli, db_path, tmp_path):
    cli("ingest", SEED, "--db", db_path)
    r = cli("report", "-o", tmp_path / "no" / "such" / "r.html", "--db", db_path)
    assert (r.exit_code, r.out) == (2, "")
    assert r.err == f"Error: cannot write {tmp_path / 'no' / 'such' / 'r.html'}: No such file or directory\n"
    r = cli("report", "-o", tmp_path, "--db", db_path)
    assert (r.exit_code, r.err) == (2, f"Error: cannot write {tmp_path}: Is a directory\n")


def test_store_locked_by_another_process(cli, db_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb,sys,time; c=duckdb.connect(sys.argv[1]); print('ok', flush=True); time.sleep(60)", str(db_path)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ok"
        r = cli("ingest", SEED, "--db", db_path)
        assert r.exit_code == 2
        assert r.err.startswith(f"Error: {db_path} is locked by another process (process {holder.pid})")
        assert r.err.count("\n") == 1
    finally:
        holder.kill()
        holder.wait()


def test_every_command_has_an_example_in_help(cli):
    from commitsleuth.cli import cli as group

    for name in group.commands:
        r = cli(name, "--help")
        assert r.exit_code == 0
        assert "Example" in r.out, name


def test_ingest_keep_reads(cli, tmp_path):
    """Audit reads are counted per (user, call, hour); --keep-reads stores each one."""
    line = ("2023-03-01 10:00:0{s},120 INFO FSNamesystem.audit: allowed=true\tugi=etl (auth:SIMPLE)\tip=/10.0.0.21\t"
            "cmd={cmd}\tsrc=/w/db.db/t/dt=1\tdst=null\tperm=null\tproto=rpc\n")
    log = tmp_path / "hdfs-audit.log"
    log.write_text(line.format(s=1, cmd="open") + line.format(s=2, cmd="open") + line.format(s=3, cmd="delete"))
    r = cli("ingest", str(log), "--db", str(tmp_path / "a.duckdb"))
    assert (r.exit_code, r.out) == (0, "ingested 1 file (1 ok): 2 events, 0 rejected lines\n")
    r = cli("ingest", str(log), "--keep-reads", "--db", str(tmp_path / "b.duckdb"))
    assert (r.exit_code, r.out) == (0, "ingested 1 file (1 ok): 3 events, 0 rejected lines\n")


# -- a store that is not there, or not whole ----------------------------------------------------
READERS = (["analyze"], ["analyze", "--fail-on", "high"], ["analyze", "--format", "json"],
           ["audit", str(SEED)], ["timeline", "db.t", "dt=1"], ["query", "double_commits"],
           ["query", "select 1 as one"], ["report", "-o", "r.html"])
# a damaged store is refused by the commands that write it too, before they write
WRITERS = (["ingest", str(SEED.parent)], ["attach-parquet", str(SEED)])


def test_reading_commands_on_a_missing_store_create_nothing(cli, tmp_path, monkeypatch):
    """A CI gate run from the wrong directory or with a mistyped --db fails, it does not pass."""
    monkeypatch.chdir(tmp_path)
    for args in READERS:
        for db in ("missing.duckdb", str(tmp_path / "sub" / "missing.duckdb")):
            r = cli(*args, "--db", db)
            assert (r.exit_code, r.out, r.err) == (
                2, "", f"Error: no database at {db}: run 'commitsleuth ingest' first\n"), args
    # the default store too, named by nothing but the working directory
    r = cli("analyze", "--fail-on", "high")
    assert (r.exit_code, r.err) == (2, "Error: no database at commitsleuth.duckdb: run 'commitsleuth ingest' first\n")
    assert sorted(os.listdir(tmp_path)) == []


def test_an_ingest_that_read_nothing_leaves_no_store(cli, tmp_path):
    db = tmp_path / "s.duckdb"
    r = cli("ingest", "/nonexistent", "--db", db)
    assert (r.exit_code, r.err) == (2, "Error: no such file or directory: /nonexistent\n")
    (tmp_path / "empty").mkdir()
    r = cli("ingest", tmp_path / "empty", "--db", db)
    assert (r.exit_code, r.out) == (0, "ingested 0 files: 0 events, 0 rejected lines\n")
    r = cli("attach-parquet", tmp_path / "empty", "--db", db)
    assert sorted(os.listdir(tmp_path)) == ["empty"]
    assert cli("analyze", "--db", db).exit_code == 2
    # a store that was there before stays, whatever the ingest read; so does one holding a
    # failed source (it says what was tried)
    assert cli("ingest", SEED, "--db", db).exit_code == 0
    assert cli("ingest", "/nonexistent", "--db", db).exit_code == 2
    assert cli("ingest", tmp_path / "empty", "--db", db).exit_code == 0
    assert cli("analyze", "--db", db).exit_code == 1
    failed = tmp_path / "bad" / "task.log"
    failed.parent.mkdir()
    failed.symlink_to("/proc/self/mem")
    r = cli("ingest", failed.parent, "--db", tmp_path / "failed.duckdb")
    assert r.exit_code == 2 and (tmp_path / "failed.duckdb").exists()


def _damaged(cli, tmp_path, how: str) -> Path:
    db = tmp_path / f"{how}.duckdb"
    assert cli("ingest", SEED, "--db", db).exit_code == 0
    if how == "truncated":
        os.truncate(db, db.stat().st_size // 2)
    else:
        con = duckdb.connect(str(db))
        con.execute("ALTER TABLE events DROP COLUMN path")
        con.close()
    return db


def test_a_damaged_store_is_one_error_line(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    db = _damaged(cli, tmp_path, "truncated")
    size = db.stat().st_size
    whole = 3 * 4096 + 262144 * 6
    # Where the cut falls decides which read meets it first: the catalog's, when the store opens
    # (the block DuckDB could not read), or the check of the blocks in use after it opened.
    said = {f"its 6 blocks in use need {whole}", "a block it needs ends at 1847296"}
    for args in READERS + WRITERS:
        r = cli(*args, "--db", db)
        found = re.fullmatch(rf"Error: the store {re.escape(str(db))} is damaged: its file is cut short "
                             rf"\({size} bytes, (.*)\); ingest into a new --db\n", r.err)
        assert (r.exit_code, r.out, bool(found) and found.group(1) in said) == (2, "", True), (args, r.err)
    db = _damaged(cli, tmp_path, "dropped")
    for args in READERS + WRITERS:
        r = cli(*args, "--db", db)
        assert (r.exit_code, r.out, r.err) == (
            2, "", f"Error: the store {db} is damaged: it lacks column events.path (VARCHAR); "
                   "ingest into a new --db\n"), args
    con = duckdb.connect(str(db))
    con.execute("ALTER TABLE events ADD COLUMN path VARCHAR")  # whole again, but a view gone
    con.execute("DROP VIEW partition_events")
    con.close()
    r = cli("analyze", "--db", db)
    assert (r.exit_code, r.err) == (2, f"Error: the store {db} is damaged: it lacks view partition_events; "
                                       "ingest into a new --db\n")
    assert not (tmp_path / "r.html").exists()


def test_a_table_of_the_users_own_is_no_damage(cli, db_path):
    cli("ingest", SEED, "--db", db_path)
    con = duckdb.connect(str(db_path))
    con.execute("CREATE TABLE my_notes AS SELECT 1 AS n")
    con.close()
    r = cli("query", "select n from my_notes", "--db", db_path)
    assert (r.exit_code, r.out) == (0, "n\n-\n1\n(1 row)\n")


def test_query_errors_keep_duckdbs_hints(cli, db_path):
    cli("ingest", SEED, "--db", db_path)
    r = cli("query", "select * from event", "--db", db_path)
    assert (r.exit_code, r.out) == (2, "")
    assert r.err == ("Error: query failed: Catalog Error: Table with name event does not exist!\n"
                     'Did you mean "events"?\n'
                     "LINE 1: select * from event\n"
                     "                      ^^^^^\n")
    r = cli("query", "select pth from events", "--db", db_path)
    lines = r.err.splitlines()
    assert lines[0] == 'Error: query failed: Binder Error: Referenced column "pth" not found in FROM clause!'
    assert lines[1].startswith('Candidate bindings: "path"')
    assert lines[2:] == ["LINE 1: select pth from events", "               ^^^"]
    r = cli("query", "select '\x1b[2J' from event", "--db", db_path)
    assert "\x1b" not in r.err and r.err.splitlines()[2] == "LINE 1: select '?[2J' from event"
