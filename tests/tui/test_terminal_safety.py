"""Terminal safety in the app: on a workspace whose keys, tags, content, types, data, seal
triggers and actor carry escape sequences, no view draws a raw control character: the tree and
the provider view on every row (and the detail pane for each), the content reader, a past
snapshot (status line, scrubber, pane title), a diff (its removed items), the selector bar's
error, the help page, the palette, and the notifications."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.pilot import Pilot
from textual.widgets import Input

from pact_tui.app import PactApp
from pact_tui.screens.reader import ReaderScreen
from pact_tui.widgets.detail import NodeDetail
from pact_tui.widgets.selector_bar import SelectorBar
from tests.hostile import PAYLOAD, build_hostile, raw_controls

from .inspector import (
    SIZE,
    detail_text,
    inspector,
    notifications,
    screen_of,
    screen_text,
    wait_until,
)


def assert_drawn_safe(app: PactApp, where: str) -> str:
    """What the top screen draws, with every notification raised so far: no raw control
    character (a newline only between lines)."""
    drawn = screen_text(app)
    found = raw_controls(drawn) + raw_controls("\n".join(notifications(app)))
    assert not found, f"{where}: {found[:3]}"
    return drawn


async def walk_rows(pilot: Pilot[Any], app: PactApp, where: str) -> set[str]:
    """Every row of the pane shown, top to bottom, with the detail pane for each (its story
    told, for an item); returns the kinds of row seen."""
    screen = screen_of(app)
    pane = screen.active_pane
    await pilot.press("home")
    kinds: set[str] = set()
    for line in range(pane.layout_model.line_count):
        if line:
            await pilot.press("down")
        row = pane.current_row
        assert row is not None
        kinds.add(row.kind)
        if row.item is not None:
            await wait_until(
                pilot,
                lambda: "reading the log…" not in detail_text(app) and screen.told is not None,
                f"the story of row {line}",
            )
        await pilot.pause()
        assert_drawn_safe(app, f"{where}, row {line} ({row.kind})")
    return kinds


@pytest.mark.slow
async def test_no_view_draws_a_raw_control_character(tmp_path: Path) -> None:
    path = tmp_path / "evil.pact"
    await build_hostile(path)
    app = inspector(path, context=PAYLOAD)  # no such context: the notification quotes it
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await wait_until(pilot, lambda: screen.view is not None, "the context")
        drawn = assert_drawn_safe(app, "the tree")
        assert "#k\\u001b[2J\\u001b]0;pwned\\u0007" in drawn  # shown, made visible
        assert any("no context named" in n for n in notifications(app))

        kinds = await walk_rows(pilot, app, "the tree")
        assert kinds == {"system", "turn", "slot", "item"}

        await pilot.press("v")
        assert await walk_rows(pilot, app, "the provider view") == {"item"}

        # The content reader, over the item whose content is the payload's.
        await pilot.press("home")
        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, ReaderScreen), "the reader")
        await pilot.pause()
        assert "replaced \\u001b[2J" in assert_drawn_safe(app, "the reader")
        await pilot.press("escape")
        await pilot.press("v")

        # The past: the newest snapshot (its trigger in the status line, the scrubber, the
        # title), then the oldest, and a diff from it to now (its removed items listed).
        await pilot.press("left_square_bracket")
        await wait_until(pilot, lambda: screen.position is not None, "the past")
        await pilot.pause()
        drawn = assert_drawn_safe(app, "the newest snapshot")
        assert "second \\u001b[2J" in drawn
        await pilot.press("left_curly_bracket", "d", "right_curly_bracket")
        await wait_until(pilot, lambda: screen.comparison is not None, "the diff")
        await pilot.press("home")
        await pilot.pause()
        assert "diff " in detail_text(app)
        assert "short-lived \\u001b[2J" in " ".join(detail_text(app).split())  # removed
        await walk_rows(pilot, app, "the diff")
        await pilot.press("d")

        # A paste holding control characters is refused by the selector bar (the input would
        # draw them raw); a selector that holds some anyway is quoted visible by its error.
        await pilot.press("slash")
        bar = screen.query_one(SelectorBar)
        field = bar.query_one(Input)
        await pilot.press(*"#k")
        await wait_until(pilot, lambda: screen.selector == "#k", "the typed selector")
        field.post_message(events.Paste(PAYLOAD))
        await pilot.pause()
        assert field.value == "#k"
        assert_drawn_safe(app, "a refused paste")
        screen.selector = "#" + PAYLOAD
        await pilot.pause()
        assert screen.selection.problem is not None
        assert "\\u001b" in assert_drawn_safe(app, "the selector's error")
        await pilot.press("escape")

        await pilot.press("question_mark")
        await pilot.pause()
        assert "pact-tui keys" in assert_drawn_safe(app, "the help page")
        await pilot.press("escape")

        await pilot.press("ctrl+p")
        await pilot.pause()
        assert_drawn_safe(app, "the palette")
        await pilot.press("escape")
        assert screen.query_one(NodeDetail) is not None
