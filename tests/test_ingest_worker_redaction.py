"""``--redact`` holds in the ingest's worker processes as in the ingest itself: a worker from the
fork server (started without the user's patterns) stored them unmasked before. Real processes:
the CLI program on real DuckDB files, the worker thresholds lowered so the pool reads; the log is
the Hive fixture of test_ingest_text (exact source strings)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_ingest_text import hive_log  # noqa: E402

CLI = str(Path(sys.executable).with_name("commitsleuth"))
WORKERS = {"COMMITSLEUTH_WORKERS": "2", "COMMITSLEUTH_PARALLEL_MIN": str(1 << 20), "COMMITSLEUTH_SPREAD_MIN": "1",
           "COMMITSLEUTH_RANGE": str(128 << 10)}
PATTERN = r"db\.db/t/"  # in every load's raw line and its path


def ingest(target: Path, db: Path, env: dict, *args: str) -> list[tuple]:
    out = subprocess.run([CLI, "ingest", str(target), "--db", str(db), *args], env={**os.environ, **env},
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT byte_offset, kind, raw, path, location FROM events ORDER BY byte_offset").fetchall()


@pytest.mark.parametrize("layout", ["a big log named (the program's own forks)", "a directory (the fork server's)"])
def test_the_users_patterns_are_masked_by_the_workers_too(layout, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "big.log").write_text(hive_log(12_000))
    target = logs / "big.log" if layout.startswith("a big log") else logs
    here = ingest(target, tmp_path / "here.duckdb", {"COMMITSLEUTH_WORKERS": "1"}, "--redact", PATTERN)
    assert len(here) == 4000
    assert not any("db.db/t/" in str(row) for row in here)
    pooled = ingest(target, tmp_path / "pooled.duckdb", WORKERS, "--redact", PATTERN)
    assert pooled == here
    # the negative twin: without --redact the same run keeps the text (the pattern did the masking)
    plain = ingest(target, tmp_path / "plain.duckdb", WORKERS)
    assert len(plain) == len(here) and sum("db.db/t/" in row[2] for row in plain) == 4000
