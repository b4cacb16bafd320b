"""Who made a storage call: Hadoop caller contexts and the S3A audit Referer, as event fields.

Caller contexts (``hadoop.caller.context.enabled=true``; the NameNode cuts them to
``hadoop.caller.context.max.size``, 128 by default, and may append ``:<signature>``):

- Spark ``Utils.CallerContext``: ``SPARK_TASK_<appId>[_<appAttemptId>]_JId_<job>_SId_<stage>_<stageAttempt>_TId_<taskId>_<attemptNumber>``
  and ``SPARK_DRIVER_<appId>[_<appAttemptId>]``, after an optional upstream context;
- Hive ``Hadoop23Shims``: ``hive_queryId_<queryId>`` and ``hive_sessionId_<sessionId>``; HDP 2.x's Hive
  wrote ``HIVE_QUERY_ID:<queryId>`` (a real line in Apache Ambari's log-search tests:
  ``callerContext=HIVE_QUERY_ID:ambari-qa_20160317200111_223b3079-4a2d-431c-920f-6ba37ed63e9f``);
- Tez ``TezUtilsInternal.setHadoopCallerContext``: ``tez_ta:<attempt>``, ``tez_v:<vertex>``,
  ``tez_dag:<dag>``, ``tez_app:<application>``.

- MapReduce: ``YarnChild`` sets ``mr_<attempt id>`` for a task, ``MRAppMaster``
  ``mr_appmaster_<application attempt id>`` for the job's AppMaster (job commit runs there).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

from commitsleuth.parsers.attempts import attempt_fields

_APP = r"(?:application_\d+_\d+|app-\d+-\d+|local-\d+|spark-application-\d+)"
SPARK_CONTEXT = re.compile(
    rf"SPARK_(?P<side>TASK|DRIVER)_(?P<app>{_APP})(?:_(?P<app_attempt>\d+))?"
    r"(?:_JId_(?P<job>\d+)_SId_(?P<stage>\d+)_(?P<stage_attempt>\d+)_TId_(?P<tid>\d+)_(?P<attempt>\d+))?"
)
HIVE_CONTEXT = re.compile(r"hive_(?P<what>queryId|sessionId)_(?P<id>[\w.-]+?)(?::[^:]*)?$")
# HDP 2.x: the id follows the colon, so no NameNode signature can be told from it by shape
HDP_HIVE_CONTEXT = re.compile(r"HIVE_QUERY_ID:(?P<id>[\w.-]+)")
TEZ_CONTEXT = re.compile(r"tez_(?P<what>ta|v|dag|app):(?P<id>[\w]+)")
MR_CONTEXT = re.compile(r"mr_(?:(?P<attempt>attempt_\d+_\d+_[mr]_\d+_\d+)|appmaster_appattempt_(?P<cluster>\d+)_(?P<app>\d+)_\d+)")


def spark_attempt_label(stage: int, stage_attempt: int, tid: int, attempt: int) -> str:
    """A Spark task attempt as a caller context names it (no partition index there)."""
    return f"task attempt {attempt} in stage {stage}.{stage_attempt} (TID {tid})"


def caller_fields(context: str | None) -> dict:
    """Event fields (app_id, attempt_id, stage_id, query_id, job_id…) a caller context states."""
    if not context:
        return {}
    m = SPARK_CONTEXT.search(context)
    if m:
        out: dict = {"app_id": m["app"]}
        if m["tid"] is not None:
            out.update(stage_id=int(m["stage"]), stage_attempt=int(m["stage_attempt"]),
                       attempt_no=int(m["attempt"]), task_id=f"TID {m['tid']}",
                       attempt_id=spark_attempt_label(int(m["stage"]), int(m["stage_attempt"]),
                                                      int(m["tid"]), int(m["attempt"])))
        return out
    m = HIVE_CONTEXT.search(context)
    if m:
        return {"query_id": m["id"]} if m["what"] == "queryId" else {}
    m = HDP_HIVE_CONTEXT.match(context)
    if m:
        return {"query_id": m["id"]}
    m = TEZ_CONTEXT.search(context)
    if m:
        what, ident = m["what"], m["id"]
        if what == "ta":
            return attempt_fields(ident)
        if what == "app":
            return {"app_id": ident}
        return {"job_id": ident} if what == "dag" else {}
    m = MR_CONTEXT.search(context)
    if m:
        if m["attempt"]:
            return attempt_fields(m["attempt"])
        return {"app_id": f"application_{m['cluster']}_{m['app']}", "job_id": f"job_{m['cluster']}_{m['app']}"}
    return {}


def spark_job(context: str | None) -> str | None:
    m = SPARK_CONTEXT.search(context or "")
    return m["job"] if m else None


# Hadoop S3A HttpReferrerAuditHeader: https://<host>/hadoop/1/<op>/<span>/?op=…&p1=…&pr=…&ps=…&id=…&ji=…&ta=…
# Its first form (HADOOP-17511's early AuditConstants: PATH_FORMAT "/%1$s/%2$s/", JOB_ID "job",
# OP_ID "opid", PATH "path", PATH2 "path2") had no "/hadoop/1" and longer names; only its fixed
# host, REFERRER_ORIGIN_HOST "audit.example.org", tells it. Its names are given today's.
S3A_AUDIT_HOST = "audit.example.org"
_EARLY_NAMES = {"job": "ji", "opid": "id", "path": "p1", "path2": "p2"}


def s3a_referer(referer: str | None) -> dict | None:
    """The S3A audit fields of a Referer (op, p1, p2, pr, ps, id, ji, ta, t0, ts…), or None."""
    if not referer or ("/hadoop/" not in referer and S3A_AUDIT_HOST not in referer):
        return None
    parts = urlsplit(referer)
    if parts.path.startswith("/hadoop/"):
        return {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=False).items()}
    if parts.hostname != S3A_AUDIT_HOST:
        return None
    return {_EARLY_NAMES.get(k, k): v[0] for k, v in parse_qs(parts.query, keep_blank_values=False).items()}
