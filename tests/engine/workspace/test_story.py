"""An item's story told from the log (the detail pane's history), however the workspace was
opened: a checkpoint that covers the item's birth hides none of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.context import NotFound
from engine.context.timeline import StoryEvent
from engine.workspace import ContextProjection, Workspace

from .conftest import ManualClock, small_checkpoints


def whats(events: list[StoryEvent]) -> list[tuple[str, str]]:
    return [(e.what, e.detail) for e in events]


async def build(path: Path, clock: ManualClock, messages: int) -> str:
    """A note inserted at (0,1,0), then ``messages`` messages (each pushes it one deeper), with
    an advance now and then; returns the note's id."""
    async with await Workspace.open(path, create=True, clock=clock, watch=False) as ws:
        await ws.create_context("agent")
        await ws.add_message("agent", "user", "hello")
        placed = await ws.insert("agent", "d0, 1, 0", {"content": "note", "key": "note"})
        for number in range(messages):
            clock.tick()
            await ws.add_message("agent", "user", f"m{number}")
            if number % 5 == 4:
                await ws.advance("agent")
    return str(placed["id"])


async def test_after_reopening_a_checkpointed_workspace_the_birth_is_the_real_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report: "born at (33331,1,0)" for an item inserted at (0,1,0), because the history
    was built from the snapshots this process held."""
    small_checkpoints(monkeypatch, every=10, archive_every=7, on_close=1)
    path, clock = tmp_path / "w.pact", ManualClock()
    note = await build(path, clock, messages=40)
    async with await Workspace.open(path, clock=clock, watch=False) as ws:
        assert ws.snapshots("agent") and ws.context("agent").history.latest is None  # none held
        story = await ws.item_story("agent", note)
    assert story[0].what == "born" and story[0].detail == "(0,1,0) · inserted"
    assert story[0].episode == 0
    moves = [e for e in story if e.what == "moved"]
    assert moves[0].detail.startswith("(0,1,0) → ")
    assert moves[-1].detail.split(" → ")[1].startswith("(40,1,0)")
    assert sum(e.times for e in moves) == 40  # every message that pushed it, none missed


async def test_moves_since_the_last_snapshot_are_told(tmp_path: Path) -> None:
    path, clock = tmp_path / "w.pact", ManualClock()
    note = await build(path, clock, messages=4)  # the last snapshot: none after 4 messages
    async with await Workspace.open(path, clock=clock, watch=False) as ws:
        await ws.add_message("agent", "user", "one more")
        story = await ws.item_story("agent", note)
    moved = [e for e in story if e.what == "moved"]
    assert moved[-1].detail == "(0,1,0) → (5,1,0) · a new message" and moved[-1].times == 5


async def test_a_replace_is_told_at_once_not_at_the_next_snapshot(tmp_path: Path) -> None:
    path, clock = tmp_path / "w.pact", ManualClock()
    note = await build(path, clock, messages=0)
    async with await Workspace.open(path, clock=clock, watch=False) as ws:
        await ws.run(
            "agent", {"op": "update", "selector": "d0, 1, 0", "component": {"content": "v2"}}
        )
        assert "replaced" in [e.what for e in await ws.item_story("agent", note)]


async def test_a_past_snapshot_is_told_up_to_its_own_event(tmp_path: Path) -> None:
    path, clock = tmp_path / "w.pact", ManualClock()
    note = await build(path, clock, messages=10)
    async with await Workspace.open(path, clock=clock, watch=False) as ws:
        first = ws.snapshots("agent")[0]  # the advance after five messages
        past = await ws.item_story("agent", note, at=first.id)
        now = await ws.item_story("agent", note)
    assert sum(e.times for e in past if e.what == "moved") == 5
    assert sum(e.times for e in now if e.what == "moved") == 10


async def test_asking_again_replays_only_what_came_since(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, clock = tmp_path / "w.pact", ManualClock()
    note = await build(path, clock, messages=6)
    replayed: list[int] = []
    real = ContextProjection.replay

    def counting(self: ContextProjection, event: object) -> None:
        replayed.append(event.stream_seq)  # type: ignore[attr-defined]
        real(self, event)  # type: ignore[arg-type]

    async with await Workspace.open(path, clock=clock, watch=False) as ws:
        await ws.item_story("agent", note)
        monkeypatch.setattr(ContextProjection, "replay", counting)
        await ws.add_message("agent", "user", "later")
        story = await ws.item_story("agent", note)
    assert replayed == [ws.applied("agent")]  # the one new event, not the stream again
    assert story[-1].detail.endswith("· a new message")


async def test_an_item_that_is_not_there_has_no_story(tmp_path: Path) -> None:
    path, clock = tmp_path / "w.pact", ManualClock()
    await build(path, clock, messages=1)
    async with await Workspace.open(path, clock=clock, watch=False) as ws:
        with pytest.raises(NotFound):
            await ws.item_story("agent", "n9999")
