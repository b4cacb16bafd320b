"""Lanes of a timeline: time axes from milliseconds to days, attempt windows from real Spark
event logs, event order when there are no timestamps, and the terminal drawing's width."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from commitsleuth.ingest import ingest
from commitsleuth.forensics.timeline import TimelineRow as Row
from commitsleuth.report.lanes import build, duration, partition_lanes, time_axis
from commitsleuth.report.terminal import lanes_text, middle
from commitsleuth.store import Store


@pytest.fixture(scope="module")
def spark_store(tmp_path_factory, corpus):
    with Store(tmp_path_factory.mktemp("lanes") / "spark.duckdb") as store:
        events = corpus / "spark-events"
        ingest(store, [str(events / "application_1628109047826_1317105"),
                       str(events / "eventlog_v2_local-1766844910796")])
        yield store


def attempt_rows(store: Store, app_id: str) -> list[Row]:
    """The attempt events of one application, as timeline rows (actor = the attempt)."""
    rows = store.con.execute(
        """SELECT e.event_id, e.ts, e.kind, e.attempt_id, NULL, e.status, s.uri || ':' || e.line_no, e.raw
           FROM events e JOIN sources s USING (source_id)
           WHERE e.app_id = ? AND e.kind IN ('attempt_start', 'attempt_end')
           ORDER BY e.ts, e.event_id""",
        [app_id],
    ).fetchall()
    return [Row(*r) for r in rows]


def test_speculative_attempt_lanes_on_a_seconds_axis(spark_store):
    """Task 3's speculative copy (TID 4) was killed when the original succeeded, 53 s later."""
    model = partition_lanes(spark_store, attempt_rows(spark_store, "application_1628109047826_1317105"))
    assert model.axis.mode == "time"
    assert model.axis.label.startswith("time, 2021-08-10 23:27:")
    assert "ticks every 10 s" in model.axis.label
    labels = [label for _, label in model.axis.ticks]
    assert labels[:3] == ["23:28:00", "23:28:10", "23:28:20"]
    lanes = {ln.actor: ln for ln in model.lanes}
    original, copy = lanes["task 3.0 in stage 0.0 (TID 3)"], lanes["task 3.1 in stage 0.0 (TID 4)"]
    assert (original.window, original.status, original.outcome) == ("attempt", "success", "ok")
    assert (copy.window, copy.status, copy.outcome) == ("attempt", "killed", "bad")
    assert original.start < copy.start < copy.end
    assert abs(original.end - copy.end) < 0.001  # killed as soon as the original finished
    assert all(0 <= ln.start <= ln.end <= 1 for ln in model.lanes)
    assert [ln.actor_type for ln in model.lanes] == ["attempt"] * 5


def test_millisecond_axis_of_the_rolling_log(spark_store):
    model = partition_lanes(spark_store, attempt_rows(spark_store, "local-1766844910796"))
    labels = [label for _, label in model.axis.ticks]
    assert labels and all(re.fullmatch(r"14:15:12\.\d{3}", label) for label in labels)
    assert " ms)" in model.axis.label


@pytest.mark.parametrize(
    "start, end, step, first_labels",
    [
        ("2013-05-30 10:13:59", "2013-05-30 10:14:02", "500 ms", ["10:13:59.000", "10:13:59.500", "10:14:00.000"]),
        ("2013-05-30 10:13:59", "2013-05-30 10:20:01", "1 min", ["10:14", "10:15"]),
        ("2013-05-30 10:13:59", "2013-05-30 15:20:01", "1 h", ["11:00", "12:00"]),
        ("2013-05-30 18:00:00", "2013-05-31 06:00:00", "2 h", ["18:00", "20:00", "22:00", "05-31 00:00"]),
        ("2013-05-01 00:00:00", "2013-05-10 00:00:00", "2 d", ["05-01", "05-03"]),
    ],
)
def test_time_axis_reads_at_every_scale(start, end, step, first_labels):
    axis = time_axis(dt.datetime.fromisoformat(start), dt.datetime.fromisoformat(end))
    assert axis.label.endswith(f"ticks every {step}")
    labels = [label for _, label in axis.ticks]
    assert labels[: len(first_labels)] == first_labels
    assert 2 <= len(labels) <= 8
    assert all(0 <= pos <= 1 for pos, _ in axis.ticks)


def test_untimed_events_are_drawn_in_order_and_say_so():
    rows = [Row(1, None, "rename", "a0", "p", None, "f:2", "x"),
            Row(2, dt.datetime(2013, 5, 30), "delete", "t1", "p", None, "f:3", "y"),
            Row(3, None, "rename", "a0", "p", None, "f:5", "z")]
    model = build(rows, evidence=[3])
    assert model.axis.mode == "order"
    assert "some of these events carry no timestamp" in model.axis.label
    assert [label for _, label in model.axis.ticks] == ["#1", "#2", "#3"]
    a0, t1 = model.lanes
    assert (a0.actor, [m.order for m in a0.marks], [m.evidence for m in a0.marks]) == ("a0", [1, 3], [False, True])
    assert (a0.start, a0.end) == (0.0, pytest.approx(1.0))
    assert (t1.actor_type, t1.marks[0].outcome, t1.marks[0].symbol) == ("thread", "bad", "D")


def test_terminal_lanes_fit_the_width_with_long_and_wide_names():
    actor = "HiveServer2-Handler-Pool: Thread-112 仓库表加载线程 with a very long name indeed"
    rows = [Row(i, dt.datetime(2017, 8, 30, 0, 8, 10 + i), kind, actor if i % 2 else "main", "hdfs://nn/仓库/dt=2017-08-30", None, "f:1", "")
            for i, kind in enumerate(["dir_create", "partition_add", "partition_exists", "delete"])]
    for width in (100, 80, 60):
        lines = lanes_text(build(rows), width=width, title="dt=2017-08-30 in db.sales")
        from rich.cells import cell_len

        assert max(cell_len(line.plain) for line in lines) <= width
        assert any("仓库" in line.plain or "…" in line.plain for line in lines)


def test_middle_keeps_both_ends():
    assert middle("attempt_201304111550_268224_m_000005_0", 20) == "attempt_2…m_000005_0"
    assert middle("short", 20) == "short"
    assert duration(0.25) == "250 ms" and duration(362) == "6 min 2 s" and duration(18362) == "5 h 6 min"


def test_listed_files_are_drawn_on_the_lanes_of_the_spark_attempts_that_wrote_them(tmp_path):
    """Two attempts of task 1 (attempt 0 killed, speculative attempt 1 succeeded) each wrote a
    file named by task and attempt: two attempt lanes, each with its own file's mark, unique to
    the application (another application's attempt with the same label gets no mark)."""
    from tests.test_detector_cases import case_event
    from commitsleuth.forensics.timeline import timeline

    def attempt(app, tid, no, spec, status, launch_s, end):
        return case_event({"kind": "attempt_end", "ts": end, "app_id": app, "stage_id": 1,
                           "stage_attempt": 0, "task_id": "1.1", "attempt_no": no, "speculative": spec,
                           "attempt_id": f"task 1.{no} in stage 1.0 (TID {tid})", "status": status,
                           "host": f"127.0.0.{2 + no}", "executor_id": str(no),
                           "detail": {"tid": tid, "launch_time": 1795255200000 + launch_s * 1000}})

    def file(app, name, ts):
        return case_event({"kind": "file", "ts": ts, "app_id": app, "size": 10,
                           "path": f"file:///w/side/dt=2026-11-21/{name}"})

    with Store(tmp_path / "lanes.duckdb") as store:
        store.write_events([
            attempt("app-1", 3, 0, False, "killed", 0, "2026-11-21 10:00:09"),
            attempt("app-1", 5, 1, True, "success", 3, "2026-11-21 10:00:05"),
            file("app-1", "000001_0.stage1", "2026-11-21 10:00:01"),
            file("app-1", "000001_1.stage1", "2026-11-21 10:00:04"),
        ])
        model = partition_lanes(store, timeline(store, "file:///w/side", "dt=2026-11-21"))
    lanes = {ln.actor: ln for ln in model.lanes}
    assert set(lanes) == {"task 1.0 in stage 1.0 (TID 3)", "task 1.1 in stage 1.0 (TID 5)"}
    killed, spec = lanes["task 1.0 in stage 1.0 (TID 3)"], lanes["task 1.1 in stage 1.0 (TID 5)"]
    assert killed.window == spec.window == "attempt"
    assert killed.status == "killed" and spec.status == "success"
    assert killed.start < spec.start < spec.end < killed.end  # the two bars overlap
    assert [m.event.path.rsplit("/", 1)[1] for m in killed.marks] == ["000001_0.stage1"]
    assert [m.event.path.rsplit("/", 1)[1] for m in spec.marks] == ["000001_1.stage1"]


TWO_APPS = ("application_1628109047826_1317105", "application_1628109047826_1317106")


def two_applications_store(db, corpus, tmp) -> Store:
    """The corpus log application_1628109047826_1317105 (task 3: TID 3 succeeded, its speculative
    copy TID 4 was killed) and a copy of it as another application (App ID ..._1317106, gzipped
    as people archive logs); each wrote files 000003_0 and 000003_1 into one partition
    file:///w/t dt=2021-08-10 (file events at times inside each attempt's window)."""
    import gzip

    from tests.test_detector_cases import case_event

    a, b = TWO_APPS
    log = (corpus / "spark-events" / a).read_bytes()
    copy = tmp / f"{b}.gz"
    copy.write_bytes(gzip.compress(log.replace(a.encode(), b.encode()), mtime=0))

    def file(app, name, ts):
        return case_event({"kind": "file", "ts": ts, "app_id": app, "size": 10,
                           "path": f"file:///w/t/dt=2021-08-10/{name}"})

    store = Store(db)
    ingest(store, [str(corpus / "spark-events" / a), str(copy)])
    store.write_events([file(app, name, ts) for app in (a, b) for name, ts in
                        (("000003_0", "2021-08-10 23:27:55"), ("000003_1", "2021-08-10 23:28:05"))])
    return store


def test_two_applications_writing_one_partition_get_a_lane_per_attempt_each(tmp_path, corpus):
    """Two applications' attempts share labels; the lanes do not: four lanes, each with its own
    file, labelled with the application."""
    from commitsleuth.forensics.timeline import timeline

    a, b = TWO_APPS
    with two_applications_store(tmp_path / "apps.duckdb", corpus, tmp_path) as store:
        assert store.query("select count(distinct app_id) from events")[1] == [(2,)]
        model = partition_lanes(store, timeline(store, "file:///w/t", "dt=2021-08-10"))
    lanes = {(ln.app, ln.actor): ln for ln in model.lanes}
    tid3, tid4 = "task 3.0 in stage 0.0 (TID 3)", "task 3.1 in stage 0.0 (TID 4)"
    assert sorted(lanes) == [(a, tid3), (a, tid4), (b, tid3), (b, tid4)]
    for app in (a, b):
        assert [m.event.path.rsplit("/", 1)[1] for m in lanes[app, tid3].marks] == ["000003_0"]
        assert [m.event.path.rsplit("/", 1)[1] for m in lanes[app, tid4].marks] == ["000003_1"]
        assert (lanes[app, tid3].window, lanes[app, tid3].status) == ("attempt", "success")
        assert (lanes[app, tid4].window, lanes[app, tid4].status) == ("attempt", "killed")
        # each lane by its attempt's one label, which names its application (issue 32)
        assert lanes[app, tid3].label == f"{app}/stage 0.0/task 3 attempt 0 (TID 3) on ltx1-hcl12413.grid.linkedin.com"
        assert lanes[app, tid4].label == f"{app}/stage 0.0/task 3 attempt 1 (TID 4) on ltx1-hcl12291.grid.linkedin.com"
    assert len({ln.label for ln in model.lanes}) == 4


def test_one_application_keeps_plain_labels_and_an_unnamed_event_joins_its_attempt():
    t = dt.datetime(2026, 11, 21, 10)
    label = "task 1.0 in stage 1.0 (TID 3)"
    rows = [Row(1, t, "file", label, "p", None, "f:1", ""), Row(2, t, "task_commit", label, "p", None, "g:9", "")]
    (lane,) = build(rows, apps={1: "app-1"}).lanes  # the text log's commit line names no application
    assert (lane.app, lane.label, len(lane.marks)) == ("app-1", label, 2)
    # two applications use the label: the unnamed event cannot say whose it is, and stays apart
    rows.append(Row(3, t, "file", label, "p", None, "f:2", ""))
    lanes = build(rows, apps={1: "app-1", 3: "app-2"}).lanes
    assert sorted((ln.app or "", ln.label) for ln in lanes) == [
        ("", label), ("app-1", f"app-1: {label}"), ("app-2", f"app-2: {label}")]


def test_app_ids_are_compacted_only_when_the_tail_tells_them_apart():
    from commitsleuth.report.lanes import compact_apps

    assert compact_apps({"application_1628109047826_1317105", "application_1628109047826_1317106"}) == {
        "application_1628109047826_1317105": "…1317105", "application_1628109047826_1317106": "…1317106"}
    assert compact_apps({"app-20161116163331-0000", "local-1422981780767"}) == {
        "app-20161116163331-0000": "…0000", "local-1422981780767": "…1422981780767"}
    # the same tail, or a tail too short to read as an id: whole
    assert compact_apps({"app-1-0000", "app-2-0000"}) == {"app-1-0000": "app-1-0000", "app-2-0000": "app-2-0000"}
    assert compact_apps({"app-1", "app-2"}) == {"app-1": "app-1", "app-2": "app-2"}
