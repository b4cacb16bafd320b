"""Log text never drives the terminal: query (table, CSV), analyze and audit show control
characters as '?' as timeline does; JSON escapes them. The hostile line is built from the Hive
fixture line of test_ingest_text (exact source strings) with an OSC title and a clear-screen."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from test_ingest_text import LOAD  # noqa: E402

from commitsleuth.report.escape import printable

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x9b"


def test_printable_shows_controls_and_keeps_layout_when_asked():
    assert printable(f"a{HOSTILE}b") == "a?]0;pwned??[2J?b"
    assert printable("x\n\ty\x1b") == "x??y?"
    assert printable("x\n\ty\x1b", keep_layout=True) == "x\n\ty?"


def test_query_outputs_never_carry_control_characters(cli, tmp_path, db_path):
    log = tmp_path / "hive.log"
    log.write_text(LOAD.format(ms=1, t=1, d=1).replace("dt=2018-09-01", f"dt=2018{HOSTILE}"))
    assert cli("ingest", log, "--db", db_path).exit_code == 0
    sql = "SELECT partition_spec FROM events WHERE partition_spec IS NOT NULL"
    table = cli("query", sql, "--db", db_path)
    csv = cli("query", sql, "--format", "csv", "--db", db_path)
    as_json = cli("query", sql, "--format", "json", "--db", db_path)
    assert table.out.splitlines()[2] == "dt=2018?]0;pwned??[2J?"
    assert csv.out == "partition_spec\ndt=2018?]0;pwned??[2J?\n"
    assert "\x1b" not in as_json.out and "\x9b" not in as_json.out
    assert json.loads(as_json.out) == [{"partition_spec": f"dt=2018{HOSTILE}"}]


def test_audit_text_never_carries_control_characters(cli, tmp_path):
    table = tmp_path / "t"
    part = table / f"dt=2018{HOSTILE}"
    part.mkdir(parents=True)
    (part / "000000_0").write_text("a\n")
    (part / "000000_1").write_text("a\n")  # a duplicate task file: a finding naming the partition
    r = cli("audit", table)
    assert "\x1b" not in r.out and "\x07" not in r.out and "\x9b" not in r.out
    assert "?]0;pwned??[2J?" in r.out
