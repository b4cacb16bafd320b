"""A Spark event value of a JSON type Spark never writes there (an id as text or a fraction, a
time as text, a boolean as a number, an object as a list, an id beyond its column's range):
its line is rejected, the field named in ``rejects``, or, where it is unambiguous, stored as
the decoder reads the usual type; the file is never stopped.

The odd lines sit in a real event log (the corpus's YARN log, tests/corpus/README.md), copied
from its own lines with one value changed; every other line must give exactly the events it
gives alone. Both paths: the fast path (the suite verifies it against the decoder block by
block, tests/conftest.py) and the decoder alone.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from commitsleuth.ingest import eventlog_fast, ingest
from commitsleuth.store import Store
from test_eventlog_fast import with_value

REAL = "spark-events/application_1628109047826_1317105"
AFTER = 27  # the real log's lines before the odd ones: up to its first stage's submission
# the real lines the odd ones are copied from (0-based)
JOB_START, STAGE_SUBMITTED, TASK_START, TASK_END, STAGE_COMPLETED, JOB_END, APP_END = 25, 26, 27, 31, 46, 47, 51


def _changed(line: str, path: tuple, value) -> str:
    return json.dumps(with_value(json.loads(line), path, value), separators=(",", ":"))


def _exclusion(**fields) -> str:
    return json.dumps({"Event": "SparkListenerExecutorExcluded", "time": 1628638090000, "executorId": "7",
                       "taskFailures": 4, **fields}, separators=(",", ":"))


def _rejected(real: list[str]) -> list[tuple[str, str]]:
    """(line, reason): each odd line the decoder rejects, one field of each kind it checks."""
    task, end = real[TASK_START], real[TASK_END]
    return [
        (_exclusion(executorId=7.5), "Spark event with executorId not text or a whole number"),
        (_exclusion(executorId=True, time=1628638090001), "Spark event with executorId not text or a whole number"),
        (json.dumps({"Event": "SparkListenerNodeExcluded", "time": 1628638090002, "hostId": 5}),
         "Spark event with hostId not text"),
        (json.dumps({"Event": "SparkListenerExecutorExcludedForStage", "time": 1628638090003, "executorId": "7",
                     "taskFailures": 2, "stageId": 2 ** 31, "stageAttemptId": 0}),
         "Spark event with stageId not a 32-bit whole number"),
        (_changed(real[STAGE_SUBMITTED], ("Stage Info", "Stage ID"), 2 ** 31),
         "Spark event with Stage ID not a 32-bit whole number"),
        (_changed(real[STAGE_COMPLETED], ("Stage Info", "Completion Time"), "1628638137000"),
         "Spark event with Completion Time not a time in epoch milliseconds"),
        (_changed(real[STAGE_SUBMITTED], ("Stage Info",), [1]), "Spark event with Stage Info not an object"),
        (_changed(task, ("Stage Attempt ID",), "0"), "Spark event with Stage Attempt ID not a 32-bit whole number"),
        (_changed(task, ("Task Info", "Attempt"), True), "Spark event with Attempt not a 32-bit whole number"),
        (_changed(task, ("Task Info", "Task ID"), "7"), "Spark event with Task ID not a whole number"),
        (_changed(task, ("Task Info", "Index"), 1.5), "Spark event with Index not a whole number"),
        (_changed(task, ("Task Info", "Partition ID"), "0"), "Spark event with Partition ID not a whole number"),
        (_changed(task, ("Task Info", "Launch Time"), "1628638073885"),
         "Spark event with Launch Time not a time in epoch milliseconds"),
        (_changed(task, ("Task Info", "Speculative"), "false"), "Spark event with Speculative not true or false"),
        (_changed(task, ("Task Info", "Host"), 5), "Spark event with Host not text"),
        (_changed(task, ("Task Info", "Executor ID"), [7]), "Spark event with Executor ID not text or a whole number"),
        (_changed(task, ("Task Info",), 5), "Spark event with Task Info not an object"),
        (_changed(end, ("Task Info", "Finish Time"), 1e20),  # a float past the year 9999
         "Spark event with Finish Time not a time in epoch milliseconds"),
        (_changed(end, ("Task Metrics",), []), "Spark event with Task Metrics not an object"),
        (_changed(end, ("Task Metrics", "Output Metrics"), 5), "Spark event with Output Metrics not an object"),
        (_changed(end, ("Task Metrics", "Output Metrics"), {"Bytes Written": 2 ** 63, "Records Written": 1}),
         "Spark event with Bytes Written not a whole number"),
        (_changed(end, ("Task End Reason",), {"Reason": ["Success"]}), "Spark event with Reason not text"),
        (_changed(end, ("Task End Reason",), "Success"), "Spark event with Task End Reason not an object"),
        (_changed(real[JOB_START], ("Job ID",), "0"), "Spark event with Job ID not a whole number"),
        (_changed(real[JOB_START], ("Properties",), []), "Spark event with Properties not an object"),
        (_changed(real[JOB_START], ("Properties",), {"spark.sql.execution.id": 1.5}),
         "Spark event with spark.sql.execution.id not text or a whole number"),
        (_changed(real[JOB_END], ("Job Result",), "JobSucceeded"), "Spark event with Job Result not an object"),
        (_changed(real[JOB_END], ("Job Result",), {"Result": "JobFailed", "Exception": "boom"}),
         "Spark event with Exception not an object"),
        (_changed(real[APP_END], ("Timestamp",), True), "Spark event with Timestamp not a time in epoch milliseconds"),
        (json.dumps({"Event": "SparkListenerApplicationStart", "App Name": "x", "App ID": 12, "Timestamp": 1}),
         "Spark event with App ID not text"),
        (json.dumps({"Event": "SparkListenerEnvironmentUpdate", "Spark Properties": "spark.speculation=true"}),
         "Spark event with Spark Properties not an object or a list of pairs"),
        (json.dumps({"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart",
                     "executionId": 3, "time": 1628638090004, "physicalPlanDescription": 5}),
         "Spark event with physicalPlanDescription not text"),
        (json.dumps({"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd",
                     "executionId": "3", "time": 1628638090005}),
         "Spark event with executionId not a whole number"),
        (json.dumps({"Event": 5}), "Spark event with Event not text"),
    ]


def _kept(real: list[str]) -> list[str]:
    """Odd lines stored as the decoder reads the usual type (each a new event: ids changed)."""
    task = real[TASK_START]
    return [
        _exclusion(executorId=7, time=1628638090006),  # an executor id as a number: its digits
        _changed(_changed(task, ("Task Info", "Executor ID"), 3), ("Task Info", "Task ID"), 91),
        _changed(task, ("Task Info", "Launch Time"), 1628638073885.5),  # a fraction of a ms is exact
        _changed(_changed(real[JOB_START], ("Job ID",), 9), ("Properties",), {"spark.sql.execution.id": 12}),
    ]


def _store_of(tmp_path, name: str, lines: list[str], fast: bool, monkeypatch):
    monkeypatch.setenv(eventlog_fast.ENV, "1" if fast else "0")
    log = tmp_path / name / "application_1628109047826_1317105"
    log.parent.mkdir()
    log.write_text("".join(f"{line}\n" for line in lines))
    store = Store(tmp_path / f"{name}.duckdb")
    (result,) = ingest(store, [str(log)]).results
    return store, result


_SAME = "kind, ts, app_id, job_id, query_id, stage_id, stage_attempt, task_id, attempt_id, attempt_no, " \
        "speculative, executor_id, host, size, status, detail, event_key, raw"


@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "decoder"])
def test_odd_values_are_rejected_one_line_at_a_time_and_every_other_line_kept(tmp_path, corpus, monkeypatch, fast):
    real = (corpus / REAL).read_text().splitlines()
    rejected, kept = _rejected(real), _kept(real)
    odd = [line for line, _ in rejected] + kept
    lines = real[:AFTER] + odd + real[AFTER:]
    original, alone = _store_of(tmp_path, "original", real, fast, monkeypatch)
    store, result = _store_of(tmp_path, "odd", lines, fast, monkeypatch)
    try:
        assert (alone.status, alone.rejected) == ("ok", 0)
        assert (result.status, result.reason, result.lines) == ("ok", None, len(lines))
        assert (result.rejected, result.events) == (len(rejected), alone.events + len(kept))
        want = {}  # reason -> (count, first line)
        for n, (_, reason) in enumerate(rejected):
            count, first = want.get(reason, (0, AFTER + n + 1))
            want[reason] = (count + 1, first)
        got = {reason: (count, line) for reason, count, line in
               store.query("select reason, count, first_line from rejects")[1]}
        assert got == want
        # every real line gives the events it gives alone, the lines after the odd ones too
        mine = store.query(f"select {_SAME} from events where raw not in (select unnest(?)) order by event_id",
                           [odd])[1]
        assert mine == original.query(f"select {_SAME} from events order by event_id")[1]
        assert mine[-1][0] == "app_end"
        stored = store.query("select kind, ts, job_id, query_id, attempt_id, executor_id from events "
                             "where raw in (select unnest(?)) order by event_id", [kept])[1]
        assert stored == [
            ("exclude", dt.datetime(2021, 8, 10, 23, 28, 10, 6000), None, None, None, "7"),
            ("attempt_start", dt.datetime(2021, 8, 10, 23, 27, 53, 885000), None, None,
             "task 0.0 in stage 0.0 (TID 91)", "3"),
            ("attempt_start", dt.datetime(2021, 8, 10, 23, 27, 53, 885500), None, None,
             "task 0.0 in stage 0.0 (TID 0)", "7"),
            ("job_start", dt.datetime(2021, 8, 10, 23, 27, 53, 466000), "9", "12", None, None),
        ]
    finally:
        store.close()
        original.close()
