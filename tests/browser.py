"""Real headless Chromium driven over the DevTools protocol (websocket-client), for report tests.

Debian's ``chromium`` is started with flags that keep it off the network (this machine refuses
outside connections, and a report must need none). Every page records console errors, uncaught
exceptions, log errors (CSP violations among them) and JavaScript dialogs, which are dismissed.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
    "--disable-extensions", "--mute-audio", "--hide-scrollbars",
)


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Chromium:
    """One browser process with a fresh profile; ``page()`` opens a tab. Close it when done."""

    def __init__(self, *, width: int = 1280, height: int = 1000, timeout: float = 30):
        import websocket

        exe = chromium_path()
        if exe is None:
            raise RuntimeError("chromium is not installed: apt-get install -y chromium (.ci/run does it)")
        self.profile = tempfile.mkdtemp(prefix="commitsleuth-chromium-")
        self.proc = subprocess.Popen(
            [exe, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-port=0",
             f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace")[-2000:]
                raise RuntimeError(f"chromium exited with {self.proc.returncode}: {err}")
            if time.monotonic() > deadline:
                self.close()
                raise RuntimeError("chromium did not open its DevTools port in time")
            time.sleep(0.05)
        port, path = port_file.read_text().splitlines()[:2]
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{port}{path}", timeout=timeout,
                                              suppress_origin=True)
        self.timeout = timeout
        self._ids = itertools.count(1)
        self._events: list[dict] = []

    # -- protocol --------------------------------------------------------------------------
    def send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        msg = {"id": next(self._ids), "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.ws.send(json.dumps(msg))
        return msg["id"]

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        want = self.send(method, params, session)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            msg = self._recv()
            if msg.get("id") == want:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
        raise TimeoutError(method)

    def wait_event(self, method: str, session: str | None = None) -> dict:
        for i, ev in enumerate(self._events):
            if ev["method"] == method and ev.get("sessionId") == session:
                return self._events.pop(i)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            msg = self._recv()
            if msg.get("method") == method and msg.get("sessionId") == session:
                self._events.remove(msg)
                return msg
        raise TimeoutError(method)

    def _recv(self) -> dict:
        msg = json.loads(self.ws.recv())
        if "method" in msg:
            self._events.append(msg)
            page = Page.open_pages.get(msg.get("sessionId"))
            if page is not None:
                page.observe(msg)
        return msg

    def page(self) -> "Page":
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        return Page(self, session, target)

    def close(self) -> None:
        try:
            if getattr(self, "ws", None) is not None:
                self.ws.close()
        finally:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    """One tab: navigate, evaluate, click, screenshot; ``errors`` and ``dialogs`` seen so far."""

    open_pages: dict[str, "Page"] = {}

    def __init__(self, browser: Chromium, session: str, target: str):
        self.browser, self.session, self.target = browser, session, target
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        Page.open_pages[session] = self
        for domain in ("Page.enable", "Runtime.enable", "Log.enable"):
            self.call(domain)

    def call(self, method: str, params: dict | None = None) -> dict:
        return self.browser.call(method, params, self.session)

    def observe(self, msg: dict) -> None:
        method, params = msg["method"], msg.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            d = params.get("exceptionDetails", {})
            self.errors.append("exception: " + str(d.get("exception", {}).get("description") or d.get("text")))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.errors.append("log: " + params["entry"].get("text", ""))
        elif method == "Page.javascriptDialogOpening":
            self.dialogs.append(f"{params.get('type')}: {params.get('message')}")
            self.browser.send("Page.handleJavaScriptDialog", {"accept": False}, self.session)

    def goto(self, url: str) -> float:
        """Open ``url`` and wait for its load event; returns the seconds it took."""
        self.browser._events = [e for e in self.browser._events
                                if not (e["method"] == "Page.loadEventFired" and e.get("sessionId") == self.session)]
        t0 = time.perf_counter()
        self.call("Page.navigate", {"url": url})
        self.browser.wait_event("Page.loadEventFired", self.session)
        return time.perf_counter() - t0

    def eval(self, expression: str):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression!r} raised {r['exceptionDetails'].get('exception', {}).get('description')}")
        return r["result"].get("value")

    def wait_for(self, expression: str, timeout_s: float = 20):
        """The value of ``expression`` once it is truthy (polled in the page each frame)."""
        return self.eval(
            f"new Promise((ok, fail) => {{ const t0 = performance.now(); (function poll() {{"
            f" let v; try {{ v = ({expression}); }} catch (e) {{ v = undefined; }}"
            f" if (v) ok(v); else if (performance.now() - t0 > {timeout_s * 1000}) fail(new Error('timed out'));"
            f" else requestAnimationFrame(poll); }})(); }})"
        )

    def mouse(self, kind: str, x: float, y: float) -> None:
        params = {"type": kind, "x": x, "y": y}
        if kind in ("mousePressed", "mouseReleased"):
            params.update(button="left", clickCount=1)
        self.call("Input.dispatchMouseEvent", params)

    def center(self, selector: str) -> tuple[float, float]:
        box = self.eval(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView({{block: 'center'}});"
            " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        return box[0], box[1]

    def click(self, selector: str) -> None:
        x, y = self.center(selector)
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y)
        self.mouse("mouseReleased", x, y)

    def hover(self, selector: str) -> None:
        x, y = self.center(selector)
        self.mouse("mouseMoved", x, y)

    def screenshot(self, path: str | os.PathLike) -> Path:
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        Page.open_pages.pop(self.session, None)
        self.browser.call("Target.closeTarget", {"targetId": self.target})

    def settle(self) -> None:
        """Let pending events (console, dialogs) arrive: one round trip after two frames."""
        self.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(1))))")
