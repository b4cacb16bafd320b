"""Live capture from a running PySpark session.

    from commitsleuth.listener import attach
    with attach(spark, db="commitsleuth.duckdb"):
        df.write.parquet(path)

See ``capture.LiveCapture`` for how events travel and README "Live capture".
"""

from __future__ import annotations

from commitsleuth.listener.capture import CaptureStats, LiveCapture


def attach(spark, db=None, **options) -> LiveCapture:
    """Capture ``spark``'s events into the store ``db`` until ``detach()`` (or the with-block ends).

    ``spark`` is a SparkSession or SparkContext. Options: ``interval`` (seconds between reads of
    the spool, each scrubbing what Spark wrote unredacted, default 1.0), ``max_wait`` (the longest
    wait between loads into the store, default 10.0: a load waits the CPU the last one took divided
    by ``load_share``, default 0.01, and at least ``interval``), ``hooks`` (a Python SparkListener that loads at once on job and application end,
    default off: py4j calls it for every event Spark posts), ``inventory`` (list each SQL
    write's output location when it ends, default on), ``spool_dir``, ``keep_spool``.
    """
    return LiveCapture(spark, db, **options)


__all__ = ["attach", "LiveCapture", "CaptureStats"]
