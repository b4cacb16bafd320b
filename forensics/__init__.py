"""The correlation engine: path identity, partition timelines and detectors."""
