"""A committer's ``_SUCCESS`` manifest: the JSON the S3A committers and Hadoop's manifest
committer write in place of FileOutputCommitter's empty marker (``SuccessData``: committer, job
id, timestamp and ``filenames``, the committed files — at most the first 100 of them, Hadoop's
``SUCCESS_MARKER_FILE_LIMIT``). Read by the live inventory and by ``audit``; CS111 compares its
file list with the files a listing found.
"""

from __future__ import annotations

import json

MAX_BYTES = 1 << 20
# Hadoop's SUCCESS_MARKER_FILE_LIMIT (S3A CommitConstants, ManifestCommitterConstants): a list
# this long may be cut, so files beyond it are not missing from the commit.
FILE_LIMIT = 100
_KEEP = ("name", "committer", "jobId", "jobIdSource", "timestamp", "hostname", "success", "filenames")


def read_manifest(data: bytes) -> dict | str:
    """The manifest's fields we keep, or why the bytes are not one."""
    if len(data) > MAX_BYTES:
        return f"not read: {len(data)} bytes"
    try:
        doc = json.loads(data.decode("utf-8"))
    except ValueError:
        return "not JSON"
    return {k: doc[k] for k in _KEEP if k in doc} if isinstance(doc, dict) else "not an object"


def read_hadoop_manifest(jvm, fs, status) -> dict | str:
    """:func:`read_manifest` of a ``_SUCCESS`` file read through a Hadoop FileSystem."""
    if status.getLen() > MAX_BYTES:
        return f"not read: {status.getLen()} bytes"
    try:
        stream = fs.open(status.getPath())
        try:
            data = bytes(jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
        finally:
            stream.close()
    except Exception as exc:  # a Py4J Java exception (a checksum error, a vanished file): keep the listing
        if type(exc).__name__ != "Py4JJavaError":
            raise
        return "not read: " + str(exc.java_exception.toString()).splitlines()[0]
    return read_manifest(data)
