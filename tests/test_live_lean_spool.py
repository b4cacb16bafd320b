"""Live capture's lean spool writer (listener/LeanEventLoggingListener.java): a successful task's
end is Spark's own line less the fields left out, every other event Spark's own; where the lean
writer cannot be had, Spark's writer takes the spool and the capture says why."""

from __future__ import annotations

import json
from pathlib import Path

from commitsleuth.ingest import ingest
from commitsleuth.listener import attach, lean_writer
from commitsleuth.store import Store


def _pruned(event: dict) -> dict:
    """Spark's TaskEnd as the lean writer writes it: no accumulables, no executor metrics, of the
    task metrics the run time and the output metrics."""
    info = {k: v for k, v in event["Task Info"].items() if k != "Accumulables"}
    metrics = event["Task Metrics"]
    kept = {"Executor Run Time": metrics["Executor Run Time"], "Output Metrics": metrics["Output Metrics"]}
    return {k: (info if k == "Task Info" else kept if k == "Task Metrics" else v)
            for k, v in event.items() if k != "Task Executor Metrics"}


def _task_ends(db: Path) -> dict[int, str]:
    with Store(db, read_only=True) as s:
        return dict(s.query("select event_key, raw from events where kind = 'attempt_end'")[1])


def _app_log(sc) -> Path:
    log_dir = Path(sc.getConf().get("spark.eventLog.dir").removeprefix("file:"))
    (log,) = log_dir.glob(f"*{sc.applicationId}*")
    return log


def test_a_successful_task_end_is_sparks_own_line_less_the_fields_left_out(spark, tmp_path):
    live = tmp_path / "live.duckdb"
    with attach(spark, db=live) as handle:
        spark.range(0, 1000, 1, 4).selectExpr("id", "repeat('x', 50) AS s").write.parquet(str(tmp_path / "out"))
        assert handle.flush()
    assert handle.stats.spool_writer == "lean"
    from_log = tmp_path / "log.duckdb"
    with Store(from_log) as s:
        (r,) = ingest(s, [str(_app_log(spark.sparkContext))]).results
        assert r.status == "ok"
    lean, full = _task_ends(live), _task_ends(from_log)
    assert len(lean) >= 4 and set(lean) <= set(full)
    written = 0
    for key, line in lean.items():
        spark_line = json.loads(full[key])
        assert spark_line["Task End Reason"]["Reason"] == "Success"
        assert list(json.loads(line).items()) == list(_pruned(spark_line).items())
        assert len(line) < len(full[key]) / 2
        written += json.loads(line)["Task Metrics"]["Output Metrics"]["Bytes Written"] > 0
    assert written >= 4  # the write's tasks, whose output metrics the lean line keeps


def test_a_failed_task_end_is_written_by_spark_whole(spark, tmp_path):
    live = tmp_path / "live.duckdb"
    with attach(spark, db=live) as handle:
        try:
            spark.range(0, 10, 1, 1).selectExpr("raise_error('lean writer test')").collect()
        except Exception:  # noqa: BLE001 - the job is meant to fail
            pass
        assert handle.flush()
    (line,) = [raw for raw in _task_ends(live).values() if "lean writer test" in raw]
    event = json.loads(line)
    assert event["Task End Reason"]["Reason"] == "ExceptionFailure"
    assert "Task Executor Metrics" in event and "Executor Deserialize Time" in event["Task Metrics"]


def test_spark_writes_the_spool_when_the_lean_writer_is_off(spark, tmp_path, monkeypatch):
    monkeypatch.setenv(lean_writer.ENV, "0")
    live = tmp_path / "live.duckdb"
    with attach(spark, db=live) as handle:
        spark.range(0, 10, 1, 2).count()
        assert handle.flush()
    assert handle.stats.spool_writer == f"spark ({lean_writer.ENV}=0)"
    lines = list(_task_ends(live).values())
    assert len(lines) >= 2 and all("Task Executor Metrics" in line for line in lines)


def test_a_jvm_without_a_compiler_leaves_the_spool_to_spark(spark, tmp_path, monkeypatch):
    def unavailable(sc):
        raise lean_writer.LeanWriterUnavailable("the JVM has no Java compiler (a JRE)")

    monkeypatch.setattr(lean_writer, "lean_listener_class", unavailable)
    live = tmp_path / "live.duckdb"
    with attach(spark, db=live) as handle:
        spark.range(0, 10, 1, 2).count()
        assert handle.flush()
    assert handle.stats.spool_writer == "spark (the JVM has no Java compiler (a JRE))"
    assert len(_task_ends(live)) >= 2


def test_the_lean_writer_is_compiled_once_into_the_cache_and_loaded_once_per_jvm(spark, tmp_path, monkeypatch):
    monkeypatch.setenv(lean_writer.CACHE_ENV, str(tmp_path / "cache"))
    cls = lean_writer.lean_listener_class(spark.sparkContext)
    (compiled,) = (tmp_path / "cache" / "jvm").glob("*/commitsleuth/LeanEventLoggingListener.class")
    before = compiled.stat().st_mtime_ns
    again = lean_writer.lean_listener_class(spark.sparkContext)
    assert cls.getName() == again.getName() == lean_writer.CLASS
    assert again.equals(cls)  # the class this JVM loaded, not a copy in a new class loader
    assert compiled.stat().st_mtime_ns == before
    assert [p.name for p in (tmp_path / "cache" / "jvm").iterdir()] == [compiled.parent.parent.name]


def test_a_cache_that_cannot_be_written_leaves_the_spool_to_spark(spark, tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv(lean_writer.CACHE_ENV, str(tmp_path / "a-file" / "cache"))
    live = tmp_path / "live.duckdb"
    with attach(spark, db=live) as handle:
        spark.range(0, 10, 1, 2).count()
        assert handle.flush()
    assert handle.stats.spool_writer.startswith("spark (") and "a-file" in handle.stats.spool_writer
    assert len(_task_ends(live)) >= 2
