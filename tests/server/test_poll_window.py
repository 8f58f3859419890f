"""A poll's page from the feed's window (``Live.page``): the log's page, never an older one.

The server serves a page of events from the window the change feed fills when the window
holds it whole, up to the projection's head, so that an agent's poll right after its own write
(which the projection holds before the feed delivers it) still sees that write; events before
the window are read into it from the log once, while it has room."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from engine.protocol.commands import Actor
from engine.workspace import Workspace
from pact_tui.server import live as live_module
from pact_tui.server.live import Live
from tests.server.served import make_workspace

BUDGET = "sec:plan/budget"


async def _until(check: Any, what: str) -> Any:
    """Poll ``check()`` until it is truthy (a 20 s deadline)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 20
    while not (value := check()):
        assert loop.time() < deadline, f"not in 20 s: {what}"
        await asyncio.sleep(0.01)
    return value


@asynccontextmanager
async def following(ws: Path) -> AsyncIterator[tuple[Workspace, Live]]:
    """The workspace at ``ws`` opened as the server opens it, and a ``Live`` following its
    change feed (caught up), stopped and closed afterwards."""
    workspace = await Workspace.open(ws, watch=True, lazy=True, read_only=False)
    try:
        live = Live(workspace)
        follower = asyncio.create_task(live.follow())
        await live.followed.wait()
        try:
            yield workspace, live
        finally:
            follower.cancel()
            await asyncio.gather(follower, return_exceptions=True)
    finally:
        await workspace.close()


def test_pages_from_the_window_are_the_logs_and_never_behind_the_projection(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)

    async def run() -> None:
        async with following(ws) as (workspace, live):
            doc = (await workspace.load_document("plan")).doc
            first = doc.sequence  # the feed hands on the events from this one
            await workspace.run_document("plan", {"op": "join", "agentName": "a"}, Actor.agent("a"))
            for n in range(12):
                command = {"op": "comment", "sectionId": BUDGET, "text": f"c{n}"}
                await workspace.run_document("plan", command, Actor.agent("a"))
                # Right after the write the projection may hold what the feed has not handed
                # on yet: the page reads it from the log, and ends with the write all the same.
                page = await live.page("plan", first, 100, doc.sequence)
                assert page is not None and page[-1]["sequenceNumber"] == doc.sequence - 1
            await _until(lambda: live._page("plan", first, 100, doc.sequence), "the window")
            assert live._page("plan", 0, 100, doc.sequence) is None  # the creation: before
            # From the start: the events before the window are read into it, once.
            for since in range(0, doc.sequence + 1):
                for count in (1, 3, 100):
                    page = await live.page("plan", since, count, doc.sequence)
                    assert page is not None
                    wanted = await workspace.document_events("plan", since, count)
                    assert [dict(e) for e in page] == wanted, (since, count)
            assert live._page("plan", 0, 100, doc.sequence) is not None

    asyncio.run(run())


def test_the_window_keeps_the_latest_events(tmp_path: Path, monkeypatch: Any) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    monkeypatch.setattr(live_module, "WINDOW", 4)

    async def run() -> None:
        async with following(ws) as (workspace, live):
            doc = (await workspace.load_document("plan")).doc
            await workspace.run_document("plan", {"op": "join", "agentName": "a"}, Actor.agent("a"))
            for n in range(6):
                command = {"op": "comment", "sectionId": BUDGET, "text": f"c{n}"}
                await workspace.run_document("plan", command, Actor.agent("a"))
            head = doc.sequence
            await _until(lambda: live._page("plan", head - 4, 10, head), "the last four")
            # Past the window's room: read from the log (None), the window left as it is.
            assert await live.page("plan", head - 5, 10, head) is None
            page = await live.page("plan", head - 4, 10, head) or []
            assert [e["sequenceNumber"] for e in page] == list(range(head - 4, head))

    asyncio.run(run())
