"""Driving and reading the inspector in tests: what is on screen, what was notified, and
bounded waits on a condition (never a fixed sleep as synchronisation)."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import events
from textual.keys import key_to_character
from textual.pilot import Pilot
from textual.worker import WorkerCancelled

from pact_tui.app import PactApp
from pact_tui.screens.context import ContextScreen
from pact_tui.screenshot import fixed_clock
from pact_tui.themes import bundled_themes_dir
from pact_tui.widgets.context_tree import LinePane
from pact_tui.widgets.detail import NodeDetail
from pact_tui.widgets.status import StatusBar

SIZE = (120, 40)
WAIT = 20.0  # seconds a bounded wait may take before the test fails (a loaded machine is slow)


def inspector(path: Path, **options: Any) -> PactApp:
    """The app as the tests run it: a fixed clock, no file watchers, the bundled themes only,
    the default theme (never the user's configuration)."""
    settings: dict[str, Any] = {
        "clock": fixed_clock(),
        "watch": False,
        "theme": "pact-midnight",
        "theme_dirs": [bundled_themes_dir()],
    }
    settings.update(options)
    return PactApp(path, **settings)


def copy_themes(into: Path) -> Path:
    """The bundled theme files, copied where a test may edit them."""
    into.mkdir(parents=True, exist_ok=True)
    for theme_file in bundled_themes_dir().glob("*.toml"):
        shutil.copy(theme_file, into / theme_file.name)
    return into


def screen_of(app: PactApp) -> ContextScreen:
    """The inspector screen, under whatever modal is open over it."""
    for screen in reversed(app.screen_stack):
        if isinstance(screen, ContextScreen):
            return screen
    raise AssertionError(f"no context screen (the screen is {app.screen!r})")


# -- reading what is drawn ----------------------------------------------------------------------
def screen_text(app: PactApp) -> str:
    """Every line of the top screen as drawn (its toasts too, if run_test shows them)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def status_text(app: PactApp) -> str:
    return str(screen_of(app).query_one(StatusBar).render()).strip()


def pane_lines(pane: LinePane) -> list[str]:
    """The visible lines of a tree or provider pane, as its line API draws them."""
    return [pane.render_line(y).text.rstrip() for y in range(pane.scrollable_content_region.height)]


def detail_text(app: PactApp) -> str:
    """The detail pane's text, at the pane's width."""
    detail = screen_of(app).query_one(NodeDetail)
    body = detail.query_one("#detail-body")
    return "\n".join(strip.text.rstrip() for strip in body.render_lines(body.region.reset_offset))


def notifications(app: PactApp) -> list[str]:
    """The messages of the notifications raised so far (titles included)."""
    return [f"{n.title}: {n.message}" if n.title else n.message for n in app._notifications]


# -- typing ---------------------------------------------------------------------------------------
def type_ahead(app: PactApp, *keys: str) -> None:
    """Send ``keys`` (Textual key names) to the app at once, as a terminal's driver does with
    keys typed ahead (one read, several keys): nothing runs between them, whereas
    ``pilot.press`` lets the app go idle after each key."""
    for key in keys:
        app.post_message(events.Key(key, key_to_character(key)))


# -- waiting ----------------------------------------------------------------------------------
SETTLE_LIMIT = 120.0  # long work (play, a story) may take a while on a loaded machine


async def settle(pilot: Pilot[Any]) -> None:
    """Let every worker finish and the screen catch up with it. An exclusive worker that a
    newer request superseded is cancelled: that is its end, not a failure. A worker still
    running after ``SETTLE_LIMIT`` seconds (one waiting on a modal screen the test left open)
    fails the test, naming it, instead of hanging it."""
    deadline = asyncio.get_running_loop().time() + SETTLE_LIMIT
    while True:
        running = [worker for worker in pilot.app.workers if not worker.is_finished]
        if not running:
            break
        if asyncio.get_running_loop().time() > deadline:
            still = [worker.name for worker in running]
            raise AssertionError(f"workers still running after {SETTLE_LIMIT:g} s: {still}")
        with contextlib.suppress(WorkerCancelled, TimeoutError):
            async with asyncio.timeout(max(0.0, deadline - asyncio.get_running_loop().time())):
                await pilot.app.workers.wait_for_complete(running)
        await pilot.pause()
    await pilot.pause()


def story_told(app: PactApp) -> bool:
    """Whether the context screen's detail tells the story of the item under the cursor (read
    once the cursor rests, after ``STORY_DELAY``: a timer, which ``settle`` does not wait for),
    or has none to tell (no context screen shown, or no item under the cursor)."""
    screen = app.screen
    if not isinstance(screen, ContextScreen):
        return True
    row, shown, told = screen.highlighted, screen.shown, screen.told
    if row is None or row.item is None or shown is None:
        return True
    return told is not None and (told.item_id, told.shown) == (row.item.id, shown)


async def holds_within(pilot: Pilot[Any], condition: Callable[[], bool], timeout: float) -> bool:
    """Let the app run until ``condition()`` holds (True) or ``timeout`` passes (False)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            return False
        await pilot.pause(0.02)
    return True


async def wait_until(
    pilot: Pilot[Any], condition: Callable[[], bool], what: str, timeout: float = WAIT
) -> None:
    """Let the app run until ``condition()`` holds; fail, saying ``what``, after ``timeout``."""
    if not await holds_within(pilot, condition, timeout):
        raise AssertionError(f"gave up after {timeout:g} s waiting for {what}")
