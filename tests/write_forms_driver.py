"""A Spark driver writing each write form once, captured live and logged by Spark itself.

    python write_forms_driver.py WORKDIR

Run as its own process by tests/test_spark_plan_live.py: Hive-table forms need a session with
``enableHiveSupport()`` (a local Derby metastore under WORKDIR), and one Python process holds one
SparkContext (the tests' shared session has no Hive support). Writes ``WORKDIR/live.duckdb``
(live capture) and Spark's event log under ``WORKDIR/eventlog``; prints the event log's path.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pyspark.sql import SparkSession

from commitsleuth.listener import attach


def main(workdir: Path) -> None:
    (workdir / "eventlog").mkdir(parents=True, exist_ok=True)
    spark = (
        SparkSession.builder.master("local[2]").appName("commitsleuth-write-forms")
        .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", str(workdir / "eventlog"))
        .config("spark.eventLog.compress", "false")
        .config("spark.sql.warehouse.dir", str(workdir / "warehouse"))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={workdir}/derby")
        .config("javax.jdo.option.ConnectionURL",
                f"jdbc:derby:;databaseName={workdir}/metastore;create=true")
        .enableHiveSupport().getOrCreate()
    )
    df = spark.range(0, 20, 1, 2).selectExpr("id", "id % 2 AS p")
    df.createOrReplaceTempView("src")
    out = workdir / "out"
    with attach(spark, db=workdir / "live.duckdb") as handle:
        df.write.mode("overwrite").partitionBy("p").parquet(str(out / "pq"))
        df.write.mode("append").format("json").save(str(out / "js"))
        spark.sql("CREATE TABLE ds USING parquet PARTITIONED BY (p) AS SELECT * FROM src")
        spark.sql("INSERT OVERWRITE TABLE ds PARTITION (p=1) SELECT id FROM src")
        spark.sql("CREATE TABLE hc STORED AS parquet AS SELECT * FROM src")
        spark.sql("CREATE TABLE ht STORED AS textfile AS SELECT * FROM src")
        spark.sql("CREATE TABLE hp (id bigint) PARTITIONED BY (p bigint) STORED AS textfile")
        spark.sql("INSERT OVERWRITE TABLE hp PARTITION (p=3) SELECT id FROM src")
        spark.sql(f"INSERT OVERWRITE DIRECTORY '{out}/dir' USING orc SELECT * FROM src")
        (df.write.format("jdbc").option("url", f"jdbc:derby:{workdir}/jdbcdb;create=true")
         .option("dbtable", "T1").mode("overwrite").save())
        df.write.format("noop").mode("overwrite").save()
        df.write.format("noop").mode("append").save()
        assert handle.flush()
    app = spark.sparkContext.applicationId
    spark.stop()
    (log,) = (workdir / "eventlog").glob(f"*{app}*")
    print(log)


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    main(Path(sys.argv[1]))
