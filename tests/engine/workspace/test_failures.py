"""When the store fails around a command: the projections stay equal to the log, and a command
that is in the log is never reported as refused."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from engine.store import StorageFailure, StoredEvent, WorkspaceLocked
from engine.workspace import Workspace

from .conftest import ManualClock, replay_from_scratch, small_checkpoints


async def opened(tmp_path: Path) -> Workspace:
    ws = await Workspace.open(tmp_path / "w.pact", create=True, clock=ManualClock(), watch=False)
    await ws.create_context("agent")
    await ws.run("agent", {"op": "message", "role": "user", "text": "hi"})
    return ws


async def test_a_commit_that_fails_after_deciding_leaves_the_projection_equal_to_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = await opened(tmp_path)
    before = ws.context("agent").model_dump_json()
    real_execute = ws.store.execute

    async def decide_then_fail(decide: Any) -> list[StoredEvent]:
        decide([])  # the projection changes, as in a real command
        raise StorageFailure("the disk is full", path=str(ws.path))

    monkeypatch.setattr(ws.store, "execute", decide_then_fail)
    with pytest.raises(StorageFailure):
        await ws.run("agent", {"op": "advance"})
    monkeypatch.setattr(ws.store, "execute", real_execute)
    assert ws.context("agent").model_dump_json() == before  # rebuilt from the log
    assert ws.context("agent").current_episode == 0
    # And it goes on: the next command is the one the log gets.
    result = await ws.run("agent", {"op": "advance"})
    assert result["episode"] == 1
    await ws.close()
    replayed = await replay_from_scratch(tmp_path / "w.pact")
    assert replayed["agent"].context.current_episode == 1


async def test_a_lock_that_is_never_granted_changes_nothing_and_rebuilds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = await opened(tmp_path)
    context = ws.context("agent")

    async def locked(decide: Any) -> list[StoredEvent]:
        raise WorkspaceLocked("another process holds the write lock", path=str(ws.path))

    monkeypatch.setattr(ws.store, "execute", locked)
    with pytest.raises(WorkspaceLocked):
        await ws.run("agent", {"op": "advance"})
    assert ws.context("agent") is context  # decide never ran: nothing to rebuild
    await ws.store.close()


async def test_a_checkpoint_that_cannot_be_saved_does_not_refuse_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_checkpoints(monkeypatch, every=1, archive_every=1, on_close=1)
    ws = await opened(tmp_path)

    async def refuse(*_args: Any) -> None:
        raise WorkspaceLocked("another process holds the write lock", path=str(ws.path))

    monkeypatch.setattr(ws.store, "save_checkpoint", refuse)
    result = await ws.run("agent", {"op": "advance"})
    assert result["episode"] == 1  # committed, and said so
    assert ws.checkpoint_problem is not None and "could not be saved" in ws.checkpoint_problem
    head = ws.head
    await ws.close()  # the checkpoint on close fails too: the store still closes
    events: Sequence[StoredEvent] = []
    async with await Workspace.open(tmp_path / "w.pact", watch=False) as reopened:
        events = await reopened.store.read(0)
        assert reopened.context("agent").current_episode == 1
    assert events[-1].seq == head
