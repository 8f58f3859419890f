"""An item's story told from the log (the detail pane's history), however the workspace was
opened: a checkpoint that covers the item's birth hides none of it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from engine.context import NotFound
from engine.context.timeline import StoryEvent
from engine.store import SqliteEventStore
from engine.workspace import ContextProjection, Workspace, cadence

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
    return placed.id


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
    assert [(e.detail, e.times) for e in moves] == [("d0 → d40 · a new message", 40)]


async def test_moves_since_the_last_snapshot_are_told(tmp_path: Path) -> None:
    path, clock = tmp_path / "w.pact", ManualClock()
    note = await build(path, clock, messages=4)  # the last snapshot: none after 4 messages
    async with await Workspace.open(path, clock=clock, watch=False) as ws:
        await ws.add_message("agent", "user", "one more")
        story = await ws.item_story("agent", note)
    moved = [e for e in story if e.what == "moved"]
    assert moved[-1].detail == "d0 → d5 · a new message" and moved[-1].times == 5


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


async def test_a_story_is_read_from_the_index_not_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 27: a story replayed the context's log (18 s at 100k items) and kept the replay
    (it made every later full collection take seconds)."""
    small_checkpoints(monkeypatch, every=10, archive_every=7, on_close=1)
    path, clock = tmp_path / "w.pact", ManualClock()
    note = await build(path, clock, messages=30)
    replayed: list[int] = []
    real = ContextProjection.replay

    def counting(self: ContextProjection, event: object) -> None:
        replayed.append(event.stream_seq)  # type: ignore[attr-defined]
        real(self, event)  # type: ignore[arg-type]

    async with await Workspace.open(path, clock=clock, watch=False) as ws:
        monkeypatch.setattr(ContextProjection, "replay", counting)
        first = await ws.item_story("agent", note)
        await ws.add_message("agent", "user", "later")
        story = await ws.item_story("agent", note)
        assert replayed == []
        # (a past snapshot's view is rebuilt from an archive; its story is read all the same)
        past = await ws.item_story("agent", note, at=ws.snapshots("agent")[0].id)
    assert [(e.what, e.detail, e.times) for e in first if e.what != "born"] == [
        ("moved", "d0 → d30 · a new message", 30)
    ]
    assert story[-1].detail == "d0 → d31 · a new message" and story[-1].times == 31
    assert [(e.what, e.times) for e in past] == [("born", 1), ("moved", 5)]


async def test_a_neighbour_pushing_it_within_its_slot_is_told(tmp_path: Path) -> None:
    """The changelog does not list neighbours pushed outward in a slot: the story says where
    it was found instead, so that it ends where the item is."""
    path, clock = tmp_path / "w.pact", ManualClock()
    note = await build(path, clock, messages=0)
    async with await Workspace.open(path, clock=clock, watch=False) as ws:
        await ws.insert("agent", "d0, 1, 0", {"content": "pushes the note outward"})
        await ws.add_message("agent", "user", "one deeper")
        story = await ws.item_story("agent", note)
        here = ws.context("agent").find(note)
    assert here is not None and here.coordinates == (1, 1, 1)
    assert [(e.what, e.detail) for e in story] == [
        ("born", "(0,1,0) · inserted"),
        ("moved", "d0 → d1 · a new message"),
        ("moved", "(1,1,0) → (1,1,1) · others placed or removed in its slot"),
    ]


async def test_every_item_s_story_ends_at_its_depth(tmp_path: Path) -> None:
    """Over messages, inserts at several depths, expiries, deletes that empty turns (the
    deeper ones come up) and render stages, each item's story ends where the item is."""
    path, clock = tmp_path / "w.pact", ManualClock()
    async with await Workspace.open(path, create=True, clock=clock, watch=False) as ws:
        await ws.create_context("agent")
        for round_ in range(12):
            await ws.add_message("agent", "user", f"q{round_}")
            await ws.insert("agent", "d0, 1, 0", {"content": f"note {round_}"})
            await ws.insert("agent", "d0, 2, 0", {"content": f"soon {round_}", "ttl": 2})
            await ws.insert("agent", "d0, -1, 0", {"content": f"pre {round_}", "ttl": 1, "cad": 1})
            await ws.add_message("agent", "assistant", f"a{round_}")
            if round_ % 3 == 2:
                await ws.run("agent", {"op": "delete", "selector": "d3"})
            await ws.advance("agent")
        context = ws.context("agent")
        items = [node for node in context.select("*") if node.item is not None]
        assert len(items) > 20
        for node in items:
            story = await ws.item_story("agent", node.id)
            assert story[0].what == "born"
            # Only neighbours in its slot move it unlisted: the depth comes from the log.
            for event in story:
                if event.detail.endswith("in its slot"):
                    before, after = event.detail.split(" · ")[0].split(" → ")
                    assert before.split(",")[0] == after.split(",")[0], (node.id, story)


@pytest.mark.parametrize("saved", [None, "{", '{"items": {}, "shifts": "AAA"}'])
async def test_a_checkpoint_without_the_index_is_indexed_once_and_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, saved: str | None
) -> None:
    """A checkpoint written before stories were indexed (or whose index cannot be read): the
    index is built from the changelogs stored in the log (no replay), and saved with the
    context's next checkpoint."""
    small_checkpoints(monkeypatch, every=10, archive_every=7, on_close=1)
    path, clock = tmp_path / "w.pact", ManualClock()
    real_dump = ContextProjection.dump

    def without_stories(self: ContextProjection, **kwargs: Any) -> dict[str, Any]:
        data = real_dump(self, **kwargs)
        data.pop("stories", None)
        if saved is not None:
            data["stories"] = saved
        return data

    monkeypatch.setattr(ContextProjection, "dump", without_stories)
    note = await build(path, clock, messages=20)
    monkeypatch.setattr(ContextProjection, "dump", real_dump)
    async with await Workspace.open(path, clock=clock, watch=False) as ws:
        assert (ws._projection("agent").stories is None) == (saved is None)
        story = await ws.item_story("agent", note)
        assert ws._projection("agent").stories is not None
    assert [(e.detail, e.times) for e in story if e.what == "moved"] == [
        ("d0 → d20 · a new message", 20)
    ]
    async with await Workspace.open(path, clock=clock, watch=False) as ws:
        stories = ws._projection("agent").stories
        assert stories is not None and stories.events(note)  # saved on closing


async def test_an_item_that_is_not_there_has_no_story(tmp_path: Path) -> None:
    path, clock = tmp_path / "w.pact", ManualClock()
    await build(path, clock, messages=1)
    async with await Workspace.open(path, clock=clock, watch=False) as ws:
        with pytest.raises(NotFound):
            await ws.item_story("agent", "n9999")


async def test_a_past_snapshot_asked_after_live_leaves_out_the_later_moves(tmp_path: Path) -> None:
    """The replay is kept from live: a snapshot asked after it must not get moves merged in
    from after its own event."""
    path, clock = tmp_path / "w.pact", ManualClock()
    note = await build(path, clock, messages=10)
    async with await Workspace.open(path, clock=clock, watch=False) as ws:
        first = ws.snapshots("agent")[0]  # the advance after five messages
        now = await ws.item_story("agent", note)
        past = await ws.item_story("agent", note, at=first.id)
    assert [(e.detail, e.times) for e in now if e.what == "moved"] == [
        ("d0 → d10 · a new message", 10)
    ]
    assert [(e.detail, e.times) for e in past if e.what == "moved"] == [
        ("d0 → d5 · a new message", 5)
    ]


async def test_two_rebuilds_of_old_snapshots_at_once_both_come_out_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The screen, its diff and an item's story may each rebuild an old snapshot at the same
    time: they must not replay onto the one kept projection together."""
    # No archives: every rebuild starts from the context's creation, so a rebuild in flight is
    # reusable by one for an earlier snapshot; small reads, so that they interleave.
    small_checkpoints(monkeypatch, every=10, archive_every=10**6, on_close=1)
    monkeypatch.setattr(cadence, "READ_BATCH", 2)
    path, clock = tmp_path / "w.pact", ManualClock()
    await build(path, clock, messages=60)
    expected = {
        entry.id: (await replayed_to(path, entry.stream_seq))
        for entry in (await snapshots_of(path))[2:12:3]
    }
    async with await Workspace.open(path, clock=clock, watch=False) as ws:
        ids = list(expected)
        assert all(ws.snapshot_in_memory("agent", sid) is None for sid in ids)
        await ws.at_snapshot("agent", ids[0])  # the kept projection: reusable by the others
        views = await asyncio.gather(*(ws.at_snapshot("agent", sid) for sid in reversed(ids)))
        got = {sid: view.model_dump_json() for sid, view in zip(reversed(ids), views, strict=True)}
        assert got == expected
        again = await ws.at_snapshot("agent", ids[0])  # the kept projection is still sound
        assert again.model_dump_json() == expected[ids[0]]


async def snapshots_of(path: Path) -> list[Any]:
    async with await Workspace.open(path, watch=False) as ws:
        return ws.snapshots("agent")


async def replayed_to(path: Path, stream_seq: int) -> str:
    """The export of the snapshot an event records, by a replay from the first event."""
    projection = None
    async with await SqliteEventStore.open(path, watch=False) as store:
        for event in await store.read_stream("ctx:agent", 0, limit=stream_seq):
            if projection is None:
                projection = ContextProjection.fresh(event.time_ns)
            projection.replay(event)
    assert projection is not None
    latest = projection.context.history.latest
    assert latest is not None
    return projection.context.history.at_snapshot(latest.id).model_dump_json()
