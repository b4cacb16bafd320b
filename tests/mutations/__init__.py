"""Mutations as data for tests/mutation_coverage.py (`make mutations`; its static checks run in the suite through tests/test_mutation_lists.py).

Each module holds ``MUTATIONS``, a list of entries ``(target, old, new)`` or
``(target, old, new, note)``:

- ``target``: a file relative to the repository (a migration ``commitsleuth/migrations/*.sql``,
  a module ``forensics/*.py``) or a detector code (``CS101``: that detector's module);
- ``old``: text occurring exactly once in the target (in a migration: in the live definition of
  one view or macro, its last ``CREATE [OR REPLACE]`` across the migrations);
- ``new``: what replaces it;
- ``note``: ``"equivalent: <why no test can tell>"`` for a mutation that changes nothing a
  detector can show (checked to apply, not run), or ``"survives: <the case or row missing>"``
  for one no probe kills yet (run, and it must still survive: a kill fails until the note goes).

views.py: the views and macros the detectors read; rules.py: the Python rules (paths, actors,
storage, file ties, labels, remedies, the detectors' base); detectors.py: the detectors.
"""
