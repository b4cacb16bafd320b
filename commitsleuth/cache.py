"""The user's cache directory for what commitsleuth builds once and reuses (the message grammar's
parse tables: parsers/lark_loader.py; the empty store new stores are copied from:
store.store_template). Everything in it can be deleted; it is made again when needed."""

from __future__ import annotations

import os
from pathlib import Path

# The directory itself (the test suite points it at a temporary one); else $XDG_CACHE_HOME/commitsleuth.
CACHE_ENV = "COMMITSLEUTH_CACHE"


def cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "commitsleuth"
