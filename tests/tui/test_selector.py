"""The selector bar (``/``): matches highlight as you type, n/N walk them, an invalid selector
shows a caret under the offending character, and a time-qualified one moves to its snapshot."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

import pact_tui.screens.context as context_module
from engine.context import ContextView
from pact_tui.screens.context import ContextScreen
from pact_tui.widgets.selector_bar import SelectorBar

from .inspector import (
    SIZE,
    inspector,
    screen_of,
    screen_text,
    status_text,
    type_ahead,
    wait_until,
)

THREE_KEYS = "#user_prefs, #finding, #alert"


async def _type_selector(pilot: Pilot[Any], text: str, feedback: str) -> ContextScreen:
    """Open the bar, type ``text``, and wait until the bar's feedback shows ``feedback`` (the
    selector is evaluated after a pause in typing; a prefix may be evaluated on the way)."""
    screen = screen_of(pilot.app)  # type: ignore[arg-type]
    await pilot.press("slash", *text)
    await wait_until(
        pilot,
        lambda: screen.selector == text and feedback in _feedback(screen),
        f"{feedback!r} under the selector {text!r}",
    )
    return screen


def _feedback(screen: ContextScreen) -> str:
    return str(screen.query_one("#selector-feedback").render()).strip()


def _row_id(screen: ContextScreen) -> str | None:
    row = screen.active_pane.current_row
    return row.node_id if row is not None else None


async def test_matches_highlight_as_you_type(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        context = screen_of(app).workspace.context("researcher")
        system = {node.id for node in context.select("^sys")}
        history = {node.id for node in context.select("^seq")}
        assert len(system) == 2 and len(history) == 8

        screen = await _type_selector(pilot, "^sys", "2 matches")
        assert {node.id for node in screen.matches} == system
        marks = screen.context_tree.marks
        assert {node_id for node_id, mark in marks.items() if mark == "match"} == system
        assert isinstance(app.focused, Input)  # still typing
        assert "1/2 matches" in status_text(app)  # the cursor went to the first

        await pilot.press("backspace", "backspace", "backspace", *"seq")
        await wait_until(pilot, lambda: "8 matches" in _feedback(screen), "the new matches")
        marks = screen.context_tree.marks
        assert {node_id for node_id, mark in marks.items() if mark == "match"} == history

        await pilot.press(*" #nothing_has_this_key")
        await wait_until(pilot, lambda: _feedback(screen).startswith("0 matches"), "no matches")
        assert screen.matches == ()
        assert "match" not in screen.context_tree.marks.values()


async def test_the_typed_selector_is_visible_in_the_bar(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await _type_selector(pilot, "+notes", "1 match")
        assert screen_of(app).query_one(SelectorBar).query_one(Input).value == "+notes"
        assert any(line.strip().startswith("+notes") for line in screen_text(app).splitlines())


@pytest.mark.slow
async def test_n_and_N_walk_the_matches_in_order(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _type_selector(pilot, THREE_KEYS, "3 matches")
        ids = [node.id for node in screen.matches]
        assert len(ids) == 3
        assert screen.match_index == 0 and _row_id(screen) == ids[0]  # the first, at once
        await pilot.press("enter")  # keep them and go back to the tree
        assert screen.context_tree.has_focus and "1/3 matches" in status_text(app)

        await pilot.press("n")
        assert _row_id(screen) == ids[1] and "2/3 matches" in status_text(app)
        await pilot.press("n")
        assert _row_id(screen) == ids[2]
        await pilot.press("n")  # wraps
        assert _row_id(screen) == ids[0]
        await pilot.press("N")
        assert _row_id(screen) == ids[2] and "3/3 matches" in status_text(app)
        # the cursor's line is the match's line as drawn
        line = screen.context_tree.cursor_line - int(screen.context_tree.scroll_offset.y)
        assert "#alert" in screen.context_tree.render_line(line).text


async def test_escape_clears_the_matches(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _type_selector(pilot, THREE_KEYS, "3 matches")
        await pilot.press("escape")
        assert screen.selector == "" and screen.matches == ()
        assert "match" not in screen.context_tree.marks.values()
        assert "match" not in status_text(app)
        assert not screen.query_one(SelectorBar).has_class("-open")


async def test_an_invalid_selector_shows_a_caret_under_the_offending_character(
    demo: Path,
) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _type_selector(pilot, "d0, 1, x", "unknown term 'x'")
        assert screen.matches == ()
        assert "unknown term 'x'" in _feedback(screen)
        lines = screen_text(app).splitlines()
        # The bar's line (the status line at the top names the selector too).
        typed = max(i for i, line in enumerate(lines) if "d0, 1, x" in line)
        caret = lines[typed + 1]
        assert caret.strip().startswith("^  unknown term 'x'")
        assert caret.index("^") == lines[typed].index("d0, 1, x") + len("d0, 1, ")


async def _read_time_selector(pilot: Pilot[Any], text: str, matches: int) -> ContextScreen:
    """Type a time-qualified selector (the view stays where it is: the bar says where Enter
    goes), then Enter: the view goes to its snapshot, with ``matches`` matches."""
    screen = await _type_selector(pilot, text, "Enter goes there")
    assert screen.position is None and screen.matches == ()
    await pilot.press("enter")
    await wait_until(
        pilot,
        lambda: screen.position is not None and len(screen.matches) == matches,
        f"{text!r} read, with {matches} matches",
    )
    return screen


async def test_a_time_qualified_selector_moves_to_its_snapshot_on_enter(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _read_time_selector(pilot, "@e3 ^seq", 5)
        entry = screen.workspace.snapshot_of_episode("researcher", 3)
        assert screen.position == entry.index
        assert f"EPISODE 3   ◆ PAST  snapshot {entry.id}" in status_text(app)
        past = await screen.workspace.at_snapshot("researcher", entry.id)
        assert [node.id for node in screen.matches] == [node.id for node in past.select("^seq")]
        assert "5 matches" in status_text(app)


async def test_a_time_qualified_selector_past_the_history_is_an_error(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _type_selector(pilot, "@t-99 ^seq", "@t-99: context")
        assert screen.position is None
        assert "has 7 snapshot(s)" in _feedback(screen)
        assert _feedback(screen).startswith("^")


async def test_after_leaving_a_time_qualified_selectors_snapshot_n_lands_only_on_matches(
    demo: Path,
) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _read_time_selector(pilot, "@e3 ^seq", 5)
        await pilot.press("right_curly_bracket")
        landed = []
        for _ in range(len(screen.matches)):
            await pilot.press("n")
            landed.append((_row_id(screen), screen.matches[screen.match_index].id))
        assert all(row == match for row, match in landed), landed


async def test_a_time_qualified_selectors_matches_follow_their_nodes_and_come_back(
    demo: Path,
) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _read_time_selector(pilot, "@e3 ^seq", 5)
        snapshot_position = screen.position
        found = {node.id for node in screen.matches}
        await pilot.press("right_curly_bracket")
        await wait_until(pilot, lambda: screen.position is None, "back to live")
        live_ids = {node.id for node in screen.matches}
        assert live_ids <= found  # only those nodes, wherever they are now
        live = screen_of(app).workspace.context("researcher")
        assert all(live.locate(frozenset({node_id})) for node_id in live_ids)
        screen.go_to(snapshot_position)
        await pilot.pause()
        assert {node.id for node in screen.matches} == found  # none were forgotten


async def test_the_matches_follow_the_live_context_as_it_moves_on(demo: Path) -> None:
    """A sticky item is a new instance (a new id) at every episode: after an advance the kept
    selector's matches are the new instances, not the ones it matched before."""
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _type_selector(pilot, "[sticky]", "1 match")
        await pilot.press("enter")
        before = {node.id for node in screen.matches}
        live = screen.workspace.context("researcher")
        episode = live.current_episode
        await pilot.press("full_stop")
        await wait_until(
            pilot,
            lambda: (
                live.current_episode == episode + 1
                and {node.id for node in screen.matches} == {n.id for n in live.select("[sticky]")}
            ),
            "the matches of the new episode",
        )
        assert {node.id for node in screen.matches}.isdisjoint(before)


def _counting_selects(screen: ContextScreen) -> list[object]:
    """Record every ``select`` on the live context from now on."""
    live = screen.workspace.context("researcher")
    calls: list[object] = []
    select = live.select

    def counting(selector: Any) -> Any:
        calls.append(selector)
        return select(selector)

    live.select = counting  # type: ignore[method-assign]
    return calls


async def test_enter_keeps_the_matches_found_while_typing(demo: Path) -> None:
    """Keeping a selector already evaluated evaluates it no more; the draw reuses the matches."""
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _type_selector(pilot, "^seq", "8 matches")
        calls = _counting_selects(screen)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.focused is screen.active_pane, "back in the tree")
        assert calls == []
        assert len(screen.matches) == 8


async def test_enter_before_the_pause_in_typing_selects_once(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        calls = _counting_selects(screen)
        await pilot.press("slash", *"^seq", "enter")  # faster than the pause that evaluates
        await wait_until(pilot, lambda: len(screen.matches) == 8, "the matches")
        await pilot.pause(0.3)  # longer than that pause: a late evaluation would show here
        assert len(calls) == 1


async def test_keys_typed_during_a_slow_match_are_neither_lost_nor_reordered(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 27: at 100k items a scan took 3-4 s on the input's path, and keys typed meanwhile
    landed late (an Enter and an `F` ended up in the selector's text). A scan now runs in a
    thread: the keys go on reaching the input in order, the bar says the matches shown are
    stale, and a key after Enter reaches the pane."""
    monkeypatch.setattr(context_module, "SYNC_SELECT_ITEMS", 0)  # scan the demo off the path
    release = threading.Event()
    scans: list[str] = []
    real = ContextView.select

    def slow(view: ContextView, selector: Any) -> Any:
        if threading.current_thread() is not threading.main_thread():
            scans.append(threading.current_thread().name)
            assert release.wait(60), "the test never let the scan finish"
        return real(view, selector)

    monkeypatch.setattr(ContextView, "select", slow)
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        bar = screen.query_one(SelectorBar)
        await pilot.press("slash", *".te")
        await wait_until(pilot, lambda: screen.matching == ".te", "the scan under way")
        # While the scan is held, keys typed ahead all reach the input, in order.
        type_ahead(app, *"xs", "backspace", "t")
        await wait_until(pilot, lambda: bar.input.value == ".text", "the keys, in order")
        assert "matching '.te'" in _feedback(screen)  # what is shown is said to be stale
        before = _row_id(screen)
        type_ahead(app, "enter", "j", "j")  # Enter keeps the selector; j moves the pane's cursor
        await wait_until(pilot, lambda: app.focused is screen.active_pane, "the pane focused")
        await pilot.pause()
        assert bar.input.value == ".text"  # neither j reached the input
        assert screen.selector == ".text"
        release.set()
        await wait_until(pilot, lambda: not screen.matching, "the matches found")
        assert {n.id for n in screen.matches} == {
            n.id for n in screen.workspace.context("researcher").select(".text")
        }
        assert screen.matches and "match" in screen.context_tree.marks.values()
        assert _row_id(screen) != before
