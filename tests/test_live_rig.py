"""Live capture on a real Spark standalone cluster: speculation really launches a second attempt.

One driver process (tests/live_driver.py) runs both scenarios against the `spark_rig`
fixture, each attached to its own store; the tests read what the listener stored and run
`commitsleuth analyze` on it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from commitsleuth.store import Store

DRIVER = Path(__file__).with_name("live_driver.py")


@pytest.fixture(scope="module")
def rig_run(spark_rig):
    proc = subprocess.run(
        [sys.executable, str(DRIVER), "rig", spark_rig.master_url, str(spark_rig.workdir)],
        env=spark_rig.env(), capture_output=True, text=True, timeout=300,
    )
    if proc.returncode != 0:
        pytest.fail(f"driver failed ({proc.returncode}):\n{proc.stderr[-4000:]}\n{spark_rig.log_tail()}")
    facts = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            fact = json.loads(line)
            facts[fact["scenario"]] = fact
    return spark_rig.workdir, facts


def rows(db: Path, sql: str, params=None) -> list[tuple]:
    with Store(db, read_only=True) as store:
        return store.con.execute(sql, params or []).fetchall()


def attempts_of_retried_task(db: Path) -> list[tuple]:
    """(task_id, attempt_no, speculative, host, status, kill_reason) of the task run twice."""
    return rows(db, """
        SELECT task_id, attempt_no, speculative, host, status, detail->>'kill_reason'
        FROM events
        WHERE kind = 'attempt_end'
          AND task_id IN (SELECT task_id FROM events WHERE kind = 'attempt_start'
                          GROUP BY task_id HAVING count(*) > 1)
        ORDER BY attempt_no""")


def test_speculative_double_write_records_both_attempts_and_their_files(rig_run):
    workdir, facts = rig_run
    db = workdir / "speculative.duckdb"
    fact = facts["speculative"]
    assert fact["errors"] == 0
    attempts = attempts_of_retried_task(db)
    assert [(a[1], a[2]) for a in attempts] == [(0, False), (1, True)], attempts
    task_id = attempts[0][0]
    partition = int(task_id.split(".")[1])
    assert attempts[0][3] != attempts[1][3], "the speculative copy runs on the other host"
    assert attempts[1][4] == "success"
    # Both attempts published: a file per attempt, named by partition and attempt, in one partition.
    files = rows(db, """
        SELECT file_name, file_task, file_attempt, location, partition_spec, size
        FROM events WHERE kind = 'file' ORDER BY file_name""")
    mine = [f for f in files if int(f[1]) == partition]
    assert [f[2] for f in mine] == [0, 1]
    assert {(f[3], f[4]) for f in mine} == {(fact["location"].rsplit("/", 1)[0], "dt=2026-11-21")}
    assert all(f[5] > 0 for f in mine)
    assert sorted(f[0] for f in files) == fact["files"]
    # The session's commit settings came along.
    conf = dict(rows(db, "SELECT detail->>'key', detail->>'value' FROM events WHERE kind = 'conf'"))
    assert conf["spark.speculation"] == "true"
    assert conf["spark.hadoop.mapreduce.fileoutputcommitter.algorithm.version"] in ("1", "2")


def test_speculative_double_write_is_reported_by_analyze(rig_run, cli):
    workdir, _ = rig_run
    db = workdir / "speculative.duckdb"
    task_id = attempts_of_retried_task(db)[0][0]
    result = cli("analyze", "--format", "json", "--db", db)
    findings = json.loads(result.out)
    double = [f for f in findings if f["name"] == "double-commit"]
    assert result.exit_code == 1 and double, result.out
    assert any(task_id in json.dumps(f) or task_id.split(".")[1].zfill(6) in json.dumps(f) for f in double)
    # The finding names both attempts of the task: hosts, attempt numbers, the speculative flag
    # and the file each wrote (issue 12).
    (spark_double,) = [f for f in double if (f.get("detail") or {}).get("attempts")]
    named = sorted(((a["attempt"], a["speculative"], a["host"], a["file"], a["status"])
                    for a in spark_double["detail"]["attempts"]))
    partition = int(task_id.split(".")[1])
    assert [(n[0], n[1]) for n in named] == [(0, False), (1, True)], named
    assert named[0][2] != named[1][2] and {n[2] for n in named} == {"127.0.0.2", "127.0.0.3"}
    assert [n[3].split(".")[0] for n in named] == [f"{partition:06d}_0", f"{partition:06d}_1"]
    assert named[0][4] == "killed" and named[1][4] == "success"
    for a in spark_double["detail"]["attempts"]:
        assert a["label"] in spark_double["summary"] and a["host"] in spark_double["summary"]
    # The partition's timeline: one lane per attempt, each with its own file's mark, the killed
    # attempt's bar marked killed, the two bars overlapping.
    from commitsleuth.forensics.timeline import timeline
    from commitsleuth.report.lanes import partition_lanes

    with Store(db, read_only=True) as store:
        model = partition_lanes(store, timeline(store, spark_double["location"], spark_double["partition"]))
    lanes = {ln.actor: ln for ln in model.lanes if ln.window == "attempt"}
    # lanes are keyed by the name the events carry; each attempt listed keeps it (issue 32)
    by_label = {a["attempt_name"]: a for a in spark_double["detail"]["attempts"]}
    assert set(by_label) <= set(lanes), (list(lanes), list(by_label))
    for label, a in by_label.items():
        assert [m.event.path.rsplit("/", 1)[1] for m in lanes[label].marks] == [a["file"]]
    killed, won = (lanes[lb] for lb in sorted(by_label, key=lambda lb: by_label[lb]["attempt"]))
    assert killed.status == "killed" and won.status == "success"
    assert killed.start < won.end and won.start < killed.end


def test_protected_write_shows_the_losing_attempt_and_no_double_commit(rig_run, cli):
    workdir, facts = rig_run
    db = workdir / "protected.duckdb"
    fact = facts["protected"]
    assert fact["errors"] == 0
    attempts = attempts_of_retried_task(db)
    assert [(a[1], a[2]) for a in attempts] == [(0, False), (1, True)], attempts
    winner, loser = attempts[1], attempts[0]
    assert winner[4] == "success"
    assert loser[4] in ("killed", "commit_denied") and loser[5] != ""
    # The SQL write is recorded with its target and mode, and its output was listed.
    writes = rows(db, """
        SELECT location, detail->'write'->>'mode', detail->'write'->>'format'
        FROM events WHERE kind = 'query_start' AND location IS NOT NULL""")
    assert writes == [(fact["location"], "Overwrite", "Parquet")]
    parts = rows(db, """
        SELECT file_task, write_uuid, query_id FROM events
        WHERE kind = 'file' AND file_name LIKE 'part-%' AND detail->>'leftover' IS NULL
        ORDER BY file_task""")
    assert [p[0] for p in parts] == ["00000", "00001"]
    assert len({p[1] for p in parts}) == 1, "one write job"
    assert all(p[2] is not None for p in parts), "each file is tied to the write that made it"
    success = rows(db, "SELECT count(*) FROM events WHERE kind = 'file' AND file_name = '_SUCCESS'")
    assert success == [(1,)]
    result = cli("analyze", "--format", "json", "--db", db)
    assert not [f for f in json.loads(result.out) if f["name"] == "double-commit"], result.out


def test_speculative_double_write_report_in_chromium(rig_run, tmp_path):
    """The same rig run's store drawn as the HTML report in real headless Chromium: the CS101
    finding's partition has two attempt lanes whose bars overlap, each with one mark, the file
    its attempt wrote; the killed attempt's bar is red (class ``bad``, computed colour), the
    winner's green. Screenshot in test-artifacts/report-live-speculative.png."""
    import shutil

    from browser import Chromium, chromium_path
    from commitsleuth.forensics.analyze import analyze
    from commitsleuth.report.html import write_report

    if chromium_path() is None:
        pytest.fail("chromium is not installed: apt-get install -y chromium (.ci/run installs it)")
    workdir, _ = rig_run
    db = tmp_path / "speculative.duckdb"  # a copy: the other tests read the rig's store as it was
    shutil.copy(workdir / "speculative.duckdb", db)
    with Store(db) as store:
        (double,) = [f for f in analyze(store) if f.code == "CS101" and (f.detail or {}).get("attempts")]
        attempts = sorted(double.detail["attempts"], key=lambda a: a["attempt"])
        files = dict(store.con.execute(
            "SELECT file_name, event_id FROM events WHERE kind = 'file' AND file_name IN (SELECT unnest(?))",
            [[a["file"] for a in attempts]]).fetchall())
        report = write_report(store, tmp_path / "report.html")
    assert [(a["attempt"], a["status"]) for a in attempts] == [(0, "killed"), (1, "success")]

    browser = Chromium()
    try:
        page = browser.page()
        page.goto(report.as_uri())
        page.wait_for("document.documentElement.dataset.readyMs")
        page.settle()
        lanes = page.eval(
            "[...document.querySelectorAll('article.finding[data-code=CS101] .lane')].map(l => {"
            " const bar = l.querySelector('.bar'), r = bar.getBoundingClientRect();"
            " return {actor: l.dataset.actor, label: l.querySelector('.actor').textContent,"
            "  bar: bar.className, colour: getComputedStyle(bar).backgroundColor, left: r.left, right: r.right,"
            "  marks: [...l.querySelectorAll('.mark')].map(m => Number(m.dataset.event))}; })")
        by_actor = {ln["actor"]: ln for ln in lanes}
        assert set(by_actor) >= {a["attempt_name"] for a in attempts}, lanes
        killed, won = (by_actor[a["attempt_name"]] for a in attempts)
        # each lane holds one mark: the file its own attempt wrote
        assert killed["marks"] == [files[attempts[0]["file"]]] and won["marks"] == [files[attempts[1]["file"]]]
        # each lane by its attempt's one label, the application said once above the lanes
        app = attempts[0]["app_id"]
        assert killed["label"] == attempts[0]["label"].removeprefix(app + "/") != attempts[0]["label"]
        assert won["label"] == attempts[1]["label"].removeprefix(app + "/")
        # attempt windows, overlapping in time; the killed one red, the winner green
        assert killed["bar"].split() == ["bar", "bad", "attempt"] and won["bar"].split() == ["bar", "ok", "attempt"]
        assert killed["colour"] == "rgb(198, 40, 40)" and won["colour"] == "rgb(46, 125, 50)"  # --bad, --ok
        assert killed["left"] < won["right"] and won["left"] < killed["right"]
        page.click(f".lane[data-actor='{attempts[0]['attempt_name']}'] .mark")
        detail = page.eval("document.querySelector('.detail').innerText")
        assert attempts[0]["file"] in detail and attempts[0]["label"] in detail
        page.eval("document.querySelector('article.finding[data-code=CS101]').scrollIntoView()")
        page.screenshot(Path(__file__).resolve().parent.parent / "test-artifacts" / "report-live-speculative.png")
        assert (page.errors, page.dialogs) == ([], [])
    finally:
        browser.close()
