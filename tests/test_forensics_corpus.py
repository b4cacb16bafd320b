"""Detectors over real logs nobody here wrote (tests/corpus)."""

from __future__ import annotations

from commitsleuth.forensics.analyze import analyze
from commitsleuth.ingest import ingest
from commitsleuth.store import Store


def test_speculative_attempt_killed_by_another_success_is_no_double_commit(corpus, tmp_path):
    """Spark's own test log: task 3 of stage 0 ran twice; the speculative copy was killed."""
    log = corpus / "spark-events" / "application_1628109047826_1317105"
    with Store(tmp_path / "s.duckdb") as store:
        report = ingest(store, [str(log)])
        assert [r.status for r in report.results] == ["ok"]
        ends = store.con.execute(
            "SELECT attempt_id, speculative, status, detail->>'kill_reason' FROM events "
            "WHERE kind = 'attempt_end' AND task_id = '0.3' ORDER BY attempt_id"
        ).fetchall()
        assert ends == [
            ("task 3.0 in stage 0.0 (TID 3)", False, "success", None),
            ("task 3.1 in stage 0.0 (TID 4)", True, "killed", "another attempt succeeded"),
        ]
        findings = analyze(store)
        assert [f for f in findings if f.code == "CS101"] == []
        assert findings == []


def test_real_spark_and_hadoop_logs_raise_no_false_alarm(corpus, tmp_path):
    """Every real event log and the loghub Spark/Hadoop logs: healthy runs, no finding."""
    paths = [str(corpus / "spark-events"), str(corpus / "loghub" / "Spark_2k.log"),
             str(corpus / "loghub" / "Hadoop_2k.log")]
    with Store(tmp_path / "s.duckdb") as store:
        ingest(store, paths)
        assert store.count("events") > 0
        assert [(f.code, f.summary) for f in analyze(store)] == []
