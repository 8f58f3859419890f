"""``Workspace.run_many``: several commands in one transaction, all appended or none."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.context import ContextError
from engine.workspace import Workspace

from .conftest import ManualClock, small_checkpoints, text


def note(n: int) -> dict[str, object]:
    return {"op": "insert", "selector": "d0, 1, 0", "component": text(f"note {n}", key=f"k{n}")}


async def test_a_batch_appends_one_event_per_command_and_replays_to_the_same_state(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.pact"
    clock = ManualClock()
    async with await Workspace.open(path, create=True, clock=clock, watch=False) as ws:
        await ws.create_context("agent")
        head = ws.head
        results = await ws.run_many(
            "agent",
            [{"op": "message", "role": "user", "text": "hi"}, note(1), {"op": "advance"}, note(2)],
        )
        assert [getattr(r, "episode", None) for r in results] == [None, None, 1, None]
        assert ws.head == head + 4
        events = await ws.store.read(head)
        assert [e.type for e in events] == [
            "context.message",
            "context.insert",
            "context.advance",
            "context.insert",
        ]
        export = ws.context("agent").model_dump_json()
        assert [e.id for e in ws.snapshots("agent")] == [results[2].snapshot]
    async with await Workspace.open(path, watch=False) as reopened:
        assert reopened.context("agent").model_dump_json() == export


async def test_a_refusal_in_the_middle_appends_nothing_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "w.pact"
    async with await Workspace.open(path, create=True, clock=ManualClock(), watch=False) as ws:
        await ws.create_context("agent")
        await ws.run("agent", {"op": "message", "role": "user", "text": "hi"})
        head, export = ws.head, ws.context("agent").model_dump_json()
        bad = {"op": "insert", "selector": "d7, 1, 0", "component": text("nowhere")}
        with pytest.raises(ContextError) as caught:
            await ws.run_many("agent", [note(1), {"op": "advance"}, bad, note(2)])
        assert caught.value.code == "NO_SUCH_DEPTH"
        assert ws.head == head
        assert ws.context("agent").model_dump_json() == export
        assert ws.snapshots("agent") == []
        # The ids the refused batch spent are handed out again, as a replay would.
        after = await ws.run("agent", note(3))
    async with await Workspace.open(path, watch=False) as reopened:
        assert reopened.context("agent").find(after.id) is not None
        assert reopened.context("agent").model_dump_json() == (
            ws.context("agent").model_dump_json()
        )


async def test_time_travel_works_when_a_batch_carries_an_archive_past_its_mark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_checkpoints(monkeypatch, every=10_000, archive_every=4, on_close=1)
    path = tmp_path / "w.pact"
    async with await Workspace.open(path, create=True, clock=ManualClock(), watch=False) as ws:
        await ws.create_context("agent")
        expected = {}
        for round_ in range(6):
            batch = [{"op": "message", "role": "user", "text": f"m{round_}"}, note(round_)]
            batch.append({"op": "advance"})
            [*_, advanced] = await ws.run_many("agent", batch)
            view = ws.context("agent").history.at_snapshot(advanced.snapshot)
            expected[advanced.snapshot] = view.model_dump_json()
    async with await Workspace.open(path, watch=False) as reopened:
        assert reopened.context("agent").history.snapshots == []  # all before this process
        for snapshot_id, export in expected.items():
            view = await reopened.at_snapshot("agent", snapshot_id)
            assert view.model_dump_json() == export


# -- create_context_streamed: an import's commands, a batch at a time, in one transaction ----------
class Command(dict[str, object]):
    """A command that can be watched being let go (a plain dict cannot be weakly referred to)."""


def conversation(count: int) -> list[dict[str, object]]:
    return [
        {"op": "message", "role": "user" if n % 2 == 0 else "assistant", "text": f"m{n}"}
        for n in range(count)
    ]


async def test_a_streamed_context_is_the_one_create_context_with_makes_and_replays_to_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.pact"
    commands = [*conversation(7), {"op": "seal", "trigger": "compacted-001"}, *conversation(4)]
    async with await Workspace.open(path, create=True, clock=ManualClock(), watch=False) as ws:
        await ws.create_context_with("whole", commands)
        head = ws.head
        ran = await ws.create_context_streamed("streamed", iter(commands), batch=3)
        assert ran == len(commands)
        assert ws.head == head + 1 + len(commands)
        export = ws.context("streamed").model_dump_json()
        assert export == ws.context("whole").model_dump_json()
        assert [s.trigger for s in ws.snapshots("streamed")] == ["compacted-001"]
        assert (await ws.store.verify()).ok
    async with await Workspace.open(path, watch=False) as reopened:
        assert reopened.context("streamed").model_dump_json() == export
        assert [s.trigger for s in reopened.snapshots("streamed")] == ["compacted-001"]


async def test_a_streamed_context_never_holds_every_command_at_once(tmp_path: Path) -> None:
    alive: list[weakref.ref[Command]] = []
    most = 0

    def made() -> Iterator[Command]:
        nonlocal most
        for command in conversation(200):
            gc.collect()
            most = max(most, sum(ref() is not None for ref in alive))
            made = Command(command)
            alive.append(weakref.ref(made))
            yield made

    async with await Workspace.open(
        tmp_path / "w.pact", create=True, clock=ManualClock(), watch=False
    ) as ws:
        assert await ws.create_context_streamed("agent", made(), batch=10) == 200
        assert len(ws.context("agent").render_provider()) == 200
    assert 0 < most <= 2 * 10  # the batch being made and the one before it, never the 200


@pytest.mark.parametrize("failing", ["refused", "raised"])
async def test_a_stream_that_fails_in_a_later_batch_appends_nothing(
    tmp_path: Path, failing: str
) -> None:
    path = tmp_path / "w.pact"

    def made() -> Iterator[dict[str, object]]:
        yield from conversation(25)  # batches of 10: two were written before the third fails
        if failing == "refused":
            yield {"op": "insert", "selector": "d999, 1, 0", "component": text("nowhere")}
            yield from conversation(2)
        else:
            raise ValueError("the conversation's line 26 is no message")

    async with await Workspace.open(path, create=True, clock=ManualClock(), watch=False) as ws:
        await ws.create_context("other")
        head = ws.head
        with pytest.raises(ContextError if failing == "refused" else ValueError):
            await ws.create_context_streamed("agent", made(), batch=10)
        assert ws.head == head
        assert "agent" not in [c.name for c in ws.contexts()]
        after = await ws.create_context_streamed("agent", iter(conversation(3)), batch=10)
        assert after == 3
        assert (await ws.store.verify()).ok
    async with await Workspace.open(path, watch=False) as reopened:
        assert [m["content"] for m in reopened.context("agent").render_provider()] == [
            "m0",
            "m1",
            "m2",
        ]
