"""Benchmark: `analyze` on DuckDB and on Spark ``local[2]`` side by side, on stores of 10M, 100M
and 1B events, until one stops fitting this machine (issue 33, item 3).

The stores are bench/analyze.py's: Spark task attempts, task commits and the listing of their
files (what a History Server directory gives) beside the HiveServer2/metastore lines (directory
creates, partition adds, loads: what audit logs give), with every detector's anomaly planted in
known partitions. For each size, in one run:

1. the store is generated (or ``--reuse``-d), then exported to Parquet as ``analyze --engine
   spark --parquet`` reads it (``spark_engine.export_parquet``): bytes per event of each;
2. the same-run baselines: one full-scan aggregate over ``events`` in DuckDB and in Spark
   (scan rate per core);
3. ``analyze`` on DuckDB, then on Spark ``local[2]`` over the Parquet, each in a child process
   under ``/usr/bin/time -v`` (wall, CPU, peak RSS of the largest process: the JVM on Spark),
   with the same detectors; both must give the same findings (and the planted ones);
4. on Spark, each stage's input, shuffle write and spill from Spark's own REST API, summed per
   detector and for the fact model's views: the shuffle sizes of the joins.

Before each size the disk it needs is estimated from the last size's bytes per event (store,
Parquet, and Spark's local dir at the measured shuffle bytes per event); a size that would leave
less than ``--keep-free-gb`` is not generated, and the output says so: the rest is arithmetic
(docs/BENCHMARKS.md, round 5). The load average is printed beside every figure.

``--before`` runs Spark the way round 5 measured first (every view ``localCheckpoint``-ed as row
objects, 4 shuffle partitions), then ``analyze_spark``'s own way (``spark_engine.prepare``), both
on the same Parquet in the same run; ``--spark-timeout`` kills a Spark child that runs too long.

    .venv/bin/python bench/scale.py --sizes 10M --reuse-10m /work/bench10m.duckdb --dir /tmp/scale
    .venv/bin/python bench/scale.py --sizes 20k --before --driver-memory 2g
    .venv/bin/python bench/scale.py --sizes 1M,10M,100M,1B --dir /tmp/scale
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analyze import BASELINE as DUCKDB_SCAN, EXPECT, compare, generate  # noqa: E402 - bench/analyze.py's

from commitsleuth.forensics.detectors import DETECTORS  # noqa: E402
from commitsleuth.store import Store  # noqa: E402

# Every detector runs on Spark since round 5: both engines run them all, so their times compare.
ON_SPARK = tuple(d.code for d in DETECTORS)
GiB = 1024 ** 3

DUCKDB_CHILD = r"""
import json, sys, time
from commitsleuth.store import Store
from commitsleuth.forensics.analyze import analyze
with Store(sys.argv[1]) as store:
    store.con.execute("SET enable_progress_bar = false")
    t = time.perf_counter()
    findings = analyze(store, sys.argv[3].split(","))
    seconds = time.perf_counter() - t
json.dump({"seconds": seconds, "findings": [[f.code, f.severity, f.location or (f.detail or {}).get("app_id"),
           f.partition_spec] for f in findings]}, open(sys.argv[2], "w"))
"""

# analyze_spark's steps (spark_engine's public functions), each detector a Spark job group of its
# own so the REST API's stages say whose they are. ``how``: ``now`` is analyze_spark's way
# (spark_engine.prepare); ``round5`` the way round 5 measured, the baseline of --before: every
# view localCheckpoint-ed as registered, 4 shuffle partitions.
SPARK_CHILD = r"""
import json, os, sys, time, urllib.request
from commitsleuth.store import Store
from commitsleuth.forensics import spark_engine
from commitsleuth.forensics.analyze import finish, selected
db, parquet, out, codes, master, memory, local_dir, how = sys.argv[1:9]
t0 = time.perf_counter()
from commitsleuth.ingest.spark import spark_session
spark = spark_session(master, {**spark_engine.SESSION_CONF, "spark.driver.memory": memory,
                               "spark.local.dir": local_dir, "spark.ui.enabled": "true",
                               "spark.ui.port": "0"})
sc = spark.sparkContext
started = time.perf_counter() - t0
t = time.perf_counter()
sc.setJobGroup("scan", "scan")
spark.read.parquet(parquet + "/events").groupBy("kind", "location", "partition_spec").agg(
    {"*": "count", "ts": "min"}).collect()
scan = time.perf_counter() - t
times = {}
with Store(db) as store:
    t1 = time.perf_counter()
    sc.setJobGroup("views", "views")
    if how == "round5":
        spark.conf.set("spark.sql.shuffle.partitions", "4")
        spark_engine.register(spark, parquet)
    else:
        spark_engine.prepare(spark, parquet, selected(codes.split(",")))
    times["partitions"] = int(spark.conf.get("spark.sql.shuffle.partitions"))
    times["views"] = time.perf_counter() - t1
    findings = []
    for det in selected(codes.split(",")):
        t = time.perf_counter()
        sc.setJobGroup(det.code, det.code)
        findings += spark_engine.run_detectors(spark, store, [det])
        times[det.code] = time.perf_counter() - t
    findings = finish(store, findings)
    analyze_s = time.perf_counter() - t1
ui = sc.uiWebUrl
app = sc.applicationId
def api(path):
    return json.load(urllib.request.urlopen(f"{ui}/api/v1/applications/{app}/{path}"))
groups = {}
for job in api("jobs"):
    for sid in job["stageIds"]:
        groups[sid] = job.get("jobGroup", "?")
per = {}
for st in api("stages?status=complete"):
    g = per.setdefault(groups.get(st["stageId"], "?"), {"input": 0, "shuffle_write": 0, "shuffle_read": 0,
                                                          "spill_disk": 0, "spill_memory": 0, "stages": 0})
    g["input"] += st.get("inputBytes", 0)
    g["shuffle_write"] += st.get("shuffleWriteBytes", 0)
    g["shuffle_read"] += st.get("shuffleReadBytes", 0)
    g["spill_disk"] += st.get("diskBytesSpilled", 0)
    g["spill_memory"] += st.get("memoryBytesSpilled", 0)
    g["stages"] += 1
# the JVM's own CPU and peak RSS (/usr/bin/time sees the Python driver's: the JVM is not its waited child)
pid = spark._jvm.java.lang.ProcessHandle.current().pid()
stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
jvm_cpu = (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
jvm_rss = next(int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith("VmHWM")) / 1024
spark.stop()
json.dump({"jvm_cpu": jvm_cpu, "jvm_rss": jvm_rss, "start": started, "scan": scan, "seconds": analyze_s, "per": times, "stages": per,
           "findings": [[f.code, f.severity, f.location or (f.detail or {}).get("app_id"), f.partition_spec]
                        for f in findings]}, open(out, "w"))
"""


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def size_of(text: str) -> int:
    m = re.fullmatch(r"(\d+)([kKmMbB]?)", text)
    return int(m.group(1)) * {"": 1, "k": 10**3, "m": 10**6, "b": 10**9}[m.group(2).lower()]


def du(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def timed(code: str, *args: str, env: dict | None = None, timeout: float | None = None) -> dict:
    """``python -c code args`` under /usr/bin/time -v: stdout, wall and CPU seconds, peak RSS MiB
    (of the largest process: Linux reports the largest child's, not a sum). Past ``timeout``
    seconds its process group (the child and its JVM) is killed: ``failed`` says when."""
    import signal

    before, t = load(), time.perf_counter()
    p = subprocess.Popen(["/usr/bin/time", "-v", sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        stdout, stderr = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return {"failed": f"killed after {time.perf_counter() - t:.0f} s (--spark-timeout)",
                "load": f"{before} -> {load()}"}
    if p.returncode != 0:  # the child's own error, before /usr/bin/time's report
        return {"failed": stderr.split("\tCommand being timed")[0][-2500:], "load": f"{before} -> {load()}"}
    def field(name):
        return re.search(re.escape(name) + r": (.*)", stderr).group(1)
    h, m, s = (["0"] * 3 + field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":"))[-3:]
    return {"stdout": stdout, "wall": int(h) * 3600 + int(m) * 60 + float(s),
            "cpu": float(field("User time (seconds)")) + float(field("System time (seconds)")),
            "rss": int(field("Maximum resident set size (kbytes)")) / 1024, "load": f"{before} -> {load()}"}


def free_bytes(path: Path) -> int:
    return shutil.disk_usage(path).free


def run_size(n: int, root: Path, args, prev: dict | None) -> dict:
    parts = max(n // 100, 1)  # bench/analyze.py's shape: 100 events a partition
    res: dict = {"events": n, "partitions": parts}
    if prev:  # the disk this size needs, from the last size's bytes per event
        per_event = prev["store_bpe"] + prev["parquet_bpe"] + prev.get("spark_tmp_bpe", 0)
        need, free = per_event * n, free_bytes(root)
        res["need_gb"], res["free_gb"] = need / GiB, free / GiB
        if free - need < args.keep_free_gb * GiB:
            res["stopped"] = (f"needs about {need / GiB:.1f} GB ({per_event:.0f} B/event: store "
                              f"{prev['store_bpe']:.1f} + Parquet {prev['parquet_bpe']:.1f} + Spark's local dir "
                              f"{prev.get('spark_tmp_bpe', 0):.1f}), {free / GiB:.1f} GB free, "
                              f"{args.keep_free_gb} GB must stay free")
            return res
    d = root / f"n{n}"
    d.mkdir(parents=True, exist_ok=True)
    db = d / "store.duckdb"
    t = time.perf_counter()
    reuse = args.reuse_10m and n == 10_000_000
    if reuse:
        shutil.copyfile(args.reuse_10m, db)
    else:
        db.unlink(missing_ok=True)
        with Store(db) as store:
            generate(store.con, n, parts)
    with Store(db) as store:
        res["events"] = store.count("events")
        planted = store.con.execute("SELECT anomaly, location, partition_spec FROM bench_planted").fetchall()
        res["generate_s"] = time.perf_counter() - t
        res["generate_load"] = load()
        from commitsleuth.forensics.spark_engine import export_parquet

        parquet = d / "parquet"
        shutil.rmtree(parquet, ignore_errors=True)
        t = time.perf_counter()
        export_parquet(store, parquet)
        res["export_s"] = time.perf_counter() - t
    res["store_bytes"], res["parquet_bytes"] = du(db), du(parquet / "events") + du(parquet / "sources")
    res["store_bpe"], res["parquet_bpe"] = res["store_bytes"] / res["events"], res["parquet_bytes"] / res["events"]
    print(f"[{n:,}] {res['events']:,} events, {'copied' if reuse else 'generated'} in {res['generate_s']:.0f} s; "
          f"store {res['store_bytes'] / 1e6:,.0f} MB ({res['store_bpe']:.1f} B/event), Parquet "
          f"{res['parquet_bytes'] / 1e6:,.0f} MB ({res['parquet_bpe']:.1f} B/event), exported in "
          f"{res['export_s']:.0f} s; load {load()}", flush=True)

    codes = ",".join(args.detectors)
    scan = timed(DUCKDB_SCAN, str(db))
    res["duckdb_scan"] = scan
    duck = timed(DUCKDB_CHILD, str(db), str(d / "duckdb.json"), codes)
    res["duckdb"] = duck
    if "failed" not in duck:
        duck.update(json.loads((d / "duckdb.json").read_text()))
        print(f"[{n:,}] DuckDB: scan {float(scan.get('stdout', 'nan').strip() or 'nan'):.2f} s; analyze "
              f"{duck['seconds']:.1f} s in the store, {duck['wall']:.1f} s whole, {duck['cpu']:.0f} CPU-s, peak "
              f"{duck['rss']:,.0f} MiB, {len(duck['findings'])} findings; load {duck['load']}", flush=True)
    else:
        print(f"[{n:,}] DuckDB analyze FAILED (load {duck['load']}): {duck['failed'][-400:]}", flush=True)

    runs = (["round5"] if args.before else []) + ["now"]
    for how in runs:
        spark = run_spark(n, d, db, parquet, codes, args, how)
        res["spark" if how == "now" else "spark_round5"] = spark
        if how == "now":
            res["spark_local_peak_bytes"] = spark["local_peak"]
            res["spark_tmp_bpe"] = spark["local_peak"] / res["events"]
        if "findings" in duck and "findings" in spark:
            same = sorted(map(tuple, duck["findings"]), key=str) == sorted(map(tuple, spark["findings"]), key=str)
            res[f"same_findings_{how}"] = same
            print(f"[{n:,}] Spark ({how}) gives DuckDB's findings: {same}", flush=True)
    if "findings" in duck:
        missing, extra = compare([p for p in planted if _codes_of(p[0]) & set(args.detectors)], duck["findings"])
        res["planted_missing"], res["planted_extra"] = len(missing), len(extra)
        print(f"[{n:,}] DuckDB against the planted ones: {len(missing)} missing, {len(extra)} extra", flush=True)
    if not args.keep:
        shutil.rmtree(d, ignore_errors=True)
    return res


def run_spark(n: int, d: Path, db: Path, parquet: Path, codes: str, args, how: str) -> dict:
    """One Spark ``analyze`` child (SPARK_CHILD, ``how``), its local dir watched; its figures."""
    local_dir = d / "spark-local"
    shutil.rmtree(local_dir, ignore_errors=True)
    local_dir.mkdir()
    peak = {"bytes": 0}
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    watcher = _watch_dir(local_dir, peak)
    out = d / f"spark-{how}.json"
    spark = timed(SPARK_CHILD, str(db), str(parquet), str(out), codes, args.master,
                  args.driver_memory, str(local_dir), how, env=env, timeout=args.spark_timeout)
    watcher.stop()
    spark["local_peak"] = peak["bytes"]
    if "failed" in spark:
        print(f"[{n:,}] Spark ({how}) FAILED (load {spark['load']}; local dir peak {peak['bytes'] / 1e6:,.0f} MB): "
              f"{spark['failed'][-600:]}", flush=True)
        return spark
    spark.update(json.loads(out.read_text()))
    shuffle = sum(g["shuffle_write"] for g in spark["stages"].values())
    stages = sum(g["stages"] for g in spark["stages"].values())
    print(f"[{n:,}] Spark {args.master} ({how}, {spark['per']['partitions']} shuffle partitions): start "
          f"{spark['start']:.0f} s, scan {spark['scan']:.1f} s; analyze {spark['seconds']:.1f} s (views "
          f"{spark['per']['views']:.1f} s), {stages} stages, {spark['wall']:.1f} s whole, "
          f"{spark['cpu'] + spark['jvm_cpu']:.0f} CPU-s (JVM {spark['jvm_cpu']:.0f}), peak {spark['jvm_rss']:,.0f} MiB "
          f"(JVM; Python {spark['rss']:,.0f}); shuffle written {shuffle / 1e6:,.0f} MB, "
          f"local dir peak {peak['bytes'] / 1e6:,.0f} MB; {len(spark['findings'])} findings; load {spark['load']}",
          flush=True)
    for group, g in sorted(spark["stages"].items(), key=lambda kv: -kv[1]["shuffle_write"])[:6]:
        print(f"    {group}: input {g['input'] / 1e6:,.0f} MB, shuffle write {g['shuffle_write'] / 1e6:,.0f} MB, "
              f"spill {g['spill_disk'] / 1e6:,.0f} MB, {g['stages']} stages, "
              f"{spark['per'].get(group, 0):.1f} s", flush=True)
    return spark


def _codes_of(anomaly: str) -> set[str]:
    return {EXPECT[anomaly].split("/")[0]}


class _watch_dir:
    """Samples the size of a directory every second (Spark's local dir: shuffle files, spills,
    checkpointed blocks that leave memory) and keeps the peak."""

    def __init__(self, path: Path, peak: dict):
        import threading

        self._stop = threading.Event()

        def loop():
            while not self._stop.wait(1.0):
                try:
                    peak["bytes"] = max(peak["bytes"], du(path))
                except OSError:  # a file removed while listed
                    pass
        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10M,100M,1B", help="event counts, e.g. 1M,10M,100M,1B")
    ap.add_argument("--dir", default="/tmp/cs-scale", help="where the stores and Parquet go")
    ap.add_argument("--reuse-10m", default=None, metavar="DB", help="copy this 10M store (bench/analyze.py's) "
                    "instead of generating it")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--driver-memory", default="8g")
    ap.add_argument("--detectors", default=",".join(ON_SPARK), type=lambda s: s.split(","))
    ap.add_argument("--keep-free-gb", type=float, default=10.0)
    ap.add_argument("--before", action="store_true", help="also run Spark the way round 5 did (every view "
                    "localCheckpoint-ed, 4 shuffle partitions) first, the baseline in the same run")
    ap.add_argument("--spark-timeout", type=float, default=None, metavar="S",
                    help="kill a Spark child after S seconds (its figures up to then are lost, the local dir's kept)")
    ap.add_argument("--keep", action="store_true", help="keep each size's store and Parquet")
    ap.add_argument("--json", default=None, help="write every figure here")
    args = ap.parse_args(argv)
    root = Path(args.dir)
    root.mkdir(parents=True, exist_ok=True)
    print(f"{os.cpu_count()} cores, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / GiB:.0f} GiB RAM, "
          f"{free_bytes(root) / GiB:.0f} GiB free under {root}; load {load()}", flush=True)
    results, prev = [], None
    for text in args.sizes.split(","):
        res = run_size(size_of(text), root, args, prev)
        results.append(res)
        if "stopped" in res:
            print(f"[{res['events']:,}] not generated: {res['stopped']}", flush=True)
            break
        prev = res
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
