"""What a SQL execution writes, read from its ``physicalPlanDescription``.

Spark's SQL events carry no structured write target; the formatted physical plan does, in the
``Arguments:`` line of the write command (Spark 3.x and 4.x print the same shape)::

    (5) Execute InsertIntoHadoopFsRelationCommand
    Input: []
    Arguments: file:/tmp/out, false, [p#7L], Parquet, [path=/tmp/out], Overwrite, [id, p]

The arguments are the command's constructor fields: output path, ifPartitionNotExists,
partition columns, file format, options, save mode, ..., and ``Some(`db`.`t`)`` for a table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_COMMAND = re.compile(
    r"^\(\d+\) Execute (?P<cmd>InsertIntoHadoopFsRelationCommand|InsertIntoHiveTable"
    r"|CreateDataSourceTableAsSelectCommand|CreateHiveTableAsSelectCommand)\s*$", re.M
)
_ARGS = re.compile(r"^Arguments: (?P<args>.*)$", re.M)
_MODE = re.compile(r", (?P<mode>Overwrite|Append|ErrorIfExists|Ignore),")
_TABLE = re.compile(r"`(?:spark_catalog`\.`)?(?P<db>[^`]+)`\.`(?P<table>[^`]+)`")
_COLUMN_ID = re.compile(r"#\d+L?$")
_WORD = re.compile(r"^[A-Za-z][\w.]*$")
_NOT_FORMAT = {"true", "false", "None", "Overwrite", "Append", "ErrorIfExists", "Ignore"}


@dataclass(frozen=True)
class WriteTarget:
    command: str
    path: str | None
    mode: str | None
    partition_columns: tuple[str, ...]
    file_format: str | None
    table: str | None

    def as_detail(self) -> dict:
        return {"command": self.command, "path": self.path, "mode": self.mode,
                "partition_columns": list(self.partition_columns), "format": self.file_format}


def normalize_path(path: str) -> str:
    """Hadoop prints local paths as ``file:/a/b``; the store keeps ``file:///a/b``."""
    if path.startswith("file:/") and not path.startswith("file://"):
        return "file:///" + path[len("file:/"):].lstrip("/")
    return path


def write_target(plan: str | None) -> WriteTarget | None:
    """The write command of a physical plan, or None when the execution writes no files."""
    if not plan:
        return None
    cmd = _COMMAND.search(plan)
    if cmd is None:
        return None
    args_m = _ARGS.search(plan, cmd.end())
    args = args_m.group("args") if args_m else ""
    fields = _split_top(args)
    mode = _MODE.search(args)
    table = _TABLE.search(args)
    if cmd["cmd"].startswith("Create"):
        # CTAS: the table is named here; the files are written by a nested insert execution.
        return WriteTarget(cmd["cmd"], None, mode["mode"] if mode else None, (), None,
                           f"{table['db']}.{table['table']}" if table else None)
    if cmd["cmd"] == "InsertIntoHiveTable":
        return WriteTarget(cmd["cmd"], None, "Overwrite" if ", true," in args else "Append", (),
                           "hive", f"{table['db']}.{table['table']}" if table else None)
    path = normalize_path(fields[0]) if fields and "/" in fields[0] else None
    # Empty fields (no partition columns, no bucket spec) are left out of the printed list, so
    # each field is recognised by its shape rather than its position.
    parts: tuple[str, ...] = ()
    fmt = None
    for f in fields[1:]:
        if not parts and f.startswith("[") and "#" in f:
            parts = tuple(_COLUMN_ID.sub("", c.strip()) for c in f.strip("[]").split(",") if c.strip())
        elif fmt is None and _WORD.match(f) and f not in _NOT_FORMAT:
            fmt = f
    return WriteTarget(cmd["cmd"], path, mode["mode"] if mode else None, parts, fmt,
                       f"{table['db']}.{table['table']}" if table else None)


def _split_top(args: str) -> list[str]:
    """Split on commas outside brackets and parentheses."""
    out, depth, cur = [], 0, []
    for ch in args:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur).strip())
    return out
