"""The mutation lists of tests/mutations/ stay true to the code, in every run of the suite.

The kill run itself (tests/mutation_coverage.py, ``make mutations``) takes hours while survivors
remain (each runs every probe of its detectors), so the suite runs only its static checks: every
fragment occurs exactly once in what it mutates, every view, macro and rule module the detectors
read has mutations, and every note says why.
"""

from pathlib import Path

from mutation_coverage import test_every_mutation_applies, test_every_view_macro_and_rule_is_mutated  # noqa: F401

from commitsleuth.forensics.detectors import DETECTORS
from mutations import detectors as detector_mutations


def test_every_detector_has_mutations():
    mutated = {entry[0] for entry in detector_mutations.MUTATIONS}
    assert [d.code for d in DETECTORS if d.code not in mutated] == []


def test_the_notes_are_counted():
    """The count of surviving and equivalent mutations docs/detection-matrix.md gives is the lists' own."""
    from mutations import rules, views

    entries = [e for m in (detector_mutations, rules, views) for e in m.MUTATIONS]
    survives = sum(1 for e in entries if len(e) > 3 and e[3].startswith("survives: "))
    equivalent = sum(1 for e in entries if len(e) > 3 and e[3].startswith("equivalent: "))
    text = (Path(__file__).resolve().parents[1] / "docs" / "detection-matrix.md").read_text()
    assert f"{len(entries)} mutations, {equivalent} listed as equivalent, {survives} listed as surviving" in text
