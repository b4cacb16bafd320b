"""How fast a big HTML report is written and opens in real headless Chromium.

Baselines measured in the same run: the 1-finding report of seed 000 in the same browser (first
screen and load event), and DuckDB's own `COPY findings TO '…' (FORMAT json)` for writing.

    .venv/bin/python bench/report_render.py [--findings 10000] [--runs 3]

Prints the median first-screen time (the report script's own clock, from navigation start to the
first page of findings drawn), the time until all findings are read (paging and filters work),
the load event as the test driver sees it, the file size, and each as a ratio to its baseline.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from browser import Chromium  # noqa: E402
from many_findings import many_findings_store  # noqa: E402

from commitsleuth.demo import sample_dir  # noqa: E402
from commitsleuth.forensics.analyze import analyze  # noqa: E402
from commitsleuth.ingest import ingest  # noqa: E402
from commitsleuth.report import write_report  # noqa: E402
from commitsleuth.store import Store  # noqa: E402


def open_times(browser: Chromium, report: Path, runs: int) -> tuple[float, float, float]:
    first, load, ready = [], [], []
    for _ in range(runs):
        page = browser.page()
        load.append(page.goto(report.as_uri()) * 1000)
        first.append(float(page.wait_for("document.documentElement.dataset.firstScreenMs")))
        ready.append(float(page.wait_for("document.documentElement.dataset.readyMs")))
        page.close()
    return statistics.median(first), statistics.median(load), statistics.median(ready)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--findings", type=int, default=10_000, help="findings in the big report (multiple of 10)")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="cs-bench-report-"))

    with Store(tmp / "seed.duckdb") as store:
        ingest(store, [str(sample_dir() / "seed000" / "logs")])
        analyze(store)
        base_report = write_report(store, tmp / "seed.html")

    with many_findings_store(tmp / "many.duckdb", tmp / "logs", args.findings // 10, 10) as store:
        t0 = time.perf_counter()
        store.con.execute(f"COPY findings TO '{tmp / 'findings.json'}' (FORMAT json)")
        copy_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        big_report = write_report(store, tmp / "many.html")
        write_s = time.perf_counter() - t0
        n = store.count("findings")

    browser = Chromium()
    try:
        base_first, base_load, base_ready = open_times(browser, base_report, args.runs)
        big_first, big_load, big_ready = open_times(browser, big_report, args.runs)
    finally:
        browser.close()

    size = big_report.stat().st_size
    print(f"report of {n} findings: {size / 1e6:.1f} MB; median of {args.runs} opens in headless Chromium")
    print(f"  first screen  {big_first:8.0f} ms   baseline (1 finding) {base_first:6.0f} ms   ratio {big_first / base_first:5.1f}x")
    print(f"  all findings  {big_ready:8.0f} ms   baseline (1 finding) {base_ready:6.0f} ms   ratio {big_ready / base_ready:5.1f}x")
    print(f"  load event    {big_load:8.0f} ms   baseline (1 finding) {base_load:6.0f} ms   ratio {big_load / base_load:5.1f}x")
    print(f"  write report  {write_s * 1000:8.0f} ms   baseline (duckdb COPY findings to json) {copy_s * 1000:5.0f} ms"
          f"   ratio {write_s / copy_s:5.1f}x")


if __name__ == "__main__":
    main()
