"""A real Spark standalone cluster on loopback: one master and two workers on two addresses.

Used by the tests (the ``spark_rig`` fixture) and by ``commitsleuth demo``.

Local mode never launches a speculative copy (one host); two workers on 127.0.0.2 and
127.0.0.3 are two hosts to Spark's scheduler, so it does. Started with the installed PySpark's
own ``spark-class``; every wait is bounded and everything started is stopped by process group.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyspark

MASTER_HOST = "127.0.0.2"
WORKER_HOSTS = ("127.0.0.2", "127.0.0.3")
READY_TIMEOUT = 60.0


def spark_home() -> Path:
    return Path(pyspark.__file__).resolve().parent


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


@dataclass
class Rig:
    master_url: str
    workdir: Path
    procs: list[subprocess.Popen] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)

    def env(self) -> dict[str, str]:
        """Environment for a driver process using this rig."""
        env = dict(os.environ)
        env.update(SPARK_HOME=str(spark_home()), PYSPARK_PYTHON=sys.executable,
                   PYSPARK_DRIVER_PYTHON=sys.executable)
        return env

    def log_tail(self, n: int = 30) -> str:
        out = []
        for p in self.logs:
            lines = p.read_text(errors="replace").splitlines() if p.exists() else []
            out.append(f"--- {p.name}\n" + "\n".join(lines[-n:]))
        return "\n".join(out)


def _start(cmd: list[str], log: Path, env: dict) -> subprocess.Popen:
    fh = open(log, "wb")
    # Its own process group: the JVM and the executors it forks are stopped together.
    return subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _wait_for(log: Path, text: str, proc: subprocess.Popen, deadline: float) -> None:
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            raise RuntimeError(f"{log.name}: exited with {proc.returncode} before '{text}'")
        time.sleep(0.2)
    raise TimeoutError(f"{log.name}: no '{text}' within {READY_TIMEOUT:.0f} s")


def start_rig(workdir: Path) -> Rig:
    workdir.mkdir(parents=True, exist_ok=True)
    spark_class = str(spark_home() / "bin" / "spark-class")
    port = free_port(MASTER_HOST)
    rig = Rig(f"spark://{MASTER_HOST}:{port}", workdir)
    env = rig.env()
    env.update(SPARK_DAEMON_MEMORY="256m", SPARK_LOCAL_DIRS=str(workdir / "local"),
               SPARK_LOG_DIR=str(workdir / "logs"), SPARK_CONF_DIR=str(workdir / "conf"))
    (workdir / "conf").mkdir(exist_ok=True)
    deadline = time.monotonic() + READY_TIMEOUT
    try:
        log = workdir / "master.log"
        rig.logs.append(log)
        rig.procs.append(_start(
            [spark_class, "org.apache.spark.deploy.master.Master", "--host", MASTER_HOST,
             "--port", str(port), "--webui-port", str(free_port(MASTER_HOST))], log, env))
        # Workers start alongside the master (JVM start-up dominates) and retry until it is up.
        for i, host in enumerate(WORKER_HOSTS):
            log = workdir / f"worker{i}.log"
            rig.logs.append(log)
            wenv = dict(env, SPARK_LOCAL_IP=host)
            rig.procs.append(_start(
                [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", host,
                 "--cores", "1", "--memory", "1g", "--webui-port", str(free_port(host)),
                 "--work-dir", str(workdir / f"work{i}"), rig.master_url], log, wenv))
        _wait_for(rig.logs[0], "I have been elected leader", rig.procs[0], deadline)
        for proc, log in zip(rig.procs[1:], rig.logs[1:]):
            _wait_for(log, "Successfully registered with master", proc, deadline)
    except BaseException:
        stop_rig(rig)
        raise
    return rig


def stop_rig(rig: Rig) -> None:
    """SIGTERM each process group we started, SIGKILL what is left after a bounded wait."""
    for proc in reversed(rig.procs):
        _signal_group(proc, signal.SIGTERM)
    deadline = time.monotonic() + 15
    for proc in rig.procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        _signal_group(proc, signal.SIGKILL)
        proc.wait(timeout=5)


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)  # the group this Popen created (start_new_session)
    except ProcessLookupError:
        pass
