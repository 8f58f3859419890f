"""A context's snapshots as its checkpoint lists them (``SnapshotEntries``): made from their rows
only when read, and read as the list a replay of the log builds; rows of the wrong shape refuse
the checkpoint, which is then replayed instead."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.store import SqliteEventStore
from engine.workspace import CONTEXT_CHECKPOINT, Workspace
from engine.workspace import types as workspace_types
from engine.workspace.checkpoints import decode_checkpoint, encode_checkpoint
from engine.workspace.types import SnapshotEntries, SnapshotEntry

from .conftest import ManualClock, replay_from_scratch, run_every_operation, small_checkpoints


async def _written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Any]:
    """A workspace whose context has a checkpoint listing a few dozen snapshots, and the
    snapshots a replay of its log lists."""
    small_checkpoints(monkeypatch, every=5, archive_every=4, on_close=1)
    path = tmp_path / "w.pact"
    async with await Workspace.open(path, create=True, clock=ManualClock(), watch=False) as ws:
        await run_every_operation(ws)
        for number in range(8):
            await ws.add_message("agent", "user", f"and then {number}")
            await ws.advance("agent")
    return path, (await replay_from_scratch(path))["agent"].snapshots


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The indexes of the entries made from rows from now on."""
    made: list[int] = []
    load = SnapshotEntry.load.__func__  # type: ignore[attr-defined]

    def counted(cls: type[SnapshotEntry], index: int, row: list[Any]) -> SnapshotEntry:
        made.append(index)
        return load(cls, index, row)  # type: ignore[no-any-return]

    monkeypatch.setattr(workspace_types.SnapshotEntry, "load", classmethod(counted))
    return made


async def test_opening_makes_no_entry_until_one_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, replayed = await _written(tmp_path, monkeypatch)
    made = _counting(monkeypatch)
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        count = ws.snapshot_count("agent")
        assert count == len(replayed) > 10 and made == []
        assert ws.snapshot_at("agent", count - 2) == replayed[-2] and made == [count - 2]
        assert ws.snapshot_at("agent", count - 2) is ws.snapshot_at("agent", count - 2)
        assert made == [count - 2]  # made once
        assert ws.snapshots("agent") == list(replayed)
        assert sorted(made) == list(range(count))
        assert ws.checkpoint_problem is None


def test_entries_read_as_the_list_of_their_rows() -> None:
    rows = [[f"s{i}", i // 2, "advance", 1000 + i, 10 + i, 5 + i] for i in range(7)]
    expected = [SnapshotEntry.load(i, row) for i, row in enumerate(rows)]
    entries = SnapshotEntries([list(row) for row in rows])
    assert len(entries) == 7 and entries == expected and expected == entries
    assert entries[-1] == expected[-1] and entries[2:5] == expected[2:5]
    assert entries[::-3] == expected[::-3] and list(reversed(entries)) == expected[::-1]
    assert entries != expected[:-1] and entries != [*expected[:-1], expected[0]]
    with pytest.raises(IndexError):
        entries[7]
    with pytest.raises(IndexError):
        entries[-8]
    extra = SnapshotEntry("x", 7, 9, "seal", 1, 2, 3)
    entries.append(extra)
    assert entries[-1] is extra and entries == [*expected, extra]


@pytest.mark.parametrize(
    ("rows", "says"),
    [
        ({"s1": 1}, "a list of rows"),
        ([["s1", 1, "advance", 1, 2, 3], "s2"], "a list of rows"),
        ([["s1", 1, "advance", 1, 2]], "6 fields"),
        ([["s1", 1, "advance", 1, 2, 3, 4]], "6 fields"),
    ],
)
def test_rows_of_another_shape_are_refused(rows: Any, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        SnapshotEntries(rows)


async def test_a_checkpoint_whose_snapshot_rows_are_malformed_is_replayed_instead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, replayed = await _written(tmp_path, monkeypatch)
    name = CONTEXT_CHECKPOINT + "agent"
    async with await SqliteEventStore.open(path, watch=False) as store:
        checkpoint = await store.load_checkpoint(name)
        assert checkpoint is not None
        data = decode_checkpoint(checkpoint.data)
        data["snapshots"][3] = data["snapshots"][3][:4]  # a row cut short
        await store.save_checkpoint(name, checkpoint.seq, encode_checkpoint(data))
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        assert ws.snapshots("agent") == list(replayed)
        assert ws.checkpoint_problem is not None and "agent" in ws.checkpoint_problem
