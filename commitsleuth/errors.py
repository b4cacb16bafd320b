"""Named exceptions. The CLI turns each into a one-line ``Error: …`` and exit code 2."""


class CommitsleuthError(Exception):
    """Base of every error commitsleuth raises on purpose."""


class InputError(CommitsleuthError):
    """A path, file or argument the user gave cannot be used."""


class UnknownFormatError(InputError):
    """``--format`` names no registered format."""


class UnknownQueryError(InputError):
    """``query NAME`` names no file in queries/ and is not SQL."""


class StoreError(CommitsleuthError):
    """The DuckDB store cannot be opened or used."""


class StoreLockedError(StoreError):
    """Another process holds the DuckDB file's write lock."""
