"""Delta Lake and Iceberg tables written at test time by real writers (delta-rs ``deltalake``,
``pyiceberg`` on a SqlCatalog over sqlite), read as sources and judged by their own logs.

Each situation has a negative twin: healthy concurrent appends (with retries), OPTIMIZE,
VACUUM within retention, a full overwrite that removes every file it should.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake

from commitsleuth.cli import main
from commitsleuth.forensics.audit import audit
from commitsleuth.ingest import ingest
from commitsleuth.parsers.lakehouse import read_table, table_root
from commitsleuth.store import Store

ROWS = pa.table({"dt": ["2024-01-01", "2024-01-02"], "v": [1, 2]})


def codes(findings) -> list[str]:
    return [f.code for f in findings]


def delta_appends(path: Path, writers: int = 4) -> None:
    """A table, then several threads appending at once (delta-rs retries the losers)."""
    write_deltalake(str(path), ROWS, partition_by=["dt"])
    threads = [threading.Thread(target=write_deltalake, args=(str(path), ROWS),
                                kwargs={"mode": "append", "partition_by": ["dt"]}) for _ in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def add_actions(dt, flatten: bool = True) -> list[dict]:
    """delta-rs' own reading of a version's live files (an arro3 table, as pyarrow rows)."""
    return pa.table(dt.get_add_actions(flatten=flatten)).to_pylist()


def audited(path: Path, tmp_path: Path, name: str = "a.duckdb"):
    with Store(tmp_path / name) as store:
        result = audit(store, str(path))
        return result


# --- negative twins: healthy tables judged by their log, not as Hive directories ---------------

def test_healthy_concurrent_appends_then_optimize_has_no_finding(tmp_path):
    table = tmp_path / "events"
    delta_appends(table)
    DeltaTable(str(table)).optimize.compact()
    result = audited(table, tmp_path)
    assert result.findings == [], [f.summary for f in result.findings]
    assert result.unlisted == []


def test_healthy_table_was_a_false_alarm_as_a_hive_directory(tmp_path):
    """The same table listed without its log: the Hive detectors' partial-output alarm that
    recognising the table removes (this is what a user saw before)."""
    table = tmp_path / "events"
    delta_appends(table)
    DeltaTable(str(table)).optimize.compact()
    shutil.rmtree(table / "_delta_log")
    assert "CS105" in codes(audited(table, tmp_path).findings)


def test_vacuum_within_retention_and_checkpoint_have_no_finding(tmp_path):
    table = tmp_path / "events"
    delta_appends(table, writers=2)
    dt = DeltaTable(str(table))
    dt.optimize.compact()
    dt.create_checkpoint()
    removed = dt.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    assert removed  # OPTIMIZE's removed files are gone from storage
    result = audited(table, tmp_path)
    assert result.findings == [], [f.summary for f in result.findings]


def test_full_overwrite_that_removes_every_file_has_no_finding(tmp_path):
    table = tmp_path / "t"
    delta_appends(table, writers=2)
    write_deltalake(str(table), ROWS, mode="overwrite", partition_by=["dt"])
    assert audited(table, tmp_path).findings == []


# --- anomalies -------------------------------------------------------------------------------

def test_stale_handle_overwrite_lets_a_concurrent_append_survive(tmp_path):
    """delta-rs#3622: an overwrite through a handle opened before an append."""
    table = tmp_path / "t"
    write_deltalake(str(table), ROWS, partition_by=["dt"])
    stale = DeltaTable(str(table))
    write_deltalake(str(table), ROWS, mode="append", partition_by=["dt"])
    write_deltalake(stale, ROWS, mode="overwrite", partition_by=["dt"])
    findings = audited(table, tmp_path).findings
    assert codes(findings) == ["CS204", "CS204"]  # one per partition the append wrote
    assert [f.partition_spec for f in findings] == ["dt=2024-01-01", "dt=2024-01-02"]
    assert all(f.detail["how"] == "stale overwrite" and f.detail["versions"] == ["1", "2"] for f in findings)
    appended = {a["path"] for a in add_actions(DeltaTable(str(table), version=1))} - \
               {a["path"] for a in add_actions(DeltaTable(str(table), version=0))}
    survivors = [p for f in findings for p in f.detail["paths"]]
    assert sorted(p.rsplit("/", 1)[-1] for p in survivors) == sorted(p.rsplit("/", 1)[-1] for p in appended)


def test_replayed_txn_is_one_batch_committed_twice_and_names_the_app(tmp_path):
    table = tmp_path / "t"
    for version in (1, 2, 2):
        write_deltalake(str(table), ROWS, mode="append", partition_by=["dt"],
                        commit_properties=CommitProperties(app_transactions=[Transaction("query-7", version)],
                                                           custom_metadata={"spark.app.id": "app-20240101000000-0001"}))
    findings = audited(table, tmp_path).findings
    assert codes(findings) == ["CS205"]
    assert findings[0].detail["versions"] == ["1", "2"]
    assert "app-20240101000000-0001" in findings[0].actors and "query-7" in findings[0].actors


def test_distinct_txn_versions_are_no_replay(tmp_path):
    table = tmp_path / "t"
    for version in (1, 2, 3):
        write_deltalake(str(table), ROWS, mode="append", partition_by=["dt"],
                        commit_properties=CommitProperties(app_transactions=[Transaction("query-7", version)]))
    assert audited(table, tmp_path).findings == []


def test_duplicate_add_of_a_live_file(tmp_path):
    """A retried commit that re-adds a live file (delta-io/delta#3784), written by delta-rs'
    own transaction API with the add actions of version 0."""
    from deltalake.transaction import AddAction

    table = tmp_path / "t"
    write_deltalake(str(table), ROWS, partition_by=["dt"])
    dt = DeltaTable(str(table))
    adds = add_actions(dt, flatten=False)
    first = adds[0]
    action = AddAction(first["path"], first["size_bytes"], first["partition"], first["modification_time"], True,
                       '{"numRecords":1}')
    dt.create_write_transaction([action], mode="append", schema=dt.schema(), partition_by=["dt"])
    findings = audited(table, tmp_path).findings
    assert codes(findings) == ["CS202"]
    assert findings[0].detail["versions"] == [0, 1]
    assert findings[0].partition_spec == "dt=" + first["partition"]["dt"]


def test_manual_delete_of_a_live_file_is_missing_and_names_the_deleter(tmp_path):
    table = tmp_path / "t"
    write_deltalake(str(table), ROWS, partition_by=["dt"])
    victim = next((table / "dt=2024-01-02").glob("*.parquet"))
    victim.unlink()
    # the NameNode's audit line of that delete, in the published format (hdfs_audit samples)
    log = tmp_path / "hdfs-audit.log"
    log.write_text("2023-03-01 10:00:05,120 INFO org.apache.hadoop.hdfs.server.namenode.FSNamesystem.audit: "
                   f"allowed=true\tugi=etl (auth:SIMPLE)\tip=/10.0.0.21\tcmd=delete\tsrc={victim}\tdst=null\t"
                   "perm=null\tproto=rpc\n")
    with Store(tmp_path / "s.duckdb") as store:
        report = ingest(store, [str(log)])
        assert not report.failed
        findings = audit(store, str(table)).findings
    assert codes(findings) == ["CS203"]
    assert findings[0].partition_spec == "dt=2024-01-02"
    assert findings[0].actors and "etl" in findings[0].actors[0]
    assert victim.name in findings[0].summary


def test_gap_in_the_log_is_a_lost_commit_and_no_state_finding_rests_on_it(tmp_path):
    table = tmp_path / "t"
    delta_appends(table, writers=1)
    write_deltalake(str(table), ROWS, mode="append", partition_by=["dt"])
    os.remove(table / "_delta_log" / "00000000000000000001.json")
    findings = audited(table, tmp_path).findings
    # the files version 1 added are unreferenced now, but the log is not whole: no orphan
    assert codes(findings) == ["CS204"]
    assert findings[0].detail["how"] == "gap" and findings[0].detail["versions"] == ["1"]


def test_damaged_commit_is_named_and_the_rest_is_read(tmp_path):
    table = tmp_path / "t"
    delta_appends(table, writers=2)
    commit = table / "_delta_log" / "00000000000000000001.json"
    commit.write_bytes(commit.read_bytes()[:-40])  # truncated mid-action
    with Store(tmp_path / "s.duckdb") as store:
        result = audit(store, str(table))
        assert len(result.unlisted) == 1
        assert result.unlisted[0].error.startswith(f"{commit}: line ")
        assert "is not a JSON action" in result.unlisted[0].error
        assert result.findings == []  # nothing rests on the unreadable commit
        n = store.con.execute("SELECT count(*) FROM events WHERE kind = 'table_commit' AND status = 'completed'").fetchone()[0]
        assert n == 2  # versions 0 and 2 are still read


def test_truncated_checkpoint_after_log_cleanup_is_named(tmp_path):
    table = tmp_path / "t"
    delta_appends(table, writers=2)
    DeltaTable(str(table)).create_checkpoint()
    write_deltalake(str(table), ROWS, mode="append", partition_by=["dt"])
    for v in range(3):
        os.remove(table / "_delta_log" / f"{v:020d}.json")
    cp = table / "_delta_log" / "00000000000000000002.checkpoint.parquet"
    good = cp.read_bytes()
    with Store(tmp_path / "s.duckdb") as store:
        assert audit(store, str(table)).findings == []  # the checkpoint stands in for the cleaned log
        cp.write_bytes(good[: len(good) // 2])
        result = audit(store, str(table))
    assert any(str(cp) in e.error and "checkpoint not readable" in e.error for e in result.unlisted)
    assert result.findings == []  # the state is unknown: no orphan, no missing file


def test_writer_killed_mid_write_leaves_orphans(tmp_path):
    """A writer process killed after writing data files and before its commit."""
    table = tmp_path / "t"
    write_deltalake(str(table), ROWS, partition_by=["dt"])
    script = f"""
import os, signal, pyarrow as pa
from deltalake import write_deltalake
schema = pa.schema([("dt", pa.string()), ("v", pa.int64())])
def batches():
    for i in range(50):
        yield pa.record_batch([pa.array(["2024-01-03"] * 20000), pa.array(range(20000), pa.int64())], schema=schema)
    os.kill(os.getpid(), signal.SIGKILL)  # dies before the commit
write_deltalake({str(table)!r}, pa.RecordBatchReader.from_batches(schema, batches()), mode="append",
                partition_by=["dt"], target_file_size=100000)
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL
    # every file it left: a part it was still writing stays under object_store's staging name
    # (``<name>#<n>``, renamed only when complete), an orphan as much as the finished ones
    written = [p for p in (table / "dt=2024-01-03").iterdir() if p.is_file()]
    assert written, "the killed writer wrote no file before dying"
    write_deltalake(str(table), ROWS, mode="append", partition_by=["dt"])  # a later commit
    findings = audited(table, tmp_path).findings
    assert codes(findings) == ["CS201"]
    assert findings[0].partition_spec == "dt=2024-01-03"
    assert sorted(findings[0].detail["paths"]) == sorted(str(p) for p in written)


def test_orphan_retention_window_is_settable(tmp_path, monkeypatch):
    table = tmp_path / "t"
    write_deltalake(str(table), ROWS, partition_by=["dt"])
    stray = table / "dt=2024-01-01" / "part-00000-00000000-0000-0000-0000-000000000000-c000.snappy.parquet"
    stray.write_bytes(b"PAR1")
    os.utime(stray, (1, 1))  # long before the table's commits
    write_deltalake(str(table), ROWS, mode="append", partition_by=["dt"])
    assert codes(audited(table, tmp_path, "1.duckdb").findings) == ["CS201"]
    monkeypatch.setenv("COMMITSLEUTH_ORPHAN_RETENTION_HOURS", str(24 * 365 * 100))
    assert audited(table, tmp_path, "2.duckdb").findings == []


# --- reading: events, redaction, ingest ------------------------------------------------------

def test_ingest_reads_the_log_as_one_source_with_commit_facts(tmp_path):
    table = tmp_path / "t"
    write_deltalake(str(table), ROWS, partition_by=["dt"], commit_properties=CommitProperties(
        custom_metadata={"spark.app.id": "app-20240101000000-0001",
                         "note": "password=hunter2"}))
    delta = DeltaTable(str(table))
    with Store(tmp_path / "s.duckdb") as store:
        for path in (table, table / "_delta_log", table):  # root or log dir; a re-run replaces
            report = ingest(store, [str(path)])
            assert [r.status for r in report.results] == ["ok"]
        rows = store.con.execute(
            "SELECT kind, app_id, partition_spec, detail FROM events ORDER BY event_id").fetchall()
        assert store.con.execute("SELECT count(*) FROM sources").fetchone()[0] == 1
    kinds = [r[0] for r in rows]
    assert kinds.count("table_commit") == 1 and kinds.count("table_add") == len(add_actions(delta))
    assert {r[2] for r in rows if r[0] == "table_add"} == {"dt=2024-01-01", "dt=2024-01-02"}
    commit = next(r for r in rows if r[0] == "table_commit")
    assert commit[1] == "app-20240101000000-0001"
    assert "hunter2" not in commit[3] and '"operation": "WRITE"' in commit[3]
    with Store(tmp_path / "s.duckdb") as store:
        raws = [r[0] for r in store.con.execute("SELECT raw FROM events WHERE raw IS NOT NULL").fetchall()]
    assert raws and not any("hunter2" in r for r in raws)


def test_audit_cli_of_a_healthy_table(tmp_path, capsys):
    table = tmp_path / "t"
    delta_appends(table, writers=2)
    assert main(["audit", str(table)]) == 0
    assert "No findings." in capsys.readouterr().out


# --- Iceberg ---------------------------------------------------------------------------------

@pytest.fixture
def catalog(tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh")
    cat.create_namespace("db")
    return cat


def iceberg_table(catalog, name="db.t"):
    tbl = catalog.create_table(name, schema=ROWS.schema)
    with tbl.update_spec() as spec:
        spec.add_identity("dt")
    return tbl


def root_of(tbl) -> str:
    return tbl.metadata.location.removeprefix("file://")


def test_iceberg_appends_and_overwrite_have_no_finding(tmp_path, catalog):
    tbl = iceberg_table(catalog)
    tbl.append(ROWS)
    tbl.append(ROWS)
    tbl.overwrite(ROWS)
    result = audited(Path(root_of(tbl)), tmp_path)
    assert result.findings == [] and result.unlisted == []


def test_iceberg_events_match_inspect_entries(catalog):
    tbl = iceberg_table(catalog)
    tbl.append(ROWS)
    tbl.append(ROWS)
    tbl.delete("v = 1")
    root, fmt = table_root(root_of(tbl))
    log, events = read_table(root, fmt)
    assert log.problems == []
    commits = [e for e in events if e.kind == "table_commit"]
    assert [c.detail["snapshot_id"] for c in commits] == [s.snapshot_id for s in tbl.snapshots()]
    expected = {(r["data_file"]["file_path"].removeprefix("file://"), r["status"])
                for s in tbl.snapshots() for r in tbl.inspect.entries(snapshot_id=s.snapshot_id).to_pylist()
                if r["status"] in (1, 2) and r["snapshot_id"] == s.snapshot_id}
    got = {(e.path, 1 if e.kind == "table_add" else 2) for e in events if e.kind != "table_commit"}
    assert got == expected


def test_iceberg_add_files_twice_is_a_duplicate_reference(tmp_path, catalog):
    import pyarrow.parquet as pq

    tbl = catalog.create_table("db.u", schema=ROWS.schema)
    data = tmp_path / "external.parquet"
    pq.write_table(ROWS, data)
    tbl.add_files([str(data)])
    tbl.add_files([str(data)], check_duplicate_files=False)
    findings = audited(Path(root_of(tbl)), tmp_path).findings
    assert codes(findings) == ["CS202"]
    assert findings[0].detail["paths"] == [str(data)] and findings[0].detail["versions"] == [1, 2]


def test_iceberg_stale_handle_that_retried_has_no_finding(tmp_path, catalog):
    """pyiceberg retries a commit that lost the race: its first attempt's metadata files stay
    in metadata/ (log files, not data) and its data files are committed by the retry."""
    tbl = iceberg_table(catalog)
    tbl.append(ROWS)
    stale = catalog.load_table("db.t")
    tbl.append(ROWS)
    stale.append(pa.table({"dt": ["2024-02-01"], "v": [9]}))
    assert len(tbl.refresh().snapshots()) == 3
    assert audited(Path(root_of(tbl)), tmp_path).findings == []


def test_iceberg_stale_handle_that_failed_leaves_orphans(tmp_path, catalog):
    from pyiceberg.exceptions import CommitFailedException

    tbl = catalog.create_table("db.t", schema=ROWS.schema, properties={"commit.retry.num-retries": "0"})
    with tbl.update_spec() as spec:
        spec.add_identity("dt")
    tbl.append(ROWS)
    stale = catalog.load_table("db.t")
    tbl.append(ROWS)
    with pytest.raises(CommitFailedException):
        stale.append(pa.table({"dt": ["2024-02-01"], "v": [9]}))
    tbl.append(ROWS)  # a later commit
    findings = audited(Path(root_of(tbl)), tmp_path).findings
    assert codes(findings) == ["CS201"]
    assert findings[0].partition_spec == "dt=2024-02-01"
    assert [p.rsplit("/", 2)[-2] for p in findings[0].detail["paths"]] == ["dt=2024-02-01"]


def test_iceberg_missing_manifest_is_named_and_judges_nothing(tmp_path, catalog):
    tbl = iceberg_table(catalog)
    tbl.append(ROWS)
    tbl.append(ROWS)
    manifest = next(Path(root_of(tbl), "metadata").glob("*-m0.avro"))
    manifest.unlink()
    result = audited(Path(root_of(tbl)), tmp_path)
    assert any(str(manifest) in e.error and "missing" in e.error for e in result.unlisted)
    assert result.findings == []


# --- Hudi: Spark-written tables from apache/hudi-rs test data (tests/corpus/lakehouse) ----------

HUDI = Path(__file__).parent / "corpus" / "lakehouse" / "hudi-rs"


def hudi_table(tmp_path, name: str) -> Path:
    import zipfile

    with zipfile.ZipFile(HUDI / f"{name}.zip") as z:
        z.extractall(tmp_path)
    return tmp_path / name


@pytest.mark.parametrize("name,instants", [
    ("v6_simplekeygen_nonhivestyle_overwritetable", ["20240707001301554", "20240707001302376", "20240707001303088"]),
    ("v8_simplekeygen_nonhivestyle", ["20250713011315930", "20250713011316909"]),
])
def test_hudi_timeline_0x_and_1x_are_read_and_healthy(tmp_path, name, instants):
    table = hudi_table(tmp_path, name)
    root, fmt = table_root(str(table / ".hoodie"))
    log, events = read_table(root, fmt)
    assert fmt.name == "hudi-timeline" and log.problems == []
    assert [e.detail["version"] for e in events if e.kind == "table_commit"] == instants
    adds = [e for e in events if e.kind == "table_add"]
    # every file the commit metadata names is on disk, and its write token names the TID
    assert adds and all(os.path.exists(e.path) for e in adds)
    assert all(e.detail["tid"] == int(e.file_name.split("_")[1].split("-")[2]) for e in adds)
    assert audited(table, tmp_path).findings == []


@pytest.mark.parametrize("name,instant", [
    ("v6_simplekeygen_nonhivestyle_overwritetable", "20240707001302376"),
    ("v8_simplekeygen_nonhivestyle", "20250713011316909"),
])
def test_hudi_instant_that_never_completed_with_files_live(tmp_path, name, instant):
    """The table as a writer killed before completing its last commit leaves it: the completed
    instant file absent, requested and inflight present, its base files written."""
    table = hudi_table(tmp_path, name)
    timeline = table / ".hoodie" / "timeline" if (table / ".hoodie" / "timeline").is_dir() else table / ".hoodie"
    done = [p for p in timeline.iterdir() if p.name.startswith(instant) and p.name.endswith(".commit")]
    assert len(done) == 1
    done[0].unlink()
    findings = audited(table, tmp_path).findings
    assert codes(findings) == ["CS206"]
    written = sorted(str(p) for p in table.rglob(f"*_{instant}.parquet"))
    assert sorted(p for f in findings for p in f.detail["paths"]) == written
    assert all(a.startswith("TID ") for f in findings for a in f.actors)


# --- Delta reading against delta-rs' own reading ------------------------------------------------

def live_from_events(events) -> set[str]:
    state: dict[str, tuple] = {}
    for e in events:
        if e.kind in ("table_add", "table_remove"):
            key = (e.detail["version"], e.kind == "table_add")
            if e.path not in state or key >= state[e.path]:
                state[e.path] = key
    return {p for p, (_, added) in state.items() if added}


def test_delta_live_files_match_delta_rs(tmp_path):
    table = tmp_path / "t"
    delta_appends(table)
    dt = DeltaTable(str(table))
    dt.optimize.compact()
    write_deltalake(str(table), ROWS, mode="append", partition_by=["dt"])
    root, fmt = table_root(str(table))
    log, events = read_table(root, fmt)
    assert log.problems == []
    expected = {str(table / p) for p in (a["path"] for a in add_actions(DeltaTable(str(table))))}
    assert live_from_events(events) == expected
    versions = [e.detail["version"] for e in events if e.kind == "table_commit"]
    assert versions == list(range(DeltaTable(str(table)).version() + 1))


def split_checkpoint(table: Path, version: int, parts: int = 2) -> list[Path]:
    """delta-rs' checkpoint rewritten as the protocol's multi-part checkpoint
    (N.checkpoint.PPPPPPPPPP.TTTTTTTTTT.parquet, the rows split between the parts)."""
    import pyarrow.parquet as pq

    single = table / "_delta_log" / f"{version:020d}.checkpoint.parquet"
    rows = pq.read_table(single)
    single.unlink()
    out = []
    step = -(-rows.num_rows // parts)
    for i in range(parts):
        path = table / "_delta_log" / f"{version:020d}.checkpoint.{i + 1:010d}.{parts:010d}.parquet"
        pq.write_table(rows.slice(i * step, step), path)
        out.append(path)
    return out


def test_multi_part_checkpoint_stands_in_for_a_cleaned_log(tmp_path):
    table = tmp_path / "t"
    delta_appends(table, writers=3)
    DeltaTable(str(table)).create_checkpoint()
    expected = {str(table / a["path"]) for a in add_actions(DeltaTable(str(table)))}
    for v in range(4):
        os.remove(table / "_delta_log" / f"{v:020d}.json")
    parts = split_checkpoint(table, 3)
    root, fmt = table_root(str(table))
    log, events = read_table(root, fmt)
    assert log.problems == []  # _last_checkpoint names the single checkpoint: see below
    assert live_from_events(events) == expected
    parts[1].unlink()
    log, events = read_table(root, fmt)
    assert any("part 2 of 2 is absent" in reason for _, reason in log.problems)
    assert [e.status for e in events if e.kind == "table_commit"] == ["unreadable"]


def test_last_checkpoint_naming_an_absent_checkpoint_is_named(tmp_path):
    table = tmp_path / "t"
    delta_appends(table, writers=1)
    DeltaTable(str(table)).create_checkpoint()
    (table / "_delta_log" / "00000000000000000001.checkpoint.parquet").unlink()
    root, fmt = table_root(str(table))
    log, _ = read_table(root, fmt)
    assert log.problems == [(str(table / "_delta_log" / "_last_checkpoint"), "points to checkpoint 1, which is absent")]


def test_restore_re_adds_a_removed_file_and_is_no_duplicate(tmp_path):
    """RESTORE adds again the files an overwrite removed: an add after a remove is no duplicate."""
    table = tmp_path / "t"
    write_deltalake(str(table), ROWS, partition_by=["dt"])
    write_deltalake(str(table), ROWS, mode="overwrite", partition_by=["dt"])
    DeltaTable(str(table)).restore(0)
    root, fmt = table_root(str(table))
    _, events = read_table(root, fmt)
    first = {e.path for e in events if e.kind == "table_add" and e.detail["version"] == 0}
    assert first <= {e.path for e in events if e.kind == "table_add" and e.detail["version"] == 2}
    assert audited(table, tmp_path).findings == []


def test_change_data_files_are_no_orphans(tmp_path):
    """A DELETE on a table with the change data feed writes _change_data/ files its cdc actions
    reference (not add actions)."""
    table = tmp_path / "t"
    write_deltalake(str(table), ROWS, partition_by=["dt"], configuration={"delta.enableChangeDataFeed": "true"})
    write_deltalake(str(table), ROWS, mode="append", partition_by=["dt"])
    DeltaTable(str(table)).delete("v = 1")
    assert list(table.rglob("_change_data/*")) or list(table.glob("_change_data/**/*.parquet"))
    write_deltalake(str(table), ROWS, mode="append", partition_by=["dt"])
    assert audited(table, tmp_path).findings == []


def test_iceberg_snapshot_chain_gap_is_a_lost_commit(tmp_path, catalog):
    """What a non-atomic catalog leaves when a second writer overwrote vN.metadata.json
    (apache/iceberg#970): the next snapshot's parent is in no metadata file. The table is
    written by pyiceberg; the lost snapshot is then taken out of every metadata file."""
    import json

    tbl = iceberg_table(catalog)
    for _ in range(3):
        tbl.append(ROWS)
    lost = tbl.snapshots()[1].snapshot_id
    for path in Path(root_of(tbl), "metadata").glob("*.metadata.json"):
        doc = json.loads(path.read_text())
        doc["snapshots"] = [s for s in doc.get("snapshots", []) if s["snapshot-id"] != lost]
        path.write_text(json.dumps(doc))
    findings = audited(Path(root_of(tbl)), tmp_path).findings
    assert codes(findings) == ["CS204"]
    assert str(lost) in findings[0].summary and findings[0].detail["how"] == "gap"


def test_iceberg_metadata_log_naming_an_absent_file_is_a_gap(tmp_path, catalog):
    tbl = iceberg_table(catalog)
    tbl.append(ROWS)
    tbl.append(ROWS)
    previous = tbl.metadata.metadata_log[-1].metadata_file.removeprefix("file://")
    os.remove(previous)
    findings = audited(Path(root_of(tbl)), tmp_path).findings
    assert codes(findings) == ["CS204"] and os.path.basename(previous) in findings[0].summary


def test_iceberg_expired_snapshots_are_no_gap(tmp_path, catalog):
    tbl = iceberg_table(catalog)
    for _ in range(3):
        tbl.append(ROWS)
    oldest = tbl.snapshots()[0].snapshot_id
    tbl.maintenance.expire_snapshots().by_id(oldest).commit()
    assert oldest not in [s.snapshot_id for s in tbl.refresh().snapshots()]
    assert audited(Path(root_of(tbl)), tmp_path).findings == []


def test_iceberg_format_v1_snapshots_are_versioned_and_a_readded_file_found(tmp_path, catalog):
    """A format-version 1 table (Spark's default before Iceberg 1.4) has no sequence numbers:
    its snapshots are versioned by their timestamp-ms, so add_files run again on a live file
    is found, and one run after an overwrite removed the file is not."""
    import pyarrow.parquet as pq

    for name, between in (("db.again", False), ("db.back", True)):
        tbl = catalog.create_table(name, schema=ROWS.schema, properties={"format-version": "1"})
        tbl.append(ROWS)
        imported = Path(root_of(tbl)) / "data" / "import-00000.parquet"
        imported.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(ROWS, imported)
        tbl.add_files([str(imported)])
        if between:
            tbl.overwrite(ROWS)
        tbl.add_files([str(imported)], check_duplicate_files=False)
        root, fmt = table_root(root_of(tbl))
        log, events = read_table(root, fmt)
        commits = [e for e in events if e.kind == "table_commit"]
        assert [c.detail["version"] for c in commits] == [s.timestamp_ms for s in tbl.snapshots()]
        findings = audited(Path(root_of(tbl)), tmp_path, name=f"{name}.duckdb").findings
        assert codes(findings) == ([] if between else ["CS202"]), [f.summary for f in findings]
    # upgraded to version 2: the older snapshots at the spec's 0, as pyiceberg reads them
    tbl = catalog.create_table("db.upgraded", schema=ROWS.schema, properties={"format-version": "1"})
    tbl.append(ROWS)
    with tbl.transaction() as tx:
        tx.upgrade_table_version(2)
    tbl.append(ROWS)
    # as Java Iceberg writes them: SnapshotParser.toJson writes sequence-number only when it is
    # above INITIAL_SEQUENCE_NUMBER (0); pyiceberg writes the 0
    for meta in (Path(root_of(tbl)) / "metadata").glob("*.metadata.json"):
        doc = json.loads(meta.read_text())
        for snap in doc.get("snapshots") or []:
            if snap.get("sequence-number") == 0:
                del snap["sequence-number"]
        meta.write_text(json.dumps(doc))
    log, events = read_table(*table_root(root_of(tbl)))
    assert [e.detail["version"] for e in events if e.kind == "table_commit"] == [s.sequence_number for s in tbl.snapshots()] == [0, 1]


def test_audit_of_the_log_directory_lists_the_whole_table(tmp_path):
    table = tmp_path / "t"
    write_deltalake(str(table), ROWS, partition_by=["dt"])
    stray = table / "dt=2024-01-01" / "part-00000-00000000-0000-0000-0000-000000000000-c000.snappy.parquet"
    stray.write_bytes(b"PAR1")
    os.utime(stray, (1, 1))
    write_deltalake(str(table), ROWS, mode="append", partition_by=["dt"])
    assert codes(audited(table / "_delta_log", tmp_path).findings) == ["CS201"]


def test_audit_through_a_hadoop_filesystem_reads_the_table_log(tmp_path, spark):
    """``audit file:///…`` lists and reads the table through Spark's Hadoop FileSystem: a
    healthy table stays healthy, a killed writer's file is an orphan, keyed like the local read."""
    table = tmp_path / "t"
    delta_appends(table, writers=2)
    DeltaTable(str(table)).optimize.compact()
    DeltaTable(str(table)).create_checkpoint()
    with Store(tmp_path / "h.duckdb") as store:
        result = audit(store, f"file://{table}", spark=spark)
        assert result.findings == [] and result.unlisted == []
        stray = table / "dt=2024-01-01" / "part-00000-00000000-0000-0000-0000-000000000000-c000.snappy.parquet"
        stray.write_bytes(b"PAR1")
        os.utime(stray, (1, 1))
        result = audit(store, f"file://{table}/_delta_log", spark=spark)
        assert codes(result.findings) == ["CS201"] and result.findings[0].detail["paths"] == [str(stray)]


def test_iceberg_through_a_hadoop_filesystem_reads_the_same_events(tmp_path, spark, catalog):
    from commitsleuth.parsers.lakehouse import hadoop_table

    tbl = iceberg_table(catalog)
    tbl.append(ROWS)
    tbl.overwrite(ROWS)
    files, fmt = hadoop_table(tbl.metadata.location + "/metadata", spark)
    _, through = read_table(files, fmt)
    root, fmt = table_root(root_of(tbl))
    _, local = read_table(root, fmt)
    assert [(e.kind, e.path, e.partition_spec, e.location) for e in through] == \
        [(e.kind, e.path, e.partition_spec, e.location) for e in local]
    with Store(tmp_path / "h.duckdb") as store:
        assert audit(store, tbl.metadata.location, spark=spark).findings == []


def test_ingest_of_a_directory_reads_the_tables_below_it_as_tables(tmp_path, catalog):
    lake = tmp_path / "lake"
    delta_appends(lake / "events", writers=1)
    tbl = catalog.create_table("db.w", schema=ROWS.schema, location=f"file://{lake}/ice")
    tbl.append(ROWS)
    (lake / "notes.txt").write_text("nothing of ours\n")
    with Store(tmp_path / "s.duckdb") as store:
        report = ingest(store, [str(lake)])
        rows = store.con.execute("SELECT uri, kind, format, status FROM sources ORDER BY uri").fetchall()
    assert rows == [(f"{lake}/events/_delta_log", "table_log", "delta-log", "ok"),
                    (f"{lake}/ice/metadata", "table_log", "iceberg-metadata", "ok"),
                    (f"{lake}/notes.txt", "file", None, "skipped")]
    assert not report.failed


def test_every_data_file_deleted_is_missing(tmp_path):
    table = tmp_path / "t"
    write_deltalake(str(table), ROWS, partition_by=["dt"])
    for p in table.rglob("*.parquet"):
        p.unlink()
    findings = audited(table, tmp_path).findings
    assert codes(findings) == ["CS203", "CS203"]
    assert [f.partition_spec for f in findings] == ["dt=2024-01-01", "dt=2024-01-02"]


def test_files_added_from_outside_the_table_root_are_not_judged_missing(tmp_path, catalog):
    import pyarrow.parquet as pq

    tbl = catalog.create_table("db.u", schema=ROWS.schema)
    tbl.append(ROWS)
    data = tmp_path / "external.parquet"
    pq.write_table(ROWS, data)
    tbl.add_files([str(data)])
    assert audited(Path(root_of(tbl)), tmp_path).findings == []


def test_iceberg_rolled_back_snapshot_files_are_not_live_nor_orphans(tmp_path, catalog):
    """After rollback_to_snapshot the rolled-back snapshot's files are not in the table: gone
    from storage they are not missing; still there they are not orphans (a snapshot names them)."""
    tbl = iceberg_table(catalog)
    tbl.append(ROWS)
    kept = tbl.current_snapshot().snapshot_id
    tbl.append(pa.table({"dt": ["2024-03-01"], "v": [3]}))
    tbl.manage_snapshots().rollback_to_snapshot(kept).commit()
    rolled_back = list(Path(root_of(tbl), "data").glob("dt=2024-03-01/*.parquet"))
    assert rolled_back
    assert audited(Path(root_of(tbl)), tmp_path, "1.duckdb").findings == []
    for p in rolled_back:
        p.unlink()
    assert audited(Path(root_of(tbl)), tmp_path, "2.duckdb").findings == []


@pytest.mark.parametrize("name", ["v6_simplekeygen_nonhivestyle_overwritetable", "v8_simplekeygen_nonhivestyle"])
def test_hudi_cleaned_file_slices_are_not_missing(tmp_path, name):
    """What Hudi's cleaner deletes: base files of file groups a replacecommit retired and older
    slices of file groups updated since. Only the latest slice of a live file group is live."""
    table = hudi_table(tmp_path, name)
    root, fmt = table_root(str(table))
    _, events = read_table(root, fmt)
    retired = {e.path for e in events if e.kind == "table_remove"}
    assert retired  # the v6 table's overwrite replaced every file group; the v8 table updated one
    for path in retired:
        os.remove(path)
    assert audited(table, tmp_path).findings == []
    # the latest slice deleted is missing
    live = sorted({e.path for e in events if e.kind == "table_add"} - retired)
    os.remove(live[0])
    assert codes(audited(table, tmp_path, "b.duckdb").findings) == ["CS203"]


def test_iceberg_streaming_epoch_committed_twice_is_a_replay(tmp_path, catalog):
    """Spark's Iceberg streaming sink stamps each snapshot with its query and epoch
    (spark.sql.streaming.queryId / epochId); the same stamp twice is one batch committed twice."""
    tbl = iceberg_table(catalog)
    stamp = {"spark.sql.streaming.queryId": "6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", "spark.app.id": "app-20240101000000-0002"}
    for epoch in ("0", "1", "1"):
        tbl.append(ROWS, snapshot_properties={**stamp, "spark.sql.streaming.epochId": epoch})
    findings = audited(Path(root_of(tbl)), tmp_path).findings
    assert codes(findings) == ["CS205"]
    assert findings[0].detail["stamp"] == [stamp["spark.sql.streaming.queryId"], "1"]
    assert findings[0].detail["versions"] == ["2", "3"]
    assert "app-20240101000000-0002" in findings[0].actors


def test_iceberg_streaming_epochs_once_each_are_no_replay(tmp_path, catalog):
    tbl = iceberg_table(catalog)
    for epoch in ("0", "1", "2"):
        tbl.append(ROWS, snapshot_properties={"spark.sql.streaming.queryId": "q-1", "spark.sql.streaming.epochId": epoch})
    assert audited(Path(root_of(tbl)), tmp_path).findings == []


@pytest.mark.parametrize("name", ["v6_simplekeygen_nonhivestyle_overwritetable", "v8_simplekeygen_nonhivestyle"])
def test_hudi_speculative_twin_of_a_committed_base_file(tmp_path, name):
    """A second attempt of one task wrote the same file group and instant under another write
    token, and both files stayed (apache/hudi#9615): the committed file copied under the
    token a speculative attempt (same partition and stage, another TID) would use."""
    import shutil as sh

    table = hudi_table(tmp_path, name)
    root, fmt = table_root(str(table))
    _, events = read_table(root, fmt)
    last = max(e.detail["version"] for e in events if e.kind == "table_add")
    committed = next(e for e in events if e.kind == "table_add" and e.detail["version"] == last)
    file_id, token, rest = committed.file_name.split("_", 2)
    part, stage, tid = token.split("-")
    twin = Path(committed.path).with_name(f"{file_id}_{part}-{stage}-{int(tid) + 1000}_{rest}")
    sh.copy(committed.path, twin)
    findings = audited(table, tmp_path).findings
    assert codes(findings) == ["CS202"]
    assert findings[0].detail["how"] == "twins"
    assert sorted(findings[0].detail["paths"]) == sorted([committed.path, str(twin)])
    assert findings[0].actors == sorted([f"TID {tid}", f"TID {int(tid) + 1000}"])


def test_ingest_of_a_table_reports_progress_in_bytes_and_events(tmp_path):
    table = tmp_path / "t"
    delta_appends(table, writers=2)
    advanced, counted = [], []
    with Store(tmp_path / "s.duckdb") as store:
        report = ingest(store, [str(table)], progress=advanced.append, on_events=counted.append)
    log_bytes = sum(p.stat().st_size for p in (table / "_delta_log").glob("*.json"))
    assert sum(advanced) == log_bytes
    assert sum(counted) == report.events > 0


def test_iceberg_partition_value_with_quotes_keeps_its_encoded_directory(tmp_path, catalog):
    """Iceberg writes each file's path as its directory is named on storage, the partition value
    URL-encoded once (``dt=%22eu%22``): unlike Delta's paths (URIs by its protocol) it is never
    decoded, or the live file under it is listed as an orphan (CS201) of a ``dt="eu"`` nobody wrote."""
    tbl = iceberg_table(catalog)
    tbl.append(pa.table({"dt": ['"eu"', "eu"], "v": [1, 2]}, schema=ROWS.schema))
    assert sorted(p.name for p in (Path(root_of(tbl)) / "data").iterdir()) == ["dt=%22eu%22", "dt=eu"]
    result = audited(Path(root_of(tbl)), tmp_path)
    assert result.findings == [] and result.unlisted == []
