"""Log formats: declared with samples, parsed by lark grammars into canonical events.

``parse_lines`` is pure (no store), so the local engine and the Spark engine share it.
"""

from commitsleuth.parsers.base import Format, ParseStats, Sample, SourceContext, parse_lines
from commitsleuth.parsers.registry import FORMATS, detect, get_format

__all__ = [
    "FORMATS",
    "Format",
    "ParseStats",
    "Sample",
    "SourceContext",
    "detect",
    "get_format",
    "parse_lines",
]
