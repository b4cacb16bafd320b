"""``analyze --engine spark``: the fact model and the detectors transpiled from their DuckDB SQL
(forensics/spark_engine.py): every view and detector becomes Spark SQL, each rewrite of a
DuckDB-only form keeps its meaning."""

from __future__ import annotations

import duckdb

from commitsleuth.forensics import spark_engine
from commitsleuth.forensics.analyze import analyze
from commitsleuth.forensics.detectors import DETECTORS
from commitsleuth.store import Store

from test_detector_cases import load_case, scenario

DUCKDB_ONLY = ("ASOF", "&&", "STRUCT_INSERT", "LIST_ZIP", "lambda ", "MATERIALIZED", "spark_attempt_label(",
               "file_fates_at(", "fate_keys(", "base_name(")


def test_every_view_and_detector_transpiles():
    """Each view and detector becomes Spark SQL with no DuckDB-only form left in it."""
    sqls = dict(spark_engine.view_sql())
    assert {"partition_events", "file_attempts", "file_fates", "attempt_labels", "loading_steps"} <= set(sqls)
    sqls.update({d.code: spark_engine.to_spark(d().sql) for d in DETECTORS})
    for name, sql in sqls.items():
        left = [w for w in DUCKDB_ONLY if w.lower() in sql.lower()]
        assert not left, (name, left)


def test_rewrites_keep_duckdb_meaning():
    """The forms sqlglot leaves as DuckDB wrote them, each rewritten (remove one: this fails)."""
    to = spark_engine.to_spark
    assert "ARRAY_SORT(COLLECT_LIST(STRUCT(b AS k0, a AS v)))" in to("SELECT list(a ORDER BY b) FROM t")
    assert "SUBSTRING(s, 2, (LENGTH(s) - 2 + 1) - (2) + 1)" in to("SELECT s[2:-2] FROM t")
    assert "SLICE(" in to("SELECT list(a ORDER BY a)[1:20] FROM t")
    assert "ZIP_WITH(a, b, (_z1, _z2) -> _z1 || '=' || _z2)" in to(
        "SELECT list_transform(list_zip(a, b), lambda kv: kv[1] || '=' || kv[2]) FROM t")
    assert "GET_JSON_OBJECT(detail, '$.write.command')" in to("SELECT detail->'write'->>'command' FROM t")
    sql = to("SELECT e.x FROM e ASOF LEFT JOIN q ON q.s = e.s AND e.ts >= q.ts")
    assert "LEFT JOIN q" in sql and "QUALIFY ROW_NUMBER() OVER (PARTITION BY e.event_id ORDER BY q.ts DESC" in sql
    # two ASOF joins in one SELECT (CS104): one rank over both times, not the second join's alone
    sql = to("SELECT e.x FROM e ASOF LEFT JOIN q ON q.s = e.s AND e.ts >= q.ts ASOF LEFT JOIN c ON c.s = e.s AND e.ts >= c.ts")
    assert sql.count("QUALIFY") == 1 and "PARTITION BY e.event_id ORDER BY q.ts DESC, c.ts DESC) = 1" in sql
    assert "EXPLODE(TRANSFORM(xs, _u -> REGEXP_REPLACE(_u, '^a', ''))) AS k" in to(
        "SELECT regexp_replace(unnest(xs), '^a', '') AS k FROM t")
    assert "CONCAT_WS('/', app" in to("SELECT spark_attempt_label(app, 1, 0, 2, 0, 5, 'h') FROM t")
    # a file's base name (migration 0076): Spark's split_part counts a negative part from the end, as DuckDB's
    assert "SPLIT_PART(f, '/', -1)" in to("SELECT base_name(f) FROM t")
    # DuckDB's list_distinct and list_has_any skip NULLs; Spark's array functions keep them
    assert "ARRAYS_OVERLAP(ARRAY_COMPACT(a), ARRAY_COMPACT(b))" in to("SELECT list_has_any(a, b) FROM t")
    assert "ARRAY_DISTINCT(ARRAY_COMPACT(a))" in to("SELECT list_distinct(a) FROM t")
    # a subquery may not sit in a higher-order function's arguments on Spark
    assert "ARRAY_COMPACT(ARRAY(a, (SELECT 1)))" in to("SELECT list_filter([a, (SELECT 1)], lambda x: x IS NOT NULL) FROM t")
    assert "FILTER(" in to("SELECT list_filter(xs, lambda x: x > 1) FROM t")
    assert "SORT_ARRAY(ARRAY_DISTINCT(" in to("SELECT list_sort(list_distinct([a, (SELECT 1)])) FROM t")
    assert "ARRAY_SORT(xs)" in to("SELECT list_sort(xs) FROM t")
    # list(…) over no row is NULL on DuckDB (collect_list gives []): CS111's "missing" files
    assert "CASE WHEN COUNT(*) = 0 THEN NULL ELSE COLLECT_LIST(a) END" in to("SELECT (SELECT list(a) FROM t)")
    # no infinite timestamp on Spark (the cast is NULL): the least one
    assert "COALESCE(m.ts, CAST('0001-01-01 00:00:00' AS TIMESTAMP_NTZ))" in to(
        "SELECT coalesce(m.ts, '-infinity'::TIMESTAMP) FROM m")
    # a lateral unnest a later join reads: a LATERAL join in its place, not a LATERAL VIEW after the joins
    assert "FROM i, LATERAL EXPLODE(i.xs) AS d(x) JOIN f ON f.p = d.x" in to(
        "SELECT d.x FROM i, unnest(i.xs) AS d(x) JOIN f ON f.p = d.x")
    # a subquery correlated two levels out: computed beside the outer row it reads
    sql = to("SELECT d.k FROM dd d WHERE NOT EXISTS (SELECT 1 FROM tt x WHERE x.k = d.k "
             "AND x.ts >= (SELECT max(y.ts) FROM tt y WHERE y.k = d.k AND y.ts < d.ts))")
    assert ("FROM (SELECT d.*, (SELECT MAX(y.ts) FROM tt AS y WHERE y.k = d.k AND y.ts < d.ts) AS _lifted0 "
            "FROM dd AS d) AS d WHERE NOT EXISTS(SELECT 1 FROM tt AS x WHERE x.k = d.k AND x.ts >= d._lifted0)") in sql
    one_level = "SELECT d.k FROM dd d WHERE EXISTS (SELECT 1 FROM tt x WHERE x.ts >= (SELECT max(y.ts) FROM tt y WHERE y.k = x.k))"
    assert "_lifted" not in to(one_level)


def test_spark_gives_analyzes_findings(spark, tmp_path):
    """Seed 002 (two HiveServer2 threads racing, one trashing the other's load): analyze on Spark,
    every detector, gives the findings analyze gives: wording, partition, window, actors and their objects,
    evidence, detail, the storage annotation, remedy; stored where the duckdb client reads them."""
    db = tmp_path / "s.duckdb"
    with Store(db) as store:
        load_case(store, tmp_path / "logs", scenario("seed002_lost_partition"))
        local = [vars(f) for f in analyze(store)]
        assert [vars(f) for f in spark_engine.analyze_spark(store, spark=spark)] == local
    # CS107 too: the thread that trashed the other's load deleted the registered directory
    # (forensics/detectors/cases/metastore_mismatch.yml expects it on this scenario)
    assert [f["code"] for f in local] == ["CS103", "CS107"] and local[0]["actor_objects"]
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT code, actors FROM findings ORDER BY code").fetchall() == [
            (f["code"], f["actors"]) for f in local]


def test_views_named_once_are_plans_and_shuffles_fit_the_data(spark, tmp_path):
    """A view the run names once is inlined into its reader (no job of its own, its input pruned
    to what the reader takes); one named twice or more is computed once. The shuffle partitions
    follow the data unless the session sets them."""
    from commitsleuth.forensics.detectors import DETECTORS

    cs103 = next(d() for d in DETECTORS if d.code == "CS103")
    reads = spark_engine.view_reads([spark_engine.detector_sql(cs103.code, cs103.sql)])
    assert reads["loading_steps"] == 1 and reads["partition_events"] >= 3
    with Store(tmp_path / "s.duckdb") as store:
        load_case(store, tmp_path / "logs", scenario("seed002_lost_partition"))
        parquet = spark_engine.export_parquet(store, tmp_path / "pq")
    session = spark.newSession()
    session.conf.unset("spark.sql.shuffle.partitions")  # the fixture's 2: Spark's 200 now
    # below the events' Parquet: Spark's own estimates broadcast nothing the events feed
    session.conf.set("spark.sql.autoBroadcastJoinThreshold", "2048")
    kept = spark_engine.prepare(session, parquet, [cs103])

    def plan(name):
        return session.table(name)._jdf.queryExecution().analyzed().toString().splitlines()[:4]  # a hint is a line
    assert any("LogicalRDD" in line for line in plan("partition_events"))
    assert not any("LogicalRDD" in line for line in plan("loading_steps"))
    # named once, but by partition_events, which is kept: kept too (a size the planner sees)
    assert reads["partition_values"] == 1 and any("LogicalRDD" in line for line in plan("partition_values"))
    assert len(kept) == len(spark_engine.kept_views(reads)) > sum(1 for n in reads if reads[n] >= 2)
    # the small views are broadcast: partition_events' joins shuffle no event
    small = {n for n in spark_engine.kept_views(reads) if any("ResolvedHint" in line for line in plan(n))}
    assert {"table_locations", "location_aliases", "partition_values"} <= small
    sql = spark_engine.broadcast_derived(dict(spark_engine.view_sql())["partition_events"], small)
    joins = session.sql(sql)._jdf.queryExecution().executedPlan().toString()
    assert "BroadcastHashJoin" in joins and "SortMergeJoin" not in joins
    assert int(session.conf.get("spark.sql.shuffle.partitions")) == spark.sparkContext.defaultParallelism
    for frame in kept:
        frame.unpersist()
    mine = spark.newSession()
    mine.conf.set("spark.sql.shuffle.partitions", "3")
    for frame in spark_engine.prepare(mine, parquet, [cs103]):
        frame.unpersist()
    assert mine.conf.get("spark.sql.shuffle.partitions") == "3"
