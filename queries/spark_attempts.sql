-- Every Spark task attempt with the write it served: its job, SQL execution and that
-- execution's write (command, location, table, format, mode), stage and stage attempt, task
-- index, attempt number, TID, executor, host, speculative flag, how it ended, its launch and
-- finish, and the partition(s) it wrote: from the files tied to it (listings, audit, storage
-- logs), else its write's static partition, else 'partition not known'. ``attempt`` is its one
-- label (app/stage/task, attempt, TID and host), as every other output names it.
SELECT spark_attempt_label(app_id, stage_id, stage_attempt, task_index, attempt_no, tid, host) AS attempt, app_id, job_id, execution_id, write_command, write_location, write_table, write_format, write_mode,
       stage_id, stage_attempt, task_index, attempt_no, tid, executor_id, host, speculative,
       status, end_reason, launched, finished, partitions, partitions_from, files
FROM spark_attempts
ORDER BY app_id, stage_id, stage_attempt, task_index, attempt_no, tid;
