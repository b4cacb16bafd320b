"""Live capture from a running PySpark session (see issue: the Python-registered SparkListener)."""
