"""A workspace opened read-only: everything can be looked at, the past included, and nothing
is written, not even the checkpoint a read-write close saves (issue 10 §3)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from engine.store import ReadOnlyWorkspace
from engine.workspace import Workspace

from .conftest import ManualClock, exports, run_every_operation, small_checkpoints

pytestmark = pytest.mark.filterwarnings("error")


def stored(path: Path) -> tuple[object, ...]:
    uri = path.absolute().as_uri() + "?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as connection:
        return (
            connection.execute("SELECT MAX(seq) FROM events").fetchone(),
            connection.execute("SELECT name, seq, generation FROM checkpoints").fetchall(),
            connection.execute("SELECT COUNT(*) FROM checkpoint_chunks").fetchone(),
        )


async def test_a_read_only_workspace_shows_all_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "w.pact"
    clock = ManualClock()
    # No checkpoint while writing: a read-write close would save one for the whole log.
    small_checkpoints(monkeypatch, every=10**9, archive_every=10**9, on_close=10**9)
    async with await Workspace.open(path, create=True, clock=clock, watch=False) as ws:
        await run_every_operation(ws)
        expected = exports(ws)
        first = ws.snapshots("agent")[0]
        past = (await ws.at_snapshot("agent", first.id)).model_dump_json()
    monkeypatch.undo()  # closing read-write would checkpoint now
    before = stored(path)

    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        assert ws.read_only
        assert exports(ws) == expected
        assert (await ws.at_snapshot("agent", first.id)).model_dump_json() == past
        node = ws.context("agent").select("*")[0]
        assert await ws.item_story("agent", node.id)  # the past is read from the log
        refusals = [
            ws.run("agent", {"op": "advance"}),
            ws.create_context("other"),
            ws.checkpoint(),
        ]
        for refused in refusals:
            with pytest.raises(ReadOnlyWorkspace, match="read-only"):
                await refused
        assert exports(ws) == expected
    assert stored(path) == before
