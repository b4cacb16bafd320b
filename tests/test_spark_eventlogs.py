"""Spark event logs: every corpus file with its known facts, the four codecs, rolling and
in-progress layouts, and the Spark 1.x-4.x field variants, through the one decoder."""

from __future__ import annotations

import json
import shutil

import pytest

from commitsleuth.ingest import ingest
from commitsleuth.parsers.spark_events import SparkEventDecoder
from commitsleuth.store import Store

EVENTS = "spark-events"


def _ingest(store, *paths):
    report = ingest(store, [str(p) for p in paths])
    return report


def _rows(store, sql, params=()):
    cols, rows = store.query(sql, list(params))
    return [dict(zip(cols, r)) for r in rows]


def _events_of(store, uri_like):
    return _rows(store, "select e.* from events e join sources s using (source_id) where s.uri like ? "
                        "order by e.event_id", [f"%{uri_like}"])


@pytest.fixture(scope="module")
def corpus_store(tmp_path_factory, corpus):
    with Store(tmp_path_factory.mktemp("ev") / "s.duckdb") as s:
        report = _ingest(s, corpus / EVENTS)
        assert [r.status for r in report.results] == ["ok"] * len(report.results)
        yield s


def test_every_corpus_event_log_is_one_ok_source(corpus_store, corpus):
    rows = _rows(corpus_store, "select uri, format, status, rejected, reason from sources order by uri")
    names = [r["uri"].removeprefix(str(corpus / EVENTS) + "/") for r in rows]
    # The rolling directory is one source; its appstatus marker is not a source of its own.
    assert names == [
        "app-20161116163331-0000",
        "application_1628109047826_1317105",
        "codecs/local-1795296595467.lz4",
        "codecs/local-1795296602547.snappy",
        "codecs/local-1795296610133.zstd",
        "codecs/local-1795296617196.lzf",
        "eventlog_v2_local-1766844910796",
        "local-1422981780767",
    ]
    assert {(r["format"], r["status"], r["rejected"], r["reason"]) for r in rows} == {
        ("spark-eventlog", "ok", 0, None)}


def test_speculative_attempt_killed_and_its_successful_original(corpus_store):
    evs = _events_of(corpus_store, "application_1628109047826_1317105")
    ends = {json.loads(e["detail"])["tid"]: e for e in evs if e["kind"] == "attempt_end"}
    killed, original = ends[4], ends[3]
    assert (killed["task_id"], killed["attempt_no"], killed["speculative"], killed["status"]) == ("0.3", 1, True, "killed")
    assert json.loads(killed["detail"])["kill_reason"] == "another attempt succeeded"
    assert killed["attempt_id"] == "task 3.1 in stage 0.0 (TID 4)"
    assert (original["task_id"], original["attempt_no"], original["speculative"], original["status"]) == ("0.3", 0, False, "success")
    assert original["attempt_id"] == "task 3.0 in stage 0.0 (TID 3)"
    starts = [e for e in evs if e["kind"] == "attempt_start" and e["task_id"] == "0.3"]
    assert sorted(e["attempt_no"] for e in starts) == [0, 1]


def test_spark1_failed_task_and_failed_job(corpus_store):
    evs = _events_of(corpus_store, "local-1422981780767")
    failed = [e for e in evs if e["kind"] == "attempt_end" and e["status"] == "failed"]
    assert [(e["stage_id"], e["task_id"], e["attempt_no"]) for e in failed] == [(2, "2.3", 0)]
    detail = json.loads(failed[0]["detail"])
    assert (detail["reason"], detail["error"], detail["tid"]) == ("ExceptionFailure", "got a 3, failing", 19)
    # Spark 1.x: no Partition ID (the index stands in), the driver's executor is "<driver>".
    assert {e["executor_id"] for e in evs if e["kind"].startswith("attempt")} == {"driver"}
    jobs = [(e["job_id"], e["status"]) for e in evs if e["kind"] == "job_end"]
    assert jobs == [("0", "success"), ("1", "failed"), ("2", "success")]
    job1 = next(e for e in evs if e["kind"] == "job_end" and e["job_id"] == "1")
    assert json.loads(job1["detail"])["reason"].startswith("Job aborted due to stage failure: Task 3 in stage 2.0")
    assert job1["ts"] is not None  # 1.x JobEnd has no time: the last one seen stands in


def test_blacklisting_events(corpus_store):
    evs = _events_of(corpus_store, "app-20161116163331-0000")
    excl = [(json.loads(e["detail"])["what"], e["executor_id"], e["host"], e["status"],
             json.loads(e["detail"])["failures"]) for e in evs if e["kind"] == "exclude"]
    assert excl == [("executor", "2", None, "excluded", 4), ("executor", "0", None, "excluded", 4),
                    ("node", None, "172.22.0.167", "excluded", 2)]
    failed = [e for e in evs if e["kind"] == "attempt_end" and e["status"] == "failed"]
    assert len(failed) == 8
    assert {e["executor_id"] for e in failed} == {"0", "2"}


def test_app_named_like_a_script_is_stored_as_text(corpus_store):
    (start,) = [e for e in _events_of(corpus_store, "eventlog_v2_local-1766844910796") if e["kind"] == "app_start"]
    assert json.loads(start["detail"])["name"] == "<script>alert('XSS')</script>"
    assert start["app_id"] == "local-1766844910796"


def test_the_four_codecs_decode_to_the_same_events(corpus_store):
    shapes = {}
    for codec in ("lz4", "snappy", "zstd", "lzf"):
        evs = _events_of(corpus_store, f".{codec}")
        assert evs, codec
        shapes[codec] = [(e["kind"], e["stage_id"], e["task_id"], e["status"], e["job_id"]) for e in evs]
    assert shapes["lz4"] == shapes["snappy"] == shapes["zstd"] == shapes["lzf"]
    assert {k for k, *_ in shapes["lz4"]} >= {"app_start", "job_start", "attempt_end", "query_start", "app_end"}


def _rolling_copy(corpus, tmp_path, parts: int, in_progress: bool):
    """The corpus rolling dir re-cut into ``parts`` parts (as Spark rolls by size), named out of
    lexical order on purpose (events_10 sorts before events_2)."""
    src = corpus / EVENTS / "eventlog_v2_local-1766844910796"
    lines = (src / "events_1_local-1766844910796").read_bytes().splitlines(keepends=True)
    d = tmp_path / src.name
    d.mkdir()
    step = -(-len(lines) // parts)
    for i in range(parts):
        n = i + 1 if i == 0 else i + 9  # 1, 10, 11, ...
        (d / f"events_{n}_local-1766844910796").write_bytes(b"".join(lines[i * step:(i + 1) * step]))
    marker = "appstatus_local-1766844910796" + (".inprogress" if in_progress else "")
    (d / marker).write_bytes(b"")
    return d, lines


def test_rolling_dir_parts_are_one_application_in_order(corpus, tmp_path, store):
    d, lines = _rolling_copy(corpus, tmp_path, parts=3, in_progress=False)
    (r,) = _ingest(store, d).results
    assert (r.status, r.lines, r.reason) == ("ok", len(lines), None)
    shape = "select kind, line_no, task_id, status from events order by event_id"
    with Store(tmp_path / "one-part.duckdb") as whole:
        _ingest(whole, corpus / EVENTS / d.name)
        assert store.query(shape)[1] == whole.query(shape)[1]
    assert store.query(shape)[1][-1][0] == "app_end"


def test_rolling_dir_in_progress_then_finished(corpus, tmp_path, store):
    d, lines = _rolling_copy(corpus, tmp_path, parts=2, in_progress=True)
    last = d / "events_10_local-1766844910796"
    tail = last.read_bytes().splitlines(keepends=True)
    last.write_bytes(b"".join(tail[:-1]))  # ApplicationEnd not written yet
    (r,) = _ingest(store, d).results
    assert r.status == "ok" and "still running" in r.reason
    # The application finishes: Spark writes the last event and renames the marker.
    last.write_bytes(b"".join(tail))
    (d / "appstatus_local-1766844910796.inprogress").rename(d / "appstatus_local-1766844910796")
    (r2,) = _ingest(store, d).results
    assert r2.status == "ok" and r2.events == 1 and r2.source_id == r.source_id
    kinds = [e["kind"] for e in _events_of(store, d.name)]
    assert kinds.count("app_start") == 1 and kinds[-1] == "app_end"
    assert _ingest(store, d).results[0].status == "unchanged"


def test_inprogress_single_file_resumes_and_keeps_its_source(corpus, tmp_path, store):
    src = (corpus / EVENTS / "local-1422981780767").read_bytes().splitlines(keepends=True)
    f = tmp_path / "local-1422981780767.inprogress"
    f.write_bytes(b"".join(src[:40]))
    (r,) = _ingest(store, f).results
    assert r.status == "ok" and "still running" in r.reason
    f.write_bytes(b"".join(src))
    done = f.rename(tmp_path / "local-1422981780767")  # Spark renames the file when the app ends
    (r2,) = _ingest(store, done).results
    assert (r2.status, r2.source_id, r2.reason) == ("ok", r.source_id, None)
    full = Store(tmp_path / "full.duckdb")
    _ingest(full, corpus / EVENTS / "local-1422981780767")
    shape = "select kind, task_id, status, attempt_no from events order by event_id"
    assert store.query(shape)[1] == full.query(shape)[1]
    full.close()


@pytest.mark.parametrize("codec", ["lz4", "snappy", "lzf"])
def test_truncated_codec_file_keeps_the_good_part(corpus, tmp_path, store, codec):
    src = next((corpus / EVENTS / "codecs").glob(f"*.{codec}"))
    cut = tmp_path / src.name
    cut.write_bytes(src.read_bytes()[:-1500])  # the last events (the tail of the job) are lost
    (r,) = _ingest(store, cut).results
    assert (r.status, r.reason) == ("partial", "compressed stream ends early (truncated file); "
                                    "application did not end (0 attempts never finished)")
    # Lines in the blocks before the cut are read (here the job's events sit in the last block).
    assert 0 < r.lines < 17 and r.events < 13


def test_java_stream_with_junk_after_the_header_is_a_clear_partial(tmp_path, store):
    f = tmp_path / "local-1.lz4"
    f.write_bytes(b"LZ4Block" + b"\xff" * 40)
    (r,) = _ingest(store, f).results
    assert r.status in ("partial", "failed", "skipped") and r.reason


def _task_end(**info):
    base = {"Task ID": 7, "Index": 2, "Attempt": 1, "Launch Time": 1, "Finish Time": 2,
            "Executor ID": "3", "Host": "h", "Speculative": True}
    return {"Event": "SparkListenerTaskEnd", "Stage ID": 5, "Stage Attempt ID": 0,
            "Task End Reason": {"Reason": "TaskCommitDenied", "Job ID": 5, "Partition ID": 9, "Attempt Number": 1},
            "Task Info": {**base, **info}}


def test_partition_id_from_spark_3_4_wins_over_the_index():
    (end, denied) = SparkEventDecoder().decode(_task_end(**{"Partition ID": 9}))
    assert (end.task_id, end.status, denied.kind) == ("5.9", "commit_denied", "commit_denied")
    (old, _) = SparkEventDecoder().decode(_task_end())
    assert old.task_id == "5.2"  # before 3.4 the index is the partition


@pytest.mark.parametrize("name,status", [
    ("SparkListenerExecutorExcluded", "excluded"), ("SparkListenerExecutorBlacklisted", "excluded"),
    ("SparkListenerExecutorExcludedForStage", "excluded"), ("SparkListenerExecutorBlacklistedForStage", "excluded"),
    ("org.apache.spark.scheduler.SparkListenerExecutorUnexcluded", "lifted"),
    ("SparkListenerExecutorUnblacklisted", "lifted"),
])
def test_blacklist_and_exclude_names_are_one_kind(name, status):
    (ev,) = SparkEventDecoder().decode({"Event": name, "time": 1000, "executorId": "4", "taskFailures": 2,
                                        "stageId": 1, "stageAttemptId": 0})
    assert (ev.kind, ev.executor_id, ev.status) == ("exclude", "4", status)


def test_node_exclusion_reads_host_or_node_id():
    for key in ("hostId", "nodeId"):
        (ev,) = SparkEventDecoder().decode({"Event": "SparkListenerNodeExcluded", "time": 1, key: "n1"})
        assert ev.host == "n1"


def test_unknown_events_and_bad_lines_are_counted_not_lost(tmp_path, store):
    f = tmp_path / "local-9"
    f.write_text('{"Event":"SparkListenerLogStart","Spark Version":"3.5.1"}\n'
                 '{"Event":"SparkListenerApplicationStart","App Name":"x","App ID":"local-9","Timestamp":1}\n'
                 '{"Event":"SparkListenerApplicationEnd","Timest\n'
                 '["not", "an event"]\n')
    (r,) = _ingest(store, f).results
    assert (r.status, r.events, r.rejected) == ("ok", 1, 2)
    reasons = dict(store.query("select reason, count from rejects")[1])
    assert reasons == {"invalid JSON (a truncated or in-progress event log?)": 1, "JSON line without an Event field": 1}


def test_copy_of_a_codec_file_under_another_name_is_not_read_twice(corpus, tmp_path, store):
    src = next((corpus / EVENTS / "codecs").glob("*.snappy"))
    shutil.copy(src, tmp_path / "a.snappy")
    assert _ingest(store, tmp_path / "a.snappy").results[0].status == "ok"
    (tmp_path / "a.snappy").rename(tmp_path / "b.snappy")
    assert _ingest(store, tmp_path / "b.snappy").results[0].status == "unchanged"


def test_secrets_in_the_environment_event_are_redacted_before_stored(tmp_path, store):
    env = {"Event": "SparkListenerEnvironmentUpdate",
           "Spark Properties": {"spark.speculation": "true", "spark.hadoop.fs.s3a.secret.key": "wJalrXUtnFEMI",
                                "spark.hadoop.fs.s3a.access.key": "AKIAIOSFODNN7EXAMPLE"},
           "Hadoop Properties": {"fs.s3a.session.token": "c2VjcmV0"}}
    f = tmp_path / "local-5"
    f.write_text(json.dumps(env) + "\n")
    (r,) = _ingest(store, f).results
    assert r.events == 1
    (raw,) = store.query("select raw from events")[1][0]
    assert "wJalrXUtnFEMI" not in raw and "AKIAIOSFODNN7EXAMPLE" not in raw and "c2VjcmV0" not in raw
    assert '"spark.speculation": "true"' in raw


def test_no_event_without_an_app_id_in_any_corpus_event_log(tmp_path, corpus):
    """Every corpus event log, also under a name that names no application (``eventlog``, as
    Databricks writes it): the environment update before ApplicationStart gets the app id too."""
    import shutil

    from commitsleuth.ingest import ingest
    from commitsleuth.store import Store

    logs = corpus / "spark-events"
    renamed = tmp_path / "renamed"
    renamed.mkdir()
    shutil.copy(logs / "application_1628109047826_1317105", renamed / "eventlog")
    # two stores: the renamed copy has the original's content, which a store ingests once
    with Store(tmp_path / "renamed.duckdb") as s:
        assert not ingest(s, [str(renamed / "eventlog")]).failed
        confs = s.query("SELECT count(*) FROM events WHERE kind = 'conf' "
                        "AND app_id = 'application_1628109047826_1317105'")[1]
        assert confs[0][0] > 0
        assert s.query("SELECT count(*) FROM events WHERE app_id IS NULL")[1] == [(0,)]
    with Store(tmp_path / "apps.duckdb") as s:
        report = ingest(s, [str(logs)])
        assert not report.failed
        missing = s.query("SELECT s.uri, e.kind, count(*) FROM events e JOIN sources s USING (source_id) "
                          "WHERE e.app_id IS NULL GROUP BY ALL")[1]
        assert missing == []
