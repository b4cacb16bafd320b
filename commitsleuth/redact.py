"""Redact secrets (passwords, keys, tokens, credentials in URLs) before anything is stored."""

from __future__ import annotations

import re

MASK = "***"

# Each pattern with the (lower-cased) substrings it needs in the text (one of the first, all of
# the second): most log lines have none,
# and a substring test is a hundred times cheaper than running a pattern (a Kerberos principal's
# '@' must not run the key=value pattern over a whole audit line).
_PATTERNS = (
    # Authorization: Bearer xyz
    (("bearer",), (), re.compile(r"(?i)(?P<key>\bbearer)(?P<sep>\s+)(?P<val>[\w\-.~+/=]+)")),
    # key=value / key: value where the key names a secret (conf dumps, JDBC properties, URLs)
    (("pass", "pwd", "secret", "token", "credential", "key"), (), re.compile(
        # the look-behind starts a key only where a run of key characters starts: the same
        # leftmost matches, without retrying from every character of a long path (quadratic)
        r"(?i)(?<![\w.\-])(?P<key>[\w.\-]*(?:password|passwd|pwd|secret|token|credential|access[._-]?key|"
        r"secret[._-]?key|api[._-]?key)[\w.\-]*)(?P<sep>\"?\s*[=:]\s*\"?)(?P<val>[^\s\"&;,)}\]]+)"
    )),
    # scheme://user:password@host
    (("@",), ("://",), re.compile(r"(?P<key>[a-zA-Z][\w+.-]*://[^/\s:@]+)(?P<sep>:)(?P<val>[^@\s/]+)(?=@)")),
)
_AWS_KEY_ID = re.compile(r"\b(AKIA|ASIA)[A-Z0-9]{16}\b")


def redact(text: str | None) -> str | None:
    if not text:
        return text
    lower = text.lower()
    for any_of, all_of, pat in _PATTERNS:
        if any(t in lower for t in any_of) and all(t in lower for t in all_of):
            text = pat.sub(lambda m: f"{m['key']}{m['sep']}{MASK}", text)
    if "akia" in lower or "asia" in lower:
        text = _AWS_KEY_ID.sub(MASK, text)
    return text


def redact_conf(conf: dict[str, str]) -> dict[str, str]:
    """A copy of a configuration map with secret-looking values masked."""
    out = {}
    for key, value in conf.items():
        masked = redact(f"{key}={value}")
        out[key] = masked.split("=", 1)[1] if masked and "=" in masked else value
    return out
