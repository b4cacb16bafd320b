"""Benchmark: the whole `commitsleuth ingest` command on a HiveServer2 log against `grep -F` and
DuckDB, timed in the same run (issue 33, item 5: >= 200 MB/s end to end on 200 MB, start cost
included; progress on the terminal within 1 s).

The log (made once, under ``--dir``) is a HiveServer2 log in the Hive 2+ log4j2 layout
(``%d{ISO8601} %5p [%t] %c{2}: %m%n``): many handler and background threads, about 1 % of the
lines a message that becomes an event (loads, new loading paths, directory creations, trash
moves, metastore calls, query start and end, jobs), the rest ordinary chatter, and about one
record in 200 with a 12-line stack trace. The corpus holds no real HiveServer2 log (tests/corpus
has none), so its lines are built from exact source strings: the event lines are those of the
``hive-log4j2`` format's declared samples (parsers/formats/hive_log4j2.py: seed 002's HiveServer2
lines and Hive's own messages), the chatter lines are messages Hive's Driver, PerfLogger,
SemanticAnalyzer, SessionState, Task and ThriftCLIService print.

Each repetition times, one after the other, whole commands as a user runs them (interpreter start,
imports, the store's creation and its closing checkpoint included):

- ``grep -c -F 'Loading data to table'`` (one keyword, the issue's baseline) and
  ``grep -c -F -f <the scan's keywords>`` (the same keywords the ingest looks for);
- ``duckdb -c "SELECT count(*) FROM read_csv(<log>, columns={'line': 'VARCHAR'}, ...) WHERE
  contains(line, 'Loading data to table')"`` and ``... read_text(<log>) ...`` (DuckDB's CLI);
- ``commitsleuth ingest <log> --db <fresh store>`` with its output to pipes (wall, CPU of it and
  every process it starts, peak memory);
- the same ingest with stderr on a pseudo-terminal: the seconds until the progress bar's first
  bytes appear, and that run's wall time;
- with ``--baseline-env NAME=VALUE``, the piped ingest again with that setting (before the other
  in odd runs, after it in even ones): a same-run A/B by wall and CPU;
- with ``--baseline DIR``, the piped ingest again by the ``commitsleuth`` of another install's
  bin directory (another build, e.g. main's venv), alternated the same way.

It prints every run, then medians and min-max over the runs, the load average before and after
each, and the ratio of the medians to grep's.

    python bench/ingest_text.py                # 200 MB, 5 runs
    python bench/ingest_text.py --size 1G --runs 3
    python bench/ingest_text.py --baseline-env COMMITSLEUTH_STORE_TEMPLATE=0   # the store template's worth
    python bench/ingest_text.py --baseline /work/main/.venv/bin   # against main's build
    python bench/ingest_text.py --runs 1 --phases   # then one ingest's timeline, process by process

``--phases`` runs one more ingest with ``COMMITSLEUTH_PHASES=1`` (commitsleuth/ingest/phases.py)
and prints its timeline: seconds since the command was started, which process (P0 the command,
P1... its workers or their fork server), that process's CPU seconds so far, and the step.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import pty
import random
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

CHATTER = [
    "ql.Driver: Concurrency mode is disabled, not creating a lock manager",
    "log.PerfLogger: <PERFLOG method=compile from=org.apache.hadoop.hive.ql.Driver>",
    "log.PerfLogger: </PERFLOG method=compile start=1538100000000 end=1538100000412 duration=412 "
    "from=org.apache.hadoop.hive.ql.Driver>",
    "parse.CalcitePlanner: Starting Semantic Analysis",
    "parse.CalcitePlanner: Completed phase 1 of Semantic Analysis",
    "metastore.HiveMetaStoreClient: Trying to connect to metastore with URI thrift://meta-1:9083",
    "session.SessionState: Updating thread name to {sid} HiveServer2-Handler-Pool: Thread-{t}",
    "exec.Utilities: PLAN PATH = hdfs://nn/tmp/hive/hive/{sid}/hive_2018-09-28_10-14-57_310_{n}/-mr-10001/"
    "ea1b/map.xml",
    "mapreduce.JobSubmitter: number of splits:{n}",
    "conf.HiveConf: Using the default value passed in for log id: {sid}",
    "exec.Task: Hadoop job information for Stage-1: number of mappers: 12; number of reducers: 1",
    "exec.Task: 2018-09-28 10:15:{s:02d},001 Stage-1 map = {p}%,  reduce = 0%, Cumulative CPU 12.3 sec",
    "thrift.ThriftCLIService: Client protocol version: HIVE_CLI_SERVICE_PROTOCOL_V10",
]
RELEVANT = [
    "exec.Task: Loading data to table db.sales partition (dt=2018-09-{d:02d}) from "
    "hdfs://nn/warehouse/db.db/sales/.hive-staging_hive_2018-09-28_10-14-57_310_{n}/-ext-10000",
    "metadata.Hive: New loading path = hdfs://nn/warehouse/db.db/sales/.hive-staging_hive_2018-09-28_10-14-57_"
    "310_{n}/-ext-10000/dt=2018-09-{d:02d} with partSpec {{dt=2018-09-{d:02d}}}",
    "common.FileUtils: Creating directory if it doesn't exist: hdfs://nn/warehouse/db.db/sales/dt=2018-09-{d:02d}",
    "fs.TrashPolicyDefault: Moved to trash: hdfs://nn/warehouse/db.db/sales/dt=2018-09-{d:02d}/000000_0",
    "metastore.HiveMetaStore: {t}: source:10.1.2.3 add_partition : tbl=hive.db.sales",
    "ql.Driver: Compiling command(queryId=hive_20180928101457_{n:04x}): insert into table db.sales "
    "partition (dt='2018-09-{d:02d}') select * from db.src",
    "ql.Driver: Completed executing command(queryId=hive_20180928101457_{n:04x}); Time taken: 7.81 seconds",
    "exec.Task: Starting Job = job_1538100000000_{n:04d}, Tracking URL = http://rm:8088/proxy/"
    "application_1538100000000_{n:04d}/",
]
TRACE = "java.io.IOException: Connection reset by peer\n" + "".join(
    f"\tat org.apache.hadoop.hive.ql.exec.Task.executeTask(Task.java:{160 + i})\n" for i in range(11)
)


def generate(path: Path, size: int, seed: int = 4) -> None:
    rnd = random.Random(seed)
    threads = [f"HiveServer2-Handler-Pool: Thread-{i}" for i in range(40, 90)]
    threads += [f"HiveServer2-Background-Pool: Thread-{i}" for i in range(500, 560)]
    written, i = 0, 0
    with open(path, "w", encoding="utf-8") as f:
        while written < size:
            out = []
            for _ in range(20000):
                i += 1
                t = rnd.randrange(40, 560)
                head = (f"2018-09-28T10:{i // 600000 % 60:02d}:{i // 10000 % 60:02d},{i % 1000:03d}  INFO "
                        f"[{rnd.choice(threads)}] ")
                r = rnd.random()
                msg = rnd.choice(RELEVANT) if r < 0.01 else rnd.choice(CHATTER)
                out.append(head + msg.format(sid=f"778c{t:04d}-5d7a-4c0b-9a55-0d3c2a1b9645", t=t, n=i % 9973,
                                             d=i % 28 + 1, s=i % 60, p=i % 100) + "\n")
                if r > 0.995:
                    out.append(TRACE)
            block = "".join(out)
            f.write(block)
            written += len(block)


_PR_SET_CHILD_SUBREAPER = 36


def peak_rss(pid: int, stop: threading.Event, result: list) -> None:
    """Peak of the summed resident memory of ``pid`` and its descendants, sampled."""
    peak = 0
    while not stop.is_set():
        total = 0
        for p in [pid, *descendants(pid)]:
            try:
                with open(f"/proc/{p}/status") as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            total += int(line.split()[1]) * 1024
            except OSError:
                pass
        peak = max(peak, total)
        time.sleep(0.05)
    result.append(peak)


def descendants(pid: int) -> list[int]:
    out = []
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return out
    for c in map(int, children):
        out += [c, *descendants(c)]
    return out


def reap_orphans() -> None:
    """Make this process the reaper of its orphaned descendants (Linux): a process that outlives
    its parent (the ingest's fork server ends just after the ingest) is then waited for here,
    and its CPU time, with its children's, counts in ``RUSAGE_CHILDREN``."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def wait_orphans() -> None:
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def timed(cmd: list[str], **kw) -> tuple[float, float, subprocess.CompletedProcess, int]:
    """Wall seconds, CPU seconds (user+sys of the command and every process it started, orphans
    included), the finished process, peak summed RSS."""
    reap_orphans()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    stop, peak = threading.Event(), []
    sampler = threading.Thread(target=peak_rss, args=(proc.pid, stop, peak))
    sampler.start()
    out, err = proc.communicate()
    elapsed = time.perf_counter() - start
    wait_orphans()
    stop.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, subprocess.CompletedProcess(cmd, proc.returncode, out, err), peak[0]


def first_output_on_terminal(cmd: list[str]) -> tuple[float | None, float, int]:
    """Run ``cmd`` with stderr on a pseudo-terminal (the progress bar draws only there): seconds
    until its first bytes there (None: nothing shown), wall seconds, exit code."""
    master, slave = pty.openpty()
    first: list[float] = []

    def watch() -> None:
        while True:
            try:
                got = os.read(master, 65536)
            except OSError:  # the terminal's other end closed: the command ended
                return
            if not got:
                return
            if not first:
                first.append(time.perf_counter())

    reader = threading.Thread(target=watch, daemon=True)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    reader.start()
    proc.wait()
    elapsed = time.perf_counter() - start
    reader.join(timeout=5)
    os.close(master)
    return (first[0] - start if first else None), elapsed, proc.returncode


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def stats(values: list[float]) -> str:
    """median (min-max)"""
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def ingest_with(exe: str, log: Path, db: Path, env: dict, table: dict, mb: float) -> str:
    """The same ingest with ``env`` set (or by another build's ``exe``), into a fresh store: the
    same-run baseline."""
    db.unlink(missing_ok=True)
    wall, cpu, proc, _ = timed([exe, "ingest", str(log), "--db", str(db)], env={**os.environ, **env})
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    table["baseline"].append(wall)
    table["baseline_cpu"].append(cpu)
    what = " ".join(f"{k}={v}" for k, v in env.items()) or exe
    return f"with {what}: {wall:.2f} s ({mb / wall:.0f} MB/s, cpu {cpu:.2f} s)"


def timeline(exe: str, log: Path, db: Path) -> None:
    """One ingest with ``COMMITSLEUTH_PHASES=1``: each process's steps, in seconds since its start."""
    db.unlink(missing_ok=True)
    start = time.time()
    proc = subprocess.run([exe, "ingest", str(log), "--db", str(db)], capture_output=True, text=True,
                          env={**os.environ, "COMMITSLEUTH_PHASES": "1"})
    end = time.time()
    names: dict[str, str] = {}
    print(f"\ntimeline of one ingest (load {os.getloadavg()[0]:.1f}): seconds since the start, process, "
          "its cpu seconds, step")
    begun, done = [], []  # seconds of the workers' first range's start; of each range's end
    handed = None  # the command's cpu at its first mark once the first range began: its cost until then
    for line in proc.stderr.splitlines():
        if not line.startswith("phase "):
            continue
        _, at, pid, cpu, what = line.split(" ", 4)
        name = names.setdefault(pid, f"P{len(names)}")
        if name == "P0" and begun and handed is None:
            handed = float(cpu)
        elif what.startswith("worker: range") and what.endswith("begins") and not begun:
            begun.append(float(at) - start)
        elif what.startswith("worker: range") and what.endswith("done"):
            done.append(float(at) - start)
        print(f"  {float(at) - start:6.3f}  {name:3} cpu {float(cpu):5.2f}  {what}")
    print(f"  {end - start:6.3f}  the command ended: {proc.stdout.strip()}")
    if begun and done:
        # the critical path in three parts: the start until the first range (the command's cpu
        # then), the workers' ranges, the command's work after the last range
        print(f"  critical path: first range at {begun[0]:.3f} s (the command's cpu {handed or 0:.2f} s), "
              f"ranges {max(done) - begun[0]:.3f} s, after the last range {end - start - max(done):.3f} s")
    db.unlink(missing_ok=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="200M", help="log size (default 200M)")
    ap.add_argument("--dir", default="/tmp/commitsleuth-bench", help="where the log and store go")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--baseline-env", metavar="NAME=VALUE",
                    help="also time the ingest with this setting in each run, alternating which goes first "
                         "(a same-run A/B, e.g. COMMITSLEUTH_STORE_TEMPLATE=0)")
    ap.add_argument("--baseline", metavar="DIR", type=Path,
                    help="also time the ingest of the commitsleuth in this bin directory (another build), "
                         "alternating which goes first")
    ap.add_argument("--phases", action="store_true",
                    help="then one more ingest's timeline (COMMITSLEUTH_PHASES=1): where its seconds go")
    args = ap.parse_args()
    size = parse_size(args.size)
    work = Path(args.dir)
    work.mkdir(parents=True, exist_ok=True)
    log = work / f"hs2-{args.size}.log"
    if not log.exists() or log.stat().st_size < size:
        t = time.perf_counter()
        generate(log, size)
        print(f"generated {log} ({log.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t:.0f} s")
    mb = log.stat().st_size / 1e6
    bindir = os.path.dirname(sys.executable)
    exe = shutil.which("commitsleuth", path=bindir) or "commitsleuth"
    duckdb_cli = shutil.which("duckdb", path=bindir) or shutil.which("duckdb")
    from commitsleuth.parsers.messages import KEYWORDS

    keywords = work / "keywords.txt"
    keywords.write_text("".join(k + "\n" for k in KEYWORDS))
    quoted = str(log).replace("'", "''")
    baselines = {
        "grep -c -F (1 keyword)": ["grep", "-c", "-F", "Loading data to table", str(log)],
        f"grep -c -F ({len(KEYWORDS)} keywords)": ["grep", "-c", "-F", "-f", str(keywords), str(log)],
    }
    if duckdb_cli:
        baselines["duckdb read_csv"] = [duckdb_cli, "-c", (
            f"SELECT count(*) FROM read_csv('{quoted}', columns={{'line': 'VARCHAR'}}, header=false, "
            "delim=chr(1), quote='', escape='', auto_detect=false, strict_mode=false) "
            "WHERE contains(line, 'Loading data to table')")]
        baselines["duckdb read_text"] = [duckdb_cli, "-c", (
            f"SELECT length(content) FROM read_text('{quoted}') WHERE contains(content, 'Loading data to table')")]
    cores = os.cpu_count() or 1
    table: dict[str, list[float]] = {name: [] for name in baselines}
    table.update(ingest=[], ingest_cpu=[], ingest_peak=[], tty_first=[], tty_wall=[], load=[],
                 baseline=[], baseline_cpu=[])
    baseline_env = dict([args.baseline_env.split("=", 1)]) if args.baseline_env else None
    base_exe = exe
    if args.baseline:
        base_exe, baseline_env = str(args.baseline / "commitsleuth"), baseline_env or {}
    base_label = args.baseline_env or str(args.baseline)
    for run in range(args.runs):
        load_before = os.getloadavg()[0]
        line = [f"run {run + 1}: {mb:.0f} MB, load {load_before:.1f}"]
        for name, cmd in baselines.items():
            wall, cpu, proc, _ = timed(cmd)
            if proc.returncode not in (0, 1):  # grep: 1 when nothing matched
                print(proc.stderr, file=sys.stderr)
                return 1
            table[name].append(wall)
            line.append(f"{name} {wall:.2f} s")
        db = work / "bench.duckdb"
        if baseline_env is not None and run % 2 == 1:
            line.append(ingest_with(base_exe, log, db, baseline_env, table, mb))
        db.unlink(missing_ok=True)
        wall, cpu, proc, peak = timed([exe, "ingest", str(log), "--db", str(db)])
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return 1
        table["ingest"].append(wall)
        table["ingest_cpu"].append(cpu)
        table["ingest_peak"].append(peak / 2**20)
        line.append(f"ingest {wall:.2f} s ({mb / wall:.0f} MB/s, cpu {cpu:.2f} s, peak {peak / 2**20:.0f} MiB): "
                    f"{proc.stdout.strip()}")
        if baseline_env is not None and run % 2 == 0:
            line.append(ingest_with(base_exe, log, db, baseline_env, table, mb))
        db.unlink(missing_ok=True)
        first, tty_wall, code = first_output_on_terminal([exe, "ingest", str(log), "--db", str(db)])
        if code != 0:
            return 1
        table["tty_first"].append(first if first is not None else float("nan"))
        table["tty_wall"].append(tty_wall)
        line.append(f"on a terminal: first progress {first if first is None else round(first, 2)} s, "
                    f"wall {tty_wall:.2f} s")
        load_after = os.getloadavg()[0]
        table["load"] += [load_before, load_after]
        print("; ".join(line) + f"; load after {load_after:.1f}", flush=True)
    ingest = statistics.median(table["ingest"])
    print(f"\n{args.runs} runs, {mb:.0f} MB, {cores} cores, load average {min(table['load']):.1f}-"
          f"{max(table['load']):.1f}; seconds as median (min-max):")
    for name in baselines:
        base = statistics.median(table[name])
        print(f"  {name:26} {stats(table[name])} s  {mb / base:7.0f} MB/s; ingest / this = {ingest / base:.1f}x")
    rates = [mb / w for w in table["ingest"]]
    print(f"  {'commitsleuth ingest':26} {stats(table['ingest'])} s  {mb / ingest:7.0f} MB/s "
          f"(per run {min(rates):.0f}-{max(rates):.0f} MB/s), cpu {stats(table['ingest_cpu'])} s, "
          f"peak {stats(table['ingest_peak'])} MiB")
    if baseline_env is not None:
        base, base_cpu = statistics.median(table["baseline"]), statistics.median(table["baseline_cpu"])
        print(f"  {'ingest with ' + base_label:26} {stats(table['baseline'])} s  {mb / base:7.0f} MB/s, "
              f"cpu {stats(table['baseline_cpu'])} s; this / ingest: wall {base / ingest:.2f}x, "
              f"cpu {base_cpu / statistics.median(table['ingest_cpu']):.2f}x")
    firsts = [f for f in table["tty_first"] if f == f]
    print(f"  {'ingest on a terminal':26} {stats(table['tty_wall'])} s; first progress after "
          + (f"{stats(firsts)} s" if firsts else "never"))
    print(f"targets: >= 200 MB/s end to end ({'met' if mb / ingest >= 200 else 'not met'} by the median), "
          f"first progress <= 1 s ({'met' if firsts and statistics.median(firsts) <= 1 else 'not met'} by the median)")
    if args.phases:
        timeline(exe, log, work / "bench.duckdb")
        if args.baseline:
            print(f"\nthe same with {base_exe}:", end="")
            timeline(base_exe, log, work / "bench.duckdb")
    return 0


if __name__ == "__main__":
    sys.exit(main())
