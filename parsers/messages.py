"""The shared message grammar: message text of any log head -> partial event fields."""

from __future__ import annotations

import re

from lark import Token, Transformer, UnexpectedInput

from commitsleuth.parsers.attempts import ANY_ATTEMPT_RE, attempt_fields
from commitsleuth.parsers.lark_loader import grammar

# The literal each message alternative of messages.lark carries. A line without one of them
# is never handed to the LALR parser; tests check that every sample line has one. Each is
# distinctive enough that ordinary lines rarely carry it (a hit that parses to nothing is
# counted in ``rejects``, so a too-generic keyword shows up there).
KEYWORDS = (
    "renamed path",
    "Duplicate taskid file removed",
    "Moving tmp dir",
    "Creating directory if it",
    "Moved to trash",
    "to trash at",
    "deleting  ",
    "Deleted the diretory",
    "New loading path",
    "Loading data to table",
    "command(queryId=",
    "Starting Job =",
    "Query ID =",
    "Load statement: LOAD",
    "Running job: ",
    "Task attempt attempt_",
    "Could not delete ",
    "hive> ",
    ")> ",  # "hive (db)> "
    "Starting command",
    "Launching Job ",
    "Ended Job =",
    "by condition resolver",
    "Moving data to",
    " stats: [",
    "is in the process of commit",
    "' done.",
    "completed successfully",
    "failed with state",
    "Transitioned from",
    "we are speculating",
    "is allowed to commit now",
    "Result of canCommit",
    "Saved output of task",
    ": Committed",
    ": Not committed because",
    "Commit denied for stage",
    "Task was denied committing",
    "Write Job ",
    "commit write Job",
    "Aborting job ",
    "Committer Algorithm version",
    "add_partition",
    "alter_partition",
    "drop_partition",
    "append_partition",
    "rename_partition",
    "exchange_partition",
    "get_partition ",  # Hive 3: the values of the add_partition audit line that follows
    "get_partition_with_auth ",
    "Running task ",
    "Finished task ",
    "Starting task ",
    "Starting task:",
    "Lost task ",
    "as speculatable",
    # Tez AM and Hive's merge operator on Tez (tez-dag TaskImpl/TaskAttemptImpl, HistoryEventHandler)
    "] submitted. Is using containerId",
    "Scheduling a redundant attempt",
    "given a go for committing",
    "given a no-go for commit",
    "Issuing kill to bad commit attempt",
    "Issuing kill to other attempt",
    "Task succeeded with attempt",
    "[Event:TASK_ATTEMPT_",
    "Renamed path",
    "jobCloseOp moved merged files",
    # stated anywhere in an error message, see EXISTS below
    "AlreadyExistsException",
    "Partition already exists",
    "Duplicate entry",
)
KEYWORD_RE = re.compile("|".join(re.escape(k) for k in KEYWORDS))

# Exception text puts these anywhere in a message (after "FAILED:", "MetaException(…", a JDO
# insert statement, …), which an LALR grammar anchored at the message start cannot express:
# they are recognised by search, the only messages that are.
EXISTS = re.compile(
    r"(?:AlreadyExistsException|Partition already exists)(?:\(message:)?"
    r"(?:[^\n]*?Partition\(values:\[(?P<values>[^\]]*)\], dbName:(?P<db>[^,\s)]+), tableName:(?P<tbl>[^,\s)]+))?"
    r"|Duplicate entry '(?P<entry>[^']*)'(?: for key '(?P<key>[^']*)')?"
)

PARTITION_CALLS = {
    "add_partition": "partition_add",
    "add_partitions": "partition_add",
    "add_partitions_req": "partition_add",
    "append_partition": "partition_add",
    "append_partition_by_name": "partition_add",
    "exchange_partition": "partition_add",
    "exchange_partitions": "partition_add",
    "alter_partition": "partition_alter",
    "alter_partitions": "partition_alter",
    "rename_partition": "partition_alter",
    "drop_partition": "partition_drop",
    "drop_partition_by_name": "partition_drop",
    "drop_partitions_req": "partition_drop",
    # not an event: its values name the partition of the next call on the same table
    "get_partition": "partition_lookup",
    "get_partition_with_auth": "partition_lookup",
}
SPARK_TASK = re.compile(r"(\d+)\.(\d+) in stage (\d+)\.(\d+) \(TID (\d+)")
# Where the driver names the attempt's host and executor: "(TID 4, host, executor 7, …" (2.x),
# "(TID 4) (host, executor 7, …" (3.x), "… in 12 ms on host (executor 7) (1/8)".
SPARK_WHERE = re.compile(r"(?:^[,)]\s*\(?|\bon )\s*(?P<host>[^\s,()]+),? \(?executor (?P<executor>[^\s,)]+)")
SPARK_LOST = {"TaskKilled": "killed", "TaskCommitDenied": "commit_denied"}
# StatsTask keys: Hive 0.x prints "num_files: 1", 1.x+ "numFiles=1"; one spelling kept.
STAT_PAIR = re.compile(r"(\w+)\s*[:=]\s*(-?\d+)")
# Tez's history line: "vertexName=Map 1, taskAttemptId=attempt_…, …, status=KILLED, …".
# (diagnostics, last, may hold commas: it is taken whole)
TEZ_HISTORY_FIELD = re.compile(r"(?:^|, )(vertexName|taskAttemptId|containerId|nodeId|status|nodeHttpAddress)=([^,]*)")
# the fields after a diagnostic that spans lines: they are on its continuation lines
TEZ_TAIL_FIELD = re.compile(r", (nodeId|nodeHttpAddress|containerId)=([^,\s]+)")
MR_TASK = re.compile(r"task_\w+_[mr]_\d+")
JOB_ID = re.compile(r"job_\w+")
STAGING_IN_TABLE = re.compile(r"/\.hive-staging[^/]*/")
TEZ_AFTER_DIAGNOSTICS = re.compile(r", (?:errorMessage|containerId|nodeId|nodeHttpAddress|counters)=")
TEZ_ATTEMPT_STATES = {"SUCCEEDED": "success", "KILLED": "killed", "FAILED": "failed"}
MERGE_TARGET = re.compile(r"^(?P<path>\S+)\((?P<size>\d+) bytes\)\.?$")
TERMINAL_JOB_STATES = {"SUCCEEDED": "success", "FAILED": "failed", "KILLED": "killed", "ERROR": "failed"}


def spec_of(text: str) -> str | None:
    """``(dt='2018-09-28', h=1)`` or ``{dt=2018-09-28, h=1}`` -> ``dt=2018-09-28/h=1``."""
    inner = text.strip()[1:-1]
    parts = []
    for piece in inner.split(","):
        if "=" not in piece:
            continue
        k, v = piece.split("=", 1)
        parts.append(f"{k.strip().strip('`')}={v.strip().strip(chr(39)).strip(chr(34))}")
    return "/".join(parts) or None


def stats_of(text: str) -> dict[str, int]:
    """``[num_files: 1, totalSize=5]`` -> ``{"num_files": 1, "total_size": 5}``."""
    return {re.sub(r"(?<=[a-z])([A-Z])", r"_\1", k).lower(): int(v) for k, v in STAT_PAIR.findall(text)}


def table_of(db: str | None, tbl: str) -> str:
    """``db=X tbl=Y`` -> ``X.Y``; ``tbl=hive.X.Y`` (catalog first, Hive 3+) -> ``X.Y``."""
    if db:
        return f"{db}.{tbl}"
    parts = tbl.split(".")
    return ".".join(parts[-2:])


class MessageTransformer(Transformer):
    """Each rule returns a ``dict`` of Event fields, ``kind`` included; ``{}`` means "known,
    but no event" (a line the grammar understands and deliberately ignores)."""

    def renamed(self, items):
        src, dst, size = items
        return {"kind": "rename", "path": str(src), "target_path": str(dst), "size": int(size)}

    def dedup_removed(self, items):
        removed, _kw1, len1, kept, _kw2, len2 = items
        removed = str(removed)
        if len1 is None:
            removed = removed.rstrip(".")  # 0.x: "… removed: <p>. Existing file: <q>"
        detail = {"kept": str(kept)}
        if len2 is not None:
            detail["kept_size"] = int(len2)
        return {"kind": "dedup_remove", "path": removed,
                "size": int(len1) if len1 is not None else None, "detail": detail}

    def moving_tmp(self, items):
        src, dst = items
        return {"kind": "publish", "path": str(src), "target_path": str(dst)}

    def mkdir(self, items):
        return {"kind": "dir_create", "path": str(items[0])}

    def moved_to_trash(self, items):
        return {"kind": "delete", "path": str(items[0]), "detail": {"how": "trash"}}

    def trash_moved(self, items):
        return {"kind": "delete", "path": str(items[0])[1:-1], "detail": {"how": "trash", "trash": str(items[1])}}

    def deleting(self, items):
        return {"kind": "delete", "path": str(items[0]), "detail": {"how": "delete"}}

    def deleted_dir(self, items):
        return {"kind": "delete", "path": str(items[0]), "detail": {"how": "delete"}}

    def new_loading_path(self, items):
        path, spec = items
        return {"kind": "load", "target_path": str(path), "partition_spec": spec_of(str(spec))}

    def loading_data(self, items):
        table, _kw, spec, _from, src = items
        out = {"kind": "load", "table_name": str(table).replace("`", ""),
               "partition_spec": spec_of(str(spec)) if spec is not None else None,
               "path": str(src) if src is not None else None}
        if spec is None and src is not None and STAGING_IN_TABLE.search(str(src)):
            # an unpartitioned table's load from its own staging dir (hive.exec.stagingdir,
            # "<table>/.hive-staging_…/-ext-N"): the data goes to the table's directory
            out["target_path"] = STAGING_IN_TABLE.split(str(src), 1)[0]
        return out

    def moving_data(self, items):
        paths = [i for i in items if i is not None and i.type == "PATH"]
        if len(paths) < 2:
            return {}
        dst, src = paths
        return {"kind": "publish", "path": str(src), "target_path": str(dst)}

    def partition_stats(self, items):
        table, spec, stats = items
        return _stats_event(str(table), spec_of(str(spec)), str(stats))

    def table_stats(self, items):
        table, stats = items
        return _stats_event(str(table), None, str(stats))

    def starting_command(self, items):
        qid, text = items[0], items[1] if len(items) > 1 else None
        out = {"kind": "query_start", "status": "running", "detail": {"phase": "execute"}}
        if qid is not None:
            out["query_id"] = str(qid)
        if text is not None:
            out["detail"]["command"] = str(text)
        return out

    def launching_job(self, items):
        return {}  # the job's id follows in "Starting Job = …"

    def ended_job(self, items):
        job, rest = items[0], items[1:]
        failed = bool(rest) and "with" in str(rest[0])
        return {"kind": "job_end", "job_id": str(job), "status": "failed" if failed else "success"}

    def condition_resolver(self, items):
        stage, resolved = items
        return {"kind": "conf", "detail": {"key": "hive.conditional_stage", "value": str(stage),
                                           "selected": str(resolved) == "selected"}}

    def mr_task_start(self, items):
        return {"kind": "attempt_start", **attempt_fields(str(items[-1]))}

    def mr_commit_pending(self, items):
        return {"kind": "attempt_state", **attempt_fields(str(items[0])), "status": "commit_pending",
                "detail": {"to": "COMMIT_PENDING"}}

    def mr_task_done(self, items):
        return {"kind": "attempt_end", **attempt_fields(str(items[0])), "status": "success"}

    def mr_job_running(self, items):
        job = str(items[0]).strip()
        return {"kind": "job_start", "job_id": job} if JOB_ID.fullmatch(job) else {}

    def task_aborted(self, items):
        if len(items) < 3 or items[2] is None or str(items[2]).strip() != "aborted.":
            return {}
        return {"kind": "attempt_state", **attempt_fields(str(items[1])), "status": "aborted",
                "detail": {"to": "ABORTED"}}

    def not_deleted(self, items):
        path = str(items[0])
        attempt = ANY_ATTEMPT_RE.search(path)
        if attempt is None or (len(items) > 1 and items[1] is not None):
            return {}  # a delete that failed elsewhere: nothing of an attempt's output
        # FileOutputCommitter.abortTask could not remove the attempt's directory: its files stay
        return {"kind": "attempt_state", **attempt_fields(attempt.group(0)), "status": "abort_cleanup_failed",
                "path": path, "detail": {"to": "ABORT_CLEANUP_FAILED"}}

    def mr_job_completed(self, items):
        return {"kind": "job_end", "job_id": str(items[0]), "status": "success"}

    def mr_job_failed(self, items):
        job, state = items[:2]
        return {"kind": "job_end", "job_id": str(job),
                "status": TERMINAL_JOB_STATES.get(str(state), "failed"), "detail": {"state": str(state)}}

    def compiling(self, items):
        return {"kind": "query_start", "query_id": str(items[0]), "status": "compiling",
                "detail": {"phase": "compile"}}

    def executing(self, items):
        return {"kind": "query_start", "query_id": str(items[0]), "status": "running",
                "detail": {"phase": "execute"}}

    def completed(self, items):
        step, qid, seconds = items
        if str(step) == "compiling":
            return {}  # compile time only; the query goes on
        return {"kind": "query_end", "query_id": str(qid), "status": "success",
                "detail": {"time_taken": float(seconds)}}

    def cli_prompt(self, items):
        if len(items) < 2 or items[1] is None:
            return {}  # an empty prompt
        return {"kind": "query_start", "status": "running",
                "detail": {"phase": "execute", "command": str(items[1]), "via": "cli"}}

    def sqoop_load(self, items):
        return {"kind": "query_start", "status": "running",
                "detail": {"phase": "execute", "command": str(items[0]), "via": "sqoop"}}

    def query_id(self, items):
        return {"kind": "query_start", "query_id": str(items[0]), "status": "running",
                "detail": {"phase": "execute"}}

    def starting_job(self, items):
        return {"kind": "job_start", "job_id": str(items[0])}

    def attempt_transition(self, items):
        attempt, src, dst, event = (list(items) + [None])[:4]
        detail = {"from": str(src), "to": str(dst)}
        if event is not None:
            detail["event"] = str(event)
        return {"kind": "attempt_state", **attempt_fields(str(attempt)), "status": str(dst).lower(),
                "detail": detail}

    def attempt_committed(self, items):
        return {"kind": "task_commit", **attempt_fields(str(items[0])), "status": "success"}

    def attempt_not_committed(self, items):
        return {"kind": "commit_denied", **attempt_fields(str(items[0])), "status": "commit_denied"}

    def task_said(self, items):
        return {}  # task-level transitions repeat what the attempt transitions say

    def job_transition(self, items):
        job, _src, dst = items
        status = TERMINAL_JOB_STATES.get(str(dst))
        if status is None:
            return {}
        return {"kind": "job_end", "job_id": str(job)[: -len("Job")], "status": status}

    def speculating(self, items):
        task = str(items[0])
        return {"kind": "speculate", "task_id": task, "job_id": "job_" + "_".join(task.split("_")[1:3])}

    def allowed_commit(self, items):
        return {"kind": "commit_allowed", **attempt_fields(str(items[0]))}

    def can_commit(self, items):
        attempt, answer = items
        if str(answer) == "true":
            return {"kind": "commit_allowed", **attempt_fields(str(attempt))}
        return {}  # "false" is asked again later; only a "true" authorises

    def saved_output(self, items):
        attempt, path = items
        return {"kind": "task_commit", **attempt_fields(str(attempt)), "target_path": str(path),
                "status": "success"}

    def commit_denied_stage(self, items):
        ints = [int(i) for i in items if i.type == "INT"]
        stage, partition = ints[0], ints[-1]
        return {"kind": "commit_denied", "stage_id": stage,
                "stage_attempt": ints[1] if len(ints) == 3 else None,
                "task_id": f"{stage}.{partition}", "status": "commit_denied"}

    def denied_committing(self, items):
        ints = [int(i) for i in items]
        stage, partition, attempt = ints[0], ints[-2], ints[-1]
        return {"kind": "commit_denied", "stage_id": stage,
                "stage_attempt": ints[1] if len(ints) == 4 else None,
                "task_id": f"{stage}.{partition}", "attempt_no": attempt, "status": "commit_denied"}

    def write_job_committed(self, items):
        return {"kind": "job_commit", "job_id": str(items[0]), "write_uuid": str(items[0]), "status": "success"}

    def start_commit_job(self, items):
        return {}  # the outcome follows: "Write Job … committed" or "Aborting job …"

    def aborting_job(self, items):
        return {"kind": "job_abort", "job_id": str(items[0]), "write_uuid": str(items[0]), "status": "aborted"}

    def algorithm(self, items):
        return {"kind": "conf", "detail": {"key": "mapreduce.fileoutputcommitter.algorithm.version",
                                           "value": str(items[0])}}

    def spark_task(self, items):
        verb, label, rest = items
        index, attempt, stage, stage_attempt, tid = map(int, SPARK_TASK.match(label).groups())
        rest = str(rest or "")
        out = {"stage_id": stage, "stage_attempt": stage_attempt, "task_id": f"{stage}.{index}",
               "attempt_id": f"task {index}.{attempt} in stage {stage}.{stage_attempt} (TID {tid})",
               "attempt_no": attempt, "detail": {"tid": tid}}
        where = SPARK_WHERE.search(rest)
        if where:
            out.update(host=where["host"], executor_id=where["executor"])
        verb = str(verb)
        if verb in ("Running task", "Starting task"):
            return {"kind": "attempt_start", **out}
        if verb == "Finished task":
            return {"kind": "attempt_end", "status": "success", **out}
        reason = rest.split("): ", 1)[-1].strip() if "): " in rest else rest.strip()
        out["detail"]["reason"] = reason
        return {"kind": "attempt_end", "status": SPARK_LOST.get(reason.split(" ", 1)[0], "failed"), **out}

    def hive_task(self, items):
        return {}  # Hive's stage start, not a task attempt

    def speculatable(self, items):
        index, stage, _rest = items
        stage_id = int(str(stage).split(".")[0])
        return {"kind": "speculate", "stage_id": stage_id, "task_id": f"{stage_id}.{int(index)}"}

    def tez_go(self, items):
        return {"kind": "commit_allowed", **attempt_fields(str(items[0]))}

    def tez_no_go(self, items):
        attempt, state = items
        return {"kind": "commit_denied", **attempt_fields(str(attempt)), "status": "commit_denied",
                "detail": {"reason": f"attempt state {state}, not running"}}

    def tez_bad_commit(self, items):
        return {"kind": "commit_denied", **attempt_fields(str(items[0])), "status": "commit_denied",
                "detail": {"reason": "task not running"}}

    def tez_submitted(self, items):
        attempt, container, node = map(str, items)
        return {"kind": "attempt_start", **attempt_fields(attempt), "host": node.rsplit(":", 1)[0],
                "detail": {"container": container, "node": node}}

    def tez_redundant(self, items):
        task = str(items[0])
        if MR_TASK.fullmatch(task):
            return {}  # MapReduce's TaskImpl: its DefaultSpeculator line already said it
        return {"kind": "speculate", "task_id": task, "job_id": "dag_" + "_".join(task.split("_")[1:4])}

    def tez_kill_other(self, items):
        if len(items) < 2 or items[1] is None:
            return {}  # MapReduce's TaskImpl says no more; its attempt transitions state the kill
        loser, winner = map(str, items[:2])
        return {"kind": "attempt_state", **attempt_fields(loser), "status": "kill_requested",
                "detail": {"to": "KILL_REQUESTED", "winner": winner}}

    def tez_succeeded(self, items):
        return {}  # the history line of the same attempt states its end

    def tez_attempt_history(self, items):
        head, rest = map(str, items)
        if "TASK_ATTEMPT_STARTED" in head:
            return {}  # repeats "TaskAttempt: […] submitted. Is using containerId …"
        fields = dict(TEZ_HISTORY_FIELD.findall(rest))
        attempt = fields.get("taskAttemptId")
        if not attempt:
            return {}
        state = fields.get("status", "").strip()
        detail = {"state": state, "vertex": fields.get("vertexName")}
        if ", diagnostics=" in rest:
            tail = rest.split(", diagnostics=", 1)[1]
            detail["diagnostics"] = TEZ_AFTER_DIAGNOSTICS.split(tail, 1)[0].strip()
        out = {"kind": "attempt_end", **attempt_fields(attempt.strip()),
               "status": TEZ_ATTEMPT_STATES.get(state, state.lower() or None), "detail": detail}
        _tez_node(out, detail, fields)
        return out

    def merge_renamed(self, items):
        src, target = map(str, items)
        m = MERGE_TARGET.match(target)
        return {"kind": "rename", "path": src, "target_path": m["path"], "size": int(m["size"])}

    def merge_job_close(self, items):
        out = str(items[0])
        return {"kind": "publish", "path": out, "target_path": out, "detail": {"step": "jobCloseOp"}}

    def call(self, items):
        source, name, _db_kw, db, _tbl_kw, tbl, values, _part_kw, part, _rest = _pad(items, 10)
        kind = PARTITION_CALLS.get(str(name))
        if kind is None:
            return {}
        if tbl is None:  # Hive audits every partition call with its table: this one names none
            return {"reject": f"metastore {name} without tbl"}
        out = {"kind": kind, "table_name": table_of(str(db) if db else None, str(tbl)), "status": "ok",
               "detail": {"call": str(name)}}
        if values is not None:
            out["detail"]["values"] = [v.strip() for v in str(values)[1:-1].split(",") if v.strip()]
        if part is not None:
            out["partition_spec"] = str(part)
        if source is not None:
            out["detail"]["client"] = str(source)[len("source:"):]
        return out

    def audit(self, items):
        ugi, ip, call = items
        if not call or "reject" in call:
            return call
        call["detail"].update(ugi=str(ugi).strip(), ip=str(ip).strip(), via="audit")
        return call

    def metastore_call(self, items):
        return items[1]


def _tez_node(out: dict, detail: dict, fields: dict) -> None:
    """Where a Tez attempt ran, from its history line's nodeId or nodeHttpAddress."""
    http = (fields.get("nodeHttpAddress") or "").strip()
    if http:
        detail["node_http"] = http
    node = (fields.get("nodeId") or "").strip() or http
    if node and not out.get("host"):
        out["host"] = node.rsplit(":", 1)[0]


def history_continued(fields: dict, continuation: list[str]) -> None:
    """A Tez attempt-end history event (``fields``: its Event attributes) completed from the
    lines its multi-line diagnostic pushed its last fields onto."""
    detail = fields.get("detail")
    if not detail or "vertex" not in detail or "node_http" in detail:
        return
    found = dict(TEZ_TAIL_FIELD.findall("\n".join(continuation)))
    _tez_node(fields, detail, found)


def _stats_event(table: str, spec: str | None, text: str) -> dict:
    stats = stats_of(text)
    return {"kind": "stats", "table_name": table.replace("`", ""), "partition_spec": spec,
            "size": stats.get("total_size"), "detail": stats}


def _pad(items: list, n: int) -> list:
    """The ``call`` rule's children by position: optional terminals are None or absent."""
    names = ("SOURCE", "CALL_NAME", "DB_KW", "NAME", "TBL_KW", "TBL_NAME", "VALUES", "PART_KW",
             "PART_NAME", "REST")
    out = dict.fromkeys(names)
    for it in items:
        if isinstance(it, Token):
            out[it.type] = it
    return [out[k] for k in names][:n]


_TRANSFORMER = MessageTransformer()


def _exists(text: str) -> dict | None:
    m = EXISTS.search(text)
    if m is None:
        return None
    out: dict = {"kind": "partition_exists", "status": "failed", "detail": {}}
    if m["tbl"]:
        out["table_name"] = f"{m['db']}.{m['tbl']}"
        out["detail"]["values"] = [v.strip() for v in m["values"].split(",") if v.strip()]
    if m["entry"] is not None:
        out["detail"]["entry"] = m["entry"]
        if m["key"]:
            out["detail"]["key"] = m["key"]
    return out


def message_parser():
    """The LALR parser of ``messages.lark`` with its transformer, built on first use (0.17 cpu-s)."""
    return grammar("messages", _TRANSFORMER)


def parse_message(text: str) -> dict | None:
    """Fields of the event a message states; ``{}`` for a known line of no event; None when
    the message carries a keyword but no grammar alternative understands it."""
    if KEYWORD_RE.search(text) is None:
        return None
    try:
        return message_parser().parse(text.strip())
    except UnexpectedInput:
        return _exists(text)
