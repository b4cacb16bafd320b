"""Redact secrets (passwords, keys, tokens, credentials in URLs) before anything is stored."""

from __future__ import annotations

import re

MASK = "***"

_PATTERNS = (
    # Authorization: Bearer xyz
    re.compile(r"(?i)(?P<key>\bbearer)(?P<sep>\s+)(?P<val>[\w\-.~+/=]+)"),
    # key=value / key: value where the key names a secret (conf dumps, JDBC properties, URLs)
    re.compile(
        r"(?i)(?P<key>[\w.\-]*(?:password|passwd|pwd|secret|token|credential|access[._-]?key|"
        r"secret[._-]?key|api[._-]?key)[\w.\-]*)(?P<sep>\"?\s*[=:]\s*\"?)(?P<val>[^\s\"&;,)}\]]+)"
    ),
    # scheme://user:password@host
    re.compile(r"(?P<key>[a-zA-Z][\w+.-]*://[^/\s:@]+)(?P<sep>:)(?P<val>[^@\s/]+)(?=@)"),
)
_AWS_KEY_ID = re.compile(r"\b(AKIA|ASIA)[A-Z0-9]{16}\b")
# Every pattern above needs one of these (lower-cased) in the text; most log lines have none,
# and a substring test is a hundred times cheaper than running the patterns.
_TRIGGERS = ("bearer", "pass", "pwd", "secret", "token", "credential", "key", "@", "akia", "asia")


def redact(text: str | None) -> str | None:
    if not text:
        return text
    lower = text.lower()
    if not any(t in lower for t in _TRIGGERS):
        return text
    for pat in _PATTERNS:
        text = pat.sub(lambda m: f"{m['key']}{m['sep']}{MASK}", text)
    return _AWS_KEY_ID.sub(MASK, text)


def redact_conf(conf: dict[str, str]) -> dict[str, str]:
    """A copy of a configuration map with secret-looking values masked."""
    out = {}
    for key, value in conf.items():
        masked = redact(f"{key}={value}")
        out[key] = masked.split("=", 1)[1] if masked and "=" in masked else value
    return out
