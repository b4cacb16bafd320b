"""The cause and remedy that fit a finding's engine and writer, chosen from its evidence.

A detector's docstring holds the general text (``Cause:``/``Remedy:``, all engines at once).
Where a finding's own evidence says which engine ran and how it wrote, the text for that case
replaces it: a Spark task writing its own files (``foreachPartition``, a direct writer) gets
Spark's remedy, not Hive's ``RCFileMergeMapper``/HIVE-3149 text; Hive on Tez gets Tez's; and a
cause never says both attempts finished when one was killed or failed.

Only double commits (CS101) have engine-specific texts today; other findings keep their
detector's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A Tez attempt id: attempt_<cluster ts>_<app>_<dag>_<vertex>_<task>_<attempt> (MapReduce's has
# a task type letter where Tez has the DAG and vertex numbers).
_TEZ_ATTEMPT = re.compile(r"attempt_\d+_\d+_\d+_\d+_\d+_\d+")
_MR_ATTEMPT = re.compile(r"attempt_\d+_\d+_[mr]_\d+_\d+")
_SPARK_APP = re.compile(r"^(app-\d+-\d+|local-\d+|application_\d+_\d+)$")


@dataclass(frozen=True)
class Fit:
    engine: str  # spark | hive-tez | hive-mr | mapreduce | unknown
    writer: str  # direct (the task wrote its files itself), committer, merge (RCFileMergeMapper), unknown
    ended_badly: tuple[tuple[str, str], ...]  # (label, killed | failed) of the attempts that did not finish


def fit(objects: list[dict], raws: list[str]) -> Fit:
    """Engine and writer of a finding from its actor objects (forensics/actors.py) and the raw
    lines of its evidence."""
    text = "\n".join(r for r in raws if r)
    spark = [o for o in objects if o.get("kind") == "spark_attempt"
             or (o.get("kind") == "storage_principal" and (o.get("attempt_name") or "").startswith("task "))]
    badly = tuple((o["label"], o["status"].lower()) for o in objects
                  if (o.get("status") or "").lower() in ("killed", "failed"))
    if spark:
        # a Hive-style NNNNNN_A name, a caller context's create, a file the task listed: the task
        # wrote the file itself; through a committer it would be a part-NNNNN name in an attempt dir
        committed = any(o.get("rule") in ("spark_part", "spark_staging", "hadoop_attempt") for o in spark)
        return Fit("spark", "committer" if committed else "direct", badly)
    names = [o["label"] for o in objects]
    if "RCFileMergeMapper" in text:
        return Fit("hive-tez" if any(_TEZ_ATTEMPT.fullmatch(n) for n in names) else "hive-mr", "merge", badly)
    if any(_TEZ_ATTEMPT.fullmatch(n) for n in names) or "org.apache.tez" in text or "TezChild" in text:
        return Fit("hive-tez", "direct", badly)
    if any(_MR_ATTEMPT.fullmatch(n) for n in names):
        return Fit("mapreduce", "unknown", badly)
    return Fit("unknown", "unknown", badly)


_SPARK_DIRECT_CAUSE = (
    "Spark tasks wrote their output files themselves (a foreachPartition or mapPartitions "
    "function, or a direct writer) instead of committing through Spark's output commit protocol, "
    "so nothing let only one attempt of a task publish: speculation (or a retry) ran the task "
    "twice and each attempt left its own file.")
_SPARK_COMMITTER_CAUSE = (
    "Two attempts of one Spark task published output: the committer in use let both commit "
    "(a direct or non-coordinated committer, or a task retried after its first attempt committed).")
_SPARK_DIRECT_REMEDY = (
    "Write through Spark's writers (DataFrameWriter, saveAsTable/insertInto, saveAsHadoopFile), "
    "whose commits the driver's OutputCommitCoordinator lets only one attempt of a task make; or "
    "set spark.speculation=false for this job. A function that must write files itself should "
    "name them by the task (TaskContext.partitionId()), not the attempt (attemptNumber()), "
    "write to a temporary name and rename last, so a second attempt replaces the file instead of "
    "adding one. Then delete the duplicate file of each listed task from the partition.")
_SPARK_COMMITTER_REMEDY = (
    "Use a committer that commits through Spark's output commit coordination (the default "
    "FileOutputCommitter, or the S3A committers on S3) rather than a "
    "direct committer, or set spark.speculation=false for this job. Then delete the duplicate "
    "file of each listed task from the partition.")
_TEZ_REMEDY = (
    "Set tez.am.speculation.enabled=false for Hive on Tez jobs that write this table (Hive names "
    "its files per attempt and its tasks never ask the AM whether they may commit), or apply "
    "HIVE-27899/HIVE-27985. Then delete the duplicate file of each listed task from the partition.")
_HIVE_MR_REMEDY = (
    "Disable speculative execution for the merge job (mapred.map.tasks.speculative.execution=false, "
    "hive.mapred.reduce.tasks.speculative.execution=false), or set hive.merge.mapfiles=false so "
    "RCFileMergeMapper, which renames its output in close() outside the commit protocol, is not "
    "used; apply HIVE-3149 for dynamic partitions. Then delete the duplicate file of each listed "
    "task from the partition.")


def cause_and_remedy(code: str, fitted: Fit, cause: str | None, remedy: str | None) -> tuple[str | None, str | None]:
    """The finding's cause and remedy for its engine and writer (``cause``/``remedy``: the
    detector's general text, kept where nothing fits better)."""
    if code != "CS101":
        return cause, remedy
    if fitted.engine == "spark":
        direct = fitted.writer == "direct"
        cause, remedy = ((_SPARK_DIRECT_CAUSE, _SPARK_DIRECT_REMEDY) if direct
                         else (_SPARK_COMMITTER_CAUSE, _SPARK_COMMITTER_REMEDY))
    elif fitted.engine == "hive-tez":
        remedy = _TEZ_REMEDY
    elif fitted.engine == "hive-mr":
        remedy = _HIVE_MR_REMEDY
    if fitted.ended_badly and cause:
        who = "; ".join(f"{label} was {status}" for label, status in fitted.ended_badly)
        cause += (f" Not every attempt finished ({who}), yet what each had written stayed: ending "
                  "an attempt does not remove the files it already wrote.")
    return cause, remedy


def apply(finding, raws: list[str]) -> None:
    """``finding``'s explanation and remedy fitted to its evidence (``raws``: its lines)."""
    fitted = fit(finding.actor_objects or [], raws)
    finding.explanation, finding.remedy = cause_and_remedy(finding.code, fitted, finding.explanation, finding.remedy)


def fit_findings(con, findings: list) -> None:
    """Every double commit's explanation and remedy fitted to its evidence (one read of the
    evidence lines for all of them)."""
    todo = [f for f in findings if f.code == "CS101"]
    ids = sorted({i for f in todo for i in f.evidence})
    if not ids:
        return
    raw = dict(con.execute("SELECT event_id, raw FROM events WHERE list_contains($ids, event_id)",
                           {"ids": ids}).fetchall())
    for f in todo:
        apply(f, [raw.get(i) for i in f.evidence])
