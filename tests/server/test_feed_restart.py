"""The server's follower survives a failing change feed: it reads again from the last event it
delivered (nothing missed, nothing twice), and gives up with ``FeedFailed`` if it keeps failing."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from engine.store import StoreError
from engine.workspace import Change, Workspace
from pact_tui.server import live as live_module
from pact_tui.server.live import FeedFailed, Live
from tests.server.served import HUMAN, START_TIMEOUT, make_workspace, pact
from tests.web_server import REPO_ROOT

BUDGET = "sec:plan/budget"


class FailingFeed(Workspace):
    """A real workspace whose change feed breaks after ``breaks_after`` batches, ``fails`` times
    (every time if ``fails`` is None)."""

    breaks_after = 1
    fails: int | None = 1
    reads: list[int | None]

    async def changes(self, after: int | None = None) -> AsyncIterator[Change]:
        self.reads.append(after)
        failing = self.fails is None or self.fails > 0
        batches = 0
        async for change in super().changes(after):
            yield change
            batches += 1
            if failing and batches >= self.breaks_after:
                if self.fails is not None:
                    self.fails -= 1
                raise StoreError("the feed broke", path=str(self.path))
        if failing and self.fails is not None:
            self.fails -= 1


def comment(ws: Path, text: str) -> None:
    ran = pact("tap", "comment", ws, "plan", "--human", HUMAN,
               "--section", BUDGET, "--text", text)  # fmt: skip
    assert ran.returncode == 0, ran.stderr


async def _next(queue: asyncio.Queue[dict[str, Any] | None]) -> dict[str, Any]:
    item = await asyncio.wait_for(queue.get(), 20)
    assert item is not None
    return item


def test_a_broken_feed_is_read_again_from_the_last_event_delivered(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)

    async def run() -> tuple[list[dict[str, Any]], list[int | None], int]:
        workspace = await FailingFeed.open(ws, watch=True, lazy=True, read_only=False)
        workspace.reads = []
        try:
            live = Live(workspace)
            queue = live.subscribe("plan")
            follower = asyncio.create_task(live.follow())
            await live.followed.wait()
            got = []
            for text in ("one", "two", "three"):
                await asyncio.to_thread(comment, ws, text)
                got.append(await _next(queue))
            assert not follower.done()
            follower.cancel()
            await asyncio.gather(follower, return_exceptions=True)
            return got, workspace.reads, live.restarts
        finally:
            await workspace.close()

    got, reads, restarts = asyncio.run(run())
    texts = [json.loads(event["payloadJson"])["text"] for event in got]
    assert texts == ["one", "two", "three"]  # nothing missed, nothing twice
    seqs = [event["sequenceNumber"] for event in got]
    assert seqs == sorted(set(seqs))
    assert restarts == 1
    # The second read started at the one event (global sequence) the broken feed delivered.
    assert len(reads) == 2 and reads[0] is not None and reads[1] == reads[0] + 1


def test_a_feed_that_keeps_failing_stops_the_follower(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    monkeypatch.setattr(live_module, "FEED_BACKOFF_S", 0.0)

    class AlwaysFailing(FailingFeed):
        fails = None

        async def changes(self, after: int | None = None) -> AsyncIterator[Change]:
            self.reads.append(after)
            raise StoreError("the feed broke", path=str(self.path))
            yield  # pragma: no cover - makes this an async generator

    async def run() -> tuple[BaseException | None, list[int | None]]:
        workspace = await AlwaysFailing.open(ws, watch=True, lazy=True, read_only=False)
        workspace.reads = []
        try:
            live = Live(workspace)
            follower = asyncio.create_task(live.follow())
            done = await asyncio.gather(follower, return_exceptions=True)
            return done[0], workspace.reads
        finally:
            await workspace.close()

    error, reads = asyncio.run(run())
    assert isinstance(error, FeedFailed)
    assert error.code == "FEED_FAILED" and "stopped" in str(error)
    assert len(reads) == live_module.FEED_RETRIES + 1


def test_a_server_whose_workspace_file_goes_bad_under_it_stops_with_one_line(
    tmp_path: Path,
) -> None:
    """A real ``pact-tui serve`` process whose workspace file, its write-ahead log and its
    shared memory are overwritten with noise under it (a disk gone bad): its change feed fails
    for real, is read again five times, and the process stops with one line on stderr
    (FEED_FAILED) and status 1 rather than serve stale documents."""
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    errors = tmp_path / "stderr.txt"
    with errors.open("wb") as said:
        process = subprocess.Popen(
            [sys.executable, "-m", "pact_tui", "serve", str(ws), "--port", "0", "--json"],
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=said,
            start_new_session=True,
        )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith(b"Serving ")  # it follows the feed now
        for part in (ws, ws.with_name(ws.name + "-wal"), ws.with_name(ws.name + "-shm")):
            if part.exists():
                with part.open("r+b") as file:
                    file.write(os.urandom(part.stat().st_size))
        # Five restarts after 0.2, 0.4, … 3.2 s: about 6 s.
        status = process.wait(timeout=START_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    lines = errors.read_text().splitlines()
    assert status == 1, lines
    assert len(lines) == 1, lines
    error = json.loads(lines[0])["error"]
    assert error["code"] == "FEED_FAILED", error
    assert error["path"] == str(ws)
    assert "failed 6 times in a row" in error["message"], error  # the first, and 5 restarts
    assert "the server stopped rather than serve stale documents" in error["message"], error
