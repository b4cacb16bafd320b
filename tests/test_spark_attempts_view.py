"""The join keys of issue 12 as store views (migration 0018): job -> SQL execution, stage -> job,
task attempt -> stage, so each Spark attempt knows its write; the partitions it wrote from files
tied to it (listings, storage logs), else its write's static partition, else 'partition not known'.
Each rule has its decoy, a row that must not be tied."""

from __future__ import annotations

from commitsleuth.store import Store

from test_detector_cases import case_event

U = "11111111-2222-3333-4444-555555555555"


def _attempt(stage, index, tid, *, attempt=0, launch="10:00:01", end="10:00:05", app="app-1", status="success"):
    h, m, s = (int(x) for x in launch.split(":"))
    launch_ms = 1795219200000 + ((h * 60 + m) * 60 + s) * 1000  # 2026-11-21 00:00:00 UTC
    return {"kind": "attempt_end", "ts": f"2026-11-21 {end}", "app_id": app, "stage_id": stage, "stage_attempt": 0,
            "task_id": f"{stage}.{index}", "attempt_id": f"task {index}.{attempt} in stage {stage}.0 (TID {tid})",
            "attempt_no": attempt, "speculative": attempt > 0, "executor_id": "1", "host": "h1", "status": status,
            "detail": {"tid": tid, "reason": "Success", "launch_time": launch_ms}}


def _write(query_id, location, *, spec=None, mode="Append"):
    return {"kind": "query_start", "ts": "2026-11-21 10:00:00", "app_id": "app-1", "query_id": query_id,
            "location": location, "partition_spec": spec,
            "detail": {"write": {"command": "InsertIntoHadoopFsRelationCommand", "format": "Parquet", "mode": mode}}}


EVENTS = [
    _write("1", "file:///w/t"),
    _write("2", "file:///w/s", spec="p=1", mode="Overwrite"),
    {"kind": "job_start", "ts": "2026-11-21 10:00:00", "app_id": "app-1", "job_id": "0", "query_id": "1", "detail": {"stages": [0]}},
    {"kind": "job_start", "ts": "2026-11-21 10:00:00", "app_id": "app-1", "job_id": "1", "query_id": "2", "detail": {"stages": [1]}},
    _attempt(0, 0, 0),
    _attempt(0, 0, 0),  # the same attempt from live capture and from the event log: one row
    _attempt(0, 1, 1),
    _attempt(1, 0, 2),
    _attempt(3, 0, 3),  # a stage no job lists
    # a live listing of write 1 (dynamic partition p=5)
    {"kind": "file", "ts": "2026-11-21 10:00:04", "app_id": "app-1", "query_id": "1", "path": f"file:///w/t/p=5/part-00000-{U}.c000.snappy.parquet", "size": 5},
    # the HDFS audit's caller context names stage 0.0 TID 1 (no partition index there)
    {"kind": "file_create", "ts": "2026-11-21 10:00:04", "app_id": "app-1", "stage_id": 0, "stage_attempt": 0,
     "task_id": "TID 1", "attempt_id": "task attempt 0 in stage 0.0 (TID 1)", "path": "file:///w/t/p=6/part-00001-x",
     "detail": {"storage": "hdfs", "user": "spark"}},
    # decoys: a TID no attempt has; the same TID in another application
    {"kind": "file_create", "ts": "2026-11-21 10:00:04", "app_id": "app-1", "stage_id": 0, "stage_attempt": 0,
     "task_id": "TID 9", "attempt_id": "task attempt 0 in stage 0.0 (TID 9)", "path": "file:///w/t/p=7/part-00009-x",
     "detail": {"storage": "hdfs", "user": "spark"}},
    {"kind": "file_create", "ts": "2026-11-21 10:00:04", "app_id": "app-9", "stage_id": 0, "stage_attempt": 0,
     "task_id": "TID 1", "attempt_id": "task attempt 0 in stage 0.0 (TID 1)", "path": "file:///w/t/p=8/part-00001-y",
     "detail": {"storage": "hdfs", "user": "spark"}},
    # a MapReduce attempt's dir names its attempt id; a dir of an attempt no log names stays untied
    {"kind": "attempt_start", "ts": "2015-10-18 18:01:00", "attempt_id": "attempt_1445144423722_0020_m_000000_0"},
    {"kind": "file", "ts": "2015-10-18 18:01:05", "path": "hdfs://nn/out/_temporary/1/_temporary/attempt_1445144423722_0020_m_000000_0/part-m-00000", "size": 5},
    {"kind": "file", "ts": "2015-10-18 18:01:05", "path": "hdfs://nn/out/_temporary/1/_temporary/attempt_1445144423722_0020_m_000001_0/part-m-00001", "size": 5},
]


def _store(tmp_path):
    store = Store(tmp_path / "v.duckdb")
    store.write_events([case_event(e) for e in EVENTS])
    return store


def test_each_spark_attempt_knows_its_write_and_what_it_wrote(tmp_path):
    with _store(tmp_path) as store:
        rows = store.con.execute("""
            SELECT label, job_id, execution_id, write_command, write_location, write_format, write_mode,
                   stage_id, task_index, attempt_no, tid, partitions, partitions_from, files
            FROM spark_attempts ORDER BY tid""").fetchall()
    w = ("InsertIntoHadoopFsRelationCommand",)
    assert rows == [
        ("task 0.0 in stage 0.0 (TID 0)", "0", "1", *w, "file:///w/t", "Parquet", "Append", 0, 0, 0, 0,
         "p=5", "files", [f"part-00000-{U}.c000.snappy.parquet"]),
        ("task 1.0 in stage 0.0 (TID 1)", "0", "1", *w, "file:///w/t", "Parquet", "Append", 0, 1, 0, 1,
         "p=6", "storage", ["part-00001-x"]),
        ("task 0.0 in stage 1.0 (TID 2)", "1", "2", *w, "file:///w/s", "Parquet", "Overwrite", 1, 0, 0, 2,
         "p=1", "plan", None),
        ("task 0.0 in stage 3.0 (TID 3)", None, None, None, None, None, None, 3, 0, 0, 3,
         "partition not known", None, None),
    ]


def test_file_ties_name_their_rule_and_leave_the_decoys(tmp_path):
    with _store(tmp_path) as store:
        rows = store.con.execute("""
            SELECT e.path, f.rule, f.how, f.kind, f.label, f.candidates
            FROM file_attempts f JOIN events e USING (event_id) ORDER BY e.path""").fetchall()
    assert rows == [
        ("file:///w/t/p=5/part-00000-" + U + ".c000.snappy.parquet", "spark_part", "listing", "spark_attempt",
         "task 0.0 in stage 0.0 (TID 0)", 1),
        ("file:///w/t/p=6/part-00001-x", "caller_context", "named", "spark_attempt", "task 1.0 in stage 0.0 (TID 1)", 1),
        ("hdfs://nn/out/_temporary/1/_temporary/attempt_1445144423722_0020_m_000000_0/part-m-00000", "hadoop_attempt",
         "named", "hadoop_attempt", "attempt_1445144423722_0020_m_000000_0", 1),
    ]


def test_a_few_files_get_the_ties_the_view_gives(tmp_path):
    """Timelines tie a partition's few files through the view's own text over those files only."""
    from commitsleuth.forensics.file_attempts import attempts_of_files

    with _store(tmp_path) as store:
        files = [r[0] for r in store.con.execute(
            "SELECT event_id FROM events WHERE kind IN ('file', 'file_create') ORDER BY event_id").fetchall()]
        whole = {e: (lb, ae) for e, lb, ae in store.con.execute(
            "SELECT event_id, label, attempt_event FROM file_attempts "
            "WHERE candidates = 1 AND kind = 'spark_attempt'").fetchall()}
        assert len(whole) == 2
        assert attempts_of_files(store.con, files) == whole
        one = min(whole)
        assert attempts_of_files(store.con, [one]) == {one: whole[one]}


def test_a_few_files_get_the_ties_their_write_jobs_files_give(tmp_path):
    """A file of write U that names no application, in a location no execution writes, is tied
    through another file of U that a listing tagged with its execution: a timeline of the first
    file's partition alone must tie it as the view does."""
    from commitsleuth.forensics.file_attempts import attempts_of_files

    alone = {"kind": "file", "ts": "2026-11-21 10:00:04", "path": f"file:///elsewhere/p=9/part-00001-{U}.c000.snappy.parquet",
             "size": 5}
    with Store(tmp_path / "v.duckdb") as store:
        store.write_events([case_event(e) for e in EVENTS + [alone]])
        (file,) = store.con.execute("SELECT event_id FROM events WHERE path LIKE 'file:///elsewhere/%'").fetchone()
        whole = store.con.execute("SELECT label, attempt_event FROM file_attempts WHERE event_id = ? "
                                  "AND candidates = 1 AND kind = 'spark_attempt'", [file]).fetchall()
        assert [label for label, _ in whole] == ["task 1.0 in stage 0.0 (TID 1)"]
        assert attempts_of_files(store.con, [file]) == {file: whole[0]}
