"""One application is one source with one app id, whatever layout its event log has, and a log
without its application end says so (issue 12, item 6).

The Databricks fixtures are BUILT here from a real corpus log: ``spark-events/app-20161116163331-0000``
(Apache Spark's test resources, see tests/corpus/spark-events.NOTICE) split at line boundaries into
two dated gzip parts and a current ``eventlog``, named as Databricks names them (``eventlog`` plus
``eventlog-YYYY-MM-DD--HH-MM.gz``, the pattern NVIDIA spark-rapids' tools match, PR 2732). The
logs cut before their ``SparkListenerApplicationEnd`` are corpus logs with their last lines
dropped; the counts of attempts left open were read off the corpus lines.
"""

from __future__ import annotations

import gzip
import io
import json

import pytest
import zstandard

from commitsleuth.ingest import ingest
from commitsleuth.ingest.spark import units_of
from commitsleuth.store import Store

EVENTS = "spark-events"
APP = "app-20161116163331-0000"
# 68 lines: ApplicationStart at line 4, 24 TaskStarts (TIDs 0-23), ApplicationEnd at line 68.
DATED = {"eventlog-2016-11-16--22-00.gz": (0, 14), "eventlog-2016-11-16--23-00.gz": (14, 41)}
SHAPE = "select kind, line_no, task_id, attempt_id, status, app_id from events order by event_id"


def _lines(corpus, name=APP) -> list[bytes]:
    return (corpus / EVENTS / name).read_bytes().splitlines(keepends=True)


def _databricks_dir(corpus, root, current_to: int = 68):
    """The corpus log as Databricks rolls it: lines 1-14 and 15-41 in dated gzip parts, the
    rest (up to ``current_to``) in ``eventlog``."""
    lines = _lines(corpus)
    d = root / "0522-101112-abcd123_10_0_0_1" / "1234567890123456789"
    d.mkdir(parents=True)
    for name, (a, b) in DATED.items():
        (d / name).write_bytes(gzip.compress(b"".join(lines[a:b]), mtime=0))
    (d / "eventlog").write_bytes(b"".join(lines[41:current_to]))
    return d


def _reason(store, uri_like) -> list[tuple]:
    return store.query("select uri, status, reason from sources where uri like ?", [f"%{uri_like}"])[1]


def test_databricks_rolled_log_is_one_application_read_in_order(corpus, tmp_path):
    d = _databricks_dir(corpus, tmp_path / "cluster-logs")
    # listed by name, `eventlog` comes first; it holds the application's last events
    assert sorted(p.name for p in d.iterdir())[0] == "eventlog"
    with Store(tmp_path / "db.duckdb") as store:
        report = ingest(store, [str(tmp_path / "cluster-logs")])
        assert [(r.uri, r.status, r.reason) for r in report.results] == [(str(d.resolve()), "ok", None)]
        assert store.query("select count(*) from sources")[1] == [(1,)]
        rolled = store.query(SHAPE)[1]
    with Store(tmp_path / "whole.duckdb") as whole:
        ingest(whole, [str(corpus / EVENTS / APP)])
        single = whole.query(SHAPE)[1]
    # the same events in the same order, line numbers counted through the parts as one stream
    assert rolled == single
    assert {r[5] for r in rolled} == {APP}
    kinds = [r[0] for r in rolled]
    assert kinds[-1] == "app_end" and kinds.count("attempt_end") == 24
    # the events `eventlog` holds (task ends, the job end, the application end) carry the app id
    assert [r[1] for r in rolled if r[0] in ("job_end", "app_end")] == [64, 68]


def test_databricks_current_file_named_alone_reads_its_whole_directory(corpus, tmp_path):
    d = _databricks_dir(corpus, tmp_path)
    with Store(tmp_path / "db.duckdb") as store:
        (r,) = ingest(store, [str(d / "eventlog")]).results
        assert (r.uri, r.status, r.lines) == (str(d.resolve()), "ok", 68)
        assert store.query("select count(*) from events where app_id is distinct from ?", [APP])[1] == [(0,)]


def test_databricks_files_listed_by_the_spark_engine_are_one_unit():
    d = "hdfs:///cluster-logs/c1/eventlog/c1_10_0_0_1/123"
    listing = [(f"{d}/eventlog", 30, 3), (f"{d}/eventlog-2016-11-16--23-00.gz", 20, 2),
               (f"{d}/eventlog-2016-11-16--22-00.gz", 10, 1), ("hdfs:///other/eventlog", 5, 1)]
    units = units_of(listing)
    assert [[f[0].rsplit("/", 1)[1] for f in u.files] for u in units] == [
        ["eventlog-2016-11-16--22-00.gz", "eventlog-2016-11-16--23-00.gz", "eventlog"], ["eventlog"]]


def test_databricks_log_cut_before_its_end_says_so(corpus, tmp_path):
    # up to line 58: TIDs 0, 4, 8 and 12 started and never ended
    d = _databricks_dir(corpus, tmp_path, current_to=58)
    with Store(tmp_path / "db.duckdb") as store:
        (r,) = ingest(store, [str(d)]).results
        assert (r.status, r.reason) == ("ok", "application did not end (4 attempts never finished)")
        assert _reason(store, d.name) == [(str(d.resolve()), "ok", r.reason)]
        assert store.query("select count(*) from events where app_id is distinct from ?", [APP])[1] == [(0,)]


def test_plain_log_cut_before_its_end_says_so(corpus, tmp_path):
    # local-1422981780767 to line 40: one TaskStart (TID 10) has no TaskEnd yet
    f = tmp_path / "local-1422981780767"
    f.write_bytes(b"".join(_lines(corpus, "local-1422981780767")[:40]))
    with Store(tmp_path / "db.duckdb") as store:
        (r,) = ingest(store, [str(f)]).results
    assert (r.status, r.reason) == ("ok", "application did not end (1 attempt never finished)")


def test_in_progress_log_says_both(corpus, tmp_path):
    f = tmp_path / "local-1422981780767.inprogress"
    f.write_bytes(b"".join(_lines(corpus, "local-1422981780767")[:40]))
    with Store(tmp_path / "db.duckdb") as store:
        (r,) = ingest(store, [str(f)]).results
        assert (r.status, r.reason) == ("ok", "application did not end (1 attempt never finished); application "
                                        "still running (event log in progress); ingest again to read what it adds")
        # the rest arrives and Spark renames the file: the note goes, computed over every stored event
        f.write_bytes(b"".join(_lines(corpus, "local-1422981780767")))
        (r2,) = ingest(store, [str(f.rename(tmp_path / "local-1422981780767"))]).results
        assert (r2.status, r2.source_id, r2.reason) == ("ok", r.source_id, None)


def test_compressed_log_cut_before_its_end_says_so(corpus, tmp_path):
    src = corpus / EVENTS / "codecs" / "local-1795296610133.zstd"
    with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(src.read_bytes()), read_across_frames=True) as z:
        lines = z.read().splitlines(keepends=True)
    assert json.loads(lines[10])["Event"] == "SparkListenerTaskStart" and len(lines) == 17
    cut = tmp_path / src.name
    cut.write_bytes(zstandard.ZstdCompressor().compress(b"".join(lines[:11])))  # up to the TaskStart
    with Store(tmp_path / "db.duckdb") as store:
        (r,) = ingest(store, [str(cut)]).results
    assert (r.status, r.lines, r.reason) == ("ok", 11, "application did not end (1 attempt never finished)")


def test_rolling_dir_cut_before_its_end_says_so(corpus, tmp_path):
    src = corpus / EVENTS / "eventlog_v2_local-1766844910796"
    lines = _lines(corpus, f"{src.name}/events_1_local-1766844910796")
    d = tmp_path / src.name
    d.mkdir()
    (d / "events_1_local-1766844910796").write_bytes(b"".join(lines[:8]))
    (d / "events_2_local-1766844910796").write_bytes(b"".join(lines[8:11]))  # two TaskStarts, one TaskEnd
    (d / "appstatus_local-1766844910796").write_bytes(b"")
    with Store(tmp_path / "db.duckdb") as store:
        (r,) = ingest(store, [str(d)]).results
    assert (r.status, r.reason) == ("ok", "application did not end (1 attempt never finished)")


@pytest.mark.parametrize("name", ["app-20161116163331-0000", "local-1422981780767"])
def test_a_log_that_ended_has_no_note(corpus, tmp_path, name):
    with Store(tmp_path / "db.duckdb") as store:
        (r,) = ingest(store, [str(corpus / EVENTS / name)]).results
    assert (r.status, r.reason) == ("ok", None)


def test_spark_engine_unit_of_a_cut_databricks_log_reads_in_order_and_says_so(corpus, tmp_path):
    """The executor side of ``ingest --engine spark`` (parse_unit, no Spark session needed):
    the unit's parts arrive in reading order and its source row carries the note."""
    from commitsleuth.ingest.spark import parse_unit

    d = _databricks_dir(corpus, tmp_path, current_to=58)
    order = ["eventlog-2016-11-16--22-00.gz", "eventlog-2016-11-16--23-00.gz", "eventlog"]
    files = [(f"hdfs:///logs/x/{n}", (d / n).read_bytes()) for n in order]
    batches = list(parse_unit("hdfs:///logs/x", files, "run1", None, 0, sum(len(b) for _, b in files), 0))
    meta = [json.loads(v) for b in batches for k, v in zip(b.column("rec").to_pylist(),
                                                           b.column("payload").to_pylist()) if k == "source"]
    assert [(m["status"], m["lines"], m["reason"]) for m in meta] == [
        ("ok", 58, "application did not end (4 attempts never finished)")]
    apps = {a for b in batches for k, a in zip(b.column("rec").to_pylist(), b.column("app_id").to_pylist())
            if k == "event"}
    assert apps == {APP}


def test_yarn_attempt_suffix_in_the_name_is_not_another_application(corpus, tmp_path):
    """On YARN Spark names the log ``<appId>_<attempt>``; the environment update before
    ApplicationStart gets the application's id, not the file name's."""
    app = "application_1628109047826_1317105"
    f = tmp_path / f"{app}_1"
    f.write_bytes((corpus / EVENTS / app).read_bytes())
    d = tmp_path / f"eventlog_v2_{app}_2"
    d.mkdir()
    (d / f"events_1_{app}_2").write_bytes((corpus / EVENTS / app).read_bytes().replace(b'"Spark shell"', b'"two"'))
    for path in (f, d):
        with Store(tmp_path / f"{path.name}.duckdb") as store:
            ingest(store, [str(path)])
            assert store.query("select distinct app_id from events")[1] == [(app,)]
            assert store.query("select count(*) from events where kind = 'conf' and app_id = ?", [app])[1][0][0] > 0


def test_databricks_log_that_rolls_and_ends_is_read_once(corpus, tmp_path):
    """Databricks rolls ``eventlog`` into a new dated part and starts a new ``eventlog``: the
    directory read again holds every event once and the note is gone."""
    d = _databricks_dir(corpus, tmp_path, current_to=58)
    lines = _lines(corpus)
    with Store(tmp_path / "db.duckdb") as store:
        (r,) = ingest(store, [str(d)]).results
        assert r.reason == "application did not end (4 attempts never finished)"
        (d / "eventlog-2016-11-17--00-00.gz").write_bytes(gzip.compress((d / "eventlog").read_bytes(), mtime=0))
        (d / "eventlog").write_bytes(b"".join(lines[58:]))
        (r2,) = ingest(store, [str(d)]).results
        assert (r2.uri, r2.status, r2.reason) == (str(d.resolve()), "ok", None)
        # the rolled part is gzipped, so the directory's bytes shrank: read again whole as a new
        # version, the old one's events retired to superseded_events (docs/schema.md)
        assert store.query("select source_id, status from sources order by 1")[1] == [
            (r.source_id, "superseded"), (r2.source_id, "ok")]
        rolled = store.query(SHAPE)[1]
    with Store(tmp_path / "whole.duckdb") as whole:
        ingest(whole, [str(corpus / EVENTS / APP)])
        assert rolled == whole.query(SHAPE)[1]


def test_grown_in_progress_log_counts_the_attempts_its_earlier_read_started(corpus, tmp_path):
    """Lines 1-50 leave TIDs 16-22 open (7); by line 55 TIDs 17, 18, 20, 21 ended and 23 started:
    4 open, three of them started in the first read, which the second read does not see again."""
    lines = _lines(corpus, "local-1422981780767")
    f = tmp_path / "local-1422981780767.inprogress"
    f.write_bytes(b"".join(lines[:50]))
    with Store(tmp_path / "db.duckdb") as store:
        (r,) = ingest(store, [str(f)]).results
        assert r.reason.startswith("application did not end (7 attempts never finished); ")
        f.write_bytes(b"".join(lines[:55]))
        (r2,) = ingest(store, [str(f)]).results
        assert (r2.source_id, r2.events) == (r.source_id, 5)  # continued, not read again
        assert r2.reason.startswith("application did not end (4 attempts never finished); ")


def test_databricks_dated_parts_without_eventlog_are_one_application(corpus, tmp_path):
    d = _databricks_dir(corpus, tmp_path)
    (d / "eventlog").unlink()  # only the rolled parts were kept: lines 1-41, TIDs 0, 4, 6, 8, 12 open
    with Store(tmp_path / "db.duckdb") as store:
        (r,) = ingest(store, [str(d)]).results
        assert (r.uri, r.lines, r.reason) == (str(d.resolve()), 41, "application did not end (5 attempts never finished)")
        assert store.query("select distinct app_id from events")[1] == [(APP,)]
