"""The footer: its keys are made again only when what they show changes (issue 24: a view
switch moves the focus several times, and each move announced new bindings)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.screen import Screen
from textual.widgets._footer import FooterKey

from pact_tui.keymap import ACTIONS, split_keys
from pact_tui.screens.document import DocumentScreen
from pact_tui.widgets.context_list import ContextList
from pact_tui.widgets.footer import FittedFooter

from .inspector import SIZE, inspector, screen_of, settle, wait_until


def shown_keys(footer: FittedFooter) -> list[FooterKey]:
    return list(footer.query(FooterKey))


def bound_actions(screen: Screen[Any]) -> list[str]:
    """The actions the footer should show: the screen's active bindings shown, one each."""
    actions: list[str] = []
    for _, binding, _, _ in screen.active_bindings.values():
        if binding.show and binding.action not in actions:
            actions.append(binding.action)
    return actions


def drawn_actions(footer: FittedFooter) -> list[str]:
    """The actions of the footer's keys, the palette's left out, those being removed too."""
    keys = [key for key in shown_keys(footer) if not key._pruning]
    return [key.action for key in keys if "-command-palette" not in key.classes]


async def test_the_footer_keeps_its_keys_when_the_bindings_it_shows_are_unchanged(
    demo: Path,
) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        footer = screen.query_one(FittedFooter)
        await wait_until(pilot, lambda: bool(shown_keys(footer)), "the footer's keys")
        await settle(pilot)
        before = shown_keys(footer)
        focused = screen.focused
        assert focused is not None
        announced: list[object] = []
        screen.bindings_updated_signal.subscribe(footer, announced.append)
        # Away and back in one handler: the bindings are announced as changed, twice.
        screen.set_focus(screen.query_one(ContextList))
        screen.set_focus(focused)
        await settle(pilot)
        await pilot.pause()
        assert announced  # the footer was told the bindings changed
        after = shown_keys(footer)
        assert [id(key) for key in after] == [id(key) for key in before]  # not made again


async def test_the_footer_shows_the_keys_of_each_view_it_switches_to(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=(200, 40)) as pilot:
        await pilot.press("2")
        await wait_until(pilot, lambda: isinstance(app.screen, DocumentScreen), "the document")
        screen = app.screen
        footer = screen.query_one(FittedFooter)

        seen: list[list[str]] = []
        for view in ("outline", "events", "proposals", "outline"):
            await pilot.press(split_keys(ACTIONS[view].keys)[0])
            await settle(pilot)
            keys = bound_actions(screen)
            await wait_until(pilot, lambda: drawn_actions(footer) == keys, f"the keys of {view}")  # noqa: B023
            seen.append(keys)
        assert len({tuple(keys) for keys in seen}) > 1  # the views' keys differ


async def test_a_view_switch_gives_the_footers_keys_the_new_views_bindings_at_once(
    demo: Path,
) -> None:
    """The keys of the view shown are in the footer in the handler that shows it (so in the
    frame that draws it), given to the keys already made rather than all made again after."""
    app = inspector(demo)
    async with app.run_test(size=(200, 40)) as pilot:
        await pilot.press("2")
        await wait_until(pilot, lambda: isinstance(app.screen, DocumentScreen), "the document")
        screen = app.screen
        assert isinstance(screen, DocumentScreen)
        footer = screen.query_one(FittedFooter)
        await wait_until(pilot, lambda: bool(shown_keys(footer)), "the footer's keys")
        await settle(pilot)

        made = set(shown_keys(footer))  # the keys themselves: an id is reused once freed
        for view in ("events", "queue", "outline", "events"):
            before = bound_actions(screen)
            had = len(shown_keys(footer))
            screen.action_view(view)  # no message handled between: this handler's work only
            assert bound_actions(screen) != before  # the view's keys differ from the last one's
            assert drawn_actions(footer) == bound_actions(screen), view
            await settle(pilot)
            now = shown_keys(footer)
            # The keys already made were given what they show: only the more keys were made.
            assert len(set(now) - made) <= max(0, len(now) - had), view
            made |= set(now)


async def test_no_watcher_of_a_removed_key_is_left_behind(demo: Path) -> None:
    """Each key the footer makes watches the footer's ``compact`` (``data_bind``), and Textual
    drops the watcher of a removed key only when ``compact`` is set, which nothing does: each
    key a view switch removed (or the footer made anew) left its watcher behind, and each new
    key's watch scanned all of them (the view-as walk of test_document_inbox left thousands:
    issue 25). Both ways keys go: a switch to a view with fewer keys, and the footer made anew
    (the palette key gone and back)."""
    app = inspector(demo)
    async with app.run_test(size=(200, 40)) as pilot:
        await pilot.press("2")
        await wait_until(pilot, lambda: isinstance(app.screen, DocumentScreen), "the document")
        footer = app.screen.query_one(FittedFooter)

        def watching() -> list[int]:
            # Textual keeps an object's watchers in "__watchers" (no public way to list them)
            watchers = getattr(footer, "__watchers", {}).get("compact", [])
            return sorted(id(node) for node, _ in watchers)

        def keys() -> list[int]:  # the palette's key is not bound
            keys = [key for key in shown_keys(footer) if not key._pruning]
            return sorted(id(key) for key in keys if "-command-palette" not in key.classes)

        for _ in range(4):
            for view in ("outline", "events", "proposals"):
                await pilot.press(split_keys(ACTIONS[view].keys)[0])
                await settle(pilot)
        await wait_until(pilot, lambda: watching() == keys(), "only the shown keys watching")
        made = footer.made
        for shown, view in ((False, "outline"), (True, "events")):
            footer.show_command_palette = shown
            await pilot.press(split_keys(ACTIONS[view].keys)[0])  # the bindings announced
            await settle(pilot)
        assert footer.made > made  # the footer made its keys anew
        await wait_until(pilot, lambda: watching() == keys(), "only the new keys watching")
        assert len(keys()) > 3
