"""Benchmark: Spark event logs and text logs through the local engine and the Spark engine.

1. A Spark event log of about 1M decoder events, made by replicating the job/stage/task events
   of the real corpus logs (tests/corpus/spark-events/) with new job, stage and task ids
   inside one application. Timed in the same run: `grep -c -F` over it (the floor), the local
   engine (`commitsleuth ingest`), the decoder alone (JSON lines -> events, no store), DuckDB's
   read_json (the fast-path candidate), then the same lines dealt into --text-files logs through
   the local engine and the Spark engine on local[2] (Parquet out, then attach).
2. A text log (Hive 1.x log4j1 layout, ~1% of the lines become events) of --text-size bytes
   through the local engine and the Spark engine split into --text-files files.

    python bench/ingest_spark.py                       # 1M events, 1 GiB text log
    python bench/ingest_spark.py --events 200000 --text-size 100M   # quicker
    python bench/ingest_spark.py --fast-only --events 500000 --runs 5   # 3. only

3. The event-log fast path (commitsleuth/ingest/eventlog_fast.py) end to end into a fresh store,
   against DuckDB's read_json parsing the same file and projecting the same fields, alternating,
   --runs times each, for the plain log, the same log zstd-compressed and as a rolling directory of
   4 parts. Each run is its own process (its time taken inside it, its peak RSS from the kernel);
   prints events/s, the ratio of the medians with the min-max of the per-run ratios, peak memory
   and the load, and whether the targets are met (>= 500k events/s, the 200k/s floor, within 3x of
   read_json, memory <= 1 GiB). For the plain log a third arm alternates with them: the store's
   writes alone, the fast path's own rows of the log (made once per run of this bench, untimed)
   written into a fresh store as ingest writes them, which bounds any design that stores them so;
   and a fourth: DuckDB alone, the fast path's own SQL over the file read by DuckDB's CSV reader
   on all its threads, its rows (no raw lines, no decoder) written by DuckDB into a table, which
   bounds any design that keeps this SQL, however the work is moved into DuckDB.

Data is generated once under --work (default /tmp/commitsleuth-bench-spark) and reused.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("COMMITSLEUTH_CORPUS", REPO / "tests" / "corpus")) / "spark-events"
BODY_EVENTS = ("SparkListenerJobStart", "SparkListenerJobEnd", "SparkListenerStageSubmitted",
               "SparkListenerStageCompleted", "SparkListenerTaskStart", "SparkListenerTaskEnd",
               "SparkListenerSQLExecutionStart", "SparkListenerSQLExecutionEnd",
               "org.apache.spark.scheduler.SparkListenerExecutorBlacklisted",
               "org.apache.spark.scheduler.SparkListenerNodeBlacklisted")


def _corpus_lines() -> tuple[list[dict], list[dict], list[dict]]:
    """(head, body, tail) events of the plain corpus logs: the body is what gets replicated."""
    head, body, tail = [], [], []
    for name in ("application_1628109047826_1317105", "app-20161116163331-0000", "local-1422981780767"):
        for line in (CORPUS / name).read_text().splitlines():
            ev = json.loads(line)
            kind = ev["Event"]
            if kind in BODY_EVENTS:
                body.append(ev)
            elif not head or kind in ("SparkListenerEnvironmentUpdate", "SparkListenerApplicationStart"):
                if name == "application_1628109047826_1317105" and kind != "SparkListenerApplicationEnd":
                    head.append(ev)
            if kind == "SparkListenerApplicationEnd" and not tail:
                tail.append(ev)
    return head, body, tail


def _renumber(ev: dict, k: int) -> dict:
    """A copy of a body event in replica ``k``: jobs, stages and tasks get ids of their own."""
    ev = json.loads(json.dumps(ev))
    job, stage, task = k * 10, k * 10, k * 100
    if "Job ID" in ev:
        ev["Job ID"] += job
        if "Stage IDs" in ev:
            ev["Stage IDs"] = [s + stage for s in ev["Stage IDs"]]
        for info in ev.get("Stage Infos", []):
            info["Stage ID"] += stage
    if "Stage ID" in ev:
        ev["Stage ID"] += stage
    if "Stage Info" in ev:
        ev["Stage Info"]["Stage ID"] += stage
    if "Task Info" in ev:
        ev["Task Info"]["Task ID"] += task
    if "stageId" in ev:
        ev["stageId"] += stage
    if "executionId" in ev:
        ev["executionId"] += k
    return ev


def make_event_log(path: Path, target_events: int) -> int:
    """Writes the log; returns the number of body lines (each one decoder event or more)."""
    from commitsleuth.parsers.base import ParseStats, SourceContext
    from commitsleuth.parsers.spark_events import decode_lines

    head, body, tail = _corpus_lines()
    per_copy = sum(1 for _ in decode_lines(
        ((i, 0, json.dumps(e)) for i, e in enumerate(body, 1)), SourceContext("x"), ParseStats()))
    copies = -(-target_events // per_copy)
    with open(path, "w") as f:
        for ev in head:
            f.write(json.dumps(ev, separators=(",", ":")) + "\n")
        for k in range(copies):
            f.write("".join(json.dumps(_renumber(ev, k), separators=(",", ":")) + "\n" for ev in body))
        for ev in tail:
            f.write(json.dumps(ev, separators=(",", ":")) + "\n")
    return copies * per_copy


TEXT_CHATTER = (
    "{d} INFO  [main]: exec.Task (SessionState.java:printInfo(951)) - Hadoop job information for Stage-1: "
    "number of mappers: 12; number of reducers: 1",
    "{d} INFO  [main]: log.PerfLogger (PerfLogger.java:PerfLogEnd(148)) - </PERFLOG method=compile "
    "start=1425294235093 end=1425294235101 duration=8 from=org.apache.hadoop.hive.ql.Driver>",
    "{d} INFO  [main]: exec.Utilities (Utilities.java:getBaseWork(390)) - PLAN PATH = hdfs://nn/tmp/hive/"
    "hive/a9c1/hive_2015-03-02_11-03-55_093_{n}/-mr-10003/map.xml",
)
TEXT_EVENTS = (
    "{d} INFO  [main]: exec.Utilities (Utilities.java:mvFileToFinalPath(1712)) - Moving tmp dir: "
    "hdfs://nn/user/hive/warehouse/t/.hive-staging_hive_2015-03-02_11-03-55_093_{n}/_tmp.-ext-10000 to: "
    "hdfs://nn/user/hive/warehouse/t/.hive-staging_hive_2015-03-02_11-03-55_093_{n}/-ext-10000",
    "{d} INFO  exec.Utilities (Utilities.java:removeTempOrDuplicateFiles(1396)) - Duplicate taskid file "
    "removed: hdfs://nn/tmp/hive-deploy/hive_2013-05-30_10-13-59_124_86/_tmp.-ext-10000.intermediate/"
    "hp_cal_month=2013-04/000005_1 with length 666922. Existing file: hdfs://nn/tmp/hive-deploy/"
    "hive_2013-05-30_10-13-59_124_86/_tmp.-ext-10000.intermediate/hp_cal_month=2013-04/000005_0 "
    "with length 666922",
)


def make_text_logs(directory: Path, size: int, files: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    per_file = size // files
    for i in range(files):
        written, n = 0, i * 10_000_000  # distinct files: identical ones are read once
        with open(directory / f"hive-{i:03d}.log", "w") as f:
            while written < per_file:
                lines = []
                for _ in range(10000):
                    n += 1
                    d = f"2015-03-02 11:{n // 60000 % 60:02d}:{n // 1000 % 60:02d},{n % 1000:03d}"
                    pool = TEXT_EVENTS if n % 100 == 0 else TEXT_CHATTER
                    lines.append(pool[n % len(pool)].format(d=d, n=n) + "\n")
                chunk = "".join(lines)
                f.write(chunk)
                written += len(chunk)


def split_log(log: Path, directory: Path, n: int) -> None:
    """The log's lines dealt into ``n`` logs of consecutive lines, one application id each."""
    directory.mkdir(parents=True)
    size = log.stat().st_size
    with open(log, "rb") as src:
        for i in range(n):
            with open(directory / f"local-17000000000{i:02d}", "wb") as out:
                for line in src:
                    out.write(line)
                    if i < n - 1 and src.tell() >= size * (i + 1) // n:
                        break


def timed(label: str, fn):
    t = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - t
    print(f"  {label:<44} {elapsed:8.2f} s", flush=True)
    return elapsed, result


def grep_count(path: Path, needle: str) -> int:
    files = [str(p) for p in (path.rglob("*") if path.is_dir() else [path]) if p.is_file()]
    out = subprocess.run(["grep", "-c", "-F", needle, *files], capture_output=True, text=True).stdout
    return sum(int(x.rsplit(":", 1)[-1]) for x in out.split())


def local_engine(paths: list[Path], db: Path) -> int:
    from commitsleuth.ingest import ingest
    from commitsleuth.store import Store

    db.unlink(missing_ok=True)
    with Store(db) as store:
        return ingest(store, [str(p) for p in paths]).events


def decoder_only(path: Path) -> int:
    from commitsleuth.parsers.base import ParseStats, SourceContext
    from commitsleuth.parsers.spark_events import decode_lines
    from commitsleuth.ingest.readers import open_lines

    return sum(1 for _ in decode_lines(open_lines(path), SourceContext(str(path)), ParseStats()))


def duckdb_json(path: Path) -> int:
    """The candidate fast path: DuckDB's own JSON reader, parsing and projecting the task fields
    (no mapping to canonical events yet, so an upper bound, not an equal result)."""
    import duckdb

    sql = """
        SELECT count(*) FROM (
            SELECT "Event", "Stage ID", "Task Info"->>'$."Task ID"' AS tid,
                   "Task End Reason"->>'$.Reason' AS reason
            FROM read_json(?, format = 'newline_delimited', maximum_object_size = 1073741824,
                           columns = {'Event': 'VARCHAR', 'Stage ID': 'BIGINT', 'Task Info': 'JSON',
                                      'Task End Reason': 'JSON'}))
        WHERE "Event" IS NOT NULL"""
    return duckdb.connect().execute(sql, [str(path)]).fetchone()[0]


# The fields the fast path reads, as read_json columns typed the plain way (the fast path reads the
# values as JSON to check their types too, which this baseline does not).
READ_JSON_SQL = """
    SELECT count(*), sum("Task Info"."Task ID"), count("Task End Reason"."Reason"),
           sum("Task Metrics"."Output Metrics"."Bytes Written"), count("Stage Info"."Stage Name"),
           count("Job Result"."Result"), sum(len("Stage IDs")), count("Properties"."spark.jobGroup.id"),
           max("Task Info"."Host"), max("Stage Attempt ID"), max("Submission Time"), max("Completion Time")
    FROM read_json($path, format = 'newline_delimited', compression = $codec,
                   maximum_object_size = 1073741824, ignore_errors = true, columns = {
        'Event': 'VARCHAR', 'Stage ID': 'BIGINT', 'Stage Attempt ID': 'BIGINT', 'Job ID': 'BIGINT',
        'Submission Time': 'BIGINT', 'Completion Time': 'BIGINT', 'Stage IDs': 'BIGINT[]',
        'Properties': 'STRUCT("spark.sql.execution.id" VARCHAR, "spark.jobGroup.id" VARCHAR)',
        'Job Result': 'STRUCT("Result" VARCHAR)',
        'Stage Info': 'STRUCT("Stage ID" BIGINT, "Stage Attempt ID" BIGINT, "Stage Name" VARCHAR, '
                      '"Number of Tasks" BIGINT, "Submission Time" BIGINT, "Completion Time" BIGINT, '
                      '"Failure Reason" VARCHAR)',
        'Task Info': 'STRUCT("Task ID" BIGINT, "Index" BIGINT, "Attempt" BIGINT, "Partition ID" BIGINT, '
                     '"Launch Time" BIGINT, "Finish Time" BIGINT, "Executor ID" VARCHAR, "Host" VARCHAR, '
                     '"Speculative" BOOLEAN)',
        'Task End Reason': 'STRUCT("Reason" VARCHAR, "Kill Reason" VARCHAR, "Description" VARCHAR, '
                           '"Class Name" VARCHAR)',
        'Task Metrics': 'STRUCT("Output Metrics" STRUCT("Bytes Written" BIGINT, "Records Written" BIGINT))'})
"""

# Each measured run in a process of its own: time taken inside, peak RSS from the kernel.
CHILD_FAST = """
import json, resource, sys, time
from pathlib import Path
from commitsleuth.ingest import ingest
from commitsleuth.ingest.pool import arrow_without_pandas
arrow_without_pandas()  # as the CLI program does: no pandas import (0.3 CPU-s) on the first Arrow array
from commitsleuth.store import Store
db = Path(sys.argv[2]); db.unlink(missing_ok=True); Path(str(db) + ".wal").unlink(missing_ok=True)
t = time.perf_counter()
with Store(db) as store:
    report = ingest(store, [sys.argv[1]])
seconds = time.perf_counter() - t
assert [r.status for r in report.results] == ["ok"], [(r.status, r.reason) for r in report.results]
print(json.dumps({"seconds": seconds, "events": report.events,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""
CHILD_READ_JSON = """
import json, resource, sys, time
import duckdb
sys.path.insert(0, sys.argv[3])
from ingest_spark import READ_JSON_SQL
t = time.perf_counter()
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")  # else drawn on stdout, before the figures, when the query runs long
row = con.execute(READ_JSON_SQL, {"path": sys.argv[1], "codec": sys.argv[2]}).fetchone()
print(json.dumps({"seconds": time.perf_counter() - t, "events": row[0],
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""
# The store's part alone: the fast path's own tables of the log (made first, kept in an Arrow
# file, not timed) written into a fresh store as ingest writes them (a checkpoint a table, a
# commit every COMMIT_ROWS). No design that stores the raw lines in the store ends faster than this.
CHILD_STORE = """
import json, os, resource, sys, time
from pathlib import Path
import pyarrow as pa
from commitsleuth.ingest import eventlog_fast
from commitsleuth.ingest.local import COMMIT_ROWS
from commitsleuth.ingest.readers import BlockReader
from commitsleuth.model import EVENT_SCHEMA
from commitsleuth.parsers import ParseStats, SourceContext
from commitsleuth.store import Store
log, db, tables = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
if not tables.exists():
    fast = eventlog_fast.FastEventLog(SourceContext(uri=str(log), source_id=1), ParseStats(), 1)
    with pa.OSFile(str(tables) + ".part", "wb") as sink, pa.ipc.new_file(sink, EVENT_SCHEMA) as writer:
        for table in fast.tables(BlockReader(log, 0, block=eventlog_fast.BLOCK)):
            writer.write_table(table)
    os.replace(str(tables) + ".part", tables)
batches = pa.ipc.open_file(pa.memory_map(str(tables)))
db.unlink(missing_ok=True); Path(str(db) + ".wal").unlink(missing_ok=True)
t = time.perf_counter()
events = pending = 0
with Store(db) as store:
    sid = store.add_source(str(log), "spark-eventlog")
    for k in range(batches.num_record_batches):
        table = pa.Table.from_batches([batches.get_batch(k)])
        events += table.num_rows
        pending += table.num_rows
        commit = pending >= COMMIT_ROWS or k == batches.num_record_batches - 1
        store.write_checkpoint(table, sid, {}, commit=commit, bytes_read=0, lines=0, events=events)
        pending = 0 if commit else pending
seconds = time.perf_counter() - t
print(json.dumps({"seconds": seconds, "events": events,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

# DuckDB alone: the fast path's own SQL (``event_rows()``, as shipped) over DuckDB's CSV reader of
# the whole log, one line a row, on all of DuckDB's threads, its rows in line order, as the store
# keeps them (the identity hashed into a key, as ingest does; without the raw lines, the decoder's
# 3 % of lines, redaction or checkpoints) written by DuckDB into a table of a fresh file. What a
# design that moved this SQL and the write into one DuckDB query could not beat.
CHILD_DUCKDB_ALONE = """
import json, os, resource, sys, time
from pathlib import Path
import duckdb
from commitsleuth.ingest import eventlog_fast
log, db = sys.argv[1], Path(sys.argv[2])
db.unlink(missing_ok=True); Path(str(db) + ".wal").unlink(missing_ok=True)
t = time.perf_counter()
con = duckdb.connect(str(db))
eventlog_fast.define_rows(con)
path = "'" + log.replace("'", "''") + "'"  # a view takes no parameters
con.execute(f"CREATE TEMP VIEW lines AS SELECT row_number() OVER () - 1 AS i, line, false AS secret "
            f"FROM read_csv({path}, columns = {{'line': 'VARCHAR'}}, delim = '\\x01', quote = '', escape = '', "
            f"header = false, auto_detect = false)")
con.execute("CREATE TABLE events AS SELECT * EXCLUDE (ident), hash(ident) AS event_key FROM event_rows() ORDER BY i")
con.execute("CHECKPOINT")
events = con.execute("SELECT count(*) FROM events").fetchone()[0]
con.close()
print(json.dumps({"seconds": time.perf_counter() - t, "events": events,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _child(code: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=REPO)
    if out.returncode:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "child failed")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _fast_layouts(log: Path, work: Path) -> list[tuple[str, Path, str, str]]:
    """(name, path given to ingest, path given to read_json, read_json's compression)."""
    import zstandard

    zst = work / f"{log.name}.zstd"
    if not zst.exists():
        with open(log, "rb") as src, open(zst, "wb") as out:
            zstandard.ZstdCompressor(level=3).copy_stream(src, out)
    app = log.name
    rolling = work / f"eventlog_v2_{app}"
    if not rolling.exists():
        parts = work / f"parts-{app}"
        split_log(log, parts, 4)
        rolling.mkdir()
        for n, part in enumerate(sorted(parts.iterdir()), 1):
            part.rename(rolling / f"events_{n}_{app}")
        parts.rmdir()
        (rolling / f"appstatus_{app}").write_bytes(b"")
    return [("plain", log, str(log), "none"), ("zstd", zst, str(zst), "zstd"),
            ("rolling, 4 parts", rolling, str(rolling / "events_*"), "none")]


def _bound(label: str, runs: list[dict], read_json: float, meaning: str) -> str:
    """One bounding arm's line: its median, rows/s and min-max, and its ratio to read_json's median."""
    import statistics

    median = statistics.median(r["seconds"] for r in runs)
    return (f"  {label}: median {median:.2f} s = {runs[0]['events'] / median:,.0f} rows/s (min-max "
            f"{min(r['seconds'] for r in runs):.2f}-{max(r['seconds'] for r in runs):.2f} s), "
            f"{median / read_json:.2f}x read_json: {meaning}")


def fast_path(args, work: Path, log: Path) -> None:
    import statistics

    print(f"\n3. event-log fast path vs DuckDB read_json, {args.runs} alternating runs each, "
          f"{os.cpu_count()} cores", flush=True)
    verdicts = []
    rows = work / f"{log.name}.tables.arrow"
    rows.unlink(missing_ok=True)  # the store arm's rows are made anew by this run's code
    for name, path, rj_path, codec in _fast_layouts(log, work):
        store_too = name == "plain"  # the same rows whatever the layout
        size = sum(p.stat().st_size for p in (path.iterdir() if path.is_dir() else [path]))
        fast, rj, alone, duck, loads = [], [], [], [], []
        for i in range(args.runs):
            loads.append(os.getloadavg()[0])
            arms = [("fast", lambda: _child(CHILD_FAST, str(path), str(work / "fast.duckdb"))),
                    ("read_json", lambda: _child(CHILD_READ_JSON, rj_path, codec, str(REPO / "bench")))]
            if store_too:
                arms.append(("store", lambda: _child(CHILD_STORE, str(log), str(work / "store.duckdb"), str(rows))))
                arms.append(("duckdb", lambda: _child(CHILD_DUCKDB_ALONE, str(log), str(work / "duckdb.duckdb"))))
            for label, run in (arms if i % 2 == 0 else arms[::-1]):
                got = run()
                {"fast": fast, "read_json": rj, "store": alone, "duckdb": duck}[label].append(got)
            print(f"  {name} run {i + 1}: fast path {fast[-1]['seconds']:.2f} s "
                  f"({fast[-1]['events'] / fast[-1]['seconds']:,.0f} events/s, peak {fast[-1]['rss']:.0f} MiB), "
                  f"read_json {rj[-1]['seconds']:.2f} s"
                  + (f", the store's writes alone {alone[-1]['seconds']:.2f} s" if alone else "")
                  + (f", DuckDB alone {duck[-1]['seconds']:.2f} s" if duck else "")
                  + f"; load {loads[-1]:.1f}", flush=True)
        loads.append(os.getloadavg()[0])
        events = fast[0]["events"]
        mf = statistics.median(r["seconds"] for r in fast)
        mr = statistics.median(r["seconds"] for r in rj)
        rates = [events / r["seconds"] for r in fast]
        ratios = [f["seconds"] / r["seconds"] for f, r in zip(fast, rj)]
        peak = max(r["rss"] for r in fast)
        print(f"  {name} ({size / 2**20:.0f} MiB, {events:,} events): fast path median {mf:.2f} s = "
              f"{events / mf:,.0f} events/s (min-max {min(rates):,.0f}-{max(rates):,.0f}); read_json median "
              f"{mr:.2f} s; ratio of the medians {mf / mr:.2f}x (per run {min(ratios):.2f}-{max(ratios):.2f}); "
              f"peak RSS {peak:.0f} MiB; load {min(loads):.1f}-{max(loads):.1f}")
        if alone:
            print(_bound(f"the store's writes alone (the same {alone[0]['events']:,} rows, no reading or parsing)",
                         alone, mr, "the ceiling of any design that writes these rows so"))
        if duck:
            print(_bound(f"DuckDB alone (the fast path's SQL over the file and its {duck[0]['events']:,} rows into "
                         "a table, no raw lines, no decoder)", duck, mr, "the ceiling of any design keeping this SQL"))
        verdicts.append((name, events / mf, mf / mr, peak))
    for name, rate, ratio, peak in verdicts:
        said = lambda ok: "met" if ok else "NOT met"  # noqa: E731
        print(f"  {name}: >= 500k events/s {said(rate >= 500_000)}; >= 200k/s floor {said(rate >= 200_000)}; "
              f"within 3x of read_json {said(ratio <= 3)}; memory <= 1 GiB {said(peak <= 1024)}")


def spark_engine(spark, paths: list[Path], out: Path, db: Path) -> int:
    from commitsleuth.ingest.parquet import attach_parquet
    from commitsleuth.ingest.spark import ingest_spark
    from commitsleuth.store import Store

    shutil.rmtree(out, ignore_errors=True)
    db.unlink(missing_ok=True)
    ingest_spark([str(p) for p in paths], str(out), spark=spark)
    with Store(db) as store:
        return attach_parquet(store, out).events


def _size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--text-size", default="1G")
    ap.add_argument("--text-files", type=int, default=8)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--driver-memory", default="6g", help="holds the 1 GB event log whole")
    ap.add_argument("--work", default="/tmp/commitsleuth-bench-spark")
    ap.add_argument("--skip-spark", action="store_true", help="only the local engine")
    ap.add_argument("--skip-eventlog", action="store_true", help="only the text logs (2.)")
    ap.add_argument("--fast-only", action="store_true", help="only the event-log fast path (3.)")
    ap.add_argument("--runs", type=int, default=5, help="alternating runs of 3.")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)

    log = work / f"local-1700000000000-{args.events}"
    if not log.exists():
        print(f"generating {log} ...", flush=True)
        make_event_log(log, args.events)
    if args.fast_only:
        return fast_path(args, work, log)
    text = work / f"text-{args.text_size}-{args.text_files}"
    if not text.exists():
        print(f"generating {text}/ ...", flush=True)
        make_text_logs(text, _size(args.text_size), args.text_files)
    cores = os.cpu_count()
    print(f"machine: {cores} cores, load average {os.getloadavg()[0]:.1f} (shared and noisy)")

    spark = None
    if args.skip_eventlog:
        return text_logs(args, work, text, spark)
    print(f"\n1. event log {log.name}: {log.stat().st_size / 2**20:.0f} MiB")
    t_grep, lines = timed("baseline: grep -c -F '\"Event\"'", lambda: grep_count(log, '"Event"'))
    t_dec, n_dec = timed("decoder alone (JSON lines -> events)", lambda: decoder_only(log))
    t_loc, n_loc = timed("local engine: ingest into DuckDB", lambda: local_engine([log], work / "ev.duckdb"))
    print(f"  {lines} lines, {n_loc} events; local engine {n_loc / t_loc:,.0f} events/s "
          f"(decoder alone {n_dec / t_dec:,.0f}/s), {t_loc / t_grep:.0f}x grep")
    assert n_dec == n_loc
    t_duck, n_duck = timed("candidate: DuckDB read_json (parse+project)", lambda: duckdb_json(log))
    print(f"  DuckDB read_json {n_duck / t_duck:,.0f} lines/s = {t_loc / t_duck:.0f}x faster than the local engine")
    parts = work / f"split-{args.events}-{args.text_files}"
    if not parts.exists():
        split_log(log, parts, args.text_files)
    print(f"\n   the same events as {args.text_files} event logs (the Spark engine's unit is one file)")
    t_loc, n_loc = timed("local engine", lambda: local_engine([parts], work / "evs.duckdb"))
    print(f"  local engine {n_loc / t_loc:,.0f} events/s")
    if not args.skip_spark:
        from commitsleuth.ingest.spark import spark_session

        t_start, spark = timed(f"spark session start ({args.master})", lambda: spark_session(
            args.master, {"spark.driver.memory": args.driver_memory}))
        t_sp, n_sp = timed("spark engine: Parquet + attach", lambda: spark_engine(
            spark, [parts], work / "ev-parquet", work / "ev-spark.duckdb"))
        assert n_sp == n_loc, (n_sp, n_loc)
        print(f"  spark engine {n_sp / t_sp:,.0f} events/s = {t_loc / t_sp:.2f}x the local engine")

    return text_logs(args, work, text, spark)


def text_logs(args, work: Path, text: Path, spark) -> None:
    if spark is None and not args.skip_spark:
        from commitsleuth.ingest.spark import spark_session

        spark = spark_session(args.master, {"spark.driver.memory": args.driver_memory})
    size = sum(p.stat().st_size for p in text.iterdir())
    print(f"\n2. text logs {text.name}: {size / 2**20:.0f} MiB in {args.text_files} files")
    t_grep, _ = timed("baseline: grep -c -F 'Moving tmp dir'", lambda: grep_count(text, "Moving tmp dir"))
    t_loc, n_loc = timed("local engine", lambda: local_engine([text], work / "tx.duckdb"))
    print(f"  local engine {size / 2**20 / t_loc:.1f} MiB/s, {n_loc} events, {t_loc / t_grep:.0f}x grep")
    if spark is not None:
        t_sp, n_sp = timed(f"spark engine ({args.master})", lambda: spark_engine(
            spark, [text], work / "tx-parquet", work / "tx-spark.duckdb"))
        assert n_sp == n_loc, (n_sp, n_loc)
        print(f"  spark engine {size / 2**20 / t_sp:.1f} MiB/s = {t_loc / t_sp:.2f}x the local engine")
        spark.stop()


if __name__ == "__main__":
    sys.exit(main())
