"""Hadoop task syslog: MR1 '%d{ISO8601} %p %c: %m%n' (no thread) and MR2/YARN containers and
AppMaster '%d{ISO8601} %p [%t] %c: %m%n'."""

import re

from commitsleuth.parsers.base import Format, Sample
from commitsleuth.parsers.formats._heads import ISO_TS, LEVEL, MESSAGE, THREAD

# %c is a Java logger: a package-qualified class (org.apache.hadoop.mapred.Task) or a bare name
# (Hive 0.x's "ExecMapper"). HBase's "SecurityLogger.org.apache.hadoop.hbase…" audit log has the
# same layout but is no task's log (tests/corpus/eagle/hbase-security-audit.log).
MR1_HEAD = re.compile(rf"{ISO_TS} {LEVEL} (?P<logger>[a-z][\w$]*(?:\.[\w$]+)+|[A-Za-z][\w$]*): {MESSAGE}")
# The same shape as Hive's log4j2 layout; Hadoop loggers are full class names.
MR2_HEAD = re.compile(rf"{ISO_TS} +{LEVEL} +{THREAD} (?P<logger>org\.apache\.hadoop\.[\w$.]+): {MESSAGE}")

MR1 = Format(
    name="mr1-task-syslog",
    description="Hadoop 1 task syslog (userlogs/<job>/<attempt>/syslog): '%d{ISO8601} %p %c: %m%n'",
    head=MR1_HEAD,
    path_hint=re.compile(r"(^|/)userlogs/job_[^/]+/attempt_[^/]+/syslog$"),
    kinds=("task_commit", "commit_allowed", "conf", "attempt_start", "attempt_state", "attempt_end"),
    samples=(
        Sample(
            "2013-04-11 16:02:11,517 INFO org.apache.hadoop.mapred.FileOutputCommitter: Saved output of task "
            "'attempt_201304111550_268224_m_000005_0' to hdfs://nn/tmp/hive-deploy/hive_2013-05-30_10-13-59_124_1/"
            "_tmp.-ext-10000",
            "task_commit",
        ),
        Sample(
            "2013-04-11 16:02:10,101 INFO org.apache.hadoop.mapred.Task: Task attempt_201304111550_268224_m_000005_0 "
            "is allowed to commit now",
            "commit_allowed",
        ),
    ),
)

MR2 = Format(
    name="mr2-yarn",
    description="MR2/YARN container and AppMaster logs: '%d{ISO8601} %p [%t] %c: %m%n'",
    head=MR2_HEAD,
    priority=5,
    kinds=("attempt_state", "speculate", "commit_allowed", "task_commit", "job_end", "conf",
           "attempt_start", "attempt_end"),
    samples=(
        Sample(  # a `yarn logs` excerpt of an MR2 map container, published in a tutorial
            "2021-06-06 13:50:13,612 INFO [main] org.apache.hadoop.mapred.Task: "
            "Task:attempt_1612183984688_0028_m_000035_0 is done. And is in the process of committing",
            "attempt_state",
        ),
        Sample(
            "2015-10-18 18:04:51,755 INFO [DefaultSpeculator background processing] org.apache.hadoop.mapreduce."
            "v2.app.speculate.DefaultSpeculator: DefaultSpeculator.addSpeculativeAttempt -- we are speculating "
            "task_1445144423722_0020_m_000000",
            "speculate",
        ),
        Sample(
            "2015-10-18 18:04:51,755 INFO [AsyncDispatcher event handler] org.apache.hadoop.mapreduce.v2.app.job."
            "impl.TaskAttemptImpl: attempt_1445144423722_0020_m_000000_1 TaskAttempt Transitioned from NEW to "
            "UNASSIGNED",
            "attempt_state",
        ),
        Sample(
            "2015-10-18 18:10:02,117 INFO [IPC Server handler 3 on 62270] org.apache.hadoop.mapred."
            "TaskAttemptListenerImpl: Result of canCommit for attempt_1445144423722_0020_r_000000_0:true",
            "commit_allowed",
        ),
        Sample(
            "2015-10-18 18:01:50,353 INFO [main] org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter: "
            "File Output Committer Algorithm version is 1",
            "conf",
        ),
    ),
)
