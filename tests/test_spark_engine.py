"""The Spark engine on local[2]: the same events as the local engine, Parquet the store loads,
and per-file idempotence."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from commitsleuth.ingest.parquet import attach_parquet
from commitsleuth.errors import InputError
from commitsleuth.ingest import ingest
from commitsleuth.model import EVENT_COLUMNS
from commitsleuth.ingest.spark import ingest_spark, units_of
from commitsleuth.store import Store

EVENT_FIELDS = ", ".join(f"e.{c}" for c in EVENT_COLUMNS if c not in ("event_id", "source_id"))
SOURCE_FIELDS = "uri, kind, format, fingerprint, size_bytes, bytes_read, lines, events, rejected, status, reason"


def _snapshot(store: Store) -> dict[str, Counter]:
    """Everything both engines must agree on, with store-local ids replaced by the source URI."""
    def rows(sql):
        return Counter(tuple(map(str, r)) for r in store.query(sql)[1])

    return {
        "events": rows(f"select s.uri, {EVENT_FIELDS} from events e join sources s using (source_id)"),
        "sources": rows(f"select {SOURCE_FIELDS} from sources"),
        "rejects": rows("select s.uri, r.reason, r.count, r.first_line, r.sample "
                        "from rejects r join sources s using (source_id)"),
    }


@pytest.fixture(scope="module")
def both_engines(spark, corpus, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("engines")
    with Store(tmp / "local.duckdb") as local:
        ingest(local, [str(corpus)])
        expected = _snapshot(local)
    report = ingest_spark([str(corpus)], str(tmp / "out"), spark=spark)
    with Store(tmp / "spark.duckdb") as s:
        attached = attach_parquet(s, tmp / "out")
        got = _snapshot(s)
    return expected, got, report, attached, tmp


def test_whole_corpus_gives_identical_events_through_both_engines(both_engines):
    expected, got, report, attached, _ = both_engines
    assert sum(expected["events"].values()) > 0
    assert got["events"] == expected["events"]
    assert got["sources"] == expected["sources"]
    assert got["rejects"] == expected["rejects"]
    assert attached.events == report.events == sum(expected["events"].values())


def test_parquet_is_partitioned_by_format_and_day(both_engines):
    *_, tmp = both_engines
    parts = {p.relative_to(tmp / "out" / "events").parts[:2] for p in (tmp / "out" / "events").rglob("*.parquet")}
    assert ("format=spark-eventlog", "day=2015-02-03") in parts
    assert all(f.startswith("format=") and d.startswith("day=") for f, d in parts)
    assert (tmp / "out" / "sources").is_dir()


def test_second_run_and_second_attach_add_nothing(both_engines, spark, corpus):
    expected, _, report, _, tmp = both_engines
    again = ingest_spark([str(corpus)], str(tmp / "out"), spark=spark)
    assert (again.sources, again.unchanged) == ([], len(report.sources))
    with Store(tmp / "spark.duckdb") as s:
        before = s.count("events")
        assert attach_parquet(s, tmp / "out").loaded == []
        assert s.count("events") == before


def test_a_grown_file_adds_only_its_new_events(spark, corpus, tmp_path):
    lines = (corpus / "spark-events" / "local-1422981780767").read_bytes().splitlines(keepends=True)
    log = tmp_path / "logs" / "local-1422981780767.inprogress"
    log.parent.mkdir()
    log.write_bytes(b"".join(lines[:30]))
    out = tmp_path / "out"
    ingest_spark([str(log.parent)], str(out), spark=spark)
    log.write_bytes(b"".join(lines))
    second = ingest_spark([str(log.parent)], str(out), spark=spark)
    assert second.sources[0]["first_line"] == 31
    with Store(tmp_path / "spark.duckdb") as s, Store(tmp_path / "local.duckdb") as local:
        attach_parquet(s, out)
        ingest(local, [str(log)])
        assert _snapshot(s)["events"] == _snapshot(local)["events"]
        assert s.count("sources") == 1


HS2 = "2018-09-28T10:15:0{s},870  INFO [HiveServer2-Background-Pool: Thread-529691] exec.Task: "
LOAD = HS2 + "Loading data to table db.t partition (dt=2018-09-{d}) from hdfs://nn/w/db.db/t/.hive-staging_1/-ext-10000"
TRACE = "java.io.IOException: boom\n\tat org.apache.hadoop.hive.ql.exec.Task.executeTask(Task.java:160)"


def test_an_unfinished_last_record_is_held_back_and_read_again_whole_once_it_grew(spark, tmp_path):
    """The last line has no newline yet (a writer is in the middle of it): both engines store
    what it says, keep the checkpoint before its record, and once the file grew replace that
    record's events by the finished record's, never both."""
    log = tmp_path / "logs" / "hiveserver2.log"
    log.parent.mkdir()
    cut = LOAD.format(s=2, d=28)
    first = LOAD.format(s=1, d=27) + "\n" + TRACE + "\n" + cut[:cut.index("dt=") + 9]
    grown = LOAD.format(s=1, d=27) + "\n" + TRACE + "\n" + LOAD.format(s=2, d=28) + "\n" + LOAD.format(s=3, d=29) + "\n"
    out = tmp_path / "out"
    with Store(tmp_path / "local.duckdb") as local, Store(tmp_path / "spark.duckdb") as s:
        for text in (first, grown):
            log.write_text(text)
            ingest(local, [str(log)])
            ingest_spark([str(log.parent)], str(out), spark=spark)
            expected = _snapshot(local)
            if text is first:
                assert [r[5:7] for r in expected["sources"]] == [(str(first.rindex("\n") + 1), "3")]
            attach_parquet(s, out)
            assert _snapshot(s) == expected
        tables = s.query("select table_name, partition_spec from events order by line_no")[1]
    assert [t[1] for t in tables] == ["dt=2018-09-27", "dt=2018-09-28", "dt=2018-09-29"]


def test_missing_path_is_an_input_error(spark, tmp_path):
    with pytest.raises(InputError, match="does not exist|PATH_NOT_FOUND"):
        ingest_spark([str(tmp_path / "nope")], str(tmp_path / "out"), spark=spark)


def test_rolling_dir_is_one_unit_with_parts_in_order():
    d = "hdfs://nn/logs/eventlog_v2_app-1"
    units = units_of([(f"{d}/events_10_app-1.zstd", 5, 2), (f"{d}/appstatus_app-1", 0, 3),
                      (f"{d}/events_2_app-1.zstd", 7, 1), ("hdfs://nn/logs/app-2.lz4", 9, 1)])
    assert [(u.uri, [f[0].rsplit("/", 1)[1] for f in u.files], u.size) for u in units] == [
        ("hdfs://nn/logs/app-2.lz4", ["app-2.lz4"], 9),
        (d, ["appstatus_app-1", "events_2_app-1.zstd", "events_10_app-1.zstd"], 12),
    ]


def test_cli_ingest_engine_spark_loads_the_store(cli, spark, corpus, tmp_path):
    db, out = tmp_path / "s.duckdb", tmp_path / "out"
    r = cli("ingest", "--engine", "spark", "--out", out, "--db", db, corpus / "spark-events" / "codecs")
    assert r.exit_code == 0, r.err
    assert r.out.splitlines() == [
        f"spark: parsed 4 files (4 ok): 52 events, 0 rejected lines -> {out}",
        f"attached 4 sources (52 events) to {db}; 0 already there",
    ]
    r = cli("attach-parquet", out, "--db", db)
    assert r.out == f"attached 0 sources (0 events) to {db}; 4 already there\n"
    r = cli("attach-parquet", tmp_path, "--db", db)
    assert r.exit_code == 2 and r.err.startswith("Error: no Spark engine output in ")


def test_spark_events_the_store_holds_are_not_attached_again(cli, spark, corpus, tmp_path):
    """One Spark event, one row (docs/schema.md) also through the Spark engine: a log whose
    events the store holds already (here another copy, its application name redacted) adds
    none, and two such logs in one run add their events once."""
    src = corpus / "spark-events" / "local-1422981780767"
    logs, db, out = tmp_path / "logs", tmp_path / "s.duckdb", tmp_path / "out"
    logs.mkdir()
    text = src.read_text()
    assert text.count('"App Name":"Spark shell"') == 1
    (logs / src.name).write_text(text.replace('"App Name":"Spark shell"', '"App Name":"*********(redacted)"'))
    assert cli("ingest", "--db", db, src).exit_code == 0
    r = cli("ingest", "--engine", "spark", "--out", out, "--db", db, logs)
    assert r.out.splitlines() == [
        f"spark: parsed 1 file (1 ok): 80 events, 0 rejected lines -> {out}",
        f"attached 1 source (0 events) to {db}; 0 already there; 80 events already in the store",
    ]
    with Store(db, read_only=True) as s:
        assert s.query("select events, count(*) over () from sources order by source_id")[1] == [(80, 2), (0, 2)]
        assert s.count("events") == 80
    (logs / "copy").write_bytes(src.read_bytes())
    fresh = tmp_path / "fresh.duckdb"
    r = cli("ingest", "--engine", "spark", "--out", tmp_path / "out2", "--db", fresh, logs)
    assert r.out.splitlines()[1] == f"attached 2 sources (80 events) to {fresh}; 0 already there; 80 events already in the store"


def test_copies_under_other_names_are_loaded_once_like_the_local_engine(spark, corpus, tmp_path):
    src = next((corpus / "spark-events" / "codecs").glob("*.zstd"))
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("a.zstd", "b.zstd"):
        (logs / name).write_bytes(src.read_bytes())
    ingest_spark([str(logs)], str(tmp_path / "out"), spark=spark)
    with Store(tmp_path / "spark.duckdb") as s, Store(tmp_path / "local.duckdb") as local:
        attached = attach_parquet(s, tmp_path / "out")
        ingest(local, [str(logs)])
        assert (len(attached.loaded), attached.already) == (1, 1)
        assert _snapshot(s) == _snapshot(local)


def test_output_of_an_older_version_is_refused_whole_and_says_how_to_rewrite_it(both_engines, tmp_path):
    """Engine output from before ``event_key`` existed: loaded with nulls, its Spark events
    would double the store's, so none of it is loaded."""
    *_, tmp = both_engines
    old = tmp_path / "old"
    shutil.copytree(tmp / "out", old)
    con = duckdb.connect()
    rewritten = sorted((old / "events").rglob("*.parquet"))[-1]
    con.execute(f"COPY (SELECT * EXCLUDE (event_key) FROM read_parquet('{rewritten}')) "
                f"TO '{rewritten}.new' (FORMAT parquet)")
    Path(f"{rewritten}.new").replace(rewritten)
    with Store(tmp_path / "store.duckdb") as s:
        with pytest.raises(InputError, match=rf"^{re.escape(str(rewritten))} was written by an older "
                                             r"commitsleuth \(no column event_key\): run `commitsleuth "
                                             r"ingest --engine spark`"):
            attach_parquet(s, old)
        assert (s.count("sources"), s.count("events")) == (0, 0)
