"""Every condition of CS101, CS103, CS104 and CS111 (and of the storage queries CS103 shares with
CS107) is needed: removing or negating it fails a case.

Each mutation replaces one exact fragment of a detector's SQL (or of a query of
forensics/storage.py) and runs the YAML cases (forensics/detectors/cases/*.yml) of the detectors
that use it over stores loaded once; at least one case must fail. A mutation whose SQL no longer
runs is an error, not a kill. Conditions that only narrow rows early (the result is the same
without them, by construction) are negated instead of removed: negated, they must lose a finding.
Run with ``-s`` to see which cases kill each mutation.
"""

from __future__ import annotations

import os
from contextlib import ExitStack

import duckdb
import pytest

from commitsleuth.forensics import storage
from commitsleuth.forensics.actors import actor_objects
from commitsleuth.forensics.analyze import ordered, prepared
from commitsleuth.forensics.attempt_labels import relabel
from commitsleuth.forensics.detectors import DETECTORS
from commitsleuth.forensics.remedies import fit_findings
from commitsleuth.store import Store

from test_detector_cases import cases_of, check, load_case

CODES = ("CS101", "CS103", "CS104", "CS107", "CS111")
# a module constant of forensics/storage.py is run by the detectors that call storage.annotate
STORAGE_USERS = ("CS103", "CS107")

# CS101's storage arm from its key to its HAVING (the key is both selected and grouped on)
_SQL = storage.DOUBLE_WRITES_SQL
_KEYED = _SQL[_SQL.index("coalesce(app_id, job_id) AS app_id"):_SQL.index("HAVING")]
# CS104's loads of one file name: their key is both selected and grouped on
_SQL = next(d for d in DETECTORS if d.code == "CS104").sql
_BY_NAME = _SQL[_SQL.index("by_name AS ("):_SQL.index("HAVING count(*) > 1")]

# (target, exact fragment, replacement). target: a detector code (its ``sql``) or
# ``storage.<NAME>`` (a query of forensics/storage.py the storage-aware detectors run).
MUTATIONS: list[tuple[str, str, str]] = [
    # --- CS101 double-commit: removals cancel a file ---
    ("CS101", "kind IN ('dedup_remove', 'delete') AND file_name", "kind IN ('dedup_remove') AND file_name"),
    ("CS101", "kind IN ('dedup_remove', 'delete') AND file_name", "kind IN ('delete') AND file_name"),
    # negated: a removal without a file name matches no file in the ANTI JOIN anyway
    ("CS101", "AND file_name IS NOT NULL\n", "AND file_name IS NULL\n"),
    ("CS101", "ON r.location = n.location", "ON true"),
    ("CS101", "AND r.partition_spec IS NOT DISTINCT FROM n.partition_spec", ""),
    ("CS101", "AND r.file_name = n.file_name", ""),
    # files named after their task and attempt
    # negated: the suspects' SEMI JOIN keys on location and task, which drops NULLs anyway
    ("CS101", "WHERE file_task IS NOT NULL AND location", "WHERE file_task IS NULL AND location"),
    ("CS101", "AND location IS NOT NULL AND write_uuid", "AND location IS NULL AND write_uuid"),
    ("CS101", "AND write_uuid IS NULL", ""),
    ("CS101", "(kind = 'rename' OR (kind = 'file'", "(false OR (kind = 'file'"),
    ("CS101", "OR (kind = 'file' AND file_attempt", "OR (true AND file_attempt"),
    ("CS101", "AND file_attempt IS NOT NULL AND NOT is_temp", "AND true AND NOT is_temp"),
    ("CS101", "AND attempt_id IS NOT NULL AND NOT is_temp))", "AND attempt_id IS NOT NULL))"),
    ("CS101", "WHERE file_attempt IS DISTINCT FROM 0 OR attempt_id", "WHERE true OR attempt_id"),
    ("CS101", "WHERE file_attempt IS DISTINCT FROM 0 OR attempt_id", "WHERE false OR attempt_id"),
    ("CS101", "OR attempt_id NOT LIKE '%\\_0' ESCAPE '\\'\n", "OR false\n"),
    ("CS101", "ON f.location = surviving.location AND", "ON true AND"),
    ("CS101", "AND f.partition_spec IS NOT DISTINCT FROM surviving.partition_spec", ""),
    ("CS101", "AND f.file_task = surviving.file_task", ""),
    ("CS101", "HAVING count(DISTINCT coalesce(file_attempt, -1)) > 1 OR", "HAVING false OR"),
    ("CS101", "OR count(DISTINCT r.attempt_id) > 1", ""),
    # commits and Spark attempt ends
    ("CS101", "WHERE e.attempt_id IS NOT NULL\n      AND (e.kind = 'task_commit'", "WHERE true\n      AND (e.kind = 'task_commit'"),
    ("CS101", "AND (e.kind = 'task_commit' OR", "AND (false OR"),
    ("CS101", "(e.kind = 'attempt_end' AND e.status = 'success' AND e.size > 0)", "(false)"),
    ("CS101", "AND e.status = 'success' AND e.size > 0", "AND e.size > 0"),
    ("CS101", "AND e.size > 0)", ")"),
    ("CS101", "WHERE NOT (coalesce(stage_attempt, 0) = 0", "WHERE NOT (true"),
    ("CS101", "THEN attempt_no = 0", "THEN true"),
    ("CS101", "ELSE attempt_id LIKE '%\\_0' ESCAPE '\\' END", "ELSE true END"),
    # joins narrowed to one application: the GROUP BY keys on it too, so they are negated
    ("CS101", "ON c.task_id = s.task_id AND c.app_id IS NOT DISTINCT FROM s.app_id",
     "ON c.task_id = s.task_id AND c.app_id IS DISTINCT FROM s.app_id"),
    ("CS101", "SELECT c.event_id, s.run, s.task FROM commit_rows c JOIN suspects s\n      ON c.task_id = s.task_id",
     "SELECT c.event_id, s.run, s.task FROM commit_rows c JOIN suspects s\n      ON false"),
    ("CS101", "ON s.task_id IS NULL AND", "ON s.task_id IS NOT NULL AND"),  # negated: a task id never looks like attempt_…
    ("CS101", "AND c.attempt_id = 'attempt' || s.task[5:] || '_0'", ""),
    ("CS101", "'_0'\n     AND c.app_id IS NOT DISTINCT FROM s.app_id", "'_0'\n     AND c.app_id IS DISTINCT FROM s.app_id"),
    ("CS101", "HAVING count(DISTINCT e.attempt_id) > 1", "HAVING count(DISTINCT e.attempt_id) > 0"),
    # files tied to Spark attempts: the rules live in the file_attempts view (migration 0018),
    # whose conditions have decoy cases in partial_output.yml and leftover_temp.yml; CS101 only
    # reads the view, so its text here holds no tie condition to mutate
    # where a renaming attempt ran (the Tez AM's "TaskAttempt: [...] submitted ... on NM")
    ("CS101", "WHERE s.kind = 'attempt_start' AND s.host IS NOT NULL", "WHERE s.host IS NOT NULL"),
    ("CS101", "WHERE s.kind = 'attempt_start' AND s.host IS NOT NULL", "WHERE s.kind = 'attempt_start'"),
    ("CS101", "LEFT JOIN started st ON st.attempt_id = r.attempt_id", "LEFT JOIN started st ON true"),
    # the storage's records (forensics/storage.py)
    ("CS101", "WHERE kind IN ('file_create', 'rename') AND NOT is_temp", "WHERE kind IN ('file_create', 'rename', 'delete') AND NOT is_temp"),
    ("CS101", "WHERE kind IN ('file_create', 'rename') AND NOT is_temp", "WHERE kind IN ('rename') AND NOT is_temp"),
    ("CS101", "WHERE kind IN ('file_create', 'rename') AND NOT is_temp", "WHERE kind IN ('file_create', 'rename')"),
    # keyed on the application (else the job): not keyed at all, keyed on the application only
    (("CS101", _KEYED, _KEYED.replace("coalesce(app_id, job_id) AS app_id", "any_value(coalesce(app_id, job_id)) AS app_id")
      .replace("GROUP BY coalesce(app_id, job_id), ", "GROUP BY "))),
    ("CS101", _KEYED, _KEYED.replace("coalesce(app_id, job_id)", "app_id")),
    ("CS101", "HAVING count(DISTINCT attempt_id) > 1\n", "HAVING count(DISTINCT attempt_id) > 0\n"),
    # --- CS103 racing-loaders: two windows on one partition overlap ---
    ("CS103", "ON a.pkey = b.pkey AND a.part_spec = b.part_spec", "ON a.part_spec = b.part_spec"),
    ("CS103", "ON a.pkey = b.pkey AND a.part_spec = b.part_spec", "ON a.pkey = b.pkey"),
    ("CS103", "AND a.writer <> b.writer\n", "\n"),
    ("CS103", "AND a.t0 <= b.t1 AND", "AND"),
    ("CS103", "AND b.t0 <= a.t1", ""),
    # ... or two queries' windows of the files each renamed into the partition (the storage's
    # record alone); moves_at's own conditions only narrow (moves filters again), but for its count
    ("CS103", "HAVING count(DISTINCT query_id) > 1", "HAVING count(DISTINCT query_id) <= 1"),  # negated
    ("CS103", "WHERE kind = 'rename' AND query_id IS NOT NULL AND partition_spec", "WHERE kind <> 'rename' AND query_id IS NOT NULL AND partition_spec"),  # negated
    ("CS103", "AND m.writer = s.writer", ""),
    ("CS103", "ON x.pkey = y.pkey AND x.part_spec = y.part_spec", "ON x.part_spec = y.part_spec"),
    ("CS103", "ON x.pkey = y.pkey AND x.part_spec = y.part_spec", "ON x.pkey = y.pkey"),
    ("CS103", "AND x.writer <> y.writer\n", "\n"),
    ("CS103", "AND x.t0 <= y.t1 AND", "AND"),
    ("CS103", "AND y.t0 <= x.t1", ""),
    # a delete by one writer after another writer's load
    ("CS103", "ON d.pkey = l.pkey AND d.part_spec = l.part_spec", "ON d.part_spec = l.part_spec"),
    ("CS103", "ON d.pkey = l.pkey AND d.part_spec = l.part_spec", "ON d.pkey = l.pkey"),
    ("CS103", "AND d.writer <> l.writer AND l.ts < d.ts", "AND l.ts < d.ts"),
    ("CS103", "AND d.writer <> l.writer AND l.ts < d.ts", "AND d.writer <> l.writer"),
    ("CS103", "WHERE d.kind = 'delete' AND", "WHERE true AND"),
    ("CS103", "AND l.kind = 'load'", ""),
    ("CS103", "SEMI JOIN racing USING (pkey, part_spec)", "ANTI JOIN racing USING (pkey, part_spec)"),  # narrowing: negated
    # the finding: the racing writers' steps, the loss joined
    ("CS103", "JOIN racing r ON r.pkey = s.pkey AND", "JOIN racing r ON true AND"),
    ("CS103", "AND r.part_spec = s.part_spec AND r.writer = s.writer", "AND r.writer = s.writer"),
    ("CS103", "AND r.writer = s.writer", ""),
    ("CS103", "LEFT JOIN loss l ON l.pkey = s.pkey AND", "LEFT JOIN loss l ON true AND"),
    ("CS103", "AND l.part_spec = s.part_spec\nGROUP BY", "\nGROUP BY"),
    ("CS103", "CASE WHEN any_value(l.deleters) IS NOT NULL THEN 'critical' END", "'critical'"),
    ("CS103", "CASE WHEN any_value(l.deleters) IS NOT NULL THEN 'critical' END", "NULL"),
    # --- CS104 same-name-overwrite: a line's query ---
    # negated: which lines start a query (a query-less start in a threaded log never comes between
    # a query and its load in the logs we read)
    ("CS104", "WHERE kind = 'query_start' AND ts IS NOT NULL\n", "WHERE kind = 'query_end' AND ts IS NOT NULL\n"),
    ("CS104", "AND (query_id IS NOT NULL OR thread IS NULL)", "AND NOT (query_id IS NOT NULL OR thread IS NULL)"),
    ("CS104", "ON q.source_id = l.source_id AND q.thread", "ON true AND q.thread"),
    ("CS104", "AND q.thread = coalesce(l.thread, '') AND", "AND"),
    ("CS104", "CASE WHEN q.line_no IS NOT NULL THEN 'query at line ' || q.line_no END", "NULL"),
    # the loads and what makes one an OVERWRITE
    ("CS104", "coalesce(l.detail->>'overwrite', 'false') = 'true'\n", "false\n"),
    ("CS104", "OR coalesce(regexp_matches(q.raw, '(?i)\\bOVERWRITE\\b'), false) AS overwrite", "AS overwrite"),
    ("CS104", "(?i)\\bOVERWRITE\\b", "(?i)OVERWRITE"),
    ("CS104", "WHERE l.kind = 'load' AND", "WHERE true AND"),
    # negated: a load line always names its table
    ("CS104", "AND coalesce(l.part_location, l.part_table) IS NOT NULL", "AND coalesce(l.part_location, l.part_table) IS NULL"),
    ("CS104", "NOT regexp_matches(coalesce(l.path, ''),", "NOT regexp_matches('',"),
    # two loads of one file name
    ("CS104", "WHERE NOT overwrite AND path IS NOT NULL", "WHERE path IS NOT NULL"),
    ("CS104", "WHERE NOT overwrite AND path IS NOT NULL", "WHERE NOT overwrite"),
    ("CS104", _BY_NAME, _BY_NAME.replace("part_spec AS partition_spec", "any_value(part_spec) AS partition_spec")
     .replace("GROUP BY coalesce(part_location, part_table), part_spec, file", "GROUP BY coalesce(part_location, part_table), file")),
    ("CS104", _BY_NAME, _BY_NAME.replace("table_name, file,", "table_name, any_value(file) AS file,")
     .replace("GROUP BY coalesce(part_location, part_table), part_spec, file", "GROUP BY coalesce(part_location, part_table), part_spec")),
    ("CS104", "GROUP BY coalesce(part_location, part_table), part_spec, file", "GROUP BY part_spec, file"),
    ("CS104", "HAVING count(*) > 1", "HAVING count(*) > 0"),
    # the stats arm
    ("CS104", "WHERE kind = 'stats' AND part_spec IS NOT NULL", "WHERE kind <> 'stats' AND part_spec IS NOT NULL"),  # negated
    ("CS104", "AND detail->>'num_files' IS NOT NULL AND detail->>'total_size' IS NOT NULL",
     "AND detail->>'total_size' IS NOT NULL"),
    ("CS104", "AND detail->>'num_files' IS NOT NULL AND detail->>'total_size' IS NOT NULL",
     "AND detail->>'num_files' IS NOT NULL"),
    ("CS104", "SELECT * FROM stats s WHERE s.source_id = l.source_id AND s.part_table = l.part_table\n          AND s.part_spec = l.part_spec AND s.ts >= l.ts",
     "SELECT * FROM stats s WHERE true AND s.part_table = l.part_table\n          AND s.part_spec = l.part_spec AND s.ts >= l.ts"),
    ("CS104", "AND s.part_spec = l.part_spec AND s.ts >= l.ts", "AND s.ts >= l.ts"),
    ("CS104", "AND s.part_spec = l.part_spec AND s.ts >= l.ts", "AND s.part_spec = l.part_spec"),
    ("CS104", "AND s.part_spec = l.part_spec AND s.ts < l.ts", "AND s.part_spec = l.part_spec"),
    ("CS104", "SELECT * FROM stats s WHERE s.source_id = l.source_id AND s.part_table = l.part_table\n          AND s.part_spec = l.part_spec AND s.ts < l.ts",
     "SELECT * FROM stats s WHERE true AND s.part_table = l.part_table\n          AND s.part_spec = l.part_spec AND s.ts < l.ts"),
    ("CS104", "AND s.part_table = l.part_table\n          AND s.part_spec = l.part_spec AND s.ts >= l.ts", "\n          AND s.part_spec = l.part_spec AND s.ts >= l.ts"),
    ("CS104", "AND s.part_table = l.part_table\n          AND s.part_spec = l.part_spec AND s.ts < l.ts", "\n          AND s.part_spec = l.part_spec AND s.ts < l.ts"),
    ("CS104", "AND s.part_spec = l.part_spec AND s.ts < l.ts", "AND s.ts < l.ts"),
    ("CS104", "ORDER BY s.ts, s.event_id LIMIT 1", "ORDER BY s.ts DESC, s.event_id LIMIT 1"),
    ("CS104", "ORDER BY s.ts DESC, s.event_id DESC LIMIT 1", "ORDER BY s.ts, s.event_id LIMIT 1"),
    ("CS104", "    WHERE NOT l.overwrite\n", "\n"),
    ("CS104", "WHERE files1 <= files0 AND size1 <> size0", "WHERE size1 <> size0"),
    ("CS104", "WHERE files1 <= files0 AND size1 <> size0", "WHERE files1 <= files0"),
    ("CS104", "WHERE NOT EXISTS (SELECT 1 FROM by_name n WHERE n.table_name = b.table_name\n                  AND n.partition_spec = b.partition_spec)", ""),
    ("CS104", "WHERE n.table_name = b.table_name\n", "WHERE true\n"),
    ("CS104", "AND n.partition_spec = b.partition_spec)", ")"),
    # --- CS111 manifest-mismatch: which markers are manifests ---
    ("CS111", "WHERE kind = 'file' AND base_name(file_name) = '_SUCCESS'", "WHERE kind <> 'file' AND base_name(file_name) = '_SUCCESS'"),  # negated
    ("CS111", "AND base_name(file_name) = '_SUCCESS' AND location", "AND base_name(file_name) <> '_SUCCESS' AND location"),  # negated
    ("CS111", "AND location IS NOT NULL\n      AND json_array_length", "AND location IS NULL\n      AND json_array_length"),  # negated
    ("CS111", "AND json_array_length(detail->'manifest'->'filenames') > 0", ""),
    ("CS111", "AND coalesce(detail->'manifest'->>'success', 'true') <> 'false'", ""),
    # the files of the same listing, data files only, paths without scheme and authority
    ("CS111", "regexp_replace(unnest(names), '^[A-Za-z][A-Za-z0-9+.-]*:(//[^/]*)?', '')", "unnest(names)"),
    ("CS111", "regexp_replace(f.path, '^[A-Za-z][A-Za-z0-9+.-]*:(//[^/]*)?', '')", "f.path"),
    ("CS111", "ON f.source_id IS NOT DISTINCT FROM m.source_id AND", "ON true AND"),
    ("CS111", "AND f.location = m.location\n", "\n"),
    ("CS111", "WHERE f.kind = 'file'  --", "WHERE f.kind <> 'file'  --"),  # negated
    ("CS111", "AND NOT starts_with(base_name(f.file_name), '_')", ""),
    ("CS111", "AND NOT starts_with(base_name(f.file_name), '.')", ""),
    ("CS111", "AND NOT regexp_matches(coalesce(f.path, ''),", "AND NOT regexp_matches('',"),
    # extra, missing and what makes a finding
    ("CS111", "WHERE len(m.names) < 100", "WHERE true"),
    ("CS111", "AND (d.ts > m.ts\n", "AND (false\n"),
    ("CS111", "OR d.write_uuid IN (SELECT c.write_uuid FROM committed c WHERE c.manifest_id = d.manifest_id))", ")"),
    ("CS111", "AND (d.ts > m.ts\n           OR d.write_uuid IN (SELECT c.write_uuid FROM committed c WHERE c.manifest_id = d.manifest_id))", ""),
    ("CS111", "WHERE c.manifest_id = d.manifest_id))", "))"),
    ("CS111", "AND NOT EXISTS (SELECT 1 FROM listed l WHERE l.manifest_id = d.manifest_id AND l.key = d.key)", ""),
    ("CS111", "WHERE NOT EXISTS (SELECT 1 FROM on_disk d WHERE d.manifest_id = l.manifest_id AND d.key = l.key)", ""),
    ("CS111", "WHERE j.extra IS NOT NULL OR j.missing IS NOT NULL", ""),
    ("CS111", "CASE WHEN j.missing IS NOT NULL THEN 'critical' END", "NULL"),
    ("CS111", "CASE WHEN j.missing IS NOT NULL THEN 'critical' END", "'critical'"),
    # --- forensics/storage.py, shared by CS103 and CS107: who deleted it, can the trash restore it ---
    ("storage.DELETES_SQL", "WHERE event_id IN (SELECT unnest(?::BIGINT[])) AND",
     "WHERE (event_id IN (SELECT unnest(?::BIGINT[])) OR true) AND"),
    ("storage.DELETES_SQL", "AND kind = 'delete' AND", "AND"),
    ("storage.DELETES_SQL", """AND detail LIKE '%"storage":%'""", ""),
    ("storage.EMPTIED_SQL", "WHERE d.ts >= $ts AND", "WHERE"),
    ("storage.EMPTIED_SQL", """AND d.detail LIKE '%"cmd": "delete"%'""", ""),
    ("storage.EMPTIED_SQL", "AND (starts_with($trash, d.path || '/') OR", "AND (false OR"),
    ("storage.EMPTIED_SQL", "starts_with($trash, d.path || '/')", "starts_with($trash, d.path)"),
    ("storage.EMPTIED_SQL", "OR d.path = $trash", "OR false"),
    ("storage.EMPTIED_SQL", "WHERE c.path = $current AND", "WHERE (c.path = $current OR true) AND"),
    ("storage.EMPTIED_SQL", "AND c.target_path = d.path AND", "AND"),
    ("storage.EMPTIED_SQL", "AND c.ts >= $ts AND", "AND"),
    ("storage.EMPTIED_SQL", "AND c.ts <= d.ts)", ")"),
]


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """Every case of the three detectors ingested once into its own store, views prepared."""
    out: dict[str, list] = {code: [] for code in CODES}
    with ExitStack() as stack:
        for code in CODES:
            for i, param in enumerate(cases_of(code)):
                _, case = param.values
                root = tmp_path_factory.mktemp(f"{code}-{i}")
                store = stack.enter_context(Store(root / "case.duckdb"))
                labels = load_case(store, root / "logs", case)
                stack.enter_context(prepared(store))
                store.con.execute("SET threads = 1")  # a hundred tiny queries: no thread pool to wake
                out[code].append((store, root / "logs", labels, case))
                assert not _kills(code, out[code][-1:]), case["name"]  # unmutated, every case passes
        yield out


def _detector(code: str):
    return next(d for d in DETECTORS if d.code == code)


def _kills(code: str, stores: list, first: bool = False) -> list[str]:
    """The names of the cases whose expectations the detector (as it is now) fails (the first
    one only, with ``first``; COMMITSLEUTH_ALL_KILLS=1 lists them all)."""
    kills = []
    for store, logs, labels, case in stores:
        if first and kills and not os.environ.get("COMMITSLEUTH_ALL_KILLS"):
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
    issue 32), their actor objects and their fitted cause and remedy (analyze's finish), which
    the cases expect."""
    for f, objects in zip(findings, actor_objects(store.con, findings)):
        f.actor_objects = objects
        relabel(f, objects)
    fit_findings(store.con, findings)
    return findings


def _text(target: str) -> str:
    if target.startswith("storage."):
        return getattr(storage, target.split(".", 1)[1])
    return _detector(target).sql


def test_every_fragment_occurs_once():
    for target, fragment, _ in MUTATIONS:
        assert _text(target).count(fragment) == 1, (target, fragment)


@pytest.mark.parametrize("target,fragment,replacement", MUTATIONS,
                         ids=[f"{t}: {f.strip()[:60]} -> {r.strip()[:30]}" for t, f, r in MUTATIONS])
def test_mutation_is_killed(loaded, monkeypatch, target, fragment, replacement):
    text = _text(target)
    assert text.count(fragment) == 1, fragment
    if target.startswith("storage."):
        monkeypatch.setattr(storage, target.split(".", 1)[1], text.replace(fragment, replacement))
        codes = STORAGE_USERS
    else:
        monkeypatch.setattr(_detector(target), "sql", text.replace(fragment, replacement))
        codes = (target,)
    kills = [k for code in codes for k in _kills(code, loaded[code], first=True)]
    print(f"\n{target}: {fragment.strip()!r} -> {replacement.strip()!r}: killed by {kills}")
    assert kills, f"no case of {codes} fails without {fragment!r}"
