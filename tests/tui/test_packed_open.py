"""Opening a context whose checkpoint keeps its turns packed: the first frame draws the tree
from a few decoded turns; the rest are decoded between frames, then the indexes built."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from engine.context.compact import DRAWN_FIRST, PackedTurn
from engine.workspace import Workspace
from pact_tui.app import PactApp
from tests.engine.workspace.test_packed_turns import TURNS as MANY
from tests.engine.workspace.test_packed_turns import many_turns
from tests.forged_packed import forge_duplicate_ids, forge_packed_turn

from .inspector import (
    SIZE,
    inspector,
    notifications,
    pane_lines,
    screen_of,
    settle,
    wait_until,
)

TURNS = 60


async def packed_workspace(path: Path) -> None:
    await many_turns(path, TURNS)


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
        assert all(turn.decoded for turn in turns)  # type: ignore[attr-defined]
        assert [node.item.content for node in context.key_candidates("k0")] == ["note 0"]  # type: ignore[union-attr]
        assert context.item_count() == 2 * TURNS


async def test_a_malformed_packed_turn_found_after_the_first_frame_shows_the_logs_context(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.pact"
    export = await many_turns(path)  # more turns than those decoded as it is restored
    turn_id = forge_packed_turn(path, "agent", MANY // 2)
    app = inspector(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)  # the unpacking worker is done
        assert app.is_running
        assert app.workspace is not None
        context = app.workspace.context("agent")
        assert context.model_dump_json() == export  # the log's
        assert not any(isinstance(turn, PackedTurn) for _depth, turn in context.iter_turns())
        screen = screen_of(app)
        assert screen.view is context
        assert f"question {MANY - 1}" in "\n".join(pane_lines(screen.context_tree))
        [said] = [note for note in notifications(app) if repr(turn_id) in note]
        assert said.startswith("Checkpoint: ") and "context 'agent'" in said


@pytest.mark.parametrize("turn", [0, -1])
async def test_a_malformed_packed_turn_among_those_drawn_first_is_refused_at_opening(
    tmp_path: Path, turn: int
) -> None:
    path = tmp_path / "w.pact"
    export = await many_turns(path)
    turn_id = forge_packed_turn(path, "agent", turn)
    app = inspector(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.is_running
        assert app.workspace is not None
        assert_the_logs_context_shown(app, export, repr(turn_id))


async def test_packed_turns_whose_items_share_ids_show_the_logs_context(tmp_path: Path) -> None:
    path = tmp_path / "w.pact"
    export = await many_turns(path)
    forge_duplicate_ids(path, "agent", MANY // 2, MANY // 2 + 1)  # both left packed
    app = inspector(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)  # the unpacking worker is done
        assert app.is_running
        assert app.workspace is not None
        assert_the_logs_context_shown(app, export, "more than once")


async def test_a_malformed_packed_turn_drawn_before_it_was_unpacked_shows_the_logs_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "w.pact"
    export = await many_turns(path)
    turn_id = forge_packed_turn(path, "agent", MANY // 2)  # left packed at opening
    held, calls = hold_first_unpacking(monkeypatch)  # the turn is reached by scrolling
    await scrolled_to_the_logs_context(inspector(path), held, calls, MANY, export, repr(turn_id))


async def scrolled_to_the_logs_context(
    app: PactApp, held: asyncio.Event, calls: list[str], pages: int, export: str, problem: str
) -> None:
    """Run ``app`` with its first unpacking held (``hold_first_unpacking``) and page up from
    the newest turn until a turn that cannot be read is drawn; then let the unpacking go. The
    context rebuilt from its log is shown, once, and a notification names ``problem``."""
    async with app.run_test(size=SIZE) as pilot:
        # The held unpacking has begun (it starts after the first frame): under load the
        # pages below could otherwise be drawn first, and the refusal's unpacking be held.
        await wait_until(pilot, lambda: calls == ["agent"], "the first unpacking")
        assert app.workspace is not None
        opened = app.workspace.context("agent")
        screen = screen_of(app)
        for _ in range(pages):  # page up to the top, through the turn that cannot be read
            await pilot.press("pageup")
            await pilot.pause()  # each page drawn (a frame), not two keys to one frame
            if app.workspace.context("agent") is not opened:
                break
        await wait_until(pilot, lambda: screen.view is not opened, "the log's context shown")
        held.set()
        await settle(pilot)
        assert app.is_running
        context = app.workspace.context("agent")
        assert context is not opened and context.model_dump_json() == export  # the log's
        assert screen.view is context
        [said] = [note for note in notifications(app) if problem in note]
        assert said.startswith("Checkpoint: ") and "context 'agent'" in said


def hold_first_unpacking(monkeypatch: pytest.MonkeyPatch) -> tuple[asyncio.Event, list[str]]:
    """Make the first ``Workspace.unpacking`` (it starts after the first frame) wait for the
    event returned; the names of the contexts unpacked, as each starts."""
    held = asyncio.Event()
    calls: list[str] = []
    unpacking = Workspace.unpacking

    async def unpacking_held(self: Workspace, name: str, chunk: int = 1_000) -> Any:
        calls.append(name)
        if len(calls) == 1:
            await held.wait()
        async for left in unpacking(self, name, chunk):
            yield left

    monkeypatch.setattr(Workspace, "unpacking", unpacking_held)
    return held, calls


def assert_the_logs_context_shown(app: PactApp, export: str, problem: str) -> None:
    """The context rebuilt from its log is the one shown, drawn to its newest turn, and a
    ``Checkpoint`` notification says why (its text holds ``problem``)."""
    assert app.is_running and app.workspace is not None
    context = app.workspace.context("agent")
    assert context.model_dump_json() == export  # the log's
    screen = screen_of(app)
    assert screen.view is context
    assert f"question {MANY - 1}" in "\n".join(pane_lines(screen.context_tree))
    [said] = [note for note in notifications(app) if problem in note]
    assert said.startswith("Checkpoint: ") and "context 'agent'" in said


async def pieced_workspace(path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``many_turns`` with its turns between the first and last 64 in pieces: its export."""
    from engine.workspace import pieces

    with monkeypatch.context() as patched:
        patched.setattr(pieces, "PIECE_BYTES", 2_000)
        return await many_turns(path, PIECED)


PIECED = 2 * DRAWN_FIRST + 60


async def test_a_context_in_pieces_is_drawn_from_its_checkpoint_and_its_pieces_read_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "w.pact"
    export = await pieced_workspace(path, monkeypatch)
    held, calls = hold_first_unpacking(monkeypatch)
    app = inspector(path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: calls == ["agent"], "the first frame")
        assert app.workspace is not None
        pieces = app.workspace._projection("agent").pieces
        assert pieces is not None and list(pieces.read_names()) == []  # drawn, none read
        screen = screen_of(app)
        assert f"question {PIECED - 1}" in "\n".join(pane_lines(screen.context_tree))
        held.set()
        await settle(pilot)
        assert app.workspace is not None
        projection = app.workspace._projection("agent")
        assert projection.pieces is not None and projection.pieces.complete
        assert app.workspace.context("agent").model_dump_json() == export
        assert app.workspace.checkpoint_problem is None


async def test_a_turn_drawn_whose_piece_is_missing_shows_the_logs_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.engine.workspace.test_pieces import first_piece, forge_piece

    path = tmp_path / "w.pact"
    export = await pieced_workspace(path, monkeypatch)
    piece = await first_piece(path)
    forge_piece(path, piece, "missing")
    held, calls = hold_first_unpacking(monkeypatch)  # the piece is reached by scrolling
    await scrolled_to_the_logs_context(inspector(path), held, calls, PIECED, export, repr(piece))


@pytest.mark.parametrize("damage", ["a forged turn", "a missing piece"])
async def test_the_provider_view_asked_for_before_the_turns_are_read_shows_the_logs_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    from tests.engine.workspace.test_pieces import first_piece, forge_piece

    path = tmp_path / "w.pact"
    if damage == "a forged turn":
        export = await many_turns(path)
        problem = repr(forge_packed_turn(path, "agent", MANY // 2))
    else:
        export = await pieced_workspace(path, monkeypatch)
        problem = repr(await first_piece(path))
        forge_piece(path, problem.strip("'"), "missing")
    held, calls = hold_first_unpacking(monkeypatch)
    app = inspector(path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: calls == ["agent"], "the first unpacking")
        await pilot.press("v")  # its layout measures every turn: the bad one among them
        await pilot.pause()
        held.set()
        await settle(pilot)
        await pilot.press("j")
        assert app.is_running and app.workspace is not None
        assert app.workspace.context("agent").model_dump_json() == export  # the log's
        assert screen_of(app).view is app.workspace.context("agent")
        [said] = [note for note in notifications(app) if problem in note]
        assert said.startswith("Checkpoint: ")
