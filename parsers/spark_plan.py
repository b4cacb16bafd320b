"""What a SQL execution writes, read from its ``SparkListenerSQLExecutionStart``.

One reader for live capture and event logs (both hand it the same event JSON). Spark's SQL events
carry no structured write target; the plan does, in the write command's constructor fields. Spark
3.x and 4.x print them on the ``Arguments:`` line of the formatted ``physicalPlanDescription``::

    (5) Execute InsertIntoHadoopFsRelationCommand
    Arguments: file:/tmp/out, false, [p#7L], Parquet, [path=/tmp/out], Overwrite, [id, p]

Spark 2.4 prints no ``Arguments:`` lines; there the command node of ``sparkPlanInfo`` carries the
same fields in its ``simpleString`` (``Execute InsertIntoHadoopFsRelationCommand <fields>``), which
is read when the description has none. Empty fields (no partition columns, no bucket spec, no
static partitions) are left out of the printed list, so fields are recognised by their shape.
Shapes below are those of real Spark 3.5 / 4.x logs (tests/test_spark_plan_live.py writes each).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

V1_COMMANDS = (
    "InsertIntoHadoopFsRelationCommand", "InsertIntoHiveTable", "CreateDataSourceTableAsSelectCommand",
    "CreateHiveTableAsSelectCommand", "OptimizedCreateHiveTableAsSelectCommand",
    "SaveIntoDataSourceCommand", "InsertIntoDataSourceDirCommand", "InsertIntoHiveDirCommand",
    "WriteIntoDeltaCommand",
)
# ReplaceData: a copy-on-write DELETE, UPDATE or MERGE rewriting files of a V2 table (Spark 3.4+)
V2_COMMANDS = ("AppendData", "OverwriteByExpression", "OverwritePartitionsDynamic", "ReplaceData")
_V2_MODE = {"AppendData": "Append", "OverwriteByExpression": "Overwrite",
            "OverwritePartitionsDynamic": "Overwrite", "ReplaceData": "Overwrite"}
_V1 = "|".join(V1_COMMANDS)
_V2 = "|".join(V2_COMMANDS)
_FORMATTED = re.compile(
    rf"^\(\d+\) (?:Execute (?P<v1>{_V1})|(?P<v2>{_V2})(?:Exec(?:V1)?)?(?P<v2t> [^\n]*)?)\s*$", re.M)
# Delta's WriteIntoDeltaCommand prints Spark's FileFormatWriter.OutputSpec(outputPath,
# customPartitionLocations, outputColumns); a Delta V2 write (AppendDataExecV1, …) its table as
# DeltaTableV2(spark, path, catalogTable, …); Iceberg's SparkWrite as IcebergWrite(table=…, format=…)
_OUTPUT_SPEC = re.compile(r"OutputSpec\((?P<path>[^,()]+),")
_DELTA_V2 = re.compile(r"DeltaTableV2\([^,()]*(?:\([^)]*\))?[^,()]*,(?P<path>[^,()]+)[,)]")
_ICEBERG_WRITE = re.compile(r"IcebergWrite\(table=(?P<table>[^,()\s]+), format=(?P<format>\w+)\)")
_ARGS = re.compile(r"^Arguments: (?P<args>.*)$", re.M)
_MODE = re.compile(r"(?:^|, )(?P<mode>Overwrite|Append|ErrorIfExists|Ignore)(?:,|$)")
_TABLE = re.compile(r"`(?:spark_catalog`\.`)?(?P<db>[^`]+)`\.`(?P<table>[^`]+)`")
_HIVE_NAME = re.compile(r"\[Database: (?P<db>[^,\]]+), TableName: (?P<table>[^,\]]+)")
_COLUMN_ID = re.compile(r"#\d+L?$")
_WORD = re.compile(r"^[A-Za-z][\w.]*$")
_NOT_FORMAT = {"true", "false", "None", "Overwrite", "Append", "ErrorIfExists", "Ignore"}
_STATIC = re.compile(r"^(?:\[|Map\()(?P<spec>[^#]*=[^#]*)[\])]$")
_LOCATION = re.compile(r"(?:HiveTempPath\(|Location: |path=)(?P<path>[^,)\]\s]+)")
_PROVIDER = re.compile(r"\.(?P<name>\w+?)(?:RelationProvider|Provider|Source|DataSource)?@[0-9a-f]+")


@dataclass(frozen=True)
class WriteTarget:
    command: str
    path: str | None
    mode: str | None
    partition_columns: tuple[str, ...]
    file_format: str | None
    table: str | None
    static_partitions: tuple[tuple[str, str | None], ...] = field(default=())

    def as_detail(self) -> dict:
        return {"command": self.command, "path": self.path, "mode": self.mode,
                "partition_columns": list(self.partition_columns), "format": self.file_format,
                "static_partitions": {k: v for k, v in self.static_partitions}}

    @property
    def listed(self) -> bool:
        """Whether live capture lists the output directory when the write ends: a path, and not a
        Delta table, whose files are judged by its own log, never as a Hive output directory (no
        _SUCCESS by design: every write would look uncommitted)."""
        return bool(self.path) and self.file_format != "delta"

    @property
    def partition_spec(self) -> str | None:
        """``p=1/q=2`` when every partition value is static (the write touches one partition)."""
        if self.static_partitions and all(v is not None for _, v in self.static_partitions):
            return "/".join(f"{k}={v}" for k, v in self.static_partitions)
        return None


def normalize_path(path: str) -> str:
    """Hadoop prints local paths as ``file:/a/b``; the store keeps ``file:///a/b``."""
    if path.startswith("file:/") and not path.startswith("file://"):
        return "file:///" + path[len("file:/"):].lstrip("/")
    return path


def write_target(plan: str | None, plan_info: dict | None = None) -> WriteTarget | None:
    """The write command of a SQL execution, or None when it writes nothing."""
    found = _from_description(plan) or _from_plan_info(plan_info)
    if found is None:
        return None
    command, table_word, args = found
    return _read(command, table_word, args)


def _from_description(plan: str | None):
    if not plan:
        return None
    cmd = _FORMATTED.search(plan)
    if cmd is None:
        return None
    args_m = _ARGS.search(plan, cmd.end())
    args = args_m.group("args") if args_m else ""
    return cmd["v1"] or cmd["v2"], (cmd["v2t"] or "").strip() or None, args


def _from_plan_info(info: dict | None):
    """Spark 2.4: the command node of the ``sparkPlanInfo`` tree, depth first."""
    stack = [info]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):  # as the root: what is not a node names no command
            continue
        name = _text_of(node, "nodeName").removeprefix("Execute ").strip()
        base = name.split(" ")[0].removesuffix("Exec")
        if base in V1_COMMANDS or base in V2_COMMANDS:
            simple = _text_of(node, "simpleString").removeprefix("Execute ").strip()
            rest = simple.removeprefix(base).lstrip()
            rest = rest.removeprefix(base).lstrip()  # 2.4 repeats the command's own name
            table_word = name[len(base):].strip() or None if base in V2_COMMANDS else None
            if table_word:
                rest = rest.removeprefix(table_word).lstrip()
            return base, table_word, rest
        children = node.get("children")
        if isinstance(children, list):
            stack.extend(reversed(children))
    return None


def _text_of(node: dict, key: str) -> str:
    value = node.get(key)
    return value if isinstance(value, str) else ""


def _table(args: str) -> str | None:
    m = _TABLE.search(args) or _HIVE_NAME.search(args)
    return f"{m['db']}.{m['table']}" if m else None


def _static(spec: str) -> tuple[tuple[str, str | None], ...]:
    """``p=1, q=Some(2), r=None`` or ``p -> 1`` -> ((p, 1), (q, 2), (r, None))."""
    out = []
    for part in spec.split(","):
        k, sep, v = part.replace(" -> ", "=").partition("=")
        if not sep:
            continue
        v = v.strip()
        v = None if v == "None" else v.removeprefix("Some(").removesuffix(")")
        out.append((k.strip(), v))
    return tuple(out)


def _local(path: str) -> str:
    """A bare local path (``/tmp/x``) as the ``file:`` URI every other location is."""
    return "file:" + path if path.startswith("/") else path


def _location(args: str) -> str | None:
    m = _LOCATION.search(args)
    if m is None:
        return None
    # a bare local path (``Location: /tmp/x``) is a file: URI like every other location
    return normalize_path("file:" + m["path"] if m["path"].startswith("/") else m["path"])


def _read(command: str, table_word: str | None, args: str) -> WriteTarget:
    fields = _split_top(args)
    mode_m = _MODE.search(args)
    mode = mode_m["mode"] if mode_m else None
    table = _table(args)
    if command in V2_COMMANDS:
        delta, iceberg = _DELTA_V2.search(args), _ICEBERG_WRITE.search(args)
        if delta:
            return WriteTarget(command, normalize_path(_local(delta["path"].strip())), _V2_MODE[command], (), "delta",
                               table_word or table)
        if iceberg:
            return WriteTarget(command, None, _V2_MODE[command], (), iceberg["format"].lower(), iceberg["table"])
        return WriteTarget(command, None, _V2_MODE[command], (), None, table_word)
    if command == "WriteIntoDeltaCommand":
        spec = _OUTPUT_SPEC.search(args)
        return WriteTarget(command, normalize_path(_local(spec["path"].strip())) if spec else None, mode, (),
                           "delta", table)
    if command in ("CreateDataSourceTableAsSelectCommand", "CreateHiveTableAsSelectCommand",
                   "OptimizedCreateHiveTableAsSelectCommand"):
        # CTAS: the table is named here; the files are written by a nested insert execution.
        return WriteTarget(command, None, mode or "ErrorIfExists", (), None, table)
    if command == "InsertIntoHiveTable":
        static = next((_static(m["spec"]) for f in fields if (m := _STATIC.match(f))), ())
        flags = [f for f in fields if f in ("true", "false")]
        mode = "Overwrite" if flags and flags[0] == "true" else "Append"
        return WriteTarget(command, _location(args), mode, tuple(k for k, _ in static), "hive",
                           table, static)
    if command in ("InsertIntoDataSourceDirCommand", "InsertIntoHiveDirCommand"):
        fmt = next((f for f in fields[1:] if _WORD.match(f) and f not in _NOT_FORMAT), None)
        mode = "Overwrite" if "true" in fields else "Append"
        return WriteTarget(command, _location(args), mode, (), fmt or "hive", None)
    if command == "SaveIntoDataSourceCommand":
        provider = _PROVIDER.search(args)
        options = dict(_static(fields[1].strip("[]"))) if len(fields) > 1 else {}
        return WriteTarget(command, _location(fields[1]) if len(fields) > 1 else None, mode, (),
                           provider["name"].lower() if provider else None,
                           options.get("dbtable") or table)
    # InsertIntoHadoopFsRelationCommand
    path = normalize_path(fields[0]) if fields and "/" in fields[0] else None
    parts: tuple[str, ...] = ()
    static: tuple = ()
    fmt = None
    for i, f in enumerate(fields[1:], 1):
        if i == 1 and (m := _STATIC.match(f)) and "path=" not in f:
            static = _static(m["spec"])
        elif not parts and f.startswith("[") and "#" in f:
            parts = tuple(_COLUMN_ID.sub("", c.strip()) for c in f.strip("[]").split(",") if c.strip())
        elif fmt is None and _WORD.match(f) and f not in _NOT_FORMAT:
            fmt = f
    return WriteTarget(command, path, mode, parts, fmt, table, static)


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
