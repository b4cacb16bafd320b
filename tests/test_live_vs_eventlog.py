"""One decoder for live capture and event logs: a job captured live and the same job read back
from Spark's own event log give the same events."""

from __future__ import annotations

from pathlib import Path

from commitsleuth.ingest import ingest
from commitsleuth.store import Store

COMPARED = ("job_start", "job_end", "stage_start", "stage_end", "attempt_start", "attempt_end")
FIELDS = ("kind, app_id, job_id, stage_id, stage_attempt, task_id, attempt_id, attempt_no, speculative, "
          "executor_id, host, status, ts, size, detail")


def _events(db, jobs=None, stages=None):
    with Store(db, read_only=True) as s:
        rows = s.query(f"select {FIELDS} from events where kind in {COMPARED}")[1]
    return sorted((r for r in rows if (r[2] in jobs if r[0].startswith("job") else r[3] in stages)), key=repr)


def test_a_job_captured_live_equals_the_same_job_read_from_the_event_log(spark, tmp_path):
    from commitsleuth.listener import attach

    sc = spark.sparkContext
    live = tmp_path / "live.duckdb"
    with attach(spark, db=live) as handle:
        spark.range(0, 100, 1, 4).selectExpr("id % 3 AS k").groupBy("k").count().collect()
        assert handle.flush()
    with Store(live, read_only=True) as s:
        jobs = {r[0] for r in s.query("select job_id from events where kind = 'job_end'")[1]}
        stages = {r[0] for r in s.query("select stage_id from events where kind = 'stage_end'")[1]}
    assert jobs and stages
    log_dir = Path(sc.getConf().get("spark.eventLog.dir").removeprefix("file:"))
    # Spark 4 writes a rolling directory, eventlog_v2_<appId>/, still marked in progress
    # (Spark flushes it at each job end); older versions one <appId>.inprogress file.
    (log,) = log_dir.glob(f"*{sc.applicationId}*")
    from_log = tmp_path / "log.duckdb"
    with Store(from_log) as s:
        (r,) = ingest(s, [str(log)]).results
        assert r.status == "ok" and "still running" in r.reason
    live_events, log_events = _events(live, jobs, stages), _events(from_log, jobs, stages)
    assert len(live_events) >= 2 * 4 + 4
    assert live_events == log_events
