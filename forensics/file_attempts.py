"""Which Spark task attempt wrote a file that names its task and attempt (``000001_1``).

A listing of a Spark application's output (live inventory, ``audit``) holds files; a file whose
name carries a task index and an attempt number (Hive-style ``NNNNNN_A``) is tied to the Spark
attempt of the same application with that partition index and attempt number that was running
when the file was written (its modification time, to the second, within the attempt's launch and
end; the latest such attempt when a stage was retried). One rule for CS101 and the timelines.
"""

from __future__ import annotations


def file_attempts_sql(files: str) -> str:
    """CTEs ``spark_attempts`` and ``file_attempts`` (event_id -> attempt) over the relation
    ``files`` (columns event_id, app_id, ts, file_task, file_attempt, file_name)."""
    return f"""
spark_attempts AS (
    SELECT a.event_id, a.app_id, a.attempt_id, a.attempt_no, a.stage_id, a.stage_attempt,
           TRY_CAST(a.detail->>'tid' AS BIGINT) AS tid, a.executor_id, a.host, a.speculative,
           a.status, a.detail->>'reason' AS reason,
           TRY_CAST(split_part(a.task_id, '.', 2) AS INTEGER) AS task_index,
           coalesce(epoch_ms(TRY_CAST(a.detail->>'launch_time' AS BIGINT)), a.ts) AS t_launch, a.ts AS t_end
    FROM events a SEMI JOIN (SELECT DISTINCT app_id FROM {files}) f ON f.app_id = a.app_id
    WHERE a.kind = 'attempt_end' AND a.stage_id IS NOT NULL
),
file_attempts AS (
    SELECT r.event_id, a.attempt_id, a.event_id AS attempt_event,
           {{'kind': 'spark_attempt', 'label': a.attempt_id, 'app_id': a.app_id, 'stage': a.stage_id,
            'stage_attempt': a.stage_attempt, 'task_index': a.task_index, 'attempt': a.attempt_no,
            'tid': a.tid, 'executor': a.executor_id, 'host': a.host, 'speculative': a.speculative,
            'status': a.status, 'end_reason': a.reason, 'file': r.file_name}} AS who
    FROM {files} r JOIN spark_attempts a
      ON a.app_id = r.app_id AND a.attempt_no = r.file_attempt
     AND a.task_index = TRY_CAST(r.file_task AS INTEGER)
     AND r.ts BETWEEN date_trunc('second', a.t_launch) AND a.t_end + INTERVAL 1 SECOND
    QUALIFY row_number() OVER (PARTITION BY r.event_id ORDER BY a.t_launch DESC) = 1
)"""


def attempts_of_files(con, event_ids: list[int]) -> dict[int, tuple[str, int]]:
    """``file event id -> (attempt label, attempt_end event id)`` for the files it can tie."""
    if not event_ids:
        return {}
    sql = ("WITH files AS (SELECT event_id, app_id, ts, file_task, file_attempt, file_name FROM events "
           "WHERE event_id IN (SELECT unnest(?)) AND kind = 'file' AND file_attempt IS NOT NULL "
           "AND app_id IS NOT NULL AND attempt_id IS NULL),"
           + file_attempts_sql("files") + " SELECT event_id, attempt_id, attempt_event FROM file_attempts")
    return {e: (a, ae) for e, a, ae in con.execute(sql, [event_ids]).fetchall()}
