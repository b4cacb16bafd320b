"""Getting logs into the store: opening files (codecs, readers), Spark event-log layouts, and
the two engines that run the parsers over them — the local one (``local``) and Spark
(``spark``), whose Parquet output ``parquet`` loads.

``from commitsleuth.ingest import ingest`` works; the engine is imported on first use, because
the parsers themselves import this room's readers and codecs."""

_PUBLIC = {"FileRead", "IngestReport", "SourceResult", "attempt_from_path", "expand_paths", "ingest"}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    if name in _PUBLIC:
        from commitsleuth.ingest import local

        return getattr(local, name)
    raise AttributeError(f"module 'commitsleuth.ingest' has no attribute {name!r}")
