"""What one-row-per-Spark-event costs: the identity in the decoder and the store's look-up.

    .venv/bin/python bench/event_identity.py [--events 50000] [--rounds 7]

1. The decoder over the task, job and stage events of the plain corpus logs, replicated to
   --events, with the identity (parsers/spark_identity.py) and, alternating in the same run,
   with it switched off (the baseline): CPU per event, median and min–max.
2. ``Store.unseen_events`` for a batch of 10,000 keyed events against a store holding 100,000
   and 1,000,000 keyed events of the same application, and 1,000,000 of another application
   plus 1,000,000 text-log events without a key: wall time per batch, median and min–max.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import orjson

from commitsleuth.model import events_to_arrow
from commitsleuth.parsers import spark_events
from commitsleuth.store import Store

CORPUS = Path(os.environ.get("COMMITSLEUTH_CORPUS", Path(__file__).resolve().parent.parent / "tests" / "corpus"))
LOGS = ("local-1422981780767", "app-20161116163331-0000", "application_1628109047826_1317105")
BODY = ("SparkListenerTaskStart", "SparkListenerTaskEnd", "SparkListenerJobStart", "SparkListenerStageSubmitted")


def spread(values: list[float], unit: float, label: str) -> str:
    return (f"median {statistics.median(values) * unit:.1f} {label} "
            f"(min–max {min(values) * unit:.1f}–{max(values) * unit:.1f})")


def decode_cpu(events: list[dict]) -> float:
    decoder = spark_events.SparkEventDecoder(app_id="app")
    t0 = time.process_time()
    for event in events:
        decoder.decode(event)
    return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=50_000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    body = [e for name in LOGS for e in map(orjson.loads, (CORPUS / "spark-events" / name).read_text().splitlines())
            if e["Event"] in BODY]
    events = (body * (args.events // len(body) + 1))[: args.events]
    load = [os.getloadavg()[0]]

    with_key, without = [], []
    real = spark_events.spark_event_name, spark_events.event_key
    for _ in range(args.rounds):
        spark_events.spark_event_name, spark_events.event_key = real
        with_key.append(decode_cpu(events))
        spark_events.spark_event_name, spark_events.event_key = (lambda e: None), (lambda n, k, d=None: None)
        without.append(decode_cpu(events))
    spark_events.spark_event_name, spark_events.event_key = real
    print(f"decoder, {len(events)} task/job/stage events, {args.rounds} alternating rounds (CPU per event):")
    print(f"  without identity (baseline) {spread([t / len(events) for t in without], 1e6, 'µs')}")
    print(f"  with identity               {spread([t / len(events) for t in with_key], 1e6, 'µs')}")
    print(f"  ratio of the medians {statistics.median(with_key) / statistics.median(without):.2f}")

    decoder = spark_events.SparkEventDecoder(app_id="app")
    batch = events_to_arrow([ev for e in events[:10_000] for ev in decoder.decode(e)], None)
    work = Path(tempfile.mkdtemp(prefix="identity-bench-"))
    stores = {
        "100,000 keyed events of the same app": "SELECT i, 'attempt_end', 'app', (hash(i) >> 1)::BIGINT FROM range(100000) t(i)",
        "1,000,000 keyed events of the same app": "SELECT i, 'attempt_end', 'app', (hash(i) >> 1)::BIGINT FROM range(1000000) t(i)",
        "1,000,000 keyed of another app + 1,000,000 without key":
            "SELECT i, 'attempt_end', 'other', (hash(i) >> 1)::BIGINT FROM range(1000000) t(i) "
            "UNION ALL SELECT 1000000 + i, 'file', 'x', NULL FROM range(1000000) t(i)",
    }
    print(f"Store.unseen_events, a batch of {batch.num_rows} keyed events (wall per batch):")
    for n, (label, rows) in enumerate(stores.items()):
        with Store(work / f"s{n}.duckdb") as store:
            store.con.execute(f"INSERT INTO events (event_id, kind, app_id, event_key) {rows}")
            times = []
            for _ in range(args.rounds):
                t0 = time.perf_counter()
                store.unseen_events(batch)
                times.append(time.perf_counter() - t0)
        print(f"  {label}: {spread(times, 1e3, 'ms')}")
    load.append(os.getloadavg()[0])
    print(f"load average (1 min) at start and end: {load[0]:.1f}, {load[1]:.1f}")


if __name__ == "__main__":
    main()
