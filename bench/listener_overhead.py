"""What live capture costs a Spark job: 20,000 tiny JVM-only tasks on local[2].

    .venv/bin/python bench/listener_overhead.py [--rounds 3] [--tasks 20000]

Each round runs the same job three ways, in rotating order: with no listener (the baseline),
with commitsleuth attached, and with the obvious design (a Python SparkListener that calls
``JsonProtocol.sparkEventToJsonString`` per event and inserts each event into DuckDB). It prints
the wall time of each run, the median ratio against the baseline of the same round, the task
ends each listener stored against the number Spark ran, and Spark's dropped-event counters.
Because the machine may be shared, it also prints the CPU seconds each run cost the driver
(JVM + Python, from attach to the last event stored), which other processes' load disturbs far
less than wall time, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import tempfile
import threading
import time
from pathlib import Path

import duckdb
from pyspark.sql import SparkSession

from commitsleuth.listener import attach
from commitsleuth.listener.hooks import listener_class
from commitsleuth.listener.jvm import dropped_events, listener_methods
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


def cpu_seconds(spark) -> float:
    """CPU time of this driver: the JVM and the Python process, all threads (Linux /proc)."""
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    jvm = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return jvm + usage.ru_utime + usage.ru_stime


def run_job(spark, tasks: int) -> float:
    t0 = time.perf_counter()
    spark.range(0, tasks, 1, tasks).count()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tasks", type=int, default=20_000)
    args = ap.parse_args()
    spark = (SparkSession.builder.master("local[2]").appName("listener-overhead")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.host", "127.0.0.1").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    run_job(spark, 2000)  # JIT and class loading out of the first measured run
    tmp = Path(tempfile.mkdtemp(prefix="listener-bench-"))
    times: dict[str, list[float]] = {"none": [], "commitsleuth": [], "naive": []}
    cpu: dict[str, list[float]] = {"none": [], "commitsleuth": [], "naive": []}
    cpu_ratios: dict[str, list[float]] = {"commitsleuth": [], "naive": []}
    captured: dict[str, list[str]] = {"commitsleuth": [], "naive": []}
    ratios: dict[str, list[float]] = {"commitsleuth": [], "naive": []}
    order = ["none", "commitsleuth", "naive"]
    drops_before = dropped_events(spark.sparkContext)
    dropped: dict[str, dict[str, int]] = {}

    def note_drops(spark, variant: str) -> None:
        """Read while the variant's queues still exist (a queue with no listener is removed)."""
        for queue, n in dropped_events(spark.sparkContext).items():
            if n > drops_before.get(queue, 0):
                per = dropped.setdefault(variant, {})
                per[queue] = per.get(queue, 0) + n - drops_before.get(queue, 0)
                drops_before[queue] = n
    for rnd in range(args.rounds):
        this_round, this_cpu = {}, {}
        for variant in order[rnd % 3:] + order[: rnd % 3]:
            db = tmp / f"{variant}-{rnd}.duckdb"
            cpu0 = cpu_seconds(spark)
            expected = args.tasks + 1  # the count's second stage runs one task
            if variant == "none":
                this_round[variant] = run_job(spark, args.tasks)
                note_drops(spark, variant)
            elif variant == "commitsleuth":
                handle = attach(spark, db=db)
                this_round[variant] = run_job(spark, args.tasks)
                handle.flush()
                note_drops(spark, variant)
                handle.detach()
                with Store(db, read_only=True) as store:
                    got = store.count("events WHERE kind = 'attempt_end'")
                captured[variant].append(f"{got}/{expected}")
            else:
                naive = NaiveListener(spark, db)
                this_round[variant] = run_job(spark, args.tasks)
                naive.wait_idle(expected)
                note_drops(spark, variant)
                naive.detach()
                captured[variant].append(f"{naive.task_ends}/{expected}")
            this_cpu[variant] = cpu_seconds(spark) - cpu0
            times[variant].append(this_round[variant])
            cpu[variant].append(this_cpu[variant])
            print(f"round {rnd + 1} {variant:12s} wall {this_round[variant]:7.2f} s  cpu {this_cpu[variant]:7.2f} s"
                  f"  load {os.getloadavg()[0]:.1f}", flush=True)
        for variant in ratios:
            ratios[variant].append(this_round[variant] / this_round["none"])
            cpu_ratios[variant].append(this_cpu[variant] / this_cpu["none"])
    print()
    print(f"job: spark.range(0, {args.tasks}, 1, {args.tasks}).count() on local[2], {args.rounds} rounds")
    print(f"no listener      wall median {statistics.median(times['none']):7.2f} s  "
          f"cpu median {statistics.median(cpu['none']):7.2f} s")
    for variant in ratios:
        print(f"{variant:16s} wall median {statistics.median(times[variant]):7.2f} s  "
              f"ratio {statistics.median(ratios[variant]):.3f} (per round: "
              f"{', '.join(f'{r:.3f}' for r in ratios[variant])})")
        print(f"{'':16s} cpu  median {statistics.median(cpu[variant]):7.2f} s  "
              f"ratio {statistics.median(cpu_ratios[variant]):.3f} (per round: "
              f"{', '.join(f'{r:.3f}' for r in cpu_ratios[variant])})  task ends stored {', '.join(captured[variant])}")
    for variant in ("none", "commitsleuth", "naive"):
        print(f"events Spark dropped with {variant}: {dropped.get(variant) or 'none'}")
    spark.stop()


if __name__ == "__main__":
    main()
