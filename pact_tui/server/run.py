"""Running the server: uvicorn in the workspace's asyncio loop, until SIGINT or SIGTERM.

The socket is bound here, before uvicorn starts, so a port in use is one line and nothing
else started; the workspace is opened writable first, so a file it cannot write is refused the
same way. ``ready(url)`` is called once the server accepts connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import uvicorn

from engine.errors import CodedError

if TYPE_CHECKING:
    from engine.workspace import Workspace

    from .app import Server


SWITCH_INTERVAL_S = 0.0005
ACTIVITY_EVERY_S = 1.0  # how often the keys' last requests are written for the app


class CannotServe(CodedError):
    """The server could not start: nothing was started."""

    code = "CANNOT_SERVE"


class PortInUse(CannotServe):
    code = "PORT_IN_USE"


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (0: any free port); ``CannotServe`` if not."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise CannotServe(f"cannot listen on {host}: {error.strerror}", host=host) from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            raise PortInUse(
                f"port {port} on {host} is in use: stop what listens there, or give --port",
                host=host,
                port=port,
            ) from None
        raise CannotServe(
            f"cannot listen on {host}:{port}: {error.strerror}", host=host, port=port
        ) from None
    sock.setblocking(False)
    return sock


class _Uvicorn(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, ready: Callable[[], None]) -> None:
        super().__init__(config)
        self._ready = ready

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """SIGINT and SIGTERM end the server; unlike uvicorn's own, nothing is raised again
        after it stopped, so the workspace is closed and the command ends cleanly."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        stops = (signal.SIGINT, signal.SIGTERM)
        original = {sig: signal.signal(sig, self.handle_exit) for sig in stops}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._ready()


async def serve(
    path: Path | str,
    *,
    host: str,
    port: int,
    ready: Callable[[str], None],
    invite_only: bool = False,
    rate: float | None = None,
) -> None:
    """Serve the workspace at ``path`` (a file, or a ``postgresql://`` URL) until SIGINT or
    SIGTERM (``CannotServe`` if it cannot start; a workspace error as the workspace raises it)."""
    from engine.workspace import Workspace

    from .app import RATE, Server, build

    # The store's reads and writes run on their own threads and hand back to the loop many
    # times a request: with Python's default 5 ms switch interval, a hand-off waits for it
    # whenever the other thread is busy, and a hundred concurrent requests form a convoy.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    # A client gone mid-answer is no news: asyncio would say so on stderr for each write.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)

    if isinstance(path, Path) and not path.is_file():
        raise CannotServe(
            f"no workspace at {path}: make one with `pact-tui doc create {path} DOC --from FILE`",
            path=str(path),
        )
    workspace = await Workspace.open(path, watch=True, lazy=True, read_only=False)
    try:
        if isinstance(path, Path):  # a database refuses a write itself, with a code
            await _check_writable(workspace, path)
        sock = bind(host, port)
        try:
            server = Server(workspace, invite_only=invite_only, rate=RATE if rate is None else rate)
            app = build(server)
            shown_host = f"[{host}]" if ":" in host else host
            url = f"http://{shown_host}:{sock.getsockname()[1]}"
            config = uvicorn.Config(
                app,
                http=_http_protocol(),
                log_level="warning",
                lifespan="off",
                access_log=False,
                timeout_graceful_shutdown=5,
            )
            runner = _Uvicorn(config, lambda: ready(url))
            tasks = [
                asyncio.create_task(server.live.follow(), name="server-feed"),
                asyncio.create_task(server.live.fire_due(), name="server-due-work"),
            ]
            if isinstance(path, Path):
                tasks.append(asyncio.create_task(_tell(server, path), name="server-activity"))
            await server.live.followed.wait()
            failed: list[BaseException] = []

            def stop_if_failed(task: asyncio.Task[None]) -> None:
                """The follower gave up (``FeedFailed``): stop serving stale documents."""
                if not task.cancelled() and task.exception() is not None:
                    failed.append(task.exception())  # type: ignore[arg-type]
                    runner.should_exit = True

            tasks[0].add_done_callback(stop_if_failed)
            try:
                await runner.serve(sockets=[sock])
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
            if failed:
                raise failed[0]
        finally:
            sock.close()
    finally:
        await workspace.close()


async def _tell(server: Server, workspace: Path) -> None:
    """Write the keys' last requests beside the workspace for the app (``activity``), once a
    second when there were requests since; the file goes when the server stops."""
    from .activity import remove_activity, write_activity

    told, pid = 0, os.getpid()
    try:
        while True:
            await asyncio.sleep(ACTIVITY_EVERY_S)
            if server.heard != told:
                told = server.heard
                with contextlib.suppress(OSError):  # a hint: the next second tries again
                    await asyncio.to_thread(write_activity, workspace, pid, dict(server.seen))
    finally:
        remove_activity(workspace, pid)


async def _check_writable(workspace: Workspace, path: Path) -> None:
    """Refuse a workspace this process cannot write (a read-only file or folder)."""
    folder = path.parent if str(path.parent) else Path(".")
    if workspace.read_only or not os.access(path, os.W_OK) or not os.access(folder, os.W_OK):
        raise CannotServe(
            f"cannot write {path}: the server appends every agent's operation to it",
            path=str(path),
        )


def _http_protocol() -> str:
    """httptools (uvicorn's fast HTTP/1.1 parser) when installed, else h11."""
    try:
        import httptools  # noqa: F401
    except ImportError:
        return "h11"
    return "httptools"
