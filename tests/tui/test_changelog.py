"""What each step did, with reasons (issue 14, section 1 in the app): the compact changelog on
the tree's lower border after every step, the changelog pane (``C``) following the position
shown, and a diff's rows labelled with the reasons the changelogs give."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from engine.context.changelog import LIST_LIMIT
from engine.context.commands import MessageCommand
from engine.context.selectors import parse_selector
from engine.workspace import Workspace
from pact_tui.app import PactApp
from pact_tui.screens.context import ContextScreen
from pact_tui.widgets.changelog import ChangelogList
from pact_tui.widgets.context_tree import LinePane

from .inspector import (
    SIZE,
    detail_text,
    inspector,
    notifications,
    screen_of,
    settle,
    wait_until,
)


def pane_of(screen: ContextScreen) -> ChangelogList:
    return screen.query_one(ChangelogList)


def said(pane: ChangelogList) -> list[str]:
    """Every line of the changelog pane, whole (as wide as it takes)."""
    return ["".join(s.text for s in pane.render_row(row, 1_000)) for row in pane.rows]


def subtitle(screen: ContextScreen) -> str:
    return str(screen.context_tree.border_subtitle)


async def account_for(pilot: Pilot[Any], screen: ContextScreen) -> None:
    """Wait until the account read is the one for the position shown."""
    await settle(pilot)
    shown = screen.shown
    assert shown is not None
    at = shown.entry.id if shown.entry is not None else None

    def read() -> bool:
        account = screen.account
        return account is not None and (account.revision, account.at) == (shown.revision, at)

    await wait_until(pilot, read, "the changelog of the position shown")


def _line_of(pane: LinePane, node_id: str) -> int:
    layout = pane.layout_model
    return next(y for y in range(layout.line_count) if layout.row(y).node_id == node_id)


def _drawn(pane: LinePane, line: int) -> str:
    pane.scroll_to(y=max(0, line - 2), animate=False, immediate=True)
    return pane.render_line(line - int(pane.scroll_offset.y)).text


async def test_an_advance_says_what_expired_with_the_items_ttl_and_age(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await account_for(pilot, screen)
        live = screen.workspace.context("researcher")
        due = [n for n in live.select(parse_selector("[remaining<=1]")) if n.item.kind != "cyclic"]
        assert due, "the demo has an item that expires at the next advance"
        item = due[0].item
        assert item.ttl is not None and item.key is not None
        age_then = live.current_episode + 1 - item.born_episode  # its age when it goes
        await pilot.press("full_stop")
        await account_for(pilot, screen)
        # the compact changelog, on the tree's lower border
        assert subtitle(screen).startswith("step to ") and ": expired " in subtitle(screen)
        assert f"#{item.key} (ttl {item.ttl})" in subtitle(screen)
        # the pane: every change, with the reason's figures from the item
        await pilot.press("C")
        pane = pane_of(screen)
        assert pane.display and pane.has_focus
        (line,) = [text for text in said(pane) if "− expired" in text and f"#{item.key}" in text]
        assert f"(age {age_then}, ttl {item.ttl})" in line
        await pilot.press("C")
        assert not pane.display and screen.context_tree.has_focus


async def test_the_pane_follows_the_position_shown(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        ws = screen.workspace
        await pilot.press("C")
        await account_for(pilot, screen)
        newest, before = ws.snapshots("researcher")[-1], ws.snapshots("researcher")[-3]
        expected = await ws.changelogs("researcher")  # nothing since the newest: its step
        assert said(pane_of(screen))[0] == expected.title()
        await pilot.press("left_square_bracket", "left_square_bracket", "left_square_bracket")
        await account_for(pilot, screen)
        expected = await ws.changelogs("researcher", snapshot=before.id)
        lines = said(pane_of(screen))
        assert lines[0] == expected.title() and lines[0].startswith(f"snapshot {before.id}")
        entries = [entry for log in expected.changelogs for entry in log.entries]
        for entry in entries:
            assert any(entry.kind in text and entry.preview[:20] in text for text in lines)
        assert "changes · " + before.id in str(pane_of(screen).border_title)
        await pilot.press("right_curly_bracket")
        await account_for(pilot, screen)
        assert said(pane_of(screen))[0].startswith(f"snapshot {newest.id}")


async def _rehydrating(path: Path) -> None:
    """A context whose #mode (ttl 3, a fresh instance every episode) is replaced while live."""
    async with await Workspace.open(path, create=True, watch=False) as workspace:
        await workspace.create_context("c")
        await workspace.add_message("c", "user", "hello")
        await workspace.insert(
            "c", "d0, 1, 0", {"content": "mode", "key": "mode", "ttl": 3, "cad": 1}
        )
        await workspace.advance("c")
        await workspace.advance("c")


async def test_a_rehydration_names_the_instance_it_replaced(tmp_path: Path) -> None:
    await _rehydrating(tmp_path / "r.pact")
    app = inspector(tmp_path / "r.pact")
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await account_for(pilot, screen)
        step = await screen.workspace.changelogs("c")
        (entry,) = [e for log in step.changelogs for e in log.entries if e.kind == "rehydrated"]
        assert entry.replaced is not None
        await pilot.press("C")
        (line,) = [text for text in said(pane_of(screen)) if "↻ rehydrated" in text]
        assert f"replaced {entry.replaced}" in line and "#mode" in line
        assert "rehydrated #mode" in subtitle(screen)
        # in a diff across that step: the fresh instance and the ghost of the one it replaced
        back_then_live = ("left_square_bracket", "left_square_bracket", "d", "right_curly_bracket")
        await pilot.press(*back_then_live, "w")
        await settle(pilot)
        await wait_until(pilot, lambda: screen.reasons is not None, "the diff's reasons")
        tree = screen.context_tree
        fresh = _drawn(tree, _line_of(tree, entry.id))
        assert fresh.startswith("+ ") and f"rehydrated (replaced {entry.replaced})" in fresh
        ghost = _drawn(tree, _line_of(tree, entry.replaced))
        assert ghost.startswith("− ") and f"replaced by a fresh instance ({entry.id})" in ghost


async def test_an_odi_move_is_one_line(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        items = screen.workspace.context("researcher").item_count()
        screen.run_command(MessageCommand(role="user", text="and now?"))
        await account_for(pilot, screen)
        step = await screen.workspace.changelogs("researcher")
        assert step.kind == "live"
        (shift,) = [s for log in step.changelogs for s in log.shifts]
        assert shift.by == 1 and 0 < shift.items < items
        assert f"ODI: {shift.items} items one deeper" in subtitle(screen)
        await pilot.press("C")
        lines = said(pane_of(screen))
        assert lines[0] == step.title()
        assert sum(text.startswith("↓ ODI:") for text in lines) == 1
        assert f"↓ {shift.line()}" in lines
        # the items it moved are listed under it only when few
        moved = [text for text in lines if text.startswith("   ↓ moved")]
        assert len(moved) == (shift.items if shift.items <= LIST_LIMIT else 0)
        # and the step before (the newest snapshot's) follows
        assert any(text.startswith("snapshot ") for text in lines[1:])


async def test_enter_on_a_change_puts_the_tree_cursor_on_its_item(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await account_for(pilot, screen)
        await pilot.press("C")
        pane = pane_of(screen)
        rows = pane.rows
        target = next(i for i, row in enumerate(rows) if row.entry and row.entry.kind == "stage")
        entry = rows[target].entry
        assert entry is not None
        pane.cursor_line = target
        await pilot.press("enter")
        await pilot.pause()
        row = screen.context_tree.current_row
        assert row is not None and row.node_id == entry.id
        assert screen.highlighted is not None and screen.highlighted.node_id == entry.id
        # an item that is gone from the view: said, the cursor stays
        gone = next(i for i, row in enumerate(rows) if row.entry and row.entry.kind == "expired")
        pane.cursor_line = gone
        await pilot.press("enter")
        await pilot.pause()
        assert notifications(app)[-1].endswith("is not in the live context")
        assert screen.context_tree.current_row == row


async def test_a_diff_says_why_its_items_changed(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        ws = screen.workspace
        base, shown = ws.snapshots("researcher")[0], ws.snapshots("researcher")[2]
        await pilot.press("left_curly_bracket", "d", "right_square_bracket")
        await pilot.press("right_square_bracket")
        await settle(pilot)
        await wait_until(pilot, lambda: screen.reasons is not None, "the diff's reasons")
        step = await ws.changelogs("researcher", between=(base.id, shown.id))
        entries = {e.id: e for log in step.changelogs for e in log.entries}
        tree = screen.context_tree
        comparison = screen.comparison
        assert comparison is not None
        # a ghost says why it went, with the figures the changelog recorded
        for ghost in comparison.ghosts:
            entry = entries[ghost.id]
            assert entry.kind == "expired"
            line = _drawn(tree, _line_of(tree, ghost.id))
            assert f"expired (ttl {entry.ttl}, age {entry.age})" in line
        # turns pushed deeper were moved by ODI
        assert any(s.items for log in step.changelogs for s in log.shifts)
        moved = next(iter(comparison.diff.to_diff().changed))
        assert "(ODI)" in _drawn(tree, _line_of(tree, moved.id))
        detail = " ".join(detail_text(app).split())
        assert "moved by ODI: " in detail and "two deeper" in detail
        # and the detail of a ghost says why
        tree.jump_to(_line_of(tree, comparison.ghosts[0].id))
        await pilot.pause()
        entry = entries[comparison.ghosts[0].id]
        assert f"why: expired (ttl {entry.ttl}, age {entry.age})" in " ".join(
            detail_text(app).split()
        )


async def test_a_stage_change_and_a_rehydration_label_their_rows(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        ws = screen.workspace
        await pilot.press("left_square_bracket", "left_square_bracket", "d")
        await pilot.press("right_square_bracket")
        await settle(pilot)
        await wait_until(pilot, lambda: screen.reasons is not None, "the diff's reasons")
        step = await ws.changelogs("researcher", snapshot=ws.snapshots("researcher")[-1].id)
        entries = [e for log in step.changelogs for e in log.entries]
        tree = screen.context_tree
        (stage,) = [e for e in entries if e.kind == "stage"]
        assert stage.stage is not None and stage.stage[1] is not None
        line = _drawn(tree, _line_of(tree, stage.id))
        assert line.startswith("~ ") and f"stage {stage.stage[0]}→{stage.stage[1]}" in line
        # the instance that expired, then its schedule's fresh one
        (fresh,) = [e for e in entries if e.kind == "rehydrated"]
        assert "rehydrated" in _drawn(tree, _line_of(tree, fresh.id))
        (gone,) = [e for e in entries if e.kind == "expired" and e.key == fresh.key]
        ghost = _drawn(tree, _line_of(tree, gone.id))
        assert ghost.startswith("− ") and f"expired (ttl {gone.ttl}, age {gone.age})" in ghost


async def test_no_toasts_pile_up_while_playing(demo: Path) -> None:
    """The compact changelog is one line updated in place (the tree's lower border): playing
    raises no toast per step."""
    app: PactApp = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await account_for(pilot, screen)
        screen.play_writes_to = "researcher"  # as if play at live was allowed
        before = len(notifications(app))
        episodes = []
        for _ in range(3):
            screen.play_step()
            await account_for(pilot, screen)
            episodes.append(subtitle(screen))
        assert len(notifications(app)) == before
        snapshots = screen.workspace.snapshots("researcher")[-3:]
        for said_then, snapshot in zip(episodes, snapshots, strict=True):
            assert said_then.startswith(f"step to {snapshot.id} (e{snapshot.episode}): ")


async def test_the_changelog_pane_holds_the_current_account_in_the_frame_that_shows_it(
    demo: Path,
) -> None:
    """Hidden, the pane does not remake its rows at each step; shown, it remakes them in the
    handler that shows it, not on its Show event a frame later (a frame of the last account's
    lines, and a test reading them, came before)."""
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        screen.run_command(MessageCommand(role="user", text="and now?"))
        await account_for(pilot, screen)
        step = await screen.workspace.changelogs("researcher")
        pane = pane_of(screen)
        assert not pane.display and said(pane)[:1] != [step.title()]  # behind while hidden
        screen.show_changelog = True  # as `C` does: nothing else is handled before the read
        assert said(pane)[0] == step.title()
