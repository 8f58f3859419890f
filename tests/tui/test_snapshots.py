"""SVG snapshots of the inspector (baselines in ``snapshots/tui/test_snapshots/``).

Plain ``def`` tests: the fixture runs its own event loop. Every screen is drawn from the demo
workspace built with a fixed clock (sequential ids), with a fixed clock in the app, no file
watchers, no animations, no blinking cursor, and no toasts left on screen. Update the baselines
with ``pytest tests/tui/test_snapshots.py --snapshot-update`` and look at them before committing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from pact_tui.app import PactApp

from .inspector import inspector, screen_of, settle, story_told, wait_until

SIZE = (120, 40)

Steps = Callable[[Pilot[Any]], Awaitable[None]]


def still(path: Path, theme: str = "pact-midnight") -> PactApp:
    app = inspector(path, theme=theme)
    app.animation_level = "none"
    return app


def steps(
    *keys: str,
    selector: str | None = None,
    feedback: str = "",
    then: tuple[str, ...] = (),
    last: tuple[str, ...] = (),
) -> Steps:
    """Press ``keys``, type ``selector`` into the bar (waiting for ``feedback`` under it), press
    ``then``, and ``last`` once all that has settled; wait for every command to finish, and
    clear the toasts (they time out on their own, so a slow run could draw them or not).
    Cursor keys go in ``last``: a key acts on the view on screen when it comes, and a view a
    worker is still rebuilding would otherwise get them on a slow run."""

    async def run(pilot: Pilot[Any]) -> None:
        app: PactApp = pilot.app  # type: ignore[assignment]
        await pilot.pause()
        await pilot.press(*keys)
        await settle(pilot)
        if selector is not None:
            screen = screen_of(app)
            await pilot.press("slash", *selector)
            bar = screen.query_one("#selector-feedback")
            await wait_until(
                pilot,
                lambda: screen.selector == selector and feedback in str(bar.render()),
                f"{feedback!r} under {selector!r}",
            )
        await pilot.press(*then)
        await settle(pilot)
        await pilot.press(*last)
        await settle(pilot)
        await wait_until(pilot, lambda: story_told(app), "the story of the item under the cursor")
        app.clear_notifications()
        await pilot.pause()

    return run


def test_the_demo_main_screen(snap_compare: Any, demo: Path) -> None:
    """The researcher's context, live at episode 6: the tree with every lifecycle type, the
    context list, the scrubber with seven snapshots, the system region in the detail."""
    assert snap_compare(still(demo), terminal_size=SIZE, run_before=steps())


def test_after_an_advance(snap_compare: Any, demo: Path) -> None:
    """EPISODE 7, an eighth tick on the scrubber; temporary items a step closer to expiry;
    the cursor on the render-lifecycle alert, whose detail shows its stage and history."""
    run = steps("full_stop", "end", "up")
    assert snap_compare(still(demo), terminal_size=SIZE, run_before=run)


def test_a_selector_with_matches(snap_compare: Any, demo: Path) -> None:
    """``+notes, #alert``: two matches highlighted, the cursor on the first, '2 matches'."""
    run = steps(selector="+notes, #alert", feedback="2 matches")
    assert snap_compare(still(demo), terminal_size=SIZE, run_before=run)


def test_a_selector_error(snap_compare: Any, demo: Path) -> None:
    """``d0, 1, x``: a caret under the x and what is wrong with it."""
    run = steps(selector="d0, 1, x", feedback="unknown term")
    assert snap_compare(still(demo), terminal_size=SIZE, run_before=run)


DIFF_KEYS = ("left_curly_bracket", "d", "right_square_bracket", "right_square_bracket")
ON_A_CHANGED_NODE = ("home", *["down"] * 7)  # (3,0,0), the first user message, moved 1 → 3


def test_a_diff(snap_compare: Any, demo: Path) -> None:
    """The first snapshot marked as the base, two steps on: added and moved items marked with
    their glyphs, the removed ones as ghost rows where they were and listed in the detail, the
    cursor on a moved message (depth 1 → 3)."""
    run = steps(*DIFF_KEYS, last=ON_A_CHANGED_NODE)
    assert snap_compare(still(demo), terminal_size=SIZE, run_before=run)


def test_the_help_screen(snap_compare: Any, demo: Path) -> None:
    """``?``: every key with what it does, and the selector language."""
    assert snap_compare(still(demo), terminal_size=SIZE, run_before=steps("question_mark"))


def test_the_provider_view(snap_compare: Any, demo: Path) -> None:
    """``v``: what the model would be sent, one line per entry, roles coloured."""
    assert snap_compare(still(demo), terminal_size=SIZE, run_before=steps("v"))


@pytest.mark.parametrize("theme", ["pact-midnight", "pact-paper", "pact-ember"])
@pytest.mark.slow
def test_each_theme(snap_compare: Any, demo: Path, theme: str) -> None:
    """A busy screen in each theme: the past (warning border), a diff's added and changed
    marks, a selector's match (#finding, at (0,1,0)), the cursor on a changed node."""
    run = steps(
        selector="#finding",
        feedback="1 match",
        then=("enter", *DIFF_KEYS),
        last=ON_A_CHANGED_NODE,
    )
    assert snap_compare(still(demo, theme), terminal_size=SIZE, run_before=run)


def test_the_escalation_inbox(
    snap_compare: Any, demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memo's escalation inbox: the escalated conflict and the open question, oldest
    first, the question's timeout countdown; the conflict's briefing beside it; the badge."""
    # The clock is read once, on mount: every run draws the same countdowns.
    monkeypatch.setattr("pact_tui.screens.document.TICK_S", 3600.0)
    app = inspector(demo, theme="pact-midnight", human="ann")
    app.animation_level = "none"
    assert snap_compare(app, terminal_size=SIZE, run_before=steps("2", "I"))


def test_the_proposal_queue(snap_compare: Any, demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo's proposal queue: the escalated conflict's two sides first, the pending one
    with its window's countdown, the merged one last; the pending one's word-level diff."""
    monkeypatch.setattr("pact_tui.screens.document.TICK_S", 3600.0)
    app = inspector(demo, theme="pact-midnight", human="ann")
    app.animation_level = "none"
    assert snap_compare(app, terminal_size=SIZE, run_before=steps("2", "P", "down", "down"))


def test_the_proposal_queue_side_by_side(
    snap_compare: Any, demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("pact_tui.screens.document.TICK_S", 3600.0)
    app = inspector(demo, theme="pact-midnight", human="ann")
    app.animation_level = "none"
    keys = ("2", "P", "down", "down", "vertical_line")
    assert snap_compare(app, terminal_size=SIZE, run_before=steps(*keys))


def test_the_salience_heatmap(
    snap_compare: Any, demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memo's heatmap: four agents over seven sections, coloured from the theme, the
    cursor on legal's cell of sec:risk (an intent and a constraint) and what it holds beside."""
    monkeypatch.setattr("pact_tui.screens.document.TICK_S", 3600.0)
    app = inspector(demo, theme="pact-midnight", human="ann")
    app.animation_level = "none"
    keys = ("2", "H", "right", "right")
    assert snap_compare(app, terminal_size=SIZE, run_before=steps(*keys))


@pytest.mark.parametrize("view", [pytest.param("O", id="o"), "A", "E"])
def test_the_document_views(
    snap_compare: Any, demo: Path, monkeypatch: pytest.MonkeyPatch, view: str
) -> None:
    """The memo's section outline (with the selected section's Markdown), its agents and its
    events, each as the custodian sees them."""
    monkeypatch.setattr("pact_tui.screens.document.TICK_S", 3600.0)
    app = inspector(demo, theme="pact-midnight", human="ann")
    app.animation_level = "none"
    assert snap_compare(app, terminal_size=SIZE, run_before=steps("2", view))


def test_the_document_in_the_past_with_a_diff(
    snap_compare: Any, demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memo's creation marked as the diff base, then back to live: the diff beside the
    outline lists the sections that changed since and shows the content's diff."""
    monkeypatch.setattr("pact_tui.screens.document.TICK_S", 3600.0)
    app = inspector(demo, theme="pact-midnight", human="ann")
    app.animation_level = "none"
    keys = ("2", "left_curly_bracket", "d", "right_curly_bracket")
    assert snap_compare(app, terminal_size=SIZE, run_before=steps(*keys))
