"""A context's checkpoint keeps its newest snapshots (``cadence.RECENT_SNAPSHOTS``), sharing turns
with the state it holds: reopened, ``diff -1 now`` reads them, not a replay from an archive,
and says what the oracle says of the states a replay of the whole log builds. A checkpoint
written before they were kept still opens, and the past is then rebuilt as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.context.history import diff_views
from engine.store import SqliteEventStore
from engine.workspace import CONTEXT_CHECKPOINT, Workspace
from engine.workspace.checkpoints import decode_checkpoint, encode_checkpoint

from .conftest import ManualClock, replay_from_scratch, run_every_operation, small_checkpoints


async def _written(path: Path) -> None:
    async with await Workspace.open(path, create=True, clock=ManualClock(), watch=False) as ws:
        await run_every_operation(ws)
        for number in range(6):
            await ws.add_message("agent", "user", f"and then {number}")
            await ws.advance("agent")


async def _diffs_as_the_log_says(ws: Workspace, path: Path) -> list[str]:
    """Each snapshot's diff with now, checked against the oracle on a replay of the whole log;
    the ids of those this process held without a rebuild."""
    scratch = (await replay_from_scratch(path))["agent"].context
    held = []
    for entry in ws.snapshots("agent"):
        if ws.snapshot_in_memory("agent", entry.id) is not None:
            held.append(entry.id)
        past = scratch.history.at_snapshot(entry.id)
        assert await ws.diff("agent", entry.id, None) == diff_views(past, scratch)
    return held


async def test_the_newest_snapshots_come_with_the_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_checkpoints(monkeypatch, every=5, archive_every=4, on_close=1, recent=3)
    path = tmp_path / "w.pact"
    await _written(path)
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        entries = ws.snapshots("agent")
        newest = [e.id for e in entries[-3:]]
        # Held before any diff asked for one: read from the checkpoint, not rebuilt.
        assert [ws.snapshot_in_memory("agent", i) is not None for i in newest] == [True] * 3
        assert ws.snapshot_in_memory("agent", entries[0].id) is None
        assert await _diffs_as_the_log_says(ws, path) >= newest
        assert ws.checkpoint_problem is None


async def test_a_checkpoint_written_before_the_recent_past_was_kept_still_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_checkpoints(monkeypatch, every=5, archive_every=4, on_close=1, recent=3)
    path = tmp_path / "old.pact"
    await _written(path)
    name = CONTEXT_CHECKPOINT + "agent"
    async with await SqliteEventStore.open(path, watch=False) as store:
        checkpoint = await store.load_checkpoint(name)
        assert checkpoint is not None
        data = decode_checkpoint(checkpoint.data)
        assert len(data.pop("recent")) == 3  # as an earlier release wrote it: no such key
        await store.save_checkpoint(name, checkpoint.seq, encode_checkpoint(data))
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        entries = ws.snapshots("agent")
        assert all(ws.snapshot_in_memory("agent", e.id) is None for e in entries)
        assert await _diffs_as_the_log_says(ws, path) == []  # every one rebuilt, and right
        assert ws.checkpoint_problem is None
