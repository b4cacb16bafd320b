"""commitsleuth: name the task attempt, thread or job that duplicated or deleted table data.

The core library (store, parsers, forensics, listener) never imports the CLI.
"""

__version__ = "0.1.0"

from commitsleuth.errors import CommitsleuthError  # noqa: E402,F401
