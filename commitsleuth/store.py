"""The store: one DuckDB file holding sources, events, rejects and findings.

Writes are bulk (Arrow batches), never row-by-row INSERTs. The schema is versioned in
``schema_version``; migrations in ``migrations/NNNN_name.sql`` run forward only, in order.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib
import os
import re
import shutil
import time
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from commitsleuth.cache import cache_dir
from commitsleuth.errors import StoreError, StoreLockedError, StoreWriteError
from commitsleuth.model import Event, events_to_arrow
from commitsleuth.redact import redact

if TYPE_CHECKING:  # pyarrow is imported where a table is written (see model.py)
    import pyarrow as pa


class _OnFirstUse:
    """A module imported when one of its names is first looked up, not when its user is."""

    def __init__(self, name: str):
        self._name, self._module = name, None

    def __getattr__(self, attr: str):
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)


def on_first_use(name: str):
    """Module ``name``, imported at the first use of one of its names. Importing duckdb costs
    0.05-0.1 cpu-s (importlib.metadata included): the ingest command starts its workers' fork
    server once the CLI is imported, so the sooner, and that server's workers parse text logs
    without duckdb, so it need not import it at all."""
    return _OnFirstUse(name)


duckdb = on_first_use("duckdb")

DEFAULT_DB = "commitsleuth.duckdb"
# Files readable by every DuckDB since 1.2 (the user's own `duckdb` shell opens the store); 1.2 is
# the first storage with zstd-compressed text, which raw lines need (migration 0019).
STORAGE_COMPATIBILITY = "v1.2.0"
# WAL size that triggers a checkpoint. DuckDB's 16 MB default recompresses the growing table at
# every few batches of an event log (its raw lines are most of the bytes): 256 MB writes them
# about a third faster (bench/ingest_spark.py) and bounds what waits in memory for a checkpoint.
CHECKPOINT_THRESHOLD = "256MB"
# A writer that checkpoints every transaction (live capture: one small one per load, the file
# closed after each) commits it as its checkpoint: its rows are written once, into the file, not
# first into the write-ahead log and again at the close's checkpoint. With no log written at all,
# a checkpoint that fails fails the commit: nothing of it is in the store, never a commit that is
# durable while its error says it failed.
COMMIT_CHECKPOINTS = {"checkpoint_threshold": "'0B'", "auto_checkpoint_skip_wal_threshold": "0"}
# DuckDB's buffer pool during an ingest: the written blocks need not stay cached, and without a
# limit they do (a 600 MB event log: 1.08 GiB peak; with this limit 0.6 GiB, same speed).
INGEST_MEMORY = "512MB"
# An ingest's transaction holding at least this many events commits as a checkpoint: its rows
# are compressed into the file once. Committed into the write-ahead log instead (below
# CHECKPOINT_THRESHOLD), they are written there uncompressed first (200 MB for a 100k-line
# Spark event log, 0.25-0.3 CPU-s and the disk's time) and compressed by the closing checkpoint
# anyway. An ingest that commits a big source this often has each commit compressed while it
# reads on, not all of it at its end (DuckDB 2.0.1 kept a 100k-line log's two commits in two
# row groups, neither rewritten). Half a row group: a smaller commit (a small file's, a sources
# row) stays in the log.
CHECKPOINT_COMMIT_ROWS = 61_440


def default_db_path() -> str:
    return os.environ.get("COMMITSLEUTH_DB") or DEFAULT_DB


def migrations() -> list[tuple[int, str, str]]:
    """(version, name, sql) of every shipped migration, in order."""
    found = []
    for entry in resources.files("commitsleuth").joinpath("migrations").iterdir():
        m = re.fullmatch(r"(\d{4})_(\w+)\.sql", entry.name)
        if m:
            found.append((int(m.group(1)), m.group(2), entry.read_text(encoding="utf-8")))
    return sorted(found)


# A new store starts as a copy of an empty store with every shipped migration applied, made once
# per set of migrations (and DuckDB version) in the user's cache: running 0001-00NN costs about
# 0.15 s of CPU on each new store, the copy under 0.03 s (an ingest of one small file is mostly
# start cost). "0" here: every new store runs the migrations itself.
TEMPLATE_ENV = "COMMITSLEUTH_STORE_TEMPLATE"


def store_template() -> Path | None:
    """The empty store of this commitsleuth's migrations, made now if missing; None where it
    cannot be made (the cache not writable, say): then a new store migrates itself."""
    known = migrations()
    key = hashlib.sha256(f"{duckdb.__version__}|{STORAGE_COMPATIBILITY}".encode())
    for version, name, sql in known:
        key.update(f"|{version}|{name}|{sql}".encode())
    cache = cache_dir()
    path = cache / f"empty-store-{known[-1][0]:04d}-{key.hexdigest()[:16]}.duckdb"
    if path.exists():
        return path
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    try:
        cache.mkdir(parents=True, exist_ok=True)
        for stale in (part, Path(f"{part}.wal")):
            stale.unlink(missing_ok=True)
        Store(part, template=False).close()
        if Path(f"{part}.wal").exists():  # not checkpointed whole: not a template
            return None
        os.replace(part, path)  # whole or not at all, whoever makes it at the same time
    except (OSError, StoreError, duckdb.Error):
        return None
    finally:
        for left in (part, Path(f"{part}.wal")):
            try:
                left.unlink(missing_ok=True)
            except OSError:
                pass
    return path


def _from_template(path: str) -> bool:
    """Creates the store at ``path`` as a copy of ``store_template()``; false (nothing done) when
    there is one already, or a write-ahead log DuckDB would replay into it, or no template. The
    copy appears at ``path`` whole (a hard link of a finished copy, which fails if another process
    created the store meanwhile: then that store is opened)."""
    if os.environ.get(TEMPLATE_ENV, "1") == "0" or path == ":memory:":
        return False
    if os.path.lexists(path) or os.path.lexists(path + ".wal"):
        return False
    template = store_template()
    if template is None:
        return False
    part = f"{path}.{os.getpid()}.new"
    try:
        shutil.copyfile(template, part)
        os.link(part, path)
    except OSError:
        return False
    finally:
        try:
            os.unlink(part)
        except OSError:
            pass
    return True


def _takes_zstd(con) -> bool:
    """Whether the open store's storage can hold zstd-compressed columns (files created with
    DuckDB storage v1.2 or newer; older stores keep their encodings)."""
    con.execute("BEGIN")
    try:
        con.execute("CREATE TABLE zstd_probe (x VARCHAR USING COMPRESSION zstd)")
        return True
    except duckdb.BinderException:
        return False
    finally:
        con.execute("ROLLBACK")


def latest_version() -> int:
    return migrations()[-1][0]


def _redacted(values: dict) -> dict:
    """A source's text fields (reason, uri, format notes) through the one redaction layer; a
    ``uri`` masked gets its ``uri_key``, so identity never goes through masking."""
    out = {k: redact(v) if isinstance(v, str) else v for k, v in values.items()}
    if isinstance(values.get("uri"), str):
        out["uri_key"] = uri_key(values["uri"])
    return out


def uri_key(uri: str) -> str | None:
    """A source URI's identity where redaction changes it (``sources.uri_key``), else None: the
    stored ``uri`` is then the URI itself."""
    if redact(uri) == uri:
        return None
    return "sha256:" + hashlib.sha256(uri.encode("utf-8", "surrogateescape")).hexdigest()


# The name of a store ATTACHed to a caller's in-memory connection (``Store(host=...)``).
ATTACHED = "commitsleuth_store"

LOCK_WAIT = 30.0  # seconds a reader waits for a writer's lock (COMMITSLEUTH_LOCK_WAIT overrides)


def open_waiting(path: str | os.PathLike | None = None, *, read_only: bool = False,
                 on_wait=None, wait: float | None = None, existing: bool = False) -> "Store":
    """Open the store, retrying with backoff while another process holds its lock (an ingest
    or a live capture between batches), up to ``wait`` seconds. ``on_wait(message)`` is called
    once, when the first attempt finds the store locked. Past the bound: StoreLockedError."""
    bound = float(os.environ.get("COMMITSLEUTH_LOCK_WAIT", LOCK_WAIT)) if wait is None else wait
    deadline, pause, said = time.monotonic() + bound, 0.02, False
    marker = wait_marker(path or default_db_path())
    touched = False
    try:
        while True:
            try:
                return Store(path, read_only=read_only, existing=existing)
            except StoreLockedError as exc:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise
                if not said and on_wait is not None:
                    # Said before the marker appears: whoever sees the marker has had the message.
                    on_wait(f"waiting up to {bound:g}s: {exc}")
                    said = True
                touched = True  # before the touch: a Ctrl-C between the two still removes it
                _touch(marker)  # a live capture keeping the store open lets go when it sees this
                time.sleep(min(pause, left))
                pause = min(pause * 2, 0.5)
    finally:
        # Opened, gave up or interrupted (Ctrl-C in the wait): no longer waiting. Another waiter
        # touches the marker again at its next retry, within half a second.
        if touched:
            _remove(marker)


def wait_marker(path: str | os.PathLike) -> str:
    """The file a process waiting for the store's lock touches (``open_waiting``, every retry)."""
    return f"{path}.wait"


def reader_waiting(path: str | os.PathLike, within: float = 2.0) -> bool:
    """Whether a process touched the store's wait marker in the last ``within`` seconds: a
    writer that keeps the store open between batches (live capture) closes it then."""
    try:
        return time.time() - os.stat(wait_marker(path)).st_mtime < within
    except OSError:
        return False


def _touch(marker: str) -> None:
    try:
        os.utime(marker) if os.path.exists(marker) else os.close(os.open(marker, os.O_WRONLY | os.O_CREAT, 0o600))
    except OSError:
        pass  # an unwritable directory: the writer lets go at its own pace, as before


def _remove(marker: str) -> None:
    try:
        os.unlink(marker)
    except OSError:
        pass


def check_writable(path: str) -> None:
    """StoreWriteError unless the store file can be written and its write-ahead log created
    beside it. DuckDB opens a writable file in a read-only directory, then fails at the first
    commit, when it creates ``<file>.wal``; so both are tried here, before anything is done."""
    directory = os.path.dirname(os.path.abspath(path)) or "."
    if not os.path.isdir(directory):
        return  # DuckDB's own "cannot open" says it
    for existing in (path, path + ".wal"):
        if os.path.exists(existing):
            try:
                os.close(os.open(existing, os.O_WRONLY))
            except OSError as exc:
                what = "" if existing == path else f" (its write-ahead log {existing})"
                raise StoreWriteError(f"cannot write the store {path}: {exc.strerror}{what}") from None
    probe = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.probe")
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError as exc:
        raise StoreWriteError(f"cannot write the store {path}: {exc.strerror} (its directory {directory} "
                              "must take the store's write-ahead log)") from None
    os.unlink(probe)


# DuckDB's file: a 4 KiB main header and two 4 KiB database headers, then its blocks.
FILE_HEADERS = 3 * 4096
_expected_schemas: dict[frozenset, set] = {}


def _columns(con, catalog: str) -> set[tuple[str, str, str]]:
    """(table, column, type) of the tables, (view, '', 'VIEW') of the views: a view's columns
    are bound again when it is read (``e.*`` gains the columns added to ``events`` since)."""
    return set(con.execute(
        "SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c "
        "JOIN information_schema.tables t USING (table_catalog, table_schema, table_name) "
        "WHERE c.table_catalog = ? AND c.table_schema = 'main' AND t.table_type = 'BASE TABLE' "
        "UNION SELECT table_name, '', 'VIEW' FROM information_schema.tables "
        "WHERE table_catalog = ? AND table_schema = 'main' AND table_type = 'VIEW'",
        [catalog, catalog]).fetchall())


def expected_schema(versions: frozenset) -> set[tuple[str, str, str]] | None:
    """(table, column, type) of a store to which exactly the migrations ``versions`` were
    applied, from running them on an empty in-memory database (~45 ms, once a process); None
    when one of them is not shipped (a newer commitsleuth wrote the store)."""
    if versions not in _expected_schemas:
        known = {v: sql for v, _, sql in migrations()}
        if not versions <= known.keys():
            return None
        con = duckdb.connect()
        try:
            con.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name VARCHAR, "
                        "applied_at TIMESTAMP)")
            for version in sorted(versions):
                con.execute(known[version])
            _expected_schemas[versions] = _columns(con, "memory")
        finally:
            con.close()
    return _expected_schemas[versions]


def check_intact(store: "Store") -> None:
    """StoreError naming the damage when the store's file is shorter than its own header says
    (cut short by a full disk or a partial copy: its last blocks would read as an I/O error in
    the middle of a command, or not at all) or its tables lack or changed a column the
    migrations it records made (a query would fail, or a report be silently incomplete)."""
    con, path = store.con, store.path
    catalog = con.execute("SELECT current_database()").fetchone()[0]
    try:
        # Blocks in use each have a place in the file; free ones at its end may have been cut
        # off by DuckDB itself, so the blocks in use are what a whole file cannot be short of.
        block_size, used_blocks = con.execute(
            "SELECT block_size, used_blocks FROM pragma_database_size() WHERE database_name = ?",
            [catalog]).fetchone()
        size, needed = os.path.getsize(path), FILE_HEADERS + block_size * used_blocks
        if size < needed:
            raise StoreError(f"the store {path} is damaged: its file is cut short ({size} bytes, "
                             f"its {used_blocks} blocks in use need {needed}); ingest into a new --db")
        versions = frozenset(v for (v,) in con.execute("SELECT version FROM schema_version").fetchall())
        found = _columns(con, catalog)
    except duckdb.Error as exc:
        raise StoreError(f"the store {path} is damaged: {str(exc).splitlines()[0]}") from None
    expected = expected_schema(versions)
    if expected is None:
        return
    ours = {t for t, _, _ in expected}
    found = {c for c in found if c[0] in ours}  # tables of the user's own are theirs to keep
    if found == expected:
        return
    lacking = sorted(expected - found)
    table, column, kind = (lacking or sorted(found - expected))[0]
    what = ("lacks" if lacking else "has an unknown") + f" column {table}.{column} ({kind})"
    if lacking and not any(t == table for t, _, _ in found):
        what = f"lacks {'view' if kind == 'VIEW' else 'table'} {table}"
    raise StoreError(f"the store {path} is damaged: it {what}; ingest into a new --db")


@contextmanager
def read_errors(path: str):
    """An I/O error while a command reads the store is the store's, not an internal error."""
    try:
        yield
    except duckdb.IOException as exc:
        raise StoreError(f"cannot read the store {path}: {str(exc).splitlines()[0]}") from None


def holds_no_source(path: str) -> bool:
    """Whether the store at ``path`` has no source at all (an ingest that read nothing)."""
    try:
        con = duckdb.connect(path, read_only=True)
    except duckdb.Error:
        return False  # held by another process, which may be filling it
    try:
        return con.execute("SELECT count(*) FROM sources").fetchone()[0] == 0
    except duckdb.Error:
        return True  # created, but its migrations did not even run
    finally:
        con.close()


# Stores this process created and closed holding a source (absolute paths): known filled
# without opening them again, which costs a new DuckDB instance (0.02 cpu-s) at an ingest's end.
_CLOSED_FILLED: set[str] = set()


@contextmanager
def removed_unless_filled(path: str | os.PathLike | None):
    """For the commands that may create the store (ingest, attach-parquet): a store they
    created and left without a single source is removed again, with its write-ahead log, so
    that no empty store is left behind for a later analyze to call clean."""
    path = str(path or default_db_path())
    created = path != ":memory:" and not os.path.exists(path)
    if created:
        _CLOSED_FILLED.discard(os.path.abspath(path))  # an older store of that name, since removed
    try:
        yield
    finally:
        if created and os.path.exists(path) and os.path.abspath(path) not in _CLOSED_FILLED \
                and holds_no_source(path):
            for leftover in (path, path + ".wal"):
                _remove(leftover)


@contextmanager
def _writing(path: str):
    """A failed commit outside a checkpoint (the WAL cannot be written) is a StoreWriteError."""
    try:
        yield
    except (duckdb.IOException, duckdb.TransactionException) as exc:
        raise StoreWriteError(f"cannot write the store {path}: {str(exc).splitlines()[0]}") from None


class Store:
    """An open commitsleuth database. Use as a context manager or call ``close()``."""

    def __init__(self, path: str | os.PathLike | None = None, *, read_only: bool = False, host=None,
                 commit_checkpoints: bool = False, existing: bool = False, intact: bool = False,
                 template: bool = True, reopen: bool = False):
        """``host``: an in-memory DuckDB connection the caller keeps between opens (live capture
        opens the store for every load); the store is ATTACHed to it (~3 ms of CPU, where a
        connection of its own starts a DuckDB instance: ~20 ms) and ``close()`` DETACHes it,
        which checkpoints and frees the file's lock as closing a connection does.
        ``commit_checkpoints``: every COMMIT is a checkpoint, no write-ahead log (see
        COMMIT_CHECKPOINTS), for a writer that would checkpoint at each close anyway.
        ``existing``: a command that reads what was ingested (analyze writes its findings too)
        neither creates the store nor reads a damaged one: StoreError for both (``check_intact``).
        ``intact``: a store that was there already is checked too (ingest, before it writes).
        ``template``: a new store is a copy of ``store_template()`` (false: it runs the migrations).
        ``reopen``: this ``host`` opened this store writable before (live capture, each load after
        its first): a store still at this commitsleuth's newest schema version is written as it
        is, with the host's settings kept, not migrated again (about 2 ms of a load's CPU); any
        other store (replaced, older or newer) is opened as without it."""
        self.path = str(path or default_db_path())
        self._host = host
        self._later: list[dict] = []  # sources rows add_source(later=True) has not written yet
        self._later_from = 0
        was_there = self.path != ":memory:" and Path(self.path).exists()
        self._created = not was_there and not read_only and self.path != ":memory:"
        if (read_only or existing) and self.path != ":memory:" and not was_there:
            raise StoreError(f"no database at {self.path}: run 'commitsleuth ingest' first")
        if not read_only and self.path != ":memory:":
            check_writable(self.path)
        templated = not read_only and not existing and template and _from_template(self.path)
        try:
            if host is None:
                config = {} if read_only else {"storage_compatibility_version": STORAGE_COMPATIBILITY}
                self.con = duckdb.connect(self.path, read_only=read_only, config=config)
            else:
                # an existing file keeps its own storage version (ATTACH refuses to lower it)
                mode = (" (READ_ONLY)" if read_only else "" if os.path.exists(self.path)
                        else f" (STORAGE_VERSION '{STORAGE_COMPATIBILITY}')")
                host.execute(f"ATTACH '{self.path.replace(chr(39), chr(39) * 2)}' AS {ATTACHED}{mode}")
                host.execute(f"USE {ATTACHED}")
                self.con = host
        except duckdb.IOException as exc:
            msg = str(exc)
            if "lock" in msg.lower():
                holder = re.search(r"PID (\d+)", msg)
                who = f" (process {holder.group(1)})" if holder else ""
                raise StoreLockedError(
                    f"{self.path} is locked by another process{who}; wait for it to finish "
                    "or use another --db"
                ) from None
            short = re.search(r"Could not read enough bytes.*?attempted to read (\d+) bytes from location (\d+)", msg)
            if short and os.path.exists(self.path):  # its catalog lies past the cut (check_intact's case)
                raise StoreError(f"the store {self.path} is damaged: its file is cut short "
                                 f"({os.path.getsize(self.path)} bytes, a block it needs ends at "
                                 f"{int(short.group(1)) + int(short.group(2))}); ingest into a new --db") from None
            raise StoreError(f"cannot open {self.path}: {msg.splitlines()[0]}") from None
        except duckdb.ResourceInUseException:  # DuckDB opens a file once per process
            raise StoreLockedError(f"{self.path} is open in another connection of this process; "
                                   "wait for it to close or use another --db") from None
        except duckdb.Error as exc:
            raise StoreError(f"cannot open {self.path}: {str(exc).splitlines()[0]}") from None
        if existing or (intact and was_there):
            try:
                check_intact(self)
            except BaseException:
                self.close()
                raise
        if not read_only and not (reopen and host is not None and was_there and not templated
                                  and self._at_version(latest_version())):
            try:
                # a new store's first commits fail like any write on a full disk: StoreWriteError
                with _writing(self.path):
                    self.con.execute(f"SET checkpoint_threshold = '{CHECKPOINT_THRESHOLD}'")
                    if templated:  # its migrations were applied now, as this store's own
                        self.con.execute("UPDATE schema_version SET applied_at = ?", [_now()])
                    self.migrate()
                    if commit_checkpoints:  # after the migrations: each of their commits is not one
                        for name, value in COMMIT_CHECKPOINTS.items():
                            self.con.execute(f"SET {name} = {value}")
            except BaseException:
                self.close()
                raise
        self._next_event_id: int | None = None
        self._pending = False  # an ingest's transaction is open (write_checkpoint(commit=False))
        # (source, application) -> whether another source holds keyed events of it; true until
        # events of another source are written, as only this connection writes the store
        self._held_elsewhere: dict[tuple, bool] = {}
        self._pending_from: int | None = None  # the next event id when it began
        self._pending_rows = 0  # events written in it
        self._commit_checkpoints = commit_checkpoints

    # -- lifecycle -------------------------------------------------------------------------
    @contextmanager
    def memory_limited(self, limit: str = INGEST_MEMORY):
        """DuckDB's memory held to ``limit`` for a while (an ingest), then as it was."""
        setting = "SELECT current_setting('memory_limit')"
        before = self.con.execute(setting).fetchone()[0]
        self.con.execute("RESET memory_limit")
        default = self.con.execute(setting).fetchone()[0] == before  # then RESET restores it exactly
        self.con.execute(f"SET memory_limit = '{limit}'")
        try:
            yield
        finally:
            try:
                self.con.execute("RESET memory_limit" if default else f"SET memory_limit = '{before}'")
            except duckdb.Error:
                pass  # the connection is gone (a failed write closed it): nothing to restore

    def merge_row_groups(self, allowed: bool) -> None:
        """Whether this connection's next checkpoints may merge the table's small row groups
        (DuckDB's vacuum: it rewrites and recompresses every row of the groups it merges). Each
        checkpointed transaction leaves its rows in a row group of their own."""
        self.con.execute("RESET max_vacuum_tasks" if allowed else "SET max_vacuum_tasks = 0")

    def close(self) -> None:
        try:
            self.flush()
        except StoreWriteError:
            pass  # rows of files not read: the next ingest writes them again
        if self._created:
            self._note_filled()
        if self._host is None:
            self.con.close()
            return
        try:
            self.con.execute("ROLLBACK")  # a failed write's transaction: DETACH needs none open
        except duckdb.Error:
            pass  # none was open
        self.con.execute("USE memory")
        self.con.execute(f"DETACH {ATTACHED}")

    def _note_filled(self) -> None:
        """Note this new store in ``_CLOSED_FILLED`` when it holds a source (its connection
        still open): ``removed_unless_filled`` then keeps it without opening it again."""
        try:
            if self.con.execute("SELECT EXISTS (SELECT 1 FROM sources)").fetchone()[0]:
                _CLOSED_FILLED.add(os.path.abspath(self.path))
        except duckdb.Error:
            pass  # not migrated, or a failed write closed the connection: removed_unless_filled looks

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def migrate(self) -> int:
        con = self.con
        con.execute(
            "CREATE TABLE IF NOT EXISTS schema_version "
            "(version INTEGER PRIMARY KEY, name VARCHAR, applied_at TIMESTAMP)"
        )
        applied = {v for (v,) in con.execute("SELECT version FROM schema_version").fetchall()}
        current = max(applied, default=0)
        known = migrations()
        if current > known[-1][0]:
            raise StoreError(
                f"{self.path} has schema version {current}, newer than this commitsleuth "
                f"({known[-1][0]}); upgrade commitsleuth"
            )
        for version, name, sql in known:
            # numbered by issue, so a store may lack one below its newest: apply what is missing
            if version in applied:
                continue
            if "USING COMPRESSION" in sql and not _takes_zstd(con):
                sql = re.sub(r" USING COMPRESSION \w+", "", sql)
            con.execute("BEGIN")
            try:
                con.execute(sql)
                con.execute(
                    "INSERT INTO schema_version VALUES (?, ?, ?)", [version, name, _now()]
                )
                con.execute("COMMIT")
            except Exception:
                self._rollback()  # none open after a failed COMMIT: the COMMIT's error is the one raised
                raise
        return known[-1][0]

    def _at_version(self, version: int) -> bool:
        """Whether the store's newest applied migration is ``version`` (false when it has none)."""
        try:
            return self.schema_version() == version
        except duckdb.Error:
            return False

    def schema_version(self) -> int:
        return self.con.execute("SELECT max(version) FROM schema_version").fetchone()[0]

    # -- sources ---------------------------------------------------------------------------
    def find_source(self, uri: str) -> dict | None:
        return self.find_previous([uri], None)

    def find_source_by_fingerprint(self, fp: str) -> dict | None:
        return self.find_previous([], fp)

    def find_previous(self, uris: list[str], fp: str | None) -> dict | None:
        """The latest source of the first of ``uris`` the store has, else the latest whose
        fingerprint is ``fp``, in one query (a statement costs about a millisecond, a History
        Server directory has thousands of sources)."""
        found = self.sources_like(uris, fp)
        for uri, key in zip(uris, [uri_key(uri) for uri in uris]):
            for row in found:
                if (row["uri_key"] == key) if key else (row["uri"] == uri and row["uri_key"] is None):
                    return {**row, "uri": uri}  # the caller's URI, as read: compared, never stored
        return next((row for row in found if fp is not None and row["fingerprint"] == fp), None)

    def latest_sources(self, uris: list[str]) -> dict[str, dict]:
        """The latest source of each of ``uris`` the store has, in one query (a directory of
        100,000 files is 100,000 queries of a millisecond otherwise)."""
        import pyarrow as pa

        self.flush()
        asked = list(dict.fromkeys(uris))
        names = pa.table({"asked": pa.array(asked, pa.string()),  # noqa: F841 - read by DuckDB
                          "key": pa.array([uri_key(u) for u in asked], pa.string())})
        # a masked URI is found by its key, never its mask
        cur = self.con.execute("SELECT s.*, n.asked FROM sources s JOIN names n ON "
                               "(s.uri_key IS NULL AND n.key IS NULL AND s.uri = n.asked) OR s.uri_key = n.key "
                               "ORDER BY s.source_id")
        columns = [d[0] for d in cur.description]
        rows = (dict(zip(columns, r)) for r in cur.fetchall())
        return {row["asked"]: {**{k: v for k, v in row.items() if k != "asked"}, "uri": row["asked"]} for row in rows}

    def sources_like(self, uris: list[str], fp: str | None) -> list[dict]:
        """Every source named by one of ``uris`` or whose fingerprint is ``fp``, newest first,
        in one query: what a file met again may be (the same name, or its bytes renamed)."""
        self.flush()
        names = ", ".join("?" * len(uris))
        keys = [uri_key(uri) for uri in uris]  # a masked URI is found by its key, never its mask
        cur = self.con.execute(
            f"SELECT * FROM sources WHERE uri IN ({names or 'NULL'}) OR uri_key IN ({names or 'NULL'}) "
            "OR fingerprint = ? ORDER BY source_id DESC",
            [*uris, *keys, fp])
        columns = [d[0] for d in cur.description]
        real = {key: uri for uri, key in zip(uris, keys) if key}
        rows = [dict(zip(columns, row)) for row in cur.fetchall()]
        # a row found by its key answers with the URI asked, as read: compared, never stored
        return [{**row, "uri": real[row["uri_key"]]} if row["uri_key"] in real else row for row in rows]

    def add_source(self, uri: str, kind: str, later: bool = False, **values) -> int:
        """A new ``sources`` row; returns its id. ``later``: the row is written with the next
        write or read of ``sources`` (a row of a file not read: a directory of 100,000 empty
        files writes them in one insert, not in 100,000 commits)."""
        if later:
            if not self._later:
                self._later_from = self.con.execute("SELECT coalesce(max(source_id), 0) + 1 FROM sources").fetchone()[0]
            source_id = self._later_from + len(self._later)
            self._later.append({"source_id": source_id, "kind": kind, "started_at": _now(),
                                **_redacted({**values, "uri": uri})})
            return source_id
        self.flush()
        source_id = self.con.execute(
            "SELECT coalesce(max(source_id), 0) + 1 FROM sources"
        ).fetchone()[0]
        values = {"status": "running", "started_at": _now(), **_redacted({**values, "uri": uri})}
        cols = ["source_id", "kind", *values]
        with _writing(self.path):
            self.con.execute(
                f"INSERT INTO sources ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                [source_id, kind, *values.values()],
            )
        return source_id

    def flush(self) -> None:
        """Write the rows ``add_source(later=True)`` kept, in one insert (a caller reading
        ``con`` itself flushes first; every method here does)."""
        if not self._later:
            return
        import pyarrow as pa

        rows, self._later = self._later, []
        columns = list(dict.fromkeys(k for row in rows for k in row))
        later = pa.Table.from_pylist([{c: row.get(c) for c in columns} for row in rows])  # noqa: F841 - read by DuckDB
        with _writing(self.path):
            self.con.execute(f"INSERT INTO sources BY NAME SELECT {', '.join(columns)} FROM later")

    def update_source(self, source_id: int, **values) -> None:
        self.flush()
        if not values:
            return
        values = _redacted(values)
        sets = ", ".join(f"{k} = ?" for k in values)
        with _writing(self.path):
            self.con.execute(
                f"UPDATE sources SET {sets} WHERE source_id = ?", [*values.values(), source_id]
            )

    # -- events ----------------------------------------------------------------------------
    def next_event_id(self) -> int:
        if self._next_event_id is None:
            self._next_event_id = (
                self.con.execute("SELECT coalesce(max(event_id), 0) + 1 FROM events").fetchone()[0]
            )
        return self._next_event_id

    def write_events(self, events: list[Event]) -> int:
        """Append the events the store does not hold yet (``unseen_events``) in one bulk
        insert; returns how many were written."""
        if not events:
            return 0
        batch = self.unseen_events(events_to_arrow(events, None), own_source=True)
        self.write_arrow(batch)
        return batch.num_rows

    def unseen_events(self, batch: pa.Table, own_source: bool = False) -> pa.Table:
        """The rows of ``batch`` whose Spark event identity (``app_id``, ``event_key``) no stored
        event has: live capture, its spool and Spark's own event log of one application add
        each event once, in whatever order they are ingested. Rows without a key all stay, and
        (unless ``own_source``: live capture's writes) so do rows whose key only their own source
        holds: within one file, checkpoints keep each line once and two lines are two events, so
        what is stored does not depend on where batches end."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        keys = batch.column("event_key")
        if batch.num_rows == 0 or keys.null_count == batch.num_rows:
            return batch
        probe = batch.select(["app_id", "event_key", "source_id"]).append_column(
            "row", pa.array(np.arange(batch.num_rows, dtype=np.int64)))
        apps = pc.unique(pc.filter(probe.column("app_id"), pc.is_valid(keys))).to_pylist()
        if not own_source:
            # A source's own events never hide each other, so the join (a scan of every stored
            # event of the application, the source's own included, batch after batch) is only
            # needed when another source holds events of the application.
            sources = pc.unique(probe.column("source_id")).to_pylist()
            if len(sources) == 1 and not any(self._other_source_holds(sources[0], a) for a in apps):
                return batch
        named = [a for a in apps if a is not None]
        # only these applications' rows are scanned (DuckDB skips other row groups by their stats)
        scope = [f"e.app_id IN ({', '.join('?' * len(named))})"] if named else []
        if None in apps:
            scope.append("e.app_id IS NULL")
        # DuckDB reads the local Arrow table ``probe`` by name: one join against the store
        known = self.con.execute(
            "SELECT p.row FROM probe p JOIN events e ON e.event_key = p.event_key "
            "AND e.app_id IS NOT DISTINCT FROM p.app_id "
            + ("" if own_source else "AND e.source_id IS DISTINCT FROM p.source_id ")
            + f"WHERE e.event_key IS NOT NULL AND ({' OR '.join(scope)})",
            named).fetchall()
        if not known:
            return batch
        known_rows = pa.array([r for (r,) in known], pa.int64())
        return batch.filter(pc.invert(pc.is_in(probe.column("row"), value_set=known_rows)))

    def _other_source_holds(self, source_id, app_id) -> bool:
        key = (source_id, app_id)
        if key not in self._held_elsewhere:
            self._held_elsewhere[key] = self.con.execute(
                "SELECT count(*) FROM (SELECT 1 FROM events WHERE app_id IS NOT DISTINCT FROM ? "
                "AND source_id IS DISTINCT FROM ? AND event_key IS NOT NULL LIMIT 1)",
                [app_id, source_id]).fetchall()[0][0] > 0
        return self._held_elsewhere[key]

    def events_added(self) -> None:
        """Events were written by other means than ``write_arrow`` (attach-parquet): what this
        connection knew of the events table is forgotten."""
        self._next_event_id = None
        self._held_elsewhere.clear()

    def write_arrow(self, batch: pa.Table) -> None:
        """Append an Arrow table of EVENT_COLUMNS (event_id filled in if null)."""
        if batch.num_rows == 0:
            return
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        if self._held_elsewhere:
            writers = set(pc.unique(batch.column("source_id")).to_pylist())
            if any(writers - {sid} for sid, _ in self._held_elsewhere):
                self._held_elsewhere.clear()
        if batch.column("event_id").null_count:
            first = self.next_event_id()
            ids = pa.array(np.arange(first, first + batch.num_rows, dtype=np.int64))
            batch = batch.set_column(0, "event_id", ids)
        # DuckDB reads the local Arrow table ``batch`` by name (a replacement scan): one bulk insert.
        self.con.execute("INSERT INTO events BY NAME SELECT * FROM batch")
        self._next_event_id = self.next_event_id() + batch.num_rows

    def write_checkpoint(self, batch: pa.Table | None, source_id: int, rejects: dict | None = None,
                         commit: bool = True, checkpoint: bool = False, **progress) -> None:
        """Append a batch, the rejects counted with it and the source's progress in one
        transaction: after a crash the store holds all or none of them, so a later ingest
        continues exactly where the events stop. With ``commit=False`` the transaction stays
        open for the next batches (``commit_pending`` ends it): DuckDB writes the full row
        groups of a big transaction straight into the file, compressed, where small commits
        go through the write-ahead log and are written a second time at its checkpoint.
        With no batch: a source's last rejects and final row, committed with the batches
        still open (one commit, where each statement alone would be one: a commit is most of
        a small source's cost). ``checkpoint``: the commit is a checkpoint whatever its size
        (the last commit of a source whose others were: see CHECKPOINT_COMMIT_ROWS)."""
        self.flush()
        try:
            if not self._pending:
                self.con.execute("BEGIN")
                self._pending, self._pending_from = True, self._next_event_id
            if batch is not None:
                self.write_arrow(batch)
                self._pending_rows += batch.num_rows
            self.add_rejects(source_id, rejects or {})
            self.update_source(source_id, **progress)
        except (duckdb.Error, StoreWriteError) as exc:
            self._abandon_pending()
            raise self._write_error(exc) from None
        if commit:
            self.commit_pending(checkpoint)

    def commit_pending(self, checkpoint: bool = False) -> None:
        """Commit the batches ``write_checkpoint(commit=False)`` left open, if any; as a
        checkpoint when asked or when they are many (CHECKPOINT_COMMIT_ROWS)."""
        if not self._pending:
            return
        big = ((checkpoint and self._pending_rows > 0) or self._pending_rows >= CHECKPOINT_COMMIT_ROWS) \
            and not self._commit_checkpoints
        try:
            if big:  # the commit is a checkpoint (see CHECKPOINT_COMMIT_ROWS), then as it was
                for name, value in COMMIT_CHECKPOINTS.items():
                    self.con.execute(f"SET {name} = {value}")
            self.con.execute("COMMIT")
            self._pending, self._pending_rows = False, 0
        except (duckdb.Error, StoreWriteError) as exc:
            self._abandon_pending()
            raise self._write_error(exc) from None
        finally:
            if big:
                self._wal_commits()

    def _wal_commits(self) -> None:
        """Commits into the write-ahead log again, checkpointed past CHECKPOINT_THRESHOLD."""
        try:
            self.con.execute(f"SET checkpoint_threshold = '{CHECKPOINT_THRESHOLD}'")
            self.con.execute("RESET auto_checkpoint_skip_wal_threshold")
        except duckdb.Error:
            pass  # the connection is gone (a failed write closed it): nothing to restore

    def _abandon_pending(self) -> None:
        self._next_event_id = self._pending_from
        self._pending, self._pending_rows = False, 0
        self._rollback()

    def supersede_source(self, source_id: int, reason: str) -> None:
        """Retire a source whose file was replaced by a new version: its events move to
        ``superseded_events`` and its status becomes ``superseded``, in one transaction."""
        self.flush()
        try:
            self.con.execute("BEGIN")
            self.con.execute("INSERT INTO superseded_events BY NAME SELECT * FROM events WHERE source_id = ?",
                             [source_id])
            self.con.execute("DELETE FROM events WHERE source_id = ?", [source_id])
            self.update_source(source_id, status="superseded", reason=reason)
            self.con.execute("COMMIT")
        except (duckdb.Error, StoreWriteError) as exc:
            self._rollback()
            raise self._write_error(exc) from None

    def retire_from(self, source_id: int, offset: int, **progress) -> int:
        """Move a source's events that start at or after byte ``offset`` to ``superseded_events``
        (they were read from a last line still being written, which has changed since) and set
        its progress, in one transaction; returns how many moved."""
        self.flush()
        where = "source_id = ? AND byte_offset >= ?"
        try:
            self.con.execute("BEGIN")
            moved = self.con.execute(f"SELECT count(*) FROM events WHERE {where}", [source_id, offset]).fetchone()[0]
            self.con.execute(f"INSERT INTO superseded_events BY NAME SELECT * FROM events WHERE {where}",
                             [source_id, offset])
            self.con.execute(f"DELETE FROM events WHERE {where}", [source_id, offset])
            self.update_source(source_id, **progress)
            self.con.execute("COMMIT")
        except (duckdb.Error, StoreWriteError) as exc:
            self._rollback()
            raise self._write_error(exc) from None
        return moved

    def _rollback(self) -> None:
        try:
            self.con.execute("ROLLBACK")
        except duckdb.Error:
            pass  # the failed COMMIT already ended the transaction

    def _write_error(self, exc: Exception) -> StoreWriteError:
        if isinstance(exc, StoreWriteError):
            return exc
        return StoreWriteError(f"cannot write to {self.path}: {str(exc).splitlines()[0]}")

    def last_event_at_or_before(self, source_id: int, offset: int) -> tuple[int, int] | None:
        """(byte offset, line) of a source's last event starting at or before ``offset``."""
        return self.con.execute(
            "SELECT byte_offset, line_no FROM events WHERE source_id = ? AND byte_offset <= ? "
            "ORDER BY byte_offset DESC, line_no DESC LIMIT 1", [source_id, offset]).fetchone()

    def resume_point(self, source: dict) -> tuple[int, int, int]:
        """Where an unfinished source continues: (byte offset, line number, events already
        stored at that offset). A running source's checkpoint is the start of its last stored
        event, so the record under it is parsed again and its stored events are skipped."""
        sid = source["source_id"]
        last = self.con.execute(
            "SELECT byte_offset, line_no FROM events WHERE source_id = ? AND byte_offset IS NOT NULL "
            "ORDER BY byte_offset DESC, line_no DESC LIMIT 1", [sid]).fetchone()
        done = source["bytes_read"] or 0
        if last is None or last[0] < done:  # nothing stored past the end of a completed read
            return done, (source["lines"] or 0) + 1, 0
        offset, line = last
        stored = self.con.execute(
            "SELECT count(*) FROM events WHERE source_id = ? AND byte_offset = ?", [sid, offset]).fetchone()[0]
        return offset, line, stored

    def rejects_of(self, source_id: int) -> dict[str, list]:
        """A source's stored reject counters ``{reason: [count, first_line, sample]}``."""
        found = self.con.execute(
            "SELECT reason, count, first_line, sample FROM rejects WHERE source_id = ?", [source_id]).fetchall()
        return {reason: [count, line, sample] for reason, count, line, sample in found}

    def add_rejects(self, source_id: int, rejects: dict[str, list]) -> None:
        """Merge per-reason reject counters ``{reason: [count, first_line, sample]}``; a negative
        count takes back what was counted (a last line held back until it ends)."""
        for reason, (count, first_line, sample) in rejects.items():
            with _writing(self.path):
                self.con.execute(
                    """
                    INSERT INTO rejects VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (source_id, reason) DO UPDATE SET count = count + excluded.count
                    """,
                    [source_id, reason, count, first_line, redact(sample)],
                )
        if any(count < 0 for count, _, _ in rejects.values()):
            with _writing(self.path):
                self.con.execute("DELETE FROM rejects WHERE source_id = ? AND count <= 0", [source_id])

    # -- queries ---------------------------------------------------------------------------
    def query(self, sql: str, params=None) -> tuple[list[str], list[tuple]]:
        self.flush()
        cur = self.con.execute(sql, params or [])
        if cur.description is None:
            return [], []
        return [d[0] for d in cur.description], cur.fetchall()

    def count(self, table: str) -> int:
        self.flush()
        return self.con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def _now() -> dt.datetime:
    return dt.datetime.now().replace(microsecond=0)
