"""Spark drivers for the live-capture scenarios, run by the tests as separate processes.

    python live_driver.py rig MASTER_URL WORKDIR   # speculative double write + protected write
    python live_driver.py sigkill DB               # jobs until the test SIGKILLs this process
    python live_driver.py stop DB                  # a job, spark.stop() and exit, never detached
    python live_driver.py stop-hooks DB            # the same with hooks=True, read before exit
    python live_driver.py recover DB EVENTLOG_DIR  # sigkill, with Spark's own event log written too

A driver process is needed because one Python process holds one SparkContext (the tests'
own local session is another), and because the SIGKILL test must kill a driver, not pytest.
Each prints one JSON line per fact the test checks against the store.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from pyspark import TaskContext
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from commitsleuth.listener import attach
from commitsleuth.listener.scenarios import (rig_session, say, speculative_double_write,
                                             wait_for_executors, wait_for_marker, wait_for_stage_quiet,
                                             warm_up)


def protected_write(spark: SparkSession, workdir: Path) -> None:
    """df.write.parquet under speculation: the commit coordinator lets one attempt commit."""
    target = workdir / "protected"
    marker = str(workdir / "protected-speculative-started")

    @F.udf("long")
    def stall_first_attempt(x):
        ctx = TaskContext.get()
        if ctx.partitionId() == 1 and ctx.attemptNumber() == 0:
            wait_for_marker(marker, extra=5.0)  # the copy commits first; this one then loses
        elif ctx.partitionId() == 1:
            open(marker, "w").close()
        return x

    with attach(spark, db=workdir / "protected.duckdb") as handle:
        spark.sparkContext.setJobGroup("protected", "protected write")
        df = spark.range(0, 2, 1, 2).withColumn("v", stall_first_attempt("id"))
        df.write.mode("overwrite").parquet(str(target))
        wait_for_stage_quiet(spark, "protected")
        handle.flush()
        say(scenario="protected", files=sorted(p.name for p in target.iterdir()),
            location="file://" + str(target), errors=handle.stats.errors)


def rig(master: str, workdir: str) -> None:
    work = Path(workdir)
    spark = rig_session(master, work)
    try:
        wait_for_executors(spark, 2)
        warm_up(spark)
        speculative_double_write(spark, work, work / "speculative.duckdb")
        protected_write(spark, work)
    finally:
        spark.stop()


def sigkill(db: str) -> None:
    spark = (SparkSession.builder.master("local[2]").appName("commitsleuth-sigkill")
             .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
             .getOrCreate())
    handle = attach(spark, db=db)
    say(attached=True)
    for job in range(10_000):
        spark.range(0, 40, 1, 4).count()
        say(job=job, done=time.time(), longest_load=handle.stats.longest_load)


def recover(db: str, eventlog_dir: str) -> None:
    """Jobs of 40 tasks, captured live and logged by Spark itself, until the test SIGKILLs it."""
    spark = (SparkSession.builder.master("local[2]").appName("commitsleuth-recover")
             .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
             .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", eventlog_dir)
             .config("spark.eventLog.compress", "false")
             .getOrCreate())
    attach(spark, db=db)
    say(attached=True, app=spark.sparkContext.applicationId)
    for job in range(10_000):
        spark.range(0, 400, 1, 40).count()
        say(job=job, done=time.time())


def stop_without_detach(db: str) -> None:
    """The user never detaches: spark.stop() and interpreter exit must neither hang nor lose."""
    spark = (SparkSession.builder.master("local[2]").appName("commitsleuth-stop")
             .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
             .getOrCreate())
    attach(spark, db=db, interval=30.0)  # no timed load: only the stop and exit paths write
    spark.range(0, 100, 1, 5).count()
    spark.stop()
    say(stopped=time.time())


def stop_with_hooks(db: str) -> None:
    """hooks=True: Spark's application end, delivered by spark.stop() to the Python listener,
    loads everything; what the store holds is read before exit, which then skips the atexit
    path (os._exit), so only the hook can have written it."""
    import os

    from commitsleuth.store import Store

    spark = (SparkSession.builder.master("local[2]").appName("commitsleuth-stop-hooks")
             .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
             .getOrCreate())
    attach(spark, db=db, interval=60.0, max_wait=60.0, hooks=True)  # no timed load
    spark.range(0, 100, 1, 5).count()
    spark.stop()
    with Store(db, read_only=True) as store:
        kinds = dict(store.con.execute("SELECT kind, count(*) FROM events GROUP BY kind").fetchall())
    say(kinds=kinds)
    os._exit(0)


# Secrets a user leaves in the session conf and in job descriptions (tests/test_redaction_live.py).
CONF_SECRETS = {
    "spark.hadoop.fs.azure.account.key.acct.dfs.core.windows.net": "LiveAzureKey01",
    "spark.hadoop.fs.s3a.secret.key": "LiveS3aSecret02",
    "spark.hadoop.fs.s3a.session.token": "LiveSessionTok03",
    "spark.myapp.jdbc.url": "jdbc:postgresql://db/x?user=a&password=LiveJdbcPw04",
    "spark.myapp.endpoint": "https://svc:LiveUserInfo05@api.example.org/v1",
    "spark.myapp.sas": "sv=2020-08-04&sig=LiveSasSig06",
    "spark.myapp.cache": "redis://:LiveRedisPw10@cache:6379/0",
}
DESCRIPTION_SECRET = "LiveJobDescPw07"
GROUP_SECRET = "LiveJobGroupTok08"
APP_NAME_SECRET = "LiveAppNameTok09"
# issue 34: forms that leaked through live capture (a SQL statement's OPTIONS, redis user-info)
OPTIONS_SECRET = "LiveOptionsPw11"
REDIS_DESCRIPTION_SECRET = "LiveRedisDesc12"


def secrets(workdir: str) -> None:
    """A session whose conf, application name, job group and job description hold secrets,
    captured with the spool kept."""
    work = Path(workdir)
    builder = (SparkSession.builder.master("local[2]")
               .appName(f"commitsleuth-secrets Authorization: Bearer {APP_NAME_SECRET}")
               .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1"))
    for key, value in CONF_SECRETS.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    handle = attach(spark, db=work / "live.duckdb", spool_dir=work / "spool", keep_spool=True)
    spark.sparkContext.setJobGroup(f"nightly token={GROUP_SECRET}", "group description")
    spark.sparkContext.setJobDescription(f"nightly load password={DESCRIPTION_SECRET}")
    spark.range(0, 20, 1, 2).write.mode("overwrite").parquet(str(work / "out"))
    options = f"OPTIONS (path '{work / 'out'}', password '{OPTIONS_SECRET}')"
    spark.sparkContext.setJobDescription(f"cache redis://:{REDIS_DESCRIPTION_SECRET}@cache:6379 {options}")
    spark.sql(f"CREATE TEMPORARY VIEW planted USING parquet {options}")
    spark.sql("SELECT count(*) FROM planted").collect()
    handle.flush()
    handle.detach()
    spark.stop()
    say(done=True)


if __name__ == "__main__":
    {"rig": rig, "sigkill": sigkill, "recover": recover, "stop": stop_without_detach,
     "stop-hooks": stop_with_hooks, "secrets": secrets}[sys.argv[1]](*sys.argv[2:])
