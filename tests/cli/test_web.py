"""``pact-tui web``: what it refuses before listening (one line with a code, nothing served),
and, as a real process, the line it prints when it listens, its page, the websockets it turns
away, and its clean stop on SIGTERM. The app in a browser: tests/tui/test_web.py."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from tests.web_server import serving, web_server

from .conftest import cli, failed, ok

pytestmark = pytest.mark.e2e  # `pact-tui web` served, as a process, over HTTP


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws.pact"
    ok("ctx", "create", path, "agent")
    return path


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port another program listens on."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


def test_a_missing_workspace_is_refused_before_listening(tmp_path: Path) -> None:
    failed("web", tmp_path / "none.pact", code="WORKSPACE_NOT_FOUND")
    assert not (tmp_path / "none.pact").exists()  # nothing made


def test_a_file_that_is_no_workspace_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a workspace\n")
    failed("web", path, code="NOT_A_DATABASE")
    assert path.read_text() == "not a workspace\n"


def test_a_port_in_use_is_refused_in_one_line(workspace: Path, taken_port: int) -> None:
    ran = failed("web", workspace, "--port", taken_port, code="PORT_IN_USE")
    assert f"port {taken_port} is in use on 127.0.0.1" in ran.err


def test_an_address_not_of_this_machine_is_refused(workspace: Path) -> None:
    failed("web", workspace, "--host", "192.0.2.1", "--port", 0, code="CANNOT_LISTEN")


def test_every_address_at_once_is_refused(workspace: Path) -> None:
    """The page must name the address its browser uses: a wildcard names none."""
    failed("web", workspace, "--host", "0.0.0.0", code="USAGE")


def test_a_port_out_of_range_is_a_usage_error(workspace: Path) -> None:
    ran = cli("web", workspace, "--port", 70_000)
    assert ran.code == 2 and "70000 is not a port (0 to 65535)" in ran.err


def test_it_says_where_it_serves_and_serves_its_page_there(workspace: Path) -> None:
    """``--port 0``: a free port, named in the line printed once it listens (web_server reads
    it; SIGTERM then stops it with status 0 and a last line)."""
    with web_server(workspace) as served:
        assert served.url.startswith("http://127.0.0.1:")
        assert not served.url.endswith(":0")
        page = asyncio.run(fetch_page(served.url))
    assert f'data-session-websocket-url="ws://{served.url[len("http://") :]}/ws"' in page
    assert "pact-tui · ws.pact" in page


def test_a_websocket_from_another_site_is_turned_away(workspace: Path) -> None:
    """A page elsewhere (or a rebound host name) cannot start the app as the custodian."""
    with web_server(workspace) as served:
        refused = asyncio.run(open_websocket(served.url, origin="http://evil.example"))
        no_origin = asyncio.run(open_websocket(served.url, origin=None))
    assert refused == no_origin == 403
    assert "refused a websocket from 127.0.0.1 (origin 'http://evil.example')" in served.said
    assert "refused a websocket from 127.0.0.1 (origin none)" in served.said
    assert not any(line.startswith("a browser connected") for line in served.said)


async def fetch_page(url: str) -> str:
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        assert response.status == 200
        return await response.text()


async def open_websocket(url: str, *, origin: str | None) -> int:
    """The status a websocket handshake to the server's /ws gets (101: accepted)."""
    headers = {"Origin": origin} if origin is not None else {}
    async with aiohttp.ClientSession() as session:
        try:
            async with session.ws_connect(f"{url}/ws", headers=headers):
                return 101
        except aiohttp.WSServerHandshakeError as error:
            return error.status


def test_an_app_that_will_not_quit_does_not_outlive_the_server(tmp_path: Path) -> None:
    """An app's input ending does not end it (Textual's web driver): the server's stop tells
    each app to quit, then sends SIGTERM, then SIGKILL, and waits for it."""
    pidfile = tmp_path / "app.pid"
    stub = [sys.executable, str(Path(__file__).with_name("stubborn_web.py")), str(pidfile)]
    pid = None
    try:
        with serving(stub) as served:
            pid = asyncio.run(start_app(served.url, pidfile))
        assert not Path(f"/proc/{pid}").exists(), "the app outlived the server"
        assert "1 app(s) did not end in 0.5 s: SIGTERM" in served.said
        assert "1 app(s) did not end in 0.5 s: SIGKILL" in served.said
    finally:
        if pid is not None and Path(f"/proc/{pid}").exists():
            os.kill(pid, signal.SIGKILL)  # the app this test started, by its id


async def start_app(url: str, pidfile: Path) -> int:
    """Connect as the page would, until the app has started; its process id."""
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(f"{url}/ws", headers={"Origin": url}),
    ):
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while not pidfile.exists() or not pidfile.read_text():
            assert loop.time() < deadline, "the app never started"
            await asyncio.sleep(0.05)
        return int(pidfile.read_text())
