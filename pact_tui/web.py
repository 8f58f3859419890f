"""``pact-tui web``: the app in a browser, served by textual-serve (no second UI to maintain).

textual-serve's :class:`~textual_serve.server.Server` serves a page holding a terminal
(xterm.js) and, for each browser that connects to its websocket, starts one command and relays
its screen one way and the keys, the terminal's size and its focus the other. The command is
made here, once, from the options given (:func:`app_command`): ``exec python -m pact_tui open
WORKSPACE --human NAME …``, every argument quoted for the shell textual-serve runs it with. A
connection runs that and nothing else: what a browser sends reaches the app as keys, never the
command line.

What :class:`WebServer` adds to textual-serve's Server:

- a websocket is accepted only from the server's own page (its ``Origin``): a page elsewhere
  that the custodian happens to visit cannot open one to the loopback port and act as the
  custodian (a browser lets any page open a websocket anywhere), nor can a host name of the
  attacker's that resolves to 127.0.0.1 (DNS rebinding);
- the port is bound before anything is said: a port in use, or a host that is not this
  machine's, is refused in one line, and ``--port 0`` takes any free port and says which;
- ``Ctrl+C`` or SIGTERM stops it cleanly: each app it started is told to quit and waited for
  (then sent SIGTERM, then SIGKILL: none outlives the server);
- what the apps write on stderr, which textual-serve copies to its standard output, is made
  visible (:func:`engine.visible.visible`) on the way: it can quote the workspace.

Anyone who can reach the port acts as the custodian the apps run as: the server has no login
and no TLS. It listens on loopback unless told otherwise (``docs/web.md``).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import io
import ipaddress
import os
import shlex
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server

from engine.errors import CodedError
from engine.visible import visible

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
WILDCARD_HOSTS = ("0.0.0.0", "::", "")
STOP_WAIT = 10.0  # seconds an app may take to quit, then to end on SIGTERM, when the server stops


class CannotListen(CodedError):
    """The server could not listen where it was asked to: nothing was started."""

    code = "CANNOT_LISTEN"


class PortInUse(CannotListen):
    """Another program listens on the port already."""

    code = "PORT_IN_USE"


@dataclass(frozen=True)
class AppOptions:
    """The options of ``pact-tui open`` that every connection's app is started with."""

    workspace: Path
    human: str
    context: str | None = None
    document: str | None = None
    theme: str | None = None
    read_only: bool = False


def app_command(options: AppOptions) -> str:
    """The shell command that runs the app on the workspace, as the custodian: this Python, the
    workspace's absolute path (the server's folder does not matter), each argument quoted.
    ``exec``: the shell becomes the app, so the app is the server's child, signalled directly."""
    argv = [sys.executable, "-m", "pact_tui", "open", str(options.workspace.resolve())]
    argv += ["--human", options.human]
    for flag, value in (
        ("--context", options.context),
        ("--document", options.document),
        ("--theme", options.theme),
    ):
        if value is not None:
            argv += [flag, value]
    if options.read_only:
        argv.append("--read-only")
    return "exec " + shlex.join(argv)


def is_loopback(host: str) -> bool:
    """Only this machine can reach ``host``: ``localhost`` or a loopback address."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def url_host(host: str) -> str:
    """``host`` as a URL writes it: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


class WebServer(Server):
    """textual-serve's Server, for one command, with the checks and the clean stop above."""

    def __init__(
        self,
        command: str,
        *,
        host: str,
        port: int,
        title: str,
        say: Callable[[str], None],
        stop_wait: float = STOP_WAIT,
    ) -> None:
        super().__init__(command, host=host, port=port, title=title)
        self.stop_wait = stop_wait
        """Seconds an app may take to quit when the server stops, then to end on SIGTERM."""
        self.say = say
        """Where the server's own lines go (connections coming and going)."""
        self.connections: set[asyncio.Task[Any]] = set()
        """The websocket handlers running: one app each."""
        self.apps: dict[asyncio.Task[Any], AppService] = {}
        """Each handler's app, once started."""
        self.origins: frozenset[str] = frozenset()
        """The origins a websocket is accepted from, once the port is known."""

    async def on_startup(self, app: web.Application) -> None:
        """Says nothing: :meth:`run` says where it serves once the port is bound."""

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        origin = request.headers.get("Origin")
        if origin not in self.origins:
            shown = "none" if origin is None else repr(visible(origin))
            self.say(f"refused a websocket from {request.remote} (origin {shown})")
            raise web.HTTPForbidden(text="pact-tui web accepts its own page only\n")
        task = asyncio.current_task()
        assert task is not None
        self.connections.add(task)
        self.say(f"a browser connected from {request.remote} ({len(self.connections)} open)")
        try:
            return await super().handle_websocket(request)
        finally:
            self.connections.discard(task)
            self.apps.pop(task, None)
            self.say(f"a browser left ({len(self.connections)} open)")

    async def run(self, ready: Callable[[str], None]) -> None:
        """Listen, call ``ready`` with the page's address, serve until SIGINT or SIGTERM, then
        stop every app and the server. Raises :class:`CannotListen` if it cannot listen."""
        # textual-serve's serve() binds inside aiohttp's run_app, after printing, and stops on
        # a signal without waiting for the apps: the same application, run here step by step.
        runner = web.AppRunner(await self._make_app(), handle_signals=False)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.host, self.port)
            try:
                await site.start()
            except OSError as error:
                raise self._listen_error(error) from None
            self._listening_on(runner.addresses[0][1])
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for number in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(number, stop.set)
            try:
                ready(self.public_url)
                await stop.wait()
            finally:
                for number in (signal.SIGINT, signal.SIGTERM):
                    loop.remove_signal_handler(number)
            await site.stop()  # no new connections while the apps quit
            await self._stop_apps()
        finally:
            await runner.cleanup()

    def _listening_on(self, port: int) -> None:
        self.port = port
        self.public_url = f"http://{url_host(self.host)}:{port}"
        names = LOOPBACK_NAMES if is_loopback(self.host) else ()
        self.origins = frozenset({self.public_url} | {f"http://{name}:{port}" for name in names})

    def _listen_error(self, error: OSError) -> CannotListen:
        where = f"{url_host(self.host)}:{self.port}"
        if error.errno == errno.EADDRINUSE:
            return PortInUse(
                f"port {self.port} is in use on {self.host}: give another with --port"
                " (--port 0: any free port)",
                address=where,
            )
        # asyncio's message repeats the address; the system's names only what went wrong.
        number = error.errno
        reason = os.strerror(number) if number and number > 0 else (error.strerror or str(error))
        return CannotListen(f"cannot listen on {where}: {reason}", address=where)

    async def _process_messages(
        self, websocket: web.WebSocketResponse, app_service: AppService
    ) -> None:
        """textual-serve's, with the handler's app noted: the server stops it when it stops."""
        task = asyncio.current_task()
        assert task is not None
        self.apps[task] = app_service
        await super()._process_messages(websocket, app_service)

    async def _stop_apps(self) -> None:
        """Every app told to quit (what textual-serve does when its browser leaves), given
        ``stop_wait`` seconds, then SIGTERM (a Textual app quits on it), then SIGKILL: none
        outlives the server (an app whose input ends keeps running). Then each connection's
        handler is cancelled: its browser sees the session end."""
        processes = [p for service in self.apps.values() if (p := _process(service)) is not None]
        for service in self.apps.values():
            await service.send_meta({"type": "quit"})
        for signal_name in ("SIGTERM", "SIGKILL"):
            running = [p for p in processes if p.returncode is None]
            if running:
                await asyncio.wait(
                    [asyncio.ensure_future(p.wait()) for p in running], timeout=self.stop_wait
                )
            left = [p for p in running if p.returncode is None]
            if not left:
                break
            self.say(f"{len(left)} app(s) did not end in {self.stop_wait:g} s: {signal_name}")
            for process in left:
                with contextlib.suppress(ProcessLookupError):
                    process.send_signal(getattr(signal, signal_name))
        else:
            await asyncio.wait([asyncio.ensure_future(p.wait()) for p in processes])
        running_handlers = list(self.connections)
        for task in running_handlers:
            task.cancel()
        if running_handlers:
            await asyncio.wait(running_handlers, timeout=self.stop_wait)


def _process(service: AppService) -> asyncio.subprocess.Process | None:
    """The app's process (textual-serve keeps it private; pinned below 1.2)."""
    return service._process


class _VisibleStream(io.TextIOBase):
    """A text stream that writes what it is given made visible (lines kept)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(visible(text, multiline=True))
        self._stream.flush()  # a line about a connection is seen when it happens
        return len(text)

    def flush(self) -> None:
        self._stream.flush()


@contextlib.contextmanager
def visible_stdout() -> Iterator[None]:
    """Standard output made visible while serving: textual-serve copies each app's stderr
    (a traceback can quote the workspace) to it as it is."""
    with contextlib.redirect_stdout(_VisibleStream(sys.stdout)):
        yield


def serve(
    options: AppOptions,
    *,
    host: str,
    port: int,
    ready: Callable[[str], None],
    say: Callable[[str], None],
) -> None:
    """Serve the app on ``options.workspace`` until SIGINT or SIGTERM (see :class:`WebServer`).
    Raises :class:`CannotListen`."""
    title = f"pact-tui · {visible(options.workspace.name)}"
    server = WebServer(app_command(options), host=host, port=port, title=title, say=say)
    with visible_stdout():
        asyncio.run(server.run(ready))
