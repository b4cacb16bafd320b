"""Pieces of the head patterns the formats declare (log4j/log4j2 conversion patterns)."""

ISO_TS = r"(?P<date>\d{4}-\d\d-\d\d)[ T](?P<time>\d\d:\d\d:\d\d(?:[,.]\d{1,3})?)"  # %d{ISO8601}
YY_TS = r"(?P<date>\d\d/\d\d/\d\d) (?P<time>\d\d:\d\d:\d\d)"  # %d{yy/MM/dd HH:mm:ss}
LEVEL = r"(?P<level>TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)"
THREAD = r"\[(?P<thread>[^\]]*)\]"
LOGGER = r"(?P<logger>[\w$.]+)"
LOCATION = r"\((?P<location>[^()]*(?:\([^()]*\))?[^()]*)\)"  # (%F:%M(%L))
MESSAGE = r"(?P<message>.*)"
