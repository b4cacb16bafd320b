"""`make test` and `make demo` set everything up first: the check of Java and Chromium, pip's
progress, and the two test passes with their closing lines, run on this machine's real make and
shell with fake tools in front of PATH (Chromium is installed here: its absence is faked)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CHECK = REPO / ".ci" / "check-setup"
PIP = REPO / ".ci" / "pip-install"


def _tool(bin_dir: Path, name: str, script: str) -> None:
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)


def _path_without_chromium(tmp_path: Path, uid: int, sudo: str | None, apt: str | None) -> str:
    """A PATH holding the tools the check uses (sh, date, sed, head, id, java) and no chromium;
    ``id -u`` says ``uid``; ``sudo``/``apt-get`` are fakes with the given bodies, or absent."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("sh", "date", "sed", "head", "env", "cat", "chmod"):
        os.symlink(shutil.which(name), bin_dir / name)
    _tool(bin_dir, "java", 'echo \'openjdk version "17.0.9" 2023-10-17\' >&2\n')
    _tool(bin_dir, "id", f"echo {uid}\n")
    if sudo is not None:
        _tool(bin_dir, "sudo", sudo)
    if apt is not None:
        _tool(bin_dir, "apt-get", apt)
    return str(bin_dir)


def _check(path: str, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    began = time.monotonic()
    p = subprocess.run(["/bin/sh", str(CHECK), *args], env={"PATH": path}, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=60)
    return p, time.monotonic() - began


NOT_INSTALLED = ("make test needs Chromium for the HTML report's browser tests, and it is not installed:\n"
                 "  install it (Debian/Ubuntu: sudo apt-get install chromium) so that 'chromium' is on PATH, "
                 "then run make test again.\n")


def test_without_chromium_and_without_root_one_line_says_what_to_install(tmp_path):
    path = _path_without_chromium(tmp_path, uid=1000, sudo="exit 1\n", apt="echo apt ran >&2; exit 1\n")
    p, took = _check(path, "--chromium")
    assert (p.returncode, p.stdout, p.stderr) == (1, NOT_INSTALLED, "")
    assert took < 5, took
    # without --chromium (make demo) Chromium is not needed
    p, _ = _check(path)
    assert p.returncode == 0 and p.stdout.startswith("set-up checked in ") and p.stdout.endswith(" s: Java 17\n")


def test_without_chromium_as_root_it_is_installed_from_debian(tmp_path):
    log = tmp_path / "apt.log"
    bin_dir = tmp_path / "bin"
    # the fake apt-get "installs" chromium by putting one on PATH
    apt = (f'echo "$*" >> {log}\n'
           f'case "$*" in *install*chromium*) printf "#!/bin/sh\\necho Chromium 120.0\\n" > {bin_dir}/chromium; '
           f'chmod +x {bin_dir}/chromium ;; esac\n')
    path = _path_without_chromium(tmp_path, uid=0, sudo=None, apt=apt)
    p, took = _check(path, "--chromium")
    assert p.returncode == 0, p.stdout
    assert p.stdout.splitlines()[0] == "Installing Chromium (Debian's chromium package) for the HTML report's browser tests ..."
    assert p.stdout.splitlines()[1].endswith(f" s: Java 17, Chromium 120.0 ({bin_dir}/chromium)")
    assert log.read_text() == "update -qq\ninstall -y -qq chromium\n"
    assert took < 5, took


def test_without_chromium_with_sudo_it_is_installed_through_sudo(tmp_path):
    log = tmp_path / "sudo.log"
    path = _path_without_chromium(tmp_path, uid=1000, sudo=f'echo "$*" >> {log}\n', apt="exit 1\n")
    p, _ = _check(path, "--chromium")
    # sudo -n: never a password prompt (CI has no stdin); the fake installed nothing, so the line
    assert (p.returncode, p.stdout.splitlines()[-2]) == (1, NOT_INSTALLED.splitlines()[0])
    assert log.read_text() == ("-n true\n-n apt-get update -qq\n"
                               "-n env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium\n")


def test_a_chromium_that_does_not_start_stops_the_check(tmp_path):
    path = _path_without_chromium(tmp_path, uid=1000, sudo=None, apt=None)
    _tool(tmp_path / "bin", "chromium-browser", "echo 'Please install the chromium snap' >&2; exit 1\n")
    p, _ = _check(path, "--chromium")
    exe = tmp_path / "bin" / "chromium-browser"
    assert (p.returncode, p.stdout.splitlines()[0]) == (
        1, f"make test needs Chromium for the HTML report's browser tests, and {exe} does not start "
           f"('{exe} --version' failed):")


def test_an_old_java_stops_the_check(tmp_path):
    path = _path_without_chromium(tmp_path, uid=1000, sudo=None, apt=None)
    _tool(tmp_path / "bin", "java", 'echo \'openjdk version "11.0.2" 2019-01-15\' >&2\n')
    p, _ = _check(path, "--chromium")
    assert p.returncode == 1
    assert p.stdout.splitlines()[0] == "Java 17 or newer is needed for the Spark parts (found: 11)."


def test_the_real_check_is_quick():
    p, took = _check(os.environ["PATH"], "--chromium")
    assert p.returncode == 0, p.stdout
    assert took < 5, took


def test_pip_progress_names_each_package_and_keeps_the_log(tmp_path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    _tool(venv / "bin", "python", "echo 'Collecting duckdb>=1.2'\necho '  Using cached duckdb.whl'\n"
          "echo 'Collecting pyspark==3.5.*'\nsleep ${FAKE_BUILD:-0}\n"
          "echo 'Installing collected packages: duckdb, pyspark'\n"
          "echo 'Successfully installed duckdb pyspark'\nexit ${FAKE_RC:-0}\n")
    log = tmp_path / "install.log"
    env = {**os.environ, "PIP_PROGRESS_TICK": "1", "FAKE_BUILD": "2.5"}
    p = subprocess.run([str(PIP), str(venv), str(log), "x"], capture_output=True, text=True, env=env)
    lines = p.stdout.splitlines()
    ticks = [line for line in lines if line.startswith("  ... still installing")]
    assert ticks[:2] == ["  ... still installing (1 s)", "  ... still installing (2 s)"], p.stdout
    assert lines.index(ticks[0]) == 2  # while pip was silent, after the packages it named
    assert (p.returncode, [line for line in lines if line not in ticks]) == (0, [
        "  collecting duckdb>=1.2", "  collecting pyspark==3.5.*",
        "  installing 2 package(s) (the longest step: PySpark alone is 300 MB) ...", "  installed"])
    assert log.read_text().count("\n") == 5
    p = subprocess.run([str(PIP), str(venv), str(log), "x"], capture_output=True, text=True,
                       env={**os.environ, "FAKE_RC": "1"})
    assert p.returncode == 1
    assert p.stdout.splitlines()[-1] == f"Install failed (pip exit 1); the whole log is in {log}"


def _fake_venv(path: Path, summary: str, rc: int) -> None:
    (path / "bin").mkdir(parents=True)
    _tool(path / "bin", "python", f'echo "ran: $*"\necho "========== {summary} =========="\nexit {rc}\n')
    (path / ".installed").touch()


@pytest.mark.parametrize("main_rc,rc35,status", [(0, 0, 0), (1, 0, 2), (0, 5, 2), (1, 1, 2)])
def test_make_test_runs_both_passes_and_says_what_ran(tmp_path, main_rc, rc35, status):
    """The real Makefile with fake venvs: pass two runs after pass one failed, a pass that
    collected nothing (pytest's 5) fails, and the closing lines name each pass and its result."""
    main, v35 = tmp_path / "main", tmp_path / "v35"
    _fake_venv(main, "1 failed, 9 passed in 3.00s" if main_rc else "10 passed in 3.00s", main_rc)
    _fake_venv(v35, "no tests ran in 0.01s" if rc35 == 5 else "4 passed in 1.00s", rc35)
    p = subprocess.run(["make", "-s", "-C", str(REPO), "test", f"VENV={main}", f"VENV35={v35}",
                        "PYTEST_ARGS=-q"], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                       env={**os.environ, "CI": "true", "MAKEFLAGS": ""}, timeout=60)
    lines = p.stdout.splitlines()
    assert p.returncode == status, p.stdout + p.stderr
    assert lines[0].startswith("set-up checked in ") and ", Chromium " in lines[0]
    assert lines[1:3] == ["ran: -m pytest -n 2 --dist loadfile --no-loadscope-reorder -q", f"========== {'1 failed, 9 passed in 3.00s' if main_rc else '10 passed in 3.00s'} =========="]
    assert lines[3].startswith("ran: -m pytest tests/test_live_capture.py ") and lines[3].endswith(" -q")
    first = (f"make test: 1/2 pytest -q ({main}): "
             + ("FAILED (pytest exit 1: 1 failed, 9 passed in 3.00s)" if main_rc else "passed (10 passed in 3.00s)"))
    second = (f"make test: 2/2 the live-capture tests again on PySpark 3.5 with -q ({v35}): "
              + {0: "passed (4 passed in 1.00s)", 5: "FAILED (pytest exit 5: no tests ran in 0.01s)",
                 1: "FAILED (pytest exit 1: 4 passed in 1.00s)"}[rc35])
    assert lines[-2:] == [first, second]


def test_make_test_says_the_pytest_arguments_it_was_given(tmp_path):
    main, v35 = tmp_path / "main", tmp_path / "v35"
    _fake_venv(main, "1 passed in 0.10s", 0)
    _fake_venv(v35, "1 passed in 0.10s", 0)
    p = subprocess.run(["make", "-s", "-C", str(REPO), "test", f"VENV={main}", f"VENV35={v35}",
                        'PYTEST_ARGS=-k "a or b"'], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                       env={**os.environ, "MAKEFLAGS": ""}, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.splitlines()[-2:] == [
        f'make test: 1/2 pytest -k "a or b" ({main}): passed (1 passed in 0.10s)',
        f'make test: 2/2 the live-capture tests again on PySpark 3.5 with -k "a or b" ({v35}): passed (1 passed in 0.10s)']
