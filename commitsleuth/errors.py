"""Named exceptions. The CLI turns each into a one-line ``Error: …`` and exit code 2."""


class CommitsleuthError(Exception):
    """Base of every error commitsleuth raises on purpose."""


class QueryFailed(CommitsleuthError):
    """The user's SQL failed; ``hints`` are DuckDB's own lines after the first ("Did you mean …",
    the LINE and its caret), shown below the ``Error:`` line."""

    def __init__(self, message: str, hints: tuple[str, ...] = ()):
        super().__init__(message)
        self.hints = hints


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


class StoreWriteError(StoreError):
    """A write to the store failed (disk full, I/O error, read-only file): nothing of the failed
    batch is kept and the same command continues from the last checkpoint."""


class IngestInterrupted(CommitsleuthError):
    """SIGINT or SIGTERM stopped an ingest at a checkpoint."""

    def __init__(self, uri: str, stored: int, size: int, signum: int, decompressed: bool = False):
        self.uri, self.stored, self.size, self.signum = uri, stored, size, signum
        # a compressed file's checkpoint counts bytes of its text, never comparable to its size
        what = (f"{stored} decompressed bytes of {uri} (a {size}-byte compressed file)" if decompressed
                else f"{stored} of {size} bytes of {uri}")
        super().__init__(f"interrupted: {what} stored; run the same command to continue")
