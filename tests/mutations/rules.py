"""Mutations of the Python rules the detectors read (tests/mutations/__init__.py says the format):
paths (at ingest), actors, storage, file ties, attempt labels, remedies, the detectors' base and
the table writers (CS201, CS202)."""

from commitsleuth.forensics.storage import DOUBLE_WRITES_SQL

PATHS, ACTORS = "forensics/paths.py", "forensics/actors.py"
STORAGE, FILE_ATTEMPTS = "forensics/storage.py", "forensics/file_attempts.py"
LABELS, REMEDIES = "forensics/attempt_labels.py", "forensics/remedies.py"
BASE = "forensics/detectors/base.py"
TABLE_WRITERS = "forensics/table_writers.py"
# CS101's storage arm from its key to its HAVING (the key is both selected and grouped on)
_KEYED = DOUBLE_WRITES_SQL[DOUBLE_WRITES_SQL.index("coalesce(app_id, job_id) AS app_id"):DOUBLE_WRITES_SQL.index("HAVING")]

MUTATIONS: list[tuple] = [
    # --- forensics/paths.py: every path to (location, partition, file), at ingest
    (PATHS, "prefix = \"s3a:\" + rest", "pass"),
    # (round 8: PathInfo.temp, read by tests only, is gone, and with it the equivalent mutation of
    # its dot-file rule; the store's is_temp and base.TEMP_LAYER judge temp layers from the path)
    (PATHS, "return f\"{m['db']}.{m['table']}\".lower()", "return f\"{m['db']}.{m['table']}\""),
    (PATHS, "return f\"default.{m['table']}\".lower() if m else None", "return None"),
    (PATHS, "file_attempt=int(m[\"attempt\"]) if m[\"attempt\"] is not None else None,", "file_attempt=None,"),
    # (round 7: the mid-path k=v rule now also keeps the segment in the location; its one
    # mutation, 'parts = []' -> pass, became these two)
    (PATHS, "mid, parts = parts, []  # a k=v segment in the middle of a path is not a partition", "mid = []"),
    (PATHS, "            kept.extend(mid)\n", "            pass\n"),
    (PATHS, "kept.pop()  # <table>/.hive-staging_…/-ext-10000 publishes into <table>", "pass"),
    (PATHS, "after_temporary = seg == \"_temporary\"", "after_temporary = False"),
    # (round 8: a partition's subdirectory stays in its files' names; the UNION ALL rule's mutation
    # 'if _UNION_SUBDIR.match(seg): continue' -> never became these)
    (PATHS, "if _UNION_SUBDIR.match(seg) or (parts or sub) and _plain(seg) and not _TABLE_PARENT.match(seg):",
     "if _UNION_SUBDIR.match(seg):"),
    (PATHS, "if _UNION_SUBDIR.match(seg) or (parts or sub) and _plain(seg) and not _TABLE_PARENT.match(seg):",
     "if (parts or sub) and _plain(seg) and not _TABLE_PARENT.match(seg):"),
    (PATHS, "if _UNION_SUBDIR.match(seg) or (parts or sub) and _plain(seg) and not _TABLE_PARENT.match(seg):",
     "if _UNION_SUBDIR.match(seg) or (parts or sub) and _plain(seg):"),
    (PATHS, "kept.extend(parts + [s for s in sub if not _UNION_SUBDIR.match(s)])\n                parts, sub = [], []",
     "parts, sub = [], []"),
    (PATHS, "    if plain and (is_dir or not parts):", "    if plain and not parts:"),
    # (round 8: quotes come off only in Hive's PARTITION (k='v') clause and value lists, a whole
    # value's pair; the mutation of the old strip became these)
    (PATHS, "out.append(f\"{k.strip()}={_unquote(v.strip()) if quoted else v.strip()}\")", "out.append(f\"{k.strip()}={v.strip()}\")"),
    (PATHS, "quoted = spec.startswith(\"(\")", "quoted = True"),
    (PATHS, "is_dir=ev.kind in (\"publish\", \"dir_create\", \"task_commit\", \"load\")", "is_dir=ev.kind in (\"publish\", \"task_commit\", \"load\")"),
    (PATHS, "path = ev.target_path if ev.kind == \"load\" else ev.target_path or ev.path", "path = ev.target_path or ev.path"),
    (PATHS, "if spec.startswith(\"[\") or \"=\" not in spec:", "if spec.startswith(\"[\"):"),
    (PATHS, "info.update(file_task=m[\"task\"], write_uuid=m[\"uuid\"])", "info.update(file_task=m[\"task\"])"),
    (PATHS, "        elif mr:\n            info.update(file_task=mr[\"task\"])\n", ""),
    (PATHS, "ev.table_name = ev.table_name or table_from_location(ev.location)\n        return ev", "return ev"),
    (PATHS, "ev.partition_spec = \"[\" + \",\".join(str(v) for v in ev.detail[\"values\"]) + \"]\"", "pass"),
    # --- forensics/storage.py: who deleted it, can the trash restore it (CS101, CS103, CS107)
    (STORAGE, "WHERE kind IN ('file_create', 'rename') AND NOT is_temp", "WHERE kind IN ('file_create', 'rename', 'delete') AND NOT is_temp"),
    (STORAGE, "WHERE kind IN ('file_create', 'rename') AND NOT is_temp", "WHERE kind IN ('rename') AND NOT is_temp"),
    (STORAGE, "WHERE kind IN ('file_create', 'rename') AND NOT is_temp", "WHERE kind IN ('file_create', 'rename')"),
    # (round 7: the mutant dropped the key from GROUP BY only and no longer ran - the SELECT names it;
    # the same condition, dropped from both)
    # (round 8: the storage arm reads a subquery now; the key dropped from both places on its new text)
    (STORAGE, _KEYED, _KEYED.replace("coalesce(app_id, job_id) AS app_id", "any_value(coalesce(app_id, job_id)) AS app_id")
     .replace("GROUP BY coalesce(app_id, job_id), ", "GROUP BY ")),
    # the key narrowed to the application alone: a Hive or MR job's writes (no app_id) fall together
    (STORAGE, _KEYED, _KEYED.replace("coalesce(app_id, job_id)", "app_id")),
    (STORAGE, "HAVING count(DISTINCT attempt_id) > 1\n", "HAVING count(DISTINCT attempt_id) > 0\n"),
    # round 8, genB: a YARN restart's second run names its attempts as the first did
    (STORAGE, "    OR count(DISTINCT run) > 1\n", "\n"),
    # round 10, gen10: a record of a two-run group naming no run keeps its application in its label
    (STORAGE, "spark_attempt_label(coalesce(app_id || '_' || run, app_id), stage_id", "spark_attempt_label(app_id || '_' || run, stage_id"),
    (STORAGE, "CASE WHEN count(DISTINCT run) > 1 THEN list(DISTINCT run_label ORDER BY run_label) FILTER (WHERE run_label IS NOT NULL)",
     "CASE WHEN false THEN []"),
    # round 9, store9: a record whose caller context was cut before its TId (no attempt) counts as
    # its run (the old rule, runs of named attempts only, as the mutant); it is named by its run
    # and host; a driver's record (no run) and a record without attempt are no actor
    (STORAGE, "spark_run(detail->>'caller_context', app_id) AS run",
     "CASE WHEN attempt_id IS NOT NULL THEN spark_run(detail->>'caller_context', app_id) END AS run"),
    (STORAGE, "CASE WHEN attempt_id IS NOT NULL\n", "CASE WHEN true\n"),
    (STORAGE, " FILTER (WHERE run_label IS NOT NULL)", ""),
    (STORAGE, " FILTER (WHERE attempt_id IS NOT NULL)", ""),
    (STORAGE, "WHERE event_id IN (SELECT unnest(?::BIGINT[])) AND", "WHERE (event_id IN (SELECT unnest(?::BIGINT[])) OR true) AND"),
    (STORAGE, "AND kind = 'delete' AND", "AND"),
    (STORAGE, "AND detail LIKE '%\"storage\":%'", ""),
    (STORAGE, "WHERE d.ts >= $ts AND", "WHERE"),
    (STORAGE, "AND d.detail LIKE '%\"cmd\": \"delete\"%'", ""),
    (STORAGE, "AND (starts_with($trash, d.path || '/') OR", "AND (false OR"),
    (STORAGE, "starts_with($trash, d.path || '/')", "starts_with($trash, d.path)"),
    (STORAGE, "OR d.path = $trash", "OR false"),
    (STORAGE, "WHERE c.path = $current AND", "WHERE (c.path = $current OR true) AND"),
    (STORAGE, "AND c.target_path = d.path AND", "AND"),
    (STORAGE, "AND c.ts >= $ts AND", "AND"),
    (STORAGE, "AND c.ts <= d.ts)", ")"),
    (STORAGE, "    if detail.get(\"proxy\"):\n        text += f\" (proxy {detail['proxy']})\"\n", ""),
    (STORAGE, "    if detail.get(\"ip\"):\n        text += f\" from {detail['ip']}\"\n", ""),
    (STORAGE, "if row.get(\"query_id\"):", "if False:"),
    (STORAGE, "if row.get(\"job_id\"):", "if False:"),
    (STORAGE, "if storage == \"s3\" and version_id:", "if False:"),
    (STORAGE, "if storage == \"s3\":", "if False:"),
    (STORAGE, "current = None  # not in Current: no checkpoint takes it", "pass"),
    (STORAGE, "current = root + trash[len(root):].split(\"/\", 1)[0] + \"/Current\"", "pass"),
    (STORAGE, "what = paths[0] if len(paths) == 1 else f\"{len(paths)} objects ({paths[0]}, …)\"", "what = paths[0]"),
    # --- forensics/file_attempts.py: a detector's file -> attempt ties (CS101, CS105, CS109)
    (FILE_ATTEMPTS, "    WHERE t.kind = 'spark_attempt'\n)", "\n)",
     "equivalent: the CTE joins spark_task_attempts on a.event_id = t.attempt_event; the only ties of another kind "
     "(hadoop_attempt, migration 0040's file_attempts) take as attempt_event an event whose attempt_id is a Hadoop attempt_… id, "
     "and every spark_task_attempts row is an attempt_start/attempt_end with a stage_id and a task_id 's.i', which only the "
     "Spark parsers write (parsers/messages.py spark task lines, spark_events.py attempt_label, eventlog_fast.py), always "
     "with a Spark name 'task i.a in stage s.a (TID t)': the join already drops those ties"),
    (FILE_ATTEMPTS, "FILTER (WHERE fa.who IS NOT NULL)", ""),
    (FILE_ATTEMPTS, "\"speculative\" if a.get(\"speculative\") else \"not speculative\"", "\"not speculative\""),
    (FILE_ATTEMPTS, "\"inferred from times\" if a.get(\"tie\") == \"inferred\" else None", "None"),
    (FILE_ATTEMPTS, "'executor': a.executor_id,", "'executor': NULL,"),
    (FILE_ATTEMPTS, "f\"one of {a['candidates']} attempts that could have\" if (a.get(\"candidates\") or 1) > 1 else None", "None"),
    (FILE_ATTEMPTS, "WHERE list_contains($ids, t.event_id) AND t.candidates = 1 AND t.kind = 'spark_attempt'",
     "WHERE list_contains($ids, t.event_id) AND t.kind = 'spark_attempt'",
     "equivalent: attempts_of_files is called by no detector and by nothing that words a finding (grep: only "
     "commitsleuth/report/lanes.py, the report's timelines, calls it); the probes run analyze, which never reads it"),
    # --- forensics/actors.py: who a finding names, as objects
    (ACTORS, "    if label in named:\n", "    if False:\n",),
    (ACTORS, "for key in (\"query_id\", \"attempt_id\", \"app_id\", \"job_id\", \"run\"):", "for key in (\"query_id\",):"),
    # round 9, runs9: the run a storage record's caller context names (a YARN restart) picks its label
    (ACTORS, "for key in (\"query_id\", \"attempt_id\", \"app_id\", \"job_id\", \"run\"):", "for key in (\"query_id\", \"attempt_id\", \"app_id\", \"job_id\"):"),
    (ACTORS, "coalesce(spark_run(e.detail->>'caller_context', e.app_id), r.run) AS run,", "NULL AS run,"),
    # round 10, gen10: a name both runs of a YARN restart used resolves to the attempt of its record's run
    (ACTORS, "coalesce(spark_run(e.detail->>'caller_context', e.app_id), r.run) AS run,", "spark_run(e.detail->>'caller_context', e.app_id) AS run,"),
    (ACTORS, "FROM events e LEFT JOIN attempt_event_runs r ON r.event_id = e.event_id\nWHERE e.event_id IN", "FROM events e LEFT JOIN attempt_event_runs r ON false\nWHERE e.event_id IN"),
    (ACTORS, "        if (e[\"app_id\"], label, e[\"run\"]) in spark:\n", "        if False:\n"),
    # round 10, kill10: a name both runs of a restart used, no run in the finding's evidence (CS202's
    # YARN restart twins: an Iceberg snapshot names the application, not the run): neither run's
    # attempt; the first mutant names one run's, the second looks up an (app, name) key not there
    (ACTORS, "for key, found in by_name.items() if len(found) == 1})\n    return out", "for key, found in by_name.items()})\n    return out"),
    (ACTORS, "        if len(key) == 2:\n            apps.setdefault(key[1], set()).add(key[0])", "        if True:\n            apps.setdefault(key[1], set()).add(key[0])"),
    (ACTORS, "if label in (e[\"attempt_id\"], e[\"thread\"], e[\"query_id\"]) and e[\"storage\"]:", "if False:"),
    (ACTORS, "if label == e[\"attempt_id\"] and e[\"event_id\"] in tied:", "if False:",),
    (ACTORS, "    if len(apps) == 1:\n", "    if False:\n"),
    (ACTORS, "WHERE t.event_id IN (SELECT unnest(?::BIGINT[])) AND t.candidates = 1 AND t.kind = 'spark_attempt'",
     "WHERE t.event_id IN (SELECT unnest(?::BIGINT[])) AND t.kind = 'spark_attempt'",),
    (ACTORS, "\"ip\": e[\"ip\"], \"storage\": e[\"storage\"]}", "\"ip\": None, \"storage\": e[\"storage\"]}"),
    (ACTORS, "AND q.thread = e.thread AND q.ts <= e.ts", "AND q.ts <= e.ts",),
    (ACTORS, "if label.startswith(\"attempt_\") and \"attempt_no\" in attempt_fields(label):", "if False:",),
    (ACTORS, "            if key in hadoop:  # Spark writes its TID as the Hadoop attempt number\n", "            if False:\n"),
    # round 11: a name both runs used, no run said: the application and its candidate runs
    (ACTORS, "    ambiguous = _runs_using(label, events, runs)\n", "    ambiguous = None\n"),
    # round 11: every application's attempts only for a name none of its finding's applications has
    (ACTORS, "    if others:\n        rows += ", "    if False:\n        rows += "),
    # --- forensics/attempt_labels.py: one name per attempt in every output
    (LABELS, "f\"on {host}\" if host is not None else None", "None"),
    (LABELS, "if label is None and len(by_name.get(name, ())) == 1:", "if False:",
     "equivalent: labels_for_names already gives (app, name) for every application the attempt_labels view holds the "
     "name under (its rows are read whatever their application) and, by its own unique-name fallback, for None and "
     "each evidence application; an object's app_id is that of an event bearing the name (the detector's attempt, the "
     "tie, the storage record: forensics/actors.py), so labels.get((app_id, name)) already holds what this fallback gives"),
    (LABELS, "if label is None and o.get(\"kind\") == \"spark_attempt\" and o.get(\"stage\") is not None:", "if False:"),
    (LABELS, "        if (app, name) not in out and len(by_name.get(name, ())) == 1:\n", "        if False:\n",
     "equivalent: label_objects, the only caller the probes reach (report/lanes.py is the other), falls back by name "
     "alone itself (the unique label of by_name, built from the same rows): a pair this leaves out gets the same label "
     "there"),
    (LABELS, "    finding.actors = [renamed.get(a, a) for a in finding.actors]\n", ""),
    # round 9, runs9: a YARN restart's runs count TIDs from 0 again: a name both use is labelled per run
    (LABELS, "return spark_attempt_label(f\"{app}_{run}\" if app is not None and run is not None else app, ", "return spark_attempt_label(app, "),
    (LABELS, "        if run is not None:  # of an application seen in several runs: (app, name, run) names it\n            out[(app, name, run)] = label\n", ""),
    (LABELS, "for key, found in by_key.items() if len(found) == 1})", "for key, found in by_key.items()})"),
    (LABELS, "label = labels.get((o.get(\"app_id\"), name, o[\"run\"])) if o.get(\"run\") is not None else None", "label = None"),
    (FILE_ATTEMPTS, "    'run': a.run}", "    'run': NULL}"),
    (LABELS, "        finding.summary = finding.summary.replace(name, renamed[name])\n", "        pass\n"),
    # --- forensics/remedies.py: the cause and remedy that fit the engine and writer
    (REMEDIES, "committed = any(o.get(\"rule\") in (\"spark_part\", \"spark_staging\", \"hadoop_attempt\") for o in spark)", "committed = False",
     "equivalent: fit() sees a rule only on CS101's own attempts (actors.resolve's named: detail.attempts; the tie and "
     "lookup structs carry none, and cause_and_remedy changes CS101 only). Those are CS101's by_file ties, over rows "
     "without a write UUID (write_uuid IS NULL: no spark_part or spark_staging tie); a hadoop_attempt tie needs the file "
     "event's application, which a rename or create gets only from its caller context, whose caller_context tie names "
     "the same attempt (application and TID) at the same rank and sorts first in file_attempts' ranked, so the rule kept "
     "is caller_context. Only a task renaming into another TID's attempt directory (not a writer's behaviour: "
     "FileOutputCommitter gives each its own work path) could keep it"),
    (REMEDIES, "if any(_TEZ_ATTEMPT.fullmatch(n) for n in names) or \"org.apache.tez\" in text or \"TezChild\" in text:", "if False:",),
    (REMEDIES, "    if \"RCFileMergeMapper\" in text:\n", "    if False:\n",),
    (REMEDIES, "    if fitted.ended_badly and cause:\n", "    if False:\n",),
    # --- forensics/table_writers.py: who wrote a table's files (CS201, CS202) and commits (CS202)
    (TABLE_WRITERS, "return {f: next(iter(w.values())) for f, w in found.items() if len(w) == 1}",
     "return {f: next(iter(w.values())) for f, w in found.items() if w}"),
    (TABLE_WRITERS, "    FROM events WHERE kind IN ('file_create', 'rename')", "    FROM events WHERE kind IN ('rename')"),
    (TABLE_WRITERS, "coalesce(attempt_id, query_id, thread, app_id, detail->>'user')", "coalesce(thread, app_id, detail->>'user')"),
    (TABLE_WRITERS, "        f.actors = f.actors + sorted({w.actor for w in found} - set(f.actors))\n", ""),
    (TABLE_WRITERS, "        f.evidence = f.evidence + sorted({w.event_id for w in found} - set(f.evidence))\n", ""),
    (TABLE_WRITERS, "start is not None and start - _SLACK <= ts", "start is not None"),
    (TABLE_WRITERS, "and (end is None or ts <= end + _SLACK) and", "and"),
    (TABLE_WRITERS, "execution = found[0] if len(found) == 1 else None", "execution = found[0] if found else None"),
    (TABLE_WRITERS, "if (loc, version) in commits and writer.execution:", "if writer.execution:",
     "equivalent: the one caller (CS202) looks up only the commits it asked for: a commit it did not ask for is never read"),
    # --- forensics/detectors/base.py: the temp layers every detector peels
    (BASE, "|-ext-[0-9]+[^/]*)(/|$)", ")(/|$)"),
    # (round 8: the temp directories' names are TEMP_DIRS, which TEMP_LAYER, CS109 and audit read)
    (BASE, r"\.spark-staging-[^/]*|\.hive-staging", r"\.hive-staging"),
    # round 8, genB: the S3A magic committer's __magic layer
    (BASE, "|__magic(?:_job-[^/]*)?|", "|"),
    # (round 8: CS109's own copies of these alternatives, now read from TEMP_DIRS)
    (BASE, r"|\.hive-staging[^/]*|", "|"),
    (BASE, 'TEMP_DIRS = r"_temporary|__magic', 'TEMP_DIRS = r"__magic'),
    (BASE, r'|_task_tmp\.[^/]*|_tmp\.[^/]*"', '"'),
    (PATHS, "        if _MAGIC.match(seg):\n", "        if False:\n"),
    (PATHS, "in_magic = seg != _MAGIC_BASE", "in_magic = False"),
    (BASE, "        kw.setdefault(\"remedy\", s.get(\"remedy\"))\n", ""),
    (BASE, "            severity=row.get(\"severity\"),\n", ""),
]
