"""The report's HTML as written (the browser tests open it): data block safety, folded source
lists, the first page ahead of the rest."""

from __future__ import annotations

import json
import re

from commitsleuth.forensics.analyze import analyze
from commitsleuth.ingest import ingest
from commitsleuth.report.html import MANY_SOURCES, PAGE_SIZE, _json_for_script, render_report
from commitsleuth.store import Store
from many_findings import many_findings_store


def test_data_block_cannot_end_its_script_element():
    text = _json_for_script({"raw": "</script><script>alert(1)</script><!-- & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"raw": "</script><script>alert(1)</script><!-- & \u2028"}


def test_many_sources_fold_away_but_problems_stay_in_view(tmp_path):
    files = tmp_path / "logs"
    files.mkdir()
    for i in range(MANY_SOURCES + 1):
        (files / f"notes-{i:02d}.txt").write_text(f"not a log, number {i}\n")
    with Store(tmp_path / "s.duckdb") as store:
        ingest(store, [str(files)])
        html = render_report(store)
    assert f"<h2 id=sources>Sources: {MANY_SOURCES + 1}</h2>" in html
    assert f"<details><summary>All {MANY_SOURCES + 1} sources</summary>" in html
    problems = html.split("Sources with problems or rejected lines:")[1].split("<details>")[0]
    assert problems.count("<td class='status-skipped'>skipped</td>") == MANY_SOURCES + 1


def test_first_page_travels_ahead_of_the_rest(tmp_path):
    with many_findings_store(tmp_path / "s.duckdb", tmp_path / "logs", 3, 10) as store:
        html = render_report(store)
    first = json.loads(re.search(r"<script type=application/json id=cs-first>(.*?)</script>", html).group(1))
    rest = json.loads(re.search(r"<script type=application/json id=cs-data>(.*?)</script>", html).group(1))
    assert (len(first["findings"]), first["total"]) == (PAGE_SIZE, 30)
    assert len(rest["findings"]) == 30
    assert first["findings"][0][:3] == rest["findings"][0][:3] == ["CS101", "double-commit", "high"]
    # only what the first page draws: its two partitions' timelines and their 40 events
    assert (len(first["timelines"]), len(first["events"])) == (2, 40)
    assert html.index("id=cs-first") < html.index("<script>") < html.index("id=cs-data")


def test_small_report_has_no_first_page_block(tmp_path):
    from commitsleuth.demo import sample_dir

    with Store(tmp_path / "s.duckdb") as store:
        ingest(store, [str(sample_dir() / "seed000" / "logs")])
        analyze(store)
        html = render_report(store)
    assert "id=cs-first" not in html and "id=cs-data>" in html
