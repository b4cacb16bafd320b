"""Showing what the store holds: a partition's lanes (``lanes``), drawn in the terminal
(``terminal``) or in the self-contained HTML report (``html``), and findings and tables as
text or JSON (``text``)."""

__all__ = ["write_report"]


def __getattr__(name: str):
    # The HTML report pulls in the analysis and every detector: imported when it is asked for,
    # not by every command that only escapes text (`ingest` starts 0.1 cpu-s sooner).
    if name == "write_report":
        from commitsleuth.report.html import write_report

        return write_report
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
