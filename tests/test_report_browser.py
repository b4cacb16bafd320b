"""The HTML report in real headless Chromium: the seed-000 finding and its lanes, hover and click,
escaping of hostile log text, and the first screen of a 10,000-finding report.

Screenshots and timings are kept in test-artifacts/ (gitignored) for people to look at.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from browser import Chromium, chromium_path
from commitsleuth.demo import sample_dir
from commitsleuth.forensics.analyze import analyze
from commitsleuth.ingest import ingest
from commitsleuth.report.html import PAGE_SIZE, write_report
from commitsleuth.store import Store
from test_detector_cases import case_event
from many_findings import many_findings_store, seed_events, write_task_logs

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "test-artifacts"
SEED = sample_dir() / "seed000" / "logs"
A0 = "attempt_201304111550_268224_m_000005_0"
A1 = "attempt_201304111550_268234_m_000005_1"


@pytest.fixture(scope="module")
def browser():
    if chromium_path() is None:
        pytest.fail("chromium is not installed: apt-get install -y chromium (.ci/run installs it)")
    b = Chromium()
    yield b
    b.close()


def _report(tmp: Path, *paths) -> Path:
    with Store(tmp / "store.duckdb") as store:
        ingest(store, [str(p) for p in paths])
        analyze(store)
        return write_report(store, tmp / "report.html")


def _open(browser, report: Path):
    page = browser.page()
    page.goto(report.as_uri())
    page.wait_for("document.documentElement.dataset.readyMs")
    page.settle()
    return page


def test_seed000_report_shows_the_finding_and_both_attempt_lanes(browser, tmp_path):
    page = _open(browser, _report(tmp_path, SEED))
    page.screenshot(ARTIFACTS / "report-seed000.png")
    findings = page.eval("[...document.querySelectorAll('article.finding')].map(a => a.dataset.code)")
    assert findings == ["CS101"]
    assert page.eval("document.querySelector('article.finding .partition b').textContent") == "hp_cal_month=2013-04"
    lanes = page.eval("[...document.querySelectorAll('.lane')].map(l => [l.dataset.actor,"
                      " [...l.querySelectorAll('.mark')].map(m => m.textContent + ' ' + m.className)])")
    assert lanes == [[A0, ["R mark ok evidence"]], [A1, ["R mark ok evidence"]]]
    assert page.eval("document.querySelector('.axis-label').textContent").startswith("event order, not time")
    assert page.eval("[...document.querySelectorAll('.tick')].map(t => t.textContent)") == ["#1", "#2"]
    wheres = page.eval("[...document.querySelectorAll('.evidence-list .where')].map(w => w.textContent)")
    assert wheres == [f"{SEED / 'task-logs.txt'}:2  [{A0}]", f"{SEED / 'task-logs.txt'}:5  [{A1}]"]
    assert page.eval("document.querySelector('.remedy').textContent").startswith("Remedy. disable speculative execution")
    assert "1 ok · 2 events · 0 rejected lines" in page.eval("document.body.innerText")

    # Hover shows an event in the panel; a click selects it and keeps it there.
    page.hover(".lane .mark")
    detail = page.eval("document.querySelector('.detail').innerText")
    assert f"{SEED / 'task-logs.txt'}:2" in detail and "renamed path" in detail and A0 in detail
    page.click(f".lane[data-actor='{A1}'] .mark")
    detail = page.eval("document.querySelector('.detail').innerText")
    assert f"{SEED / 'task-logs.txt'}:5" in detail and "no timestamp" in detail and A1 in detail
    assert page.eval("document.querySelector('.mark.selected').dataset.event") == "2"
    page.screenshot(ARTIFACTS / "report-seed000-clicked.png")
    assert (page.errors, page.dialogs) == ([], [])


def test_a_store_without_findings_says_so(browser, tmp_path, corpus):
    page = _open(browser, _report(tmp_path, corpus / "spark-events" / "local-1422981780767"))
    assert page.eval("document.getElementById('cs-findings').textContent") == "No findings."
    assert page.eval("document.getElementById('summary').textContent") == "Findings: 0"
    assert page.eval("document.querySelectorAll('table.apps tr').length") == 2
    assert (page.errors, page.dialogs) == ([], [])


def test_two_applications_in_one_partition_get_their_own_labelled_lanes(browser, tmp_path, corpus):
    """Two applications' attempts with the same labels wrote into one partition (the store of
    test_lanes.two_applications_store): four lanes, each named with its application."""
    from test_lanes import TWO_APPS, two_applications_store

    with two_applications_store(tmp_path / "apps.duckdb", corpus, tmp_path) as store:
        analyze(store)
        report = write_report(store, tmp_path / "report.html")
    page = _open(browser, report)
    lanes = page.eval("[...document.querySelectorAll('.lane')].map(l => [l.dataset.app,"
                      " l.querySelector('.actor').textContent, l.querySelectorAll('.mark').length])")
    # each attempt by its one label, which names its application (issue 32)
    tid3, tid4 = ("stage 0.0/task 3 attempt 0 (TID 3) on ltx1-hcl12413.grid.linkedin.com",
                  "stage 0.0/task 3 attempt 1 (TID 4) on ltx1-hcl12291.grid.linkedin.com")
    assert sorted(lanes) == sorted([app, f"{app}/{tid}", 1] for app in TWO_APPS for tid in (tid3, tid4))
    # the whole label is visible: the attempt's text is not cut by the label column's ellipsis
    assert page.eval("[...document.querySelectorAll('.lane .actor')].every(a =>"
                     " a.getBoundingClientRect().right <= a.parentElement.getBoundingClientRect().right)")
    page.eval("document.querySelector('figure.tl').scrollIntoView()")
    page.screenshot(ARTIFACTS / "report-two-applications.png")
    assert (page.errors, page.dialogs) == ([], [])


# Timed lines in Hive's log4j1 layout: two attempts of one task rename into one partition three
# hours apart, then the job moves its output.
TIMED = """\
2013-05-30 10:13:59,124 INFO  [attempt_201304111550_268224_m_000005_0]: exec.RCFileMergeMapper (RCFileMergeMapper.java:close(250)) - renamed path hdfs://nn/tmp/hive_q/_task_tmp.-ext-10000/dt=2013-04/_tmp.000005_0 to hdfs://nn/tmp/hive_q/_tmp.-ext-10000/dt=2013-04/000005_0 . File size is 666922
2013-05-30 13:20:01,500 INFO  [attempt_201304111550_268234_m_000005_1]: exec.RCFileMergeMapper (RCFileMergeMapper.java:close(250)) - renamed path hdfs://nn/tmp/hive_q/_task_tmp.-ext-10000/dt=2013-04/_tmp.000005_1 to hdfs://nn/tmp/hive_q/_tmp.-ext-10000/dt=2013-04/000005_1 . File size is 666922
"""


def test_timed_events_get_a_time_axis(browser, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "hive.log").write_text(TIMED)
    page = _open(browser, _report(tmp_path, logs))
    label = page.eval("document.querySelector('.axis-label').textContent")
    assert label == "time, 2013-05-30 10:13:59.124 to 13:20:01.500 (3 h 6 min); ticks every 30 min"
    ticks = page.eval("[...document.querySelectorAll('.tick')].map(t => [t.textContent, parseFloat(t.style.left)])")
    assert [t for t, _ in ticks] == ["10:30", "11:00", "11:30", "12:00", "12:30", "13:00"]
    marks = page.eval("[...document.querySelectorAll('.mark')].map(m => parseFloat(m.style.left))")
    assert marks[0] < ticks[0][1] and ticks[-1][1] < marks[1]  # 10:13 before 10:30, 13:20 after 13:00
    page.click(".lane + .lane .mark")
    assert "2013-05-30 13:20:01.500" in page.eval("document.querySelector('.detail').innerText")
    page.screenshot(ARTIFACTS / "report-timed.png")
    assert (page.errors, page.dialogs) == ([], [])


# Log text that would run or add elements if the report put it into the page as markup: a
# script in a path, a partition value with both quotes and a made-up element, and (real) an
# application named <script>alert('XSS')</script> in Spark's rolling event log.
HOSTILE = """\
attempt_201304111550_268224_m_000007_0
renamed path hdfs://nn/tmp/hive_q/_task_tmp.-ext-10000/<script>alert(1)</script>/_tmp.000007_0 to hdfs://nn/tmp/hive_q/_tmp.-ext-10000/dt=2013'04"><xss-part>x/000007_0 . File size is 10

attempt_201304111550_268234_m_000007_1
renamed path hdfs://nn/tmp/hive_q/_task_tmp.-ext-10000/<script>alert(1)</script>/_tmp.000007_1 to hdfs://nn/tmp/hive_q/_tmp.-ext-10000/dt=2013'04"><xss-part>x/000007_1 . File size is 10
renamed path <xss-part onclick=alert(3)> to nowhere
"""


def test_hostile_log_text_shows_as_text_and_runs_nothing(browser, tmp_path, corpus):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "task-logs.txt").write_text(HOSTILE)
    rolling = corpus / "spark-events" / "eventlog_v2_local-1766844910796"
    report = _report(tmp_path, logs, rolling)
    text = report.read_text()
    assert "<script>alert" not in text and "<xss-part>" not in text
    page = _open(browser, report)
    page.click(".mark")  # the detail panel puts the raw line into the page as well
    page.hover(".lane + .lane .mark")
    page.settle()
    page.screenshot(ARTIFACTS / "report-hostile.png")
    assert page.dialogs == []
    assert page.errors == []  # a blocked inline script would be a CSP error here
    assert page.eval("document.querySelectorAll('xss-part').length") == 0
    assert page.eval("document.scripts.length") == 2  # the data block and the report's own script
    body = page.eval("document.body.innerText")
    assert "<script>alert('XSS')</script>" in body  # the real application name, as text
    assert "/<script>alert(1)</script>/_tmp.000007_0" in body
    assert page.eval("document.querySelector('article.finding .partition b').textContent") == "dt=2013'04\"><xss-part>x"
    assert "1 rejected: keyword line not understood, first at line 6: renamed path <xss-part onclick=alert(3)>" in body
    assert page.eval("document.querySelectorAll('.lane').length") == 2


def test_replayed_store_equals_real_ingest(tmp_path):
    """The 10,000-finding store replays seed events; on a small file that replay == ingest."""
    cols = "kind, line_no, byte_offset, job_id, task_id, attempt_id, attempt_no, location, " \
           "partition_spec, path, target_path, file_name, file_task, file_attempt, size, raw"
    with many_findings_store(tmp_path / "replay.duckdb", tmp_path / "logs", 3, 2) as replayed:
        fast = replayed.con.execute(f"SELECT {cols} FROM events ORDER BY line_no").fetchall()
        fast_findings = replayed.count("findings")
    with Store(tmp_path / "real.duckdb") as real:
        ingest(real, [str(tmp_path / "logs")])
        slow = real.con.execute(f"SELECT {cols} FROM events ORDER BY line_no").fetchall()
        assert len(analyze(real)) == fast_findings == 6
    assert fast == slow and len(seed_events()) == 2


def test_ten_thousand_findings_first_screen(browser, tmp_path):
    with many_findings_store(tmp_path / "many.duckdb", tmp_path / "logs", 1000, 10) as store:
        assert store.count("findings") == 10_000
        report = write_report(store, tmp_path / "report.html")
    page = browser.page()
    load_s = page.goto(report.as_uri())
    first_ms = float(page.wait_for("document.documentElement.dataset.firstScreenMs"))
    assert page.eval("document.querySelectorAll('article.finding').length") == PAGE_SIZE
    ready_ms = float(page.wait_for("document.documentElement.dataset.readyMs"))
    assert page.eval("document.getElementById('cs-data-gz') !== null")  # big data travels packed
    page.screenshot(ARTIFACTS / "report-10000.png")
    assert page.eval("document.querySelectorAll('article.finding').length") == PAGE_SIZE
    assert page.eval("document.getElementById('cs-pageinfo').textContent") == \
        f"findings 1–{PAGE_SIZE} of 10000 · page 1 of {10000 // PAGE_SIZE}"
    # The next page, then a filter that narrows to one partition's ten tasks.
    page.click("#cs-next")
    assert page.eval("document.querySelector('article.finding').id") == f"finding-{PAGE_SIZE + 1}"
    page.eval("(() => { const q = document.getElementById('cs-q'); q.value = 'hp_store=00420';"
              " q.dispatchEvent(new Event('input')); })()")
    assert page.eval("document.querySelectorAll('article.finding').length") == 10
    # 20 attempts touched each partition: 12 other lanes are drawn at first, plus the finding's
    # own two (task 9's attempts start last, so they would be left out otherwise).
    lanes = "[...document.querySelectorAll('#finding-4210 .lane')]"
    assert page.eval(f"{lanes}.length") == 14
    assert page.eval(f"{lanes}.filter(l => l.classList.contains('involved')).length") == 2
    page.click("#finding-4210 .more-lanes")
    assert page.eval(f"{lanes}.length") == 20
    assert page.eval(f"{lanes}.map(l => l.dataset.actor)") == [  # in time order again
        f"attempt_201304111550_{job}_m_{t:06d}_{a}" for t in range(10) for a, job in ((0, 268224), (1, 268234))]
    page.settle()
    assert (page.errors, page.dialogs) == ([], [])
    timing = {"findings": 10_000, "report_bytes": report.stat().st_size,
              "load_event_s": round(load_s, 3), "first_screen_ms": first_ms, "all_findings_ready_ms": ready_ms}
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "report-10000.json").write_text(json.dumps(timing, indent=2) + "\n")
    print(f"\n10,000-finding report: {timing}")


# -- issue 32: names, evidence and texts of a Spark double write ----------------------------
SPARK_APP = "application_1628109047826_1317105"
TID3 = "stage 0.0/task 3 attempt 0 (TID 3) on ltx1-hcl12413.grid.linkedin.com"
TID4 = "stage 0.0/task 3 attempt 1 (TID 4) on ltx1-hcl12291.grid.linkedin.com"


def _spark_report(tmp_path, corpus):
    with Store(tmp_path / "s.duckdb") as store:
        ingest(store, [str(corpus / "spark-events" / SPARK_APP)])
        store.write_events([case_event({"kind": "file", "ts": ts, "app_id": SPARK_APP, "size": size,
                                        "path": f"file:///w/t/dt=2021-08-10/{name}"})
                            for name, ts, size in (("000003_0", "2021-08-10 23:27:55", 1234),
                                                   ("000003_1", "2021-08-10 23:28:05", 1230))])
        analyze(store)
        return write_report(store, tmp_path / "report.html")


def test_spark_double_write_evidence_and_texts(browser, tmp_path, corpus):
    """The report's evidence and texts in real headless Chromium (issue 32): a Spark speculative double
    write from a real event log (tests/corpus/spark-events, TID 3 succeeded, its speculative copy
    TID 4 was killed) and a listing of both attempts' files.
    
    - lanes and evidence name each attempt by its one label, the application said once above them;
    - a listed file shows its name, size and time (no empty box headed by its directory);
    - a JSON event shows its key fields, the raw line one click away and still escaped text;
    - the cause and remedy are Spark's, and say the killed attempt was killed.
    """
    page = browser.page()
    page.goto(_spark_report(tmp_path, corpus).as_uri())
    page.wait_for("document.documentElement.dataset.readyMs")
    page.settle()
    assert page.eval("document.querySelector('.lanes-app').textContent") == f"attempts of {SPARK_APP}:"
    assert page.eval("[...document.querySelectorAll('.lane .actor')].map(a => a.textContent)") == [TID3, TID4]
    items = page.eval("[...document.querySelectorAll('.evidence-list .item')].map(i => ["
                      " i.querySelector('.where').textContent,"
                      " [...i.querySelectorAll('.fact')].map(f => f.children[0].textContent + '=' + f.children[1].textContent),"
                      " i.querySelector('details') ? i.querySelector('details').open : null,"
                      " i.querySelectorAll(':scope > pre').length])")
    by_where = {w: (facts, details, pres) for w, facts, details, pres in items}
    for name, when, size in (("000003_0", "23:27:55", "1,234"), ("000003_1", "23:28:05", "1,230")):
        attempt = TID3 if name.endswith("_0") else TID4
        facts, details, pres = by_where[f"file:///w/t/dt=2021-08-10/{name}  [{SPARK_APP}/{attempt}]"]
        assert (facts, details, pres) == ([f"file={name}", f"size={size} bytes", f"modified=2021-08-10 {when}"],
                                          None, 0)
    killed = next(v for w, v in by_where.items() if w.startswith(str(corpus)) and w.endswith(f"[{SPARK_APP}/{TID4}]"))
    facts, details, pres = killed
    assert facts[:3] == ["Event=SparkListenerTaskEnd", "Stage ID=0", "Stage Attempt ID=0"]
    assert {"Task ID=4", "Attempt=1", "Speculative=true", "Reason=TaskKilled",
            "Kill Reason=another attempt succeeded"} <= set(facts)
    assert (details, pres) == (False, 0)  # the raw line folded away, one click from the facts
    raw = page.eval(f"[...document.querySelectorAll('.evidence-list .item')].find(i =>"
                    f" i.querySelector('.where').textContent.endsWith('[{SPARK_APP}/{TID4}]')"
                    f" && i.querySelector('details')).querySelector('details pre').textContent")
    assert raw.startswith('{"Event":"SparkListenerTaskEnd"') and '"Task ID":4' in raw
    cause = page.eval("document.querySelector('.cause').textContent")
    remedy = page.eval("document.querySelector('.remedy').textContent")
    assert remedy.startswith("Remedy. Write through Spark's writers")
    assert "RCFileMergeMapper" not in remedy and "HIVE-3149" not in remedy
    assert f"({SPARK_APP}/{TID4} was killed)" in cause and "both attempts finished" not in cause
    assert (page.errors, page.dialogs) == ([], [])


def test_a_json_lines_key_fields_stay_text(browser, tmp_path):
    """A hostile value inside a JSON evidence line is shown as text among its key fields and in
    its folded raw line; nothing in it runs or becomes markup."""
    import json as _json

    from test_cli_actors import SPARK_EVENTS

    hostile = "<img src=x onerror=alert(1)>"
    raw = _json.dumps({"Event": "SparkListenerTaskEnd", "Stage ID": 1, "Stage Attempt ID": 0,
                       "Task End Reason": {"Reason": "TaskKilled", "Kill Reason": hostile},
                       "Task Info": {"Task ID": 3, "Index": 1, "Attempt": 0, "Host": "127.0.0.2"}})
    events = [dict(e, raw=raw) if e.get("detail", {}).get("tid") == 3 else e for e in SPARK_EVENTS]
    with Store(tmp_path / "h.duckdb") as store:
        store.write_events([case_event(e) for e in events])
        analyze(store)
        report = write_report(store, tmp_path / "h.html")
    assert hostile not in report.read_text()
    page = _open(browser, report)
    facts = page.eval("[...document.querySelectorAll('.evidence-list .fact')].map(f => f.textContent)")
    assert f"Kill Reason{hostile}" in facts and "Task ID3" in facts
    page.eval("document.querySelectorAll('.evidence-list details').forEach(d => d.open = true)")
    assert hostile in page.eval("[...document.querySelectorAll('.evidence-list details pre')].map(p => p.textContent).join()")
    assert page.eval("document.querySelectorAll('article.finding img').length") == 0
    assert (page.errors, page.dialogs) == ([], [])


def test_a_table_logs_finding_shows_the_log_lane_and_the_writers_lanes(browser, tmp_path):
    """delta-rs#3622 written by delta-rs: an overwrite through a stale handle lets a concurrent
    append survive (CS204, per partition). The finding's timeline has the log's lane, one mark
    per commit, and each commit's files on the lane of its writer (the append's application)."""
    import pyarrow as pa
    from deltalake import CommitProperties, DeltaTable, write_deltalake

    rows = pa.table({"dt": ["2024-01-01", "2024-01-02"], "v": [1, 2]})
    table = tmp_path / "t"
    write_deltalake(str(table), rows, partition_by=["dt"])
    stale = DeltaTable(str(table))
    write_deltalake(str(table), rows, mode="append", partition_by=["dt"],
                    commit_properties=CommitProperties(custom_metadata={"spark.app.id": "app-20240101000000-0001"}))
    write_deltalake(stale, rows, mode="overwrite", partition_by=["dt"])
    page = _open(browser, _report(tmp_path, table))
    assert page.eval("[...document.querySelectorAll('article.finding')].map(a => a.dataset.code)") == ["CS204", "CS204"]
    lanes = page.eval("[...document.querySelector('article.finding').querySelectorAll('.lane')].map(l =>"
                      " [l.querySelector('.actor').textContent, [...l.querySelectorAll('.mark')].map(m => m.textContent)])")
    by_name = dict(lanes)
    assert by_name["delta log"] == ["V", "V", "V"]
    assert by_name["app-20240101000000-0001"] == ["+"]  # the surviving append, on its application's lane
    overwrite = [marks for name, marks in lanes if name.startswith("delta v2 ")]
    assert overwrite and sorted(overwrite[0]) == ["+", "-"]  # removed v0's file only, added its own
    assert not any("unknown" in name for name in by_name)
    page.hover(".lane .mark")
    assert "_delta_log/0000000000000000000" in page.eval("document.querySelector('.detail').innerText")
    page.screenshot(ARTIFACTS / "report-delta-stale-overwrite.png")
    assert (page.errors, page.dialogs) == ([], [])
