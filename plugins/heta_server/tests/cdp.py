"""A small driver for headless Chromium over the DevTools protocol (the tests' own, no browser download).

It starts Debian's ``chromium`` (``scripts/system_packages.sh`` installs it) with a DevTools port on
127.0.0.1, talks to one page over a websocket (``websockets``' blocking client) and offers what the
console tests need: open a URL, run JavaScript, wait for a condition, type, click with the real mouse,
choose files for an ``<input type=file>``, resize the window and take screenshots. Console messages,
uncaught exceptions and Content-Security-Policy reports are collected in ``Page.problems``.
"""

from __future__ import annotations

import base64
import itertools
import json
import shutil
import subprocess
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
from websockets.sync.client import connect

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class BrowserError(RuntimeError):
    pass


class Page:
    def __init__(self, websocket_url: str):
        self._stack = ExitStack()
        self._socket = self._stack.enter_context(connect(websocket_url, max_size=None, open_timeout=30))
        self._ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []
        for domain in ("Page", "Runtime", "Log", "DOM"):
            self.send(f"{domain}.enable")

    def close(self) -> None:
        self._stack.close()

    # --- protocol ------------------------------------------------------------------

    def send(self, method: str, timeout: float = 60, **params: Any) -> dict[str, Any]:
        message_id = next(self._ids)
        self._socket.send(json.dumps({"id": message_id, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self._socket.recv(timeout=max(0.01, deadline - time.monotonic())))
            if message.get("id") == message_id:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def _drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                message = json.loads(self._socket.recv(timeout=left))
            except TimeoutError:
                return
            if "method" in message:
                self.events.append(message)

    @property
    def problems(self) -> list[str]:
        """Uncaught exceptions, console errors and warnings, and log entries (CSP violations among them)."""
        found = []
        for event in self.events:
            params = event.get("params", {})
            if event["method"] == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                found.append("exception: " + str(details.get("exception", {}).get("description") or details.get("text")))
            elif event["method"] == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
                found.append(f"console.{params['type']}: " + " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif event["method"] == "Log.entryAdded" and params["entry"].get("level") in ("error", "warning"):
                found.append(f"log ({params['entry'].get('source')}): {params['entry'].get('text')}")
        return found

    # --- what a test does ------------------------------------------------------------

    def goto(self, url: str, timeout: float = 60) -> None:
        self.events.clear()
        self.send("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'", timeout=timeout)

    def evaluate(self, expression: str, *, await_promise: bool = False, timeout: float = 60) -> Any:
        result = self.send("Runtime.evaluate", timeout=timeout, expression=expression, returnByValue=True, awaitPromise=await_promise)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise BrowserError(str(details.get("exception", {}).get("description") or details.get("text")))
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = 30) -> Any:
        """The value of ``expression`` once it is truthy (polled); ``BrowserError`` with the status line when not in time."""
        deadline = time.monotonic() + timeout
        probe = f"(() => {{ const value = ({expression}); return value instanceof Node ? true : value; }})()"
        while True:
            value = self.evaluate(probe)
            if value:
                return value
            if time.monotonic() > deadline:
                status = self.evaluate("(document.getElementById('status') || {}).textContent")
                raise BrowserError(f"not true within {timeout}s: {expression} (status: {status!r}; problems: {self.problems})")
            self._drain(0.05)

    def text(self, selector: str) -> str:
        return self.evaluate(f"(document.querySelector({json.dumps(selector)}) || {{}}).textContent || ''")

    def texts(self, selector: str) -> list[str]:
        return self.evaluate(f"[...document.querySelectorAll({json.dumps(selector)})].map((n) => n.textContent)")

    def click(self, selector: str) -> None:
        """A real mouse click in the middle of the element's first box (a link that wraps has one per line)."""
        box = self.evaluate(
            f"(() => {{ const n = document.querySelector({json.dumps(selector)}); if (!n) return null; n.scrollIntoView({{block: 'center'}});"
            " const r = n.getClientRects()[0]; return r ? [r.left + r.width / 2, r.top + r.height / 2] : null; })()"
        )
        if box is None:
            raise BrowserError(f"nothing matches {selector}")
        self.mouse_click(*box)

    def mouse_click(self, x: float, y: float) -> None:
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left" if kind != "mouseMoved" else "none", clickCount=1)

    def type(self, selector: str, text: str) -> None:
        """Focus the field, empty it, and type ``text`` as keyboard input."""
        self.evaluate(f"(() => {{ const n = document.querySelector({json.dumps(selector)}); n.focus(); n.select && n.select(); }})()")
        self.send("Input.insertText", text=text)

    def press_enter(self) -> None:
        for kind in ("keyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13, text="\r" if kind == "keyDown" else None)

    def set_files(self, selector: str, paths: list[Path]) -> None:
        root = self.send("DOM.getDocument", depth=0)["root"]["nodeId"]
        node = self.send("DOM.querySelector", nodeId=root, selector=selector)["nodeId"]
        if not node:
            raise BrowserError(f"nothing matches {selector}")
        self.send("DOM.setFileInputFiles", files=[str(p) for p in paths], nodeId=node)

    def viewport(self, width: int, height: int) -> None:
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path


class Browser:
    """One headless Chromium process; ``page`` is its one tab."""

    def __init__(self, profile: Path):
        if CHROMIUM is None:
            raise BrowserError("the chromium binary is not installed")
        profile.mkdir(parents=True, exist_ok=True)
        port_file = profile / "DevToolsActivePort"
        port_file.unlink(missing_ok=True)  # a profile used before holds the port of a browser long gone
        self._log = (profile / "chromium.log").open("wb")
        self._process = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-background-networking", "--disable-sync",
             "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", f"--user-data-dir={profile}",
             "--window-size=1100,900", "about:blank"],
            stdout=self._log, stderr=self._log,
        )
        try:
            deadline = time.monotonic() + 60
            while not (port_file.exists() and port_file.read_text().strip()):
                if self._process.poll() is not None or time.monotonic() > deadline:
                    raise BrowserError("chromium did not open its DevTools port; see " + str(profile / "chromium.log"))
                time.sleep(0.05)
            port = int(port_file.read_text().split()[0])
            targets = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=10).json()
            target = next(t for t in targets if t.get("type") == "page")
            self.page = Page(target["webSocketDebuggerUrl"])
        except BaseException:
            self.close()  # never leave a browser running behind a failed start
            raise

    def close(self) -> None:
        page = getattr(self, "page", None)
        if page is not None:
            page.close()
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
        self._log.close()
