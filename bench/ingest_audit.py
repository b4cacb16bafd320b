"""Benchmark: `commitsleuth ingest` of a big HDFS NameNode audit log and a big S3 server access
log, each against `grep -c -F` in the same run.

Generates (once, under /tmp) an audit log in the FSNamesystem.audit layout (about 90% reads —
open, getfileinfo, listStatus — as on a busy NameNode; the rest creates, mkdirs, renames,
deletes, trash moves, setPermission; a third with Spark or Hive caller contexts) and an access log
(about 85% GET/HEAD/LIST; PUT, COPY, DELETE, multi-object deletes). Then times, per log and per
run, `grep -c -F` for one keyword and the whole `commitsleuth ingest` into a fresh store, with
the machine's load and the peak memory of the ingest. Prints the ratio of the medians and the
min-max over the runs.

    nice -n 10 python bench/ingest_audit.py                 # 1 GiB each, 3 runs
    nice -n 10 python bench/ingest_audit.py --size 200M --runs 3
    nice -n 10 python bench/ingest_audit.py --writes 0.01    # a read-heavier NameNode
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from ingest_text import parse_size, timed  # noqa: E402  (the bench scripts share their timer)

USERS = ["etl (auth:SIMPLE)", "hive/gw-1.example.com@EXAMPLE.COM (auth:KERBEROS)",
         "alice (auth:PROXY) via hive/hs2-1.example.com@EXAMPLE.COM (auth:KERBEROS)",
         "spark (auth:TOKEN)", "hdfs/nn-1.example.com@EXAMPLE.COM (auth:KERBEROS)"]
READS = ["open", "getfileinfo", "listStatus", "getfileinfo", "open", "contentSummary"]
WRITES = ["create", "mkdirs", "rename", "delete", "rename (options=[TO_TRASH])", "setPermission", "append"]


def generate_audit(path: Path, size: int, writes: float = 0.1, seed: int = 13) -> None:
    rnd = random.Random(seed)
    written, i = 0, 0
    with open(path, "w", encoding="utf-8") as f:
        while written < size:
            out = []
            for _ in range(20000):
                i += 1
                d = i % 28 + 1
                p = f"/user/hive/warehouse/db.db/sales/dt=2023-02-{d:02d}/part-{i % 200:05d}-0f3e8a6c-1b2d-4c5e-8f90-123456789abc.c000.snappy.parquet"
                r = rnd.random()
                cmd = rnd.choice(WRITES) if r < writes else rnd.choice(READS)
                dst = "null"
                if cmd == "rename":
                    dst = p.replace("/sales/", "/sales/_temporary/0/task_1/")
                elif cmd.startswith("rename ("):
                    dst = "/user/alice/.Trash/Current" + p
                ctx = ""
                if r < 0.3:
                    ctx = (f"\tcallerContext=SPARK_TASK_application_1677664000000_{i % 97:04d}_1_JId_{i % 7}_SId_{i % 11}_0"
                           f"_TId_{i % 5000}_{i % 2}" if r < 0.2 else f"\tcallerContext=hive_queryId_hive_20230301100000_{i % 9973:08x}")
                out.append(f"2023-03-01 {i // 3600000 % 24:02d}:{i // 60000 % 60:02d}:{i // 1000 % 60:02d},{i % 1000:03d} INFO "
                           f"FSNamesystem.audit: allowed=true\tugi={rnd.choice(USERS)}\tip=/10.0.{i % 8}.{i % 250}\t"
                           f"cmd={cmd}\tsrc={p}\tdst={dst}\tperm={'null' if cmd in READS else 'etl:hive:rw-r--r--'}\tproto=rpc{ctx}\n")
            block = "".join(out)
            f.write(block)
            written += len(block)


S3_READS = ["REST.GET.OBJECT", "REST.HEAD.OBJECT", "REST.GET.BUCKET", "REST.GET.OBJECT"]
S3_WRITES = ["REST.PUT.OBJECT", "REST.COPY.OBJECT", "REST.DELETE.OBJECT", "REST.POST.UPLOAD", "BATCH.DELETE.OBJECT"]


def generate_access(path: Path, size: int, writes: float = 0.15, seed: int = 13) -> None:
    rnd = random.Random(seed)
    written, i = 0, 0
    with open(path, "w", encoding="utf-8") as f:
        while written < size:
            out = []
            for _ in range(20000):
                i += 1
                r = rnd.random()
                op = rnd.choice(S3_WRITES) if r < writes else rnd.choice(S3_READS)
                key = f"warehouse/sales.db/orders/dt%3D2023-02-{i % 28 + 1:02d}/part-{i % 200:05d}-0f3e8a6c.c000.snappy.parquet"
                ref = ("https://audit.example.org/hadoop/1/op_create/0f3e8a6c-0001/?op=op_create&pr=etl&ps=5f9d2c1e"
                       f"&id=0f3e8a6c-{i:08d}&ji=0f3e8a6c-1b2d&ta=attempt_20230301100000_0001_m_{i % 200:06d}_0"
                       if r < 0.4 else "-")
                out.append(f"79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be lake "
                           f"[01/Mar/2023:{i // 3600000 % 24:02d}:{i // 60000 % 60:02d}:{i // 1000 % 60:02d} +0000] "
                           f"10.0.{i % 8}.{i % 250} arn:aws:iam::123456789012:role/etl {i:016X} {op} {key} "
                           f"\"{op.split('.')[1]} /{key} HTTP/1.1\" 200 - 1024 10485760 41 12 \"{ref}\" "
                           f"\"Hadoop 3.3.4, aws-sdk-java/1.12.262\" - s9lzHYrFp76ZVxRcpX9+5cjAnEH2ROuNkd2BHfIa6Uk= SigV4 "
                           f"ECDHE-RSA-AES128-GCM-SHA256 AuthHeader lake.s3.eu-west-1.amazonaws.com TLSv1.2 - -\n")
            block = "".join(out)
            f.write(block)
            written += len(block)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="1G", help="size of each log (default 1G)")
    ap.add_argument("--dir", default="/tmp/commitsleuth-bench-audit", help="where the logs and store go")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--writes", type=float, help="share of write records (default 0.10 audit, 0.15 access)")
    args = ap.parse_args()
    size = parse_size(args.size)
    work = Path(args.dir)
    work.mkdir(parents=True, exist_ok=True)
    exe = shutil.which("commitsleuth", path=os.path.dirname(sys.executable)) or "commitsleuth"
    cores = os.cpu_count() or 1
    for name, gen, keyword in (("hdfs-audit", generate_audit, "cmd=delete"),
                               ("s3-access", generate_access, "REST.DELETE.OBJECT")):
        share = f"-w{args.writes}" if args.writes is not None else ""
        log = work / f"{name}-{args.size}{share}.log"
        if not log.exists() or log.stat().st_size < size:
            t = time.perf_counter()
            gen(log, size) if args.writes is None else gen(log, size, args.writes)
            print(f"generated {log} ({log.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t:.0f} s")
        mb = log.stat().st_size / 1e6
        greps, ingests, peaks, loads = [], [], [], []
        for run in range(args.runs):
            db = work / "bench.duckdb"
            db.unlink(missing_ok=True)
            loads.append(os.getloadavg()[0])
            g, _, gp, _ = timed(["grep", "-c", "-F", keyword, str(log)])
            c, ccpu, cp, peak = timed([exe, "ingest", str(log), "--db", str(db)])
            if cp.returncode != 0:
                print(cp.stderr, file=sys.stderr)
                return 1
            greps.append(g)
            ingests.append(c)
            peaks.append(peak)
            print(f"{name} run {run + 1}: {mb:.0f} MB, load {loads[-1]:.1f} on {cores} cores; grep {g:.2f} s "
                  f"({gp.stdout.strip()} lines), commitsleuth {c:.2f} s ({mb / c:.0f} MB/s, cpu {ccpu:.1f} s, "
                  f"peak {peak / 2**20:.0f} MiB); {cp.stdout.strip()}")
        gm, cm = statistics.median(greps), statistics.median(ingests)
        print(f"{name}: median {mb / cm:.0f} MB/s (min-max {mb / max(ingests):.0f}-{mb / min(ingests):.0f}) "
              f"against grep -c -F {mb / gm:.0f} MB/s: ratio of medians {cm / gm:.1f}x grep's time; "
              f"peak memory {max(peaks) / 2**20:.0f} MiB; load {min(loads):.1f}-{max(loads):.1f}; "
              f"target >= 200 MB/s: {'met' if mb / cm >= 200 else 'not met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
