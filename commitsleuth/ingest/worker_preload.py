"""What the ingest's worker processes need, made once in the fork server they fork from.

Each forked worker inherits it: the ingest's modules (their import is 0.5 cpu-s) and the
message grammar (its LALR tables take 0.17 cpu-s to build), and pyarrow told that pandas is not
to be imported (``pool.arrow_without_pandas``). Importing this module builds them.
"""

from commitsleuth.ingest import pool

pool.arrow_without_pandas()  # before anything builds an Arrow array: pyarrow then never imports pandas

from commitsleuth.ingest import local  # noqa: E402,F401 - the workers' tasks live there
from commitsleuth.parsers.messages import message_parser

message_parser()
