"""More samples for the redaction layer (complementing test_redaction.py): patterns with positive
and negative samples, no over-redaction of the real seed-000 lines, planted secrets absent from
every stored column and the DuckDB bytes. Secret values here are synthetic, made up for these tests."""

from pathlib import Path

import pytest

from commitsleuth.redact import redact

POSITIVE = [
    ("fs.azure.account.key.acct.dfs.core.windows.net=c2VjcmV0S2V5MQ==", "c2VjcmV0S2V5MQ=="),
    ('{"spark.hadoop.fs.s3a.secret.key": "synthSecret01"}', "synthSecret01"),
    ("javax.jdo.option.ConnectionPassword: synthPw02", "synthPw02"),
    ("Authorization: Basic dXNlcjpzeW50aFB3MDM=", "dXNlcjpzeW50aFB3MDM="),
    ("Authorization: Bearer synthTok04abcdef", "synthTok04abcdef"),
    ("Authorization: Negotiate YIIsynthNeg05xyz", "YIIsynthNeg05xyz"),
    ("https://acct.blob.core.windows.net/c/f?sv=2020&sig=synthSig06%3D", "synthSig06%3D"),
    ("https://b.s3.amazonaws.com/k?X-Amz-Signature=synthAmz07&X-Amz-Credential=synthCred08", "synthAmz07"),
    ("https://b.s3.amazonaws.com/k?X-Amz-Credential=synthCred08", "synthCred08"),
    ("beeline -u jdbc:hive2://h:10000 -n bob -p synthPw09", "synthPw09"),
    ("beeline -u jdbc:hive2://h:10000 --password synthPw10", "synthPw10"),
    ("jdbc:mysql://hive:synthPw11@db:3306/metastore", "synthPw11"),
    ("key AKIASYNTH00000000012 used", "AKIASYNTH00000000012"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIsynth13\n-----END RSA PRIVATE KEY-----", "MIIsynth13"),
    ("ssl.keystore.password=synthPw14", "synthPw14"),
    ("TBLPROPERTIES ('fs.s3a.secret.key'='synthPw15')", "synthPw15"),
]

NEGATIVE = [
    "hdfs://nn:8020/warehouse/t/dt=2024-01-01/part-00000-abc.c000",
    "attempt_1628109047826_0001_m_000003_1",
    'Executor task launch worker for task 3.1 in stage 2.0 (TID 7)',
    "Table default.sales_keys partition key=dt",
    "spark-partition -p4 progress",
]


@pytest.mark.parametrize("text,secret", POSITIVE)
def test_pattern_masks_the_secret(text, secret):
    out = redact(text)
    assert secret not in out
    assert "***" in out


@pytest.mark.parametrize("text", NEGATIVE)
def test_pattern_leaves_ordinary_text(text):
    assert redact(text) == text


def test_seed000_lines_are_unchanged():
    root = Path(__file__).resolve().parents[1] / "commitsleuth" / "samples" / "seed000" / "logs"
    lines = [ln for f in root.rglob("*") if f.is_file() for ln in f.read_text().splitlines()]
    assert lines
    assert [ln for ln in lines if redact(ln) != ln] == []


# Synthetic secrets planted into a copy of a real event log (tests/corpus/spark-events/local-1422981780767).
PLANTED = {"spark.hadoop.fs.s3a.secret.key": "synthPlant31",
           "spark.ssl.trustStorePassword": "synthPlant32",
           "fs.azure.account.key.acct.dfs.core.windows.net": "synthPlant33"}
PLANTED_DESC = "load s3a://u:synthPlant34@b/x with token=synthPlant35"


def test_no_planted_secret_in_any_stored_column_or_the_db_bytes(cli, tmp_path, db_path):
    import json

    import duckdb

    src = Path(__file__).parent / "corpus" / "spark-events" / "local-1422981780767"
    out = []
    for line in src.read_text().splitlines():
        ev = json.loads(line)
        if ev["Event"] == "SparkListenerEnvironmentUpdate":
            ev["Spark Properties"].update(PLANTED)
        if ev["Event"] == "SparkListenerJobStart":
            ev.setdefault("Properties", {})["spark.job.description"] = PLANTED_DESC
        out.append(json.dumps(ev))
    log = tmp_path / "local-1422981780767"
    log.write_text("\n".join(out) + "\n")
    cli("ingest", log, "--db", db_path)
    secrets = list(PLANTED.values()) + ["synthPlant34", "synthPlant35"]
    con = duckdb.connect(str(db_path), read_only=True)
    cols = con.execute("select table_name, column_name from information_schema.columns "
                       "where data_type in ('VARCHAR', 'JSON') and table_schema = 'main'").fetchall()
    assert ("events", "detail") in cols and ("events", "raw") in cols
    found = []
    for table, col in cols:
        for (v,) in con.execute(f'select "{col}"::varchar from "{table}" where "{col}" is not null').fetchall():
            found += [(table, col, s) for s in secrets if s in v]
    con.close()
    assert found == []
    data = b"".join(p.read_bytes() for p in tmp_path.glob(db_path.name + "*") if p.is_file())
    assert [s for s in secrets if s.encode() in data] == []


def test_ingest_redact_option_masks_a_user_pattern(cli, tmp_path, db_path, monkeypatch):
    import json

    import duckdb

    from commitsleuth import redact as redact_mod

    monkeypatch.delenv("COMMITSLEUTH_REDACT", raising=False)
    monkeypatch.setattr(redact_mod, "_EXTRA", [])
    src = Path(__file__).parent / "corpus" / "spark-events" / "local-1422981780767"
    out = []
    for line in src.read_text().splitlines():
        ev = json.loads(line)
        if ev["Event"] == "SparkListenerApplicationStart":
            ev["App Name"] = "nightly EMP-synth4242 load"
        out.append(json.dumps(ev))
    log = tmp_path / "local-1422981780767"
    log.write_text("\n".join(out) + "\n")
    cli("ingest", log, "--db", db_path, "--redact", r"EMP-\w+")
    con = duckdb.connect(str(db_path), read_only=True)
    hits, masked = con.execute("select count(*) filter (where raw like '%synth4242%' or detail::varchar like '%synth4242%'),"
                               " count(*) filter (where detail::varchar like '%nightly ***%' or raw like '%nightly ***%') from events").fetchone()
    con.close()
    assert (hits, masked > 0) == (0, True)
