"""No stored field bypasses the one redaction layer.

The store's text columns are enumerated from DuckDB itself: each must be classified below with
the writer that redacts it, so a new column fails here until it is. Every text field of an
event and every JSON key ``detail`` holds for the real corpus (tests/corpus) then gets a
planted value, goes through the writers, and is searched for in every column and in the bytes
of the DuckDB file. The planted values are synthetic.
"""

from __future__ import annotations

import dataclasses
import json

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from commitsleuth.model import EVENT_SCHEMA, Event, events_to_arrow
from commitsleuth.redact import (MASK, TRIGGER_RE, add_key_pattern, add_pattern, clear_user_patterns, redact,
                                 redact_table, redact_value)
from commitsleuth.store import Store

# Every text column of the store's tables, with the writer that redacts it.
COVERED = {
    "events": "model.events_to_arrow (every text column, every string in detail)",
    "superseded_events": "copies of events rows (already redacted)",
    "sources": "Store.add_source / Store.update_source",
    "rejects": "Store.add_rejects (sample); reason is commitsleuth's own text",
    "findings": "forensics.analyze through redact_table (detail and actor_objects: every string in the JSON)",
    "schema_version": "migration names (commitsleuth's own text)",
}


@pytest.fixture(autouse=True)
def _no_user_patterns_left_behind():
    yield
    clear_user_patterns()


def _text_columns(store: Store) -> list[tuple[str, str]]:
    return store.query(
        "SELECT table_name, column_name FROM duckdb_columns() WHERE NOT internal "
        "AND data_type IN ('VARCHAR', 'JSON', 'VARCHAR[]') "
        "AND table_name NOT IN (SELECT view_name FROM duckdb_views())")[1]


def _leaks(store: Store, secrets: list[str]) -> list[tuple[str, str, str]]:
    found = []
    for table, column in _text_columns(store):
        for (value,) in store.query(f'SELECT DISTINCT "{column}"::VARCHAR FROM "{table}" '
                                    f'WHERE "{column}" IS NOT NULL')[1]:
            found += [(table, column, s) for s in secrets if s in value]
    return found


def test_every_text_column_of_the_store_is_classified(store):
    tables = {t for t, _ in _text_columns(store)}
    assert tables - set(COVERED) == set()


def _detail_key_paths(value, prefix=()) -> set[tuple]:
    """Paths of the string-bearing keys in a detail value (nested dicts included)."""
    out = set()
    if isinstance(value, dict):
        for k, v in value.items():
            out |= _detail_key_paths(v, prefix + (k,)) if isinstance(v, (dict, list)) else {prefix + (k,)}
    elif isinstance(value, list):
        for v in value:
            out |= _detail_key_paths(v, prefix + ("[]",))
    return out


def _planted_detail(path: tuple, secret: str) -> dict:
    value: object = f"s3a://u:{secret}@bucket/out"
    for key in reversed(path):
        value = [value] if key == "[]" else {key: value}
    return value


@pytest.fixture(scope="module")
def corpus_detail_paths(corpus, tmp_path_factory) -> set[tuple]:
    from commitsleuth.ingest import ingest

    db = tmp_path_factory.mktemp("corpus") / "c.duckdb"
    with Store(db) as s:
        ingest(s, [str(corpus)])
        rows = s.query("SELECT DISTINCT detail::VARCHAR FROM events WHERE detail IS NOT NULL")[1]
    paths = set()
    for (text,) in rows:
        paths |= _detail_key_paths(json.loads(text))
    return paths


def test_every_event_field_and_every_detail_key_of_the_corpus_is_redacted(store, corpus_detail_paths, db_path):
    assert len(corpus_detail_paths) > 20  # the corpus yields many keys: the enumeration is real
    text_fields = [f.name for f in dataclasses.fields(Event)
                   if EVENT_SCHEMA.field(f.name).type == pa.string() and f.name != "detail"]
    secrets, events = [], []
    for n, name in enumerate(text_fields):
        secret = f"PlantedField{n:02d}x"
        secrets.append(secret)
        events.append(Event(**{"kind": "file", name: f"s3a://u:{secret}@bucket/out"}))
    for n, path in enumerate(sorted(corpus_detail_paths)):
        secret = f"PlantedDetail{n:03d}x"
        secrets.append(secret)
        events.append(Event("file", detail=_planted_detail(path, secret)))
    # a conf entry naming a secret, and a field that names one, are masked whatever the value
    events.append(Event("conf", detail={"key": "fs.azure.account.key.acct.dfs.core.windows.net",
                                        "value": "PlantedConfValue"}))
    events.append(Event("file", detail={"password": "PlantedPlainValue"}))
    secrets += ["PlantedConfValue", "PlantedPlainValue"]
    store.write_events(events)
    store.add_source("s3a://u:PlantedUri@bucket/log", "file", reason="token=PlantedReason")
    sid = store.add_source("/tmp/x.log", "file")
    store.update_source(sid, reason="cannot open s3a://u:PlantedUpdate@b/x")
    store.add_rejects(sid, {"unreadable": [1, 1, "password=PlantedSample"]})
    secrets += ["PlantedUri", "PlantedReason", "PlantedUpdate", "PlantedSample"]
    assert _leaks(store, secrets) == []
    masked = store.query(f"SELECT count(*) FROM events WHERE raw LIKE '%{MASK}%' "
                         f"OR path LIKE '%{MASK}%' OR detail::VARCHAR LIKE '%{MASK}%'")[1][0][0]
    assert masked >= 3
    # the write-ahead log first (the writes are in it until a checkpoint), then the file
    wal = db_path.parent / (db_path.name + ".wal")
    assert wal.exists() and wal.stat().st_size > 0
    for data in (wal.read_bytes(), (store.con.execute("CHECKPOINT"), db_path.read_bytes())[1]):
        assert [s for s in secrets if s.encode() in data] == []


def test_findings_pass_the_layer(cli, tmp_path):
    """A pattern added after ingest (COMMITSLEUTH_REDACT at analyze time) masks findings' text."""
    from commitsleuth.demo import sample_dir

    db = tmp_path / "f.duckdb"
    assert cli("ingest", sample_dir(), "--db", db).exit_code == 0
    with Store(db) as s:
        from commitsleuth.forensics.analyze import analyze

        before = analyze(s)
        locations = {f.location for f in before if f.location}
        assert locations
        add_pattern(r"hdfs://[^\s'\"]+")
        analyze(s)
        stored = s.query("SELECT location, summary FROM findings")[1]
    assert stored and all(loc is None or loc == MASK for loc, _ in stored)
    assert not [summ for _, summ in stored for loc in locations if loc in summ]


def test_actor_objects_pass_the_layer_and_stay_json(cli, tmp_path):
    """findings.actor_objects (migration 0018) is JSON: every string in it is redacted, its shape kept."""
    from commitsleuth.demo import sample_dir
    from commitsleuth.forensics.analyze import analyze

    db = tmp_path / "a.duckdb"
    assert cli("ingest", sample_dir(), "--db", db).exit_code == 0
    with Store(db) as s:
        analyze(s)
        before = [json.loads(v) for (v,) in s.query("SELECT actor_objects FROM findings")[1] if v]
        assert any(o["label"].startswith("attempt_201304111550_") for objs in before for o in objs)
        add_pattern(r"attempt_201304111550_[0-9_m]+")
        analyze(s)
        after = [json.loads(v) for (v,) in s.query("SELECT actor_objects FROM findings")[1] if v]
    assert len(after) == len(before) and [len(o) for o in after] == [len(o) for o in before]
    assert "attempt_201304111550_" not in json.dumps(after)
    assert any(o["label"] == MASK and o["kind"] == "hadoop_attempt" for objs in after for o in objs)


def test_detail_stays_valid_json_and_keeps_its_shape():
    detail = {"key": "spark.jdbc.url", "value": "jdbc:postgresql://db/x?user=a&password=PwJ\"son",
              "write": {"path": "s3a://k:Sec@b/o", "partition_columns": ["dt"]}, "tid": 4}
    table = pa.table({"detail": [json.dumps(detail)]})
    out = json.loads(redact_table(table).column("detail")[0].as_py())
    assert out == {"key": "spark.jdbc.url", "value": f"jdbc:postgresql://db/x?user=a&password={MASK}\"son",
                   "write": {"path": f"s3a://k:{MASK}@b/o", "partition_columns": ["dt"]}, "tid": 4}


def test_a_conf_pair_is_masked_by_its_key_and_ordinary_pairs_are_kept():
    assert redact_value({"key": "spark.hadoop.fs.s3a.secret.key", "value": "abc"})["value"] == MASK
    assert redact_value({"key": "spark.speculation", "value": "true"}) == {"key": "spark.speculation", "value": "true"}
    add_key_pattern("(?i)opaque")
    assert redact_value({"key": "spark.custom.opaque", "value": "xyz"})["value"] == MASK


# Positive samples of every pattern (the two sample files): the columnar trigger must find each,
# or the layer would store the secret.
def _all_positive_samples() -> list[str]:
    import test_redact_samples
    import test_redaction

    return [t for t, _ in test_redaction.POSITIVE] + [t for t, _ in test_redact_samples.POSITIVE]


def test_the_columnar_trigger_finds_every_text_a_pattern_changes():
    samples = _all_positive_samples()
    assert all(redact(s) != s for s in samples)
    hits = pc.match_substring_regex(pa.array(samples), TRIGGER_RE, ignore_case=True).to_pylist()
    assert [s for s, h in zip(samples, hits) if not h] == []


def test_user_patterns_have_their_own_trigger_and_are_applied():
    table = pa.table({"raw": ["nightly EMP-4242 load", "nothing here", "Ünïcode EMP-77"]})
    assert redact_table(table).column("raw").to_pylist() == table.column("raw").to_pylist()
    add_pattern(r"EMP-\d+")
    assert redact_table(table).column("raw").to_pylist() == [f"nightly {MASK} load", "nothing here",
                                                            f"Ünïcode {MASK}"]


def test_a_user_regex_re2_cannot_run_is_still_applied():
    add_pattern(r"(?<=id )\d{4}")  # look-behind: not RE2
    table = pa.table({"raw": ["user id 4242", "plain"]})
    assert redact_table(table).column("raw").to_pylist() == [f"user id {MASK}", "plain"]


def test_events_to_arrow_is_where_events_are_redacted():
    table = events_to_arrow([Event("load", path="s3a://a:PwX@b/t/dt=1", raw="x password=PwY",
                                   detail={"name": "Authorization: Bearer PwZ"})], 1)
    row = table.to_pylist()[0]
    assert "PwX" not in row["path"] and "PwY" not in row["raw"] and "PwZ" not in row["detail"]


def test_the_spool_is_scrubbed_in_place_at_the_same_length(tmp_path):
    """Lines Spark wrote with secrets it does not redact (a SQL execution's job group, a failure
    reason) are masked in place; the file keeps its length and offsets, every line stays JSON,
    and a line that Spark is still appending is not touched."""
    import orjson

    from commitsleuth.listener.tail import SpoolTail

    lines = [
        {"Event": "SparkListenerSQLExecutionStart", "executionId": 0, "jobGroupId": "nightly token=GroupTokX"},
        {"Event": "SparkListenerTaskEnd", "Task End Reason": {"Description": "open s3a://k:FailPwX@b/o"}},
        {"Event": "SparkListenerJobEnd", "Job ID": 0},
        {"Event": "SparkListenerStageCompleted", "Stage Info": {"Failure Reason": "Bearer Résumé\\x"}},
    ]
    spool = tmp_path / "app.inprogress"
    bad_utf8 = b'{"Event":"SparkListenerJobEnd","Reason":"token=BadUtf8X\xff"}\n'  # cannot keep its length
    body = b"".join(orjson.dumps(e) + b"\n" for e in lines) + bad_utf8
    partial = b'{"Event":"SparkListenerJobStart","Properties":{"password=PartialPw'
    spool.write_bytes(body + partial)
    tail = SpoolTail(spool)
    first_line, offset, block = tail.read()  # the complete lines as one block, the partial one left
    assert (first_line, offset, block) == (1, 0, body)
    assert tail.scrub(offset, block) == 4
    data = spool.read_bytes()
    assert len(data) == len(body + partial) and data.endswith(partial)
    assert b"GroupTokX" not in data and b"FailPwX" not in data and b"R\xc3\xa9sum" not in data
    assert b"BadUtf8X" not in data
    scrubbed = [orjson.loads(line) for line in data[:len(body)].splitlines()]
    assert scrubbed[0]["jobGroupId"] == "nightly token=*********"
    assert scrubbed[2] == lines[2]
    assert [e["Event"] for e in scrubbed] == [e["Event"] for e in lines] + ["commitsleuth.Redacted"]


def test_a_text_repeated_in_a_column_is_redacted_once_and_masked_in_every_row(monkeypatch):
    """The events of one line share its raw text (an environment's conf events): the patterns
    run once per distinct text, every row keeps its own masked copy, None and clean text too."""
    import commitsleuth.redact as layer

    texts = []

    def counted(text, **kw):
        texts.append(text)
        return redact(text, **kw)

    monkeypatch.setattr(layer, "redact", counted)
    env = "spark.hadoop.fs.s3a.secret.key=AbCd spark.speculation=true"
    table = pa.table({"raw": [env, "password=x1", env, None, "clean", env, "password=x1"]})
    assert redact_table(table).column("raw").to_pylist() == [
        f"spark.hadoop.fs.s3a.secret.key={MASK} spark.speculation=true", f"password={MASK}",
        f"spark.hadoop.fs.s3a.secret.key={MASK} spark.speculation=true", None, "clean",
        f"spark.hadoop.fs.s3a.secret.key={MASK} spark.speculation=true", f"password={MASK}"]
    assert sorted(texts) == sorted([env, "password=x1"])
