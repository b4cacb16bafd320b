"""Live capture on a real local PySpark session: the attach API and the local scenarios."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyspark
import pytest
from conftest import kill_driver

from commitsleuth.listener import attach
from commitsleuth.listener.capture import FLUSH_INTERVAL, MAX_LOAD_WAIT
from commitsleuth.listener.hooks import listener_class
from commitsleuth.listener.jvm import listener_methods
from commitsleuth.store import Store

DRIVER = Path(__file__).with_name("live_driver.py")
# seconds: what a killed driver may lose at most, besides the longest load's own time (a load
# waits up to MAX_LOAD_WAIT from the start of the one before, checked at each read of the spool;
# one FLUSH_INTERVAL more for the event's way through Spark's bus into the spool)
FLUSH_BOUND = MAX_LOAD_WAIT + 2 * FLUSH_INTERVAL
ALIVE_AFTER = 2 * FLUSH_INTERVAL + 1  # s the SIGKILL test's driver must run on after the bound passed


def rows(db, sql, params=None):
    with Store(db, read_only=True) as store:
        return store.con.execute(sql, params or []).fetchall()


def bus_listeners(spark) -> int:
    return spark.sparkContext._jsc.sc().listenerBus().listeners().size()


def test_attach_captures_a_job_and_detach_leaves_spark_as_it_was(spark, db_path):
    spark.range(1).count()  # Spark SQL adds its own listeners on first use
    before = bus_listeners(spark)
    with attach(spark, db=db_path) as handle:
        assert bus_listeners(spark) == before + 1  # the spool writer alone: no per-event Python
        spark.range(0, 100, 1, 7).count()
        assert handle.flush()
        kinds = dict(rows(db_path, "SELECT kind, count(*) FROM events GROUP BY kind"))
    assert bus_listeners(spark) == before
    assert kinds["app_start"] == 1 and kinds["job_start"] == kinds["job_end"] >= 1
    ends = rows(db_path, """SELECT stage_id, task_id, attempt_no, speculative, executor_id, status, ts
                            FROM events WHERE kind = 'attempt_end'""")
    tasks = rows(db_path, "SELECT sum((detail->>'tasks')::INT) FROM events WHERE kind = 'stage_start'")[0][0]
    assert len(ends) == tasks >= 7
    assert all(e[5] == "success" and e[3] is False and e[2] == 0 and e[6] is not None for e in ends)
    assert all(e[1] == f"{e[0]}.{e[1].split('.')[1]}" for e in ends)
    source = rows(db_path, "SELECT uri, kind, status, events FROM sources WHERE kind = 'live'")
    assert source == [(f"live:{spark.sparkContext.applicationId}", "live", "ok", handle.stats.events)]
    assert handle.stats.errors == 0
    assert not Path(f"{db_path}.spool").exists(), "a fully loaded spool is removed"


def test_loads_merge_their_row_groups_only_every_merge_every_loads(spark, db_path, monkeypatch):
    """Each load's commit checkpoints its rows into a row group of their own; DuckDB may merge
    the small ones (rewriting every row of them) only at every MERGE_EVERY-th load that appends:
    a busy job's rows are not rewritten load after load, a quiet job's loads leave fewer than
    MERGE_EVERY row groups."""
    from commitsleuth.listener import capture

    monkeypatch.setattr(capture, "MERGE_EVERY", 3)
    groups = []
    with attach(spark, db=db_path, interval=60, inventory=False) as handle:  # loads when flushed
        for _ in range(6):
            spark.range(0, 10, 1, 2).count()
            assert handle.flush()
            groups.append(rows(db_path, "SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('events')")[0][0])
        assert handle.stats.errors == 0
    assert groups == [1, 2, 1, 2, 3, 1]


def test_python_listener_implements_every_method_of_the_running_spark(spark):
    methods = listener_methods(spark.sparkContext._jvm)
    assert len(methods) >= 35 and "onTaskEnd" in methods and "onOtherEvent" in methods
    cls = listener_class(methods)
    assert all(callable(getattr(cls, m)) for m in methods)
    assert cls.Java.implements == ["org.apache.spark.scheduler.SparkListenerInterface"]


def test_events_wait_in_the_spool_while_another_process_locks_the_store(spark, db_path, caplog):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb,sys; c=duckdb.connect(sys.argv[1]); print('locked', flush=True); "
         "sys.stdin.read()", str(db_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with caplog.at_level(logging.WARNING, logger="commitsleuth.listener"):
            handle = attach(spark, db=db_path)
            spark.range(0, 50, 1, 5).count()
            assert handle.flush(timeout=2) is False  # nothing can be written yet
            spark.range(0, 50, 1, 5).count()
            handle.flush(timeout=1)
        told = [r for r in caplog.records if "locked by another process" in r.getMessage()]
        assert len(told) == 1, "the user is told once"
        assert handle.stats.lock_waits >= 2
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    handle.detach()
    jobs = rows(db_path, "SELECT count(*) FROM events WHERE kind = 'job_end'")[0][0]
    ends = rows(db_path, "SELECT count(*) FROM events WHERE kind = 'attempt_end'")[0][0]
    assert jobs >= 2 and ends >= 10, "nothing was lost while the store was locked"


def test_the_spool_is_scrubbed_at_every_read_while_the_load_waits(spark, db_path, tmp_path):
    """Loads wait after a costly one; what Spark writes unredacted (a failure reason) is masked
    in the spool at the next read all the same, not at the next load."""
    secret = "hunter2-scrub-before-load"
    spool = tmp_path / "spool"
    # load_share that small: after the first load the next waits max_wait, a minute
    with attach(spark, db=db_path, interval=0.2, max_wait=60.0, load_share=1e-9, spool_dir=spool,
                keep_spool=True) as handle:
        deadline = time.monotonic() + 30
        while handle.stats.loads < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert handle.stats.loads == 1
        with pytest.raises(Exception, match="USER_RAISED_EXCEPTION|password"):
            spark.range(0, 1, 1, 1).selectExpr(f"raise_error('password={secret}') AS x").collect()
        deadline = time.monotonic() + 20
        while True:
            text = b"".join(p.read_bytes() for p in spool.rglob("*") if p.is_file())
            failed = b'"Reason":"ExceptionFailure"' in text
            if (failed and secret.encode() not in text) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert failed and secret.encode() not in text, "the failure reached the spool and was masked"
        assert handle.stats.loads == 1, "no load was due: the scrub did not wait for one"
        assert rows(db_path, "SELECT count(*) FROM events WHERE status = 'failed'") == [(0,)]
        assert handle.flush()
        stored = rows(db_path, "SELECT count(*), bool_or(contains(raw || detail, ?)) FROM events "
                               "WHERE status = 'failed'", [secret])
    assert stored[0][0] >= 1 and stored[0][1] is False


def test_a_block_the_fast_path_fails_on_is_decoded_line_by_line_and_counted_once(spark, db_path):
    """A fast-path failure mid-block: the block's lines go through the decoder one by one, and
    what the failed call had counted (lines, rejects) is not counted twice. The fast path's next
    block then agrees with the verification's decoder, which must have read the same lines.
    Rejects reach the store's ``rejects`` table by reason, each once across loads."""
    spark.range(1).count()
    with attach(spark, db=db_path) as handle:
        real = handle.fast.table

        def fails_half_way(offset, data):  # what a block that fails half-way has counted
            handle.parse.lines += data.count(b"\n") // 2
            handle.parse.reject("counted before the failure", 1, "{}")
            raise RuntimeError("fast path failed")

        def rejects_one(offset, data):  # a block with a line both decoders reject (the verification's too)
            for stats in (handle.parse, *(handle.fast.reference[1:] if handle.fast.reference else ())):
                stats.reject("not an event", 3, "no JSON here")
            return real(offset, data)

        handle.fast.table = fails_half_way
        spark.range(0, 40, 1, 4).count()
        assert handle.flush()
        handle.fast.table = rejects_one
        spark.range(0, 20, 1, 2).count()  # the fast path's next block, verified by the decoder in tests
        assert handle.flush()
        spark.range(0, 20, 1, 2).count()
        assert handle.flush()
    spool_lines, rejected = rows(db_path, "SELECT lines, rejected FROM sources WHERE kind = 'live'")[0]
    assert handle.stats.errors >= 1 and handle.stats.last_error.endswith("fast path failed")
    assert "counted before the failure" not in handle.parse.rejects
    # each reject stored once, by reason, as ingest stores a file's
    calls = handle.parse.rejects["not an event"][0]
    assert calls >= 2 and handle.stats.rejected == rejected == calls
    assert rows(db_path, "SELECT reason, count, first_line, sample FROM rejects") == [
        ("not an event", calls, 3, "no JSON here")]
    assert spool_lines == handle.stats.lines == handle.parse.lines
    tasks = rows(db_path, "SELECT sum((detail->>'tasks')::INT) FROM events WHERE kind = 'stage_start'")[0][0]
    assert rows(db_path, "SELECT count(*) FROM events WHERE kind = 'attempt_end'") == [(tasks,)] and tasks >= 4


def test_another_process_reads_the_store_while_capture_runs(spark, db_path):
    cli = [str(Path(sys.executable).with_name("commitsleuth")), "query", "--format", "json", "--db", str(db_path),
           "select count(*) AS n from events where kind = 'job_end'"]
    seen = []
    with attach(spark, db=db_path) as handle:
        for _ in range(3):
            spark.range(0, 20, 1, 2).count()
            handle.flush()
            proc = subprocess.run(cli, capture_output=True, text=True, timeout=60)
            assert proc.returncode == 0, proc.stderr
            seen.append(json.loads(proc.stdout)[0]["n"])
    assert seen == sorted(seen) and seen[-1] >= 3 and seen[0] >= 1


@pytest.fixture(scope="module")
def partial_runs(spark, tmp_path_factory):
    """The same failing write under committer algorithm 2 and 1, each captured into a store."""
    tmp = tmp_path_factory.mktemp("partial")
    results = {}
    hconf = spark.sparkContext._jsc.hadoopConfiguration()
    key = "mapreduce.fileoutputcommitter.algorithm.version"
    old = hconf.get(key)
    try:
        for version in ("2", "1"):
            hconf.set(key, version)
            db, out = tmp / f"v{version}.duckdb", tmp / f"out-v{version}"
            # Partition 7 sleeps, so the seven others commit, then fails on every attempt.
            df = spark.range(0, 80, 1, 8).selectExpr(
                "id", "reflect('java.lang.Thread', 'sleep', if(spark_partition_id() = 7, bigint(4000), bigint(0))) AS z"
            ).selectExpr("if(spark_partition_id() = 7 AND coalesce(z, '') = coalesce(z, ''), raise_error('boom'), id) AS id")
            with attach(spark, db=db):
                with pytest.raises(Exception):
                    df.write.parquet(str(out))
            results[version] = (db, out)
    finally:
        hconf.set(key, old) if old is not None else hconf.unset(key)
    return results


def test_partial_output_of_a_failed_v2_write_is_on_record(partial_runs):
    """Algorithm v2 publishes task output at task commit: a failed job leaves 7 of 8 files."""
    key = "mapreduce.fileoutputcommitter.algorithm.version"
    for version, (db, out) in partial_runs.items():
        ends = rows(db, "SELECT status, location FROM events WHERE kind = 'query_end' AND location IS NOT NULL")
        assert ends == [("failed", "file://" + str(out))]
        conf = dict(rows(db, "SELECT detail->>'key', detail->>'value' FROM events WHERE kind = 'conf'"))
        assert conf[f"spark.hadoop.{key}"] == version
        failed = rows(db, "SELECT count(*) FROM events WHERE kind = 'attempt_end' AND status = 'failed'")[0][0]
        assert failed >= 1
    db2, out2 = partial_runs["2"]
    parts = rows(db2, """SELECT file_task, write_uuid, query_id FROM events
                         WHERE kind = 'file' AND file_name LIKE 'part-%' AND detail->>'leftover' IS NULL""")
    on_disk = sorted(p.name for p in out2.glob("part-*"))
    assert 0 < len(parts) == len(on_disk) < 8  # typically 7: the tasks that committed before the failure
    assert len({p[1] for p in parts}) == 1 and all(p[2] is not None for p in parts)
    db1, _ = partial_runs["1"]
    assert rows(db1, """SELECT count(*) FROM events WHERE kind = 'file' AND file_name LIKE 'part-%'
                        AND detail->>'leftover' IS NULL""") == [(0,)]


def test_partial_output_is_reported_for_v2_and_not_for_v1(partial_runs, cli):
    found = {}
    for version, (db, out) in partial_runs.items():
        result = cli("analyze", "--format", "json", "--db", db)
        found[version] = [f for f in json.loads(result.out) if f["name"] == "partial-output"]
    assert found["2"] and not found["1"], found
    assert all(f["location"] == "file://" + str(partial_runs["2"][1]) for f in found["2"])


def test_two_writers_on_one_partition_overlap_and_leave_two_write_jobs(spark, tmp_path):
    """Two threads of one session: a slow append and a dynamic overwrite of the same partition."""
    db, out = tmp_path / "two.duckdb", str(tmp_path / "table")
    errors = []

    def append():
        try:
            # One task, so the overwrite's task gets the other core and finishes first.
            (spark.range(0, 1, 1, 1)
             .selectExpr("id", "1 AS p", "reflect('java.lang.Thread', 'sleep', bigint(5000)) AS z")
             .write.mode("append").partitionBy("p").parquet(out))
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    with attach(spark, db=db) as handle:
        writer = threading.Thread(target=append)
        writer.start()
        time.sleep(1.5)
        (spark.range(10, 12, 1, 1).selectExpr("id", "1 AS p", "CAST(NULL AS STRING) AS z")
         .write.mode("overwrite").option("partitionOverwriteMode", "dynamic").partitionBy("p").parquet(out))
        writer.join(timeout=120)
        handle.flush()
    assert not errors and not writer.is_alive()
    writes = rows(db, """
        SELECT s.query_id, s.detail->'write'->>'mode', s.ts, e.ts, e.status
        FROM events s JOIN events e ON e.query_id = s.query_id AND e.kind = 'query_end'
        WHERE s.kind = 'query_start' AND s.location = ? ORDER BY s.ts""", ["file://" + out])
    assert [w[1] for w in writes] == ["Append", "Overwrite"]
    assert all(w[4] == "success" for w in writes)
    (_, _, start_a, end_a, _), (_, _, start_b, end_b, _) = writes
    assert start_a < start_b < end_a, "the writes overlap in time"
    # The last listing (after the append ended) shows both write jobs in p=1.
    last = rows(db, "SELECT max(source_id) FROM sources WHERE kind = 'inventory'")[0][0]
    uuids = rows(db, """
        SELECT partition_spec, count(DISTINCT write_uuid) FROM events
        WHERE kind = 'file' AND write_uuid IS NOT NULL AND detail->>'leftover' IS NULL
          AND event_id > (SELECT max(event_id) FROM events WHERE kind = 'query_end') - 1000000
        GROUP BY partition_spec""")
    assert last is not None
    assert ("p=1", 2) in uuids
    on_disk = {p.name.split("-", 2)[2][:36] for p in Path(out, "p=1").glob("part-*")}
    assert len(on_disk) == 2


def test_a_sigkilled_driver_leaves_every_event_older_than_the_flush_bound(tmp_path):
    db = tmp_path / "killed.duckdb"
    proc = subprocess.Popen([sys.executable, str(DRIVER), "sigkill", str(db)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    done: dict[int, float] = {}
    decided = None
    bound = FLUSH_BOUND
    try:
        deadline = time.monotonic() + 180
        for line in proc.stdout:
            fact = json.loads(line)
            if "job" in fact:
                done[fact["job"]] = fact["done"]
                # the bound the capture documents: a load's own time is part of it (a busy
                # driver's two task threads leave the capture's thread a share of the two cores)
                bound = max(bound, FLUSH_BOUND + fact["longest_load"])
            # Kill mid-run once a few jobs ended longer ago than the bound (and more are running),
            # and the driver has gone on running jobs for a few seconds since: a driver that did
            # not run at all meanwhile (its machine paused) had no time to load anything either.
            settled = [t for t in done.values() if t < time.time() - bound - 0.5]
            if decided is None and len(settled) >= 2:
                decided = time.time()
            if (decided is not None and done and max(done.values()) >= decided + ALIVE_AFTER) \
                    or time.monotonic() > deadline:
                break
        killed_at = time.time()
    finally:
        kill_driver(proc)
    assert len(done) >= 3, "the driver ran its jobs"
    old = [job for job, t in done.items() if t < killed_at - bound]
    assert len(old) >= 2
    stored = {int(j) for (j,) in rows(db, "SELECT job_id FROM events WHERE kind = 'job_end'")}
    assert set(old) <= stored
    # Every task of those jobs ended on record too.
    for job in old:
        stages = rows(db, "SELECT detail->'stages' FROM events WHERE kind = 'job_start' AND job_id = ?",
                      [str(job)])[0][0]
        for stage in json.loads(stages):
            expected = rows(db, "SELECT max((detail->>'tasks')::INT) FROM events "
                                "WHERE kind = 'stage_start' AND stage_id = ?", [stage])[0][0]
            if expected is None:
                continue  # a stage skipped (its shuffle output reused) never runs
            ended = rows(db, "SELECT count(*) FROM events WHERE kind = 'attempt_end' AND stage_id = ?",
                         [stage])[0][0]
            assert ended == expected, (job, stage)


def test_spark_stop_and_exit_without_detach_neither_hang_nor_lose_events(tmp_path):
    db = tmp_path / "stopped.duckdb"
    proc = subprocess.run([sys.executable, str(DRIVER), "stop", str(db)], capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    kinds = dict(rows(db, "SELECT kind, count(*) FROM events GROUP BY kind"))
    assert kinds["app_end"] == 1 and kinds["job_end"] == kinds["job_start"] >= 1
    tasks = rows(db, "SELECT sum((detail->>'tasks')::INT) FROM events WHERE kind = 'stage_start'")[0][0]
    assert kinds["attempt_end"] == tasks >= 5
    assert rows(db, "SELECT status FROM sources WHERE kind = 'live'") == [("ok",)]


def test_with_hooks_a_job_end_loads_at_once_and_detach_takes_both_listeners_off(spark, db_path):
    """hooks=True: the Python listener's onJobEnd wakes the capture's thread, so the job's events
    reach the store without a flush, long before the timed load (a minute away here)."""
    spark.range(1).count()
    before = bus_listeners(spark)
    handle = attach(spark, db=db_path, interval=60.0, max_wait=60.0, hooks=True)
    try:
        assert bus_listeners(spark) == before + 2  # the spool writer and the Python listener
        spark.range(0, 60, 1, 6).count()
        stored, deadline = [], time.monotonic() + 20
        while not stored and time.monotonic() < deadline:
            time.sleep(0.5)
            try:
                stored = rows(db_path, "SELECT count(*) FROM events WHERE kind = 'job_end' HAVING count(*) > 0")
            except Exception:  # noqa: BLE001 - not created yet, or locked by a load just now
                stored = []
        assert stored, "the job's end reached the store without a flush"
        assert handle.stats.loads >= 1 and handle.stats.errors == 0
    finally:
        handle.detach()
    assert bus_listeners(spark) == before


def test_with_hooks_spark_stop_loads_everything_before_the_driver_exits(tmp_path):
    db = tmp_path / "stopped-hooks.duckdb"
    proc = subprocess.run([sys.executable, str(DRIVER), "stop-hooks", str(db)], capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    kinds = json.loads(proc.stdout.strip().splitlines()[-1])["kinds"]
    assert kinds.get("app_end") == 1, kinds
    assert kinds["job_end"] == kinds["job_start"] >= 1 and kinds["attempt_end"] >= 5


@pytest.mark.skipif(int(pyspark.__version__.split(".")[0]) < 4,
                    reason="Hadoop's manifest committer ships with Hadoop 3.3.5+, PySpark 4+")
def test_a_committers_success_manifest_is_read_and_names_the_committed_write_job(spark, tmp_path):
    db, out = tmp_path / "manifest.duckdb", tmp_path / "out"
    hconf = spark.sparkContext._jsc.hadoopConfiguration()
    key = "mapreduce.outputcommitter.factory.scheme.file"
    hconf.set(key, "org.apache.hadoop.mapreduce.lib.output.committer.manifest.ManifestCommitterFactory")
    try:
        with attach(spark, db=db):
            spark.range(0, 10, 1, 2).write.csv(str(out))
    finally:
        hconf.unset(key)
    (manifest,) = rows(db, "SELECT detail->'manifest' FROM events WHERE kind = 'file' AND file_name = '_SUCCESS'")[0]
    manifest = json.loads(manifest)
    assert manifest["committer"].endswith("ManifestCommitter") and manifest["success"] is True
    assert manifest["jobIdSource"] == "spark.sql.sources.writeJobUUID"
    assert manifest["name"].startswith("org.apache.hadoop")
    commits = rows(db, "SELECT job_id, location FROM events WHERE kind = 'job_commit'")
    assert commits == [(manifest["jobId"], "file://" + str(out))]
