"""What a detector is: an explicit code, name and severity, and a docstring that explains.

The docstring has three sections, ``Symptom:``, ``Cause:`` and ``Remedy:``; reports and
``analyze`` reuse them verbatim, so they are written for the user, not for us.
"""

from __future__ import annotations

import datetime as dt
import inspect
import re
from dataclasses import dataclass, field

import duckdb

from commitsleuth.model import SEVERITIES


@dataclass
class Finding:
    code: str
    name: str
    severity: str
    summary: str
    location: str | None = None
    partition_spec: str | None = None
    table_name: str | None = None
    window_start: dt.datetime | None = None
    window_end: dt.datetime | None = None
    actors: list[str] = field(default_factory=list)
    evidence: list[int] = field(default_factory=list)
    explanation: str | None = None
    remedy: str | None = None
    detail: dict | None = None
    actor_objects: list[dict] | None = None  # one per actor: {kind, label, …} (forensics/actors.py)


class Detector:
    code: str = ""
    name: str = ""
    severity: str = "medium"

    def run(self, con: duckdb.DuckDBPyConnection) -> list[Finding]:
        raise NotImplementedError

    @classmethod
    def sections(cls) -> dict[str, str]:
        """``{'symptom': …, 'cause': …, 'remedy': …}`` from the docstring."""
        doc = inspect.cleandoc(cls.__doc__ or "")
        out: dict[str, str] = {}
        for m in re.finditer(r"^(Symptom|Cause|Remedy):\s*(.*?)(?=^\w+:|\Z)", doc, re.M | re.S):
            out[m.group(1).lower()] = " ".join(m.group(2).split())
        return out

    def finding(self, summary: str, **kw) -> Finding:
        s = self.sections()
        kw.setdefault("explanation", s.get("cause"))
        kw.setdefault("remedy", s.get("remedy"))
        kw["severity"] = kw.get("severity") or self.severity
        return Finding(code=self.code, name=self.name, summary=summary, **kw)


class SqlDetector(Detector):
    """A detector that is one set-based query: each result row becomes one finding.

    The query returns at least ``location``, ``partition_spec``, ``table_name``, ``t0``, ``t1``,
    ``actors`` and ``evidence``; ``summary(row)`` words the finding and ``detail(row)`` keeps
    the facts a machine wants. A ``severity`` column overrides the detector's for one finding
    (an escalation such as racing loaders that lost data).
    """

    sql: str = ""
    fields = ("location", "partition_spec", "table_name")

    def run(self, con):
        cur = con.execute(self.sql)
        cols = [d[0] for d in cur.description]
        return self.finish(con, [self.to_finding(dict(zip(cols, r))) for r in cur.fetchall()])

    def finish(self, con: duckdb.DuckDBPyConnection, findings: list[Finding]) -> list[Finding]:
        """Words a detector adds from a few lookups in the store by its findings' evidence (the
        Spark engine runs ``sql`` on Spark and this on the store)."""
        return findings

    def to_finding(self, row: dict) -> Finding:
        return self.finding(
            self.summary(row),
            location=row.get("location"),
            partition_spec=row.get("partition_spec"),
            table_name=row.get("table_name"),
            window_start=row.get("t0"),
            window_end=row.get("t1"),
            actors=[a for a in (row.get("actors") or []) if a is not None],
            evidence=list(row.get("evidence") or []),
            severity=row.get("severity"),
            detail=self.detail(row),
        )

    def summary(self, row: dict) -> str:
        raise NotImplementedError

    def detail(self, row: dict) -> dict | None:
        return None


# A writer's temp or staging directory, by its name: FileOutputCommitter's _temporary, the S3A
# magic committer's __magic (Hadoop 3.3.5+: __magic_job-<uuid>), Spark's .spark-staging-<uuid>,
# Hive's .hive-staging_*, _task_tmp.* and _tmp.*. The one definition: the detectors' TEMP_LAYER
# (below, with Hive's -ext-N scratch dirs), CS109's leftover directories and
# audit's listing of empty ones are built from it.
TEMP_DIRS = r"_temporary|__magic(?:_job-[^/]*)?|\.spark-staging-[^/]*|\.hive-staging[^/]*|_task_tmp\.[^/]*|_tmp\.[^/]*"
# A writer's temp or staging layer in a path: TEMP_DIRS (_temporary, the S3A magic
# committer's __magic, .spark-staging-<uuid>, .hive-staging_*, _task_tmp.*, _tmp.*) and Hive's
# -ext-N scratch dirs. One pattern for every detector (the partition_events view's is_temp
# column, migration 0075, uses the same behind a cheap substring test; tests/test_temp_layer.py
# holds the two to one another).
TEMP_LAYER = rf"/({TEMP_DIRS}|-ext-[0-9]+[^/]*)(/|$)"


def in_temp_layer(column: str) -> str:
    """SQL that is true when the path in ``column`` lies in a temp or staging layer."""
    return f"regexp_matches(coalesce({column}, ''), '{TEMP_LAYER}')"


def where(row: dict) -> str:
    """How a summary names the partition: ``dt=1`` or ``the unpartitioned table``."""
    return row.get("partition_spec") or "the unpartitioned table"


def severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity)
