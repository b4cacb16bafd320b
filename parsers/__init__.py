"""Log formats: declared with samples, parsed by lark grammars into canonical events.

``parse_lines`` is pure (no store), so the local engine and the Spark engine share it.
"""

from commitsleuth.parsers.base import Format, ParseStats, Sample, SourceContext, parse_lines
from commitsleuth.parsers.registry import FORMATS, Detection, detect, detection, get_format

__all__ = [
    "Detection",
    "FORMATS",
    "Format",
    "ParseStats",
    "Sample",
    "SourceContext",
    "detect",
    "detection",
    "get_format",
    "parse_lines",
]
