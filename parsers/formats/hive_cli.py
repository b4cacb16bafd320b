"""Hive CLI console output (``hive -e``/``-f``, what a scheduler captures): SessionState.printInfo
lines with no log head. Strings from Hive's ql Driver ("Query ID = ", "Total jobs = ", "Launching
Job N out of M"), HadoopJobExecHelper ("Starting Job = <job>, Tracking URL = …", "Kill Command
= …", "Hadoop job information for Stage-N: …", "<yyyy-MM-dd HH:mm:ss,SSS> Stage-N map = …",
"Ended Job = …"), MoveTask ("Loading data to table …", "Moving data to …"), StatsTask, CliDriver
("OK", "Time taken: …") and TezJobMonitor ("Status: …"). The lines that begin a console record
are the ones these classes print; anything else (a query's result rows, a stack trace) is a
continuation.
"""

import re

from commitsleuth.parsers.base import Format, Sample

RECORD_START = re.compile(
    r"(?:Query ID = |Total jobs = |Launching Job \d+ out of |Starting Job = |Kill Command = "
    r"|Hadoop job information for |\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} Stage-\d+ map = |Ended Job = "
    r"|Loading data to table |Moving data to |Stage-\d+ is (?:selected|filtered out) by condition resolver"
    r"|MapReduce Jobs Launched:|Stage-Stage-\d+: |Total MapReduce CPU Time Spent: |OK$|Time taken: "
    r"|Status: (?:Running|DAG finished|Failed)|Table \S+ stats: \[|Partition \S+ stats: \["
    r"|Number of reduce tasks |hive(?: \([\w$]*\))?> )"
)

FORMAT = Format(
    name="hive-console",
    description="Hive CLI console output (SessionState.printInfo lines, no head): 'Query ID = …', "
    "'Starting Job = …', 'Ended Job = …', 'Loading data to table …'",
    head=None,
    record_start=RECORD_START,
    kinds=("query_start", "job_start", "job_end", "load", "publish", "stats", "conf"),
    samples=(
        # REAL: a Hive-on-Tez console of INSERT OVERWRITE TABLE acc_storm_fatalities (a public
        # tutorial's session); the other samples are built from the strings named above.
        Sample("Query ID = hive_20180719104640_57a2cc82-f69f-4631-b5cb-4eee37e8c69f", "query_start"),
        Sample("Starting Job = job_1400000000000_0007, Tracking URL = "
               "http://rm.example.com:8088/proxy/application_1400000000000_0007/", "job_start"),
        Sample("Ended Job = job_1400000000000_0007", "job_end"),
        Sample("Loading data to table db.t partition (dt=2014-08-24)", "load"),
        Sample("Time taken: 25.31 seconds", None),
    ),
)
