"""Amazon S3 server access logs: space-separated, ``[time]`` bracketed, Request-URI, Referer and
User-Agent quoted, ``-`` for empty, keys URL-encoded; AWS appends fields over time (tolerated).

``owner bucket [time] ip requester request-id operation key "request-uri" status error
bytes-sent object-size total-ms turnaround-ms "referer" "user-agent" version-id host-id sigv
cipher auth-type host-header tls access-point-arn acl-required``.

PUT, COPY, multipart completion -> ``file_create``; DELETE and each ``BATCH.DELETE.OBJECT`` of a
multi-object delete -> ``delete`` (joined to its ``REST.POST.MULTI_OBJECT_DELETE`` by request id,
whose Referer and requester it takes); a key ending in ``/`` is a directory marker. Paths are
``s3a://bucket/key``. The principal, job and task attempt come from Hadoop's S3A audit Referer
(``HttpReferrerAuditHeader``: ``pr``, ``ji``, ``ta``), else the requester ARN. Reads are counted
per (principal, operation, hour).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Iterable, Iterator
from urllib.parse import unquote

from commitsleuth.model import Event
from commitsleuth.parsers.attempts import ANY_ATTEMPT_RE, attempt_fields
from commitsleuth.parsers.base import BINARY, Format, ParseStats, Sample, SourceContext
from commitsleuth.parsers.callers import s3a_referer
from commitsleuth.parsers.storage_scan import ReadCounts, RecordBlockScan

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\[[^\]]*\]|\S+')
HEAD = re.compile(r"^\S+ \S+ \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\] \S+ \S+ \S+ (?:REST|BATCH|SOAP|WEBSITE|S3)\.\S+ ")
_CREATE = {"REST.PUT.OBJECT", "REST.COPY.OBJECT", "REST.POST.UPLOAD", "REST.POST.OBJECT"}
_DELETE = {"REST.DELETE.OBJECT", "BATCH.DELETE.OBJECT"}
# a multipart upload's start and parts write, though nothing shows until its completion (the S3A
# magic committer's tasks leave them pending for the job to complete)
_MULTIPART = {"REST.POST.UPLOADS": "initiate", "REST.PUT.PART": "part", "REST.PUT.PART_COPY": "part"}
_CONTEXT = {"REST.POST.MULTI_OBJECT_DELETE", "REST.DELETE.UPLOAD", "REST.PUT.ACL", "REST.PUT.OBJECT_TAGGING",
            *_MULTIPART}
WRITES = _CREATE | _DELETE | _CONTEXT  # every other operation is a read
PENDING_MAX = 100_000  # batch deletes waiting for their request's line; beyond, they go alone
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep",
                                       "Oct", "Nov", "Dec"), 1)}


def parse_time(text: str) -> dt.datetime | None:
    """``[06/Feb/2019:00:00:38 +0000]`` -> naive UTC datetime."""
    try:
        day, mon, rest = text[1:].split("/", 2)
        year, h, m, s_tz = rest.split(":", 3)
        s, tz = s_tz.rstrip("]").split(" ")
        t = dt.datetime(int(year), _MONTHS[mon], int(day), int(h), int(m), int(s))
        sign = -1 if tz[0] == "-" else 1
        return t - sign * dt.timedelta(hours=int(tz[1:3]), minutes=int(tz[3:5]))
    except (ValueError, KeyError, IndexError):
        return None


def _unquote_field(tok: str) -> str | None:
    if tok.startswith('"'):
        tok = tok[1:-1]
    return None if tok == "-" else tok


class AccessDecoder(ReadCounts):
    """One access log's lines, one at a time (``line`` -> events, ``finish`` -> the batch
    deletes still waiting and the read counts); the line parse and the block scan share it.
    Reads are counted per (requester, operation, hour)."""

    def __init__(self, ctx: SourceContext, stats: ParseStats):
        super().__init__()  # reads per (requester, op, hour)
        self.ctx, self.stats = ctx, stats
        self.pending: dict[str, list[Event]] = {}  # request id -> batch deletes waiting for their request
        self.requests: dict[str, dict] = {}  # request id -> actor of its REST.POST.MULTI_OBJECT_DELETE
        self.n_pending = 0

    def line(self, line_no: int, offset: int, text: str) -> list[Event]:
        stats = self.stats
        toks = _TOKEN.findall(text)
        if len(toks) < 18 or not toks[2].startswith("["):
            if text.strip():
                stats.reject(BINARY if "\x00" in text else "s3-access: not an access log record", line_no, text)
            return []
        stats.records += 1
        bucket, when, ip, requester, request_id, op, key = toks[1], toks[2], toks[3], toks[4], toks[5], toks[6], toks[7]
        # S3 writes the bucket and time of every record, and the key of every object operation:
        # without one the record could be placed only by guessing (a PUT of "-" is no object)
        missing = ("bucket" if bucket == "-" else "time" if parse_time(when) is None
                   else "key" if key == "-" and op in _CREATE | _DELETE else None)
        if missing:
            stats.reject(f"s3-access: {op if missing == 'key' else 'record'} without {missing}", line_no, text)
            return []
        if op not in WRITES and not self.ctx.keep_reads:
            self.count((requester, op, when[1:15]), line_no, offset, text)
            return []
        status, referer = toks[9], _unquote_field(toks[15])
        who = _who(referer, requester, ip)
        if op not in WRITES:
            stats.events += 1
            return [_event("fs_read", text, line_no, offset, self.ctx, bucket, key, when, ip, op, status, who, toks)]
        ok = status[:1] == "2"
        kind = ("file_create" if op in _CREATE else "delete" if op in _DELETE else "fs_context") if ok else "fs_context"
        if kind != "fs_context" and key.endswith("/"):
            kind = "dir_create" if kind == "file_create" else kind
        ev = _event(kind, text, line_no, offset, self.ctx, bucket, key, when, ip, op, status, who, toks)
        out = [ev]
        if op == "REST.POST.MULTI_OBJECT_DELETE":
            self.requests[request_id] = who
            for waiting in self.pending.pop(request_id, ()):
                self.n_pending -= 1
                _take(waiting, who)
                out.append(waiting)
        elif op == "BATCH.DELETE.OBJECT" and not who.get("audit"):
            if request_id in self.requests:
                _take(ev, self.requests[request_id])
            else:
                self.pending.setdefault(request_id, []).append(ev)
                self.n_pending += 1
                out = self._flush() if self.n_pending > PENDING_MAX else []
        stats.events += len(out)
        return out

    def _flush(self) -> list[Event]:
        out = [ev for evs in self.pending.values() for ev in evs]
        self.pending, self.n_pending = {}, 0
        return out

    def finish(self) -> list[Event]:
        out = self._flush()
        for (requester, op, hour), (count, line_no, offset, text) in self.reads.items():
            toks = _TOKEN.findall(text)
            ip = toks[3] if len(toks) > 3 and toks[3] != "-" else None
            when = toks[2] if len(toks) > 2 else "[]"
            out.append(Event(kind="fs_reads", ts=parse_time(when[:15] + ":00:00 " + when.rstrip("]")[-5:] + "]"),
                             source_id=self.ctx.source_id, line_no=line_no, byte_offset=offset,
                             thread=requester, host=ip, size=count, raw=text[:2000],
                             detail={"storage": "s3", "user": requester, "cmd": op, "count": count}))
        self.stats.events += len(out)
        self.reads = {}
        return out


def decode(lines: Iterable[tuple[int, int, str]], ctx: SourceContext, stats: ParseStats) -> Iterator[Event]:
    decoder = AccessDecoder(ctx, stats)
    for line_no, offset, text in lines:
        stats.lines += 1
        yield from decoder.line(line_no, offset, text)
    yield from decoder.finish()


def _who(referer: str | None, requester: str, ip: str) -> dict:
    audit = s3a_referer(referer)
    principal = (audit or {}).get("pr") or (requester if requester != "-" else "anonymous")
    out = {"principal": principal, "ip": ip if ip != "-" else None}
    if audit:
        out["audit"] = audit
    return out


def _take(ev: Event, who: dict) -> None:
    """A batch delete takes the actor of the multi-object delete request it belongs to."""
    _actor(ev, who)
    ev.detail["user"] = who["principal"]
    ev.detail["multi_object_delete"] = True


def _actor(ev: Event, who: dict) -> None:
    audit = who.get("audit") or {}
    if audit.get("ta"):
        ev.attempt_id = None
        for k, v in attempt_fields(audit["ta"]).items():
            setattr(ev, k, v)
    if audit.get("ji") and not ev.job_id:
        ev.job_id = audit["ji"]
    if audit:
        ev.detail["s3a_audit"] = {k: audit[k] for k in ("op", "id", "ps", "p1", "p2", "ji", "ta") if k in audit}
    ev.thread = None if ev.attempt_id else (who["principal"] + (f" from {who['ip']}" if who["ip"] else ""))


def _event(kind, text, line_no, offset, ctx, bucket, key, when, ip, op, status, who, toks) -> Event:
    path = f"s3a://{bucket}/{unquote(key)}" if key != "-" else f"s3a://{bucket}/"
    detail = {"storage": "s3", "user": who["principal"], "cmd": op, "ip": who["ip"], "http_status": status,
              "request_id": toks[5]}
    if len(toks) > 17 and toks[17] != "-":
        detail["version_id"] = toks[17]
    if op in _MULTIPART:
        detail["multipart"] = _MULTIPART[op]
    ev = Event(kind=kind, ts=parse_time(when), source_id=ctx.source_id, line_no=line_no, byte_offset=offset,
               host=who["ip"], path=path, status=None if status[:1] in "2-" else status, raw=text, detail=detail)
    _actor(ev, who)
    magic = MAGIC.search(path)
    if magic:
        # the S3A magic committer: <dest>/__magic[_job-<uuid>]/…/<attempt>/__base/<file> is the
        # attempt's pending write of <dest>/<file>; the attempt is in the path when no Referer says it
        if magic["file"]:
            detail["magic_dest"] = path[:magic.start()] + "/" + magic["file"]
        attempt = ANY_ATTEMPT_RE.search(magic["dir"])
        if attempt and not ev.attempt_id:
            for k, v in attempt_fields(attempt.group(0)).items():
                setattr(ev, k, v)
            ev.thread = None
            detail["attempt_from"] = "path"
    return ev


MAGIC = re.compile(r"/__magic(?:_job-[^/]*)?/(?P<dir>.*?)(?:/__base/(?P<file>.*))?$")


# (hour, requester, operation) of every record, for the block scan; and the lines it decodes. A
# line it does not match goes to the line decoder, which rejects one without its bucket or time.
READS = re.compile(rb"^\S+ (?!- )\S+ \[(\d\d/(?:" + "|".join(_MONTHS).encode() + rb")/\d{4}:\d\d):\d\d:\d\d [+-]\d{4}\] "
                   rb"\S+ (\S+) \S+ (\S+) ", re.M)
WRITES_RE = re.compile(rb" (?:" + b"|".join(re.escape(w.encode()) for w in sorted(WRITES, key=len, reverse=True)) + rb") ")


def scanner(fmt, ctx, stats, first_line=1, at_start=True):
    return RecordBlockScan(AccessDecoder, READS, WRITES_RE, WRITES, fmt, ctx, stats, first_line, at_start)


# Samples: records of AWS's own documentation (Amazon S3 User Guide, "Amazon S3 server access
# log format", example log: the older edition's first record and today's second, which carries
# the field appended since); one BATCH.DELETE.OBJECT record from NooBaa's S3 server log
# parsing test (noobaa-core, log_replication_scanner jest test, Apache-2.0); one PUT with an S3A audit Referer
# built from Hadoop's HttpReferrerAuditHeader layout (not a real log).
FORMAT = Format(
    name="s3-access",
    description="Amazon S3 server access log: 'owner bucket [time] ip requester request-id operation key \"uri\" status … \"referer\" \"user-agent\" …'",
    head=HEAD,
    priority=9,
    decoder=decode,
    scanner=scanner,
    kinds=("file_create", "dir_create", "delete", "fs_context", "fs_reads"),
    samples=(
        Sample(
            '79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be DOC-EXAMPLE-BUCKET1 [06/Feb/2019:00:00:38 +0000] '
            '192.0.2.3 79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be 3E57427F3EXAMPLE REST.GET.VERSIONING - '
            '"GET /DOC-EXAMPLE-BUCKET1?versioning HTTP/1.1" 200 - 113 - 7 - "-" "S3Console/0.4" - '
            's9lzHYrFp76ZVxRcpX9+5cjAnEH2ROuNkd2BHfIa6UkFVdtjf5mKR3/eTPFvsiP/XV/VLi31234= SigV4 ECDHE-RSA-AES128-GCM-SHA256 '
            'AuthHeader DOC-EXAMPLE-BUCKET1.s3.us-west-1.amazonaws.com TLSV1.2 arn:aws:s3:us-west-1:123456789012:accesspoint/example-AP Yes',
            "fs_reads",
        ),
        Sample(  # the same record in today's guide: a field appended at the end (source region)
            '79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be amzn-s3-demo-bucket1 [06/Feb/2019:00:00:38 +0000] '
            '192.0.2.3 79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be 891CE47D2EXAMPLE REST.GET.LOGGING_STATUS - '
            '"GET /amzn-s3-demo-bucket1?logging HTTP/1.1" 200 - 242 - 11 - "-" "S3Console/0.4" - '
            '9vKBE6vMhrNiWHZmb2L0mXOcqPGzQOI5XLnCtZNPxev+Hf+7tpT6sxDwDty4LHBUOZJG96N1234= SigV4 ECDHE-RSA-AES128-GCM-SHA256 '
            'AuthHeader amzn-s3-demo-bucket1.s3.us-west-1.amazonaws.com TLSV1.2 - - us-east-1',
            "fs_reads",
        ),
        Sample(
            "aaa test.bucket [13/Feb/2023:15:08:28 +0000] 1.1.1.1 arn:aws:iam::111:user/user AAA BATCH.DELETE.OBJECT test.js - "
            "204 - - 1 - - - - - AAA SigV4 ECDHE-RSA-AES128-GCM-SHA256 AuthHeader s3.us-east-2.amazonaws.com TLSv1.2 - -",
            "delete",
        ),
        Sample(
            'b1e2c3d4 lake [01/Mar/2023:10:00:05 +0000] 10.0.0.21 arn:aws:iam::123456789012:role/etl 7QW1Z2X3C4V5B6N7 REST.PUT.OBJECT '
            'warehouse/orders/dt%3D2023-03-01/part-00003-0f3e8a6c-1b2d-4c5e-8f90-123456789abc.c000.snappy.parquet '
            '"PUT /warehouse/orders/dt%3D2023-03-01/part-00003-0f3e8a6c-1b2d-4c5e-8f90-123456789abc.c000.snappy.parquet HTTP/1.1" '
            '200 - - 10485760 412 38 "https://audit.example.org/hadoop/1/op_create/0f3e8a6c-0001/?op=op_create'
            '&p1=s3a://lake/warehouse/orders/dt=2023-03-01/part-00003-0f3e8a6c-1b2d-4c5e-8f90-123456789abc.c000.snappy.parquet'
            '&pr=etl&ps=5f9d2c1e-aaaa-4bbb-8ccc-0123456789ab&id=0f3e8a6c-0001&t0=12&ts=1677664805000'
            '&ji=0f3e8a6c-1b2d-4c5e-8f90-123456789abc&ta=attempt_20230301100000_0001_m_000003_1" '
            '"Hadoop 3.3.4, aws-sdk-java/1.12.262" - HOSTID= SigV4 ECDHE-RSA-AES128-GCM-SHA256 AuthHeader '
            'lake.s3.eu-west-1.amazonaws.com TLSv1.2 - -',
            "file_create",
        ),
    ),
)
