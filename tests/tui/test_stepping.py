"""Step control: messages through the prompt, advance, seal, and play/pause."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from engine.workspace import Workspace, cadence
from pact_tui.screens.prompt import PromptScreen

from .inspector import (
    SIZE,
    detail_text,
    inspector,
    pane_lines,
    screen_of,
    settle,
    status_text,
    wait_until,
)


def _active_turn(lines: list[str]) -> list[str]:
    """The lines from the active turn's header down."""
    start = next(i for i, line in enumerate(lines) if "· active" in line)
    return lines[start:]


async def test_a_user_message_typed_in_the_prompt_opens_a_new_turn(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        depth_before = screen.workspace.context("researcher").history_depth
        await pilot.press("u")
        assert isinstance(app.screen, PromptScreen)
        assert "User message" in str(app.screen.query("Label").first().render())
        await pilot.press(*"Any news?", "enter")
        await settle(pilot)

        assert not isinstance(app.screen, PromptScreen)
        context = screen.workspace.context("researcher")
        assert context.history_depth == depth_before + 1
        active = context.turn_at(0)
        assert active is not None and active.role == "user"
        assert "EPISODE 6" in status_text(app)  # a message is not an episode
        await pilot.press("end")
        active = _active_turn(pane_lines(screen.context_tree))
        assert active[0].startswith("▾ turn d0  user · active")
        assert any('"Any news?"' in line for line in active)


async def test_an_assistant_message_lands_in_the_active_turn(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a", *"Done.", "enter")
        await settle(pilot)
        await pilot.press("end")
        active = _active_turn(pane_lines(screen_of(app).context_tree))
        assert active[0].startswith("▾ turn d0  assistant · active")
        assert any('"Done."' in line for line in active)


async def test_an_empty_or_cancelled_prompt_changes_nothing(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        head = screen.workspace.head
        await pilot.press("u", "enter")  # empty text is not accepted: the prompt stays
        assert isinstance(app.screen, PromptScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, PromptScreen)
        assert screen.workspace.head == head


async def test_advance_moves_the_episode_on_screen(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        snapshots = len(screen.workspace.snapshots("researcher"))
        assert "EPISODE 6" in status_text(app)
        await pilot.press("full_stop")
        await settle(pilot)
        assert "EPISODE 7" in status_text(app)
        assert screen.view is not None and screen.view.current_episode == 7
        assert len(screen.workspace.snapshots("researcher")) == snapshots + 1
        # the context list says so too
        assert "ep 7 · " in str(screen.query_one("#contexts").get_option_at_index(0).prompt)


async def test_seal_records_a_snapshot_with_the_trigger_typed(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("s")
        field = app.screen.query_one(Input)
        assert field.value == "checkpoint"  # offered, and replaced by typing
        await pilot.press(*"before-refactor", "enter")
        await settle(pilot)
        newest = screen.workspace.snapshots("researcher")[-1]
        assert newest.trigger == "before-refactor"
        assert "EPISODE 6" in status_text(app)  # sealing does not advance
        # stepping back shows it by name
        await pilot.press("left_square_bracket")
        assert f"snapshot {newest.id} (before-refactor)" in status_text(app)


async def test_play_steps_forward_through_the_past_and_stops_at_live(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        head = screen.workspace.head
        await pilot.press("left_curly_bracket")  # the first snapshot
        assert screen.position == 0
        await pilot.press("p")
        assert screen.play_speed == 1.0
        assert "▶ playing every 1s" in status_text(app)
        screen._play_timer.pause()  # the test drives the steps itself
        count = len(screen.workspace.snapshots("researcher"))
        for expected in range(1, count):
            screen.play_step()
            assert screen.position == expected
        screen.play_step()  # caught up with now: stops, writes nothing
        await settle(pilot)
        assert screen.position is None and screen.play_speed is None
        assert "playing" not in status_text(app) and "LIVE" in status_text(app)
        assert screen.workspace.head == head


async def test_play_at_live_advances_and_pause_stops(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("p", "y")  # asked first: it writes (test_provider_layout.py)
        screen._play_timer.pause()
        screen.play_step()
        await settle(pilot)
        screen.play_step()
        await settle(pilot)
        assert "EPISODE 8" in status_text(app)
        await pilot.press("plus")
        assert screen.play_speed == 0.5 and "every 0.5s" in status_text(app)
        await pilot.press("minus", "minus")
        assert screen.play_speed == 2.0
        await pilot.press("p")
        assert screen.play_speed is None and screen._play_timer is None
        assert "playing" not in status_text(app)


async def test_the_detail_of_the_item_under_the_cursor_follows_the_episode(
    tmp_path: Path,
) -> None:
    """A context with nothing that expires or renews soon: an advance writes nothing into the
    tree, yet the age of the item under the cursor changes, and the detail pane says so."""
    path = tmp_path / "quiet.pact"
    async with await Workspace.open(path, create=True, watch=False) as workspace:
        await workspace.create_context("quiet")
        await workspace.add_message("quiet", "user", "hello")
        await workspace.insert("quiet", "d0, 2, 0", {"content": "note", "ttl": 5})
    app = inspector(path, context="quiet")
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        tree = screen.context_tree
        line = tree.layout_model.line_of(0, 2, 0)
        assert line is not None
        tree.jump_to(line)
        await wait_until(pilot, lambda: "age 0 " in detail_text(app), "the note's detail")
        token = screen.workspace.context("quiet").journal_token
        await pilot.press("full_stop")
        await wait_until(pilot, lambda: "age 1 " in detail_text(app), "its age one episode on")
        assert screen.workspace.context("quiet").journal_token == token  # nothing was written


async def test_the_detail_shows_a_replace_at_once(tmp_path: Path) -> None:
    """An item's history comes from the log: a replace is in it as soon as it is made, no
    snapshot needed."""
    path = tmp_path / "quiet.pact"
    async with await Workspace.open(path, create=True, watch=False) as workspace:
        await workspace.create_context("quiet")
        await workspace.add_message("quiet", "user", "hello")
        await workspace.insert("quiet", "d0, 2, 0", {"content": "note"})
    app = inspector(path, context="quiet")
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        line = screen.context_tree.layout_model.line_of(0, 2, 0)
        assert line is not None
        screen.context_tree.jump_to(line)
        await wait_until(pilot, lambda: "· inserted" in detail_text(app), "the note's history")
        assert "replaced" not in detail_text(app)
        replace = {"op": "update", "selector": "d0, 2, 0", "component": {"content": "new note"}}
        assert await screen.run_command(replace).wait() is not None
        await wait_until(pilot, lambda: "replaced" in detail_text(app), "the replace in it")
        assert "new note" in detail_text(app)


async def test_after_reopening_a_checkpointed_workspace_the_detail_tells_the_real_birth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """First use found "born at (33331,1,0)" for an item inserted at (0,1,0): the history came
    from the snapshots held in memory, and a checkpoint had hidden the older ones."""
    monkeypatch.setattr(cadence, "CHECKPOINT_ON_CLOSE", 1)
    # The checkpoint keeps no recent snapshot, as those of the time did: none is held at all.
    monkeypatch.setattr(cadence, "RECENT_SNAPSHOTS", 0)
    path = tmp_path / "deep.pact"
    async with await Workspace.open(path, create=True, watch=False) as workspace:
        await workspace.create_context("deep")
        await workspace.add_message("deep", "user", "hello")
        await workspace.insert("deep", "d0, 1, 0", {"content": "the note", "key": "note"})
        for number in range(12):
            await workspace.add_message("deep", "user", f"m{number}")
            await workspace.advance("deep")
    app = inspector(path, context="deep")
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        assert screen.workspace.context("deep").history.latest is None  # no snapshot held
        line = screen.context_tree.layout_model.line_of(12, 1, 0)
        assert line is not None
        screen.context_tree.jump_to(line)
        # The story is told as it is read (the birth first, then the moves): wait for all of it.
        await wait_until(pilot, lambda: "d0 → d12" in detail_text(app), "the note's history")
        detail = detail_text(app)
        assert "(0,1,0) · inserted" in detail  # born where it was inserted, at episode 0
        assert "12 times" in detail  # and every message since
