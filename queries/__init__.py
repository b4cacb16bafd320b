"""Named SQL queries over the store, shipped as package data (``queries/*.sql``).

Each file starts with ``-- name: description`` comment lines; ``commitsleuth query NAME`` runs
it, and the same file runs unchanged in the plain ``duckdb`` shell: ``duckdb store.duckdb < f``.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class NamedQuery:
    name: str
    description: str
    sql: str


def all_queries() -> dict[str, NamedQuery]:
    out = {}
    for entry in sorted(resources.files(__name__).iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".sql"):
            continue
        sql = entry.read_text(encoding="utf-8")
        desc = []
        for line in sql.splitlines():
            if not line.startswith("--"):
                break
            desc.append(line[2:].strip())
        name = entry.name[: -len(".sql")]
        out[name] = NamedQuery(name, " ".join(desc).strip(), sql)
    return out
