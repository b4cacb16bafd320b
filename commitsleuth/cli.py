"""The command line: a thin layer over the library. Named errors become one ``Error: …`` line."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import signal
import sys
import traceback
from contextlib import contextmanager

import click

from commitsleuth import __version__
from commitsleuth.errors import CommitsleuthError, IngestInterrupted, QueryFailed, UnknownQueryError
from commitsleuth.model import SEVERITIES
from commitsleuth.report.escape import printable, shown
from commitsleuth.store import DEFAULT_DB, Store, open_waiting, read_errors, removed_unless_filled

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2

db_option = click.option(
    "--db",
    envvar="COMMITSLEUTH_DB",
    default=DEFAULT_DB,
    show_default=True,
    metavar="FILE",
    help="DuckDB store to use (env COMMITSLEUTH_DB).",
)

fail_on_option = click.option(
    "--fail-on",
    type=click.Choice(SEVERITIES),
    default="low",
    show_default=True,
    help="Exit 1 when a finding of this severity or worse exists.",
)


redact_option = click.option(
    "--redact", "redact_patterns", multiple=True, metavar="REGEX",
    help="Also mask every match of REGEX in what is stored and shown (repeatable; or COMMITSLEUTH_REDACT, one per line).")


def _add_patterns(patterns: tuple[str, ...]) -> None:
    from commitsleuth.redact import add_pattern

    for pattern in patterns:
        add_pattern(pattern)


def _exit_for(findings, fail_on: str) -> int:
    """Like a linter: 1 when a finding at or above ``fail_on`` exists, else 0."""
    from commitsleuth.forensics.detectors import severity_rank

    worst = max((severity_rank(f.severity) for f in findings), default=-1)
    return EXIT_FINDINGS if worst >= severity_rank(fail_on) else EXIT_OK



@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--debug", is_flag=True, help="Show tracebacks of internal errors.")
@click.version_option(__version__, prog_name="commitsleuth")
def cli(debug: bool) -> None:
    """Find which task attempt, thread or job duplicated or deleted rows in a Hive or Spark table.

    \b
    Typical session:
      commitsleuth ingest /var/log/hive/ /data/userlogs/
      commitsleuth analyze
      commitsleuth timeline db.sales "dt=2017-08-30"
      commitsleuth report -o report.html
    """


@cli.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--format", "format_name", metavar="NAME", help="Parse every file as this format (see 'formats').")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local", show_default=True,
              help="spark: parse inside PySpark (any Hadoop path: hdfs://, s3a://, …) into Parquet.")
@click.option("--master", metavar="URL", help="Spark master for --engine spark (default local[*], "
              "or spark-submit's).")
@click.option("--out", metavar="DIR", default="commitsleuth-parquet", show_default=True,
              help="Parquet output of --engine spark (any Hadoop path); a local one is loaded into --db.")
@click.option("--keep-reads", is_flag=True,
              help="HDFS audit and S3 access logs: one event per read instead of counts per (user, call, hour).")
@click.option("-v", "--verbose", is_flag=True,
              help="Say why each file was read as its format (heads matched of the first lines).")
@redact_option
@db_option
def ingest(paths: tuple[str, ...], format_name: str | None, engine: str, master: str | None,
           out: str, keep_reads: bool, verbose: bool, redact_patterns: tuple[str, ...], db: str) -> int:
    """Read log files, directories (recursively) and globs into the store.

    Compressed files (.gz, .bz2, .zst, .lz4) are read transparently; the format of each file
    is detected unless --format is given. Spark event logs: single files, rolling
    eventlog_v2_* directories, .inprogress, codecs lz4, lzf, snappy and zstd. Files already ingested are not read twice; a file
    that grew is read from where it stopped. A Spark event the store holds already (from live
    capture, its spool <db>.spool/, or another log of the application) is not stored again.
    A Delta, Iceberg or Hudi table (its root or log directory, on local disk or any Hadoop
    FileSystem: hdfs://, s3a://, file:) is read from its own commit log.

    \b
    Example:
      commitsleuth ingest /var/log/hive/hive.log* 'userlogs/**/stdout'
      commitsleuth ingest --engine spark --master yarn --out hdfs:///tmp/cs 'hdfs:///logs/2017-08-*'
    """
    _add_patterns(redact_patterns)
    if engine == "spark":
        return _ingest_spark(paths, format_name, master, out, db)
    from commitsleuth.ingest import phases, pool

    phases.mark("command entered")
    pool.prestart(paths, fork=_AS_PROGRAM, format_name=format_name, keep_reads=keep_reads)  # the workers start beside this process's imports and store
    # the bar first, its total once the paths are listed: the imports and the store's opening
    # take a moment the user should not wait through blind
    bar = _progress(None)
    with bar as (advance, add_events):
        if _AS_PROGRAM:
            pool.arrow_without_pandas()
        from commitsleuth.ingest import expand_paths, ingest as run_ingest
        from commitsleuth.parsers.lakehouse import is_remote

        # a missing path: said before the store is made (a URI, a table on a Hadoop FileSystem: by ingest)
        bar.set_total(sum(_size(p) for p in expand_paths(p for p in paths if not is_remote(p))))
        phases.mark("store opening")
        with removed_unless_filled(db), Store(db, intact=True) as store, read_errors(db), \
                _stop_on_signals() as stop_requested:
            try:
                report = run_ingest(store, paths, format_name=format_name, progress=advance,
                                    on_events=add_events, keep_reads=keep_reads,
                                    stop_requested=stop_requested)
            except IngestInterrupted as exc:
                stopped = exc
            else:
                stopped = None
        phases.mark("store closed")
    global _TEARDOWN_SKIPPED
    _TEARDOWN_SKIPPED = _AS_PROGRAM
    if stopped is not None:
        click.echo(shown(str(stopped)), err=True)
        return 128 + stopped.signum
    counts = {s: len(report.by_status(s)) for s in ("ok", "partial", "failed", "skipped", "unchanged")}
    parts = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    rejected = sum(r.rejected for r in report.results)
    click.echo(
        f"ingested {len(report.results)} file{'s' if len(report.results) != 1 else ''}"
        + (f" ({parts})" if parts else "") + ": "
        f"{report.events} events, {rejected} rejected lines"
        + (f", {report.known} events already in the store" if report.known else "")
    )
    for r in report.results:
        if r.status in ("partial", "skipped"):
            click.echo(shown(f"  {r.status}: {r.uri}: {r.reason}"))
    if verbose:
        from commitsleuth.ingest.explain import why

        for r in report.results:
            if r.status in ("ok", "partial") or r.reason == "not a log format commitsleuth reads":
                click.echo(shown(f"  format of {r.uri}: {why(r.uri, format_name)}"))
    for r in report.failed:
        _error(f"{r.uri}: {r.reason}")
    return EXIT_USAGE if report.failed else EXIT_OK


@contextmanager
def _stop_on_signals():
    """SIGINT/SIGTERM ask the ingest to stop at its next checkpoint; yields who asked (0: nobody)."""
    asked = []
    previous = {}

    def ask(signum, _frame):
        asked.append(signum)

    for signum in (signal.SIGINT, signal.SIGTERM):
        previous[signum] = signal.signal(signum, ask)
    try:
        yield lambda: asked[0] if asked else 0
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _ingest_spark(paths, format_name, master, out, db) -> int:
    from commitsleuth.ingest.spark import ingest_spark

    report = ingest_spark(list(paths), out, master=master, format_name=format_name)
    counts = {s: len(report.by_status(s)) for s in ("ok", "partial", "failed", "skipped")}
    counts["unchanged"] = report.unchanged
    parts = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    rejected = sum(s["rejected"] for s in report.sources)
    n = len(report.sources) + report.unchanged
    click.echo(shown(f"spark: parsed {n} file{'s' if n != 1 else ''} ({parts}): {report.events} events, "
                     f"{rejected} rejected lines -> {report.out}"))
    for s in report.sources:
        if s["status"] in ("partial", "skipped"):
            click.echo(shown(f"  {s['status']}: {s['uri']}: {s['reason']}"))
    for s in report.by_status("failed"):
        _error(f"{s['uri']}: {s['reason']}")
    if "://" not in report.out or report.out.startswith("file:"):
        _attach(report.out, db)
    else:
        click.echo(shown(f"load it where the store is: commitsleuth attach-parquet {report.out}"))
    return EXIT_USAGE if report.by_status("failed") else EXIT_OK


@contextmanager
def _open_reader(db: str, read_only: bool = True):
    """The store for a command that reads it: waits (saying so once) while a writer holds it;
    one that does not exist or is damaged is an ``Error:`` line, never created or half read."""
    with open_waiting(db, read_only=read_only, existing=True,
                      on_wait=lambda message: click.echo(shown(message), err=True)) as store, read_errors(db):
        yield store


def _attach(directory: str, db: str) -> None:
    from commitsleuth.ingest.parquet import attach_parquet

    with removed_unless_filled(db), Store(db, intact=True) as store, read_errors(db):
        report = attach_parquet(store, directory)
    click.echo(shown(f"attached {len(report.loaded)} source{'s' if len(report.loaded) != 1 else ''} "
                     f"({report.events} events) to {db}; {report.already} already there"
                     + (f"; {report.known} events already in the store" if report.known else "")))


@cli.command("attach-parquet")
@click.argument("directory", metavar="DIR")
@db_option
def attach_parquet(directory: str, db: str) -> int:
    """Load the Parquet output of 'ingest --engine spark' (events, sources, rejects) into the store.

    Sources already loaded are not loaded twice; copy DIR from HDFS/S3 first if needed.

    \b
    Example:
      hdfs dfs -get /tmp/cs ./cs && commitsleuth attach-parquet ./cs
    """
    _attach(directory, db)
    return EXIT_OK


@cli.command()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@fail_on_option
@click.option("--detector", "detectors", multiple=True, metavar="CODE", help="Run only these detectors.")
@click.option("--explain", nargs=2, metavar="TABLE PARTITION", default=None,
              help="For one partition, say per detector which facts it saw and why it did or did not fire.")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local", show_default=True,
              help="spark: the fact model and detectors run on Spark SQL (docs/spark-analyze.md).")
@click.option("--master", metavar="URL", help="Spark master for --engine spark (default local[*]).")
@click.option("--parquet", metavar="DIR", help="For --engine spark: read this export of the store "
              "(events/, sources/; any Hadoop path) instead of exporting it to a temporary directory.")
@redact_option
@db_option
def analyze(fmt: str, fail_on: str, detectors: tuple[str, ...], explain: tuple[str, str] | None,
            engine: str, master: str | None, parquet: str | None,
            redact_patterns: tuple[str, ...], db: str) -> int:
    """Run the detectors over everything ingested and print the findings.

    Exits 0 when nothing at or above --fail-on was found, 1 when something was (like a linter).

    \b
    Example:
      commitsleuth analyze --fail-on high --format json > findings.json
      commitsleuth analyze --explain sales.orders ds=2024-05-19
      commitsleuth analyze --engine spark --master spark://host:7077
    """
    from commitsleuth.forensics.analyze import analyze as run_analyze
    from commitsleuth.report.text import findings_json, findings_text

    _add_patterns(redact_patterns)
    if explain:
        from commitsleuth.forensics.explain import explain as run_explain, explanation_text
        from commitsleuth.redact import redact

        with _open_reader(db, read_only=False) as store:
            text = explanation_text(run_explain(store, *explain))
            click.echo(printable(redact(text), keep_layout=True))
        return EXIT_OK
    with _open_reader(db, read_only=False) as store:
        if engine == "spark":
            from commitsleuth.forensics.spark_engine import analyze_spark

            findings = analyze_spark(store, list(detectors) or None, master=master, parquet=parquet)
        else:
            findings = run_analyze(store, list(detectors) or None)
        click.echo(findings_json(store, findings) if fmt == "json" else findings_text(store, findings))
    return _exit_for(findings, fail_on)


@cli.command()
@click.argument("path", metavar="PATH")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@fail_on_option
@click.option("--db", "db", default=None, metavar="FILE",
              help="Add the listing to this store (made by ingest) and analyze it with the logs "
                   "there (default: a throw-away in-memory store).")
def audit(path: str, fmt: str, fail_on: str, db: str | None) -> int:
    """Inspect a table location on disk, no logs needed: ground truth you can run today.

    Lists PATH (a local directory, or any Hadoop FileSystem URI such as hdfs://… or s3a://…,
    listed through a local Spark session) and reports duplicate task files (000005_0 next to
    000005_1), files of several write jobs in one partition, leftover _temporary /
    .spark-staging / _tmp directories and empty partitions. Exits like analyze, or 2 when a
    subdirectory cannot be read (one Error line each; the rest is audited and reported).

    \b
    Examples:
      commitsleuth audit /data/warehouse/sales.db/orders
      commitsleuth audit hdfs://nn:8020/user/hive/warehouse/db.db/t --fail-on high
    """
    if _AS_PROGRAM:  # a table's audit builds Arrow arrays from lists, as an ingest does
        from commitsleuth.ingest import pool

        pool.arrow_without_pandas()
    from commitsleuth.forensics.audit import audit as run_audit
    from commitsleuth.report.text import findings_json, findings_text

    with Store(db or ":memory:", existing=db is not None) as store, read_errors(db or ":memory:"):
        n, findings, unlisted = run_audit(store, path)
        if fmt == "json":
            click.echo(findings_json(store, findings))
        else:
            skipped = f" ({len(unlisted)} not readable, the rest audited)" if unlisted else ""
            click.echo(shown(f"listed {n} entr{'y' if n == 1 else 'ies'} under {path}{skipped}"))
            click.echo(findings_text(store, findings))
    for entry in unlisted:  # an incomplete audit is an input error, like an unreadable file to ingest
        _error(entry.error)
    return EXIT_USAGE if unlisted else _exit_for(findings, fail_on)


@cli.command()
@click.argument("table")
@click.argument("partition", required=False)
@click.option("--no-color", is_flag=True, help="Plain text, no colours (also when NO_COLOR is set).")
@db_option
def timeline(table: str, partition: str | None, no_color: bool, db: str) -> int:
    """Draw a partition's timeline: one lane per attempt, thread or query, then every event.

    TABLE is a table name (db.t) or an output location; PARTITION a spec like dt=2017-08-30
    (k=v/k2=v2, or (k='v', k2='v2')). Marks: R rename, C commit, D delete, A partition add
    (the legend lists those shown); events without timestamps are drawn in file order.

    \b
    Example:
      commitsleuth timeline db.sales "dt=2017-08-30"
    """
    from commitsleuth.forensics.timeline import timeline as build
    from commitsleuth.report.terminal import print_timeline

    if partition:  # the user's own spec, quoted back by an Error line: a partition, never a secret
        _ARG_SPECS.append(partition)

    with _open_reader(db) as store:
        rows = build(store, table, partition)
        title = f"{partition} in {table}" if partition else table
        print_timeline(store, rows, title=title, color=not no_color)
    return EXIT_OK


@cli.command()
@click.argument("name_or_sql", required=False)
@click.option("--list", "list_", is_flag=True, help="List the named queries.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
@db_option
def query(name_or_sql: str | None, list_: bool, fmt: str, db: str) -> int:
    """Run a named query from queries/ or any SQL over the store.

    The named queries are plain .sql files; they run unchanged in the duckdb shell.

    \b
    Examples:
      commitsleuth query --list
      commitsleuth query double_commits
      commitsleuth query "select kind, count(*) from events group by kind"
    """
    from commitsleuth.queries import all_queries
    from commitsleuth.report.text import table_text

    named = all_queries()
    if list_ or not name_or_sql:
        width = max(len(n) for n in named)
        for q in named.values():
            click.echo(f"{q.name.ljust(width)}  {q.description}")
        return EXIT_OK
    if name_or_sql in named:
        sql = named[name_or_sql].sql
    elif " " in name_or_sql.strip():
        sql = name_or_sql
    else:
        import difflib

        close = difflib.get_close_matches(name_or_sql, named, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else "; see 'commitsleuth query --list'"
        raise UnknownQueryError(f"no query named {name_or_sql!r}{hint}")
    with _open_reader(db) as store:
        try:
            columns, rows = store.query(sql)
        except Exception as exc:  # duckdb's own errors are the user's SQL errors
            # with its hints kept: "Did you mean …", candidate columns, the LINE and its caret
            # (its LINE echoes the SQL: each line escaped on its own, a control character as '?')
            first, *hints = [line for line in str(exc).splitlines() if line.strip()]
            raise QueryFailed(f"query failed: {first}", tuple(hints)) from None
    if fmt == "json":
        from commitsleuth.redact import redact_user_value  # this run's patterns (table and CSV: printable)

        click.echo(json.dumps(redact_user_value([dict(zip(columns, r)) for r in rows]), indent=2, default=str))
    elif fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(columns)
        # CSV has no escape for control characters: shown as '?', its own quoting keeps the layout
        writer.writerows([[printable(v, keep_layout=True) if isinstance(v, str) else v for v in row]
                          for row in rows])
        click.echo(buf.getvalue(), nl=False)
    else:
        click.echo(table_text(columns, rows))
    return EXIT_OK


@cli.command()
@click.option("-o", "--output", default="report.html", show_default=True, metavar="FILE")
@db_option
def report(output: str, db: str) -> int:
    """Write a self-contained HTML report of the sources and findings.

    Run 'analyze' first; the report shows the findings it stored, each with the timeline of its
    partition (one lane per attempt, thread or query; hover or click a mark for its log line
    and file:line), the evidence and the remedy. The file needs no network to view.

    \b
    Example:
      commitsleuth analyze; commitsleuth report -o /tmp/report.html
    """
    from commitsleuth.report import write_report

    with _open_reader(db) as store:
        path = write_report(store, output)
    click.echo(shown(f"report written to {path}"))
    return EXIT_OK


@cli.command()
@click.option("--db", default="commitsleuth-demo.duckdb", show_default=True, metavar="FILE",
              help="Store the demo writes (recreated on every run).")
@click.option("--report", "report_path", metavar="FILE",
              help="HTML report the demo ends by writing  [default: the store's name with .html]")
@click.option("--live/--no-live", default=True, show_default=True,
              help="Also capture a live speculative double write on a local Spark cluster (Java 17+, under a minute).")
def demo(db: str, report_path: str | None, live: bool) -> int:
    """Ingest the shipped sample logs, analyze them and show what commitsleuth finds.

    The sample is the real task log of a Hive merge job whose speculative map attempt
    published its output twice (see commitsleuth/samples/seed000/SOURCE.md). Then, unless
    --no-live, a speculative foreachPartition runs on a local Spark cluster with live capture
    attached, and what was captured goes into the same store.

    \b
    Example:
      commitsleuth demo && commitsleuth query double_commits --db commitsleuth-demo.duckdb
    """
    from commitsleuth.demo import run_demo
    from commitsleuth.report.text import findings_text

    store, ingested, findings = run_demo(db)
    with store:
        click.echo(f"Ingested {len(ingested.results)} sample file(s): {ingested.events} events.")
        click.echo("")
        click.echo(findings_text(store, findings))
    if live:
        _demo_live(db)
    click.echo("")
    exe = "commitsleuth" if shutil.which("commitsleuth") else sys.argv[0] or "commitsleuth"
    click.echo(shown(f"Explore it: {exe} query --db {db} double_commits"))
    from commitsleuth.report import write_report

    with Store(db, read_only=True) as store:
        written = write_report(store, report_path or os.path.splitext(db)[0] + ".html")
    click.echo(shown(f"Report: {written.resolve()} (open it in a browser)"))
    return EXIT_OK


def _demo_live(db: str) -> None:
    """The demo's live part: a speculative foreachPartition captured by the listener."""
    import tempfile

    from commitsleuth.demo import run_live_demo
    from commitsleuth.forensics.analyze import analyze as run_analyze
    from commitsleuth.report.text import findings_text

    click.echo("")
    click.echo("Live: a speculative foreachPartition on a local Spark cluster (a master and two workers "
               "on 127.0.0.2 and 127.0.0.3), captured with commitsleuth.listener.attach ...")
    with tempfile.TemporaryDirectory(prefix="commitsleuth-demo-") as work:
        live = run_live_demo(db, work, progress=click.echo)
    if live.error:
        click.echo(shown(f"  live part skipped: {live.error}"))
        return
    for label, speculative, status in live.attempts:
        kind = "speculative copy" if speculative else "first attempt"
        click.echo(f"  {label} ({kind}): {status}")
    for name, part, label in live.files:
        click.echo(f"  file {name} in {part}: written by {label or 'an attempt not known'}")
    with Store(db) as store:
        findings = [f for f in run_analyze(store) if f.location and live.location.startswith(f.location)]
        click.echo("")
        click.echo(findings_text(store, findings) if findings else "  analyze: no finding for the live run")


@cli.command()
def formats() -> int:
    """List the log formats commitsleuth reads, with the event kinds each yields.

    \b
    Example:
      commitsleuth formats
    """
    from commitsleuth.parsers import FORMATS
    from commitsleuth.parsers.lakehouse import table_formats

    tables = table_formats()
    width = max(len(f.name) for f in (*FORMATS, *tables))
    for f in FORMATS:
        click.echo(f"{f.name.ljust(width)}  {f.description}")
        click.echo(f"{''.ljust(width)}  yields: {', '.join(f.kinds)}")
    click.echo("")
    click.echo("Table formats (give the table's directory or its log directory):")
    for t in tables:
        click.echo(f"{t.name.ljust(width)}  {t.description}")
        click.echo(f"{''.ljust(width)}  yields: {', '.join(t.kinds)}")
    return EXIT_OK


def _size(path) -> int:
    """Bytes a source's read advances the progress bar by (a rolling directory: its parts)."""
    from pathlib import Path

    from commitsleuth.ingest.eventlogs import size_of

    try:
        return size_of(Path(path))
    except OSError:
        return 0


class _progress:
    """A rich progress bar on stderr when it is a terminal (bytes, MB/s, events); nothing otherwise.

    Entering gives ``(advance_bytes, add_events)`` callbacks, both None when quiet. A ``total``
    of None draws the bar at once, its size told later (``set_total``).
    """

    def __init__(self, total: int | None):
        self.total = total
        self.bar = None
        self.task = None

    def set_total(self, total: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, total=total)

    def __enter__(self):
        if not sys.stderr.isatty() or self.total == 0:
            return None, None
        from rich.console import Console
        from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn,
                                   TransferSpeedColumn)

        self.bar = Progress(
            "[progress.description]{task.description}", BarColumn(), DownloadColumn(),
            TransferSpeedColumn(), TextColumn("{task.fields[events]:,} events"), TimeRemainingColumn(),
            transient=True, console=Console(stderr=True),
        )
        self.bar.start()
        task = self.task = self.bar.add_task("ingest", total=self.total, events=0)

        def add_events(n: int) -> None:
            self.bar.update(task, events=self.bar.tasks[task].fields["events"] + n)

        return (lambda n: self.bar.advance(task, n)), add_events

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.stop()


# Partition specs given on the command line: an Error line quoting them keeps them as they are.
_ARG_SPECS: list[str] = []


def _error(message: str, hints: tuple[str, ...] = ()) -> None:
    """One ``Error:`` line on stderr (then any hint lines); it can quote paths and log text:
    each line redacted and escaped on its own."""
    click.echo(f"Error: {shown(message, tuple(_ARG_SPECS))}", err=True)
    for line in hints:
        click.echo(shown(line, tuple(_ARG_SPECS)), err=True)


def main(argv: list[str] | None = None) -> int:
    """Entry point: returns the exit code (0 clean, 1 findings, 2 usage or input error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    _ARG_SPECS.clear()
    try:
        rv = cli.main(args=argv, prog_name="commitsleuth", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("Error: aborted", err=True)
        return EXIT_USAGE
    except click.UsageError as exc:
        hint = ""
        if exc.ctx is not None:
            hint = f" (see '{exc.ctx.command_path} --help')"
        _error(f"{exc.format_message()}{hint}")
        return EXIT_USAGE
    except click.ClickException as exc:
        _error(f"{exc.format_message()}")
        return exc.exit_code
    except CommitsleuthError as exc:
        if "--debug" in argv:
            traceback.print_exc()
        _error(f"{exc}", getattr(exc, "hints", ()))
        return EXIT_USAGE
    except KeyboardInterrupt:
        click.echo("Error: interrupted", err=True)
        return 130
    except Exception as exc:  # noqa: BLE001 - an internal error still gets one line
        if "--debug" in argv:
            traceback.print_exc()
        _error(f"internal error: {type(exc).__name__}: {exc} (run with --debug for details)")
        return 3
    return rv if isinstance(rv, int) else EXIT_OK


# True in the ``commitsleuth`` program (not when ``main`` is called in a process that goes on)
_AS_PROGRAM = False
# True once an ingest in the program closed its store and ended its workers: the program then
# ends without the interpreter's teardown of every module it imported (0.05-0.08 cpu-s, the last
# serial step of the command; bench/ingest_text.py), its exit handlers still run.
_TEARDOWN_SKIPPED = False


def run() -> None:
    global _AS_PROGRAM
    _AS_PROGRAM = True
    code = main()
    if _TEARDOWN_SKIPPED:
        import atexit

        atexit._run_exitfuncs()  # what was registered to run at exit still runs
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:  # a closed pipe: nothing more can be said
            pass
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
