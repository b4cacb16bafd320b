"""The detectors, one module each, listed explicitly here in the order reports show them."""

from commitsleuth.forensics.detectors.base import Detector, Finding, severity_rank
from commitsleuth.forensics.detectors.double_commit import DoubleCommit

DETECTORS: tuple[type[Detector], ...] = (DoubleCommit,)

__all__ = ["DETECTORS", "Detector", "Finding", "severity_rank"]
