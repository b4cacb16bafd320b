"""The mutation run's shortcuts give the verdicts the views themselves give.

tests/mutation_coverage.py holds each probe's store in memory with every view's rows in temp
tables, computes again only the views reading a view mutant, and skips a probe when what it reads
is unchanged. Here, for mutations of each kind CS107 reads (its own Python; storage.py; views one
to three layers under its SQL; macros), the probes ``kills`` reports failing, with every probe
run, must be exactly those that fail over the stores read as commitsleuth reads them (the file,
every view computed from its definition, analyze's own cache: ``plain_fails``); and after each
mutation every held row is the unmutated one again. A held row gone stale (a reader of the
mutant not computed again, a mutant's rows left behind, a probe skipped wrongly) fails it.
CS107's YAML cases are the probes: its SQL reads views through views and through macros.

It checks the mutation run's own machinery, so it runs with it (``make mutations``, after the
shards: .ci/mutations), not in ``make test``: about 7.5 minutes of CPU on the 2-core box.
"""

from __future__ import annotations

import pytest

import commitsleuth.forensics.analyze as analyze_mod
from mutation_coverage import (MUTATIONS, _cache_only, all_probes, apply_python, fingerprint, kills,
                               load_probes, plain_fails, reach, relevant, view_order)

# (id fragment, killed by CS107's cases?): killed and surviving ones of each kind (None: either)
CHOSEN = (
    ("metastore_mismatch.py: return storage.annotate(con, findings) -> return findings", True),
    ("metastore_mismatch.py: JOIN reg r ON r.pkey = d.pkey AND r.part_spec = d.part_spec AND d.ts >…8c3352 -> JOIN reg r ON r.part_spec", True),
    # no listed survivor is left: one listed equivalent is the mutation no probe may fail
    ("metastore_mismatch.py: AND x.kind = 'partition_drop' AND x.ts < d.ts -> AND x.kind = 'partition_drop'", False),
    ("storage.py: AND c.ts <= d.ts) -> )", None),
    ("0075_magic_temp_layer.sql: LEFT JOIN location_aliases al ON al.alias = k.raw_location -> ", None),
    ("0013_storage.sql: FROM locs l JOIN named n ON n.bare = l.location", None),
    ("0005_forensics.sql: WHERE table_name IS NOT NULL AND location IS NOT NULL UNION ALL -> WHERE false", None),
    ("0040_fact_model.sql: FROM events WHERE partition_spec LIKE '[%]' AND table_name IS NOT NULL", None),
    ("0040_fact_model.sql: lambda kv: kv[1] || '=' || kv[2]", None),
    ("0076_base_name_checks.sql: ON r.location = a.location AND r.ts >= a.ts", None),  # file_fates_at, moved from 0069
    ("0069_stage_labels_table_deletes.sql: SELECT a.alias || '|' || r.spec", None),
)


def _chosen(fragment: str):
    (m,) = [m for m in MUTATIONS if m.id.startswith(fragment)]
    return m


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    probes = [p for p in all_probes() if p.case is not None and p.codes == ("CS107",)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(analyze_mod, "prepared", _cache_only)
        out = load_probes(probes, tmp_path_factory.mktemp)
        out.held = {p.name: _held(out, p) for p in probes}
        yield out


def _held(loaded, probe) -> list:
    """Every held view's rows in the probe's store, fingerprinted."""
    return fingerprint(loaded.stores[probe.name], [f"SELECT * FROM temp.{v}" for v in view_order()])


@pytest.mark.parametrize("fragment,killed", CHOSEN, ids=[f for f, _ in CHOSEN])
def test_held_rows_give_the_views_verdicts(loaded, monkeypatch, tmp_path, fragment, killed):
    m = _chosen(fragment)
    monkeypatch.setenv("COMMITSLEUTH_ALL_KILLS", "1")
    monkeypatch.setattr(analyze_mod, "prepared", _cache_only)
    if not m.file.endswith(".sql"):
        apply_python(monkeypatch, m)
    fast, _ = kills(m, loaded, tmp_path)
    plain = [p.name for p in relevant(reach(m), loaded.probes) if plain_fails(m, p, loaded)]
    assert sorted(fast) == sorted(plain)
    if killed is not None:
        assert bool(plain) == killed, plain
    monkeypatch.undo()
    for probe in loaded.probes:
        assert _held(loaded, probe) == loaded.held[probe.name], f"{probe.name}: a held view's rows changed"
