"""One Spark event, one row: the identity (parsers/spark_identity.py) on real corpus event logs.
The live side of it (a SIGKILLed driver's spool and Spark's own log) is tests/test_live_recovery.py."""

from __future__ import annotations

from collections import Counter

import orjson
import pytest

from commitsleuth.parsers.spark_events import COMMIT_CONF, SparkEventDecoder

PLAIN_LOGS = ["local-1422981780767", "app-20161116163331-0000", "application_1628109047826_1317105",
              "eventlog_v2_local-1766844910796/events_1_local-1766844910796"]
YARN = "application_1628109047826_1317105"


def lines(path):
    return path.read_bytes().decode().splitlines()


@pytest.mark.parametrize("name", PLAIN_LOGS)
def test_no_two_events_of_a_corpus_log_share_an_identity(corpus, name):
    decoder, keys = SparkEventDecoder(app_id="app"), Counter()
    for text in lines(corpus / "spark-events" / name):
        for ev in decoder.decode(orjson.loads(text)):
            keys[ev.event_key] += 1
    assert keys and None not in keys and max(keys.values()) == 1


def test_the_same_log_redacted_otherwise_adds_nothing(cli, corpus, tmp_path):
    """Spark's own log and the spool differ in what each redacted; the events are the same."""
    src = corpus / "spark-events" / "local-1422981780767"
    other = tmp_path / "copy" / src.name
    other.parent.mkdir()
    changed = []
    for text in lines(src):
        event = orjson.loads(text)
        if event["Event"] == "SparkListenerEnvironmentUpdate":
            # commit-relevant conf names no secret: no redaction regex masks it
            event["Spark Properties"] = {k: v if k in COMMIT_CONF else "*********(redacted)"
                                         for k, v in event["Spark Properties"].items()}
        if event["Event"] == "SparkListenerApplicationStart":
            event["App Name"] = "*********(redacted)"
        changed.append(orjson.dumps(event).decode())
    other.write_text("\n".join(changed) + "\n")
    db = tmp_path / "s.duckdb"
    assert cli("ingest", "--db", db, src).out == "ingested 1 file (1 ok): 80 events, 0 rejected lines\n"
    again = cli("ingest", "--db", db, other)
    assert again.out == "ingested 1 file (1 ok): 0 events, 0 rejected lines, 80 events already in the store\n"


def _later(value, shift: int):
    """Every time field of a Spark event moved ``shift`` ms later (a second application attempt)."""
    if isinstance(value, dict):
        return {k: (v + shift if isinstance(v, int) and v > 10**12 and k.lower().endswith(("time", "timestamp"))
                    else _later(v, shift)) for k, v in value.items()}
    if isinstance(value, list):
        return [_later(v, shift) for v in value]
    return value


def _second_attempt(event: dict) -> dict:
    """The event as attempt 2 of the same YARN application posts it: an hour later, and its
    start names attempt 2 (Spark's ``App Attempt ID``)."""
    event = _later(event, 3_600_000)
    if event["Event"] == "SparkListenerApplicationStart":
        event["App Attempt ID"] = "2"
    return event


def test_a_second_attempt_of_a_yarn_application_is_not_taken_for_the_first(cli, corpus, tmp_path):
    """Attempt 2 has the application's id, restarts task ids and posts the same environment:
    its times, and its start's attempt for the environment, tell it apart."""
    first = corpus / "spark-events" / YARN
    second = tmp_path / f"{YARN}_2"
    second.write_text("\n".join(orjson.dumps(_second_attempt(orjson.loads(t))).decode()
                                for t in lines(first)) + "\n")
    db = tmp_path / "s.duckdb"
    # 20: its Hadoop Properties' mapreduce.fileoutputcommitter.marksuccessfuljobs=false is kept (CS105)
    assert cli("ingest", "--db", db, first).out == "ingested 1 file (1 ok): 20 events, 0 rejected lines\n"
    assert cli("ingest", "--db", db, second).out == "ingested 1 file (1 ok): 20 events, 0 rejected lines\n"


def test_live_capture_writes_no_event_an_ingest_stored_first(corpus, store):
    """Live capture writes through Store.write_events: an event its spool's ingest (or Spark's
    own log) already stored is not written again, whichever came first."""
    decoder = SparkEventDecoder(app_id="local-1422981780767")
    events = [ev for text in lines(corpus / "spark-events" / "local-1422981780767")
              for ev in decoder.decode(orjson.loads(text))]
    assert store.write_events(events[:50]) == 50
    assert store.write_events(events) == len(events) - 50 == 30
    assert store.write_events(events) == 0
    assert store.count("events") == 80


def test_a_source_sees_events_another_source_wrote_after_its_first_batch(corpus, store):
    """unseen_events skips its join while no other source holds the application; one that
    starts to (live capture, between two batches of an ingest) is seen at the next batch."""
    from commitsleuth.model import events_to_arrow

    decoder = SparkEventDecoder(app_id="local-1422981780767")
    events = [ev for text in lines(corpus / "spark-events" / "local-1422981780767")
              for ev in decoder.decode(orjson.loads(text))]

    def of_source(evs, source_id):
        for ev in evs:
            ev.source_id = source_id
        return evs

    first = store.unseen_events(events_to_arrow(of_source(events[:20], 1), None))
    assert first.num_rows == 20  # nobody else holds the application: all of it is new
    store.write_arrow(first)
    assert store.write_events(of_source(events[20:40], 2)) == 20  # live capture, say
    later = store.unseen_events(events_to_arrow(of_source(events[20:60], 1), None))
    assert later.column("event_key").to_pylist() == events_to_arrow(events[40:60], None).column("event_key").to_pylist()
