"""Opening a context whose checkpoint keeps its turns packed: the first frame draws the tree
from a few decoded turns; the rest are decoded between frames, then the indexes built."""

from __future__ import annotations

from pathlib import Path

from engine.context.compact import PackedTurn
from engine.workspace import Workspace

from .inspector import SIZE, inspector, pane_lines, screen_of, settle

TURNS = 60


async def packed_workspace(path: Path) -> None:
    async with await Workspace.open(path, create=True, watch=False) as ws:
        await ws.create_context("agent")
        commands = []
        for n in range(TURNS):
            commands.append({"op": "message", "role": "user", "text": f"question {n}"})
            note = {"type": "text", "content": f"note {n}", "key": f"k{n}"}
            commands.append({"op": "insert", "selector": "d0, 1, 0", "component": note})
        await ws.run_many("agent", commands)
        await ws.checkpoint()


async def test_the_turns_left_packed_are_decoded_and_indexed_after_the_first_frame(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.pact"
    await packed_workspace(path)
    app = inspector(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        assert screen.view is not None
        assert "question 59" in "\n".join(pane_lines(screen.context_tree))
        assert app.workspace is not None
        context = app.workspace.context("agent")
        turns = [turn for depth, turn in context.iter_turns() if depth >= 0]
        assert len(turns) == TURNS and all(isinstance(turn, PackedTurn) for turn in turns)
        assert all(turn.packed is None for turn in turns)  # type: ignore[attr-defined]
        assert [node.item.content for node in context.key_candidates("k0")] == ["note 0"]  # type: ignore[union-attr]
        assert context.item_count() == 2 * TURNS
