"""A headless Chromium driven over its DevTools protocol (CDP), for the tests of ``pact-tui
web``: the system's ``chromium`` (Debian's package, which ``.ci/run`` installs), a websocket to
one page (aiohttp's client: textual-serve needs aiohttp already), and the few protocol calls a
test needs. Every wait polls with a deadline.

The terminal in textual-serve's page is an xterm.js ``Terminal`` the page keeps to itself. A
script run before the page's own (``Page.addScriptToEvaluateOnNewDocument``) notes it as
``window.pactTerminal`` when the page stores it (``this.terminal = new Terminal(…)``): the tests
read what xterm.js holds on its screen through xterm.js's public buffer API, which is what the
browser draws.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import shutil
import signal
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM = shutil.which("chromium")
NO_CHROMIUM = "no `chromium` on PATH: .ci/run installs Debian's chromium (apt-get install chromium)"
WAIT = 30.0  # seconds a wait may take before the test fails (a loaded machine is slow)
POLL = 0.1  # seconds between two looks at a condition

# Notes the page's xterm.js Terminal when the page stores it on an object as `terminal` (the
# first object given a `terminal` that has a screen buffer); the object keeps it as its own.
NOTE_THE_TERMINAL = """
Object.defineProperty(Object.prototype, "terminal", {
  configurable: true,
  set(value) {
    Object.defineProperty(this, "terminal", {
      value, writable: true, configurable: true, enumerable: true,
    });
    if (value && value.buffer && value.buffer.active && !window.pactTerminal) {
      window.pactTerminal = value;
    }
  },
});
"""

# The lines on the terminal's screen, as xterm.js holds them ("" until there is a terminal).
SCREEN_TEXT = """(() => {
  const terminal = window.pactTerminal;
  if (!terminal) return "";
  const buffer = terminal.buffer.active;
  const lines = [];
  for (let y = 0; y < terminal.rows; y++) {
    const line = buffer.getLine(buffer.viewportY + y);
    lines.push(line ? line.translateToString(true) : "");
  }
  return lines.join("\\n");
})()"""

# How many colours a PNG (a data: URL) shows, and its size: decoded by the browser itself.
COLOURS = """(async (url) => {
  const image = new Image();
  image.src = url;
  await image.decode();
  const canvas = document.createElement("canvas");
  canvas.width = image.width;
  canvas.height = image.height;
  const context = canvas.getContext("2d");
  context.drawImage(image, 0, 0);
  const pixels = context.getImageData(0, 0, image.width, image.height).data;
  const colours = new Set();
  for (let i = 0; i < pixels.length; i += 4) {
    colours.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
  }
  return {colours: colours.size, width: image.width, height: image.height};
})"""


class ProtocolError(Exception):
    """Chromium answered a call with an error, or a script threw."""


class Page:
    """One page of the browser, over its own DevTools websocket."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        self.socket = socket
        self.calls = 0

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command and return its result (events that come meanwhile are dropped)."""
        self.calls += 1
        number = self.calls
        await self.socket.send_json({"id": number, "method": method, "params": params})
        while True:
            message = await asyncio.wait_for(self.socket.receive(), WAIT)
            if message.type != aiohttp.WSMsgType.TEXT:
                raise ProtocolError(f"the DevTools socket closed during {method}: {message}")
            answer = json.loads(message.data)
            if answer.get("id") != number:
                continue
            if "error" in answer:
                raise ProtocolError(f"{method}: {answer['error']}")
            result: dict[str, Any] = answer["result"]
            return result

    async def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (a promise awaited)."""
        result = await self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise ProtocolError(f"{expression[:60]!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def wait_for(self, expression: str, what: str) -> Any:
        """The expression's value once it is truthy, looked at every POLL seconds for WAIT."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT
        while True:
            value = await self.evaluate(expression)
            if value:
                return value
            if loop.time() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            await asyncio.sleep(POLL)

    async def screen_text(self) -> str:
        text: str = await self.evaluate(SCREEN_TEXT)
        return text

    async def wait_for_screen(self, *texts: str) -> str:
        """The terminal's screen once it shows every one of ``texts``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT
        while True:
            screen = await self.screen_text()
            if all(text in screen for text in texts):
                return screen
            if loop.time() > deadline:
                raise AssertionError(f"the screen never showed {texts}; it shows:\n{screen}")
            await asyncio.sleep(POLL)

    async def type(self, keys: str) -> None:
        """Type ``keys`` as the keyboard would, into what has the page's focus."""
        for key in keys:
            await self.call("Input.dispatchKeyEvent", type="keyDown", key=key, text=key)
            await self.call("Input.dispatchKeyEvent", type="keyUp", key=key)

    async def screenshot(self) -> bytes:
        """What the page shows, as a PNG."""
        shot = await self.call("Page.captureScreenshot", format="png")
        return base64.b64decode(shot["data"])

    async def colours(self, png: bytes) -> dict[str, int]:
        """The number of colours in ``png`` and its size, as the browser decodes it."""
        url = "data:image/png;base64," + base64.b64encode(png).decode()
        result: dict[str, int] = await self.evaluate(f"({COLOURS})({json.dumps(url)})")
        return result


async def _devtools_port(profile: Path, process: subprocess.Popen[bytes]) -> int:
    """The port Chromium's DevTools listen on (``--remote-debugging-port=0``: it writes the
    port it took to ``DevToolsActivePort`` in its profile)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    written = profile / "DevToolsActivePort"
    while True:
        if written.exists():
            lines = written.read_text().splitlines()
            if len(lines) >= 2:  # the port, then the browser's path: written whole
                return int(lines[0])
        if process.poll() is not None:
            raise AssertionError(f"chromium ended ({process.returncode}): see {profile}/log")
        if loop.time() > deadline:
            raise AssertionError(f"chromium wrote no DevToolsActivePort in {profile}")
        await asyncio.sleep(POLL)


@contextlib.asynccontextmanager
async def chromium_page(profile: Path, *, width: int, height: int) -> AsyncIterator[Page]:
    """A headless Chromium with a fresh profile in ``profile``, and its one page, blank, with
    :data:`NOTE_THE_TERMINAL` set to run in every document it loads."""
    assert CHROMIUM is not None, NO_CHROMIUM
    profile.mkdir(parents=True, exist_ok=True)
    with (profile / "log").open("wb") as log:
        process = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",  # root in a container has no user namespaces to sandbox with
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--remote-debugging-port=0",
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # its own process group: stopped whole at the end
        )
    try:
        port = await _devtools_port(profile, process)
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/json/list") as response:
                targets = await response.json()
            [target] = [t for t in targets if t["type"] == "page"]
            async with session.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0) as socket:
                page = Page(socket)
                await page.call("Page.enable")
                await page.call("Page.addScriptToEvaluateOnNewDocument", source=NOTE_THE_TERMINAL)
                yield page
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the group this test started, by its id
        process.wait()
