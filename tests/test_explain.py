"""``analyze --explain TABLE PARTITION``: per detector, the facts it saw on one partition and why it
did or did not fire (issue 30). The stores are the YAML cases of CS107 and CS101 (issue 30's
HDFS-audit-alone examples and their negative twins), loaded through the real parsers."""

from __future__ import annotations

from pathlib import Path

import yaml

from commitsleuth.forensics.detectors.base import Detector
from commitsleuth.store import Store

from test_detector_cases import CASES_DIR, load_case


def _case(detector: str, name: str) -> dict:
    doc = yaml.safe_load(CASES_DIR.joinpath(f"{detector}.yml").read_text(encoding="utf-8"))
    return next(c for c in doc["cases"] if c["name"].startswith(name))


def _store(tmp_path: Path, detector: str, name: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    db = tmp_path / "s.duckdb"
    with Store(db) as store:
        load_case(store, tmp_path / "logs", _case(detector, name))
    return db


def _block(out: str, code: str) -> list[str]:
    """The lines of one detector's section of the explanation."""
    lines = out.splitlines()
    i = next(n for n, line in enumerate(lines) if line.startswith(code + " "))
    return lines[i:i + 3]


def test_a_trashed_partition_names_its_files_fate_and_the_detector_that_fired(cli, tmp_path):
    db = _store(tmp_path, "metastore_mismatch", "issue 30 - HDFS audit alone - a Hive-loaded partition moved")
    r = cli("analyze", "--explain", "sales.orders", "ds=2024-05-19", "--db", db)
    assert r.exit_code == 0, r.err
    assert r.out.splitlines()[0] == "ds=2024-05-19 in sales.orders"
    assert "file 000000_0: Hive move out of its staging directory by etl; trashed by jdoe (trash: " in r.out
    cs107 = _block(r.out, "CS107")
    assert cs107[0] == "CS107 metastore-fs-mismatch: FIRED" and "saw: delete 1" in cs107[1]
    assert "recoverable from the trash" in cs107[2]
    cs101 = _block(r.out, "CS101")
    assert cs101[0].endswith("silent")
    assert cs101[2] == "  did not fire: no live data file named after a task is left in the partition"


def test_silence_after_a_reload_says_the_files_are_live(cli, tmp_path):
    db = _store(tmp_path, "metastore_mismatch", "issue 30 negative twin - trashed, then the partition loaded again")
    r = cli("analyze", "--explain", "sales.orders", "ds=2024-05-19", "--db", db)
    assert r.exit_code == 0, r.err
    assert _block(r.out, "CS107")[2] == "  did not fire: 1 of its 2 data files are live (not removed or overwritten)"


def test_silence_when_the_writer_removed_its_own_files(cli, tmp_path):
    db = _store(tmp_path, "metastore_mismatch", "issue 30 negative twin - the writer's own query trashes")
    r = cli("analyze", "--explain", "sales.orders", "ds=2024-05-19", "--db", db)
    assert _block(r.out, "CS107")[2].startswith("  did not fire: every file was removed, but by its own writers (")


def test_a_double_write_lists_the_attempts_and_a_lone_attempt_per_task_says_so(cli, tmp_path):
    db = _store(tmp_path, "double_commit", "issue 30 - HDFS audit alone, speculative direct write")
    r = cli("analyze", "--explain", "/warehouse/sales.db/orders", "ds=2024-05-19", "--db", db)
    assert r.exit_code == 0, r.err
    assert "attempt task attempt 1 in stage 1.0 (TID 58): on 10.0.0.22, speculation not known, no end seen, wrote 000007_1" in r.out
    assert _block(r.out, "CS101")[0] == "CS101 double-commit: FIRED"
    db2 = _store(tmp_path / "twin", "double_commit", "issue 30 negative twin - the driver deleted the second attempt's file")
    r = cli("analyze", "--explain", "/warehouse/sales.db/orders", "ds=2024-05-19", "--db", db2)
    assert _block(r.out, "CS101")[2] == ("  did not fire: no task has live files of two attempts "
                                         "(live files' attempts per task: task 000007: 1)")


def test_every_detector_is_explained_with_what_it_needs(cli, tmp_path):
    from commitsleuth.forensics.detectors import DETECTORS
    from commitsleuth.forensics.explain import NEEDS

    assert set(NEEDS) == {d.code for d in DETECTORS}
    db = _store(tmp_path, "metastore_mismatch", "issue 30 - HDFS audit alone - a Hive-loaded partition moved")
    r = cli("analyze", "--explain", "sales.orders", "ds=2024-05-19", "--db", db)
    for d in DETECTORS:
        assert isinstance(d(), Detector) and _block(r.out, d.code)[0].startswith(f"{d.code} {d.name}: ")


def test_an_unknown_partition_is_a_clear_error(cli, tmp_path):
    db = _store(tmp_path, "metastore_mismatch", "issue 30 - HDFS audit alone - a Hive-loaded partition moved")
    r = cli("analyze", "--explain", "sales.orders", "ds=1999-01-01", "--db", db)
    assert r.exit_code != 0
    assert r.err.startswith("Error: no events for sales.orders ds=1999-01-01")
