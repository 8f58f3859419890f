"""``Workspace.run_many``: several commands in one transaction, all appended or none."""

from __future__ import annotations

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
