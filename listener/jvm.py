"""The JVM side of live capture, reached through py4j.

The serialising is left to Spark itself: its own ``EventLoggingListener`` (the lean subclass of
``lean_writer`` where the JVM compiles it), constructed here and put on a dedicated listener-bus
queue, writes every event as event-log JSON into a spool file the capture owns. Spark's listener
bus therefore never waits on Python (a py4j round trip per event costs tens of microseconds and
stretched a 20,000-task job by a third).
"""

from __future__ import annotations

import os
from pathlib import Path

from commitsleuth.listener import lean_writer
from commitsleuth.redact import spark_redaction_conf

# Free-text local properties a user may fill with secrets (job description, job group).
LOCAL_PROPERTIES = ("spark.job.description", "spark.jobGroup.id")
SQL_STRING_REDACTION = "spark.sql.redaction.string.regex"

# Our own queues: a slow consumer drops events there, never on Spark's `shared` queue.
SPOOL_QUEUE = "commitsleuth"
HOOKS_QUEUE = "commitsleuthHooks"
LISTENER_INTERFACE = "org.apache.spark.scheduler.SparkListenerInterface"
DRAIN_MS = 10_000  # at detach, how long Spark's listener bus may take to deliver what it holds

# A spool is a plain, uncompressed, single-file event log, whatever the application's own
# event-log settings are (Spark 4 compresses and rolls its own logs by default).
_SPOOL_CONF = {
    "spark.eventLog.compress": "false",
    "spark.eventLog.rolling.enabled": "false",
    "spark.eventLog.overwrite": "true",
    "spark.eventLog.logBlockUpdates.enabled": "false",
    "spark.eventLog.logStageExecutorMetrics": "false",
    "spark.eventLog.buffer.kb": "64k",
    # Spark 4+: leave out the task-metric accumulators TaskEnd repeats from "Task Metrics"
    # (half of each line); the decoder reads the metrics. Unknown to 3.5, which ignores it.
    "spark.eventLog.includeTaskMetricsAccumulators": "false",
}


def listener_methods(jvm) -> list[str]:
    """The methods of SparkListenerInterface in the running Spark (35 in 3.5 and 4.x)."""
    iface = jvm.java.lang.Class.forName(LISTENER_INTERFACE)
    return sorted({m.getName() for m in iface.getMethods()})


class SpoolWriter:
    """Spark's EventLoggingListener writing this application's events into ``directory``: the
    lean one (``lean_writer``) where this JVM compiles it, ``lean_why`` saying why not."""

    def __init__(self, sc, directory: Path):
        self.jvm = sc._jvm
        self.bus = sc._jsc.sc().listenerBus()
        # The spool is a plain event log of the session: its owner alone reads it, and Spark
        # writes it with the session's redaction settings extended by ours (conf keys, text).
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        directory.chmod(0o700)
        conf = sc._jsc.sc().conf().clone()
        for key, value in _SPOOL_CONF.items():
            conf.set(key, value)
        current = {k: conf.get(k) for k in ("spark.redaction.regex", "spark.redaction.string.regex") if conf.contains(k)}
        for key, value in spark_redaction_conf(current).items():
            conf.set(key, value)
        # Spark redacts only the job properties its conf holds (a job's description and group are
        # local properties it writes as they are): holding them here puts them under the
        # regexes above, which Spark matches against values too.
        for key in LOCAL_PROPERTIES:
            if not conf.contains(key):
                conf.set(key, "")
        uri = self.jvm.java.net.URI("file:" + str(directory.resolve()))
        none = self.jvm.scala.Option.apply(None)
        args = (sc.applicationId, none, uri, conf, sc._jsc.hadoopConfiguration())
        try:
            self.listener, self.lean_why = lean_writer.new_lean_listener(sc, *args), None
        except lean_writer.LeanWriterUnavailable as exc:
            self.listener, self.lean_why = self.jvm.org.apache.spark.scheduler.EventLoggingListener(*args), str(exc)
        self.listener.start()
        self.bus.addToQueue(self.listener, SPOOL_QUEUE)
        self._print_writer = self.listener.logWriter().writer().get()
        found = sorted(directory.glob("*.inprogress"))
        if not found:
            raise RuntimeError(f"Spark created no event-log file in {directory}")
        self.path = found[0]
        self.path.chmod(0o600)
        self.attached = True

    def drain(self, seconds: float) -> None:
        """Wait, at most ``seconds``, until Spark's listener bus has delivered what was posted:
        a job's end is posted before the job returns but written by our queue's thread later."""
        if not self.attached or seconds <= 0:
            return
        try:
            self.bus.waitUntilEmpty(int(seconds * 1000))
        except Exception:  # noqa: BLE001 - a listener elsewhere keeps the bus busy: go anyway
            pass

    def flush(self) -> None:
        """Push Spark's buffered lines to the file (the writer flushes only at stage/job ends)."""
        self._print_writer.flush()

    def detach(self) -> None:
        """Off the bus, buffers flushed and the file closed; the spool stays for the tailer."""
        if not self.attached:
            return
        # What Spark posted before detach (a SQL execution's end, just before the write
        # returned) may still wait in our queue: a removed listener would never get it.
        self.drain(DRAIN_MS / 1000)
        self.attached = False
        self.bus.removeListener(self.listener)
        self.flush()


def extend_sql_redaction(session) -> None:
    """A SQL execution's description (a job description, when set) and plan are redacted by the
    session's own string regex when Spark creates the event, before any listener sees it: it
    gets ours or'ed in (it changes only what the UI and event logs show)."""
    theirs = session.conf.get(SQL_STRING_REDACTION, None)
    ours = spark_redaction_conf({})["spark.redaction.string.regex"]
    if theirs and ours in theirs:
        return
    session.conf.set(SQL_STRING_REDACTION, f"(?:{theirs})|{ours}" if theirs else ours)


def dropped_events(sc) -> dict[str, int]:
    """Events Spark dropped per listener-bus queue since the application started (queues that
    were removed since keep their counters)."""
    counters = sc._jsc.sc().listenerBus().metrics().metricRegistry().getCounters()
    out = {}
    it = counters.entrySet().iterator()
    while it.hasNext():
        entry = it.next()
        name = entry.getKey()
        if name.startswith("queue.") and name.endswith(".numDroppedEvents"):
            out[name[len("queue."):-len(".numDroppedEvents")]] = int(entry.getValue().getCount())
    return out


def spool_root(db: str | os.PathLike) -> Path:
    return Path(f"{db}.spool")
