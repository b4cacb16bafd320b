"""The fact model of migration 0040 (docs/schema.md, "Fact model"): partitions, file_lineage and
attempts, built from every source and queried as the plain duckdb shell would."""

from __future__ import annotations

from pathlib import Path

from commitsleuth.store import Store

from test_detector_cases import load_case

T = "\t"
HMS = ("2024-05-19T01:59:00,001  INFO [pool-7-thread-9] HiveMetaStore.audit: ugi=etl (auth:SIMPLE)" + T
       + "ip=10.0.0.20" + T + "cmd=source:10.0.0.20 {cmd}" + T)
AUDIT = ("2024-05-19 {t} INFO FSNamesystem.audit: allowed=true" + T + "ugi={ugi}" + T + "ip=/{ip}" + T
         + "cmd={cmd}" + T + "src={src}" + T + "dst={dst}" + T + "perm=null" + T + "proto=rpc" + T + "callerContext={ctx}")
CTX = "SPARK_TASK_application_1716000000000_0042_1_JId_0_SId_1_0_TId_{tid}_{n}"


def _store(tmp_path: Path, case: dict) -> Store:
    store = Store(tmp_path / "s.duckdb")
    load_case(store, tmp_path / "logs", case)
    return store


def test_a_values_only_registration_takes_the_tables_partition_columns(tmp_path):
    """[2024-05-20] of sales.orders is ds=2024-05-20 although no source spells that partition
    with its key: a file of ds=2024-05-19 names the table's partition column."""
    case = {"files": {
        "metastore.log": HMS.format(cmd="get_partition_with_auth : tbl=hive.sales.orders[2024-05-20]") + "\n"
                         + HMS.format(cmd="add_partition : tbl=hive.sales.orders") + "\n",
        "hdfs-audit.log": AUDIT.format(t="03:00:01,000", ugi="etl (auth:SIMPLE)", ip="10.0.0.21", cmd="create",
                                       src="/warehouse/sales.db/orders/ds=2024-05-19/000000_0", dst="null",
                                       ctx=CTX.format(tid=3, n=0)) + "\n"}}
    with _store(tmp_path, case) as store:
        rows = store.con.execute("SELECT partition_spec, sources, registered_at IS NOT NULL, files FROM partitions "
                                 "WHERE table_name = 'sales.orders' ORDER BY 1").fetchall()
    assert rows == [("ds=2024-05-19", ["files"], False, 1), ("ds=2024-05-20", ["metastore"], True, None)]


def test_one_attempt_from_the_event_log_and_a_caller_context(tmp_path):
    """TID 58 of one application, named by its TaskEnd and by a storage record's caller context,
    is one attempt with its scheduler's host; TID 58 of another application is another."""
    case = {
        "files": {"hdfs-audit.log": AUDIT.format(
            t="03:00:40,000", ugi="etl (auth:SIMPLE)", ip="10.0.0.99", cmd="create",
            src="/warehouse/sales.db/orders/ds=2024-05-19/000007_1", dst="null", ctx=CTX.format(tid=58, n=1)) + "\n"},
        "events": [
            {"kind": "attempt_end", "ts": "2024-05-19 03:00:50", "app_id": "application_1716000000000_0042",
             "stage_id": 1, "stage_attempt": 0, "task_id": "1.7", "attempt_id": "task 7.1 in stage 1.0 (TID 58)",
             "attempt_no": 1, "speculative": True, "host": "10.0.0.22", "status": "killed",
             "detail": {"tid": 58, "reason": "TaskKilled"}},
            {"kind": "attempt_start", "ts": "2024-05-19 03:00:30", "app_id": "application_1716000000000_0043",
             "stage_id": 1, "stage_attempt": 0, "task_id": "1.7", "attempt_id": "task 7.1 in stage 1.0 (TID 58)",
             "attempt_no": 1, "host": "10.0.0.23", "detail": {"tid": 58}},
        ]}
    with _store(tmp_path, case) as store:
        rows = store.con.execute("SELECT attempt_key, label, host, speculative, end_status, sources, events "
                                 "FROM attempts ORDER BY attempt_key").fetchall()
    assert rows == [
        ("application_1716000000000_0042 TID 58", "task 7.1 in stage 1.0 (TID 58)", "10.0.0.22", True, "killed",
         ["caller context", "scheduler"], 2),
        ("application_1716000000000_0043 TID 58", "task 7.1 in stage 1.0 (TID 58)", "10.0.0.23", None, "no end seen",
         ["scheduler"], 1),
    ]


def test_file_lineage_says_how_a_file_arrived_who_wrote_it_and_who_removed_it(tmp_path):
    staging = "/warehouse/sales.db/orders/.hive-staging_hive_2024-05-19_02-00-00_1/-ext-10000/000000_0"
    q1, q2 = "hive_queryId_hive_20240519020000_1111", "hive_queryId_hive_20240519022000_2222"
    case = {"files": {"hdfs-audit.log": "\n".join([
        AUDIT.format(t="02:00:05,000", ugi="etl (auth:SIMPLE)", ip="10.20.9.10", cmd="rename", src=staging,
                     dst="/warehouse/sales.db/orders/ds=2024-05-19/000000_0", ctx=q1),
        AUDIT.format(t="02:00:06,000", ugi="etl (auth:SIMPLE)", ip="10.20.9.10", cmd="create",
                     src="/warehouse/sales.db/orders/ds=2024-05-19/_SUCCESS", dst="null", ctx=q1),
        AUDIT.format(t="02:20:00,000", ugi="jdoe (auth:SIMPLE)", ip="10.20.9.44", cmd="rename (options=[TO_TRASH])",
                     src="/warehouse/sales.db/orders/ds=2024-05-19",
                     dst="/user/jdoe/.Trash/Current/warehouse/sales.db/orders/ds=2024-05-19", ctx=q2),
        AUDIT.format(t="02:30:00,000", ugi="etl (auth:SIMPLE)", ip="10.20.9.10", cmd="create",
                     src="/warehouse/sales.db/orders/ds=2024-05-20/000000_0", dst="null", ctx=q1)]) + "\n"}}
    with _store(tmp_path, case) as store:
        rows = store.con.execute(
            "SELECT partition_spec, file_name, arrived_how, query_id, user, removed_how, removed_user, trash_path, live "
            "FROM file_lineage ORDER BY created_at").fetchall()
    assert rows == [  # the _SUCCESS marker holds no rows: not a data file
        ("ds=2024-05-19", "000000_0", "Hive move out of its staging directory", "hive_20240519020000_1111", "etl",
         "trashed", "jdoe", "/user/jdoe/.Trash/Current/warehouse/sales.db/orders/ds=2024-05-19", False),
        ("ds=2024-05-20", "000000_0", "direct create", "hive_20240519020000_1111", "etl", None, None, None, True),
    ]
