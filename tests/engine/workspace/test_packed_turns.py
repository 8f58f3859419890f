"""A context checkpoint whose packed turn is malformed (a forged one: its digest fixed by hand)
is not used, whenever that turn is first read: refused at opening when it is among the turns
a reader draws first, else when it is decoded later (``Workspace.unpacking``, or before a
command). Either way the context is rebuilt from its log, ``checkpoint_problem`` names the
context and the turn, and nothing is written."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from engine.context.compact import DRAWN_FIRST, PackedTurn
from engine.workspace import Workspace
from tests.forged_packed import forge_duplicate_ids, forge_packed_turn

TURNS = 2 * DRAWN_FIRST + 40  # some turns that opening leaves packed


async def many_turns(path: Path | str, turns: int = TURNS) -> str:
    """Context ``agent`` with ``turns`` turns of two items each, checkpointed (``path``: a
    workspace file, or a PostgreSQL URL): its export."""
    async with await Workspace.open(path, create=True, watch=False) as ws:
        await ws.create_context("agent")
        commands = []
        for n in range(turns):
            commands.append({"op": "message", "role": "user", "text": f"question {n}"})
            note = {"type": "text", "content": f"note {n}", "key": f"k{n}"}
            commands.append({"op": "insert", "selector": "d0, 1, 0", "component": note})
        await ws.run_many("agent", commands)
        await ws.checkpoint()
        return ws.context("agent").model_dump_json()


def stored(path: Path) -> tuple[object, ...]:
    """What the file holds: its events and its checkpoints' digests."""
    with closing(sqlite3.connect(path)) as connection:
        events = connection.execute("SELECT count(*), max(seq) FROM events").fetchone()
        caches = connection.execute("SELECT name, sha256 FROM checkpoints ORDER BY name")
        return (events, caches.fetchall())


async def test_a_malformed_turn_unpacked_after_opening_rebuilds_the_context_from_its_log(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.pact"
    export = await many_turns(path)
    turn_id = forge_packed_turn(path, "agent", TURNS // 2)
    before = stored(path)
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        assert ws.checkpoint_problem is None  # the turn is not read at opening
        opened = ws.context("agent")
        assert any(
            isinstance(turn, PackedTurn) and not turn.decoded
            for _depth, turn in opened.iter_turns()
        )
        left = [left async for left in ws.unpacking("agent", chunk=10)]
        assert left and left[-1] > 0  # it stopped at the malformed turn
        assert ws.context("agent") is not opened
        assert ws.context("agent").model_dump_json() == export  # the log's state
        problem = ws.checkpoint_problem
        assert problem is not None
        assert "context 'agent'" in problem and repr(turn_id) in problem and "replayed" in problem
        ws.build_indexes("agent")
    assert stored(path) == before


async def test_a_command_on_a_context_with_a_malformed_packed_turn_runs_on_the_logs_state(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.pact"
    await many_turns(path)
    turn_id = forge_packed_turn(path, "agent", TURNS // 2)
    async with await Workspace.open(path, watch=False) as ws:
        await ws.run_many("agent", [{"op": "delete", "selector": "#k70"}])
        assert list(ws.context("agent").key_candidates("k70")) == []
        problem = ws.checkpoint_problem
        assert problem is not None and repr(turn_id) in problem
    async with await Workspace.open(path, watch=False) as ws:  # its checkpoint saved anew
        assert [left async for left in ws.unpacking("agent")] == [0]
        assert list(ws.context("agent").key_candidates("k70")) == []
        assert ws.checkpoint_problem is None


@pytest.mark.parametrize("turn", [0, 5, DRAWN_FIRST - 1, -DRAWN_FIRST, -1])
async def test_a_malformed_packed_turn_a_reader_draws_first_is_refused_at_opening(
    tmp_path: Path, turn: int
) -> None:
    path = tmp_path / "w.pact"
    export = await many_turns(path)
    turn_id = forge_packed_turn(path, "agent", turn)
    before = stored(path)
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        problem = ws.checkpoint_problem
        assert problem is not None and repr(turn_id) in problem and "context 'agent'" in problem
        context = ws.context("agent")
        assert not any(isinstance(turn, PackedTurn) for _depth, turn in context.iter_turns())
        assert context.model_dump_json() == export
    assert stored(path) == before


async def test_unpacking_ends_when_a_command_rebuilt_the_context_meanwhile(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.pact"
    await many_turns(path)
    forge_packed_turn(path, "agent", TURNS // 2)
    async with await Workspace.open(path, watch=False) as ws:
        unpacking = ws.unpacking("agent", chunk=1)
        assert await anext(unpacking) > 0
        await ws.run_many("agent", [{"op": "delete", "selector": "#k70"}])  # rebuilt first
        rebuilt = ws.context("agent")
        problem = ws.checkpoint_problem
        assert problem is not None
        assert [left async for left in unpacking] == []  # not the old context's turns
        assert ws.context("agent") is rebuilt
        assert list(rebuilt.key_candidates("k70")) == []


async def test_packed_turns_whose_items_share_ids_rebuild_the_context_from_its_log(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.pact"
    export = await many_turns(path)
    forge_duplicate_ids(path, "agent", TURNS // 2, TURNS // 2 + 1)  # both left packed
    before = stored(path)
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        opened = ws.context("agent")
        [left async for left in ws.unpacking("agent")]
        assert ws.context("agent") is not opened
        assert ws.context("agent").model_dump_json() == export  # the log's state
        problem = ws.checkpoint_problem
        assert problem is not None and "more than once" in problem and "replayed" in problem
        ws.build_indexes("agent")
    assert stored(path) == before


async def test_a_command_on_packed_turns_whose_items_share_ids_runs_on_the_logs_state(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.pact"
    await many_turns(path)
    forge_duplicate_ids(path, "agent", TURNS // 2, TURNS // 2 + 1)
    async with await Workspace.open(path, watch=False) as ws:
        await ws.run_many("agent", [{"op": "delete", "selector": "#k70"}])
        assert list(ws.context("agent").key_candidates("k70")) == []
        problem = ws.checkpoint_problem
        assert problem is not None and "more than once" in problem
