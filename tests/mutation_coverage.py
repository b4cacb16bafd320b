"""Every rule the detectors read is needed: changing it fails a test (issue 30).

The mutations are data (tests/mutations/: views.py, rules.py, detectors.py; the format is in
tests/mutations/__init__.py): ``(target, old, new[, note])``, ``old`` occurring exactly once in
the target, so a list cannot rot: a fragment that no longer matches fails. A mutation is applied
to what the detectors run, never to the file on disk:

- a view or macro of a migration: its live definition (the last ``CREATE [OR REPLACE]`` across
  commitsleuth/migrations/), mutated, replaces it in the probes' stores for the mutation's run
  and is restored after it; the views reading it (views bind late) are computed again over it;
- a Python module (forensics/*.py, a detector's module): its source, mutated, runs as a fresh
  module whose names replace the module's own and every imported copy; the forensics modules
  that import it run again over it (they build their SQL at import);
- forensics/paths.py runs at ingest: its probes ingest their evidence again, mutated.

The probes are the detectors' YAML cases (forensics/detectors/cases/*.yml, checked as
tests/test_detector_cases.py checks them) and the detection matrix's rows (tests/matrix/rows.py,
as tests/test_detection_matrix.py checks them), each loaded once into its own store. A mutation
runs the probes of the detectors that read what it changes (through every view that reads it);
at least one must fail, and it stops at the first that does. A mutation whose SQL no longer runs
is an error, not a kill. Probes that killed before run first.

Speed: the probes' stores are loaded once into one in-memory DuckDB instance, each read through
a connection of its own whose temp tables hold every view's rows (``ProbeStore``): a detector
plans and runs its own SQL over a few rows, not the stack of views under it; a view mutant
computes again only the views reading it. Run: ``make mutations`` (two processes, each every
other mutation: ``COMMITSLEUTH_MUTATION_SHARD=k/n``, then tests/mutation_runner_check.py); or
``.venv/bin/python -m pytest tests/mutation_coverage.py -q -s`` (``-s`` prints which probe killed
each mutation and the count per target at the end; ``-k <text>`` runs the mutations whose id
holds it).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
import re
import shutil
import sys
import time
import types
from collections import Counter, defaultdict
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import duckdb
import pytest

import commitsleuth.forensics.analyze as analyze_mod
import commitsleuth.forensics.detectors as detectors_pkg
from commitsleuth.forensics.audit import record_listing, walk_local
from commitsleuth.forensics.spark_engine import live_objects
from commitsleuth.store import Store

import test_detection_matrix as TM
from matrix import rows as R
from mutations import detectors as detector_mutations, rules as rule_mutations, views as view_mutations
from test_detector_cases import cases_of, check, load_case

REPO = Path(__file__).resolve().parents[1]
PATHS = "forensics/paths.py"
# Modules that turn every detector's findings into what the probes check (actors, labels,
# remedies, the views analyze computes once): what they read reaches every finding.
FINDING_MODULES = ("forensics/analyze.py", "forensics/actors.py", "forensics/attempt_labels.py",
                   "forensics/remedies.py")
# Modules the detectors call for part of their work (their SQL, their words).
HELPER_MODULES = ("forensics/storage.py", "forensics/file_attempts.py", "forensics/detectors/base.py", "forensics/table_writers.py")


# --- the mutations --------------------------------------------------------------------------

@dataclass(frozen=True)
class Mutation:
    target: str  # a file relative to the repository, or a detector code
    old: str
    new: str
    note: str | None = None
    owner: str = ""  # the data module listing it

    @property
    def file(self) -> str:
        return detector_file(self.target) if re.fullmatch(r"CS\d+", self.target) else self.target

    @property
    def equivalent(self) -> bool:
        return bool(self.note) and self.note.startswith("equivalent: ")

    @property
    def survives(self) -> bool:
        return bool(self.note) and self.note.startswith("survives: ")

    @property
    def id(self) -> str:
        return f"{Path(self.file).name}: {_short(self.old, 70)} -> {_short(self.new, 40)}"


def _short(text: str, n: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[:n] + "…" + hashlib.sha1(text.encode()).hexdigest()[:6]


def detector_file(code: str) -> str:
    (d,) = [d for d in _detectors() if d.code == code]
    return str(Path(sys.modules[d.__module__].__file__).resolve().relative_to(REPO))


def all_mutations() -> list[Mutation]:
    out = []
    for module in (view_mutations, rule_mutations, detector_mutations):
        for entry in module.MUTATIONS:
            assert isinstance(entry, tuple) and len(entry) in (3, 4), (module.__name__, entry)
            out.append(Mutation(*entry, owner=module.__name__.rsplit(".", 1)[1]))
    return out


MUTATIONS = all_mutations()


def _text(rel: str) -> str:
    return (REPO / rel).read_text(encoding="utf-8")


# --- what reads what ------------------------------------------------------------------------

_OBJECT = re.compile(r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(VIEW|MACRO)\s+(\w+)", re.I)


def _statements(rel: str) -> list[str]:
    """A migration's statements (each ends with ';' at the end of a line), comments kept."""
    return [s.strip() + ";" for s in re.split(r";[ \t]*(?:--[^\n]*)?\n", _text(rel) + "\n") if s.strip()]


def _code_of(stmt: str) -> str:
    return re.sub(r"^(?:\s*--[^\n]*\n)*", "", stmt)


def object_of(m: Mutation) -> tuple[str, str, str]:
    """(name, kind, live statement) of the migration statement holding ``m.old``; it must be the
    object's live definition (a superseded one is run by nothing)."""
    stmts = [s for s in _statements(m.file) if m.old in s]
    assert len(stmts) == 1, f"{m.id}: in {len(stmts)} statements"
    hit = _OBJECT.match(_code_of(stmts[0]))
    assert hit, f"{m.id}: not in a view or macro"
    kind, name = hit[1].upper(), hit[2]
    assert live_objects()[name][1:] == (m.file, stmts[0]), f"{name}: {m.file} holds a superseded definition"
    return name, kind, stmts[0]


def _reads(text: str, name: str) -> bool:
    """Whether SQL in ``text`` reads the view or macro ``name`` (or Python in it reads the
    view's own text: ``view_name = 'x'``, ``_view_body(con, "x")``)."""
    call = rf"|\b{name}\(" if live_objects()[name][0] == "MACRO" else ""
    return re.search(rf"\b(?:FROM|JOIN)\s+{name}\b|view_name = '{name}'|_view_body\(con, \"{name}\"\){call}",
                     text) is not None


def _body(stmt: str) -> str:
    return re.split(r"\bAS\b", _code_of(stmt), maxsplit=1, flags=re.I)[1]


@lru_cache(maxsize=None)
def readers_of(name: str) -> frozenset[str]:
    """The views and macros that read ``name``, itself included (transitively)."""
    seen = {name}
    while True:
        more = {v for v, (_, _, stmt) in live_objects().items()
                if v not in seen and any(_reads(_body(stmt), n) for n in seen)}
        if not more:
            return frozenset(seen)
        seen |= more


def _detectors():
    return detectors_pkg.DETECTORS  # looked up each time: a mutation may replace the tuple


def _codes() -> frozenset[str]:
    return frozenset(d.code for d in _detectors())


@lru_cache(maxsize=None)
def _module_reads(rel: str) -> str:
    return _text(rel)


@lru_cache(maxsize=None)
def _detector_modules() -> dict[str, list[str]]:
    """code -> the modules whose SQL it runs (its own and the helpers it imports)."""
    out = {}
    for d in _detectors():
        own = str(Path(sys.modules[d.__module__].__file__).resolve().relative_to(REPO))
        src = _text(own)
        out[d.code] = [own] + [h for h in HELPER_MODULES
                               if re.search(rf"\bimport\b.*\b{Path(h).stem}\b|\b{Path(h).stem} import\b", src)]
    return out


def _objects_read(rels) -> frozenset[str]:
    texts = [_module_reads(f) for f in rels]
    return frozenset(n for n in live_objects() if any(_reads(t, n) for t in texts))


@lru_cache(maxsize=None)
def code_objects(code: str) -> frozenset[str]:
    """The views and macros a detector's SQL reads itself."""
    return _objects_read(_detector_modules()[code])


@lru_cache(maxsize=None)
def finding_objects() -> frozenset[str]:
    """The views and macros what words every finding (actors, labels, remedies) reads itself."""
    return _objects_read(FINDING_MODULES)


def used_objects() -> frozenset[str]:
    return frozenset().union(finding_objects(), *(code_objects(c) for c in _detector_modules()))


@lru_cache(maxsize=None)
def consumer_queries(name: str, consumers: frozenset) -> tuple[str, ...] | None:
    """Queries over everything ``consumers`` (the objects a probe's detector and, when it has
    findings, what words them read) see of ``name``, directly or through views: when a mutant
    gives each the same rows in a probe's store, nothing the probe checks can change, so it is
    not run. None when one is a macro with parameters (its callers' arguments are not known
    here): the probe runs."""
    out = []
    for obj in sorted(readers_of(name) & consumers):
        kind, _, stmt = live_objects()[obj]
        if kind == "VIEW":
            out.append(f"SELECT * FROM {obj}")
        elif re.match(rf"\s*CREATE\s+(?:OR\s+REPLACE\s+)?MACRO\s+{obj}\(\)\s+AS\s+TABLE\b", _code_of(stmt), re.I):
            out.append(f"SELECT * FROM {obj}()")
        else:
            return None
    return tuple(out)


def fingerprint(store: Store, queries) -> list:
    return [store.con.execute(f"SELECT count(*), sum(hash(t)::HUGEINT) FROM ({q}) t").fetchone() for q in queries]


@dataclass(frozen=True)
class Reach:
    direct: frozenset  # detectors whose own SQL reads it: their every probe can tell
    findings: bool = False  # it shapes every finding (actors, labels, remedies): probes with findings
    reingest: bool = False  # it runs at ingest


def reach(m: Mutation) -> Reach:
    if m.file.endswith(".sql"):
        names = readers_of(object_of(m)[0])
        direct = {code for code in _detector_modules() if code_objects(code) & names}
        return Reach(frozenset(direct), bool(finding_objects() & names))
    if m.file == PATHS:
        return Reach(_codes(), reingest=True)
    if m.file in FINDING_MODULES:
        return Reach(frozenset(), findings=True)
    mods = _detector_modules()
    return Reach(frozenset(code for code, files in mods.items() if m.file in files))


# --- applying a mutation --------------------------------------------------------------------

def _module_name(rel: str) -> str:
    return "commitsleuth." + rel[:-3].replace("/", ".")


def _ours(name: str) -> bool:
    return name.startswith(("commitsleuth", "test_", "matrix")) and name != __name__


def _rebind(mp, module: types.ModuleType, fresh: dict) -> None:
    """The fresh module's names replace the module's own, and every copy of them other modules
    imported (``from x import y``), tuples of them included (the detectors' registry)."""
    changed = []
    for name, new in fresh.items():
        if name.startswith("__") or isinstance(new, types.ModuleType):
            continue
        old = module.__dict__.get(name)
        if old is new or (isinstance(new, (str, int, float, frozenset)) and old == new):
            continue
        mp.setattr(module, name, new, raising=False)
        if old is not None:
            changed.append((old, new))
    if not changed:
        return
    swap = {id(old): new for old, new in changed}
    for mod in [m for n, m in list(sys.modules.items()) if _ours(n) and m is not module and m is not None]:
        for attr, value in list(vars(mod).items()):
            if id(value) in swap and any(value is old for old, _ in changed):
                mp.setattr(mod, attr, swap[id(value)])
            elif isinstance(value, tuple) and any(id(v) in swap for v in value):
                mp.setattr(mod, attr, tuple(swap.get(id(v), v) for v in value))
            elif callable(value) and hasattr(value, "cache_parameters") and hasattr(value, "__wrapped__"):
                # a cache of ours (parsers/lakehouse.py's normal_spec over paths.normalize_spec,
                # _resolve_dir over paths.resolve_parent) answers with what it computed before
                # the mutation: an empty one in its place, over the mutant where it wraps one
                inner = value.__wrapped__
                inner = swap[id(inner)] if id(inner) in swap and any(inner is o for o, _ in changed) else inner
                mp.setattr(mod, attr, functools.lru_cache(maxsize=value.cache_parameters()["maxsize"])(inner))


def _run_fresh(rel: str, source: str) -> dict:
    name = _module_name(rel)
    ns = {"__name__": name, "__package__": name.rpartition(".")[0], "__file__": str(REPO / rel),
          "__builtins__": __builtins__}
    exec(compile(source, str(REPO / rel), "exec"), ns)
    return ns


@lru_cache(maxsize=None)
def _importers(rel: str) -> tuple[str, ...]:
    """The forensics modules whose source imports ``rel``'s module (they build SQL from it)."""
    name = _module_name(rel)
    short = name.rsplit(".", 1)[1]
    out = []
    for path in sorted((REPO / "forensics").rglob("*.py")):
        dep = str(path.relative_to(REPO))
        if dep == rel or path.name == "__init__.py":
            continue
        if re.search(rf"^from {re.escape(name)} import|^from {re.escape(name.rpartition('.')[0])} import .*\b{short}\b",
                     path.read_text(encoding="utf-8"), re.M):
            out.append(dep)
    return tuple(out)


def apply_python(mp, m: Mutation) -> None:
    module = importlib.import_module(_module_name(m.file))
    _rebind(mp, module, _run_fresh(m.file, _text(m.file).replace(m.old, m.new, 1)))
    for dep in _importers(m.file):  # built at import from what changed: built again
        _rebind(mp, importlib.import_module(_module_name(dep)), _run_fresh(dep, _text(dep)))


def _or_replace(stmt: str) -> str:
    return re.sub(r"\bCREATE\s+(?:OR\s+REPLACE\s+)?(VIEW|MACRO)\b", r"CREATE OR REPLACE \1", stmt, count=1, flags=re.I)


def _qualified(stmt: str, db: str) -> str:
    """``stmt`` as ``CREATE OR REPLACE`` of the object in database ``db``."""
    return re.sub(r"\bCREATE\s+(?:OR\s+REPLACE\s+)?(VIEW|MACRO)\s+(\w+)", rf'CREATE OR REPLACE \1 "{db}".main.\2',
                  stmt, count=1, flags=re.I)


@contextmanager
def sql_mutated(ps: "ProbeStore", m: Mutation):
    """The mutated view or macro in the probe's store while in the block; its live definition
    after. Through the store's own connection (a macro is checked when it is made, its names
    looked up from the connection's database); one store at a time, as each probe runs (a DDL
    statement costs more the more databases the instance holds: every store at once cost
    seconds per mutation). The rules that run a view's own text (forensics/file_attempts.py,
    attempt_labels.py) read the store's own definition (``current_database()``)."""
    if not m.file.endswith(".sql"):
        yield
        return
    _, _, stmt = object_of(m)
    ps.con.execute(_qualified(stmt.replace(m.old, m.new, 1), ps.db))
    try:
        yield
    finally:
        ps.con.execute(_qualified(stmt, ps.db))


# --- the probes -----------------------------------------------------------------------------

@dataclass
class Probe:
    name: str
    codes: tuple
    case: dict | None = None
    row: R.Row | None = None
    verified: bool = False  # its test passes over its store unmutated

    @property
    def findings(self) -> bool:
        """Whether its test expects findings (what words them can change then)."""
        return bool(self.case["expect"]) if self.case is not None else self.row.positive

    def consumers(self) -> frozenset[str]:
        """The views and macros what this probe checks reads itself."""
        out = frozenset().union(*(code_objects(c) for c in self.codes if c in _detector_modules()))
        return out | finding_objects() if self.findings else out

    def load(self, store: Store, root: Path):
        if self.case is not None:
            return load_case(store, root / "logs", self.case)
        listing = TM.load_row(store, self.row, root)
        if listing:
            record_listing(store, str(listing), walk_local(str(listing)))
        return None

    def fails(self, store: Store, root: Path, ctx) -> bool:
        """Whether the probe's test fails over the store as the code now is."""
        try:
            found = analyze_mod.analyze(store, list(self.codes))
            if self.case is not None:
                check(store, root / "logs", ctx, self.case, found)
                return False
            wrong = TM.verdict(self.row, found)
            return bool(wrong) != (self.row.id in TM.EXPECTED_TO_FAIL_TODAY)
        except duckdb.Error:
            raise  # the mutated SQL must still run: an error is no kill
        except Exception:  # noqa: BLE001 - a wrong finding, or one the detector cannot word
            return True


def all_probes() -> list[Probe]:
    out = [Probe(f"case {code}: {case['name']}", (code,), case=case)
           for code, case in (p.values for p in cases_of())]
    out += [Probe(f"row {row.id}", row.codes, row=row) for row in R.ROWS]
    return out


def relevant(r: Reach, probes: list[Probe]) -> list[Probe]:
    return [p for p in probes if set(p.codes) & r.direct or (r.findings and p.findings)]


def _cache_only(store):
    """analyze's ``prepared`` computes the shared views once into temp tables that shadow them:
    here every view is held so already (``ProbeStore``), and its DROP would take them away."""
    return nullcontext()


@lru_cache(maxsize=None)
def upstream(objects: frozenset) -> frozenset[str]:
    """The views and macros ``objects`` read, directly or through others, themselves included."""
    return frozenset(w for w in live_objects() if readers_of(w) & objects)


@lru_cache(maxsize=None)
def view_order() -> tuple[str, ...]:
    """The views a detector or what words its findings reads, each after the views it reads."""
    views = {n for n, (kind, _, _) in live_objects().items() if kind == "VIEW"} & upstream(used_objects())
    deps = {v: {w for w in views - {v} if _reads(_body(live_objects()[v][2]), w)} for v in views}
    out: list[str] = []
    while len(out) < len(views):
        ready = sorted(v for v in views if v not in out and deps[v] <= set(out))
        assert ready, f"views read each other: {sorted(views - set(out))}"
        out += ready
    return tuple(out)


@dataclass
class ProbeStore:
    """A probe's loaded store as the detectors read it: database ``db`` of the one DuckDB
    instance (in memory, copied from the file it was loaded into), through a connection of its
    own, whose temp tables hold each view's rows. A temp table shadows the view of its name, in
    the views too: the detectors plan and run their own SQL over a few rows, not the whole stack
    of views under it each time (seconds per run on a few events). A mutated view and those
    reading it lose their temp tables while it runs, so they are computed again over the
    mutant and the (unchanged) rows of the rest."""
    root: Path
    ctx: object
    db: str
    con: duckdb.DuckDBPyConnection
    shadowed: set = field(default_factory=set)  # views whose unmutated rows a temp table holds
    held: set = field(default_factory=set)  # views whose unmutated rows are set aside
    mutants: set = field(default_factory=set)  # views whose temp table holds rows over a mutant

    @property
    def path(self) -> str:
        return str(self.root / "probe.duckdb")

    def shadow(self) -> None:
        """Every view shadowed by its unmutated rows (those set aside are the same rows)."""
        for view in self.mutants:
            self.con.execute(f"DROP TABLE temp.{view}")
        self.mutants = set()
        for view in view_order():
            if view in self.held:
                self.con.execute(f"ALTER TABLE temp.held_{view} RENAME TO {view}")
            elif view not in self.shadowed:
                self.con.execute(f"CREATE TEMP TABLE {view} AS SELECT * FROM {view}")
        self.shadowed |= set(view_order())
        self.held = set()

    def mutate(self, views, read: frozenset) -> None:
        """``views`` (the mutant and the views reading it) read from their definitions again:
        their unmutated rows set aside; those of them in ``read`` (what the probe reads)
        computed once each, in the order they read each other, from the rows of those they read."""
        order = [v for v in view_order() if v in views]
        for view in order:
            self.con.execute(f"ALTER TABLE temp.{view} RENAME TO held_{view}")
            self.shadowed.discard(view)
            self.held.add(view)
        for view in [v for v in order if v in read]:
            self.con.execute(f"CREATE TEMP TABLE {view} AS SELECT * FROM {view}")
            self.mutants.add(view)


def open_store(host, root: Path) -> Store:
    return Store(root / "probe.duckdb", host=host)


def new_store(host, root: Path) -> Store:
    """An empty store at ``root``: Store copies it from store.store_template() (the migrations
    run once, not per probe)."""
    root.mkdir(parents=True, exist_ok=True)
    return open_store(host, root)


def hold(host, i: int, root: Path, ctx) -> ProbeStore:
    """The store loaded at ``root`` as probe ``i``'s ``ProbeStore``."""
    db = f"probe{i}"
    host.execute(f"ATTACH ':memory:' AS {db}")
    host.execute(f"ATTACH '{root / 'probe.duckdb'}' AS loaded (READ_ONLY)")
    try:
        host.execute(f"COPY FROM DATABASE loaded TO {db}")
    finally:
        host.execute("DETACH loaded")
    con = host.cursor()
    con.execute(f"USE {db}")
    out = ProbeStore(root, ctx, db, con)
    out.shadow()
    return out


def load_probes(probes: list[Probe], mktemp) -> "Loaded":
    """``probes`` loaded with the code unmutated, each into a store of its own (``mktemp(name)``
    makes a directory), held as ``ProbeStore`` s of one DuckDB instance."""
    # many tiny queries: no thread pool to wake. Stores are loaded (and loaded again, for
    # paths.py) in an instance of their own: ingest holds its instance's memory to a limit.
    host, loader = duckdb.connect(config={"threads": 1}), duckdb.connect(config={"threads": 1})
    out = {}
    for i, probe in enumerate(probes):
        root = mktemp(f"probe{i}")
        with new_store(loader, root) as store:
            ctx = probe.load(store, root)
        out[probe.name] = hold(host, i, root, ctx)
    return Loaded(out, probes, host, loader)


_PREPARED = analyze_mod.prepared  # analyze's own cache of the shared views, as commitsleuth runs


def plain_fails(m: Mutation, probe: Probe, loaded: "Loaded") -> bool:
    """Whether ``probe`` fails under ``m`` (a Python mutant already applied) over its store read
    as commitsleuth reads one: the file it was loaded into, every view computed from its
    definition (a view or macro mutant in place of the live one), analyze's own cache. The
    reference the held rows of ``kills`` must agree with (tests/mutation_runner_check.py)."""
    ps = loaded.stores[probe.name]
    stmt = object_of(m)[2] if m.file.endswith(".sql") else None
    with open_store(loaded.loader, ps.root) as store, pytest.MonkeyPatch.context() as mp:
        mp.setattr(analyze_mod, "prepared", _PREPARED)
        if stmt:
            store.con.execute(_or_replace(stmt.replace(m.old, m.new, 1)))
        try:
            return probe.fails(store, ps.root, ps.ctx)
        finally:
            if stmt:
                store.con.execute(_or_replace(stmt))


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """Each probe's store, loaded once with the code unmutated (whether its test passes so is
    checked once it first kills a mutation: tests/test_detector_cases.py and
    tests/test_detection_matrix.py check them all). One DuckDB instance holds them all: an
    instance of its own costs each a few MB (hundreds of probes)."""
    start, cpu = time.perf_counter(), time.process_time()
    probes = all_probes()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(analyze_mod, "prepared", _cache_only)
        loaded = load_probes(probes, tmp_path_factory.mktemp)
        print(f"\n{len(probes)} probes loaded in {time.perf_counter() - start:.1f} s "
              f"({time.process_time() - cpu:.1f} s of CPU)")
        yield loaded
    _summary(time.perf_counter() - start, time.process_time() - cpu)


@dataclass
class Loaded:
    stores: dict  # probe name -> ProbeStore
    probes: list
    host: duckdb.DuckDBPyConnection  # the instance holding the probes' stores
    loader: duckdb.DuckDBPyConnection  # the instance loading a store again
    fingerprints: dict = field(default_factory=dict)  # (probe name, query) -> rows' fingerprint

    def unmutated(self, probe: Probe, queries) -> list:
        missing = [q for q in queries if (probe.name, q) not in self.fingerprints]
        for q, fp in zip(missing, fingerprint(self.stores[probe.name], missing)):
            self.fingerprints[(probe.name, q)] = fp
        return [self.fingerprints[(probe.name, q)] for q in queries]


# probe name -> mutations it killed, per mutated file: the likeliest killers run first
_KILLERS: dict[str, Counter] = defaultdict(Counter)
_RESULTS: dict[str, Counter] = defaultdict(Counter)  # file -> killed / equivalent / surviving


def _summary(wall: float, cpu: float) -> None:
    print("\nmutations per target: killed / equivalent / surviving")
    for file in sorted(_RESULTS):
        c = _RESULTS[file]
        print(f"  {file}: {c['killed']} / {c['equivalent']} / {c['surviving']}")
    total = sum(_RESULTS.values(), Counter())
    print(f"  all: {total['killed']} / {total['equivalent']} / {total['surviving']}")
    print(f"  in {wall:.1f} s ({cpu:.1f} s of CPU in this process)")


_EVENTS = ("SELECT * FROM events",)


def kills(m: Mutation, loaded: Loaded, tmp_path: Path) -> tuple[list[str], int]:
    """The probes that fail under the mutation (the first only, unless COMMITSLEUTH_ALL_KILLS),
    and how many probes ran. A probe in whose store the mutant changes nothing the detectors
    read (the same rows from every view they read through it; for paths.py, the same events)
    cannot fail and is not run."""
    r = reach(m)
    name = object_of(m)[0] if m.file.endswith(".sql") else None
    mine, anyone = _KILLERS[m.file], _KILLERS[""]
    ordered = sorted(relevant(r, loaded.probes), key=lambda p: (-mine[p.name], -anyone[p.name], not p.findings))
    queries = {p.name: consumer_queries(name, p.consumers()) if name else None for p in ordered}
    # a mutated view whose own rows (over the unmutated rows of what it reads) are unchanged in a
    # store changes nothing there: one query, before any view is computed again
    own = (f"SELECT * FROM {name}",) if name and live_objects()[name][0] == "VIEW" else ()
    # the mutated view's own query, run over the held rows of what it reads (no DDL: a probe
    # skipped so costs one query)
    mutant = _body(object_of(m)[2].replace(m.old, m.new, 1)).strip().rstrip(";") if own else None
    out, ran = [], 0
    for i, probe in enumerate(ordered):
        if out and not os.environ.get("COMMITSLEUTH_ALL_KILLS"):
            break
        ps = loaded.stores[probe.name]
        if r.reingest:  # ingest again, with the mutated code
            root = tmp_path / f"p{i}"
            try:
                with new_store(loaded.loader, root) as again:
                    ctx = probe.load(again, root)
                    if fingerprint(again, _EVENTS) == loaded.unmutated(probe, _EVENTS):
                        continue
                    ran += 1
                    if probe.fails(again, root, ctx):
                        out.append(probe.name)
            finally:  # a store per probe per paths.py mutation: kept, they filled the disk
                shutil.rmtree(root, ignore_errors=True)
            continue
        before = loaded.unmutated(probe, (queries[probe.name] or ()) + own)  # the mutant not yet in place
        if own and fingerprint(ps, [mutant]) == before[-1:]:
            continue
        with sql_mutated(ps, m):
            try:
                if name:  # what reads the mutant is computed again
                    ps.mutate(readers_of(name), upstream(probe.consumers()))
                    if queries[probe.name] is not None and \
                            fingerprint(ps, queries[probe.name]) == before[:len(queries[probe.name])]:
                        continue
                ran += 1
                if probe.fails(ps, ps.root, ps.ctx):
                    out.append(probe.name)
            finally:
                if name:
                    ps.shadow()
    for killer in out:
        mine[killer] += 1
        anyone[killer] += 1
    return out, ran


# --- the tests ------------------------------------------------------------------------------

def test_every_mutation_applies():
    """Each old fragment occurs exactly once in its target (a list cannot rot), changes it, and
    a note says equivalent or survives with a reason."""
    ids = [m.id for m in MUTATIONS]
    assert len(set(ids)) == len(ids), [i for i, n in Counter(ids).items() if n > 1]
    for m in MUTATIONS:
        assert (REPO / m.file).is_file(), m.target
        assert _text(m.file).count(m.old) == 1, f"{m.owner}: {m.target}: {m.old!r} occurs {_text(m.file).count(m.old)} times"
        assert m.old != m.new, m.id
        assert m.note is None or ((m.equivalent or m.survives) and len(m.note.split(": ", 1)[1]) > 10), m.id
        r = reach(m)
        assert r.direct or r.findings, f"nothing a probe runs reads {m.id}"


def test_every_view_macro_and_rule_is_mutated():
    """Each view and macro a detector or what words its findings reads (and each it reads
    through) has mutations, and so has each Python rule module."""
    mutated = {object_of(m)[0] for m in MUTATIONS if m.file.endswith(".sql")}
    needed = {w for w in live_objects() if readers_of(w) & used_objects()}
    assert needed - mutated - {"timeline"} == set(), sorted(needed - mutated)
    files = {m.file for m in MUTATIONS}
    assert {PATHS, *HELPER_MODULES, *FINDING_MODULES[1:]} <= files, sorted({PATHS, *HELPER_MODULES, *FINDING_MODULES[1:]} - files)


def shard(mutations: list[Mutation]) -> list[Mutation]:
    """``COMMITSLEUTH_MUTATION_SHARD=k/n``: every n-th mutation from the k-th (0-based), so n
    processes share a run (`make mutations` runs two); all of them otherwise."""
    k, _, n = os.environ.get("COMMITSLEUTH_MUTATION_SHARD", "0/1").partition("/")
    return mutations[int(k)::int(n)]


@pytest.mark.parametrize("m", shard(MUTATIONS), ids=[m.id for m in shard(MUTATIONS)])
def test_mutation_is_killed(stores, monkeypatch, tmp_path, m: Mutation):
    if m.equivalent:  # not run: it applies (above), and why no test can tell is said
        if m.file.endswith(".sql"):
            with sql_mutated(next(iter(stores.stores.values())), m):
                pass  # the mutant is valid SQL
        print(f"\n{m.id}: {m.note}")
        _RESULTS[m.file]["equivalent"] += 1
        return
    if not m.file.endswith(".sql"):
        apply_python(monkeypatch, m)
    killed, ran = kills(m, stores, tmp_path)
    monkeypatch.undo()
    for probe in [p for p in stores.probes if p.name in killed and not p.verified]:
        ps = stores.stores[probe.name]
        assert not probe.fails(ps, ps.root, ps.ctx), f"{probe.name} fails unmutated"
        probe.verified = True
    print(f"\n{m.id}: killed by {killed} ({ran} probes run)")
    _RESULTS[m.file]["killed" if killed else "surviving"] += 1
    if m.survives:
        assert not killed, f"killed now by {killed}: take its 'survives:' note off"
    else:
        assert killed, f"no probe fails with {m.id}"
