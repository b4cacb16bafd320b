"""``analyze --engine spark``: the fact model and every detector on Spark SQL.

One source of truth: the SQL Spark runs is generated, at run time, from the DuckDB SQL the local
engine runs: the views and macros of the store's migrations (the last definition of each) and
each detector's ``sql``. sqlglot transpiles them; the few DuckDB forms it leaves as they are
(macros, ``list(… ORDER BY …)``, ASOF joins, string and list slices, ``regexp_extract`` into a
struct, ``struct_insert``, ``list_zip``) are rewritten here on the parsed tree. Nothing is kept
twice by hand: a change to a view or a detector reaches both engines.
"""

from __future__ import annotations

import logging
import re
import time
from collections import Counter
from functools import lru_cache
from importlib import resources

import sqlglot
from sqlglot import exp, transforms

from commitsleuth.errors import CommitsleuthError
from sqlglot.dialects.spark import Spark


class _Spark(Spark):
    """Spark 3.5+/4 as it is: QUALIFY is its own (sqlglot's Spark moves it into a subquery, which
    loses the table aliases a QUALIFY names)."""

    class Generator(Spark.Generator):
        TRANSFORMS = {**Spark.Generator.TRANSFORMS,
                      exp.Select: transforms.preprocess([transforms.eliminate_distinct_on,
                                                         transforms.unnest_to_explode, transforms.any_to_exists])}

log = logging.getLogger(__name__)
_LAMBDA = re.compile(r"\blambda\s+([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*:")
# DuckDB's JSON arrows chained (detail->'write'->>'command'): one JSONPath, read as the arrows are
_JSON_CHAIN = re.compile(r"((?:\w+\.)?\w+)((?:->'\w+')+)->>'(\w+)'")
_JSON_PATH = re.compile(r"((?:\w+\.)?\w+)->'(\w+)'((?:->'\w+')+)")  # x->'a'->'b': JSON, not text
_STATEMENT = re.compile(
    r"^CREATE\s+(?:OR\s+REPLACE\s+)?(VIEW|MACRO)\s+(\w+)\s*(\([^)]*\))?\s+AS\s+(TABLE\s+)?(.*)$", re.S | re.I)


def _duckdb_text(sql: str) -> str:
    """DuckDB's ``lambda x: …`` as ``x -> …`` and ``len(list)`` as ``array_length`` (the same
    functions), the spellings sqlglot reads."""
    def arrow(m):
        names = [n.strip() for n in m.group(1).split(",")]
        return (names[0] if len(names) == 1 else "(" + ", ".join(names) + ")") + " ->"
    def path(m):
        keys = re.findall(r"->'(\w+)'", m.group(2)) + [m.group(3)]
        return f"{m.group(1)}->>'$.{'.'.join(keys)}'"
    sql = _JSON_CHAIN.sub(path, _LAMBDA.sub(arrow, sql))
    def json_path(m):
        keys = [m.group(2)] + re.findall(r"'(\w+)'", m.group(3))
        return f"{m.group(1)}->>'$.{'.'.join(keys)}'"  # on Spark JSON is its text either way
    sql = _JSON_PATH.sub(json_path, sql)
    return re.sub(r"\blen\(", "array_length(", sql)


def _code(statement: str) -> str:
    """A statement without its comments (a ``--`` on a line that quotes is left: it may be text)."""
    return "\n".join(line.split("--", 1)[0] if "'" not in line.split("--", 1)[0] else line
                     for line in statement.splitlines()).strip().rstrip(";").strip()


_OBJECT = re.compile(r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(VIEW|MACRO)\s+(\w+)", re.I)


@lru_cache(maxsize=1)
def live_objects() -> dict[str, tuple[str, str, str]]:
    """View or macro name -> ``(kind, migration, statement)`` of its live definition: the last
    ``CREATE [OR REPLACE]`` across commitsleuth/migrations/ (``kind`` VIEW or MACRO, the
    migration as ``commitsleuth/migrations/NNNN_name.sql``, the statement as written, comments
    kept, ending with its ``;``). A name redefined later keeps its first place: what it reads
    was made before."""
    out: dict[str, tuple[str, str, str]] = {}
    migrations = resources.files("commitsleuth").joinpath("migrations")
    for entry in sorted(migrations.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".sql"):
            continue
        text = entry.read_text(encoding="utf-8") + "\n"
        for part in re.split(r";[ \t]*(?:--[^\n]*)?\n", text):
            stmt = part.strip() + ";"
            m = _OBJECT.match(re.sub(r"^(?:\s*--[^\n]*\n)*", "", stmt)) if part.strip() else None
            if m:
                out[m[2]] = (m[1].upper(), f"commitsleuth/migrations/{entry.name}", stmt)
    return out


@lru_cache(maxsize=1)
def catalog() -> tuple[dict[str, str], dict[str, tuple[list[str], str, bool]]]:
    """``(views, macros)`` as the migrations leave them (live_objects): view name -> its SELECT,
    in creation order; macro name -> (parameters, body, is_table)."""
    views: dict[str, str] = {}
    macros: dict[str, tuple[list[str], str, bool]] = {}
    for _, _, statement in live_objects().values():
        m = _STATEMENT.match(_code(statement))
        if not m:
            continue
        kind, name, params, is_table, body = m.groups()
        if kind.upper() == "VIEW":
            views[name] = body
        else:
            names = [p.strip() for p in (params or "()")[1:-1].split(",") if p.strip()]
            macros[name] = (names, body, bool(is_table))
    return views, macros


def _parse(sql: str) -> exp.Expression:
    return sqlglot.parse_one(_duckdb_text(sql), read="duckdb")


# --- rewrites of the parsed DuckDB tree -------------------------------------------------------

def _expand_macros(tree: exp.Expression, macros) -> exp.Expression:
    """A macro call becomes its body with the arguments in place of the parameters: a scalar
    macro in place, a table macro as a subquery."""
    def substitute(body: str, params: list[str], args: list[exp.Expression]) -> exp.Expression:
        parsed = _expand_macros(_parse(body), macros)
        values = dict(zip(params, args))

        def put(node):
            if isinstance(node, exp.Column) and not node.table and node.name in values:
                arg = values[node.name]
                if isinstance(arg, exp.Null):  # an untyped NULL list: Spark wants its type
                    return exp.cast(exp.null(), "ARRAY<STRING>", dialect="spark")
                return arg.copy()
            return node
        return parsed.transform(put)

    def expand(node):
        if isinstance(node, exp.Anonymous) and node.name in macros and not macros[node.name][2]:
            params, body, _ = macros[node.name]
            return exp.Paren(this=substitute(body, params, list(node.expressions)))
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous) and node.this.name in macros:
            params, body, _ = macros[node.this.name]
            sub = substitute(body, params, list(node.this.expressions))
            alias = node.alias or node.this.name
            return exp.Subquery(this=sub, alias=exp.TableAlias(this=exp.to_identifier(alias)))
        return node
    return tree.transform(expand)


def _is_list(node: exp.Expression) -> bool:
    return isinstance(node, (exp.ArrayAgg, exp.Array, exp.ArraySort, exp.ArrayDistinct, exp.Filter)) or (
        isinstance(node, (exp.Paren, exp.Bracket)) and _is_list(node.this))


def _list_agg(node: exp.ArrayAgg, where: exp.Expression | None) -> exp.Expression:
    """DuckDB's ``list(x)``, ``list(DISTINCT x ORDER BY k, …)``: Spark's collect_list keeps no
    order, so (k, …, x) structs are sorted and x taken."""
    def collect(name, value):
        agg = exp.Anonymous(this=name, expressions=[value.transform(_rewrite)])
        return exp.Filter(this=agg, expression=where.copy()) if where is not None else agg
    inner = node.this.this if isinstance(node.this, exp.Order) else node.this
    distinct = isinstance(inner, exp.Distinct)
    value = inner.expressions[0] if distinct else inner
    if not isinstance(node.this, exp.Order):
        return collect("collect_set" if distinct else "collect_list", value.copy())
    keys = [o.this for o in node.this.expressions]
    desc = any(o.args.get("desc") for o in node.this.expressions)
    if distinct and len(keys) == 1 and keys[0] == value and not desc:
        return exp.Anonymous(this="array_sort", expressions=[collect("collect_set", value.copy())])
    fields = [exp.alias_(k.copy(), f"k{i}") for i, k in enumerate(keys)] + [exp.alias_(value.copy(), "v")]
    sort = exp.Anonymous(this="array_sort", expressions=[
        collect("collect_set" if distinct else "collect_list", exp.Struct(expressions=fields))])
    if desc:
        sort = exp.Anonymous(this="reverse", expressions=[sort])
    return sqlglot.parse_one("transform(_s, s -> s.v)", read="spark").transform(
        lambda n: sort if isinstance(n, exp.Column) and n.name == "_s" else n)


def _compact(items: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this="array_compact", expressions=[items])


def _drops_nulls(lam: exp.Expression) -> bool:
    """Whether a lambda is ``x -> x IS NOT NULL`` (``NOT x IS NULL`` as parsed)."""
    if not isinstance(lam, exp.Lambda) or len(lam.expressions) != 1:
        return False
    body, var = lam.this, lam.expressions[0].name
    return (isinstance(body, exp.Not) and isinstance(body.this, exp.Is) and isinstance(body.this.expression, exp.Null)
            and isinstance(body.this.this, (exp.Column, exp.Identifier)) and body.this.this.name == var)


def _lateral_unnest(tree: exp.Expression) -> exp.Expression:
    """``FROM i, unnest(xs) AS d(x) JOIN f ON … d.x …``: Spark's ``LATERAL VIEW`` (what sqlglot
    writes) comes after every join, so the join cannot read ``d.x``; ``LATERAL explode(xs) AS
    d(x)`` is a join in its place."""
    for select in tree.find_all(exp.Select):
        joins = select.args.get("joins") or []
        for i, join in enumerate(joins[:-1]):
            alias = join.this.args.get("alias") if isinstance(join.this, exp.Unnest) else None
            if alias is None or not alias.columns or len(join.this.expressions) != 1:
                continue
            join.set("this", exp.Lateral(this=exp.Explode(this=join.this.expressions[0].copy()), alias=alias.copy()))
            join.set("kind", None)
    return tree


def _aliases(select: exp.Select) -> set[str]:
    """The names a SELECT's own FROM and JOINs give their sources."""
    parts = [select.args.get("from") or select.args.get("from_"), *(select.args.get("joins") or [])]
    return {p.this.alias_or_name for p in parts if p is not None}


def _lift_nested_correlation(tree: exp.Expression) -> exp.Expression:
    """``FROM d WHERE NOT EXISTS (SELECT … FROM x WHERE … (SELECT max(y.ts) … WHERE y.k = d.k))``:
    Spark cannot correlate a subquery with a query two levels out. The inner subquery, reading
    only ``d`` from outside, is computed beside ``d`` (``FROM (SELECT d.*, (…) AS _lifted0 FROM
    d) d``) and read as ``d._lifted0``: the same value for the same row of ``d``."""
    for n, inner in enumerate(list(tree.find_all(exp.Subquery))):
        if isinstance(inner.parent, (exp.From, exp.Join)) or inner.alias or not isinstance(inner.this, exp.Select):
            continue
        mid = inner.parent_select
        outer = mid.parent_select if mid is not None and isinstance(mid.parent, (exp.Exists, exp.Subquery)) else None
        if outer is None or isinstance(mid.parent.parent, (exp.From, exp.Join)):
            continue
        local = {t.alias_or_name for t in inner.find_all(exp.Table, exp.Subquery) if t is not inner}
        refs = {c.table for c in inner.find_all(exp.Column) if c.table} - local
        source = (outer.args.get("from") or outer.args.get("from_")).this
        if not refs or refs & _aliases(mid) or refs != {source.alias_or_name} or not isinstance(source, exp.Table):
            continue
        name = source.alias_or_name
        lifted = sqlglot.parse_one(f"SELECT {name}.* FROM _t AS {name}", read="duckdb")
        lifted.args["from_" if "from_" in lifted.args else "from"].set("this", source.copy())
        lifted.select(exp.alias_(inner.copy(), f"_lifted{n}"), copy=False)
        source.replace(exp.Subquery(this=lifted, alias=exp.TableAlias(this=exp.to_identifier(name))))
        inner.replace(exp.column(f"_lifted{n}", table=name))
    return tree


def _rewrite(node: exp.Expression) -> exp.Expression:
    # list(…) FILTER (WHERE c): the filter on Spark's collect; NULL when no row passes, as DuckDB's
    if isinstance(node, exp.Filter) and isinstance(node.this, exp.ArrayAgg):
        where = node.expression.transform(_rewrite)
        none = exp.EQ(this=exp.Filter(this=exp.Count(this=exp.Star()), expression=where.copy()),
                      expression=exp.Literal.number(0))
        return exp.Case(ifs=[exp.If(this=none, true=exp.null())], default=_list_agg(node.this, where))
    # list(…) over no row (an aggregate without GROUP BY): NULL, as DuckDB's; collect_list gives []
    if isinstance(node, exp.ArrayAgg) and isinstance(node.parent, exp.Window):
        return _list_agg(node, None)
    if isinstance(node, exp.ArrayAgg):
        none = exp.EQ(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(0))
        return exp.Case(ifs=[exp.If(this=none, true=exp.null())], default=_list_agg(node, None))
    # regexp_extract(s, re, ['a', 'b']): a struct of the groups, by name
    if isinstance(node, exp.RegexpExtract) and isinstance(node.args.get("group"), exp.Array):
        names = [e.name for e in node.args["group"].expressions]
        return exp.Struct(expressions=[
            exp.alias_(exp.RegexpExtract(this=node.this.copy(), expression=node.expression.copy(),
                                         group=exp.Literal.number(i + 1)), n)
            for i, n in enumerate(names)])
    # struct_insert(s, k := v): the struct with the fields added
    if isinstance(node, exp.Anonymous) and node.name.lower() == "struct_insert":
        base, *added = node.expressions
        struct = base.copy()
        for kv in added:
            struct.append("expressions", exp.alias_(kv.expression.copy(), kv.this.name))
        return struct
    # list_transform(list_zip(a, b), kv -> f(kv[1], kv[2])): zip_with(a, b, (k1, k2) -> f(k1, k2))
    if isinstance(node, exp.Transform) and isinstance(node.this, exp.Anonymous) and node.this.name.lower() == "list_zip":
        lam = node.expression
        var = lam.expressions[0].name

        def positional(n):
            if isinstance(n, exp.Bracket) and isinstance(n.this, (exp.Column, exp.Identifier)) and n.this.name == var:
                return exp.to_identifier(f"_z{int(n.expressions[0].name) + 1}")  # indexes parsed 0-based
            return n
        body = lam.this.transform(positional)
        zipped = exp.Lambda(this=body, expressions=[exp.to_identifier("_z1"), exp.to_identifier("_z2")])
        return exp.Anonymous(this="zip_with", expressions=[*(e.copy() for e in node.this.expressions), zipped])
    # s[a:b] (1-based, both ends in, negative from the end): substring of a string, slice of a list
    if isinstance(node, exp.Bracket) and len(node.expressions) == 1 and isinstance(node.expressions[0], exp.Slice):
        sl = node.expressions[0]
        target = node.this.copy()
        start = sl.this.copy() if sl.this else exp.Literal.number(1)
        size = exp.func("array_size" if _is_list(node.this) else "length", target.copy())
        if sl.expression is None:
            end = size
        elif isinstance(sl.expression, exp.Neg):
            end = exp.Add(this=exp.Sub(this=size, expression=sl.expression.this.copy()), expression=exp.Literal.number(1))
        else:
            end = sl.expression.copy()
        length = exp.Add(this=exp.Sub(this=exp.Paren(this=end), expression=exp.Paren(this=start.copy())),
                         expression=exp.Literal.number(1))
        if _is_list(node.this):
            return exp.Anonymous(this="slice", expressions=[target, start, exp.func("greatest", length, exp.Literal.number(0))])
        return exp.Substring(this=target, start=start, length=length)
    # f(unnest(xs)) in a select list: Spark's explode stands alone, so unnest(list_transform(xs, u -> f(u)))
    if isinstance(node, exp.Alias) and not isinstance(node.this, (exp.Explode, exp.Unnest)):
        gens = [g for g in node.this.find_all(exp.Explode, exp.Unnest)]
        if len(gens) == 1 and isinstance(gens[0], exp.Explode):
            items = gens[0].this.copy()
            body = node.this.copy().transform(
                lambda n: exp.to_identifier("_u") if isinstance(n, exp.Explode) else n)
            lam = exp.Lambda(this=body, expressions=[exp.to_identifier("_u")])
            return exp.alias_(exp.Explode(this=exp.Transform(this=items, expression=lam)), node.alias)
    # DuckDB's list_distinct and list_has_any skip NULLs (Spark's array_distinct keeps one, and
    # arrays_overlap is NULL, not false, when a NULL is all they might share)
    if isinstance(node, exp.ArrayDistinct):
        return exp.Anonymous(this="array_distinct", expressions=[_compact(node.this.transform(_rewrite))])
    if isinstance(node, exp.ArrayOverlaps):
        return exp.Anonymous(this="arrays_overlap", expressions=[
            _compact(node.this.transform(_rewrite)), _compact(node.expression.transform(_rewrite))])
    # list_filter(xs, x -> x IS NOT NULL): array_compact, which Spark allows over a subquery (a
    # higher-order function's arguments may not hold one: CS202's writer label)
    if isinstance(node, exp.ArrayFilter) and _drops_nulls(node.expression):
        return _compact(node.this.transform(_rewrite))
    # list_sort over a subquery: Spark's array_sort is a higher-order function (its comparator),
    # sort_array is not; both ascending, and what they sort here holds no NULL (compacted)
    if isinstance(node, exp.ArraySort) and node.this.find(exp.Subquery) and not node.args.get("expression"):
        return exp.Anonymous(this="sort_array", expressions=[node.this.transform(_rewrite)])
    # '-infinity'::TIMESTAMP: Spark has no infinite timestamp (the cast is NULL, and every
    # comparison with it); the least and greatest timestamps compare as DuckDB's infinities do
    if (isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and node.this.is_string
            and node.this.name.lower() in ("-infinity", "infinity") and node.to.this in exp.DataType.TEMPORAL_TYPES):
        bound = "0001-01-01 00:00:00" if node.this.name.startswith("-") else "9999-12-31 23:59:59.999999"
        return exp.Cast(this=exp.Literal.string(bound), to=node.to.copy())
    # JSON values are their text on Spark (get_json_object and from_json read text)
    if isinstance(node, exp.DataType) and node.this == exp.DataType.Type.JSON:
        return exp.DataType.build("STRING")
    # to_microseconds(n): an interval of n microseconds
    if isinstance(node, exp.Anonymous) and node.name.lower() == "to_microseconds":
        seconds = exp.Div(this=exp.cast(node.expressions[0].copy(), "DECIMAL(38,6)"),
                          expression=exp.Literal.number(1000000))
        return exp.Anonymous(this="make_dt_interval", expressions=[exp.Literal.number(0)] * 3 + [seconds])
    # WITH x AS MATERIALIZED (…): a hint DuckDB alone knows
    if isinstance(node, exp.CTE) and node.args.get("materialized") is not None:
        node.set("materialized", None)
    return node


def _asof(tree: exp.Expression) -> exp.Expression:
    """``a ASOF LEFT JOIN b ON eq AND a.t >= b.t``: a range join keeping, for each row of ``a``
    (an event: its ``event_id``), the match with the latest ``b.t``; no match keeps the row.
    Two ASOF joins in one SELECT (CS104's queries and commands) are ranked together, latest
    ``b.t`` then latest ``c.t``: the two ranges are independent, so the row with both latest
    exists (one QUALIFY per join kept only the last, and the first join's match was any row)."""
    latest: dict[int, tuple[exp.Select, str, list[str]]] = {}
    for join in list(tree.find_all(exp.Join)):
        if (join.args.get("kind") or "").upper() != "ASOF" and "ASOF" not in str(join.args.get("method") or "").upper():
            continue
        select = join.parent_select
        left = (select.args.get("from") or select.args.get("from_")).this
        right_alias = join.this.alias_or_name
        ineq = next(c for c in join.args["on"].find_all(exp.GTE, exp.GT, exp.LTE, exp.LT))
        later = ineq.expression if isinstance(ineq, (exp.GTE, exp.GT)) else ineq.this
        assert later.table == right_alias, "ASOF join: the right side's time on the lesser side"
        join.set("kind", None)
        join.set("method", None)
        join.set("side", "LEFT")
        latest.setdefault(id(select), (select, left.alias_or_name, []))[2].append(
            f"{later.sql('spark')} DESC NULLS LAST")
    for select, left, order in latest.values():
        rank = sqlglot.parse_one(
            f"row_number() OVER (PARTITION BY {left}.event_id ORDER BY {', '.join(order)}) = 1", read="spark")
        select.set("qualify", exp.Qualify(this=rank))
    return tree


def to_spark(sql: str) -> str:
    """Spark SQL of one DuckDB query (a view's body, a detector's ``sql``)."""
    _, macros = catalog()
    tree = _expand_macros(_parse(sql), macros)
    tree = _asof(tree)
    tree = _lateral_unnest(tree)
    tree = _lift_nested_correlation(tree)
    tree = tree.transform(_rewrite)
    return _Spark().generate(tree)


def view_sql() -> list[tuple[str, str]]:
    """``(name, Spark SQL)`` of every fact model view, each after the views it reads."""
    return list(_view_sql())


@lru_cache(maxsize=1)
def _view_sql() -> tuple[tuple[str, str], ...]:
    # transpiling every view takes seconds: once a process, as catalog() reads the migrations once
    views, _ = catalog()
    done: dict[str, str] = {}

    def add(name, path=()):
        if name in done:
            return
        assert name not in path, f"views read one another: {path}"
        sql = to_spark(views[name])
        for table in sqlglot.parse_one(sql, read="spark").find_all(exp.Table):
            if table.name in views and table.name != name:
                add(table.name, (*path, name))
        done[name] = sql
    for name in views:
        add(name)
    return tuple(done.items())


# --- running it ----------------------------------------------------------------------------------

# Spark as DuckDB reads: timestamps without a zone (the store's are UTC wall times) and NULL, not
# an error, for a bad cast or an index past a list's end.
SESSION_CONF = {"spark.sql.session.timeZone": "UTC", "spark.sql.ansi.enabled": "false",
                # Spark 4 gives a union its children's partitioning; with a view kept by
                # localCheckpoint on one side and a shuffle AQE coalesced on the other, the two
                # disagree on the count and the join zipping them fails ("Can't zip RDDs with
                # unequal numbers of partitions", loading_steps' UNION ALL, CS103)
                "spark.sql.unionOutputPartitioning": "false"}
TABLES = ("events", "sources")
# views no detector reads (the user's timeline): left as plans
UNREAD_VIEWS = ("timeline",)


def session(master: str | None = None):
    """The active SparkSession, else a new one on ``master`` (default ``local[*]``)."""
    from commitsleuth.ingest.spark import spark_session

    return spark_session(master, SESSION_CONF)


def export_parquet(store, directory) -> str:
    """The store's events and sources as Parquet (``DIR/events``, ``DIR/sources``), event ids
    kept, so a cluster reads them and findings name the store's events."""
    from pathlib import Path

    out = Path(directory)
    for table in TABLES:
        (out / table).mkdir(parents=True, exist_ok=True)
        store.con.execute(f"COPY (SELECT * FROM {table}) TO '{out / table / 'part-0.parquet'}' (FORMAT parquet)")
    return str(out)


def view_reads(sqls) -> Counter:
    """How many times the Spark SQL texts name each fact model view, counting the names in the
    views they read (a view two plans name is computed twice unless it is kept)."""
    defined = dict(view_sql())
    reads: Counter = Counter()
    todo = list(sqls)
    while todo:
        for table in sqlglot.parse_one(todo.pop(), read="spark").find_all(exp.Table):
            if table.name in defined:
                if table.name not in reads:
                    todo.append(defined[table.name])
                reads[table.name] += 1
    return reads


# a shuffle partition per this many bytes of the Parquet read (AQE coalesces what is smaller):
# Spark's default of 200 a shuffle is most of the cost of a small run (a map task writes 200
# files a shuffle, a stage runs 200 tasks where AQE does not coalesce)
SHUFFLE_BYTES = 32 * 1024 * 1024
_PARTITIONS = "spark.sql.shuffle.partitions"


def shuffle_partitions(spark, directory: str) -> int:
    """``spark.sql.shuffle.partitions`` sized to the Parquet under ``directory``: one per
    SHUFFLE_BYTES, at least the cluster's default parallelism (every core busy)."""
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(directory)
    size = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).getContentSummary(path).getLength()
    return max(spark.sparkContext.defaultParallelism, -(-size // SHUFFLE_BYTES))


def kept_views(reads: Counter) -> set[str]:
    """The views register computes once (of view_reads' counts): each named twice or more, and
    each a kept view reads (inlining it there saves nothing: its reader is computed once anyway,
    and kept it has a size the planner can see, see register)."""
    defined = dict(view_sql())
    kept = {name for name, n in reads.items() if n >= 2 and name not in UNREAD_VIEWS}
    for name, sql in reversed(view_sql()):  # readers come after what they read
        if name in kept:
            kept |= {t.name for t in sqlglot.parse_one(sql, read="spark").find_all(exp.Table)
                     if t.name in reads and t.name in defined and t.name not in UNREAD_VIEWS and t.name != name}
    return kept


def _rdd_bytes(spark, frame) -> int | None:
    """What a localCheckpoint-ed frame's blocks take (memory and disk), from the block manager:
    no job. None when the blocks are not listed."""
    rdd_id = frame._jdf.queryExecution().analyzed().rdd().id()
    for info in spark.sparkContext._jsc.sc().getRDDStorageInfo():
        if info.id() == rdd_id:
            return info.memSize() + info.diskSize()
    return None


def _small(spark, frame) -> bool:
    """Whether a localCheckpoint-ed view's blocks fit ``spark.sql.autoBroadcastJoinThreshold``.
    Spark sizes a checkpointed view by its plan's estimate (a GROUP BY over every event is as
    big as the events), so the joins of the events with table_locations, location_aliases or
    partition_values shuffled and sorted every event's whole row (thrice for partition_events,
    the rows with a NULL key all in one task); a view this small is hinted ``broadcast``."""
    limit = spark._jsparkSession.sessionState().conf().autoBroadcastJoinThreshold()
    size = _rdd_bytes(spark, frame)
    return limit > 0 and size is not None and size <= limit


def broadcast_derived(sql: str, small: set[str]) -> str:
    """``sql`` with a ``BROADCAST`` hint on each joined CTE or subquery that only filters,
    projects or aggregates one view of ``small`` (views hinted ``broadcast``): at most as big as
    it, but a view's hint does not reach through a GROUP BY (partition_events' ``loc_tables``,
    ``SELECT location, min(table_name) FROM table_locations GROUP BY location``)."""
    if not small:
        return sql
    tree = sqlglot.parse_one(sql, read="spark")
    ctes = {c.alias: c.this for c in tree.find_all(exp.CTE)}

    def over_small(node) -> bool:
        if not isinstance(node, exp.Select) or node.args.get("joins") or node.find(exp.Explode, exp.Lateral):
            return False
        source = (node.args.get("from") or node.args.get("from_")).this
        return isinstance(source, exp.Table) and source.name in small and source.name not in ctes
    changed = False
    for join in tree.find_all(exp.Join):
        right = join.this
        body = right.this if isinstance(right, exp.Subquery) else ctes.get(right.name) if isinstance(right, exp.Table) else None
        if body is None or not over_small(body) or (join.args.get("side") or "").upper() in ("RIGHT", "FULL"):
            continue
        select = join.parent_select
        hint = select.args.get("hint") or exp.Hint(expressions=[])
        hint.append("expressions", exp.Anonymous(this="BROADCAST", expressions=[exp.to_identifier(right.alias_or_name)]))
        select.set("hint", hint)
        changed = True
    return _Spark().generate(tree) if changed else sql


def register(spark, directory: str, views=None, storage=None) -> list:
    """Temp views over the Parquet: the tables, then the fact model views (only ``views``, in
    their order of creation, when named: a view no detector of the run reads costs a job).

    Each view is computed once (``localCheckpoint``, kept at ``storage``, a pyspark StorageLevel;
    Spark's default is rows as objects in memory, spilled to disk). With ``views`` as a Counter
    (view_reads) only kept_views are computed once; a view named once by a detector is left a
    plan its one reader inlines, its input pruned to what that reader takes. A kept view whose
    blocks fit ``spark.sql.autoBroadcastJoinThreshold`` is hinted ``broadcast`` (_small).
    Returns the checkpointed frames (``unpersist`` them when done)."""
    kept = []
    for key, value in SESSION_CONF.items():
        spark.conf.set(key, value)
    for table in TABLES:
        spark.read.parquet(f"{directory}/{table}").createOrReplaceTempView(table)
    keep = kept_views(views) if isinstance(views, Counter) else None
    small: set[str] = set()
    for name, sql in view_sql():
        if views is not None and name not in views:
            continue
        frame, t0 = spark.sql(broadcast_derived(sql, small)), time.perf_counter()
        if name not in UNREAD_VIEWS and (keep is None or name in keep):
            # computed once: a view is inlined into every plan that reads it, and Catalyst's
            # analyzer and optimizer spend minutes (or the heap: a cached view's plan stays whole)
            # on the plans of views over views (file_attempts reads spark_task_attempts five
            # times) that are milliseconds of work
            frame = frame.localCheckpoint(storageLevel=storage)
            kept.append(frame)
            if _small(spark, frame):
                frame = frame.hint("broadcast")
                small.add(name)
            log.debug("view %s kept%s in %.2f s", name, " (broadcast)" if name in small else "",
                      time.perf_counter() - t0)
        frame.createOrReplaceTempView(name)
    return kept


def prepare(spark, directory: str, detectors) -> list:
    """What ``analyze_spark`` runs before the detectors: shuffles sized to the data (unless the
    session sets ``spark.sql.shuffle.partitions``) and the views
    the detectors read registered, serialized where they are kept (at 10M events the views as
    rows filled an 8 GB heap). bench/scale.py times the same. Returns register's frames."""
    from pyspark import StorageLevel

    if not spark._jsparkSession.conf().contains(_PARTITIONS):  # the user's, if set
        spark.conf.set(_PARTITIONS, str(shuffle_partitions(spark, directory)))
    return register(spark, directory, view_reads(detector_sql(d.code, d.sql) for d in detectors),
                    StorageLevel.MEMORY_AND_DISK)  # pyspark's: serialized on the JVM


@lru_cache(maxsize=None)
def detector_sql(code: str, sql: str) -> str:
    return to_spark(sql)


def _plain(value):
    """A Spark Row, list or value as DuckDB's Python client gives it (structs as dicts)."""
    from pyspark.sql import Row

    if isinstance(value, Row):
        return {k: _plain(v) for k, v in value.asDict(recursive=False).items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def spark_error(exc: BaseException) -> str:
    """What went wrong on the JVM, in a line: the Java exception and its root cause. A Py4J
    error's own first line ("An error occurred while calling o5190.sql.") names only the call."""
    def first_line(text: str) -> str:
        return next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)
    java = getattr(exc, "java_exception", None)
    if java is None:
        return first_line(str(exc))
    root = java
    while root.getCause() is not None and not root.getCause().equals(root):
        root = root.getCause()
    return first_line(java.toString()) + ("" if root.equals(java) else f" (cause: {first_line(root.toString())})")


def run_detectors(spark, store, detectors) -> list:
    """Each detector's SQL on Spark, its rows collected to the driver and worded there."""
    findings = []
    for det in detectors:
        t0 = time.perf_counter()
        try:
            rows = spark.sql(detector_sql(det.code, det.sql)).collect()
        except Exception as exc:  # noqa: BLE001 - Spark's analysis errors: one line for the user
            raise CommitsleuthError(f"{det.code} {det.name} does not run on Spark: {spark_error(exc)[:600]}") from None
        log.debug("%s on Spark: %d rows in %.2f s", det.code, len(rows), time.perf_counter() - t0)
        found = [det.to_finding({k: _plain(v) for k, v in r.asDict(recursive=False).items()}) for r in rows]
        findings.extend(det.finish(store.con, found))
    return findings


def analyze_spark(store, codes: list[str] | None = None, spark=None, master: str | None = None,
                  parquet: str | None = None) -> list:
    """``analyze`` with the fact model and detectors on Spark: over ``parquet`` (an
    export_parquet directory, any Hadoop path), else over the store exported to a temporary one.
    Findings are stored in the store's ``findings`` like ``analyze``'s."""
    import tempfile

    from commitsleuth.forensics.analyze import finish, selected

    spark = spark or session(master)
    with tempfile.TemporaryDirectory(prefix="commitsleuth-spark-") as tmp:
        detectors = selected(codes)
        user_set = spark._jsparkSession.conf().contains(_PARTITIONS)
        kept = prepare(spark, parquet or export_parquet(store, tmp), detectors)
        try:
            findings = run_detectors(spark, store, detectors)
        finally:  # a session serves several runs (the equivalence test's): its blocks and setting back
            for frame in kept:
                frame.unpersist()
            if not user_set:
                spark.conf.unset(_PARTITIONS)
    return finish(store, findings)
