"""Redaction exact in both directions (issue 34): every leaked form masked, each with its negative
twin; legitimate values (partition values, table and column names, paths, attempt ids, hashes)
kept byte for byte, in the store too; identity (source URIs, partition specs) never merged by
masking; the user's patterns over every output; every line quoting a path escaped.

Secret values here are synthetic. The log lines around them are the formats' own samples
(``parsers.FORMATS``) and the seed 002 HiveServer2 lines of
forensics/detectors/cases/scenarios/seed002_lost_partition.yml, with other partition values.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commitsleuth.redact import MASK, clear_user_patterns, redact
from commitsleuth.report.escape import printable, shown
from commitsleuth.store import Store


@pytest.fixture(autouse=True)
def _no_user_patterns_left_behind():
    yield
    clear_user_patterns()


# -- each leaked form of issue 34: (text, the secret in it, its negative twin) ---------------------
LEAKED = [
    ('javax.jdo.option.ConnectionPassword="cpwLeak01"', "cpwLeak01",
     'javax.jdo.option.ConnectionURL="jdbc:mysql://db/metastore"'),
    ("<value>ConnectionPassword=\"two words Leak02\"</value>", "words Leak02",
     "<value>ConnectionPoolSize=\"10\"</value>"),
    ("password='pwLeak03'", "pwLeak03", "passwordless='true'"),
    ("cache at redis://:redisLeak04@cache:6379/0", "redisLeak04", "cache at redis://cache:6379/0"),
    ("rediss://default:redisLeak05@cache:6380", "redisLeak05", "hdfs://nn:8020/user/hive@EXAMPLE.COM"),
    ("s3a://AKIDEXAMPLE:wJal/rXUtLeak06@bucket/key", "wJal/rXUtLeak06", "s3a://bucket/a/b:c/d"),
    ("fs.azure.account.key.acct.dfs.core.windows.net azKeyLeak07==", "azKeyLeak07",
     "fs.azure.account.auth.type.acct.dfs.core.windows.net SharedKey"),
    ("fs.azure.account.key.acct.blob.core.windows.net: azKeyLeak08", "azKeyLeak08",
     "fs.azure.account.keyprovider.acct.blob.core.windows.net: org.apache.hadoop.fs.azure.SimpleKeyProvider"),
    ("TokenError: Token: tokLeak09", "tokLeak09", "TokenError: Token expired"),
    ('{"password": "it\'sLeak10"}', "sLeak10", '{"password_policy": "it\'s strict"}'),
    ("key AKIAIOSFODNN7LEAK011_backup", "AKIAIOSFODNN7LEAK011", "key AKIAIOSFODNN7_short_backup"),
    ("jdbc:oracle:thin:scott/tigerLeak12@//db:1521/svc", "tigerLeak12", "jdbc:oracle:thin:@//db:1521/svc"),
    ("sqlplus scott/tigerLeak13@orcl @load.sql", "tigerLeak13", "sqlplus /nolog @load.sql"),
    ("CREATE TABLE t USING jdbc OPTIONS (url 'jdbc:x', password 'optLeak14', user 'u')", "optLeak14",
     "CREATE TABLE t USING jdbc OPTIONS (url 'jdbc:x', passwordFile '/etc/pw', user 'u')"),
    ("OPTIONS ('password' 'optLeak15')", "optLeak15", "OPTIONS ('path' 's3a://b/t')"),
    ("ALTER USER bob IDENTIFIED BY idLeak16", "idLeak16", "ALTER USER bob IDENTIFIED EXTERNALLY"),
    ("CREATE USER 'u'@'%' IDENTIFIED WITH mysql_native_password BY 'idLeak17'", "idLeak17",
     "rows identified by their key"),
    ("REST.GET.OBJECT b/k%3FX-Amz-Signature%3DsigLeak18%26X-Amz-Date%3D20240101", "sigLeak18",
     "REST.GET.OBJECT b/k%3FX-Amz-Date%3D20240101%26X-Amz-Expires%3D300"),
    ('"https://x.example/p?a=1%26password%3DpwLeak19%26b=2"', "pwLeak19",
     '"https://x.example/p?a=1%26password_hint%3Dnone%26b=2"'),
    ("urlString=https://svc:urlLeak20@api.example.org/v1", "urlLeak20", "urlString=https://api.example.org/v1"),
    ("urlString=jdbc:hive2://h:10000/default;user=u;password=urlLeak21", "urlLeak21",
     "urlString=jdbc:hive2://h:10000/default;user=u;ssl=true"),
    ('{"description":"OPTIONS (password \\"escLeak22\\")"}', "escLeak22", '{"description":"OPTIONS (path \\"/t\\")"}'),
]


@pytest.mark.parametrize("text, secret, negative", LEAKED, ids=[s for _, s, _ in LEAKED])
def test_each_leaked_form_is_masked_and_its_twin_kept(text, secret, negative):
    out = redact(text)
    assert secret not in out and MASK in out
    assert redact(negative) == negative


# -- legitimate values that must survive byte for byte ------------------------------------------
LEGITIMATE = [
    "api_key_hash=9f86d081884c7d65",
    "tokenizer_version=3",
    "token_count=12",
    "hdfs://nn/warehouse/db.db/t/account_key=17/part-00000-6f1c2d3e-0000-4000-8000-000000000001.c000.snappy.parquet",
    "s3a://bkt/warehouse/events/api_key_hash=9f86d081884c7d65/dt=2024-01-01/000000_0",
    "hdfs://nn/w/db.db/t/token=weekly/password=none/000001_0",
    "Loading data to table db.tokens partition (tokenizer_version=3, account_key=42) from hdfs://nn/tmp/x",
    "New loading path = hdfs://nn/w/db.db/t/account_key=17 with partSpec {account_key=17}",
    "Partition db.t{account_key=17} stats: [numFiles=1, numRows=10, totalSize=42]",
    "INSERT OVERWRITE TABLE db.t PARTITION (account_key='17') SELECT password_hash, token_count FROM db.src",
    "ALTER TABLE db.users ADD COLUMNS (password_hash STRING, api_key_id BIGINT)",
    "Project [account_key#12, password_hash#13, token_count#14L]",
    "cmd=add_partition : db=db tbl=t[17,42]",
    "attempt_1445144423722_0020_m_000000_1",
    "attempt_201706092018_0024_m_000004_1026",
    "sha256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "spark.security.credentials.hive.enabled=false",
    "hadoop.security.credential.provider.path=jceks://hdfs@nn/etc/creds.jceks",
    "ugi=hive/gw@EXAMPLE.COM (auth:KERBEROS)",
    "Duplicate taskid file removed: hdfs://nn/t/account_key=17/000005_1 with length 10. "
    "Existing file: hdfs://nn/t/account_key=17/000005_0 with length 20",
    "TokenError: Token expired",
    "db.secret_stats db.api_token keys.db token_table",
]


@pytest.mark.parametrize("text", LEGITIMATE)
def test_legitimate_values_survive_byte_for_byte(text):
    assert redact(text) == text


def test_partition_specs_and_paths_survive_in_the_store(cli, tmp_path):
    """Through ingest: every raw line, path and partition spec stored exactly as written."""
    head = "2018-09-28T10:15:01,{ms:03d}  INFO [HiveServer2-Background-Pool: Thread-529691] "
    lines = [head.format(ms=i) + msg for i, msg in enumerate([
        "metadata.Hive: New loading path = hdfs://nn/w/db.db/t/account_key=17 with partSpec {account_key=17}",
        "exec.Task: Loading data to table db.t partition (account_key=42) from hdfs://nn/w/db.db/t/.hive-staging_1/-ext-10000",
        "metadata.Hive: New loading path = hdfs://nn/w/db.db/t/api_key_hash=9f86d081/tokenizer_version=3 "
        "with partSpec {api_key_hash=9f86d081, tokenizer_version=3}",
        "fs.TrashPolicyDefault: Moved to trash: hdfs://nn/w/db.db/t/account_key=17/part-00000-6f1c2d3e.c000",
    ])]
    log = tmp_path / "hiveserver2.log"
    log.write_text("\n".join(lines) + "\n")
    db = tmp_path / "s.duckdb"
    assert cli("ingest", log, "--db", db).exit_code == 0
    with Store(db, read_only=True) as s:
        rows = s.query("select raw, partition_spec, coalesce(path, target_path) from events order by line_no")[1]
    assert [r[0] for r in rows] == lines
    assert {r[1] for r in rows} >= {"account_key=17", "account_key=42", "api_key_hash=9f86d081/tokenizer_version=3"}
    assert "hdfs://nn/w/db.db/t/account_key=17/part-00000-6f1c2d3e.c000" in {r[2] for r in rows}
    assert not [r for r in rows if MASK in "".join(map(str, r))]


# -- the over-redaction case: two threads on two partitions are no race ----------------------------
def _two_partitions(first: str, second: str) -> str:
    """Seed 002's lines, Thread-529751 on ``first`` and Thread-529691 on ``second``."""
    loc = "hdfs://nn/user/hive/warehouse/dw.db/log_daily"
    audit = "HiveMetaStore.audit (HiveMetaStore.java:logAuditEvent(309)) - ugi=etl\tip=unknown-ip-addr\tcmd="
    return "\n".join([
        f"2018-09-28 14:02:11,101 INFO  [Thread-529751]: common.FileUtils (FileUtils.java:mkdir(501)) - "
        f"Creating directory if it doesn't exist: {loc}/{first}",
        f"2018-09-28 14:02:11,152 INFO  [Thread-529691]: common.FileUtils (FileUtils.java:mkdir(501)) - "
        f"Creating directory if it doesn't exist: {loc}/{second}",
        f"2018-09-28 14:02:11,230 INFO  [Thread-529691]: {audit}add_partition : db=dw tbl=log_daily[{second.split('=')[1]}]",
        f"2018-09-28 14:02:11,402 INFO  [Thread-529691]: metadata.Hive (Hive.java:loadDynamicPartitions(1611)) - "
        f"New loading path = {loc}/{second} with partSpec {{{second}}}",
        f"2018-09-28 14:02:11,655 INFO  [Thread-529751]: fs.TrashPolicyDefault (TrashPolicyDefault.java:moveToTrash(168)) - "
        f"Moved to trash: {loc}/{first}",
    ]) + "\n"


def _codes(cli, tmp_path, text) -> list[dict]:
    log = tmp_path / "hiveserver2.log"
    log.write_text(text)
    db = tmp_path / "s.duckdb"
    assert cli("ingest", log, "--db", db).exit_code == 0
    return json.loads(cli("analyze", "--db", db, "--format", "json").out)


def test_two_threads_on_account_key_17_and_42_give_no_finding(cli, tmp_path):
    assert [f["code"] for f in _codes(cli, tmp_path, _two_partitions("account_key=42", "account_key=17"))] == []


def test_the_same_lines_on_one_partition_are_the_race(cli, tmp_path):
    """The positive twin: both threads on account_key=17 is seed 002's data loss, named as it is."""
    found = _codes(cli, tmp_path, _two_partitions("account_key=17", "account_key=17"))
    race = [f for f in found if f["code"] == "CS103"]
    assert [(f["severity"], f["partition"]) for f in race] == [("critical", "account_key=17")]
    assert "account_key=17" in race[0]["summary"] and MASK not in json.dumps(found)


# -- identity never goes through masking ---------------------------------------------------------------
HIVE_LINE = ("2018-09-28T10:15:01,{n:03d}  INFO [HiveServer2-Background-Pool: Thread-{t}] exec.Task: "
             "Loading data to table db.t partition (dt={n}) from hdfs://nn/w/db.db/t/.hive-staging_1/-ext-10000")


def _hive_log(path: Path, thread: int, n: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(HIVE_LINE.format(n=i, t=thread) + "\n" for i in range(n)))


def test_files_under_account_key_directories_stay_two_sources(cli, tmp_path):
    logs = tmp_path / "logs"
    _hive_log(logs / "account_key=17" / "hs2.log", 1, 3)
    _hive_log(logs / "account_key=42" / "hs2.log", 2, 4)
    db = tmp_path / "s.duckdb"
    assert cli("ingest", logs, "--db", db).exit_code == 0
    with Store(db, read_only=True) as s:
        uris = sorted(r[0] for r in s.query("select uri from sources")[1])
    assert uris == [str((logs / "account_key=17" / "hs2.log").resolve()), str((logs / "account_key=42" / "hs2.log").resolve())]


def test_masked_source_uris_keep_their_identity_and_a_rewrite_is_not_doubled(cli, tmp_path):
    """Two directories named by AWS key ids (a credential: masked in the stored URI) hold one log
    each: two sources, and rewriting one reads it as a new version, not a third file."""
    logs = tmp_path / "logs"
    first, second = logs / "AKIAIDENTITYDIRKEY01" / "hs2.log", logs / "AKIAIDENTITYDIRKEY02" / "hs2.log"
    _hive_log(first, 1, 3)
    _hive_log(second, 2, 4)
    db = tmp_path / "s.duckdb"
    assert cli("ingest", logs, "--db", db).exit_code == 0
    _hive_log(first, 3, 5)  # rewritten in place: another head
    assert cli("ingest", logs, "--db", db).exit_code == 0
    assert cli("ingest", logs, "--db", db).exit_code == 0
    with Store(db, read_only=True) as s:
        events = s.query("select count(*) from events")[1][0][0]
        live = s.query("select count(*) from sources where status <> 'superseded'")[1][0][0]
        uris = {r[0] for r in s.query("select uri from sources")[1]}
    assert (events, live) == (5 + 4, 2)
    assert not [u for u in uris if "IDENTITYDIRKEY" in u]
    data = b"".join(p.read_bytes() for p in tmp_path.glob("s.duckdb*"))
    assert b"AKIAIDENTITYDIRKEY0" not in data


# -- the user's patterns over every output ----------------------------------------------------------
def test_user_patterns_reach_analyze_text_json_and_the_stored_actors(cli, tmp_path, monkeypatch):
    log = tmp_path / "hiveserver2.log"
    log.write_text(_two_partitions("dt=20170830", "dt=20170830"))
    db = tmp_path / "s.duckdb"
    assert cli("ingest", log, "--db", db).exit_code == 0  # stored without the pattern
    plain = cli("analyze", "--db", db)
    assert "Thread-529751" in plain.out  # the test can fail: the name is there without the pattern
    text = cli("analyze", "--db", db, "--redact", r"Thread-5297\d\d")
    monkeypatch.setenv("COMMITSLEUTH_REDACT", r"Thread-5296\d\d")
    import commitsleuth.redact as layer

    layer._from_environment()
    as_json = cli("analyze", "--db", db, "--format", "json")
    assert "Thread-5297" not in text.out and "Thread-5297" not in as_json.out
    assert "Thread-5296" not in as_json.out
    found = json.loads(as_json.out)
    assert found and all(a == MASK for f in found for a in f["actors"])
    with Store(db, read_only=True) as s:
        actors = [a for (row,) in s.query("select actors from findings")[1] for a in row]
    assert actors and set(actors) == {MASK}


# -- one escaping helper for every line quoting a path ----------------------------------------------
HOSTILE = "\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07\x9b2J\u202egol"
SHOWN = "?]0;pwned??]52;c;ZXZpbA==??2J?gol"


def test_the_helper_escapes_controls_bidi_and_bytes_that_are_not_utf8():
    assert printable(HOSTILE) == SHOWN
    assert printable("a\u2066b\u2069c\u200fd\u2028e") == "a?b?c?d?e"
    assert printable(b"name-\xff\xfe.log".decode("utf-8", "surrogateescape")) == "name-\\xff\\xfe.log"
    assert shown(f"{HOSTILE} password=pw1") == f"{SHOWN} password={MASK}"


def test_every_line_quoting_a_path_is_escaped(cli, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / f"a{HOSTILE}.txt").write_text("hello world\n")
    seed = (Path(__file__).parents[1] / "commitsleuth" / "samples" / "seed000" / "logs" / "task-logs.txt").read_bytes()
    (logs / f"p{HOSTILE}.log").write_bytes(b"".join(seed.splitlines(keepends=True)[:5]) + b"\x00\x01\x02\x03\x00\x00\x00\x00\n")
    db = tmp_path / "s.duckdb"
    ingest = cli("ingest", "-v", logs, "--db", db)
    root = str(logs.resolve())
    assert f"  skipped: {root}/a{SHOWN}.txt: not a log format commitsleuth reads" in ingest.out.splitlines()
    assert f"  partial: {root}/p{SHOWN}.log: 1 line of binary data rejected (from line 6)" in ingest.out.splitlines()
    assert f"  format of {root}/a{SHOWN}.txt: no format: none matches 20% of the first 1 lines" in ingest.out.splitlines()
    missing = cli("ingest", tmp_path / f"missing{HOSTILE}", "--db", db)
    assert missing.err == f"Error: no such file or directory: {tmp_path}/missing{SHOWN}\n"
    report = cli("report", "-o", tmp_path / f"r{HOSTILE}.html", "--db", db)
    assert report.out == f"report written to {tmp_path}/r{SHOWN}.html\n"
    for r in (ingest, missing, report):
        assert not any(c in r.out + r.err for c in "\x1b\x07\x9b\u202e")


def test_the_columnar_triggers_find_every_leaked_form():
    """The cheap tests that choose which texts run the patterns (RE2 per column, one word search
    per block of lines) find every text of the forms above."""
    import numpy as np
    import pyarrow as pa

    from commitsleuth.redact import lines_may_hold_secret, may_hold_secret

    texts = [t for t, _, _ in LEAKED]
    assert may_hold_secret(pa.array(texts)).to_pylist() == [True] * len(texts)
    data = "\n".join(texts).encode()
    starts = np.array([0] + [i + 1 for i, b in enumerate(data) if b == 10], dtype=np.int64)
    assert lines_may_hold_secret(data, starts).tolist() == [True] * len(texts)


def test_user_patterns_of_the_run_reach_query_timeline_and_the_report(cli, tmp_path, monkeypatch):
    """A store ingested without the pattern: what each command shows gets this run's patterns."""
    log = tmp_path / "hiveserver2.log"
    log.write_text(_two_partitions("dt=20170830", "dt=20170830"))
    db = tmp_path / "s.duckdb"
    assert cli("ingest", log, "--db", db).exit_code == 0
    assert cli("analyze", "--db", db).exit_code == 1
    sql = "select thread from events where thread is not null"
    before = [cli("query", sql, "--db", db, "--format", f).out for f in ("table", "csv", "json")]
    before.append(cli("timeline", "dw.log_daily", "dt=20170830", "--db", db, "--no-color").out)
    assert cli("report", "-o", tmp_path / "before.html", "--db", db).exit_code == 0
    assert all("Thread-529751" in out for out in before)  # the test can fail
    assert "Thread-529751" in (tmp_path / "before.html").read_text()
    monkeypatch.setenv("COMMITSLEUTH_REDACT", r"Thread-5297\d\d")
    import commitsleuth.redact as layer

    layer._from_environment()
    after = [cli("query", sql, "--db", db, "--format", f).out for f in ("table", "csv", "json")]
    after.append(cli("timeline", "dw.log_daily", "dt=20170830", "--db", db, "--no-color").out)
    assert cli("report", "-o", tmp_path / "after.html", "--db", db).exit_code == 0
    assert not [out for out in after if "Thread-5297" in out]
    assert all(MASK in out for out in after)
    assert "Thread-5297" not in (tmp_path / "after.html").read_text()


def test_an_error_line_quoting_the_users_partition_keeps_it(cli, tmp_path):
    log = tmp_path / "hiveserver2.log"
    log.write_text(_two_partitions("dt=1", "dt=1"))
    db = tmp_path / "s.duckdb"
    assert cli("ingest", log, "--db", db).exit_code == 0
    r = cli("timeline", "db.other", "account_key=17", "--db", db)
    assert r.exit_code == 2 and r.err.startswith("Error: no events for db.other account_key=17;")
    r = cli("timeline", "db.other", "--db", db)  # the spec of the run before is not kept here
    assert r.exit_code == 2 and "account_key" not in r.err
