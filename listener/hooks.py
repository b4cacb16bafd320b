"""The optional Python-side SparkListener: a py4j object implementing SparkListenerInterface.

Off by default (``attach(..., hooks=True)`` turns it on): py4j calls it for every event Spark
posts, some 40,000 callbacks for a 20,000-task job, although it acts on two (application end:
load everything before the driver goes; job end: load soon); the spool carries both anyway. It sits on its own bus queue, so even a stalled Python side
can only fill that queue, never Spark's ``shared`` one; every method returns at once. The
method list is read from the running Spark by reflection (35 methods in 3.5 and 4.x), so a
Spark that adds one does not get an exception per event.
"""

from __future__ import annotations

from commitsleuth.listener.jvm import HOOKS_QUEUE, LISTENER_INTERFACE, listener_methods


def _noop(self, event) -> None:
    return None


def _on_job_end(self, event) -> None:
    self._capture.nudge()


def _on_application_end(self, event) -> None:
    self._capture.on_application_end()


_ACTIONS = {"onJobEnd": _on_job_end, "onApplicationEnd": _on_application_end}


def listener_class(methods: list[str]) -> type:
    """A class with every listener method; the ones we act on call the capture."""
    body = {name: _ACTIONS.get(name, _noop) for name in methods}
    body["Java"] = type("Java", (), {"implements": [LISTENER_INTERFACE]})
    body["__init__"] = lambda self, capture: setattr(self, "_capture", capture)
    return type("CommitsleuthSparkListener", (), body)


class HooksListener:
    """Registers the Python listener on its own queue; ``detach()`` takes it off."""

    def __init__(self, sc, capture):
        from pyspark.java_gateway import ensure_callback_server_started

        gateway = sc._gateway
        ensure_callback_server_started(gateway)
        self.methods = listener_methods(sc._jvm)
        self.python_listener = listener_class(self.methods)(capture)
        # py4j makes a new Java proxy each time a Python object is passed; keep the one the bus
        # holds, or removeListener (which compares by reference) would not find it.
        holder = sc._jvm.java.util.ArrayList()
        holder.add(self.python_listener)
        self.listener = holder.get(0)
        self.bus = sc._jsc.sc().listenerBus()
        self.bus.addToQueue(self.listener, HOOKS_QUEUE)
        self.attached = True

    def detach(self) -> None:
        if self.attached:
            self.attached = False
            self.bus.removeListener(self.listener)
