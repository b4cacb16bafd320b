"""A double commit's cause and remedy fit its engine and writer (issue 32): a Spark task writing
its own files gets Spark's remedy, Hive's merge mapper and Hive on Tez get theirs, and the cause
never says both attempts finished when one was killed."""

from __future__ import annotations

from commitsleuth.forensics.analyze import analyze
from commitsleuth.forensics.detectors.double_commit import DoubleCommit
from commitsleuth.forensics.remedies import cause_and_remedy, fit
from commitsleuth.store import Store

from test_cli_actors import SPARK_EVENTS
from test_detector_cases import load_case, scenario

GENERAL = DoubleCommit.sections()
MERGE = ("2013-05-30 10:13:59,124 INFO  [attempt_201304111550_268224_m_000005_0]: exec.RCFileMergeMapper "
         "(RCFileMergeMapper.java:close(250)) - renamed path a to b")


def _spark(status="killed", rule="hive_name"):
    return [{"kind": "spark_attempt", "label": "app-1/stage 1.0/task 1 attempt 0 (TID 3) on h1", "status": status,
             "rule": rule},
            {"kind": "spark_attempt", "label": "app-1/stage 1.0/task 1 attempt 1 (TID 5) on h2", "status": "success",
             "rule": rule}]


def _texts(objects, raws=()):
    return cause_and_remedy("CS101", fit(objects, list(raws)), GENERAL["cause"], GENERAL["remedy"])


def test_a_spark_task_writing_its_own_files_gets_sparks_remedy():
    cause, remedy = _texts(_spark())
    assert "foreachPartition" in cause and "RCFileMergeMapper" not in remedy and "HIVE-3149" not in remedy
    assert remedy.startswith("Write through Spark's writers")
    assert cause.endswith("Not every attempt finished (app-1/stage 1.0/task 1 attempt 0 (TID 3) on h1 was killed), "
                          "yet what each had written stayed: ending an attempt does not remove the files it "
                          "already wrote.")
    # negative twin: both attempts succeeded, so no attempt is said to have ended early
    cause, _ = _texts(_spark(status="success"))
    assert "Not every attempt finished" not in cause
    # through a committer (part files in an attempt dir): the committer's remedy
    _, remedy = _texts(_spark(rule="hadoop_attempt"))
    assert remedy.startswith("Use a committer that commits through Spark's output commit coordination")


def test_hive_and_tez_get_theirs_and_the_unknown_keeps_the_general_text():
    hive = [{"kind": "hadoop_attempt", "label": "attempt_201304111550_268224_m_000005_0"},
            {"kind": "hadoop_attempt", "label": "attempt_201304111550_268234_m_000005_1"}]
    _, remedy = _texts(hive, [MERGE])
    assert "hive.merge.mapfiles=false" in remedy and "HIVE-3149" in remedy and "spark.speculation" not in remedy
    assert _texts(hive) == (GENERAL["cause"], GENERAL["remedy"])  # no merge mapper in the evidence
    tez = [{"kind": "hadoop_attempt", "label": "attempt_1704448800000_0007_1_01_000000_0"}]
    _, remedy = _texts(tez)
    assert remedy.startswith("Set tez.am.speculation.enabled=false") and "HIVE-3149" not in remedy
    assert "both attempts finished" not in GENERAL["cause"]


def test_analyze_stores_the_fitted_texts(tmp_path):
    with Store(tmp_path / "s.duckdb") as store:
        load_case(store, tmp_path / "logs", {"events": SPARK_EVENTS})
        (spark,) = analyze(store)
        assert spark.remedy.startswith("Write through Spark's writers")
        assert "was killed" in spark.explanation
        stored = store.con.execute("SELECT explanation, remedy FROM findings").fetchone()
        assert stored == (spark.explanation, spark.remedy)
    with Store(tmp_path / "t.duckdb") as store:
        load_case(store, tmp_path / "logs2", scenario("seed001_tez_double_commit"))
        (tez,) = analyze(store)
        assert tez.remedy.startswith("Set tez.am.speculation.enabled=false")
