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
        return Finding(code=self.code, name=self.name, severity=self.severity, summary=summary, **kw)


def severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity)
