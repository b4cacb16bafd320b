"""Every rule the detectors read is needed: changing it fails a test.

A mutation is data: ``(file, old text, new text)``, ``old`` occurring exactly once in the file.
It is applied to what the detectors run, never to the file on disk:

- a migration's view (commitsleuth/migrations/*.sql): the view's live definition (its last
  ``CREATE [OR REPLACE] VIEW`` across the migrations) is replaced, mutated, in each probe's
  store for the probe's run, and restored after it;
- a Python module (forensics/*.py, forensics/detectors/*.py): its source, mutated, is executed as
  a fresh module, whose names replace the module's own and every imported copy of them; the
  forensics modules that import it are executed again over it (their SQL is built at import);
- forensics/paths.py runs at ingest: its probes ingest their evidence again, mutated.

The probes are the detectors' YAML cases (forensics/detectors/cases/*.yml, as
tests/test_detector_cases.py checks them) and the detection matrix's rows (tests/matrix/rows.py,
as tests/test_detection_matrix.py checks them). A mutation runs the probes of the detectors that
read what it changes (through the views that read it too); at least one must fail. A mutation
whose SQL no longer runs is an error, not a kill.

``EQUIVALENT`` lists mutations that change nothing a detector can show, with the reason; they
are not applied. ``SURVIVING_TODAY`` lists mutations no probe kills yet (each a missing case or
row): they must still survive, and one that is killed fails until it is taken off the list.
Conditions that only narrow rows early are negated instead of removed: negated, they must lose
a finding. Run with ``-s`` to see which probe kills each mutation (COMMITSLEUTH_ALL_KILLS=1: all).
To add a mutation, add a tuple; to cover a new view or module, add its mutations and, when it is
a new module, its readers to ``READERS``.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import sys
import types
from collections import Counter
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import duckdb
import pytest

from commitsleuth.forensics import storage
from commitsleuth.forensics.actors import actor_objects
from commitsleuth.forensics.analyze import ordered, prepared
from commitsleuth.forensics.attempt_labels import relabel
from commitsleuth.forensics.detectors import DETECTORS
from commitsleuth.store import Store

import test_detection_matrix as TM
from matrix import rows as R
from test_detector_cases import cases_of, check, load_case

REPO = Path(__file__).resolve().parents[1]
MIGRATIONS = REPO / "commitsleuth" / "migrations"

CS101, CS102 = "forensics/detectors/double_commit.py", "forensics/detectors/late_commit.py"
CS103, CS104 = "forensics/detectors/racing_loaders.py", "forensics/detectors/same_name_overwrite.py"
CS105, CS106 = "forensics/detectors/partial_output.py", "forensics/detectors/dedup_wrong.py"
CS107, CS108 = "forensics/detectors/metastore_mismatch.py", "forensics/detectors/multiple_writers.py"
CS109, CS110 = "forensics/detectors/leftover_temp.py", "forensics/detectors/empty_partition.py"
CS111, BASE = "forensics/detectors/manifest_mismatch.py", "forensics/detectors/base.py"
STORAGE, FILE_ATTEMPTS = "forensics/storage.py", "forensics/file_attempts.py"
PATHS, ACTORS = "forensics/paths.py", "forensics/actors.py"
M0005, M0013, M0018 = ("commitsleuth/migrations/0005_forensics.sql", "commitsleuth/migrations/0013_storage.sql",
                       "commitsleuth/migrations/0018_spark_attempts.sql")


def _text(rel: str) -> str:
    return (REPO / rel).read_text(encoding="utf-8")


def _between(rel: str, start: str, end: str) -> str:
    text = _text(rel)
    return text[text.index(start):text.index(end, text.index(start))]


# CS101's storage arm from its key to its HAVING (the key is both selected and grouped on)
_KEYED = _between(STORAGE, "coalesce(app_id, job_id) AS app_id", "HAVING")
# CS104's loads of one file name: their key is both selected and grouped on
_BY_NAME = _between(CS104, "by_name AS (", "HAVING count(*) > 1")

MUTATIONS: list[tuple[str, str, str]] = [
    (CS101, "kind IN ('dedup_remove', 'delete') AND file_name", "kind IN ('dedup_remove') AND file_name"),
    (CS101, "kind IN ('dedup_remove', 'delete') AND file_name", "kind IN ('delete') AND file_name"),
    (CS101, 'AND file_name IS NOT NULL\n', 'AND file_name IS NULL\n'),
    (CS101, 'ON r.location = n.location', 'ON true'),
    (CS101, 'AND r.partition_spec IS NOT DISTINCT FROM n.partition_spec', ''),
    (CS101, 'AND r.file_name = n.file_name', ''),
    (CS101, 'WHERE file_task IS NOT NULL AND location', 'WHERE file_task IS NULL AND location'),
    (CS101, 'AND location IS NOT NULL AND write_uuid', 'AND location IS NULL AND write_uuid'),
    (CS101, 'AND write_uuid IS NULL', ''),
    (CS101, "(kind = 'rename' OR (kind = 'file'", "(false OR (kind = 'file'"),
    (CS101, "OR (kind = 'file' AND file_attempt", 'OR (true AND file_attempt'),
    (CS101, 'AND file_attempt IS NOT NULL AND NOT is_temp', 'AND true AND NOT is_temp'),
    (CS101, 'AND NOT is_temp))', '))'),
    (CS101, 'WHERE file_attempt IS DISTINCT FROM 0 OR attempt_id', 'WHERE true OR attempt_id'),
    (CS101, 'WHERE file_attempt IS DISTINCT FROM 0 OR attempt_id', 'WHERE false OR attempt_id'),
    (CS101, "OR attempt_id NOT LIKE '%\\\\_0' ESCAPE '\\\\'\n", 'OR false\n'),
    (CS101, 'ON f.location = surviving.location AND', 'ON true AND'),
    (CS101, 'AND f.partition_spec IS NOT DISTINCT FROM surviving.partition_spec', ''),
    (CS101, 'AND f.file_task = surviving.file_task', ''),
    (CS101, 'HAVING count(DISTINCT coalesce(file_attempt, -1)) > 1 OR', 'HAVING false OR'),
    (CS101, 'OR count(DISTINCT r.attempt_id) > 1', ''),
    (CS101, "WHERE attempt_id IS NOT NULL\n      AND (kind = 'task_commit'", "WHERE true\n      AND (kind = 'task_commit'"),
    (CS101, "AND (kind = 'task_commit' OR", 'AND (false OR'),
    (CS101, "(kind = 'attempt_end' AND status = 'success' AND size > 0)", '(false)'),
    (CS101, "AND status = 'success' AND size > 0", 'AND size > 0'),
    (CS101, 'AND size > 0)', ')'),
    (CS101, 'WHERE NOT (coalesce(stage_attempt, 0) = 0', 'WHERE NOT (true'),
    (CS101, 'THEN attempt_no = 0', 'THEN true'),
    (CS101, "ELSE attempt_id LIKE '%\\\\_0' ESCAPE '\\\\' END", 'ELSE true END'),
    (CS101, 'ON c.task_id = s.task_id AND c.app_id IS NOT DISTINCT FROM s.app_id', 'ON c.task_id = s.task_id AND c.app_id IS DISTINCT FROM s.app_id'),
    (CS101, 'SELECT c.event_id, s.task FROM commit_rows c JOIN suspects s\n      ON c.task_id = s.task_id', 'SELECT c.event_id, s.task FROM commit_rows c JOIN suspects s\n      ON false'),
    (CS101, 'ON s.task_id IS NULL AND', 'ON s.task_id IS NOT NULL AND'),
    (CS101, "AND c.attempt_id = 'attempt' || s.task[5:] || '_0'", ''),
    (CS101, "'_0'\n     AND c.app_id IS NOT DISTINCT FROM s.app_id", "'_0'\n     AND c.app_id IS DISTINCT FROM s.app_id"),
    (CS101, 'HAVING count(DISTINCT e.attempt_id) > 1', 'HAVING count(DISTINCT e.attempt_id) > 0'),
    (CS101, "WHERE s.kind = 'attempt_start' AND s.host IS NOT NULL", 'WHERE s.host IS NOT NULL'),
    (CS101, "WHERE s.kind = 'attempt_start' AND s.host IS NOT NULL", "WHERE s.kind = 'attempt_start'"),
    (CS101, 'LEFT JOIN started st ON st.attempt_id = r.attempt_id', 'LEFT JOIN started st ON true'),
    (STORAGE, "WHERE kind IN ('file_create', 'rename') AND NOT is_temp", "WHERE kind IN ('file_create', 'rename', 'delete') AND NOT is_temp"),
    (STORAGE, "WHERE kind IN ('file_create', 'rename') AND NOT is_temp", "WHERE kind IN ('rename') AND NOT is_temp"),
    (STORAGE, "WHERE kind IN ('file_create', 'rename') AND NOT is_temp", "WHERE kind IN ('file_create', 'rename')"),
    # keyed on the application (else the job): not keyed at all, keyed on the application only
    (STORAGE, _KEYED, _KEYED.replace("coalesce(app_id, job_id) AS app_id", "any_value(coalesce(app_id, job_id)) AS app_id")
     .replace("GROUP BY coalesce(app_id, job_id), ", "GROUP BY ")),
    (STORAGE, _KEYED, _KEYED.replace("coalesce(app_id, job_id)", "app_id")),
    (STORAGE, 'HAVING count(DISTINCT attempt_id) > 1\n', 'HAVING count(DISTINCT attempt_id) > 0\n'),
    (CS103, 'ON a.pkey = b.pkey AND a.part_spec = b.part_spec', 'ON a.part_spec = b.part_spec'),
    (CS103, 'ON a.pkey = b.pkey AND a.part_spec = b.part_spec', 'ON a.pkey = b.pkey'),
    (CS103, 'AND a.writer <> b.writer\n', '\n'),
    (CS103, 'AND a.t0 <= b.t1 AND', 'AND'),
    (CS103, 'AND b.t0 <= a.t1', ''),
    (CS103, 'ON d.pkey = l.pkey AND d.part_spec = l.part_spec', 'ON d.part_spec = l.part_spec'),
    (CS103, 'ON d.pkey = l.pkey AND d.part_spec = l.part_spec', 'ON d.pkey = l.pkey'),
    (CS103, 'AND d.writer <> l.writer AND l.ts < d.ts', 'AND l.ts < d.ts'),
    (CS103, 'AND d.writer <> l.writer AND l.ts < d.ts', 'AND d.writer <> l.writer'),
    (CS103, "WHERE d.kind = 'delete' AND", 'WHERE true AND'),
    (CS103, "AND l.kind = 'load'", ''),
    (CS103, 'SEMI JOIN racing USING (pkey, part_spec)', 'ANTI JOIN racing USING (pkey, part_spec)'),
    (CS103, 'JOIN racing r ON r.pkey = s.pkey AND', 'JOIN racing r ON true AND'),
    (CS103, 'AND r.part_spec = s.part_spec AND r.writer = s.writer', 'AND r.writer = s.writer'),
    (CS103, 'AND r.writer = s.writer', ''),
    (CS103, 'LEFT JOIN loss l ON l.pkey = s.pkey AND', 'LEFT JOIN loss l ON true AND'),
    (CS103, 'AND l.part_spec = s.part_spec\nGROUP BY', '\nGROUP BY'),
    (CS103, "CASE WHEN any_value(l.deleters) IS NOT NULL THEN 'critical' END", "'critical'"),
    (CS103, "CASE WHEN any_value(l.deleters) IS NOT NULL THEN 'critical' END", 'NULL'),
    (CS104, "WHERE kind = 'query_start' AND ts IS NOT NULL\n", "WHERE kind = 'query_end' AND ts IS NOT NULL\n"),
    (CS104, 'AND (query_id IS NOT NULL OR thread IS NULL)', 'AND NOT (query_id IS NOT NULL OR thread IS NULL)'),
    (CS104, 'ON q.source_id = l.source_id AND q.thread', 'ON true AND q.thread'),
    (CS104, "AND q.thread = coalesce(l.thread, '') AND", 'AND'),
    (CS104, "CASE WHEN q.line_no IS NOT NULL THEN 'query at line ' || q.line_no END", 'NULL'),
    (CS104, "coalesce(l.detail->>'overwrite', 'false') = 'true'\n", 'false\n'),
    (CS104, "OR coalesce(regexp_matches(q.raw, '(?i)\\\\bOVERWRITE\\\\b'), false) AS overwrite", 'AS overwrite'),
    (CS104, '(?i)\\\\bOVERWRITE\\\\b', '(?i)OVERWRITE'),
    (CS104, "WHERE l.kind = 'load' AND", 'WHERE true AND'),
    (CS104, 'AND coalesce(l.part_location, l.part_table) IS NOT NULL', 'AND coalesce(l.part_location, l.part_table) IS NULL'),
    (CS104, "AND NOT {temp_path}\n", "\n"),
    (CS104, 'WHERE NOT overwrite AND path IS NOT NULL', 'WHERE path IS NOT NULL'),
    (CS104, 'WHERE NOT overwrite AND path IS NOT NULL', 'WHERE NOT overwrite'),
    (CS104, _BY_NAME, _BY_NAME.replace("part_spec AS partition_spec", "any_value(part_spec) AS partition_spec")
     .replace("GROUP BY coalesce(part_location, part_table), part_spec, file", "GROUP BY coalesce(part_location, part_table), file")),
    (CS104, _BY_NAME, _BY_NAME.replace("table_name, file,", "table_name, any_value(file) AS file,")
     .replace("GROUP BY coalesce(part_location, part_table), part_spec, file", "GROUP BY coalesce(part_location, part_table), part_spec")),
    (CS104, 'GROUP BY coalesce(part_location, part_table), part_spec, file', 'GROUP BY part_spec, file'),
    (CS104, 'HAVING count(*) > 1', 'HAVING count(*) > 0'),
    (CS104, "WHERE kind = 'stats' AND part_spec IS NOT NULL", "WHERE kind <> 'stats' AND part_spec IS NOT NULL"),
    (CS104, "AND detail->>'num_files' IS NOT NULL AND detail->>'total_size' IS NOT NULL", "AND detail->>'total_size' IS NOT NULL"),
    (CS104, "AND detail->>'num_files' IS NOT NULL AND detail->>'total_size' IS NOT NULL", "AND detail->>'num_files' IS NOT NULL"),
    (CS104, 'SELECT * FROM stats s WHERE s.source_id = l.source_id AND s.part_table = l.part_table\n          AND s.part_spec = l.part_spec AND s.ts >= l.ts', 'SELECT * FROM stats s WHERE true AND s.part_table = l.part_table\n          AND s.part_spec = l.part_spec AND s.ts >= l.ts'),
    (CS104, 'AND s.part_spec = l.part_spec AND s.ts >= l.ts', 'AND s.ts >= l.ts'),
    (CS104, 'AND s.part_spec = l.part_spec AND s.ts >= l.ts', 'AND s.part_spec = l.part_spec'),
    (CS104, 'AND s.part_spec = l.part_spec AND s.ts < l.ts', 'AND s.part_spec = l.part_spec'),
    (CS104, 'SELECT * FROM stats s WHERE s.source_id = l.source_id AND s.part_table = l.part_table\n          AND s.part_spec = l.part_spec AND s.ts < l.ts', 'SELECT * FROM stats s WHERE true AND s.part_table = l.part_table\n          AND s.part_spec = l.part_spec AND s.ts < l.ts'),
    (CS104, 'AND s.part_table = l.part_table\n          AND s.part_spec = l.part_spec AND s.ts >= l.ts', '\n          AND s.part_spec = l.part_spec AND s.ts >= l.ts'),
    (CS104, 'AND s.part_table = l.part_table\n          AND s.part_spec = l.part_spec AND s.ts < l.ts', '\n          AND s.part_spec = l.part_spec AND s.ts < l.ts'),
    (CS104, 'AND s.part_spec = l.part_spec AND s.ts < l.ts', 'AND s.ts < l.ts'),
    (CS104, 'ORDER BY s.ts, s.event_id LIMIT 1', 'ORDER BY s.ts DESC, s.event_id LIMIT 1'),
    (CS104, 'ORDER BY s.ts DESC, s.event_id DESC LIMIT 1', 'ORDER BY s.ts, s.event_id LIMIT 1'),
    (CS104, '    WHERE NOT l.overwrite\n', '\n'),
    (CS104, 'WHERE files1 <= files0 AND size1 <> size0', 'WHERE size1 <> size0'),
    (CS104, 'WHERE files1 <= files0 AND size1 <> size0', 'WHERE files1 <= files0'),
    (CS104, 'WHERE NOT EXISTS (SELECT 1 FROM by_name n WHERE n.table_name = b.table_name\n                  AND n.partition_spec = b.partition_spec)', ''),
    (CS104, 'WHERE n.table_name = b.table_name\n', 'WHERE true\n'),
    (CS104, 'AND n.partition_spec = b.partition_spec)', ')'),
    (CS111, "WHERE kind = 'file' AND file_name = '_SUCCESS'", "WHERE kind <> 'file' AND file_name = '_SUCCESS'"),
    (CS111, "AND file_name = '_SUCCESS' AND location", "AND file_name <> '_SUCCESS' AND location"),
    (CS111, 'AND location IS NOT NULL\n      AND json_array_length', 'AND location IS NULL\n      AND json_array_length'),
    (CS111, "AND json_array_length(detail->'manifest'->'filenames') > 0", ''),
    (CS111, "AND coalesce(detail->'manifest'->>'success', 'true') <> 'false'", ''),
    (CS111, "regexp_replace(unnest(names), '{scheme}', '')", "unnest(names)"),
    (CS111, "regexp_replace(f.path, '{scheme}', '')", "f.path"),
    (CS111, 'ON f.source_id IS NOT DISTINCT FROM m.source_id AND', 'ON true AND'),
    (CS111, 'AND f.location = m.location\n', '\n'),
    (CS111, "WHERE f.kind = 'file'  --", "WHERE f.kind <> 'file'  --"),
    (CS111, "AND NOT starts_with(f.file_name, '_')", ''),
    (CS111, "AND NOT starts_with(f.file_name, '.')", ''),
    (CS111, "AND NOT {temp}\n", "\n"),
    (CS111, "WHERE len(m.names) < {limit}", "WHERE true"),
    (CS111, 'AND (d.ts > m.ts\n', 'AND (false\n'),
    (CS111, 'OR d.write_uuid IN (SELECT c.write_uuid FROM committed c WHERE c.manifest_id = d.manifest_id))', ')'),
    (CS111, 'AND (d.ts > m.ts\n           OR d.write_uuid IN (SELECT c.write_uuid FROM committed c WHERE c.manifest_id = d.manifest_id))', ''),
    (CS111, 'WHERE c.manifest_id = d.manifest_id))', '))'),
    (CS111, 'AND NOT EXISTS (SELECT 1 FROM listed l WHERE l.manifest_id = d.manifest_id AND l.key = d.key)', ''),
    (CS111, 'WHERE NOT EXISTS (SELECT 1 FROM on_disk d WHERE d.manifest_id = l.manifest_id AND d.key = l.key)', ''),
    (CS111, 'WHERE j.extra IS NOT NULL OR j.missing IS NOT NULL', ''),
    (CS111, "CASE WHEN j.missing IS NOT NULL THEN 'critical' END", 'NULL'),
    (CS111, "CASE WHEN j.missing IS NOT NULL THEN 'critical' END", "'critical'"),
    (STORAGE, 'WHERE event_id IN (SELECT unnest(?::BIGINT[])) AND', 'WHERE (event_id IN (SELECT unnest(?::BIGINT[])) OR true) AND'),
    (STORAGE, "AND kind = 'delete' AND", 'AND'),
    (STORAGE, 'AND detail LIKE \'%"storage":%\'', ''),
    (STORAGE, 'WHERE d.ts >= $ts AND', 'WHERE'),
    (STORAGE, 'AND d.detail LIKE \'%"cmd": "delete"%\'', ''),
    (STORAGE, "AND (starts_with($trash, d.path || '/') OR", 'AND (false OR'),
    (STORAGE, "starts_with($trash, d.path || '/')", 'starts_with($trash, d.path)'),
    (STORAGE, 'OR d.path = $trash', 'OR false'),
    (STORAGE, 'WHERE c.path = $current AND', 'WHERE (c.path = $current OR true) AND'),
    (STORAGE, 'AND c.target_path = d.path AND', 'AND'),
    (STORAGE, 'AND c.ts >= $ts AND', 'AND'),
    (STORAGE, 'AND c.ts <= d.ts)', ')'),
    # --- CS102 late-commit ---
    (CS102, "WHERE kind IN ('rename', 'task_commit') AND ts IS NOT NULL", "WHERE kind IN ('rename') AND ts IS NOT NULL"),
    (CS102, "WHERE kind IN ('rename', 'task_commit') AND ts IS NOT NULL", "WHERE kind IN ('task_commit') AND ts IS NOT NULL"),
    (CS102, "ON j.scratch = p.scratch AND p.ts > j.ts\n    WHERE p.kind = 'rename'", "ON j.scratch = p.scratch AND p.ts > j.ts"),
    (CS102, "ON j.scratch = p.scratch AND p.ts > j.ts", "ON j.scratch = p.scratch"),
    (CS102, "ON j.job_id = p.write_job AND p.ts > j.ts", "ON j.job_id = p.write_job"),
    (CS102, "ON k.attempt_id = p.attempt_id AND p.ts > k.ts", "ON k.attempt_id = p.attempt_id"),
    (CS102, "ON d.scratch = p.scratch AND p.ts > d.ts", "ON d.scratch = p.scratch"),
    (CS102, "OR (kind = 'attempt_state' AND upper(detail->>'to') LIKE 'KILL%'))", ")"),
    (CS102, "((kind = 'attempt_end' AND status = 'killed')", "((false)"),
    (CS102, "WHERE a.status = 'killed' AND p.ts > a.finished", "WHERE p.ts > a.finished"),
    (CS102, "WHERE a.status = 'killed' AND p.ts > a.finished", "WHERE a.status = 'killed'"),
    (CS102, "AND a.task_index = TRY_CAST(p.h.task AS INTEGER) AND a.tid = TRY_CAST(p.h.tid AS BIGINT)",
     "AND a.task_index = TRY_CAST(p.h.task AS INTEGER)"),
    (CS102, "WHERE kind = 'dedup_remove' AND ts IS NOT NULL\n    GROUP BY ALL HAVING scratch <> ''", "WHERE kind = 'dedup_remove' AND ts IS NOT NULL\n    GROUP BY ALL"),
    (CS102, "WHERE kind = 'publish' AND ts IS NOT NULL", "WHERE kind IN ('publish', 'rename') AND ts IS NOT NULL"),
    # --- CS105 partial-output ---
    (CS105, "status IN ('failed', 'killed', 'aborted')", "status IN ('failed', 'aborted')"),
    (CS105, "(kind = 'job_abort' OR (kind = 'job_end'", "(false OR (kind = 'job_end'"),
    (CS105, "SELECT DISTINCT coalesce(target_path, path) AS p FROM events WHERE kind IN ('delete', 'dedup_remove')",
     "SELECT DISTINCT coalesce(target_path, path) AS p FROM events WHERE kind IN ('delete')"),
    (CS105, "WHERE kind = 'file' AND file_name = '_SUCCESS' AND partition_spec IS NULL", "WHERE kind = 'file' AND file_name = '_SUCCESS'"),
    (CS105, "WHERE f.ts > coalesce(m.ts, '-infinity'::TIMESTAMP)", "WHERE true"),
    (CS105, "AND f.write_uuid NOT IN (SELECT job_id FROM committed)", ""),
    (CS105, "AND f.write_uuid NOT IN (SELECT job_id FROM failed)", ""),
    (CS105, "ON j.job_id = o.job_key AND (j.location IS NULL OR j.location = o.location)", "ON j.job_id = o.job_key"),
    (CS105, "ANTI JOIN removed r ON r.p = s.p", "ANTI JOIN removed r ON false"),
    (CS105, "WHERE NOT {temp_s_p}", "WHERE true"),
    (CS105, "AND coalesce(detail->>'dir', 'false') <> 'true'\n),\nsuspects", "\n),\nsuspects"),
    (CS105, "WHERE kind IN ('task_commit', 'rename', 'file') AND location IS NOT NULL", "WHERE kind IN ('task_commit', 'rename') AND location IS NOT NULL"),
    (CS105, "CASE WHEN g.app_id IS NULL THEN (SELECT algorithm FROM agreed) END", "(SELECT algorithm FROM agreed)"),
    (CS105, "LEFT JOIN conf c ON c.app_id = g.app_id", "LEFT JOIN conf c ON false"),
    # --- CS106 dedup-kept-wrong ---
    (CS106, "WHERE coalesce(kept_result, '') IN ('killed', 'failed') OR coalesce(removed_result, '') = 'succeeded'",
     "WHERE coalesce(kept_result, '') IN ('killed', 'failed')"),
    (CS106, "WHERE coalesce(kept_result, '') IN ('killed', 'failed') OR coalesce(removed_result, '') = 'succeeded'",
     "WHERE coalesce(removed_result, '') = 'succeeded'"),
    (CS106, "ON kw.file_task = d.file_task AND kw.file_attempt = d.kept_attempt", "ON kw.file_task = d.file_task"),
    (CS106, "AND kw.partition_spec IS NOT DISTINCT FROM d.partition_spec AND kw.location = d.location", ""),
    (CS106, "AND rw.partition_spec IS NOT DISTINCT FROM d.partition_spec AND rw.location = d.location", ""),
    (CS106, "WHEN bool_or(status = 'killed' OR upper(detail->>'to') LIKE 'KILL%') THEN 'killed'", "WHEN false THEN 'killed'"),
    (CS106, "CASE WHEN bool_or(status = 'success' OR upper(detail->>'to') = 'SUCCEEDED') THEN 'succeeded'",
     "CASE WHEN bool_or(status = 'success') THEN 'succeeded'"),
    # --- CS107 metastore-fs-mismatch ---
    (CS107, "WHERE kind = 'delete' AND file_name IS NULL AND part_spec IS NOT NULL", "WHERE kind = 'delete' AND part_spec IS NOT NULL"),
    (CS107, "AND coalesce(status, 'ok') <> 'failed'", ""),
    (CS107, "ON r.pkey = d.pkey AND r.part_spec = d.part_spec AND d.ts > r.ts", "ON r.pkey = d.pkey AND r.part_spec = d.part_spec"),
    (CS107, "ON r.pkey = d.pkey AND r.part_spec = d.part_spec AND d.ts > r.ts", "ON r.part_spec = d.part_spec AND d.ts > r.ts"),
    (CS107, "WHERE (a.ts IS NULL OR a.ts < d.ts) AND NOT {temp_dp}", "WHERE true AND NOT {temp_dp}"),
    (CS107, "WHERE (a.ts IS NULL OR a.ts < d.ts) AND NOT {temp_dp}", "WHERE (a.ts IS NULL OR a.ts < d.ts)"),
    (CS107, "WHERE kind IN ('dir_create', 'rename', 'task_commit', 'file', 'partition_drop') AND NOT {temp_p}",
     "WHERE kind IN ('dir_create', 'task_commit', 'file', 'partition_drop') AND NOT {temp_p}"),
    (CS107, "WHERE kind IN ('partition_add', 'partition_alter', 'partition_exists') AND", "WHERE kind IN ('partition_add') AND"),
    # --- CS108 multiple-writers ---
    (CS108, "OR bool_or(write_uuid IS NULL AND contains(file_name, '_copy_'))", ""),
    (CS108, "FROM files ANTI JOIN removed USING (p)", "FROM files"),
    (CS108, "HAVING count(*) > 1\nORDER BY", "HAVING count(*) > 0\nORDER BY"),
    (CS108, "AND NOT {temp_p}", ""),
    (CS108, "AND (write_uuid IS NOT NULL OR file_attempt IS NOT NULL)", ""),
    # --- CS109 leftover-temp ---
    (CS109, "WHERE kind = 'file' AND is_temp AND location IS NOT NULL", "WHERE kind = 'file' AND location IS NOT NULL"),
    (CS109, "WHERE temp_dir <> ''", ""),
    (CS109, r"|\\.spark-staging-[^/]*|", "|"),
    (CS109, r"|\\.hive-staging[^/]*|", "|"),
    # --- CS110 empty-partition ---
    (CS110, "AND partition_spec IS NOT NULL AND NOT is_temp", "AND partition_spec IS NOT NULL"),
    (CS110, "AND NOT regexp_matches(e.file_name, '^[._]')", ""),
    (CS110, "FROM dirs d ANTI JOIN data USING (location, partition_spec)", "FROM dirs d"),
    (CS110, "AND NOT {temp_e_path}", ""),
    (CS110, "WHERE e.kind = 'file' AND coalesce(e.detail->>'dir', 'false') <> 'true'", "WHERE e.kind = 'file'"),
    # --- detectors/base.py: the temp layers every detector peels ---
    (BASE, "|-ext-[0-9]+[^/]*)(/|$)", ")(/|$)"),
    (BASE, r"\.spark-staging-[^/]*|\.hive-staging", r"\.hive-staging"),
    # --- forensics/storage.py: who deleted it, can the trash restore it (CS103, CS107) ---
    (STORAGE, "    if detail.get(\"proxy\"):\n        text += f\" (proxy {detail['proxy']})\"\n", ""),
    (STORAGE, "    if detail.get(\"ip\"):\n        text += f\" from {detail['ip']}\"\n", ""),
    (STORAGE, "if storage == \"s3\":", "if False:"),
    (STORAGE, "current = None  # not in Current: no checkpoint takes it", "pass"),
    (STORAGE, "if row.get(\"job_id\"):", "if False:"),
    (STORAGE, "if row.get(\"query_id\"):", "if False:"),
    # --- forensics/file_attempts.py: a detector's file -> attempt ties (CS101, CS105, CS109, actors) ---
    (FILE_ATTEMPTS, "    WHERE t.kind = 'spark_attempt'\n)", "\n)"),
    (FILE_ATTEMPTS, "FILTER (WHERE fa.who IS NOT NULL)", ""),
    (FILE_ATTEMPTS, "\"speculative\" if a.get(\"speculative\") else \"not speculative\"", "\"not speculative\""),
    (FILE_ATTEMPTS, "\"inferred from times\" if a.get(\"tie\") == \"inferred\" else None", "None"),
    (FILE_ATTEMPTS, "'executor': a.executor_id,", "'executor': NULL,"),
    # --- forensics/paths.py: every path to (location, partition, file), at ingest ---
    (PATHS, "prefix = \"s3a:\" + rest", "pass"),
    (PATHS, "if file_name.startswith((\"_tmp.\", \"_task_tmp.\", \".\")):", "if file_name.startswith((\"_tmp.\", \"_task_tmp.\")):"),
    (PATHS, "return f\"{m['db']}.{m['table']}\".lower()", "return f\"{m['db']}.{m['table']}\""),
    (PATHS, "return f\"default.{m['table']}\".lower() if m else None", "return None"),
    (PATHS, "file_attempt=int(m[\"attempt\"]) if m[\"attempt\"] is not None else None,", "file_attempt=None,"),
    (PATHS, "            parts = []  # a k=v segment in the middle of a path is not a partition\n", "            pass\n"),
    (PATHS, "kept.pop()  # <table>/.hive-staging_…/-ext-10000 publishes into <table>", "pass"),
    (PATHS, "after_temporary = seg == \"_temporary\"", "after_temporary = False"),
    (PATHS, "        if _UNION_SUBDIR.match(seg):\n            continue", "        if False:\n            continue"),
    (PATHS, "out.append(f\"{k.strip()}={v.strip().strip(chr(39)).strip(chr(34))}\")", "out.append(f\"{k.strip()}={v.strip()}\")"),
    (PATHS, "is_dir=ev.kind in (\"publish\", \"dir_create\", \"task_commit\", \"load\")", "is_dir=ev.kind in (\"publish\", \"task_commit\", \"load\")"),
    (PATHS, "path = ev.target_path if ev.kind == \"load\" else ev.target_path or ev.path", "path = ev.target_path or ev.path"),
    (PATHS, "if spec.startswith(\"[\") or \"=\" not in spec:", "if spec.startswith(\"[\"):"),
    (PATHS, "info.update(file_task=m[\"task\"], write_uuid=m[\"uuid\"])", "info.update(file_task=m[\"task\"])"),
    (PATHS, "        elif mr:\n            info.update(file_task=mr[\"task\"])\n", ""),
    (PATHS, "ev.table_name = ev.table_name or table_from_location(ev.location)\n        return ev", "return ev"),
    # --- forensics/actors.py: who a finding names, as objects ---
    (ACTORS, "    if label in named:\n", "    if False:\n"),
    (ACTORS, "for key in (\"query_id\", \"attempt_id\", \"app_id\"):", "for key in (\"query_id\",):"),
    (ACTORS, "if label in (e[\"attempt_id\"], e[\"thread\"], e[\"query_id\"]) and e[\"storage\"]:", "if False:"),
    (ACTORS, "if label == e[\"attempt_id\"] and e[\"event_id\"] in tied:", "if False:"),
    (ACTORS, "    if len(apps) == 1:\n", "    if False:\n"),
    (ACTORS, "WHERE t.event_id IN (SELECT unnest(?::BIGINT[])) AND t.candidates = 1 AND t.kind = 'spark_attempt'",
     "WHERE t.event_id IN (SELECT unnest(?::BIGINT[])) AND t.kind = 'spark_attempt'"),
    (ACTORS, "\"ip\": e[\"ip\"], \"storage\": e[\"storage\"]}", "\"ip\": None, \"storage\": e[\"storage\"]}"),
    (ACTORS, "AND q.thread = e.thread AND q.ts <= e.ts", "AND q.ts <= e.ts"),
    (ACTORS, "if label.startswith(\"attempt_\") and \"attempt_no\" in attempt_fields(label):", "if False:"),
    # --- migrations: the views the detectors read ---
    # table_locations: a table's location from lines naming both, or one thread naming each
    (M0005, "ON n.thread = p.thread AND n.partition_spec = p.partition_spec", "ON n.thread = p.thread"),
    (M0005, "ON n.thread = p.thread AND n.partition_spec = p.partition_spec", "ON n.partition_spec = p.partition_spec"),
    (M0005, "SELECT table_name, arg_max(location, n) AS location", "SELECT table_name, arg_min(location, n) AS location"),
    (M0005, "    WHERE table_name IS NOT NULL AND location IS NOT NULL\n    UNION ALL", "    WHERE false\n    UNION ALL"),
    # partition_values: a metastore audit's [v1,v2] meets the k=v spec
    (M0005, "ON e.table_name IS NULL AND l.location = e.location", "ON false"),
    (M0005, "lambda x: split_part(x, '=', 2)", "lambda x: x"),
    # loading_steps: a writer is the query of the line's own thread
    (M0005, "ON q.source_id = e.source_id AND q.thread = e.thread AND e.ts >= q.ts", "ON q.source_id = e.source_id AND e.ts >= q.ts"),
    (M0005, "ON q.source_id = e.source_id AND q.thread = e.thread AND e.ts >= q.ts", "ON q.thread = e.thread AND e.ts >= q.ts"),
    (M0005, "coalesce(e.query_id, q.query_id, e.thread, e.app_id) AS writer", "coalesce(e.query_id, e.thread, e.app_id) AS writer"),
    (M0005, "'partition_exists', 'load', 'delete')\n", "'partition_exists', 'load')\n"),
    (M0005, "WHERE e.kind IN ('dir_create', 'partition_add',", "WHERE e.kind IN ("),
    # location_aliases and partition_events (their live definitions are 0013's)
    (M0013, "FROM locs WHERE location LIKE 'hdfs://%' OR location LIKE 'viewfs://%'", "FROM locs WHERE location LIKE 'viewfs://%'"),
    (M0013, "LEFT JOIN location_aliases al ON al.alias = k.raw_location", "LEFT JOIN location_aliases al ON false"),
    (M0013, "ON k.partition_spec LIKE '[%' AND pv.part_table = k.part_table AND pv.vals = k.partition_spec",
     "ON k.partition_spec LIKE '[%' AND pv.vals = k.partition_spec"),
    (M0013, "LEFT JOIN table_locations tl ON e.location IS NULL AND tl.table_name = e.table_name", "LEFT JOIN table_locations tl ON false"),
    (M0013, "LEFT JOIN loc_tables lt ON e.table_name IS NULL AND lt.location = e.location", "LEFT JOIN loc_tables lt ON false"),
    (M0013, "coalesce(k.attempt_id, k.thread, k.query_id, k.app_id) AS actor", "coalesce(k.thread, k.attempt_id, k.query_id, k.app_id) AS actor"),
    (M0013, "CASE WHEN e.kind = 'load' THEN e.target_path ELSE coalesce(e.target_path, e.path) END", "coalesce(e.target_path, e.path)"),
    (M0013, "OR contains(k.temp_probe, '-ext-'))", ")"),
    (M0013, "CASE WHEN NOT (contains(k.temp_probe, '/_')", "CASE WHEN true OR NOT (contains(k.temp_probe, '/_')"),
    # spark_executions, spark_stage_jobs, spark_task_attempts, file_attempts (0018)
    (M0018, "LEFT JOIN ends e ON e.app_id = s.app_id AND e.query_id = s.query_id", "LEFT JOIN ends e ON e.query_id = s.query_id"),
    (M0018, "arg_min(job_id, coalesce(ts, TIMESTAMP '9999-12-31')) AS job_id", "arg_max(job_id, coalesce(ts, TIMESTAMP '9999-12-31')) AS job_id"),
    (M0018, "arg_min(query_id, coalesce(ts, TIMESTAMP '9999-12-31')) AS execution_id", "NULL AS execution_id"),
    (M0018, "GROUP BY app_id, stage_id, stage_attempt, attempt_id);", "GROUP BY stage_id, stage_attempt, attempt_id);"),
    (M0018, "LEFT JOIN spark_stage_jobs sj ON sj.app_id = a.app_id AND sj.stage_id = a.stage_id", "LEFT JOIN spark_stage_jobs sj ON sj.stage_id = a.stage_id"),
    (M0018, "LEFT JOIN spark_executions x ON x.app_id = a.app_id AND x.execution_id = sj.execution_id",
     "LEFT JOIN spark_executions x ON x.execution_id = sj.execution_id"),
    (M0018, "coalesce(epoch_ms(TRY_CAST(a.detail->>'launch_time' AS BIGINT)), a.ts) AS launched", "a.ts AS launched"),
    (M0018, "AND (attempt_id IS NULL OR task_id LIKE 'TID %')", ""),
    (M0018, "WHERE staging_uuid = '' OR staging_uuid = write_uuid", "WHERE true"),
    (M0018, "ON x.write_location = s.location AND (s.app_id IS NULL OR s.app_id = x.app_id)", "ON x.write_location = s.location"),
    (M0018, "ON a.app_id = f.app_id AND a.attempt_no = f.file_attempt", "ON a.app_id = f.app_id"),
    (M0018, "     AND f.ts BETWEEN date_trunc('second', a.launched) AND a.finished + INTERVAL 1 SECOND\n    WHERE f.file_attempt",
     "    WHERE f.file_attempt"),
    (M0018, "     AND u.ts BETWEEN date_trunc('second', a.launched) AND a.finished + INTERVAL 1 SECOND\n", ""),
    (M0018, "    QUALIFY a.launched = max(a.launched) OVER (PARTITION BY f.event_id)  -- a retried stage: the latest\n", ""),
    (M0018, "AND a.stage_attempt IS NOT DISTINCT FROM f.stage_attempt", ""),
    (M0018, "     AND 'TID ' || a.tid = f.task_id", ""),
    (M0018, "AND (a.tid = TRY_CAST(h.hid.n AS BIGINT) OR a.attempt_no = TRY_CAST(h.hid.n AS INTEGER))",
     "AND (a.attempt_no = TRY_CAST(h.hid.n AS INTEGER))"),
    (M0018, "CASE how WHEN 'named' THEN 0 WHEN 'listing' THEN 1 ELSE 2 END AS how_rank", "0 AS how_rank"),
    (M0018, "    QUALIFY how_rank = min(how_rank) OVER (PARTITION BY event_id)\n", ""),
    (M0018, "SELECT b.*, count(*) OVER (PARTITION BY b.event_id) AS candidates FROM best b", "SELECT b.*, 1 AS candidates FROM best b"),
]

# Mutations that change nothing a detector can show (not applied), with the reason.
EQUIVALENT: dict[tuple[str, str, str], str] = {
    (CS109, "WHERE kind = 'file' AND is_temp AND location IS NOT NULL", "WHERE kind = 'file' AND location IS NOT NULL"):
        "temp_dir is CASE WHEN is_temp THEN … END: NULL for any other row, which WHERE temp_dir <> '' drops",
    (CS110, "WHERE e.kind = 'file' AND coalesce(e.detail->>'dir', 'false') <> 'true'", "WHERE e.kind = 'file'"):
        'a directory entry has no file name: NOT regexp_matches(NULL, …) is NULL and keeps it out already',
}

# Mutations no probe kills on today's main: each is a case or matrix row still missing.
SURVIVING_TODAY: set[str] = {
    "late_commit.py: ON j.scratch = p.scratch AND p.ts > j.ts WHERE p.kind = 'rename' -> ON j.scratch = p.scratch AND p.ts > j.ts",
    'late_commit.py: ON j.job_id = p.write_job AND p.ts > j.ts -> ON j.job_id = p.write_job',
    "late_commit.py: ((kind = 'attempt_end' AND status = 'killed') -> ((false)",
    "partial_output.py: status IN ('failed', 'killed', 'aborted') -> status IN ('failed', 'aborted')",
    'partial_output.py: SELECT DISTINCT coalesce(target_path, path) AS p FROM events WHERE kin…b69608 -> SELECT DISTINCT coalesce(target_path, pa…d08f7b',
    "partial_output.py: WHERE kind = 'file' AND file_name = '_SUCCESS' AND partition_spec IS N…d7b599 -> WHERE kind = 'file' AND file_name = '_SU…e688a4",
    'partial_output.py: ON j.job_id = o.job_key AND (j.location IS NULL OR j.location = o.loca…d2c664 -> ON j.job_id = o.job_key',
    'partial_output.py: WHERE NOT {temp_s_p} -> WHERE true',
    "partial_output.py: AND coalesce(detail->>'dir', 'false') <> 'true' ), suspects -> ), suspects",
    'partial_output.py: CASE WHEN g.app_id IS NULL THEN (SELECT algorithm FROM agreed) END -> (SELECT algorithm FROM agreed)',
    "dedup_wrong.py: WHERE coalesce(kept_result, '') IN ('killed', 'failed') OR coalesce(re…d2ee92 -> WHERE coalesce(kept_result, '') IN ('kil…a43593",
    "dedup_wrong.py: WHERE coalesce(kept_result, '') IN ('killed', 'failed') OR coalesce(re…d2ee92 -> WHERE coalesce(removed_result, '') = 'su…4ca291",
    'dedup_wrong.py: AND kw.partition_spec IS NOT DISTINCT FROM d.partition_spec AND kw.loc…56f7f0 -> ',
    'dedup_wrong.py: AND rw.partition_spec IS NOT DISTINCT FROM d.partition_spec AND rw.loc…e45e1e -> ',
    "metastore_mismatch.py: AND coalesce(status, 'ok') <> 'failed' -> ",
    'metastore_mismatch.py: ON r.pkey = d.pkey AND r.part_spec = d.part_spec AND d.ts > r.ts -> ON r.pkey = d.pkey AND r.part_spec = d.p…c23880',
    'metastore_mismatch.py: ON r.pkey = d.pkey AND r.part_spec = d.part_spec AND d.ts > r.ts -> ON r.part_spec = d.part_spec AND d.ts > …f69e52',
    'metastore_mismatch.py: WHERE (a.ts IS NULL OR a.ts < d.ts) AND NOT {temp_dp} -> WHERE (a.ts IS NULL OR a.ts < d.ts)',
    "metastore_mismatch.py: WHERE kind IN ('dir_create', 'rename', 'task_commit', 'file', 'partiti…127722 -> WHERE kind IN ('dir_create', 'task_commi…8bdd07",
    "metastore_mismatch.py: WHERE kind IN ('partition_add', 'partition_alter', 'partition_exists')…8c8670 -> WHERE kind IN ('partition_add') AND",
    'multiple_writers.py: AND NOT {temp_p} -> ',
    'multiple_writers.py: AND (write_uuid IS NOT NULL OR file_attempt IS NOT NULL) -> ',
    "leftover_temp.py: WHERE temp_dir <> '' -> ",
    'leftover_temp.py: |\\\\.hive-staging[^/]*| -> |',
    'empty_partition.py: AND partition_spec IS NOT NULL AND NOT is_temp -> AND partition_spec IS NOT NULL',
    'empty_partition.py: AND NOT {temp_e_path} -> ',
    'base.py: |-ext-[0-9]+[^/]*)(/|$) -> )(/|$)',
    'base.py: \\.spark-staging-[^/]*|\\.hive-staging -> \\.hive-staging',
    'storage.py: if storage == "s3": -> if False:',
    'storage.py: current = None # not in Current: no checkpoint takes it -> pass',
    'storage.py: if row.get("job_id"): -> if False:',
    "file_attempts.py: WHERE t.kind = 'spark_attempt' ) -> )",
    'paths.py: prefix = "s3a:" + rest -> pass',
    'paths.py: if file_name.startswith(("_tmp.", "_task_tmp.", ".")): -> if file_name.startswith(("_tmp.", "_task…0ac9b7',
    'paths.py: return f"{m[\'db\']}.{m[\'table\']}".lower() -> return f"{m[\'db\']}.{m[\'table\']}"',
    'paths.py: return f"default.{m[\'table\']}".lower() if m else None -> return None',
    'paths.py: parts = [] # a k=v segment in the middle of a path is not a partition -> pass',
    'paths.py: if _UNION_SUBDIR.match(seg): continue -> if False: continue',
    'paths.py: out.append(f"{k.strip()}={v.strip().strip(chr(39)).strip(chr(34))}") -> out.append(f"{k.strip()}={v.strip()}")',
    'paths.py: is_dir=ev.kind in ("publish", "dir_create", "task_commit", "load") -> is_dir=ev.kind in ("publish", "task_comm…42a663',
    'paths.py: if spec.startswith("[") or "=" not in spec: -> if spec.startswith("["):',
    'paths.py: elif mr: info.update(file_task=mr["task"]) -> ',
    'paths.py: ev.table_name = ev.table_name or table_from_location(ev.location) retu…73bcbd -> return ev',
    'actors.py: if label in named: -> if False:',
    'actors.py: for key in ("query_id", "attempt_id", "app_id"): -> for key in ("query_id",):',
    'actors.py: if label in (e["attempt_id"], e["thread"], e["query_id"]) and e["stora…9be85b -> if False:',
    'actors.py: if label == e["attempt_id"] and e["event_id"] in tied: -> if False:',
    'actors.py: if len(apps) == 1: -> if False:',
    'actors.py: WHERE t.event_id IN (SELECT unnest(?::BIGINT[])) AND t.candidates = 1 …88ae53 -> WHERE t.event_id IN (SELECT unnest(?::BI…450924',
    'actors.py: "ip": e["ip"], "storage": e["storage"]} -> "ip": None, "storage": e["storage"]}',
    'actors.py: AND q.thread = e.thread AND q.ts <= e.ts -> AND q.ts <= e.ts',
    'actors.py: if label.startswith("attempt_") and "attempt_no" in attempt_fields(lab…c737e2 -> if False:',
    '0005_forensics.sql: ON n.thread = p.thread AND n.partition_spec = p.partition_spec -> ON n.thread = p.thread',
    '0005_forensics.sql: ON n.thread = p.thread AND n.partition_spec = p.partition_spec -> ON n.partition_spec = p.partition_spec',
    '0005_forensics.sql: SELECT table_name, arg_max(location, n) AS location -> SELECT table_name, arg_min(location, n) …da6624',
    '0005_forensics.sql: ON e.table_name IS NULL AND l.location = e.location -> ON false',
    "0013_storage.sql: ON k.partition_spec LIKE '[%' AND pv.part_table = k.part_table AND pv.…40a9c7 -> ON k.partition_spec LIKE '[%' AND pv.val…99ce05",
    '0013_storage.sql: LEFT JOIN loc_tables lt ON e.table_name IS NULL AND lt.location = e.lo…97d619 -> LEFT JOIN loc_tables lt ON false',
    '0013_storage.sql: coalesce(k.attempt_id, k.thread, k.query_id, k.app_id) AS actor -> coalesce(k.thread, k.attempt_id, k.query…406035',
    "0013_storage.sql: CASE WHEN e.kind = 'load' THEN e.target_path ELSE coalesce(e.target_pa…ccc873 -> coalesce(e.target_path, e.path)",
    "0013_storage.sql: OR contains(k.temp_probe, '-ext-')) -> )",
    '0018_spark_attempts.sql: LEFT JOIN ends e ON e.app_id = s.app_id AND e.query_id = s.query_id -> LEFT JOIN ends e ON e.query_id = s.query…126348',
    "0018_spark_attempts.sql: arg_min(job_id, coalesce(ts, TIMESTAMP '9999-12-31')) AS job_id -> arg_max(job_id, coalesce(ts, TIMESTAMP '…7a5528",
    '0018_spark_attempts.sql: GROUP BY app_id, stage_id, stage_attempt, attempt_id); -> GROUP BY stage_id, stage_attempt, attemp…5e96a9',
    '0018_spark_attempts.sql: LEFT JOIN spark_stage_jobs sj ON sj.app_id = a.app_id AND sj.stage_id …70c321 -> LEFT JOIN spark_stage_jobs sj ON sj.stag…43741f',
    '0018_spark_attempts.sql: LEFT JOIN spark_executions x ON x.app_id = a.app_id AND x.execution_id…6f635e -> LEFT JOIN spark_executions x ON x.execut…0b2271',
    "0018_spark_attempts.sql: AND (attempt_id IS NULL OR task_id LIKE 'TID %') -> ",
    '0018_spark_attempts.sql: AND a.stage_attempt IS NOT DISTINCT FROM f.stage_attempt -> ',
    "0018_spark_attempts.sql: AND 'TID ' || a.tid = f.task_id -> ",
}


def _short(text: str, n: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[:n] + "…" + hashlib.sha1(text.encode()).hexdigest()[:6]


def mutation_id(m: tuple[str, str, str]) -> str:
    rel, old, new = m
    return f"{Path(rel).name}: {_short(old, 70)} -> {_short(new, 40)}"


# --- what reads what ---------------------------------------------------------------------

_VIEW = re.compile(r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+(\w+)\s+AS\b", re.I | re.M)


def _statements(rel: str) -> list[str]:
    """A migration's statements (each ends with ';' at the end of a line)."""
    return [s.strip() + ";" for s in re.split(r";[ \t]*(?:--[^\n]*)?\n", _text(rel) + "\n") if s.strip()]


@lru_cache(maxsize=None)
def live_views() -> dict[str, tuple[str, str]]:
    """view name -> (migration, statement) of its live definition: the last one, in order."""
    out: dict[str, tuple[str, str]] = {}
    for path in sorted(MIGRATIONS.glob("*.sql")):
        rel = str(path.relative_to(REPO))
        for stmt in _statements(rel):
            body = re.sub(r"^(?:\s*--[^\n]*\n)*", "", stmt)
            m = _VIEW.match(body)
            if m:
                out[m[1]] = (rel, stmt)
    return out


def _view_of(rel: str, old: str) -> tuple[str, str]:
    """(view name, live statement) of the migration statement holding ``old``; that statement
    must be the view's live definition (a superseded one is run by nothing)."""
    (stmt,) = [s for s in _statements(rel) if old in s]
    name = _VIEW.search(stmt)[1]
    assert live_views()[name] == (rel, stmt), f"{name}: {rel} holds a superseded definition"
    return name, stmt


def _readers_of_views(names: set[str]) -> set[str]:
    """The views that read any of ``names``, themselves included (transitively)."""
    views = {n: stmt for n, (_, stmt) in live_views().items()}
    seen = set(names)
    while True:
        more = {v for v, stmt in views.items() if v not in seen
                and any(re.search(rf"\b{n}\b", stmt.split(" AS ", 1)[1]) for n in seen)}
        if not more:
            return seen
        seen |= more


def _detectors():
    return detectors_pkg.DETECTORS  # looked up each time: a mutation may replace the tuple


def _codes_reading(names: set[str]) -> set[str]:
    return {d.code for d in _detectors() if any(re.search(rf"\b{n}\b", getattr(d, "sql", "")) for n in names)}


_ACTOR_VIEWS = {"spark_task_attempts", "file_attempts"}  # what forensics/actors.py reads


@dataclass(frozen=True)
class Target:
    codes: frozenset  # detectors whose probes judge it
    rows_only: bool = False  # only the matrix rows see it (actor objects)
    reingest: bool = False  # it runs at ingest


def target(rel: str, old: str) -> Target:
    if rel.endswith(".sql"):
        name, _ = _view_of(rel, old)
        views = _readers_of_views({name})
        codes = _codes_reading(views)
        if views & _ACTOR_VIEWS:
            codes |= {"actors"}
        return Target(frozenset(codes))
    if rel == PATHS:
        return Target(frozenset(d.code for d in _detectors()), reingest=True)
    if rel == ACTORS:
        return Target(frozenset({"actors"}), rows_only=True)
    if rel == BASE:
        return Target(frozenset(d.code for d in _detectors()))
    if rel == STORAGE:
        return Target(frozenset({"CS101", "CS103", "CS107"}))
    if rel == FILE_ATTEMPTS:
        return Target(frozenset({"CS101", "CS105", "CS109", "actors"}))
    module = _module_name(rel)
    return Target(frozenset(d.code for d in _detectors() if d.__module__ == module))


# --- applying a mutation --------------------------------------------------------------------

def _module_name(rel: str) -> str:
    return "commitsleuth." + rel[:-3].replace("/", ".")


def _ours(name: str) -> bool:
    return name.startswith(("commitsleuth", "test_", "matrix")) and name != __name__


def _rebind(mp, module: types.ModuleType, fresh: dict) -> None:
    """The fresh module's names replace the module's own, and every copy of them other modules
    imported (``from x import y``), tuples of them included (the detectors' registry)."""
    changed = []
    for name, new in fresh.items():
        if name.startswith("__") or isinstance(new, types.ModuleType):
            continue
        old = module.__dict__.get(name)
        if old is new or (isinstance(new, (str, int, float, frozenset)) and old == new):
            continue
        mp.setattr(module, name, new, raising=False)
        if old is not None:
            changed.append((old, new))
    if not changed:
        return
    swap = {id(old): new for old, new in changed}
    for mod in [m for n, m in list(sys.modules.items()) if _ours(n) and m is not module and m is not None]:
        for attr, value in list(vars(mod).items()):
            if id(value) in swap and any(value is old for old, _ in changed):
                mp.setattr(mod, attr, swap[id(value)])
            elif isinstance(value, tuple) and any(id(v) in swap for v in value):
                mp.setattr(mod, attr, tuple(swap.get(id(v), v) for v in value))


def _run_fresh(rel: str, source: str) -> dict:
    name = _module_name(rel)
    ns = {"__name__": name, "__package__": name.rpartition(".")[0], "__file__": str(REPO / rel),
          "__builtins__": __builtins__}
    exec(compile(source, str(REPO / rel), "exec"), ns)
    return ns


def _importers(rel: str) -> list[str]:
    """The forensics modules whose source imports ``rel``'s module (they build SQL from it)."""
    name = _module_name(rel)
    short = name.rsplit(".", 1)[1]
    out = []
    for path in sorted((REPO / "forensics").rglob("*.py")):
        dep = str(path.relative_to(REPO))
        if dep == rel or path.name == "__init__.py":
            continue
        text = path.read_text(encoding="utf-8")
        if re.search(rf"^from {re.escape(name)} import|^from {re.escape(name.rpartition('.')[0])} import .*\b{short}\b",
                     text, re.M):
            out.append(dep)
    return out


def apply_python(mp, rel: str, old: str, new: str) -> None:
    module = importlib.import_module(_module_name(rel))
    _rebind(mp, module, _run_fresh(rel, _text(rel).replace(old, new, 1)))
    for dep in _importers(rel):  # built at import from what changed: built again
        _rebind(mp, importlib.import_module(_module_name(dep)), _run_fresh(dep, _text(dep)))


@contextmanager
def view_mutated(store: Store, mutation):
    rel, old, new = mutation
    if not rel.endswith(".sql"):
        yield
        return
    _, stmt = _view_of(rel, old)
    replace = lambda s: re.sub(r"\bCREATE\s+VIEW\b", "CREATE OR REPLACE VIEW", s, count=1)  # noqa: E731
    store.con.execute(replace(stmt.replace(old, new, 1)))
    try:
        yield
    finally:
        store.con.execute(replace(stmt))


# --- the probes -------------------------------------------------------------------------------

@dataclass
class Probe:
    name: str
    codes: tuple
    case: dict | None = None
    row: R.Row | None = None

    def load(self, store: Store, root: Path):
        if self.case is not None:
            return load_case(store, root / "logs", self.case)
        listing = TM.load_row(store, self.row, root)
        if listing:
            record_listing(store, str(listing), walk_local(str(listing)))
        return None

    def fails(self, store: Store, root: Path, ctx) -> bool:
        """Whether the probe's test fails over the store as the code now is."""
        try:
            if self.case is not None:
                check(store, root / "logs", ctx, self.case, analyze_mod.analyze(store, list(self.codes)))
                return False
            wrong = TM.verdict(self.row, analyze_mod.analyze(store, list(self.codes)))
            return bool(wrong) != (self.row.id in TM.EXPECTED_TO_FAIL_TODAY)
        except duckdb.Error:
            raise  # the mutated SQL must still run: an error is no kill
        except Exception:  # noqa: BLE001 - a wrong finding, or one the detector cannot word
            return True


def probes() -> list[Probe]:
    out = [Probe(f"case {code}: {case['name']}", (code,), case=case)
           for code, case in (p.values for p in cases_of())]
    out += [Probe(f"row {row.id}", row.codes, row=row) for row in R.ROWS]
    return out


def relevant(t: Target, all_probes: list[Probe]) -> list[Probe]:
    rows_for_actors = "actors" in t.codes
    return [p for p in all_probes
            if (p.row is not None or not t.rows_only)
            and (set(p.codes) & t.codes or (rows_for_actors and p.row is not None))]


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """Each probe's store, loaded once with the code unmutated, and kept open."""
    out = {}
    with ExitStack() as stack:
        all_probes = probes()
        for i, probe in enumerate(all_probes):
            root = tmp_path_factory.mktemp(f"probe{i}")
            store = stack.enter_context(Store(root / "probe.duckdb"))
            store.con.execute("SET threads = 1")  # many tiny queries: no thread pool to wake
            ctx = probe.load(store, root)
            assert not probe.fails(store, root, ctx), f"{probe.name} fails unmutated"
            out[probe.name] = (store, root, ctx)
        yield out, all_probes


_KILLERS: Counter = Counter()  # probe name -> mutations it killed: the likeliest killers run first


def kills(mutation, stores_and_probes, tmp_path: Path) -> list[str]:
    """The probes that fail under the mutation (the first only, unless COMMITSLEUTH_ALL_KILLS)."""
    cache, all_probes = stores_and_probes
    rel, old, _ = mutation
    t = target(rel, old)
    out = []
    ordered = sorted(relevant(t, all_probes), key=lambda p: -_KILLERS[p.name])
    for i, probe in enumerate(ordered):
        if out and not os.environ.get("COMMITSLEUTH_ALL_KILLS"):
            break
        try:
            check(store, logs, labels, case, ordered(_labelled(store, _detector(code)().run(store.con))))
        except duckdb.Error:
            raise  # the mutated SQL must still run: an error is no kill
        except Exception:  # a wrong finding, or one the detector cannot word
            kills.append(case["name"])
    return kills


def _labelled(store, findings: list) -> list:
    """The findings with their attempts named as analyze names them (one label per attempt,
    issue 32), which the cases expect."""
    for f, objects in zip(findings, actor_objects(store.con, findings)):
        relabel(f, objects)
    return findings


def _text(target: str) -> str:
    if target.startswith("storage."):
        return getattr(storage, target.split(".", 1)[1])
    return _detector(target).sql


def test_every_mutation_is_sound():
    ids = [mutation_id(m) for m in MUTATIONS]
    assert len(set(ids)) == len(ids), "two mutations with one id"
    assert SURVIVING_TODAY <= set(ids)
    assert set(EQUIVALENT) <= set(MUTATIONS)
    for rel, old, new in MUTATIONS:
        assert _text(rel).count(old) == 1, (rel, old)
        assert old != new, (rel, old)
        assert target(rel, old).codes, f"nothing reads {rel}: {old!r}"


def test_every_view_module_and_detector_is_mutated():
    """Each view a detector reads, each Python module of the rules they read, and each detector
    has mutations."""
    files = {rel for rel, _, _ in MUTATIONS}
    for d in _detectors():
        assert sys.modules[d.__module__].__file__.endswith(tuple(f for f in files if "/detectors/" in f)), d.code
    assert {STORAGE, FILE_ATTEMPTS, PATHS, ACTORS, BASE} <= files
    views = {name for rel, old, _ in MUTATIONS if rel.endswith(".sql") for name in [_view_of(rel, old)[0]]}
    used = {v for v in live_views() if any(re.search(rf"\b{v}\b", getattr(d, "sql", "")) for d in _detectors())}
    for v in used:  # a view a detector reads, and every view it reads
        deps = {w for w in live_views() if v in _readers_of_views({w})}
        assert deps <= views | {"timeline"}, (v, deps - views)


@pytest.mark.parametrize("mutation", APPLIED, ids=[mutation_id(m) for m in APPLIED])
def test_mutation_is_killed(stores, monkeypatch, tmp_path, mutation):
    rel, old, new = mutation
    if not rel.endswith(".sql"):
        apply_python(monkeypatch, rel, old, new)
    killed = kills(mutation, stores, tmp_path)
    monkeypatch.undo()
    print(f"\n{mutation_id(mutation)}: killed by {killed}")
    if mutation_id(mutation) in SURVIVING_TODAY:
        assert not killed, f"killed now by {killed}: take it off SURVIVING_TODAY"
    else:
        assert killed, f"no probe of {sorted(target(rel, old).codes)} fails with {mutation_id(mutation)}"
