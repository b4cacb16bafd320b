"""Benchmark: every detector over a generated store of 10M events on 100k partitions.

The store is generated with DuckDB SQL (no Python loops): clean partitions written by Spark-style
and Hive-style jobs (attempts, task commits, a listing of their files, metastore and load lines,
healthy speculative copies killed by 'another attempt succeeded'), and planted anomalies of
every detector in known partitions (table ``bench_planted``). The analysis then runs in a child
process under ``/usr/bin/time -v`` (wall time and peak RSS of the whole command), and its findings
are compared with the planted set: every planted anomaly found, nothing else.

Baseline, measured in the same run on the same store: one full-scan aggregate over ``events``
(the cheapest query that reads every event), so the ratio says how many "scans" all detectors
cost on this machine today.

    .venv/bin/python bench/analyze.py                      # 10M events, 100k partitions
    .venv/bin/python bench/analyze.py --events 200000 --partitions 2000 --db /tmp/small.duckdb
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from commitsleuth.store import Store

TABLES = 100
# Planted anomalies: partitions with p % MOD == slot carry that anomaly (distinct slots never meet).
MOD = 997
SLOTS = {
    "spark_double": 1, "hive_double": 2, "late": 3, "race": 4, "race_loss": 5,
    "same_name": 6, "partial": 7, "dedup": 8, "mismatch": 9, "writers": 10, "empty": 12,
}
# What each planted anomaly must be reported as (code[, severity]).
EXPECT = {
    "spark_double": "CS101", "hive_double": "CS101", "late": "CS102", "race": "CS103/high",
    "race_loss": "CS103/critical", "same_name": "CS104", "partial": "CS105", "dedup": "CS106",
    "mismatch": "CS107", "writers": "CS108", "temp": "CS109", "empty": "CS110",
}


def generate(con: duckdb.DuckDBPyConnection, n_events: int, n_parts: int) -> None:
    """Fill ``events`` and ``bench_planted`` in a few set-based statements."""
    con.execute("SET preserve_insertion_order = false; SET memory_limit = '4GB'")
    per_part = max(n_events // n_parts, 9)
    tasks = -(-(per_part - 5) // 4)  # 5 partition-level events + 4 per task, rounded up
    # Ids are computed, not sorted: partition p owns ids p*S … p*S+S-1 (tasks first, then the
    # partition's own events from F on); per-table events come after every partition's.
    S, F = 4 * tasks + 32, 4 * tasks
    per_table = max(n_parts // TABLES, 1)
    s = SLOTS
    con.execute(f"""
    CREATE OR REPLACE TEMP TABLE parts AS
    SELECT p, t,
           'hdfs://nn/warehouse/db' || (t % 10) || '.db/t' || t AS loc,
           'db' || (t % 10) || '.t' || t AS tbl,
           'dt=' || strftime(DATE '2020-01-01' + CAST(p % {per_table} AS INTEGER), '%Y-%m-%d') AS spec,
           t < {TABLES // 2} AS spark,
           md5(p::VARCHAR) AS h, md5(p::VARCHAR || 'x') AS h2,
           TIMESTAMP '2024-01-01' + to_seconds(p * 7) AS base,
           'Thread-' || p AS thread, 'app-' || p AS app,
           CASE p % {MOD} {' '.join(f"WHEN {v} THEN '{k}'" for k, v in s.items())} END AS anomaly
    FROM (SELECT range AS p, range // {per_table} AS t FROM range({n_parts}));
    UPDATE parts SET anomaly = NULL
     WHERE (anomaly IN ('spark_double', 'writers') AND NOT spark) OR (anomaly IN ('hive_double', 'dedup') AND spark);
    """)
    uuid = "substr({h},1,8)||'-'||substr({h},9,4)||'-4'||substr({h},14,3)||'-8'||substr({h},18,3)||'-'||substr({h},21,12)"
    u1, u2 = uuid.format(h="h"), uuid.format(h="h2")
    file_path = (f"loc || '/' || spec || '/' || CASE WHEN spark THEN 'part-' || lpad(k::VARCHAR, 5, '0') || '-' || {u1} "
                 f"|| '.c000.snappy.parquet' ELSE lpad(k::VARCHAR, 6, '0') || '_0' END")
    con.execute(f"""
    INSERT INTO events BY NAME
    WITH tk AS (SELECT parts.*, k FROM parts, range({tasks}) r(k))
    -- per task: start, end (success, bytes written), commit (Hadoop attempt id), listed file
    SELECT p * {S} + 4 * k AS event_id, 'attempt_start' AS kind, base + to_seconds(k * 0.5) AS ts, app AS app_id, 0 AS stage_id,
           '0.' || k AS task_id, 'task ' || k || '.0 in stage 0.0 (TID ' || k || ')' AS attempt_id,
           0 AS attempt_no, false AS speculative, NULL AS status, NULL::BIGINT AS size,
           NULL AS location, NULL AS partition_spec, NULL AS table_name, NULL AS path, NULL AS target_path,
           NULL AS file_name, NULL AS file_task, NULL::INTEGER AS file_attempt, NULL AS write_uuid, NULL AS job_id,
           NULL AS thread, NULL AS detail FROM tk
    UNION ALL
    SELECT p * {S} + 4 * k + 1, 'attempt_end', base + to_seconds(20 + k * 0.2), app, 0, '0.' || k,
           'task ' || k || '.0 in stage 0.0 (TID ' || k || ')', 0, false, 'success', 1000 + k,
           NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM tk
    UNION ALL
    SELECT p * {S} + 4 * k + 2, 'task_commit', base + to_seconds(21 + k * 0.2), app, NULL, NULL,
           'attempt_' || p || '_0001_m_' || lpad(k::VARCHAR, 6, '0') || '_0', 0, NULL, NULL, NULL,
           loc, spec, tbl, NULL, loc || '/' || spec, NULL, NULL, NULL, NULL, {u1}, NULL, NULL FROM tk
    UNION ALL
    SELECT p * {S} + 4 * k + 3, 'file', base + to_seconds(30), NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1000 + k,
           loc, spec, tbl, {file_path}, NULL, regexp_extract({file_path}, '[^/]+$'),
           CASE WHEN spark THEN lpad(k::VARCHAR, 5, '0') ELSE lpad(k::VARCHAR, 6, '0') END,
           CASE WHEN spark THEN NULL ELSE 0 END, CASE WHEN spark THEN {u1} END, NULL, NULL, NULL FROM tk
    """)
    con.execute(f"""
    INSERT INTO events BY NAME
    -- per partition: directory, metastore add, load, write-job commit (abort when planted), job start
    SELECT p * {S} + {F} AS event_id, 'dir_create' AS kind, base AS ts, NULL AS app_id, NULL AS job_id, thread, loc AS location,
           spec AS partition_spec, tbl AS table_name, loc || '/' || spec AS path, NULL AS target_path,
           NULL AS status, NULL AS query_id FROM parts
    UNION ALL SELECT p * {S} + {F} + 1, 'partition_add', base + to_seconds(0.5), NULL, NULL, thread, NULL, spec, tbl, NULL, NULL, 'ok', NULL FROM parts
    UNION ALL SELECT p * {S} + {F} + 2, 'load', base + to_seconds(25), NULL, NULL, thread, loc, spec, tbl, NULL, loc || '/' || spec, NULL, NULL FROM parts
    UNION ALL SELECT p * {S} + {F} + 3, CASE WHEN anomaly = 'partial' THEN 'job_abort' ELSE 'job_commit' END, base + to_seconds(29),
           app, {u1}, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM parts
    UNION ALL SELECT p * {S} + {F} + 4, 'job_start', base, app, '0', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM parts
    """)
    con.execute(f"""
    INSERT INTO events BY NAME
    -- healthy speculation: every 10th partition's task 0 ran a copy, killed when the original won
    SELECT p * {S} + {F} + 5 AS event_id, 'attempt_end' AS kind, base + to_seconds(21) AS ts, app AS app_id, '0.0' AS task_id,
           'task 0.1 in stage 0.0 (TID 99999)' AS attempt_id, true AS speculative, 'killed' AS status,
           800 AS size, '{{"kill_reason": "another attempt succeeded"}}' AS detail,
           NULL AS location, NULL AS partition_spec, NULL AS table_name, NULL AS path, NULL AS target_path,
           NULL AS file_name, NULL AS file_task, NULL::INTEGER AS file_attempt, NULL AS write_uuid,
           NULL AS job_id, NULL AS thread, NULL AS query_id, NULL AS raw
    FROM parts WHERE p % 10 = 0
    UNION ALL
    -- each table's _SUCCESS marker, written after its last job
    SELECT {n_parts} * {S} + 2 * min(t), 'file', TIMESTAMP '2100-01-01', NULL, NULL, NULL, NULL, NULL, 0, NULL,
           loc, NULL, any_value(tbl), loc || '/_SUCCESS', NULL, '_SUCCESS', NULL, NULL, NULL, NULL, NULL, NULL, NULL
    FROM parts GROUP BY loc
    UNION ALL
    -- planted: a second successful attempt of task 0 that wrote output
    SELECT p * {S} + {F} + 6, 'attempt_end', base + to_seconds(22), app, '0.0', 'task 0.2 in stage 0.0 (TID 100000)', true, 'success',
           5000, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
    FROM parts WHERE anomaly = 'spark_double'
    UNION ALL
    -- planted: Hive attempt file 000000_1 next to 000000_0
    SELECT p * {S} + {F} + 7, 'file', base + to_seconds(30), NULL, NULL, NULL, NULL, NULL, 1000, NULL, loc, spec, tbl,
           loc || '/' || spec || '/000000_1', NULL, '000000_1', '000000', 1, NULL, NULL, NULL, NULL, NULL
    FROM parts WHERE anomaly = 'hive_double'
    UNION ALL
    -- planted: a task commit of the write job after the job committed
    SELECT p * {S} + {F} + 8, 'task_commit', base + to_seconds(40), app, NULL, 'attempt_' || p || '_0001_m_000099_0', NULL, NULL,
           NULL, NULL, loc, spec, tbl, NULL, loc || '/' || spec, NULL, NULL, NULL, NULL, {u1}, NULL, NULL, NULL
    FROM parts WHERE anomaly = 'late'
    UNION ALL
    -- planted: a second thread adds and loads the same partition while the first is at it
    SELECT p * {S} + {F} + 8 + unnest([1, 2, 3]), unnest(['dir_create', 'partition_exists', 'load']), base + to_seconds(unnest([1, 2, 3])), NULL, NULL,
           NULL, NULL, NULL, NULL, NULL, loc, spec, tbl, CASE WHEN unnest([1, 2, 3]) = 1 THEN loc || '/' || spec END,
           CASE WHEN unnest([1, 2, 3]) = 3 THEN loc || '/' || spec END, NULL, NULL, NULL, NULL, NULL,
           'Thread-x' || p, NULL, NULL
    FROM parts WHERE anomaly = 'race'
    UNION ALL
    -- planted: a second thread creates the directory, then trashes it after the first one loaded
    SELECT p * {S} + {F} + 12 + unnest([0, 1]), unnest(['dir_create', 'delete']), base + to_seconds(unnest([1, 26])), NULL, NULL, NULL, NULL, NULL,
           NULL, NULL, loc, spec, tbl, loc || '/' || spec, NULL, NULL, NULL, NULL, NULL, NULL, 'Thread-x' || p, NULL, NULL
    FROM parts WHERE anomaly = 'race_loss'
    UNION ALL
    -- planted: the same source file loaded twice into the partition by two queries the thread
    -- compiled just before (a LOAD line does not name its query)
    SELECT p * {S} + {F} + 14 + unnest([0, 1, 2, 3]), unnest(['query_start', 'load', 'query_start', 'load']),
           base + to_seconds(unnest([4.5, 5, 5.5, 6])), NULL, NULL, NULL, NULL, NULL, NULL, NULL,
           CASE WHEN unnest([0, 1, 0, 1]) = 1 THEN loc END, CASE WHEN unnest([0, 1, 0, 1]) = 1 THEN spec END,
           CASE WHEN unnest([0, 1, 0, 1]) = 1 THEN tbl END,
           CASE WHEN unnest([0, 1, 0, 1]) = 1 THEN 'hdfs://nn/incoming/' || p || '/data.log' END,
           NULL, NULL, NULL, NULL, NULL, NULL, thread,
           CASE WHEN unnest([0, 1, 0, 1]) = 0 THEN 'hive_q' || p || '_' || unnest([1, 1, 2, 2]) END, NULL
    FROM parts WHERE anomaly = 'same_name'
    UNION ALL
    -- planted: the partition's own thread deletes its directory after everything was written
    SELECT p * {S} + {F} + 24, 'delete', base + to_seconds(40), NULL, NULL, NULL, NULL, NULL, NULL, NULL, loc, spec, tbl,
           loc || '/' || spec, NULL, NULL, NULL, NULL, NULL, NULL, thread, NULL, NULL
    FROM parts WHERE anomaly = 'mismatch'
    UNION ALL
    -- planted: a part file of a second write job
    SELECT p * {S} + {F} + 17, 'file', base + to_seconds(31), NULL, NULL, NULL, NULL, NULL, 1000, NULL, loc, spec, tbl,
           loc || '/' || spec || '/part-00000-' || {u2} || '.c000.snappy.parquet', NULL,
           'part-00000-' || {u2} || '.c000.snappy.parquet', '00000', NULL, {u2}, NULL, NULL, NULL, NULL
    FROM parts WHERE anomaly = 'writers'
    UNION ALL
    -- planted: an empty partition directory in the listing
    SELECT p * {S} + {F} + 18, 'file', base + to_seconds(30), NULL, NULL, NULL, NULL, NULL, NULL, '{{"dir": true}}', loc,
           'dt=empty-' || p, tbl, loc || '/dt=empty-' || p, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
    FROM parts WHERE anomaly = 'empty'
    UNION ALL
    -- planted: a leftover _temporary tree in every tenth table
    SELECT {n_parts} * {S} + 2 * min(t) + 1, 'file', TIMESTAMP '2024-01-01', NULL, NULL, NULL, NULL, NULL, 10, NULL, loc, 'dt=2020-01-01', any_value(tbl),
           loc || '/_temporary/0/_temporary/attempt_1/dt=2020-01-01/part-00000', NULL, 'part-00000', '00000',
           NULL, NULL, NULL, NULL, NULL, NULL
    FROM parts WHERE t % 10 = 3 GROUP BY loc
    """)
    # planted: Hive dedup kept the killed attempt's (larger) file, removed the successful one's
    con.execute(f"""
    INSERT INTO events BY NAME
    SELECT p * {S} + {F} + 19 + unnest([0, 1, 2, 3, 4]) AS event_id,
           unnest(['rename', 'rename', 'attempt_state', 'attempt_state', 'dedup_remove']) AS kind,
           base + to_seconds(unnest([10, 11, 12, 13, 28])) AS ts,
           unnest(['attempt_' || p || '_0001_m_000050_0', 'attempt_' || p || '_0001_m_000050_1',
                   'attempt_' || p || '_0001_m_000050_0', 'attempt_' || p || '_0001_m_000050_1', NULL]) AS attempt_id,
           loc AS location, spec AS partition_spec, tbl AS table_name,
           unnest([NULL, NULL, NULL, NULL, loc || '/' || spec || '/000050_1']) AS path,
           unnest([loc || '/' || spec || '/000050_0', loc || '/' || spec || '/000050_1', NULL, NULL, NULL]) AS target_path,
           unnest(['000050_0', '000050_1', NULL, NULL, '000050_1']) AS file_name,
           unnest(['000050', '000050', NULL, NULL, '000050']) AS file_task,
           unnest([0, 1, NULL, NULL, 1]) AS file_attempt,
           unnest([900, 800, NULL, NULL, 800]) AS size,
           unnest([NULL, NULL, '{{"to": "KILLED"}}', '{{"to": "SUCCEEDED"}}',
                   '{{"kept": "' || loc || '/' || spec || '/000050_0", "kept_size": 900}}']) AS detail
    FROM parts WHERE anomaly = 'dedup'
    """)
    con.execute("""
    CREATE OR REPLACE TABLE bench_planted AS
    -- a Spark event log names the application, not the output: those findings are keyed by app
    SELECT anomaly, CASE WHEN anomaly = 'spark_double' THEN app ELSE loc END AS location,
           CASE WHEN anomaly = 'empty' THEN 'dt=empty-' || p WHEN anomaly = 'spark_double' THEN NULL ELSE spec END
               AS partition_spec
    FROM parts WHERE anomaly IS NOT NULL
    UNION ALL SELECT DISTINCT 'temp', loc, NULL FROM parts WHERE t % 10 = 3
    """)
    # ids in one pass, in time order, as ingest would have assigned them in write order
    con.execute("DROP TABLE parts; RESET memory_limit; RESET preserve_insertion_order")


def compare(planted: list[tuple], findings: list[list]) -> tuple[set, set]:
    """(planted anomalies not reported, findings that are no planted anomaly)."""
    want = set()
    for anomaly, loc, part in planted:
        code, _, sev = EXPECT[anomaly].partition("/")
        want.add((code, sev or None, loc, part))
    graded = {w[0] for w in want if w[1]}  # codes whose severity is part of the expectation
    got = {(c, s if c in graded else None, loc, part) for c, s, loc, part in findings}
    return want - got, got - want


CHILD = r"""
import json, sys, time
from commitsleuth.store import Store
from commitsleuth.forensics.analyze import analyze, prepared
from commitsleuth.forensics.detectors import DETECTORS
with Store(sys.argv[1]) as store:
    store.con.execute("SET enable_progress_bar = false")
    t0 = time.perf_counter()
    findings = analyze(store)
    total = time.perf_counter() - t0
    per = {}
    with prepared(store):  # each detector alone, for the table (after the full run above)
        for d in DETECTORS:
            t = time.perf_counter(); d().run(store.con); per[d.code] = round(time.perf_counter() - t, 2)
    json.dump({"seconds": total, "per_detector": per,
               "findings": [[f.code, f.severity, f.location or (f.detail or {}).get("app_id"), f.partition_spec]
                            for f in findings]},
              open(sys.argv[2], "w"))
"""

BASELINE = r"""
import sys, time, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
con.execute("SET enable_progress_bar = false")
t = time.perf_counter()
con.execute("SELECT kind, location, partition_spec, count(*), min(ts), max(ts) FROM events GROUP BY ALL").fetchall()
print(time.perf_counter() - t)
"""


def timed(code: str, *args: str) -> tuple[str, float, float]:
    """Run ``python -c code args`` under /usr/bin/time -v: (stdout, wall seconds, peak RSS MiB)."""
    cmd = ["/usr/bin/time", "-v", sys.executable, "-c", code, *args]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"child failed:\n{p.stderr[-3000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", p.stderr)
    h, m, s = (float(x) if x else 0.0 for x in wall.groups())
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) / 1024
    return p.stdout, h * 3600 + m * 60 + s, rss


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--partitions", type=int, default=100_000)
    ap.add_argument("--db", default=None, help="store to (re)generate (default: a temp file)")
    ap.add_argument("--reuse", action="store_true", help="analyze the --db store as it is (no regeneration)")
    ap.add_argument("--max-seconds", type=float, default=30.0)
    ap.add_argument("--max-mib", type=float, default=4096.0)
    args = ap.parse_args(argv)

    db = Path(args.db or Path(tempfile.mkdtemp(prefix="cs-bench-")) / "bench.duckdb")
    reuse = args.reuse and args.db and db.exists()
    if not reuse:
        for leftover in (db, Path(f"{db}.wal")):
            leftover.unlink(missing_ok=True)
    t = time.perf_counter()
    with Store(db) as store:
        if not reuse:
            generate(store.con, args.events, args.partitions)
        n = store.count("events")
        planted = store.con.execute("SELECT anomaly, location, partition_spec FROM bench_planted").fetchall()
    print(f"{'reused' if reuse else 'generated'} {n:,} events over {args.partitions:,} partitions, {len(planted)} planted anomalies "
          f"in {time.perf_counter() - t:.1f} s -> {db}")

    out = db.with_suffix(".findings.json")
    _, wall, rss = timed(CHILD, str(db), str(out))
    result = json.loads(out.read_text())
    base_out, base_wall, _ = timed(BASELINE, str(db))
    scan = float(base_out.strip().splitlines()[-1])

    missing, extra = compare(planted, result["findings"])

    print(f"analyze (all {len(result['per_detector'])} detectors): {result['seconds']:.1f} s in the store, "
          f"{wall:.1f} s whole command, peak RSS {rss:,.0f} MiB")
    print("per detector (s): " + ", ".join(f"{k} {v}" for k, v in result["per_detector"].items()))
    print(f"baseline full-scan aggregate: {scan:.2f} s -> analyze = {result['seconds'] / scan:.1f}x one scan")
    print(f"findings {len(result['findings'])}, planted {len(planted)}: missing {len(missing)}, false positives {len(extra)}")
    for m in sorted(missing, key=str)[:10]:
        print("  MISSING", m)
    for e in sorted(extra, key=str)[:10]:
        print("  FALSE POSITIVE", e)
    ok = not missing and not extra and result["seconds"] <= args.max_seconds and rss <= args.max_mib
    print("PASS" if ok else "FAIL")
    if args.db is None:
        for f in (db, Path(f"{db}.wal"), out):
            f.unlink(missing_ok=True)
        db.parent.rmdir()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
