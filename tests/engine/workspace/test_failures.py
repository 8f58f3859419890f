"""When the store fails around a command: the projections stay equal to the log, and a command
that is in the log is never reported as refused."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from engine.documents import DOC_PREFIX
from engine.protocol.commands import Actor
from engine.protocol.document import Document
from engine.protocol.persist import dump_document
from engine.store import SqliteEventStore, StorageFailure, StoredEvent, WorkspaceLocked
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
    assert result.episode == 1
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

    async def refuse(*_args: Any, **_options: Any) -> None:
        raise WorkspaceLocked("another process holds the write lock", path=str(ws.path))

    monkeypatch.setattr(ws.store, "save_checkpoint", refuse)
    result = await ws.run("agent", {"op": "advance"})
    assert result.episode == 1  # committed, and said so
    assert ws.checkpoint_problem is not None and "could not be saved" in ws.checkpoint_problem
    head = ws.head
    await ws.close()  # the checkpoint on close fails too: the store still closes
    events: Sequence[StoredEvent] = []
    async with await Workspace.open(tmp_path / "w.pact", watch=False) as reopened:
        events = await reopened.store.read(0)
        assert reopened.context("agent").current_episode == 1
    assert events[-1].seq == head


# -- documents (issue 24, bug 2: ContextNotLoaded on the screen after a cancelled tick) ----------
async def document_world(tmp_path: Path, clock: ManualClock) -> Workspace:
    """A document whose only agent is silent past its eviction: a tick has work to do."""
    ws = await Workspace.open(tmp_path / "w.pact", create=True, clock=clock, watch=False)
    await ws.create_document("plan", "# Plan\n\nText.\n", human="ann")
    await ws.run_document("plan", {"op": "join", "agentName": "bot"}, Actor.agent("bot"))
    clock.now += 10 * 60 * 1_000_000_000  # ten quiet minutes: the agent is due for eviction
    return ws


async def the_log(path: Path, name: str) -> dict[str, Any]:
    """The document folded from its whole stream in the file, checkpoints ignored, dumped."""
    async with await SqliteEventStore.open(path, watch=False, read_only=True) as store:
        events = await store.read_stream(DOC_PREFIX + name, 0)
    doc = Document()
    for event in events:
        doc.apply(event.payload)
    return dump_document(doc)


class CancellingClock(ManualClock):
    """Cancels ``task`` when read while it is set: a tick cancelled from inside its decision,
    after it began to change the document (as a newer tick of an exclusive worker cancels it)."""

    task: asyncio.Task[Any] | None = None

    def __call__(self) -> int:
        if self.task is not None:
            self.task.cancel()
            self.task = None
        return self.now


async def test_a_tick_cancelled_while_deciding_never_drops_the_loaded_document(
    tmp_path: Path,
) -> None:
    """The custodian's screen reads the document every second; a tick cancelled mid-decision
    dropped it, and the screen's next read raised ContextNotLoaded and ended the app."""
    clock = CancellingClock()
    ws = await document_world(tmp_path, clock)
    shown = ws.document("plan")
    tick = asyncio.ensure_future(ws.tick_document("plan"))
    clock.task = tick
    with pytest.raises(asyncio.CancelledError):
        await tick
    assert ws.document("plan") is shown  # still loaded, what was decided shown meanwhile
    # It is read again from the log (committed or not, what the log holds is what is shown).
    projection = await ws.load_document("plan")
    assert dump_document(projection.doc) == await the_log(ws.path, "plan")
    decision = await ws.tick_document("plan")  # and it goes on
    assert dump_document(ws.document("plan")) == await the_log(ws.path, "plan")
    assert len(decision.events) in (0, 1)  # the eviction, unless the cancelled tick committed it
    await ws.close()


async def test_a_store_failure_after_deciding_a_document_keeps_it_loaded_as_the_log_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = await document_world(tmp_path, ManualClock())
    real_execute = ws.store.execute

    async def decide_then_fail(decide: Any) -> list[StoredEvent]:
        decide([])  # the projection changes, as in a real command: the agent is evicted
        raise StorageFailure("the disk is full", path=str(ws.path))

    monkeypatch.setattr(ws.store, "execute", decide_then_fail)
    with pytest.raises(StorageFailure):
        await ws.tick_document("plan")
    monkeypatch.setattr(ws.store, "execute", real_execute)
    doc = ws.document("plan")  # never ContextNotLoaded
    assert dump_document(doc) == await the_log(ws.path, "plan")  # read again: nobody evicted
    assert [a.active for a in doc.agents.values()] == [True]
    decision = await ws.tick_document("plan")
    assert [e["eventType"] for e in decision.events] == ["pact.agent.evicted"]
    assert dump_document(ws.document("plan")) == await the_log(ws.path, "plan")
    await ws.close()
