"""The one redaction layer: secrets (passwords, keys, tokens, credentials in URLs, private keys)
are masked in every text before it is stored or shown.

Events pass through it where they become rows (``model.events_to_arrow``: every text column
and every string inside ``detail``), sources and rejects where the store writes them, and the
CLI's error lines; live capture's spool is written by Spark with its own redaction settings
extended by ``spark_redaction_conf``. Extra patterns come from ``--redact REGEX`` and the
``COMMITSLEUTH_REDACT`` environment variable (one pattern per line), and from the
``spark.redaction.regex`` / ``spark.redaction.string.regex`` of any Spark configuration read.
"""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: a command that only reads the store needs neither
    import numpy as np
    import pyarrow as pa

try:
    import ahocorasick_rs
except ImportError:  # Arrow's RE2 finds a superset of the same lines, several times slower
    ahocorasick_rs = None

MASK = "***"

# Words that name a secret in a key (conf keys, JDBC properties, URL parameters, JSON fields).
_SECRET_WORDS = (r"password|passwd|pwd|secret|token|credential|signature|delegation|"
                 r"access[._-]?key|secret[._-]?key|account[._-]?key|private[._-]?key|api[._-]?key|"
                 r"sas[._-]?key|sas[._-]?token")
_VALUE = r"[^\s\"'&;,)}\]\\]+"

# (any of these lower-case substrings must be present, all of these too, pattern). Most log lines
# have none of the triggers, and a substring test is a hundred times cheaper than a pattern.
_PATTERNS: list[tuple[tuple[str, ...], tuple[str, ...], re.Pattern]] = [
    # PEM private keys, the whole body (raw keeps continuation lines, so it may span lines)
    (("private key-----",), (), re.compile(
        r"(?P<key>-----BEGIN [A-Z ]*PRIVATE KEY-----)(?P<sep>)(?P<val>[^\"]*?)(?=-----END [A-Z ]*PRIVATE KEY-----|\"|\Z)",
        re.S)),
    # Authorization: Basic|Bearer|Negotiate|Digest <credentials>, and a bare "Bearer <token>"
    (("authorization",), (), re.compile(
        r"(?i)(?P<key>authorization[\"']?)(?P<sep>\s*[:=]\s*[\"']?(?:(?:basic|bearer|negotiate|digest)\s+)?)"
        r"(?P<val>[^\s\"',;]+)")),
    (("bearer",), (), re.compile(r"(?i)(?P<key>\bbearer)(?P<sep>\s+)(?P<val>[\w\-.~+/=]+)")),
    # SQL and JSON: 'hive.sql.dbcp.password'='x', "password": "x"
    (("pass", "pwd", "secret", "token", "credential", "key", "signature", "delegation"), (), re.compile(
        rf"(?i)(?P<key>[\"'][\w.\-]*(?:{_SECRET_WORDS})[\w.\-]*[\"'])(?P<sep>\s*[=:]\s*[\"'])(?P<val>[^\"']*)")),
    # key=value / key: value where the key names a secret (conf dumps, JDBC URLs, URL queries).
    # The look-behind starts a key only where a run of key characters starts: the same leftmost
    # matches without retrying from every character of a long path (quadratic).
    (("pass", "pwd", "secret", "token", "credential", "key", "signature", "delegation"), (), re.compile(
        rf"(?i)(?<![\w.\-])(?P<key>[\w.\-]*(?:{_SECRET_WORDS})[\w.\-]*)(?P<sep>\s*[=:]\s*)(?P<val>{_VALUE})")),
    # conf keys (two dots at least) and flags written with a space, ending in the secret word:
    # fs.s3a.secret.key X, --password X (not a table named db.secret_stats, nor db.secret)
    (("pass", "pwd", "secret", "token", "credential", "key", "signature", "delegation"), (), re.compile(
        rf"(?i)(?<![\w.\-])(?P<key>(?:--?|(?:[\w\-]+\.){{2,}}[\w\-]*?)(?:{_SECRET_WORDS}))"
        rf"(?P<sep>[ \t]+)(?!\*\*\*)(?P<val>{_VALUE})")),
    # Azure SAS signatures in URL queries
    (("sig=",), (), re.compile(r"(?i)(?P<key>[?&]sig)(?P<sep>=)(?P<val>[^\s&\"']+)")),
    # scheme://user:password@host
    (("@",), ("://",), re.compile(r"(?P<key>[a-zA-Z][\w+.-]*://[^/\s:@\"']+)(?P<sep>:)(?P<val>[^@\s/\"']+)(?=@)")),
]
# JDBC clients' -p X (beeline, sqoop), only where the text names a JDBC client
_JDBC_CLIENT = ("jdbc:", "beeline", "sqoop")
_JDBC_PASSWORD = re.compile(r"(?P<key>(?:^|(?<=\s))-p)(?P<sep>\s+)(?!\*\*\*)(?P<val>\S+)")
_AWS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")
_EXTRA: list[re.Pattern] = []  # the user's: --redact, COMMITSLEUTH_REDACT, spark.redaction.string.regex
_EXTRA_KEYS: list[re.Pattern] = []  # spark.redaction.regex: conf keys whose values are secret
# The user's regexes as written: each is its own columnar trigger (a text it can mask contains
# a match of it).
_USER_TRIGGERS: list[str] = []
# A key (JSON field, conf key) that names a secret: its string value is masked whole.
_SECRET_KEY = re.compile(rf"(?i)(?:{_SECRET_WORDS})")

# Every trigger in one RE2 pattern (case-insensitive), for the columnar test where events
# become rows (model.events_to_arrow): only the rows it finds run the patterns above.
_TRIGGER_WORDS = ("pass", "pwd", "secret", "token", "credential", "key", "signature", "delegation",
                  "authorization", "bearer", "-p ", "sig=", "akia", "asia")
TRIGGER_RE = "|".join(_TRIGGER_WORDS) + r"|://[^/\s]*@"


def redact(text: str | None) -> str | None:
    """``text`` with every secret the patterns find masked as ``***``."""
    return _redact(text, _mask, _mask_whole)


def redact_keeping_length(text: str | None) -> str | None:
    """``redact``, each masked value replaced by as many ``*`` as it has UTF-8 bytes: a file
    (live capture's spool) can be rewritten in place."""
    return _redact(text, _star, _star_whole)


def _redact(text, mask, mask_whole):
    if not text:
        return text
    lower = text.lower()
    for any_of, all_of, pat in _PATTERNS:
        if any(t in lower for t in any_of) and all(t in lower for t in all_of):
            text = pat.sub(mask, text)
    if "-p " in lower and any(c in lower for c in _JDBC_CLIENT):
        text = _JDBC_PASSWORD.sub(mask, text)
    if "akia" in lower or "asia" in lower:
        text = _AWS_KEY_ID.sub(mask_whole, text)
    for pat in _EXTRA:
        text = pat.sub(mask_whole, text)
    for key in _EXTRA_KEYS:
        text = key.sub(mask, text)
    return text


def _mask(m: re.Match) -> str:
    return f"{m['key']}{m['sep']}{MASK}"


def _mask_whole(m: re.Match) -> str:
    return MASK


def _star(m: re.Match) -> str:
    return f"{m['key']}{m['sep']}{'*' * len(m['val'].encode())}"


def _star_whole(m: re.Match) -> str:
    return "*" * len(m.group().encode())


def has_user_patterns() -> bool:
    """True when user patterns exist (``--redact``, the environment, a Spark conf's)."""
    return bool(_EXTRA or _EXTRA_KEYS)


def names_secret(key: str) -> bool:
    """True when a key (a conf key, a JSON field) names a secret, ours or the user's."""
    return bool(_SECRET_KEY.search(key)) or any(p.search(f"{key}=x") for p in _EXTRA_KEYS)


def redact_value(value: Any) -> Any:
    """Every string inside a JSON-like value (dicts, lists), redacted; a string under a key that
    names a secret is masked whole, and so is the value of a ``{"key": k, "value": v}`` pair
    whose ``k`` does (a conf entry)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        pair_key = value.get("key")
        secret_pair = isinstance(pair_key, str) and names_secret(pair_key)
        return {k: MASK if isinstance(v, str) and (names_secret(k) or (secret_pair and k == "value"))
                else redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v) for v in value]
    return value


# Text columns holding JSON: each string inside is redacted and the JSON stays valid.
JSON_COLUMNS = ("detail", "actor_objects")


def redact_table(table: pa.Table, details: list | None = None) -> pa.Table:
    """Every text column of an Arrow table through ``redact``; a ``detail`` column (JSON) has
    every string inside it redacted (``redact_value``) and stays valid JSON. ``details``, when
    given, are the ``detail`` values before serialising (saves parsing them again).

    One RE2 test per column (``TRIGGER_RE``, and each user regex) finds the few cells that can
    hold a secret; only those run the patterns. The one place events become rows
    (``model.events_to_arrow``) and the findings writer call it."""
    if table.num_rows == 0:
        return table
    import pyarrow as pa
    import pyarrow.compute as pc

    for i, fld in enumerate(table.schema):
        if fld.type != pa.string():
            continue
        col = table.column(i)
        if col.null_count == len(col):
            continue
        hits = may_hold_secret(col)
        if not pc.any(hits).as_py():
            continue
        values, mask = col.to_pylist(), hits.to_pylist()
        if fld.name in JSON_COLUMNS:
            parsed = details if details is not None and fld.name == "detail" else [None] * len(values)
            new = [_redact_json(v, d) if m else v for v, m, d in zip(values, mask, parsed)]
        else:
            new = _redacted_once(values, mask)
        table = table.set_column(i, fld.name, pa.array(new, pa.string()))
    return table


def _redacted_once(values: list, mask: list) -> list:
    """``redact`` of the values ``mask`` selects, each distinct text once: the events of one
    line share its raw text (an event log's environment, 100 KB and more, gives several conf
    events), and the patterns cost about 40 ms on such a line."""
    done: dict[str, str | None] = {}
    out = []
    for v, m in zip(values, mask):
        if m and v not in done:
            done[v] = redact(v)
        out.append(done[v] if m else v)
    return out


def may_hold_secret(col) -> pa.Array | pa.ChunkedArray:
    """Per cell of a string array, whether it may hold a secret: a superset of what ``redact``
    changes, found by RE2 over the whole column."""
    import pyarrow as pa
    import pyarrow.compute as pc

    hits = pc.match_substring_regex(col, TRIGGER_RE, ignore_case=True)
    if not _USER_TRIGGERS:
        return hits
    # Python's \w, \d and case folding reach past ASCII where RE2's do not: such cells run the
    # user's patterns whatever RE2 says.
    hits = pc.or_(hits, pc.match_substring_regex(col, r"[^\x00-\x7f]"))
    for regex in _USER_TRIGGERS:
        try:
            hits = pc.or_(hits, pc.match_substring_regex(col, regex, ignore_case=True))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # a regex RE2 cannot run
            return pc.is_valid(col)
    return hits


# TRIGGER_RE's words as literals, for blocks of lines searched at once (lower-cased ASCII):
# ``://`` stands for ``://[^/\s]*@``, so it finds more lines, never fewer. The two characters
# past ASCII whose lower case holds ASCII letters (the Kelvin sign and the dotted capital I) are
# searched for too, as bytes.lower() leaves them as they are where str.lower() does not.
_WORD_SEARCHER = (ahocorasick_rs.BytesAhoCorasick([w.encode() for w in (*_TRIGGER_WORDS, "://", "\u212a", "\u0130")],
                                                  matchkind=ahocorasick_rs.MATCHKIND_LEFTMOST_FIRST)
                  if ahocorasick_rs is not None else None)


def lines_may_hold_secret(data: bytes, starts: np.ndarray, lines: pa.Array | None = None) -> np.ndarray:
    """Per line of a block of UTF-8 text (``starts``: each line's offset in ``data``, ``lines``:
    the same lines as strings, if at hand), whether ``redact`` may change it (the built-in
    patterns; the user's are not looked for here): each pattern runs only where ``str.lower()``
    of the text holds one of its words, and those words are searched for here in one pass over
    the block, about three times cheaper than RE2 line by line."""
    import numpy as np

    if _WORD_SEARCHER is None:
        import pyarrow as pa

        if lines is None:
            ends = np.append(starts[1:] - 1, len(data))
            lines = pa.array([data[a:b].decode("utf-8", "replace") for a, b in zip(starts.tolist(), ends.tolist())],
                             pa.string())
        return may_hold_secret(lines).to_numpy(zero_copy_only=False)
    hit = np.zeros(len(starts), dtype=bool)
    found = _WORD_SEARCHER.find_matches_as_indexes(data.lower())
    if found:  # a word holds no newline: each match lies inside one line
        at = np.fromiter((start for _, start, _ in found), dtype=np.int64, count=len(found))
        hit[np.searchsorted(starts, at, side="right") - 1] = True
    return hit


def _redact_json(text: str | None, value: Any = None) -> str | None:
    if text is None:
        return None
    if value is None:
        try:
            value = json.loads(text)
        except ValueError:
            return redact(text)
    return json.dumps(redact_value(value), sort_keys=True, default=str)


def add_pattern(regex: str) -> None:
    """Mask every match of ``regex`` (``--redact``, ``COMMITSLEUTH_REDACT``, Spark's string regex)."""
    try:
        pat = re.compile(regex)
    except re.error as exc:
        from commitsleuth.errors import InputError

        raise InputError(f"--redact {regex!r} is not a valid regular expression: {exc}") from None
    if all(p.pattern != pat.pattern for p in _EXTRA):
        _EXTRA.append(pat)
        _USER_TRIGGERS.append(regex)


def add_key_pattern(regex: str) -> None:
    """Mask the values of keys matching ``regex`` (Spark's ``spark.redaction.regex``), written
    ``key=value``, ``key: value`` or as JSON ``"key":"value"`` / ``["key","value"]``."""
    regex = re.sub(r"^\(\?[aiLmsux]+\)", "", regex)  # Spark's usual (?i): the whole pattern is case-blind here
    try:
        re.compile(regex)
    except re.error:
        return  # a user's broken Spark setting must not stop an ingest; ours still apply
    pat = re.compile(
        rf"(?P<key>\"?[^\s\"=:,\[\]{{}}]*(?:{regex})[^\s\"=:,\[\]{{}}]*\"?)(?P<sep>\s*(?:[=:]|\",)\s*\"?)(?P<val>[^\s\"&;,)}}\]]+)",
        re.I)
    if all(p.pattern != pat.pattern for p in _EXTRA_KEYS):
        _EXTRA_KEYS.append(pat)
        _USER_TRIGGERS.append(regex)


def honour_spark_conf(props: dict) -> None:
    """The user's own ``spark.redaction.regex`` / ``spark.redaction.string.regex``."""
    if props.get("spark.redaction.regex"):
        add_key_pattern(str(props["spark.redaction.regex"]))
    if props.get("spark.redaction.string.regex"):
        try:
            add_pattern(str(props["spark.redaction.string.regex"]))
        except Exception:  # noqa: BLE001 - a broken user setting must not stop an ingest
            pass


def clear_user_patterns() -> None:
    """Forget the patterns added by --redact, the environment and Spark confs (tests)."""
    _EXTRA.clear()
    _EXTRA_KEYS.clear()
    _USER_TRIGGERS.clear()


def redact_conf(conf: dict[str, str]) -> dict[str, str]:
    """A copy of a configuration map with secret-looking values masked."""
    out = {}
    for key, value in conf.items():
        masked = redact(f"{key}={value}")
        out[key] = masked.split("=", 1)[1] if masked and "=" in masked else value
    return out


# Live capture: Spark writes the spool itself, so it gets Spark's own settings, extended.
# Spark matches it against each conf key and value: the URL user-info arm masks values only.
SPARK_KEY_REGEX = (r"(?i)secret|password|passwd|pwd|token|credential|signature|access[._-]?key|"
                   r"account[._-]?key|private[._-]?key|private key-----|sas|delegation|authorization|bearer|"
                   r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b|[?&]sig=|://[^/\s:@]+:[^@\s/]+@")
SPARK_STRING_REGEX = (r"(?i)(?:[a-z][\w+.-]*://[^/\s:@\"]+:[^@\s/\"]+@)|(?:(?:password|passwd|pwd|secret|token|"
                      r"credential|signature|access[._-]?key|account[._-]?key|sig)\w*[\"']?\s*[=:]\s*[\"']?[^\s\"'&;,]+)"
                      r"|(?:bearer\s+[\w\-.~+/=]+)|(?:authorization[\"']?\s*[:=]\s*[\"']?\w+\s+[^\s\"',;]+)"
                      r"|(?:(?:AKIA|ASIA)[A-Z0-9]{16})"
                      r"|(?:-----BEGIN [A-Z ]*PRIVATE KEY-----[^-]*)")


def spark_redaction_conf(conf: dict[str, str]) -> dict[str, str]:
    """``spark.redaction.regex`` and ``spark.redaction.string.regex`` for the spool: the
    session's own, or'ed with ours."""
    out = {}
    for key, ours in (("spark.redaction.regex", SPARK_KEY_REGEX), ("spark.redaction.string.regex", SPARK_STRING_REGEX)):
        theirs = conf.get(key)
        out[key] = f"(?:{theirs})|{ours}" if theirs else ours
    return out


def _from_environment() -> None:
    for line in os.environ.get("COMMITSLEUTH_REDACT", "").splitlines():
        if line.strip():
            add_pattern(line.strip())


_from_environment()
