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

# A key names a secret by its whole name, not by a substring (``api_key_hash``,
# ``tokenizer_version`` and ``token_table`` name none): split into words at ``. _ -``, spaces and
# camelCase, its last word ends with one of these (``keyStorePassword``, ``PGPASSWORD``), or its
# last two are ``<kind> key`` (``fs.s3a.access.key``, ``account_key``).
_SECRET_ENDINGS = ("password", "passwd", "pwd", "passphrase", "secret", "token", "credential", "credentials",
                   "signature", "delegation", "sig", "accesskey", "secretkey", "accountkey", "privatekey",
                   "apikey", "saskey")
_KEY_KINDS = frozenset(("access", "secret", "account", "private", "api", "sas", "encryption", "signing"))
_WORDS = re.compile(r"[A-Z]{2,}(?=[A-Z][a-z]|[^A-Za-z]|$)|[A-Z]?[a-z]+|[A-Z]|[0-9]+")
# Hadoop's per-account keys go on past the secret word with the account and its host:
# fs.azure.account.key.<acct>.dfs.core.windows.net, fs.azure.sas.fixed.token.<acct>...
_PER_ACCOUNT = re.compile(r"(?i)^(?:spark\.hadoop\.)?fs\.azure\.|\.(?:net|com|cn|de|org|io)$")
# Substrings of every key _names_secret accepts: the patterns find candidate keys by them and
# then judge the whole name.
_KEY_HINT = r"pass|pwd|secret|token|credential|signature|delegation|sig|key"
_VALUE = r"[^\s\"'&;,)}\]\\]+"
# A quoted value, up to the same quote (a JSON value may hold an apostrophe), escapes kept;
# quoted with escaped quotes (\"x\", inside a JSON string: an event log's SQL text), up to the
# escaped quote. ``esc`` and ``q`` are the opening's backslash and quote.
_OPEN = r"(?P<esc>\\)?(?P<q>[\"'])"
_QUOTED = (r"(?P<val>(?(esc)(?:\\\\|\\(?!(?P=q))|[^\\\n])*|(?:\\.|(?!(?P=q))[^\\\n])*))"
           r"(?=(?(esc)\\)(?P=q))")

_KEY_TRIGGERS = ("pass", "pwd", "secret", "token", "credential", "key", "signature", "delegation", "sig=", "sig%",
                 "sig\"", "sig'")

# (any of these lower-case substrings must be present, all of these too, pattern, keyed). Most
# log lines have none of the triggers, and a substring test is a hundred times cheaper than a
# pattern. A keyed pattern's ``key`` group is judged whole (``names_secret``), and a key that
# starts a path segment or sits in a partition spec is never one (``_is_column``).
_PATTERNS: list[tuple[tuple[str, ...], tuple[str, ...], re.Pattern, bool]] = [
    # PEM private keys, the whole body (raw keeps continuation lines, so it may span lines)
    (("private key-----",), (), re.compile(
        r"(?P<key>-----BEGIN [A-Z ]*PRIVATE KEY-----)(?P<sep>)(?P<val>[^\"]*?)(?=-----END [A-Z ]*PRIVATE KEY-----|\"|\Z)",
        re.S), False),
    # Authorization: Basic|Bearer|Negotiate|Digest <credentials>, and a bare "Bearer <token>"
    (("authorization",), (), re.compile(
        r"(?i)(?P<key>authorization[\"']?)(?P<sep>\s*[:=]\s*[\"']?(?:(?:basic|bearer|negotiate|digest)\s+)?)"
        r"(?P<val>[^\s\"',;]+)"), False),
    (("bearer",), (), re.compile(r"(?i)(?P<key>\bbearer)(?P<sep>\s+)(?P<val>[\w\-.~+/=]+)"), False),
    # SQL and JSON, the key quoted: 'hive.sql.dbcp.password'='x', "password": "it's", and Spark
    # SQL's OPTIONS ('password' 'x') (its '=' is optional)
    (_KEY_TRIGGERS, (), re.compile(
        rf"(?i)(?P<key>\\?[\"'][\w.\- ]*(?:{_KEY_HINT})[\w.\- ]*\\?[\"'])(?P<sep>\s*[=:]?\s*{_OPEN}){_QUOTED}"),
     True),
    # key=value / key: value (conf dumps, JDBC URLs, URL queries), the value bare or quoted:
    # ConnectionPassword="x", password='x', OPTIONS (password 'x') (a quoted value may follow a
    # space alone). One pattern for both: the key search is most of the cost. The look-behind
    # starts a key only where a run of key characters starts: the same leftmost matches without
    # retrying from every character of a long path (quadratic).
    (_KEY_TRIGGERS, (), re.compile(
        rf"(?i)(?<![\w.\-])(?P<key>[\w.\-]*(?:{_KEY_HINT})[\w.\-]*)"
        rf"(?P<sep>(?:\s*[=:]\s*|[ \t]+(?=\\?[\"']))(?:{_OPEN})?)"
        rf"(?(q){_QUOTED}|(?P<bare>{_VALUE}))"), True),
    # conf keys (two dots at least) and flags written with a space: fs.s3a.secret.key X,
    # --password X, fs.azure.account.key.<acct>.dfs.core.windows.net X (not a table named
    # db.secret_stats, nor db.secret)
    (_KEY_TRIGGERS, (), re.compile(
        rf"(?i)(?<![\w.\-])(?P<key>--?[\w.\-]*(?:{_KEY_HINT})[\w.\-]*|(?:[\w\-]+\.){{2,}}[\w.\-]*)"
        rf"(?P<sep>[ \t]+)(?!\*\*\*)(?P<val>{_VALUE})"), True),
    # Azure SAS signatures in URL queries
    (("sig=",), (), re.compile(r"(?i)(?P<key>[?&]sig)(?P<sep>=)(?P<val>[^\s&\"']+)"), False),
    # scheme://user:password@host, the user may be empty (redis://:pw@) and the password hold a
    # '/'; digits then '/' are a port and a path (hdfs://nn:8020/user/x@REALM)
    (("@",), ("://",), re.compile(
        r"(?P<key>[a-zA-Z][\w+.-]*://[^/\s:@\"']*)(?P<sep>:)(?P<val>(?!\d*(?:/|$))[^@\s\"']+)(?=@)"), False),
    # Oracle's user/password@connect: JDBC thin/OCI URLs and the clients' command lines
    (("jdbc:oracle", "sqlplus", "sqlldr", "expdp", "impdp", "userid="), ("@",), re.compile(
        r"(?i)(?P<key>(?:jdbc:oracle:\w+:|\b(?:sqlplus|sqlldr|expdp|impdp)\s+(?:-\w+\s+)*"
        r"(?:userid=)?|\buserid=)[\w$#.]+)(?P<sep>/)(?P<val>[^\s@\"']+)(?=@)"), False),
    # SQL: CREATE|ALTER USER u IDENTIFIED BY pw, GRANT … TO u IDENTIFIED BY pw, MySQL's
    # IDENTIFIED WITH plugin BY 'pw': only after a user, role or grantee (rows identified by a key)
    (("identified",), (), re.compile(
        r"(?i)(?P<key>\b(?:user|role|to|exists)\s+\S+\s+identified(?:\s+with\s+[\w'\"]+)?\s+by)(?P<sep>\s+(?:password\s+)?)"
        r"(?P<val>\"[^\"]*\"|'[^']*'|[^\s;,)]+)"), False),
]
# key=value URL-encoded, in S3 keys and referers: X-Amz-Signature%3D…, %26password%3D… (found from
# each encoded '=': S3 keys hold many, dt%3D…, and a key pattern searched over them costs more)
_ENCODED_EQ = re.compile(r"%(?:25)?3D", re.I)
_ENCODED_VALUE = re.compile(r"(?:(?!%(?:25)?26)[^\s&\"'])+", re.I)
# JDBC clients' -p X (beeline, sqoop), only where the text names a JDBC client
_JDBC_CLIENT = ("jdbc:", "beeline", "sqoop")
_JDBC_PASSWORD = re.compile(r"(?P<key>(?:^|(?<=\s))-p)(?P<sep>\s+)(?!\*\*\*)(?P<val>\S+)")
# an AWS key id, also inside a longer word (AKIA…_suffix, key_AKIA…)
_AWS_KEY_ID = re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])")
# Where a key is a partition column, never a secret's name: partition (k=v), partSpec {k=v},
# Partition db.t{k=v}, PARTITION (k='v')
_PARTITION_SPEC = re.compile(r"(?i)\b(?:partition|partspec)\s*(?:[\w.`]+\s*)?[({\[][^)}\]\n]*")
_EXTRA: list[re.Pattern] = []  # the user's: --redact, COMMITSLEUTH_REDACT, spark.redaction.string.regex
_EXTRA_KEYS: list[re.Pattern] = []  # spark.redaction.regex: conf keys whose values are secret
# The user's regexes as written: each is its own columnar trigger (a text it can mask contains
# a match of it).
_USER_TRIGGERS: list[str] = []

# Every trigger in one RE2 pattern (case-insensitive), for the columnar test where events
# become rows (model.events_to_arrow): only the rows it finds run the patterns above.
_TRIGGER_WORDS = ("pass", "pwd", "secret", "token", "credential", "key", "signature", "delegation",
                  "authorization", "bearer", "-p ", "sig=", "sig%", "sig\"", "sig'", "akia", "asia", "identified",
                  "jdbc:oracle", "sqlplus", "sqlldr", "expdp", "impdp", "userid=")
TRIGGER_RE = "|".join(_TRIGGER_WORDS) + r"|://\S*@"


def names_secret(key: str) -> bool:
    """True when a key (a conf key, a JSON field, a URL parameter) names a secret by its whole
    name, ours or the user's."""
    return _names_secret(key) or any(p.search(f"{key}=x") for p in _EXTRA_KEYS)


def _names_secret(key: str) -> bool:
    key = key.strip("\"' -")
    if not key.isascii():  # the patterns match case-blind: the Kelvin sign is a k to them, and here
        key = "".join(c.lower() if not c.isascii() and c.lower().isascii() else c for c in key)
    words = [w.lower() for w in _WORDS.findall(key)]
    if not words:
        return False
    if words[-1].endswith(_SECRET_ENDINGS) or (words[-1] == "key" and len(words) > 1 and words[-2] in _KEY_KINDS):
        return True
    if "." in key and _PER_ACCOUNT.search(key):  # the secret word inside, the account after it
        parts = key.split(".")
        return any(_names_secret(".".join(parts[:i])) for i in range(2, len(parts)))
    return False


def _identity_spans(text: str, keep: tuple[str, ...] = ()) -> list[tuple[int, int]]:
    """The partition specs of a text (their keys are partition columns), and where it quotes
    one of ``keep`` (a finding's or an event's own partition spec, whole or one ``k=v`` of it)."""
    spans = [m.span() for m in _PARTITION_SPEC.finditer(text)] if "part" in text.lower() else []
    for spec in keep:  # a URL query quoted in a spec (dt=1?token=x) holds parameters, not columns
        for piece in {p.strip(" (){}[]'") for p in re.split(r"[/,&;]", spec.split("?")[0]) if "=" in p}:
            at = text.find(piece)
            while at >= 0:
                spans.append((at, at + len(piece)))
                at = text.find(piece, at + 1)
    return spans


def _is_column(text: str, start: int, spec: bool, spans: list[tuple[int, int]]) -> bool:
    """Whether the key starting at ``start`` names a column: it starts a path segment, sits in a
    partition spec (``spans``), or ``text`` is a spec, where only a URL query (dt=1?token=x)
    holds parameters."""
    before = text[start - 1] if start else ("/" if spec else "")
    return before == "/" or (spec and before not in "?&;%") or any(a <= start < b for a, b in spans)


def _keyed_sub(pat: re.Pattern, text: str, mask, whole_spec: bool, keep: tuple[str, ...] = ()) -> str:
    """``pat.sub(mask, text)`` for a keyed pattern: a match whose key does not name a secret by
    its whole name, starts a path segment (``/account_key=17/``) or sits in a partition spec is
    left, and the search goes on inside its value (``TokenError: Token: x``)."""
    out, pos, last, spans = [], 0, 0, None
    while True:
        m = pat.search(text, pos)
        if m is None:
            break
        start = m.start("key")
        if spans is None:
            spans = [] if whole_spec else _identity_spans(text, keep)
        if names_secret(m["key"]) and not _is_column(text, start, whole_spec, spans):
            out += (text[last:m.start()], mask(m))
            last = pos = m.end()
        else:
            pos = m.end("key")
    out.append(text[last:])
    return "".join(out)


def _encoded_sub(text: str, stars: bool, spec: bool, keep: tuple[str, ...]) -> str:
    """URL-encoded ``key%3Dvalue`` with a key naming a secret, its value masked; keys judged as
    ``_keyed_sub`` judges them (a path segment's or a partition spec's are columns)."""
    out, last, spans = [], 0, None
    for m in _ENCODED_EQ.finditer(text):
        if m.start() < last:
            continue
        start = m.start()
        while start and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
            start -= 1
        value = _ENCODED_VALUE.match(text, m.end())
        if value is None or start == m.start() or not names_secret(text[start:m.start()]):
            continue
        if spans is None:
            spans = [] if spec else _identity_spans(text, keep)
        if _is_column(text, start, spec, spans):
            continue
        out += (text[last:m.end()], "*" * len(value.group().encode()) if stars else MASK)
        last = value.end()
    out.append(text[last:])
    return "".join(out)


def redact(text: str | None, *, spec: bool = False, keep: tuple[str, ...] = ()) -> str | None:
    """``text`` with every secret the patterns find masked as ``***``. ``spec``: the text is a
    partition spec or a path (``k=v/k2=v2``), whose keys name columns, never secrets; ``keep``:
    partition specs the text may quote (a finding's summary), kept as they are."""
    return _redact(text, _mask, _mask_whole, spec, keep)


def redact_keeping_length(text: str | None) -> str | None:
    """``redact``, each masked value replaced by as many ``*`` as it has UTF-8 bytes: a file
    (live capture's spool) can be rewritten in place."""
    return _redact(text, _star, _star_whole)


# Each pattern's trigger words as one search (most patterns share the key words: searched once)
_TRIGGERS = {id(any_of): re.compile("|".join(map(re.escape, any_of))) for any_of, _, _, _ in _PATTERNS}


def _redact(text, mask, mask_whole, spec=False, keep=()):
    if not text:
        return text
    lower = text.lower()
    seen: dict[int, bool] = {}
    for any_of, all_of, pat, keyed in _PATTERNS:
        hit = seen.get(id(any_of))
        if hit is None:
            hit = seen[id(any_of)] = _TRIGGERS[id(any_of)].search(lower) is not None
        if hit and all(t in lower for t in all_of):
            text = _keyed_sub(pat, text, mask, spec, keep) if keyed else pat.sub(mask, text)
    if "%3d" in lower or "%253d" in lower:
        text = _encoded_sub(text, mask is _star, spec, keep)
    if "-p " in lower and any(c in lower for c in _JDBC_CLIENT):
        text = _JDBC_PASSWORD.sub(mask, text)
    if "akia" in lower or "asia" in lower:
        text = _AWS_KEY_ID.sub(mask_whole, text)
    return _user_patterns(text, mask, mask_whole, spec, keep)


def _user_patterns(text, mask, mask_whole, spec=False, keep=()):
    for pat in _EXTRA:
        text = pat.sub(mask_whole, text)
    for key in _EXTRA_KEYS:
        text = _keyed_sub(key, text, mask, spec, keep)
    return text


def _mask(m: re.Match) -> str:
    return f"{m['key']}{m['sep']}{MASK}"


def _mask_whole(m: re.Match) -> str:
    return MASK


def _star(m: re.Match) -> str:
    value = m["val"] if m["val"] is not None else m["bare"]  # the key=value pattern's two arms
    return f"{m['key']}{m['sep']}{'*' * len(value.encode())}"


def _star_whole(m: re.Match) -> str:
    return "*" * len(m.group().encode())


def redact_user(text: str | None) -> str | None:
    """``text`` through the user's patterns alone (``--redact``, the environment, a Spark conf's):
    what was stored passed the built-in ones; what a command shows gets this run's too."""
    if not text or not has_user_patterns():
        return text
    return _user_patterns(text, _mask, _mask_whole)


def redact_user_value(value: Any) -> Any:
    """``redact_user`` over every string inside a JSON-like value."""
    if not has_user_patterns():
        return value
    if isinstance(value, str):
        return redact_user(value)
    if isinstance(value, dict):
        return {k: redact_user_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_user_value(v) for v in value]
    return value


def has_user_patterns() -> bool:
    """True when user patterns exist (``--redact``, the environment, a Spark conf's)."""
    return bool(_EXTRA or _EXTRA_KEYS)


def redact_value(value: Any, keep: tuple[str, ...] = ()) -> Any:
    """Every string inside a JSON-like value (dicts, lists), redacted; a string under a key that
    names a secret is masked whole, and so is the value of a ``{"key": k, "value": v}`` pair
    whose ``k`` does (a conf entry). ``keep``: as for ``redact``."""
    if isinstance(value, str):
        return redact(value, keep=keep)
    if isinstance(value, dict):
        pair_key = value.get("key")
        secret_pair = isinstance(pair_key, str) and names_secret(pair_key)
        return {k: MASK if isinstance(v, str) and (names_secret(k) or (secret_pair and k == "value"))
                else redact_value(v, keep) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v, keep) for v in value]
    return value


# Text columns holding JSON: each string inside is redacted and the JSON stays valid.
JSON_COLUMNS = ("detail", "actor_objects")
# Text columns holding a partition spec (k=v/k2=v2): its keys name columns, never secrets.
SPEC_COLUMNS = ("partition_spec",)


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

    # each row's own partition spec, kept wherever its texts quote it (identity is never masked)
    specs = None
    for i, fld in enumerate(table.schema):
        if fld.type == pa.list_(pa.string()):  # a finding's actors
            table = table.set_column(i, fld.name, pa.array(
                [None if v is None else [redact(a) for a in v] for v in table.column(i).to_pylist()], fld.type))
            continue
        if fld.type != pa.string():
            continue
        col = table.column(i)
        if col.null_count == len(col):
            continue
        hits = may_hold_secret(col)
        if not pc.any(hits).as_py():
            continue
        if specs is None:
            specs = (table.column(SPEC_COLUMNS[0]).to_pylist() if SPEC_COLUMNS[0] in table.schema.names
                     else [None] * table.num_rows)
        values, mask = col.to_pylist(), hits.to_pylist()
        if fld.name in JSON_COLUMNS:
            parsed = details if details is not None and fld.name == "detail" else [None] * len(values)
            new = [_redact_json(v, d, (s,) if s else ()) if m else v
                   for v, m, d, s in zip(values, mask, parsed, specs)]
        else:
            new = _redacted_once(values, mask, specs, spec=fld.name in SPEC_COLUMNS)
        table = table.set_column(i, fld.name, pa.array(new, pa.string()))
    return table


def _redacted_once(values: list, mask: list, specs: list, spec: bool = False) -> list:
    """``redact`` of the values ``mask`` selects, each distinct text (with its row's partition
    spec) once: the events of one line share its raw text (an event log's environment, 100 KB
    and more, gives several conf events), and the patterns cost about 40 ms on such a line."""
    done: dict[tuple, str | None] = {}
    out = []
    for v, m, s in zip(values, mask, specs):
        if m and (v, s) not in done:
            done[v, s] = redact(v, spec=spec, keep=(s,) if s else ())
        out.append(done[v, s] if m else v)
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
# ``://`` stands for ``://[^/\s]*@``, so it finds more lines, never fewer.
_WORD_SEARCHER = (ahocorasick_rs.BytesAhoCorasick([w.encode() for w in (*_TRIGGER_WORDS, "://")],
                                                  matchkind=ahocorasick_rs.MATCHKIND_LEFTMOST_FIRST)
                  if ahocorasick_rs is not None else None)
# The two characters past ASCII whose lower case holds ASCII letters (the Kelvin sign and the
# dotted capital I), as bytes.lower() leaves them as they are where str.lower() does not: looked
# for apart, and only in a block that is not all ASCII. In the searcher above, the dotted I's two
# bytes cut its prefilter to two-byte prefixes, and a block took four times as long (16 MB of a
# Spark event log: 45 ms of CPU against 11 ms).
_WIDE_FOLDS = tuple(c.encode() for c in ("\u212a", "\u0130"))


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
    found = [start for _, start, _ in _WORD_SEARCHER.find_matches_as_indexes(data.lower())]
    if not data.isascii():
        for fold in _WIDE_FOLDS:
            at = data.find(fold)
            while at >= 0:
                found.append(at)
                at = data.find(fold, at + 1)
    if found:  # a word holds no newline: each match lies inside one line
        hit[np.searchsorted(starts, np.array(found, dtype=np.int64), side="right") - 1] = True
    return hit


def _redact_json(text: str | None, value: Any = None, keep: tuple[str, ...] = ()) -> str | None:
    if text is None:
        return None
    if value is None:
        try:
            value = json.loads(text)
        except ValueError:
            return redact(text, keep=keep)
    return json.dumps(redact_value(value, keep), sort_keys=True, default=str)


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
    # a key is a run of key characters: never a path running into it (/tmp/test_secrets/x=1)
    pat = re.compile(
        rf"(?<![\w.\-])(?P<key>\"?[\w.\-]*(?:{regex})[\w.\-]*\"?)(?P<sep>\s*(?:[=:]|\",)\s*\"?)"
        rf"(?P<val>[^\s\"&;,)}}\]]+)", re.I)
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


def user_patterns() -> tuple[list, list, list]:
    """The user's patterns as this process holds them (``--redact``, the environment, Spark
    confs), for another process to add (``add_user_patterns``): an ingest's workers."""
    return list(_EXTRA), list(_EXTRA_KEYS), list(_USER_TRIGGERS)


def add_user_patterns(patterns: tuple[list, list, list]) -> None:
    """Add the patterns ``user_patterns`` gave (in the process that started this one)."""
    for held, given in zip((_EXTRA, _EXTRA_KEYS, _USER_TRIGGERS), patterns):
        held.extend(p for p in given if p not in held)


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


def _unlisted(regex: str) -> str:
    """``regex`` matching the same, with no trigger word in its text (``pass`` written ``p[a]ss``).
    Spark copies the session's SQL string regex into the properties of every job and stage it
    runs, so every such line in the spool held every trigger word and ran every pattern here:
    two thirds of the redaction CPU of a live load on DataFrame jobs (measured on a spool of
    344 ``count()`` jobs: 0.59 of 0.86 s)."""
    words = re.compile("|".join(re.escape(w) for w in sorted((*_TRIGGER_WORDS, "://"), key=len, reverse=True)),
                       re.I)
    while (m := words.search(regex)) is not None:
        at = m.start() + 1
        regex = f"{regex[:at]}[{regex[at]}]{regex[at + 1:]}"
    return regex


# Live capture: Spark writes the spool itself, so it gets Spark's own settings, extended.
# Spark matches it against each conf key and value: the URL user-info arm masks values only.
SPARK_KEY_REGEX = _unlisted(r"(?i)secret|password|passwd|pwd|token|credential|signature|access[._-]?key|"
                   r"account[._-]?key|private[._-]?key|private key-----|sas|delegation|authorization|bearer|"
                   r"(?:AKIA|ASIA)[A-Z0-9]{16}|[?&]sig=|://[^/\s:@]*:(?!\d*/)[^@\s]+@")
# Spark masks each match whole (key and value): the forms of _PATTERNS Spark sees in SQL text,
# job descriptions and conf values, in Java's regex syntax (issue 34: empty URL users, '/' in a
# password, quoted and space-separated values, OPTIONS (password 'x'), IDENTIFIED BY, Oracle's
# user/password@, URL-encoded parameters). A key ends with its secret word and starts where a
# key does, not inside a path (api_key_hash=, tokenizer_version=, /token=1/ are no secrets);
# account_key is left to our layer, which tells a partition column from an Azure key.
_SPARK_KEYED = r"(?<![\w./-])[\w.-]*(?:password|passwd|pwd|secret|token|credential|signature|access[._-]?key|sig)"
SPARK_STRING_REGEX = _unlisted(r"(?i)(?:[a-z][\w+.-]*://[^/\s:@\"]*:(?!\d*/)[^@\s\"]+@)"
                      rf"|(?:{_SPARK_KEYED}[\"']?\s*[=:]?\s*\\?\"[^\"\\]*)"
                      rf"|(?:{_SPARK_KEYED}[\"']?\s*[=:]?\s*'[^']*)"
                      rf"|(?:{_SPARK_KEYED}[\"']?\s*[=:]\s*[^\s\"'&;,]+)"
                      rf"|(?:{_SPARK_KEYED}%(?:25)?3D[^\s&\"'%]+)"
                      r"|(?:bearer\s+[\w\-.~+/=]+)|(?:authorization[\"']?\s*[:=]\s*[\"']?\w+\s+[^\s\"',;]+)"
                      r"|(?:(?:AKIA|ASIA)[A-Z0-9]{16})"
                      r"|(?:identified\s+(?:with\s+\S+\s+)?by\s+\S+)"
                      r"|(?:jdbc:oracle:\w+:[\w$#.]+/[^\s@\"']+@)"
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
