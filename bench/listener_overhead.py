"""What live capture costs a Spark job: 20,000 tiny JVM-only tasks on local[2].

    .venv/bin/python bench/listener_overhead.py [--pairs 8] [--tasks 20000] [--rows-per-task 1] [--warm-up-tasks N] [--local-dir DIR] [--event-log] [--spark-writer] [--hooks] [--naive] [--spool-only]

Each pair runs the same job with no listener (the baseline) and with commitsleuth attached
(attach before, flush and detach after; the wall time is the job's), alternating which goes
first: pairs come in ABBA blocks (baseline first, then commitsleuth first), so a box whose speed
drifts linearly over a block weighs on both columns alike. Each run has a driver of its own (a
fresh Python process and JVM): 20,000-task jobs run one after another in one session slow down
steadily (29 -> 58 s over five bare jobs, most of it kernel time), so a later run would pay for
the earlier ones. Spark's local directory (``spark.local.dir``: the job's shuffle files, two per
task) is on tmpfs (``/dev/shm``) for every variant unless ``--local-dir`` names another: on the
box's ext4 ``/tmp``, creating a run's 40,000 files passed over the inodes deleted recently
(``recently_deleted`` in ``__ext4_new_inode``: a quarter of the JVM's samples under ``perf``),
the previous run's 40,000 among them, so a bare job's kernel time swung 8-14 s from run to run
with how recently the run before it ended. Every
run's driver is warmed up alike before the window: a 2,000-task job bare, then the same bare
and captured, both timed, then a job of ``--warm-up-tasks`` (by default as many as the measured
job's) bare and one captured, untimed. What the capture costs the first time in a driver (the
JVM loading and compiling its event log writer, commitsleuth's imports, DuckDB's JSON extension:
a few seconds of CPU, once per application) is printed apart (the two timed 2,000-task jobs),
so the window holds what it costs a job in a running application; the larger jobs bring the
JIT to its steady state first: after 2,000-task warm-ups alone the JIT compiler threads still
took 7-10 s of a 20,000-task window's 31-38 CPU-s (Spark's code as much as the capture's),
after 20,000-task ones 0.4-1.3 s. Before the window both heaps' garbage is
collected. ``--spark-writer`` adds commitsleuth with Spark's own EventLoggingListener writing the
spool (``COMMITSLEUTH_LEAN_SPOOL=0``) instead of the lean writer, to tell the two apart in one
run; each captured run prints which writer wrote its spool. ``--hooks`` adds commitsleuth with its optional Python listener (one py4j callback per
event), ``--naive`` the obvious design (a Python SparkListener on Spark's shared queue calling
``JsonProtocol.sparkEventToJsonString`` per event and INSERTing each event into DuckDB),
``--spool-only`` the JVM part of commitsleuth alone (Spark's EventLoggingListener writing the
spool, no loader: the baseline runs with Spark's event logging off). ``--event-log`` adds the same
job with no capture and Spark's own event logging on (``spark.eventLog.enabled=true``, every other
event-log setting Spark's default, the log under the run's temporary directory like the capture's
spool), in the same blocks, so the capture is weighed against what Spark's event logging costs the
same job in the same run; its driver's warm-up jobs are logged too (the setting is the
application's). Every arm waits, after its job, until Spark's listener bus is empty, so what an
asynchronous queue still does for the job (the event log's writer, the capture's) is in its CPU. For wall
time and the driver's CPU (JVM + Python, all threads, from attach to the last event stored) it
prints the ratio of the medians and the median of the per-pair ratios with min-max; per run the
CPU split between the JVM and Python, the CPU the capture's loads took (with the store's
close after each) and how many there were, the events py4j carried
to Python listeners, the task ends stored against the number Spark ran, Spark's dropped-event
counters, and `uptime` once per pair: the machine may be shared. The drift is printed too: the
baseline's own spread (min-max of its runs, max/min) and, per ABBA block, the second baseline
over the first, the box's own change in speed over two pairs; a per-pair ratio cannot resolve
an effect smaller than that. As an extra, the ratio of each block's sums (commitsleuth's two
runs over the baseline's two, a linear drift cancelled); the two statistics of the target
stay the ratio of the medians and the median of the per-pair ratios. ``--rows-per-task N`` gives
each task N rows to hash and filter: the same number of events, more work per task, to show how
the capture's share falls as tasks grow (the target is stated for the default job, 1 row a task).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import duckdb
from pyspark.sql import SparkSession

from commitsleuth.listener import attach, lean_writer
from commitsleuth.listener.hooks import listener_class
from commitsleuth.listener.jvm import HOOKS_QUEUE, SpoolWriter, dropped_events, listener_methods
from commitsleuth.parsers.spark_events import SparkEventDecoder
from commitsleuth.store import Store


class NaiveListener:
    """Per event: serialise through py4j, decode, INSERT one row. On Spark's shared queue."""

    def __init__(self, spark, db: Path):
        sc = spark.sparkContext
        from pyspark.java_gateway import ensure_callback_server_started

        ensure_callback_server_started(sc._gateway)
        Store(db).close()  # schema
        self.con = duckdb.connect(str(db))
        self.decoder = SparkEventDecoder(app_id=sc.applicationId)
        self.protocol = sc._jvm.org.apache.spark.util.JsonProtocol
        self.lock = threading.Lock()
        self.task_ends = 0
        self.next_id = 1

        def on_event(this, event):
            text = self.protocol.sparkEventToJsonString(event)
            with self.lock:
                for ev in self.decoder.decode(json.loads(text), raw=text):
                    self.con.execute(
                        "INSERT INTO events (event_id, kind, ts, task_id, attempt_no, stage_id, status, raw)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [self.next_id, ev.kind, ev.ts, ev.task_id, ev.attempt_no, ev.stage_id, ev.status, ev.raw])
                    self.next_id += 1
                    self.task_ends += ev.kind == "attempt_end"

        cls = listener_class(listener_methods(sc._jvm))
        for name in listener_methods(sc._jvm):
            setattr(cls, name, on_event)
        holder = sc._jvm.java.util.ArrayList()
        holder.add(cls(None))
        self.jlistener = holder.get(0)
        self.bus = sc._jsc.sc().listenerBus()
        sc._jsc.sc().addSparkListener(self.jlistener)

    def wait_idle(self, expected: int, timeout: float = 600) -> None:
        deadline = time.monotonic() + timeout
        last, still = -1, 0
        while time.monotonic() < deadline and self.task_ends < expected:
            time.sleep(0.5)
            still = still + 1 if self.task_ends == last else 0
            if still > 20:  # no progress for 10 s: the rest was dropped
                break
            last = self.task_ends

    def detach(self) -> None:
        self.bus.removeListener(self.jlistener)
        self.con.close()


def cpu_split(spark) -> tuple[float, float]:
    """CPU seconds of this driver so far: (the JVM, the Python process), all threads (Linux /proc)."""
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    jvm = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return jvm, usage.ru_utime + usage.ru_stime


def queue_events(sc, queue: str) -> int:
    """Events Spark's bus delivered on ``queue`` so far (its processing timer's count)."""
    timers = sc._jsc.sc().listenerBus().metrics().metricRegistry().getTimers()
    timer = timers.get(f"queue.{queue}.listenerProcessingTime")
    return int(timer.getCount()) if timer is not None else 0


def collect(spark) -> int:
    """Both heaps' garbage collected (outside any measured window); the JVM heap in use after, MiB."""
    gc.collect()
    jvm = spark.sparkContext._jvm
    jvm.java.lang.System.gc()
    rt = jvm.java.lang.Runtime.getRuntime()
    return (rt.totalMemory() - rt.freeMemory()) >> 20


def filesystem(path: str) -> str:
    """The type of the filesystem ``path`` is on (``df --output=fstype``), or "unknown"."""
    proc = subprocess.run(["df", "--output=fstype", path], capture_output=True, text=True)
    lines = proc.stdout.split()
    return lines[-1] if proc.returncode == 0 and len(lines) > 1 else "unknown"


# Rows each task of the job reads (``--rows-per-task``): 1 is the target's job, tasks of about
# 1.1 ms of CPU each; more rows give each task more work (a hash and a filter per row, about
# 3 ns each) and the capture's cost per task the same.
ROWS_PER_TASK = 1


def job_text(tasks: int) -> str:
    if ROWS_PER_TASK == 1:
        return f"spark.range(0, {tasks}, 1, {tasks}).count()"
    return f"spark.range(0, {tasks} * {ROWS_PER_TASK:,}, 1, {tasks}).where('hash(id) = 0').count()"


def run_job(spark, tasks: int) -> float:
    t0 = time.perf_counter()
    if ROWS_PER_TASK == 1:
        spark.range(0, tasks, 1, tasks).count()
    else:
        spark.range(0, tasks * ROWS_PER_TASK, 1, tasks).where("hash(id) = 0").count()
    return time.perf_counter() - t0


def summary(name: str, values: dict[str, list[float]], variant: str, against: str = "none") -> str:
    base, mine = values[against], values[variant]
    per_pair = [m / b for m, b in zip(mine, base)]
    return (f"{name} median {statistics.median(mine):7.2f} s  ratio of medians "
            f"{statistics.median(mine) / statistics.median(base):.3f}  median of per-pair ratios "
            f"{statistics.median(per_pair):.3f} (min-max {min(per_pair):.3f}-{max(per_pair):.3f}; "
            f"per pair {', '.join(f'{r:.3f}' for r in per_pair)})")


def blocks(values: dict[str, list[float]], variant: str) -> list[float]:
    """Per ABBA block (two pairs), the variant's two runs summed over the baseline's two."""
    base, mine = values["none"], values[variant]
    return [(mine[k] + mine[k + 1]) / (base[k] + base[k + 1]) for k in range(0, len(base) - 1, 2)]


def drift(name: str, base: list[float]) -> str:
    """The baseline's own spread, and its change in speed over each ABBA block."""
    within = [base[k + 1] / base[k] for k in range(0, len(base) - 1, 2)]
    return (f"{name} baseline min-max {min(base):.2f}-{max(base):.2f} s (max/min {max(base) / min(base):.3f})"
            + (f"; second baseline / first, per ABBA block: {', '.join(f'{r:.3f}' for r in within)}"
               if within else ""))


def session(local_dir: str | None = None, event_log_dir: Path | None = None):
    builder = (SparkSession.builder.master("local[2]").appName("listener-overhead")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.host", "127.0.0.1"))
    if local_dir:
        builder = builder.config("spark.local.dir", local_dir)
    if event_log_dir is not None:
        event_log_dir.mkdir(parents=True, exist_ok=True)
        builder = (builder.config("spark.eventLog.enabled", "true")
                   .config("spark.eventLog.dir", event_log_dir.resolve().as_uri()))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def settle(sc) -> None:
    """Wait until Spark's listener bus has delivered everything posted (at most 10 minutes)."""
    sc._jsc.sc().listenerBus().waitUntilEmpty(600_000)


def event_log_size(directory: Path | None) -> int:
    """Bytes of the event log(s) Spark wrote under ``directory`` so far (0 without one)."""
    if directory is None or not directory.is_dir():
        return 0
    return sum(f.stat().st_size for f in directory.rglob("*") if f.is_file())


def measure(spark, variant: str, tasks: int, tmp: Path, event_log_dir: Path | None = None) -> dict:
    """One run of the job under ``variant`` in this driver: its wall time, the driver's CPU
    (JVM and Python) from before attach to the last event stored, and what was captured."""
    sc = spark.sparkContext
    expected = tasks + 1  # the count's second stage runs one task
    drops_before = dropped_events(sc)
    tmp.mkdir(parents=True, exist_ok=True)
    db = tmp / f"{variant}.duckdb"
    heap = collect(spark)
    jvm0, py0 = cpu_split(spark)
    hooks0 = queue_events(sc, HOOKS_QUEUE)
    out = {"variant": variant, "heap": heap, "captured": None, "extra": ""}

    def drops() -> dict:
        """Read while the variant's queues still exist (a queue with no listener is removed)."""
        return {q: n - drops_before.get(q, 0) for q, n in dropped_events(sc).items() if n > drops_before.get(q, 0)}

    if variant in ("none", "eventlog"):
        logged0 = event_log_size(event_log_dir)
        wall = run_job(spark, tasks)
        settle(sc)
        out["dropped"] = drops()
        if event_log_dir is not None:
            names = sorted(f.name for f in event_log_dir.rglob("*") if f.is_file())
            out["extra"] = (f"  event log +{(event_log_size(event_log_dir) - logged0) / 2**20:.1f} MiB"
                            f" ({', '.join(names)})")
    elif variant in ("commitsleuth", "hooks", "spark-writer"):
        handle = attach(spark, db=db, hooks=variant == "hooks")
        wall = run_job(spark, tasks)
        handle.flush()
        settle(sc)
        callbacks = queue_events(sc, HOOKS_QUEUE) - hooks0  # read while the queue exists
        out["dropped"] = drops()
        handle.detach()
        # The window ends here: what follows is the bench's own check (opening the store and
        # counting its rows is not what the capture costs the job).
        jvm1, py1 = cpu_split(spark)
        with Store(db, read_only=True) as store:
            got = store.count("events WHERE kind = 'attempt_end'")
        out["captured"] = f"{got}/{expected}"
        out["extra"] = (f"  loads {handle.stats.load_cpu:5.2f} s cpu ({handle.stats.loads} loads)"
                        f"  py4j callbacks {callbacks}  task ends {got}/{expected}"
                        f"  spool writer {handle.stats.spool_writer}")
    elif variant == "spool-only":
        writer = SpoolWriter(sc, tmp / "spool")
        wall = run_job(spark, tasks)
        settle(sc)
        out["dropped"] = drops()
        writer.detach()
    else:
        naive = NaiveListener(spark, db)
        wall = run_job(spark, tasks)
        naive.wait_idle(expected)
        out["dropped"] = drops()
        naive.detach()
        out["captured"] = f"{naive.task_ends}/{expected}"
        out["extra"] = f"  task ends {naive.task_ends}/{expected}"
    if variant not in ("commitsleuth", "hooks", "spark-writer"):
        jvm1, py1 = cpu_split(spark)
    out.update(wall=wall, cpu=jvm1 - jvm0 + py1 - py0, jvm=jvm1 - jvm0, python=py1 - py0)
    return out


def one_run(variant: str, tasks: int, warm_up: int, tmp: Path, local_dir: str | None) -> None:
    """``--run``: a fresh driver warmed up alike for every variant, then the measured run,
    printed as one JSON line. The warm-up: a 2,000-task job bare (Spark's classes loaded), the
    same again bare and once captured, both timed: what the capture costs the first time in a
    driver (the JVM's class loading and compiling of its event log writer, commitsleuth's
    imports, DuckDB's JSON extension) is printed, and stays out of the measured window; then a
    ``warm_up``-task job bare and one captured, untimed, so the JIT has compiled the job's and
    the capture's code before the window."""
    event_log_dir = tmp / "event-log" if variant == "eventlog" else None
    spark = session(local_dir, event_log_dir)
    try:
        run_job(spark, 2000)
        first = {}
        for name in ("none", "commitsleuth"):
            warm = measure(spark, name, 2000, tmp / f"warm-up-{name}")
            first[name] = (warm["wall"], warm["cpu"])
        if warm_up:
            for name in ("none", "commitsleuth"):
                measure(spark, name, warm_up, tmp / f"steady-{name}")
        result = measure(spark, variant, tasks, tmp, event_log_dir)
        result["first_capture"] = [first["commitsleuth"][k] - first["none"][k] for k in (0, 1)]
        print(json.dumps(result), flush=True)
    finally:
        spark.stop()


def in_fresh_driver(variant: str, tasks: int, warm_up: int, tmp: Path, local_dir: str) -> dict:
    env = dict(os.environ, **({lean_writer.ENV: "0"} if variant == "spark-writer" else {}))
    proc = subprocess.run([sys.executable, __file__, "--run", variant, "--tasks", str(tasks),
                           "--rows-per-task", str(ROWS_PER_TASK),
                           "--warm-up-tasks", str(warm_up), "--tmp", str(tmp), "--local-dir", local_dir],
                          capture_output=True, text=True, timeout=1800, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"the {variant} run failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=8, help="pairs (an even number makes whole ABBA blocks)")
    ap.add_argument("--tasks", type=int, default=20_000)
    ap.add_argument("--rows-per-task", type=int, default=1, help="rows each task reads, hashes and filters "
                    "(default 1: the target's job, about 1.1 ms of CPU a task; 300000: about 2.5 ms)")
    ap.add_argument("--warm-up-tasks", type=int, help="tasks of each driver's last warm-up jobs, a bare one "
                    "and a captured one, that bring the JIT to its steady state (default: --tasks; 0: none)")
    ap.add_argument("--local-dir", help="Spark's local directory (shuffle files) for every run "
                    "(default: a fresh one on /dev/shm, else under the system's temporary directory)")
    ap.add_argument("--event-log", action="store_true", help="also no capture with Spark's event logging on "
                    "(spark.eventLog.enabled=true), to weigh the capture against it")
    ap.add_argument("--spark-writer", action="store_true", help="also commitsleuth with Spark's own spool writer")
    ap.add_argument("--hooks", action="store_true", help="also commitsleuth with its Python listener")
    ap.add_argument("--naive", action="store_true", help="also the naive per-event listener")
    ap.add_argument("--spool-only", action="store_true", help="also Spark writing the spool, no loader")
    ap.add_argument("--run", help=argparse.SUPPRESS)  # one measured run in this process (internal)
    ap.add_argument("--tmp", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rows_per_task < 1:
        ap.error("--rows-per-task must be at least 1")
    global ROWS_PER_TASK
    ROWS_PER_TASK = args.rows_per_task
    if args.run:
        one_run(args.run, args.tasks, args.warm_up_tasks, Path(args.tmp), args.local_dir)
        return
    warm_up = args.tasks if args.warm_up_tasks is None else args.warm_up_tasks
    tmp = Path(tempfile.mkdtemp(prefix="listener-bench-"))
    local_dir = args.local_dir or tempfile.mkdtemp(prefix="listener-bench-spark-",
                                                   dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    print(f"Spark's local directory: {local_dir} ({filesystem(local_dir)})", flush=True)
    started = time.monotonic()
    variants = (["none", "commitsleuth"] + ["eventlog"] * args.event_log + ["spark-writer"] * args.spark_writer + ["hooks"] * args.hooks + ["naive"] * args.naive
                + ["spool-only"] * args.spool_only)
    times: dict[str, list[float]] = {v: [] for v in variants}
    cpu: dict[str, list[float]] = {v: [] for v in variants}
    captured: dict[str, list[str]] = {v: [] for v in variants[1:]}
    dropped: dict[str, dict[str, int]] = {}
    first: list[list[float]] = []  # per run: a 2,000-task job captured minus bare, in its warm-up
    for pair in range(args.pairs):
        print(f"pair {pair + 1}: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}",
              flush=True)
        # Rotated one place a pair: with two arms, ABBA blocks; with more, each arm takes each
        # place once in as many pairs as there are arms.
        shift = pair % len(variants)
        order = variants[shift:] + variants[:shift]
        for variant in order:
            r = in_fresh_driver(variant, args.tasks, warm_up, tmp / f"{variant}-{pair}", local_dir)  # measure() makes it
            shutil.rmtree(tmp / f"{variant}-{pair}", ignore_errors=True)  # its store, spool or event log
            times[variant].append(r["wall"])
            cpu[variant].append(r["cpu"])
            if r["captured"]:
                captured[variant].append(r["captured"])
            for queue, n in r["dropped"].items():
                dropped.setdefault(variant, {})[queue] = dropped.get(variant, {}).get(queue, 0) + n
            first.append(r["first_capture"])
            print(f"pair {pair + 1} {variant:12s} wall {r['wall']:7.2f} s  cpu {r['cpu']:7.2f} s"
                  f" (jvm {r['jvm']:6.2f}, python {r['python']:5.2f})  heap before {r['heap']} MiB{r['extra']}",
                  flush=True)
    print()
    print(f"job: {job_text(args.tasks)} on local[2], {args.pairs} pairs, "
          f"each run in a fresh driver warmed up by {warm_up:,}-task jobs too, Spark's local directory on "
          f"{filesystem(local_dir)}")
    print(f"no listener      wall median {statistics.median(times['none']):7.2f} s  "
          f"cpu median {statistics.median(cpu['none']):7.2f} s")
    for variant in variants[1:]:
        print(f"{variant:16s} {summary('wall', times, variant)}")
        print(f"{'':16s} {summary('cpu ', cpu, variant)}")
        print(f"{'':16s} task ends stored {', '.join(captured[variant])}")
        for name, values in (("wall", times), ("cpu ", cpu)):
            per_block = blocks(values, variant)
            if per_block:
                print(f"{'':16s} extra, {name} per ABBA block (sums): {', '.join(f'{r:.3f}' for r in per_block)}"
                      f" (median {statistics.median(per_block):.3f})")
    if "eventlog" in variants:
        print(f"{'commitsleuth':16s} against Spark's event logging (eventlog as the baseline):")
        print(f"{'':16s} {summary('wall', times, 'commitsleuth', 'eventlog')}")
        print(f"{'':16s} {summary('cpu ', cpu, 'commitsleuth', 'eventlog')}")
    print(f"outside the window, the first capture in a fresh driver (a 2,000-task job captured minus bare, "
          f"median of {len(first)} drivers): wall +{statistics.median(f[0] for f in first):.2f} s, "
          f"cpu +{statistics.median(f[1] for f in first):.2f} s")
    print(f"drift: {drift('wall', times['none'])}")
    print(f"drift: {drift('cpu ', cpu['none'])}")
    for variant in variants:
        print(f"events Spark dropped with {variant}: {dropped.get(variant) or 'none'}")
    print(f"{time.monotonic() - started:.0f} s in all; "
          + subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    if not args.local_dir:
        shutil.rmtree(local_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
