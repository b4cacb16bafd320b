"""Live capture stores no secret, and its spool holds none of the session conf's.

Spark redacts only the job properties its conf holds, so the spool's conf holds a job's
description and group too, and the session's SQL string regex gets ours (listener/jvm.py).
A real PySpark driver (tests/live_driver.py ``secrets``) starts with secrets in its conf, its
application name, a job group and
job description, captures a write with the spool kept, and detaches. The spool is Spark's own
event log written with Spark's redaction settings extended by ours; the loader then redacts
every text as file ingest does.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from commitsleuth.store import Store

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from live_driver import (APP_NAME_SECRET, CONF_SECRETS, DESCRIPTION_SECRET, GROUP_SECRET,  # noqa: E402
                         OPTIONS_SECRET, REDIS_DESCRIPTION_SECRET)

SECRETS = ["LiveAzureKey01", "LiveS3aSecret02", "LiveSessionTok03", "LiveJdbcPw04", "LiveUserInfo05", "LiveSasSig06",
           "LiveRedisPw10"]
OTHERS = [DESCRIPTION_SECRET, GROUP_SECRET, APP_NAME_SECRET, OPTIONS_SECRET, REDIS_DESCRIPTION_SECRET]


def test_live_capture_stores_no_secret_and_the_spool_keeps_no_conf_secret(tmp_path):
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run([sys.executable, str(HERE / "live_driver.py"), "secrets", str(tmp_path)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert all(any(secret in v for v in CONF_SECRETS.values()) for secret in SECRETS)
    spool_files = [p for p in (tmp_path / "spool").rglob("*") if p.is_file()]
    assert spool_files
    spool = b"".join(p.read_bytes() for p in spool_files)
    assert b"SparkListenerJobStart" in spool and b"spark.myapp.jdbc.url" in spool  # conf travels in job properties
    assert [s for s in SECRETS + OTHERS if s.encode() in spool] == []
    log = spool_files[0]
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700 and stat.S_IMODE(log.stat().st_mode) == 0o600
    db = b"".join(p.read_bytes() for p in tmp_path.glob("live.duckdb*"))
    assert [s for s in SECRETS + OTHERS if s.encode() in db] == []
    with Store(tmp_path / "live.duckdb", read_only=True) as s:  # the planted SQL was captured, masked
        sql = [r[0] for r in s.query("select raw from events where raw like '%OPTIONS (path%'")[1]]
    assert sql and all(OPTIONS_SECRET not in r and REDIS_DESCRIPTION_SECRET not in r for r in sql)
    with Store(tmp_path / "live.duckdb", read_only=True) as s:
        raws = [r[0] for r in s.query("select raw from events where raw like '%spark.job.description%'")[1]]
    assert raws and all(DESCRIPTION_SECRET not in r and "redacted" in r for r in raws)
    with Store(tmp_path / "live.duckdb", read_only=True) as s:
        names = [r[0] for r in s.query("select detail->>'name' from events where kind = 'app_start'")[1]]
        groups = [r[0] for r in s.query("select detail->>'group' from events where kind = 'job_start'")[1]]
    assert names == ["commitsleuth-secrets Authorization: Bearer ***"]
    assert groups and all(g == "*********(redacted)" for g in groups)
    assert any(json.loads(r)["Event"] == "SparkListenerJobStart" for r in raws)
