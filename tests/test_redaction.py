"""Secrets never reach the store, the report or the terminal (one redaction layer).

The planted corpus below is synthetic: real log heads and messages of every format commitsleuth
reads, with secret values written where people leave them (conf dumps, JDBC URLs, SQL
properties, URL user-info, Authorization headers, AWS key ids, PEM keys, SAS signatures,
delegation tokens). Every value is then searched for in the bytes of the DuckDB file and its
WAL, the HTML report and the output of every command: none may be found.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commitsleuth.store import Store

from commitsleuth.redact import MASK, add_key_pattern, clear_user_patterns, redact

# -- patterns: positive and negative samples --------------------------------------------------
POSITIVE = [
    ("fs.azure.account.key.myacct.dfs.core.windows.net=ABCDEF0123456789abcdef==", "ABCDEF0123456789abcdef"),
    ("key id AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"),
    ("session ASIAY34FZKBOKMUTVV7A", "ASIAY34FZKBOKMUTVV7A"),
    ("Authorization: Bearer eyJhbGciOi.xyz.abc", "eyJhbGciOi.xyz.abc"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA"),
    ("Authorization: Negotiate YIIGhgYJKoZIhvcSAQICAQBuggY", "YIIGhgYJKoZIhvcSAQICAQBuggY"),
    ("jdbc:mysql://db:3306/metastore?user=hive&password=S3cr3tPw&useSSL=false", "S3cr3tPw"),
    ("TBLPROPERTIES ('hive.sql.dbcp.password'='dbcpPw123')", "dbcpPw123"),
    ('{"spark.hadoop.fs.s3a.secret.key":"wJalrXUtnFEMIK7","other":"x"}', "wJalrXUtnFEMIK7"),
    ('{"token": "tok-998877"}', "tok-998877"),
    ("removed: s3a://AKIDSEC:wJalrXUtnFEMI@bucket/t/000001_0", "wJalrXUtnFEMI"),
    ("beeline -u jdbc:hive2://h:10000 -n bob -p hunter2xyz", "hunter2xyz"),
    ("spark-submit --password TopSecret99 --class X", "TopSecret99"),
    ("setting fs.s3a.secret.key wJalrXUtnFEMIK7MDENG in conf", "wJalrXUtnFEMIK7MDENG"),
    ("https://a.blob.core.windows.net/c/f?sv=2020-08-04&sig=AbCdEf%2Bgh%3D&se=2024", "AbCdEf%2Bgh%3D"),
    ("https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIDEX%2F2024&X-Amz-Signature=abcdef012345", "abcdef012345"),
    ("?X-Amz-Security-Token=FQoGZXIvYXdzEXAMPLE", "FQoGZXIvYXdzEXAMPLE"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAexample\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEAexample"),
    ("webhdfs ?op=OPEN&delegation=HAAEaGRmcwRoZGZzAIoBXyz123456", "HAAEaGRmcwRoZGZzAIoBXyz123456"),
    ("spark.ssl.keyStorePassword=ksPass77", "ksPass77"),
    ("fs.s3a.session.token: IQoJb3JpZ2luX2VjEXAMPLE", "IQoJb3JpZ2luX2VjEXAMPLE"),
]
NEGATIVE = [
    "2026-09-07 00:08:10,130 INFO  [778c main] utils.FileUtils (FileUtils.java:mkdir(167)) - "
    "Creating directory if it doesn't exist: hdfs://ns/warehouse/db.db/t/dt=2017-08-30",
    "renamed path hdfs://ns/t/_tmp.000005_1 to hdfs://ns/t/000005_1 . File size is 123",
    "Task attempt_201304111550_268224_m_000005_0 is allowed to commit now",
    "the token expired; keys rotated",
    "ugi=hive/gw@EXAMPLE.COM (auth:KERBEROS)\tip=/10.0.0.1\tcmd=add_partition : db=sales tbl=orders",
    "Loading data to table db.secret_stats partition (dt=2024-01-01) from hdfs://nn/tmp/x",
    "Loading data to table db.secret partition (dt=2024-01-01) from hdfs://nn/tmp/x",
    "Loading data to table db.api_token partition (dt=2024-01-01) from hdfs://nn/tmp/x",
    "hdfs://nn/warehouse/keys.db/token_table/dt=1/part-00000",
    "Thread-529691 Asia/Shanghai -p 8080",
]


@pytest.mark.parametrize("text, secret", POSITIVE, ids=[p[1][:12] for p in POSITIVE])
def test_each_pattern_masks_its_secret(text, secret):
    out = redact(text)
    assert secret not in out and MASK in out


@pytest.mark.parametrize("text", NEGATIVE)
def test_evidence_is_left_as_it_is(text):
    assert redact(text) == text


def test_seed000_lines_are_unchanged_in_the_store(cli, tmp_path):
    from commitsleuth.demo import sample_dir

    log = next(Path(sample_dir()).rglob("task-logs.txt"))
    db = tmp_path / "s.duckdb"
    assert cli("ingest", log, "--db", db).exit_code == 0
    lines = log.read_text().splitlines()
    with Store(db, read_only=True) as s:
        raws = [r[0] for r in s.query("select raw from events where raw is not null")[1]]
    assert raws and all(r.splitlines()[0] in lines for r in raws) and MASK not in "".join(raws)


# -- the planted corpus ---------------------------------------------------------------------------
SECRETS: list[str] = []


def _s(value: str) -> str:
    SECRETS.append(value)
    return value


HIVE = "\n".join([
    "2024-01-10T10:00:01,100  INFO [HiveServer2-Handler-Pool: Thread-55] ql.Driver: Compiling command(queryId=hive_20240110_1): "
    f"CREATE TABLE j TBLPROPERTIES ('hive.sql.dbcp.password'='{_s('dbcpPlanted01')}', 'hive.sql.jdbc.url'='jdbc:mysql://u:{_s('jdbcUrlPw02')}@db/x')",
    "2024-01-10T10:00:02,100  INFO [HiveServer2-Background-Pool: Thread-56] ql.Driver: Executing command(queryId=hive_20240110_1): "
    f"LOAD DATA INPATH 's3a://AKIAIOSFODNN7PLANT3:{_s('s3aUserInfo03')}@bkt/in' INTO TABLE db.t PARTITION (dt='2024-01-10')",
    "2024-01-10T10:00:03,100  INFO [HiveServer2-Background-Pool: Thread-56] metadata.Hive: New loading path = "
    f"s3a://id:{_s('loadPathPw04')}@bkt/w/db.db/t/dt=2024-01-10 with partSpec {{dt=2024-01-10}}",
    "2024-01-10T10:00:04,100  INFO [HiveServer2-Background-Pool: Thread-56] exec.Task: Loading data to table db.t "
    f"partition (dt=2024-01-10) from hdfs://nn/tmp/x?password={_s('loadQueryPw05')}",
    "2024-01-10T10:00:05,100  INFO [HiveServer2-Background-Pool: Thread-56] fs.TrashPolicyDefault: Moved to trash: "
    f"hdfs://nn/w/db.db/t/dt=2024-01-09?delegation={_s('HAAEaGRmcwDelegTok06')}",
    "2024-01-10T10:00:06,100  INFO [HiveServer2-Background-Pool: Thread-56] exec.Utilities: Moving tmp dir: "
    f"hdfs://nn/w/db.db/t/.hive-staging_1/_tmp.-ext-10000 to: hdfs://nn/w/db.db/t/.hive-staging_1/-ext-10000 "
    f"fs.azure.account.key.acct.dfs.core.windows.net={_s('AzureAcctKey07==')}",
    "2024-01-10T10:00:07,100  INFO [HiveServer2-Handler-Pool: Thread-57] ql.Driver: Compiling command(queryId=hive_20240110_2): "
    f"SELECT * FROM t WHERE k = 'x' -- Authorization: Bearer {_s('bearerHive08')}",
    "2024-01-10T10:00:08,100  INFO [HiveServer2-Handler-Pool: Thread-57] ql.Driver: Compiling command(queryId=hive_20240110_3): "
    f"SET fs.s3a.secret.key {_s('spaceSeparated09')}",
    "2024-01-10T10:00:09,100  INFO [HiveServer2-Handler-Pool: Thread-57] ql.Driver: Compiling command(queryId=hive_20240110_4): "
    f"SELECT 1 /* -----BEGIN PRIVATE KEY-----{_s('PemBodyPlanted10')}-----END PRIVATE KEY----- */",
    "2024-01-10T10:00:10,100  INFO [HiveServer2-Handler-Pool: Thread-57] ql.Driver: Compiling command(queryId=hive_20240110_5): "
    f"SELECT '{_s('AKIAPLANTEDKEY11XYZ0')}'",
    "2024-01-10T10:00:11,100  INFO [HiveServer2-Handler-Pool: Thread-57] ql.Driver: Compiling command(queryId=hive_20240110_6): "
    f"SELECT * FROM ext WHERE url = 'https://b.s3.amazonaws.com/k?X-Amz-Credential={_s('AmzCredPlanted42')}&X-Amz-Security-Token={_s('AmzTokPlanted43')}'",
]) + "\n"
METASTORE = "\n".join([
    "2024-01-10T10:00:11,100  INFO [pool-6-thread-1] HiveMetaStore.audit: "
    f"ugi=hive\tip=10.0.0.1\tcmd=add_partition : db=db tbl=t[2024-01-10] location=s3a://k:{_s('metaUserInfo12')}@b/t\t",
    "2024-01-10T10:00:12,100  INFO [pool-6-thread-1] HiveMetaStore.audit: "
    f"ugi=hive\tip=10.0.0.1\tcmd=alter_partition : db=db tbl=t[2024-01-10] password={_s('metaPw13')}\t",
]) + "\n"
MR = "\n".join([
    "2013-04-11 16:02:11,517 INFO org.apache.hadoop.mapred.FileOutputCommitter: Saved output of task "
    f"'attempt_201304111550_268224_m_000005_0' to hdfs://nn/out?token={_s('mrToken14')}",
    "2013-04-11 16:02:10,101 INFO org.apache.hadoop.mapred.Task: Task attempt_201304111550_268224_m_000005_0 "
    f"is allowed to commit now secret={_s('mrSecret15')}",
]) + "\n"
SPARK_LOG = "\n".join([
    "17/06/09 20:10:41 INFO output.FileOutputCommitter: Saved output of task "
    f"'attempt_201706092018_0024_m_000004_1026' to hdfs://u:{_s('sparkLogPw16')}@nn/out/_temporary/0/task_201706092018_0024_m_000004",
    f"17/06/09 20:10:41 INFO mapred.SparkHadoopMapRedUtil: attempt_201706092018_0024_m_000004_1026: Committed X-Amz-Signature={_s('amzSig17')}",
]) + "\n"

TEZ = "\n".join([
    "2023-11-02 04:12:40,118 [INFO] [TezChild] |exec.Utilities|: Moving tmp dir: "
    f"s3a://tez:{_s('TezUserInfo44')}@b/w/db.db/t/.hive-staging_1/_tmp.-ext-10000 to: s3a://b/w/db.db/t/.hive-staging_1/-ext-10000",
    "2023-11-02 04:12:40,120 [INFO] [TezChild] |exec.Utilities|: Duplicate taskid file removed: "
    "hdfs://nn/w/db.db/t/.hive-staging_1/_tmp.-ext-10000/dt=2023-11-01/000005_1 with length 10. Existing file: "
    f"hdfs://nn/w/db.db/t/.hive-staging_1/_tmp.-ext-10000/dt=2023-11-01/000005_0?sig={_s('TezKeptSig45')} with length 20",
]) + "\n"
HS2_OPERATION = "\n".join([
    "18/09/28 10:14:57 INFO ql.Driver: Executing command(queryId=hive_20180928101457_1c2d): "
    f"insert into table db.t partition (dt='2018-09-28') select * from db.src where k <> '{_s('AKIAOPERATIONLOG0046')}'",
    "18/09/28 10:15:01 INFO exec.Task: Loading data to table db.t partition (dt=2018-09-28) from "
    f"hdfs://op:{_s('OpLogUserInfo47')}@nn/user/hive/warehouse/db.db/t/.hive-staging_hive_2018-09-28_10-14-57_310_1/-ext-10000",
]) + "\n"


def _event_log() -> str:
    events = [
        {"Event": "SparkListenerLogStart", "Spark Version": "3.5.1"},
        {"Event": "SparkListenerEnvironmentUpdate",
         "Spark Properties": {"spark.hadoop.fs.azure.account.key.acct.dfs.core.windows.net": _s("EnvAzureKey18"),
                              "spark.hadoop.fs.s3a.secret.key": _s("EnvS3aSecret19"),
                              "spark.jdbc.url": f"jdbc:postgresql://db/x?user=a&password={_s('EnvJdbcPw20')}",
                              "spark.custom.opaque": _s("UserRegexValue21"),
                              "spark.redaction.regex": "(?i)secret|password|opaque",
                              "spark.ssl.keyStorePassword": _s("EnvKeystorePw36"),
                              "spark.ssl.trustStorePassword": _s("EnvTruststorePw37"),
                              "spark.hadoop.fs.s3a.access.key": _s("AKIAENVACCESSKEY0038"),
                              "spark.authenticate.secret": _s("EnvAuthSecret39"),
                              "spark.hadoop.fs.azure.sas.token": f"sv=2020&sig={_s('EnvSasSig40')}",
                              "spark.driver.extraJavaOptions": f"-Djavax.net.ssl.keyStorePassword={_s('EnvJavaOptPw41')}",
                              "spark.speculation": "true"},
         "Hadoop Properties": {"fs.s3a.session.token": _s("EnvSessTok22"),
                               "mapreduce.fileoutputcommitter.algorithm.version": "2"},
         "JVM Information": {}, "System Properties": {}, "Classpath Entries": {}},
        {"Event": "SparkListenerApplicationStart", "App Name": f"etl Authorization: Bearer {_s('AppNameBearer23')}",
         "App ID": "local-1700000000000", "Timestamp": 1700000000000, "User": "etl"},
        {"Event": "SparkListenerJobStart", "Job ID": 0, "Submission Time": 1700000001000, "Stage Infos": [],
         "Stage IDs": [0], "Properties": {"spark.job.description": f"load password={_s('JobDescPw24')}",
                                          "spark.jobGroup.id": f"grp token={_s('JobGroupTok25')}",
                                          "spark.sql.execution.id": "0"}},
        {"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart", "executionId": 0,
         "description": f"INSERT INTO t OPTIONS ('password'='{_s('SqlDescPw26')}')",
         "details": "", "time": 1700000001000,
         "physicalPlanDescription": "(1) Execute InsertIntoHadoopFsRelationCommand\n"
                                    f"Arguments: s3a://AKIAPLANT:{_s('PlanUserInfo27')}@bkt/out, false, Parquet, "
                                    f"[path=s3a://bkt/out, fs.s3a.secret.key={_s('PlanOption28')}], Append, [id]",
         "sparkPlanInfo": {"nodeName": "x", "simpleString": "x", "children": [], "metadata": {}, "metrics": []}},
        {"Event": "SparkListenerStageSubmitted", "Stage Info": {"Stage ID": 0, "Stage Attempt ID": 0,
                                                                "Stage Name": "save", "Number of Tasks": 1}},
        {"Event": "SparkListenerTaskStart", "Stage ID": 0, "Stage Attempt ID": 0,
         "Task Info": {"Task ID": 0, "Index": 0, "Attempt": 0, "Partition ID": 0, "Launch Time": 1700000001100,
                       "Executor ID": "driver", "Host": "localhost", "Speculative": False}},
        {"Event": "SparkListenerTaskEnd", "Stage ID": 0, "Stage Attempt ID": 0, "Task Type": "ResultTask",
         "Task End Reason": {"Reason": "ExceptionFailure", "Class Name": "java.io.IOException",
                             "Description": f"cannot open s3a://K:{_s('TaskFailUserInfo29')}@bkt/out",
                             "Stack Trace": [], "Full Stack Trace": f"at x secret={_s('StackSecret30')}"},
         "Task Info": {"Task ID": 0, "Index": 0, "Attempt": 0, "Partition ID": 0, "Launch Time": 1700000001100,
                       "Finish Time": 1700000001200, "Executor ID": "driver", "Host": "localhost",
                       "Speculative": False, "Failed": True, "Killed": False}},
        {"Event": "SparkListenerStageCompleted", "Stage Info": {
            "Stage ID": 0, "Stage Attempt ID": 0, "Completion Time": 1700000001300,
            "Failure Reason": f"Job aborted: Authorization: Basic {_s('StageFailBasic31')}"}},
        {"Event": "SparkListenerJobEnd", "Job ID": 0, "Completion Time": 1700000001400,
         "Job Result": {"Result": "JobFailed", "Exception": {"Message": f"key {_s('AKIAJOBENDKEY32XYZW0')} denied"}}},
        {"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd", "executionId": 0,
         "time": 1700000001500, "errorMessage": f"failed: token={_s('SqlErrTok33')}"},
        {"Event": "SparkListenerApplicationEnd", "Timestamp": 1700000002000},
    ]
    return "\n".join(json.dumps(e) for e in events) + "\n"


def _write_corpus(root: Path) -> Path:
    logs = root / "logs"
    logs.mkdir()
    (logs / "hiveserver2.log").write_text(HIVE)
    (logs / "metastore.log").write_text(METASTORE)
    (logs / "syslog").write_text(MR)
    (logs / "spark-executor.log").write_text(SPARK_LOG)
    (logs / "tez-task.log").write_text(TEZ)
    (logs / "hive_20180928101457_1c2d").write_text(HS2_OPERATION)
    (logs / "local-1700000000000").write_text(_event_log())
    # a line no grammar understands: its reject sample is stored too
    (logs / "hive-rejects.log").write_text(
        "2024-01-10T10:00:13,100  INFO [HiveServer2-Background-Pool: Thread-58] metadata.Hive: "
        f"New loading path = garbage password={_s('RejectSamplePw35')}\n")
    return logs


# Issue 34: every form a secret was found leaking in, planted into every format's own sample
# lines (``parsers.FORMATS``: exact source strings), five forms per format, all forms used.
PLANTED_FORMS = [
    "password={s}", 'javax.jdo.option.ConnectionPassword="{s}"', "password='{s}'", "redis://:{s}@cache:6379/0",
    "s3a://AKIDPLANT:{s}/tail@bkt/p", "fs.azure.account.key.acct.dfs.core.windows.net {s}", "TokenError: Token: {s}",
    '{{"password": "it\'s {s}"}}', "jdbc:oracle:thin:scott/{s}@//db:1521/svc", "OPTIONS (password '{s}')",
    "ALTER USER bob IDENTIFIED BY {s}", "GET /b/k%3FX-Amz-Signature%3D{s}%26X-Amz-Date%3D1",
    "referer https://x/?a=1%26password%3D{s}%26b=2", "urlString=https://svc:{s}@api.example.org/v1",
    "Authorization: Bearer {s}", "fs.s3a.secret.key={s}", "key {s}_backup",
]


def _planted_format_files(root: Path) -> list[tuple[str, Path]]:
    """One file per format: its samples, each carrying planted forms (a JSON format's in a field)."""
    from commitsleuth.parsers import FORMATS

    out, n = [], 0
    directory = root / "formats"
    directory.mkdir()
    by_name = {f.name: f for f in FORMATS}
    for i, fmt in enumerate(FORMATS):
        # yarn logs wrap other formats' lines: a container's syslog section of MR2 lines
        inner = by_name["mr2-yarn"] if fmt.name == "yarn-logs" else fmt
        lines = []
        for k in range(5):
            form = PLANTED_FORMS[n % len(PLANTED_FORMS)]
            secret = f"AKIAPF{i:02d}{k:02d}PLANTEDKEY" if form.startswith("key ") else f"Pf{i:02d}v{k:02d}x"
            planted = form.format(s=_s(secret))
            n += 1
            sample = inner.samples[k % len(inner.samples)].line
            if sample.startswith("{"):
                lines.append(json.dumps({**json.loads(sample), "Planted": planted}))
            else:
                lines.append(f"{sample} {planted}")
        if inner is not fmt:
            lines = [fmt.samples[0].line, "LogType:syslog", "Log Contents:", *lines, "End of LogType:syslog"]
        path = directory / f"{fmt.name}.log"
        path.write_text("\n".join(lines) + "\n")
        out.append((fmt.name, path))
    return out


@pytest.fixture(autouse=True)
def _no_user_patterns_left_behind():
    yield
    clear_user_patterns()


# A path segment is masked only where its value is a credential itself (an AWS key id here):
# a partition column named like a secret (token=…) is not one.
AUDIT_DIR_SECRET = _s("AKIAAUDITDIRSECRET48")


def test_planted_secrets_are_found_nowhere(cli, tmp_path):
    logs = _write_corpus(tmp_path)
    secrets = sorted(set(SECRETS))
    db = tmp_path / "store.duckdb"
    outputs = [cli("ingest", logs, "--db", db, "--redact", r"extra-[0-9]+")]
    assert outputs[0].exit_code in (0, 2), outputs[0].err
    for name, path in _planted_format_files(tmp_path):  # every format, each read as itself
        outputs.append(cli("ingest", "-v", path, "--format", name, "--db", db))
        assert outputs[-1].exit_code in (0, 2) and "skipped" not in outputs[-1].out, (name, outputs[-1].out)
    secrets = sorted(set(SECRETS))
    outputs.append(cli("ingest", "-v", logs, "--db", tmp_path / "verbose.duckdb"))
    listed = tmp_path / "listed" / f"token={AUDIT_DIR_SECRET}" / "dt=2024-01-10"
    listed.mkdir(parents=True)
    (listed / "000000_0").write_text("x")
    outputs.append(cli("audit", listed.parent, "--db", tmp_path / "verbose.duckdb"))  # a store ingest made
    assert "listed 2 entries under" in outputs[-1].out
    outputs.append(cli("analyze", "--db", db))
    outputs.append(cli("analyze", "--db", db, "--format", "json"))
    for q in ("select * from events", "select * from sources", "select * from rejects"):
        for fmt in ("table", "csv", "json"):
            outputs.append(cli("query", q, "--db", db, "--format", fmt))
    outputs.append(cli("timeline", "db.t", "dt=2024-01-10", "--db", db, "--no-color"))
    outputs.append(cli("query", "--list", "--db", db))
    report = tmp_path / "report.html"
    outputs.append(cli("report", "-o", report, "--db", db))
    texts = [o.out + o.err for o in outputs]
    blobs = [p.read_bytes() for p in tmp_path.glob("*.duckdb*")] + [report.read_bytes()]
    assert len(secrets) >= 80
    found = [s for s in secrets if any(s in t for t in texts) or any(s.encode() in b for b in blobs)]
    assert found == []
    # the planted values did reach the store, masked: the test can fail
    with Store(db, read_only=True) as s:
        masked = s.query(f"select count(*) from events where raw like '%{MASK}%'")[1][0][0]
        columns = s.query("select table_name, column_name from duckdb_columns() "
                          "where data_type = 'VARCHAR' and table_name in ('events', 'sources', 'rejects', 'findings')")[1]
        for table, column in columns:
            values = [r[0] for r in s.query(f'select distinct "{column}" from {table} where "{column}" is not null')[1]]
            assert not [v for v in values if any(sec in v for sec in secrets)], (table, column)
    assert masked >= 20
    with Store(db, read_only=True) as s:  # every format's planted lines were read, as events or rejects
        read = s.query("select count(*) from sources where uri like '%/formats/%' and events + rejected > 0")[1][0][0]
    from commitsleuth.parsers import FORMATS

    assert read == len(FORMATS)


def test_user_redaction_regex_of_spark_conf_is_honoured():
    add_key_pattern("(?i)opaque")
    assert redact('"spark.custom.opaque":"UserRegexValue21"') == '"spark.custom.opaque":"***"'




def test_our_spark_regexes_hold_no_trigger_word_and_match_as_written():
    """Spark copies the session's SQL string regex (ours or'ed in) into every job's and stage's
    properties: written with a trigger word in its text, every such spool line ran every pattern."""
    import re

    import numpy as np
    import pyarrow as pa

    from commitsleuth.redact import (SPARK_KEY_REGEX, SPARK_STRING_REGEX, _unlisted, lines_may_hold_secret,
                                     may_hold_secret)

    line = json.dumps({"Properties": {"spark.sql.redaction.string.regex": SPARK_STRING_REGEX,
                                      "spark.redaction.regex": SPARK_KEY_REGEX}})
    assert not lines_may_hold_secret(line.encode(), np.array([0]))[0]
    assert not may_hold_secret(pa.array([line]))[0].as_py()
    assert redact(line) == line
    written = r"(?i)(?:password|token|access[._-]?key)=\S+|bearer\s+\w+|s3a://[^@]*@|(?:AKIA|ASIA)\d{4}|-p \S+|[?&]sig=\w+"
    unlisted = _unlisted(written)
    assert unlisted != written and "p[a]ssword" in unlisted
    for text in ("password=hunter2", "a TOKEN=x b", "fs.s3a.access.key=K", "Authorization: Bearer abc",
                 "s3a://u:p@bucket", "AKIA1234 ASIA9876", "beeline -p pw", "x?sig=abc&y", "passwd=x",
                 "nothing here", "keys: [id#0L]"):
        assert re.findall(unlisted, text) == re.findall(written, text), text
