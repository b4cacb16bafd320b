"""Benchmark: `commitsleuth ingest` of a big HiveServer2-style log against `grep -c -F`.

Generates (once, under /tmp) a HiveServer2 log in the Hive 2+ log4j2 layout: many handler and
background threads, about 1% of the lines carry a message that becomes an event (loads, new
loading paths, directory creations, trash moves, metastore calls, query start/end, jobs), the
rest is ordinary chatter, and about 1 record in 200 carries a 12-line stack trace. Then times,
in the same run, `grep -c -F` for one keyword over the file and the whole `commitsleuth ingest`
into a fresh DuckDB store, and samples the peak memory of the ingest and its workers.

    python bench/ingest_text.py              # 1 GiB
    python bench/ingest_text.py --size 200M  # quicker
"""

from __future__ import annotations

import argparse
import ctypes
import os
import random
import resource
import shutil
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


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="1G", help="log size (default 1G)")
    ap.add_argument("--dir", default="/tmp/commitsleuth-bench", help="where the log and store go")
    ap.add_argument("--runs", type=int, default=1)
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
    exe = shutil.which("commitsleuth", path=os.path.dirname(sys.executable)) or "commitsleuth"
    for run in range(args.runs):
        db = work / "bench.duckdb"
        db.unlink(missing_ok=True)
        load = os.getloadavg()[0]
        g, gcpu, gp, _ = timed(["grep", "-c", "-F", "Loading data to table", str(log)])
        c, ccpu, cp, peak = timed([exe, "ingest", str(log), "--db", str(db)])
        if cp.returncode != 0:
            print(cp.stderr, file=sys.stderr)
            return 1
        cores = os.cpu_count() or 1
        print(f"run {run + 1}: {mb:.0f} MB, load average {load:.1f} on {cores} cores; {cp.stdout.strip()}")
        print(f"  grep -c -F     wall {g:7.2f} s {mb / g:7.0f} MB/s   cpu {gcpu:7.2f} s "
              f"({gp.stdout.strip()} matching lines)")
        print(f"  commitsleuth   wall {c:7.2f} s {mb / c:7.0f} MB/s   cpu {ccpu:7.2f} s   "
              f"peak memory {peak / 2**20:.0f} MiB")
        print(f"  ratio          wall {c / g:.1f}x grep ({100 * g / c:.0f}% of grep's speed), "
              f"cpu {ccpu / max(gcpu, 1e-3):.1f}x grep; {mb / ccpu:.0f} MB per cpu-second "
              f"(targets: >= 200 MB/s, <= 1024 MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
