"""The HDFS NameNode audit log (logger ``FSNamesystem.audit``, Hadoop's DefaultAuditLogger).

After the log4j head, tab-separated ``allowed= ugi= ip= cmd= src= dst= perm= proto=`` and, with
``hadoop.caller.context.enabled``, ``callerContext=`` (DefaultAuditLogger.logAuditEvent, Hadoop
2.8+; ``proto=`` since 2.x, ``callerContext`` since 2.8). Structured records: a split on tabs,
never the message grammar.

Writes become events (create/append/truncate/concat -> ``file_create``, mkdirs ->
``dir_create``, rename -> ``rename``, or ``delete`` when it moves into a ``.Trash`` directory,
delete -> ``delete``); attribute changes, refused calls and the trash emptier's own work are
kept as ``fs_context``; reads (open, getfileinfo, listStatus, …: the bulk of any audit log) are
counted per (principal, cmd, hour) as ``fs_reads`` unless ``keep_reads`` asks for each one.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Iterable, Iterator

from commitsleuth.model import Event
from commitsleuth.parsers.base import BINARY, Format, ParseStats, Sample, SourceContext, parse_ts
from commitsleuth.parsers.callers import caller_fields, spark_job
from commitsleuth.parsers.formats._heads import ISO_TS
from commitsleuth.parsers.storage_scan import ReadCounts, RecordBlockScan

HEAD = re.compile(rf"{ISO_TS} +(?:\S+ +)?(?:\[[^\]]*\]:? +)?(?:[\w.$]*FSNamesystem\.audit|[\w.$]*audit):? +(?:- +)?allowed=(?:true|false)\t")

_CREATES = {"create": "create", "append": "append", "truncate": "truncate", "concat": "concat",
            "createSymlink": "symlink"}
_CONTEXT = {"setOwner", "setPermission", "setReplication", "setTimes", "setStoragePolicy",
            "satisfyStoragePolicy", "unsetStoragePolicy", "setAcl", "modifyAclEntries",
            "removeAclEntries", "removeDefaultAcl", "removeAcl", "setXAttr", "removeXAttr",
            "createSnapshot", "deleteSnapshot", "renameSnapshot", "allowSnapshot",
            "disallowSnapshot", "setQuota", "setErasureCodingPolicy", "unsetErasureCodingPolicy",
            "createEncryptionZone", "recoverLease"}
TRASH = "/.Trash/"
WRITES = {*_CREATES, *_CONTEXT, "mkdirs", "rename", "delete"}  # every other call is a read


def principal(ugi: str) -> tuple[str, str | None, str | None]:
    """``alice (auth:PROXY) via hive/h@R (auth:KERBEROS)`` -> (``alice``, ``hive/h@R``, ``PROXY``)."""
    user, _, real = ugi.partition(" via ")
    user, _, auth = user.partition(" (auth:")
    real = real.partition(" (auth:")[0] or None
    return user.strip(), real, auth.rstrip(")") or None


def short(name: str) -> str:
    """A Kerberos principal's short name: ``hive/host@REALM`` -> ``hive``."""
    return re.split(r"[/@]", name, maxsplit=1)[0]


def actor_name(user: str, real: str | None, ip: str | None) -> str:
    """How a storage client is named when no caller context names a query or attempt."""
    who = short(user) + (f" via {short(real)}" if real else "")
    return f"{who} from {ip}" if ip else who


_TIME = re.compile(ISO_TS)


def parse_time(head: str) -> dt.datetime | None:
    """The time of a line's log4j head (%d{ISO8601}, milliseconds optional), or None."""
    m = _TIME.match(head)
    return parse_ts(m["date"], m["time"]) if m else None


class AuditDecoder(ReadCounts):
    """One audit log's lines, one at a time: ``line`` returns the write's event (or None) and
    counts reads in ``reads``; ``finish`` returns the counts as ``fs_reads`` events. The line
    parse (``decode``) and the block scan (``parsers/storage_scan.py``) share it."""

    def __init__(self, ctx: SourceContext, stats: ParseStats):
        super().__init__()  # reads per (ugi, cmd, hour)
        self.ctx, self.stats = ctx, stats

    def line(self, line_no: int, offset: int, text: str) -> Event | None:
        stats = self.stats
        i = text.find("allowed=")
        j = text.find("\tcmd=", i) if i >= 0 else -1
        if j < 0:
            if text.strip():
                stats.reject(BINARY if "\x00" in text else "hdfs-audit: no audit fields", line_no, text)
            return None
        stats.records += 1
        k = text.find("\t", j + 5)
        cmd_full = text[j + 5:k] if k >= 0 else text[j + 5:].rstrip("\r\n")
        cmd = cmd_full.partition(" ")[0]
        # DefaultAuditLogger writes every field on every line, after the log4j head's time: a
        # line without its time or ugi could be placed or attributed only by guessing
        missing = "time" if parse_time(text) is None else "ugi" if text.find("\tugi=", i, j + 1) < 0 else None
        if missing:
            stats.reject(f"hdfs-audit: no {missing}", line_no, text)
            return None
        if cmd not in WRITES and not self.ctx.keep_reads:
            # the bulk of the log: only the principal, the call and the hour matter (no split)
            u = text.find("\tugi=", i) + 5
            self.count((text[u:text.find("\t", u)], cmd, text[:13]), line_no, offset, text)
            return None
        fields = dict(f.partition("=")[::2] for f in text[i:].rstrip("\r\n").split("\t"))
        ugi, ip = fields.get("ugi", ""), fields.get("ip", "").rpartition("/")[2] or None
        allowed = fields.get("allowed") == "true"
        user, real, _ = principal(ugi)
        if cmd not in WRITES:
            stats.events += 1
            ev = _event("fs_read", text, line_no, offset, self.ctx, fields, user, real, ip, cmd_full, allowed)
            ev.path = fields.get("src")
            return ev
        src, dst = fields.get("src"), fields.get("dst")
        dst = None if dst in (None, "null") else dst
        detail: dict = {}
        if not allowed:
            kind = "fs_context"
        elif cmd == "mkdirs":
            kind = "dir_create"
        elif cmd in _CREATES:
            kind = "file_create"
            if cmd == "concat":
                detail["sources"] = src
                src = dst
                dst = None
        elif cmd == "rename":
            if dst and TRASH in dst and TRASH not in (src or ""):
                kind = "delete"
                detail.update(how="trash", trash=dst)
                dst = None
            elif TRASH in (src or ""):
                kind = "fs_context"  # the trash emptier's checkpoint
            else:
                kind = "rename"
        elif cmd == "delete":
            kind = "fs_context" if TRASH in (src or "") else "delete"
            if kind == "delete":
                detail["how"] = "delete"
        else:
            kind = "fs_context"
        # every line has src= ("null" for a call without a path); a write names its path, and a
        # rename or a concat its target
        paths = kind in ("dir_create", "file_create", "rename", "delete")
        needs = (("src", paths),) + ((("dst", True),) if allowed and cmd in ("rename", "concat") else ())
        for name, named in needs:
            if fields.get(name) is None or (named and fields[name] in ("", "null")):
                stats.reject(f"hdfs-audit: {cmd} without {name}", line_no, text)
                return None
        stats.events += 1
        ev = _event(kind, text, line_no, offset, self.ctx, fields, user, real, ip, cmd_full, allowed, detail)
        ev.path, ev.target_path = src, dst
        return ev

    def finish(self) -> list[Event]:
        out = []
        for (ugi, cmd, hour), (count, line_no, offset, text) in self.reads.items():
            user, real, _ = principal(ugi)
            at = text.find("\tip=")
            ip = (text[at + 4:text.find("\t", at + 4)].rpartition("/")[2] or None) if at >= 0 else None
            out.append(Event(kind="fs_reads", ts=parse_time(hour + ":00:00.000"), source_id=self.ctx.source_id,
                             line_no=line_no, byte_offset=offset, thread=actor_name(user, real, ip), host=ip,
                             size=count, raw=text[:2000],
                             detail={"storage": "hdfs", "user": user, "proxy": real, "cmd": cmd, "count": count,
                                     "hour": hour}))
        self.stats.events += len(out)
        self.reads = {}
        return out


def decode(lines: Iterable[tuple[int, int, str]], ctx: SourceContext, stats: ParseStats) -> Iterator[Event]:
    decoder = AuditDecoder(ctx, stats)
    for line_no, offset, text in lines:
        stats.lines += 1
        ev = decoder.line(line_no, offset, text)
        if ev is not None:
            yield ev
    yield from decoder.finish()


def _event(kind, text, line_no, offset, ctx, fields, user, real, ip, cmd_full, allowed, detail=None) -> Event:
    caller = fields.get("callerContext")
    who = caller_fields(caller)
    d = {"storage": "hdfs", "user": user, "cmd": cmd_full, "ip": ip, **(detail or {})}
    if real:
        d["proxy"] = real
    if caller:
        d["caller_context"] = caller
        job = spark_job(caller)
        if job is not None:
            d["spark_job"] = job
    if fields.get("perm", "null") != "null":
        d["perm"] = fields["perm"]
    if fields.get("proto"):
        d["proto"] = fields["proto"]
    ev = Event(kind=kind, ts=parse_time(text), source_id=ctx.source_id, line_no=line_no,
               byte_offset=offset, host=ip, status=None if allowed else "denied", raw=text, detail=d, **who)
    if not (ev.attempt_id or ev.query_id or ev.app_id):
        ev.thread = actor_name(user, real, ip)
    return ev


# (hour, ugi, cmd) of every record, for the block scan; and the lines it decodes. A line it does
# not match goes to the line decoder, which rejects one without its time or ugi.
READS = re.compile(rb"^(\d{4}-\d\d-\d\d[ T]\d\d):\d\d:\d\d[^\t\n]*allowed=(?:true|false)\tugi=([^\t\n]*)\tip=[^\t\n]*\tcmd=([^\t\n ]*)", re.M)
WRITES_RE = re.compile(rb"\tcmd=(?:" + b"|".join(re.escape(w.encode()) for w in sorted(WRITES, key=len, reverse=True)) + rb")[\t ]")


def scanner(fmt, ctx, stats, first_line=1, at_start=True):
    return RecordBlockScan(AuditDecoder, READS, WRITES_RE, WRITES, fmt, ctx, stats, first_line, at_start)


# Samples: real lines from IBM's Guardium HDFS connector tests (HdfsGuardiumFilterTest.java,
# Apache-2.0, a CDP 7.1.1 NameNode), and one Hadoop 3 line with a Spark caller context built
# from DefaultAuditLogger's and Spark Utils.CallerContext's exact strings (not a real log).
FORMAT = Format(
    name="hdfs-audit",
    description="HDFS NameNode audit log, logger FSNamesystem.audit: 'allowed=… ugi=… ip=… cmd=… src=… dst=… perm=… proto=… [callerContext=…]'",
    head=HEAD,
    priority=9,
    decoder=decode,
    scanner=scanner,
    kinds=("file_create", "dir_create", "rename", "delete", "fs_context", "fs_reads"),
    samples=(
        Sample(
            "2020-08-15 04:13:25,273 INFO FSNamesystem.audit: allowed=true\tugi=hue/cdp711-11.fyre.ibm.com@DBANET4.ROOT "
            "(auth:PROXY) via hive/cdp711-11.fyre.ibm.com@DBANET4.ROOT (auth:KERBEROS)\tip=/9.46.88.114\t"
            "cmd=rename (options=[TO_TRASH])\tsrc=/user/hue/.cloudera_manager_hive_metastore_canary/"
            "cloudera_manager_metastore_canary_test_catalog_hive_HIVEMETASTORE_b833a1435460949959526c72f67e2d0f/"
            "hive_HIVEMETASTORE_b833a1435460949959526c72f67e2d0f\tdst=/user/hue/.Trash/Current/user/hue/"
            ".cloudera_manager_hive_metastore_canary/cloudera_manager_metastore_canary_test_catalog_hive_HIVEMETASTORE_"
            "b833a1435460949959526c72f67e2d0f/hive_HIVEMETASTORE_b833a1435460949959526c72f67e2d0f1597490005271\t"
            "perm=hue:hue:rwxr-xr-x\tproto=rpc",
            "delete",
        ),
        Sample(
            "2020-08-15 04:27:17,637 INFO FSNamesystem.audit: allowed=true\tugi=hbase/cdp711-51.fyre.ibm.com@DBANET4.ROOT "
            "(auth:KERBEROS)\tip=/9.46.89.150\tcmd=rename\tsrc=/hbase/WALs/cdp711-51.fyre.ibm.com,16020,1597181114113/"
            "cdp711-51.fyre.ibm.com%2C16020%2C1597181114113.cdp711-51.fyre.ibm.com%2C16020%2C1597181114113.regiongroup-0."
            "1597487237491\tdst=/hbase/oldWALs/cdp711-51.fyre.ibm.com%2C16020%2C1597181114113.cdp711-51.fyre.ibm.com"
            "%2C16020%2C1597181114113.regiongroup-0.1597487237491\tperm=hbase:hbase:rw-r--r--\tproto=rpc\tcallerContext=CLI",
            "rename",
        ),
        Sample(
            "2020-08-15 04:08:44,462 INFO FSNamesystem.audit: allowed=true\tugi=hdfs/cdp711-11.fyre.ibm.com@DBANET4.ROOT "
            "(auth:KERBEROS)\tip=/9.46.88.114\tcmd=open\tsrc=/ranger/audit/kafka/kafka/20200815/"
            "kafka_ranger_audit_cdp711-11.fyre.ibm.com.log\tdst=null\tperm=null\tproto=rpc",
            "fs_reads",
        ),
        Sample(
            "2023-03-01 10:00:05,120 INFO org.apache.hadoop.hdfs.server.namenode.FSNamesystem.audit: allowed=true\t"
            "ugi=etl (auth:SIMPLE)\tip=/10.0.0.21\tcmd=create\tsrc=/warehouse/db.db/t/dt=1/part-00003-0f3e8a6c-1b2d-4c5e-"
            "8f90-123456789abc.c000.snappy.parquet\tdst=null\tperm=etl:supergroup:rw-r--r--\tproto=rpc\t"
            "callerContext=SPARK_TASK_application_1677664000000_0042_1_JId_0_SId_1_0_TId_7_1",
            "file_create",
        ),
    ),
)
