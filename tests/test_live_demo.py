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
    # every attempt by its one label (issue 32): app/stage/task, attempt, TID and host
    label = r"((app-\d+-\d+)/stage (\d+)\.0/task 1 attempt {} \(TID \d+\) on (127\.0\.0\.\d))"
    first = re.search("  " + label.format(0) + r" \(first attempt\): \w+", live)
    copy = re.search("  " + label.format(1) + r" \(speculative copy\): success", live)
    assert first and copy and first.group(2, 3) == copy.group(2, 3), live
    assert first.group(4) != copy.group(4), "the copy ran on the other worker"
    stage = first.group(3)
    assert f"  file 000001_0.stage{stage} in dt=2026-11-21: written by {first.group(1)}" in live
    assert f"  file 000001_1.stage{stage} in dt=2026-11-21: written by {copy.group(1)}" in live
    assert f"    actors: {first.group(1)}, {copy.group(1)}" in live
    # half a minute of JVMs is never silent: each step is said, then a line a HEARTBEAT
    steps = [line for line in live.splitlines() if line.startswith("  ") and " s" in line][:4]
    assert steps[0] == "  starting the Spark master and two workers (three JVMs) ...", live
    assert re.fullmatch(r"  cluster up after \d+ s; starting the driver and its job, live capture attached \.\.\.",
                        steps[1]), live
    assert re.fullmatch(r"  \.\.\. the job runs \(\d+ s\)", steps[2]), live
    assert re.search(r"\n  done after \d+ s\n", live), live
