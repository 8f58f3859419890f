"""Each of the app's screens against the rules ``docs/screens.md`` states: state is ``var``s,
each with its docstring; the status line is a widget bound to the screen's ``status`` (never
written by hand), as the other widgets are bound to what they draw; and each screen brings its
own help groups, legends and palette commands (the keys: ``test_keymap.py``)."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
from textual.reactive import Reactive, var
from textual.screen import Screen
from textual.widget import Widget

from engine.protocol.document import Document
from pact_tui.screens.context import ContextScreen
from pact_tui.screens.document import DocumentScreen
from pact_tui.screens.masterlog import MasterLogScreen
from pact_tui.screens.timetravel import TimeTravel

from .inspector import SIZE, inspector, settle, wait_until

SCREENS = [ContextScreen, DocumentScreen, MasterLogScreen]
STATUS_BAR = {
    ContextScreen: "#status",
    DocumentScreen: "#doc-status",
    MasterLogScreen: "#log-status",
}
DETAIL_PANES: dict[type[Screen[Any]], dict[str, set[str]]] = {
    # each pane, and the screen reactives it is bound to
    ContextScreen: {"#detail": {"subject"}},
    DocumentScreen: {
        "#inbox-briefing": {"shown", "inbox_row"},
        "#heat-detail": {"shown", "heat_cell"},
        "#agent-detail": {"shown", "agent_id", "view"},
        "#proposal-detail": {"shown", "proposal_id", "view"},
        "#event-detail": {"shown", "event_sequence", "view"},
        "#doc-diff": {"shown", "base_doc"},
        "#section-comments": {"shown", "section_id", "view"},
    },
    MasterLogScreen: {"#reference": {"subject"}},
}
GPTME = Path(__file__).resolve().parents[1] / "fixtures" / "gptme"


def reactives_of(screen: type[Screen[Any]]) -> dict[str, Reactive[Any]]:
    """The reactives the screen's own class declares."""
    return {name: value for name, value in vars(screen).items() if isinstance(value, Reactive)}


@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: s.__name__)
def test_state_is_vars_each_with_its_docstring(screen: type[Screen[Any]]) -> None:
    declared = reactives_of(screen)
    assert "status" in declared and "shown" in declared
    repainting = [name for name, r in declared.items() if not isinstance(r, var)]
    assert not repainting, f"{screen.__name__}: reactives that repaint the screen: {repainting}"
    tree = ast.parse(textwrap.dedent(inspect.getsource(screen)))
    body = tree.body[0].body  # type: ignore[attr-defined]
    documented = {
        statement.target.id
        for statement, after in itertools.pairwise(body)
        if isinstance(statement, ast.AnnAssign)
        and isinstance(statement.target, ast.Name)
        and isinstance(after, ast.Expr)
        and isinstance(after.value, ast.Constant)
        and isinstance(after.value.value, str)
    }
    missing = sorted(set(declared) - documented)
    assert not missing, f"{screen.__name__}: reactives without a docstring: {missing}"


@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: s.__name__)
def test_each_screen_brings_its_help_and_its_palette(screen: type[Screen[Any]]) -> None:
    groups = screen.help_groups()  # type: ignore[attr-defined]
    assert groups and all(title and bindings for title, bindings in groups)
    assert isinstance(screen.legends(), list)  # type: ignore[attr-defined]
    assert callable(getattr(screen, "system_commands", None))


def bound_to(screen: Screen[Any], widget: Widget) -> set[str]:
    """The screen's reactives ``widget`` is bound to: those whose watchers ``data_bind`` gave
    it (Textual keeps them on the screen, under ``__watchers``)."""
    watchers: dict[str, list[tuple[Any, Any]]] = getattr(screen, "__watchers", {})
    return {name for name, found in watchers.items() if any(n is widget for n, _ in found)}


def _check_panes_bound(screen: Screen[Any]) -> None:
    """Each detail pane is bound to the screen's reactives (``data_bind``), as the status is."""
    assert bound_to(screen, screen.query_one(STATUS_BAR[type(screen)])) == {"status"}
    for selector, names in DETAIL_PANES[type(screen)].items():
        bound = bound_to(screen, screen.query_one(selector))
        assert names <= bound, f"{type(screen).__name__}'s {selector} is bound to {bound}"


async def _check_bound(pilot: Any, screen: Screen[Any]) -> None:
    """The bar draws the screen's ``status``: a new value set on the screen (and nothing else)
    reaches it."""
    bar: Widget = screen.query_one(STATUS_BAR[type(screen)])
    now = screen.status  # type: ignore[attr-defined]
    assert bar.status is now  # type: ignore[attr-defined]
    if hasattr(screen, "compute_status"):  # a compute: read-only, and followed the same way
        return
    field = "directory" if type(screen) is MasterLogScreen else "custodian"
    probe = dataclasses.replace(now, **{field: "probe"})
    screen.set_reactive(type(screen).status, probe)  # type: ignore[attr-defined]
    screen.mutate_reactive(type(screen).status)  # type: ignore[attr-defined]
    # at once (a binding's setter runs in the watcher), before a clock tick derives it anew
    assert bar.status == probe, f"{type(screen).__name__}'s status line is not bound to it"
    assert "probe" in str(bar.render())


async def test_every_screen_s_status_line_is_bound_to_its_status(
    demo: Path, tmp_path: Path
) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _check_bound(pilot, app.screen)
        _check_panes_bound(app.screen)
        await pilot.press("2")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, DocumentScreen) and app.screen.shown is not None,
            "the memo",
        )
        await settle(pilot)
        assert "memo · v" in str(app.screen.query_one("#doc-status").render())
        await _check_bound(pilot, app.screen)
        _check_panes_bound(app.screen)
    conversation = tmp_path / "logs" / "conv-basic"
    shutil.copytree(GPTME / "conv-basic", conversation)
    app = inspector(conversation)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "conv-basic · master" in str(app.screen.query_one("#log-status").render())
        await _check_bound(pilot, app.screen)
        _check_panes_bound(app.screen)


def test_no_screen_writes_its_status_line_or_a_bound_pane_by_hand() -> None:
    """The line and the bound panes are drawn from the bound values only: no screen queries
    them to update them."""
    for screen in SCREENS:
        source = inspect.getsource(inspect.getmodule(screen))  # type: ignore[arg-type]
        for selector in [STATUS_BAR[screen], *DETAIL_PANES[screen]]:
            written = f'query_one("{selector}", Static).update'
            assert written not in source, f"{screen.__name__} writes {selector}"
            assert f'query_one("{selector}").update' not in source, selector


# -- state is named values, not bare tuples ------------------------------------------------------
PLAIN = {"str", "int", "float", "bool", "None"}


def bare_tuples(screen: type[Screen[Any]]) -> list[str]:
    """The screen's vars whose type is a fixed tuple holding more than plain values (a document,
    a view): such a value is a named, frozen dataclass (``DocAt``), read by its fields."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(screen)))
    found = []
    for statement in tree.body[0].body:  # type: ignore[attr-defined]
        if not (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)):
            continue
        if not ast.unparse(statement.annotation).startswith(("var[", "reactive[")):
            continue  # a cache of the screen's, not its state
        for node in ast.walk(statement.annotation):
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Name)
                and node.value.id == "tuple"
                and isinstance(node.slice, ast.Tuple)
            ):
                elements = node.slice.elts
                if any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in elements):
                    continue  # tuple[X, ...]: a sequence
                names = {e.id if isinstance(e, ast.Name) else ast.unparse(e) for e in elements}
                if names - PLAIN:
                    found.append(f"{statement.target.id}: {ast.unparse(statement.annotation)}")
    return found


@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: s.__name__)
def test_state_holds_no_bare_tuple_of_a_document_or_a_view(screen: type[Screen[Any]]) -> None:
    assert bare_tuples(screen) == []


def test_the_bare_tuple_check_finds_one() -> None:
    class Bare(Screen[None]):
        past: var[tuple[str, int, Document] | None] = var(None)
        """The check must see this one."""
        documents: var[tuple[str, ...]] = var(())
        """A sequence: allowed."""

    assert bare_tuples(Bare) == ["past: var[tuple[str, int, Document] | None]"]


# -- one time-travel component, one set of keys --------------------------------------------------
TRAVELLING = [ContextScreen, DocumentScreen]


@pytest.mark.parametrize("screen", TRAVELLING, ids=lambda s: s.__name__)
def test_time_travel_is_one_component_with_one_set_of_keys(screen: type[TimeTravel]) -> None:
    """Both screens that show a past are a ``TimeTravel``: its bindings (the very objects, so
    one set of keys and words), its actions (not written again), its palette commands."""
    assert issubclass(screen, TimeTravel)
    own = vars(screen)["BINDINGS"]
    component = TimeTravel.TIME_BINDINGS
    assert all(any(b is c for b in own) for c in component)
    time_ids = {c.id for c in component}  # type: ignore[union-attr]
    again = [b for b in own if b.id in time_ids and not any(b is c for c in component)]
    assert again == [], f"{screen.__name__} binds time travel's ids itself"
    rewritten = [a for a in ("earlier", "later", "first", "live") if f"action_{a}" in vars(screen)]
    assert rewritten == [], f"{screen.__name__} writes time travel's actions again"
    assert not issubclass(MasterLogScreen, TimeTravel)


async def travel(pilot: Any, screen: TimeTravel) -> None:
    """``[`` from live to the newest past, ``{`` to the first, ``]`` one forward, ``}`` live."""
    newest = screen.newest_past()
    name = type(screen).__name__
    await pilot.press("left_square_bracket")
    await wait_until(pilot, lambda: screen.position == newest, f"{name}: [")
    await pilot.press("left_curly_bracket")
    await wait_until(pilot, lambda: screen.position == screen.FIRST, f"{name}: {{")
    await pilot.press("right_square_bracket")
    await wait_until(pilot, lambda: screen.position == screen.FIRST + 1, f"{name}: ]")
    await pilot.press("right_curly_bracket")
    await wait_until(pilot, lambda: screen.position is None, f"{name}: }}")
    commands = {c.title for c in screen.system_commands()}  # type: ignore[attr-defined]
    assert {"Return to live", "Diff: mark or clear the base"} <= commands


async def test_the_same_keys_travel_through_both_screens(demo: Path) -> None:
    """The same keys on the context screen (snapshots) and the document screen (events)."""
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ContextScreen)
        await travel(pilot, app.screen)
        await pilot.press("2")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, DocumentScreen) and app.screen.shown is not None,
            "the memo",
        )
        assert isinstance(app.screen, DocumentScreen)
        await travel(pilot, app.screen)
