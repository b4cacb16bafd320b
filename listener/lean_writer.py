"""The spool's leaner writer (``LeanEventLoggingListener.java``), compiled in the driver's JVM.

The project ships no jar: the Java source is compiled at the first attach on a machine, with the
JVM's own compiler and against the Spark the application runs, into a cache kept per source,
Spark and Java version; later attaches load the classes from there. A JVM without a compiler (a
JRE), or a compile that fails, leaves Spark's own ``EventLoggingListener`` to write the spool
(the events are the same; the task ends are longer), and ``why`` says so.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("LeanEventLoggingListener.java")
CLASS = "commitsleuth.LeanEventLoggingListener"
# 0 leaves the spool to Spark's own writer (benchmarks compare the two).
ENV = "COMMITSLEUTH_LEAN_SPOOL"
CACHE_ENV = "COMMITSLEUTH_CACHE"


class LeanWriterUnavailable(Exception):
    """The JVM cannot compile or load the lean writer; the message says why."""


def cache_root() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "commitsleuth"


def enabled() -> bool:
    return os.environ.get(ENV, "1") != "0"


def lean_listener_class(sc):
    """The lean writer's class in this JVM, compiled first if no cache holds it. Whatever keeps
    it from being had (no compiler, a cache that cannot be written, a JVM error) is
    ``LeanWriterUnavailable``: the capture goes on with Spark's writer."""
    try:
        return _class(sc)
    except LeanWriterUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001 - py4j raises its own errors for a JVM exception
        raise LeanWriterUnavailable(_first_line(exc)) from exc


def _class(sc):
    jvm, gateway = sc._jvm, sc._gateway
    system = jvm.java.lang.System
    source = SOURCE.read_bytes()
    key = hashlib.sha256(b"\0".join([source, sc.version.encode(), system.getProperty("java.version").encode(),
                                     system.getProperty("java.class.path").encode()])).hexdigest()[:20]
    classes = cache_root() / "jvm" / key
    held = _LOADED.get(str(classes))
    if held is not None and held[0] is gateway:
        return held[1]
    if not (classes / "commitsleuth" / "LeanEventLoggingListener.class").is_file():
        _compile(jvm, gateway, classes)
    urls = gateway.new_array(jvm.java.net.URL, 1)
    urls[0] = jvm.java.io.File(str(classes)).toURI().toURL()
    parent = sc._jsc.sc().getClass().getClassLoader()
    loaded = jvm.java.net.URLClassLoader(urls, parent).loadClass(CLASS)
    _LOADED[str(classes)] = (gateway, loaded)
    return loaded


# The class as loaded, per JVM (its py4j gateway) and compiled classes: a driver that attaches
# again gets the class its JVM has loaded, not one more copy of it in one more class loader.
_LOADED: dict[str, tuple[object, object]] = {}  # compiled classes -> (gateway, class)


def _compile(jvm, gateway, classes: Path) -> None:
    compiler = jvm.javax.tools.ToolProvider.getSystemJavaCompiler()
    if compiler is None:
        raise LeanWriterUnavailable("the JVM has no Java compiler (a JRE)")
    classes.parent.mkdir(parents=True, exist_ok=True)
    # Compiled apart, then renamed into place: another driver compiling at the same time
    # finds either nothing or the whole directory.
    work = Path(tempfile.mkdtemp(prefix="compiling-", dir=classes.parent))
    try:
        args = ["-nowarn", "-proc:none", "-d", str(work), "-cp", jvm.java.lang.System.getProperty("java.class.path"),
                str(SOURCE)]
        jargs = gateway.new_array(jvm.java.lang.String, len(args))
        for i, arg in enumerate(args):
            jargs[i] = arg
        out = jvm.java.io.StringWriter()
        # javac's own entry point: py4j cannot call the compiler through ToolProvider's object,
        # whose class the jdk.compiler module does not export.
        if jvm.com.sun.tools.javac.Main.compile(jargs, jvm.java.io.PrintWriter(out)) != 0:
            raise LeanWriterUnavailable(f"javac failed: {out.toString()[-500:]}")
        try:
            work.rename(classes)
        except OSError:
            if not classes.is_dir():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def new_lean_listener(sc, app_id, attempt, uri, conf, hadoop_conf):
    """An instance of the lean writer: the same arguments as Spark's EventLoggingListener.
    ``LeanWriterUnavailable`` when it is turned off (``ENV``) or cannot be had."""
    if not enabled():
        raise LeanWriterUnavailable(f"{ENV}=0")
    cls = lean_listener_class(sc)
    gateway = sc._gateway
    args = gateway.new_array(sc._jvm.java.lang.Object, 5)
    for i, value in enumerate((app_id, attempt, uri, conf, hadoop_conf)):
        args[i] = value
    try:
        return cls.getConstructors()[0].newInstance(args)
    except Exception as exc:  # noqa: BLE001 - py4j raises its own errors for a JVM exception
        raise LeanWriterUnavailable(_first_line(exc)) from exc


def _first_line(exc: Exception) -> str:
    """An error as one line: its type and the first line of its message (py4j's hold the whole
    Java stack trace)."""
    return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"
