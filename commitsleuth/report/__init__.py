"""Showing what the store holds: a partition's lanes (``lanes``), drawn in the terminal
(``terminal``) or in the self-contained HTML report (``html``), and findings and tables as
text or JSON (``text``)."""

from commitsleuth.report.html import write_report

__all__ = ["write_report"]
