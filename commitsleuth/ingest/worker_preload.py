"""What the ingest's worker processes need, made once in the fork server they fork from.

Each forked worker inherits it: the ingest's modules (their import is 0.5 cpu-s) and the
message grammar (its LALR tables take 0.17 cpu-s to build), pyarrow told that pandas is not to
be imported (``pool.arrow_without_pandas``), and malloc told to keep freed blocks
(``pool.keep_freed_memory``). Importing this module builds them.
"""

import gc

# The server's start is on the ingest's critical path (its first workers wait for it): the
# collector's passes over the objects of these imports cost it about 5% for nothing, as they
# all live as long as it does.
gc.disable()
try:
    from commitsleuth.ingest import phases

    phases.mark("fork server: preload begins")
    from commitsleuth.ingest import pool

    pool.arrow_without_pandas()  # before anything builds an Arrow array: pyarrow then never imports pandas
    pool.keep_freed_memory()

    from commitsleuth.ingest import local  # noqa: F401 - the workers' tasks live there
    from commitsleuth.parsers.messages import message_parser

    message_parser()
    # What each worker inherits is never collected: no collection in a worker walks (and so
    # copies on write) the server's pages holding those objects.
    gc.freeze()
    phases.mark("fork server: preload done")
finally:
    gc.enable()
