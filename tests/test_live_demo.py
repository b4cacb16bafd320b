"""`commitsleuth demo` ends with a live capture on a loopback Spark cluster (real Spark)."""

from __future__ import annotations

import re


def test_demo_captures_a_live_speculative_double_write(cli, tmp_path, monkeypatch):
    import commitsleuth.demo

    monkeypatch.setattr(commitsleuth.demo, "HEARTBEAT", 1.0)  # the job takes seconds: heard every one
    r = cli("demo", "--db", tmp_path / "demo.duckdb")
    assert r.exit_code == 0, r.err
    assert "CS101 double-commit [high]" in r.out  # the shipped sample part still comes first
    live = r.out[r.out.index("Live: a speculative foreachPartition"):]
    assert "live part skipped" not in live, live
    first = re.search(r"task (\d+)\.1 attempt 0 \(first attempt\) on (127\.0\.0\.\d): (\w+)", live)
    copy = re.search(r"task (\d+)\.1 attempt 1 \(speculative copy\) on (127\.0\.0\.\d): success", live)
    assert first and copy and first.group(1) == copy.group(1), live
    assert first.group(2) != copy.group(2), "the copy ran on the other worker"
    assert re.search(r"file 000001_0\.stage\d+ in dt=2026-11-21: written by task 1 attempt 0", live)
    assert re.search(r"file 000001_1\.stage\d+ in dt=2026-11-21: written by task 1 attempt 1", live)
    # half a minute of JVMs is never silent: each step is said, then a line a HEARTBEAT
    steps = [line for line in live.splitlines() if line.startswith("  ") and " s" in line][:4]
    assert steps[0] == "  starting the Spark master and two workers (three JVMs) ...", live
    assert re.fullmatch(r"  cluster up after \d+ s; starting the driver and its job, live capture attached \.\.\.",
                        steps[1]), live
    assert re.fullmatch(r"  \.\.\. the job runs \(\d+ s\)", steps[2]), live
    assert re.search(r"\n  done after \d+ s\n", live), live
