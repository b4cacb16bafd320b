"""Everything a user can call is documented: commands, queries, detectors, tables, columns, kinds."""

from __future__ import annotations

import re
from pathlib import Path

from commitsleuth.cli import cli
from commitsleuth.forensics.detectors import DETECTORS
from commitsleuth.model import KINDS
from commitsleuth.queries import all_queries
from commitsleuth.store import Store

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
README = (REPO / "README.md").read_text()
SCHEMA = (DOCS / "schema.md").read_text()
COMMANDS = (DOCS / "commands.md").read_text()
DETECTORS_PAGE = DOCS / "detectors.md"
PAGES = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]


def test_every_command_is_documented():
    for name in cli.commands:
        assert f"| `{name}` |" in COMMANDS, name


def test_every_query_is_documented():
    for name in all_queries():
        assert f"| `{name}` |" in COMMANDS, name


def test_every_detector_is_documented():
    page = DETECTORS_PAGE.read_text()
    for d in DETECTORS:
        assert f"| `{d.code}` | `{d.name}` | {d.severity} |" in page, d.code
        assert set(d.sections()) == {"symptom", "cause", "remedy"}, d.code


def detector_sections() -> str:
    """docs/detectors.md's part made from the detectors' docstrings: one section each."""
    out = []
    for d in DETECTORS:
        s = d.sections()
        out += [f"## {d.code} {d.name} ({d.severity})", "",
                f"**Symptom.** {s['symptom']}", "", f"**Cause.** {s['cause']}", "", f"**Remedy.** {s['remedy']}", ""]
    return "\n".join(out)


def test_the_detectors_page_says_what_their_docstrings_say():
    """COMMITSLEUTH_WRITE_DOCS=1 writes it; without, a page out of step with a docstring fails."""
    import os

    page = DETECTORS_PAGE.read_text()
    begin, end = "<!-- detectors: begin -->\n", "<!-- detectors: end -->"
    head, rest = page.split(begin)
    made = detector_sections()
    if os.environ.get("COMMITSLEUTH_WRITE_DOCS") == "1":
        DETECTORS_PAGE.write_text(head + begin + made + end + rest.split(end)[1])
        page = DETECTORS_PAGE.read_text()
    assert page.split(begin)[1].split(end)[0] == made


def test_the_readme_is_short_and_the_docs_have_contents():
    assert len(README.splitlines()) <= 150
    contents = (DOCS / "README.md").read_text()
    for page in DOCS.glob("*.md"):
        if page.name != "README.md":
            assert f"]({page.name})" in contents, page.name


def test_every_link_between_pages_resolves():
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text()):
            assert (page.parent / target).exists(), (page.name, target)


def test_ci_runs_the_readmes_test_command():
    assert "make test   #" in README
    assert (REPO / ".ci" / "run").read_text().strip().endswith("make test < /dev/null")


def _documented_columns(table: str) -> list[str]:
    m = re.search(rf"^## Table `{table}`\n(.*?)(?=^## |\Z)", SCHEMA, re.M | re.S)
    assert m, f"docs/schema.md has no section for {table}"
    section = m.group(1).split("### ")[0]
    same_as = re.search(r"columns as `(\w+)`", section)  # a copy table documents its original's
    columns = re.findall(r"^\| `(\w+)` \|", section, re.M)
    return columns or (_documented_columns(same_as.group(1)) if same_as else [])


def test_every_table_and_column_is_documented(tmp_path):
    with Store(tmp_path / "s.duckdb") as s:
        tables = [r[0] for r in s.con.execute(
            "select table_name from information_schema.tables where table_type='BASE TABLE'").fetchall()]
        for table in tables:
            cols = [r[0] for r in s.con.execute(
                "select column_name from information_schema.columns where table_name=? order by ordinal_position",
                [table]).fetchall()]
            assert _documented_columns(table) == cols, table


def test_every_event_kind_is_documented():
    m = re.search(r"^### Event kinds\n(.*?)(?=^## |\Z)", SCHEMA, re.M | re.S)
    documented = re.findall(r"^\| `(\w+)` \|", m.group(1), re.M)
    assert documented == list(KINDS)


# -- every command the README and docs/ show is run ---------------------------------------------
import shlex  # noqa: E402
import shutil  # noqa: E402

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
SEED = REPO / "commitsleuth" / "samples" / "seed000" / "logs"
LOC = "hdfs://10.2.6.102/tmp/hive-deploy/hive_2013-05-30_10-13-59_124_8643833043783438119/-ext-10000"

# Commands that are not run here, each with the reason and where they are run instead.
NOT_RUN = {
    "make demo": "the demo with its live Spark cluster: tests/test_cli.py runs `demo --no-live`, "
                 "tests/test_live_demo.py the live part; tests/test_setup.py runs this Makefile",
    "make test": "the test suite itself (CI runs it); tests/test_setup.py runs its passes with fake venvs",
    "commitsleuth ingest --engine spark /var/log/spark-events/":
        "a Spark session of its own and a Parquet round trip: tests/test_spark_engine.py runs the engine",
    "commitsleuth ingest --engine spark --master yarn --out hdfs:///tmp/cs 'hdfs:///archive/hive/2017-08-*/'":
        "needs a YARN cluster and HDFS",
    "commitsleuth analyze --engine spark --db cs.duckdb":
        "a Spark session of its own: tests/test_spark_analyze.py runs `analyze --engine spark`",
    "commitsleuth analyze --engine spark --master spark://10.0.0.5:7077 --parquet hdfs:///tmp/cs-export --db cs.duckdb":
        "needs a Spark cluster and HDFS",
    "hdfs dfs -get /tmp/cs ./cs && commitsleuth attach-parquet ./cs":
        "needs HDFS; attach-parquet of a local directory is run by tests/test_spark_engine.py",
}
# The venv's commitsleuth is what runs here (in this process), activated or not.
NOTHING_TO_RUN = {"source .venv/bin/activate"}
# Paths that stand for the reader's own, and what stands in for them here (files of this
# repository); a table name and partition of the reader's, the seed's location and partition.
PLACEHOLDERS = {
    "/var/log/hive/": "hive/",
    "/var/log/spark-events/": "spark-events/",
    "/data/warehouse/sales.db/orders": "warehouse/sales.db/orders",
    "/data/incidents/commitsleuth.duckdb": "incidents/commitsleuth.duckdb",
    'db.sales "dt=2017-08-30"': f"{LOC} hp_cal_month=2013-04",
}
# The demo's live part starts a Spark cluster: tests/test_live_demo.py runs it.
EXTRA_ARGS = {"commitsleuth demo": ["--no-live"]}
AUDIT_LINE = ("2023-03-01 10:00:01,120 INFO FSNamesystem.audit: allowed=true\tugi=etl (auth:SIMPLE)\t"
              "ip=/10.0.0.21\tcmd=delete\tsrc=/w/db.db/t/dt=1\tdst=null\tperm=null\tproto=rpc\n")


def documented(lang: str) -> list[tuple[str, str]]:
    """(page, command) of every line of every ``lang`` block (sh: comments dropped, lines
    joined at a trailing backslash; python: the block whole)."""
    found = []
    for page in PAGES:
        for block_lang, body in FENCE.findall(page.read_text()):
            if block_lang != lang:
                continue
            if lang == "python":
                found.append((page.name, body))
                continue
            for line in re.sub(r"\\\n\s*", "", body).splitlines():
                line = re.sub(r"\s+#\s.*$", "", line).strip()
                if line:
                    found.append((page.name, line))
    return found


def _workdir(root: Path) -> Path:
    """What the documented commands read, at the places they name (relative to the directory
    they run in: the repository's clone, with the placeholders' stand-ins beside it)."""
    root.mkdir(parents=True)
    (root / "commitsleuth").symlink_to(REPO / "commitsleuth")
    for copy in ("hive", "logs", "userlogs/attempt_1/stdout"):
        target = root / copy
        target.parent.mkdir(parents=True, exist_ok=True)
        if copy.endswith("stdout"):
            shutil.copy(SEED / "task-logs.txt", target)
        else:
            shutil.copytree(SEED, target)
    (root / "spark-events").mkdir()
    shutil.copy(REPO / "tests" / "corpus" / "spark-events" / "local-1422981780767", root / "spark-events")
    (root / "hdfs-audit.log").write_text(AUDIT_LINE)
    for name in ("000005_0", "000005_1"):
        part = root / "warehouse" / "sales.db" / "orders" / "dt=2024-01-09" / name
        part.parent.mkdir(parents=True, exist_ok=True)
        part.write_text("x")
    return root


def test_every_shell_command_shown_is_run(cli, tmp_path, monkeypatch):
    """Each page's commands run in order, in a directory of their own, as a reader would type
    them: none may fail (exit 1 only where it means findings: analyze, audit)."""
    commands = documented("sh")
    assert len(commands) > 20
    ran = set()
    for page in sorted({p for p, _ in commands}):
        root = _workdir(tmp_path / page)
        monkeypatch.chdir(root)
        for _, line in [c for c in commands if c[0] == page]:
            if line in NOT_RUN or line in NOTHING_TO_RUN:
                continue
            typed = line
            for placeholder, stand_in in PLACEHOLDERS.items():
                typed = typed.replace(placeholder, stand_in)
            argv = shlex.split(typed)
            assert argv[0] == "commitsleuth", f"{page}: {line!r} is neither run nor in NOT_RUN"
            args = argv[1:] + EXTRA_ARGS.get(line, [])
            if args and args[-2:-1] == [">"]:  # a redirect: the output goes to that file
                args, out_file = args[:-2], args[-1]
            else:
                out_file = None
            r = cli(*args)
            allowed = (0, 1) if args[0] in ("analyze", "audit") else (0,)
            assert r.exit_code in allowed and "Error:" not in r.err, (page, line, r.exit_code, r.err)
            if out_file:
                Path(out_file).write_text(r.out)
            ran.add(line)
    assert {line for _, line in commands} == ran | set(NOT_RUN) | NOTHING_TO_RUN


def test_the_python_shown_runs_on_a_real_session(spark, tmp_path, monkeypatch):
    """The attach blocks of the README and docs/live-capture.md, on the tests' PySpark session:
    the write they wrap is captured (its task attempts and the files it wrote)."""
    import duckdb
    from pyspark.sql import functions as F

    blocks = documented("python")
    assert {page for page, _ in blocks} == {"README.md", "live-capture.md"}
    for n, (page, code) in enumerate(blocks):
        root = tmp_path / f"{n}"
        root.mkdir()
        monkeypatch.chdir(root)
        for placeholder, stand_in in PLACEHOLDERS.items():
            code = code.replace(placeholder, stand_in)
        (root / "incidents").mkdir()
        df = spark.range(4).withColumn("dt", F.lit("2024-01-09"))
        path = str(root / "out")
        exec(code, {"spark": spark, "df": df, "path": path})
        db = re.search(r'db="([^"]+)"', code).group(1)
        con = duckdb.connect(str(root / db), read_only=True)
        try:
            ends = con.execute("SELECT count(*) FROM events WHERE kind = 'attempt_end'").fetchone()[0]
            files = {f for (f,) in con.execute(
                "SELECT file_name FROM events WHERE kind = 'file' AND file_name LIKE 'part-%'").fetchall()}
        finally:
            con.close()
        assert ends >= 1, page
        assert files == {p.name for p in (root / "out" / "dt=2024-01-09").glob("part-*")}, page
