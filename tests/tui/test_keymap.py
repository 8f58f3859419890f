"""One keymap (``pact_tui/keymap.py``): every binding of the app has an id from the registry and
its keys; on each screen a key names one action, no widget's key shadows its screen's, one
action has one key everywhere; the keys shared by several screens mean the same on all; and a
user's ``[keys]`` table rebinds keys, shown in the footer, the help page and the palette, or is
refused whole with the clash or the mistake named."""

from __future__ import annotations

import io
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from rich.console import Console
from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from pact_tui.app import PactApp
from pact_tui.keymap import (
    ACTIONS,
    SCREENS,
    KeymapError,
    bind,
    check_keymap,
    clashes,
    split_keys,
)
from pact_tui.screens.choose import ChooseScreen
from pact_tui.screens.confirm import ConfirmScreen
from pact_tui.screens.context import ContextScreen
from pact_tui.screens.custodian import InvitesScreen, TokenScreen
from pact_tui.screens.document import DocumentScreen
from pact_tui.screens.edit import EditScreen
from pact_tui.screens.help import HelpScreen
from pact_tui.screens.masterlog import MasterLogScreen
from pact_tui.screens.original import OriginalScreen
from pact_tui.screens.pick import PickScreen
from pact_tui.screens.prompt import PromptScreen
from pact_tui.screens.reader import ReaderScreen
from pact_tui.themes import config_file
from pact_tui.widgets.footer import FittedFooter
from pact_tui.widgets.reader import ContentReader

from .inspector import SIZE, inspector, notifications, screen_of, settle, wait_until

GPTME = Path(__file__).resolve().parents[1] / "fixtures" / "gptme"
DOCUMENT_VIEWS = ("outline", "proposals", "heatmap", "inbox", "agents", "events")


def own_bindings(node: type[DOMNode]) -> Iterable[Binding]:
    """The bindings ``node``'s class and its bases in pact_tui (or made here to break a rule)
    declare (Textual's own widgets' are Textual's business)."""
    for cls in type.mro(node):
        if cls.__module__.startswith(("pact_tui.", "tests.")):
            for given in cls.__dict__.get("BINDINGS", []):
                assert isinstance(given, Binding), f"{cls.__name__}: {given!r} is not a Binding"
                yield given


def problems_on(place: str, nodes: list[type[DOMNode]], widgets: list[type[DOMNode]]) -> list[str]:
    """What breaks the rules on one screen, given the classes of what it holds (``nodes``: the
    app, the screen and every widget on it; ``widgets``: those of them that are widgets)."""
    problems: list[str] = []
    keys: dict[str, set[str]] = {}
    for node in nodes:
        for binding in own_bindings(node):
            if binding.id not in ACTIONS:
                problems.append(f"{node.__name__}: {binding.action} has no action id")
                continue
            action = ACTIONS[binding.id]
            if binding.key != action.keys:
                problems.append(
                    f"{node.__name__}: {binding.id} is {binding.key!r} here, {action.keys!r} in"
                    " the keymap"
                )
            if not (place in action.where or ("app" in action.where and place in SCREENS)):
                problems.append(
                    f"{binding.id} is bound on the {place} screen, and the keymap does not say so"
                )
            for key in split_keys(binding.key):
                keys.setdefault(key, set()).add(binding.id)
    for key, ids in keys.items():
        if len(ids) > 1:
            problems.append(f"on the {place} screen {key} names two actions: {sorted(ids)}")
    above = {
        key: binding.id
        for node in nodes
        if node not in widgets
        for binding in own_bindings(node)
        for key in split_keys(binding.key)
    }
    for widget in widgets:
        for binding in own_bindings(widget):
            for key in split_keys(binding.key):
                if above.get(key, binding.id) != binding.id:
                    problems.append(
                        f"{widget.__name__}'s {key} ({binding.id}) shadows the {place} screen's"
                        f" ({above[key]})"
                    )
    return problems


def check_place(place: str, nodes: list[type[DOMNode]], widgets: list[type[DOMNode]]) -> None:
    problems = problems_on(place, nodes, widgets)
    assert not problems, "\n".join(problems)


def keys_by_id(classes: Iterable[type[DOMNode]]) -> dict[str, set[str]]:
    """Each action id's keys over ``classes``: more than one set is one action with different
    keys in different places."""
    seen: dict[str, set[str]] = {}
    for cls in classes:
        for binding in own_bindings(cls):
            seen.setdefault(str(binding.id), set()).add(binding.key)
    return seen


# -- the checks themselves fail on what they are for (classes made to break each rule) -----------
class _ScreenA(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [bind("copy", "copy", "Copy")]


class _TwoMeanings(Screen[None]):
    """Copy and a second action both on y (a keymap edited by hand, or a Binding made by hand)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("copy", "copy", "Copy"),
        Binding("y", "yank", "Yank", id="read"),
    ]


class _Shadowing(Widget):
    """A widget taking the screen's ``y`` for its own action."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("y", "yank", "Yank", id="read")]


class _OtherKeys(Screen[None]):
    """Copy on ``c`` here, while it is ``y`` on the other screens."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("c", "copy", "Copy", id="copy")]


def test_the_check_fails_when_two_actions_share_a_key_on_a_screen() -> None:
    problems = problems_on("contexts", [_TwoMeanings], [])
    assert "on the contexts screen y names two actions: ['copy', 'read']" in problems


def test_the_check_fails_when_a_widget_shadows_its_screen() -> None:
    problems = problems_on("contexts", [_ScreenA, _Shadowing], [_Shadowing])
    assert "_Shadowing's y (read) shadows the contexts screen's (copy)" in problems


def test_the_check_fails_when_an_action_has_other_keys_on_another_screen() -> None:
    assert keys_by_id([_ScreenA, _OtherKeys])["copy"] == {"y", "c"}
    problems = problems_on("masterlog", [_OtherKeys], [])
    assert "_OtherKeys: copy is 'c' here, 'y' in the keymap" in problems


def test_the_app_s_screens_pass_the_checks() -> None:
    """The same checks on the real classes, by class (the mounted screens: below)."""
    assert problems_on("contexts", [PactApp, ContextScreen], []) == []
    assert (
        problems_on("documents", [PactApp, DocumentScreen, *DOCUMENT_CLASSES], DOCUMENT_CLASSES)
        == []
    )
    assert problems_on("masterlog", [PactApp, MasterLogScreen], []) == []


def mounted(app: PactApp) -> tuple[list[type[DOMNode]], list[type[DOMNode]]]:
    screen = app.screen
    widgets = list({type(w): None for w in screen.walk_children(with_self=False)})
    return [type(app), type(screen), *widgets], widgets


def test_the_keymap_gives_no_key_two_meanings() -> None:
    assert clashes({}) == []


@pytest.mark.parametrize(
    ("keymap", "said"),
    [
        ({"copy": "f"}, "f is copy and filter on the contexts screen"),
        ({"approve": "y"}, "y is copy on every screen, and approve on the documents screen"),
        ({"reject": "e"}, "e is reject and respond on the documents screen"),
        ({"inbox": "a"}, "a is approve and inbox on the documents screen"),
    ],
)
def test_a_keymap_that_gives_a_key_two_meanings_is_named(keymap: dict[str, str], said: str) -> None:
    assert said in clashes(keymap)
    with pytest.raises(KeymapError, match=said):
        check_keymap(keymap, "config.toml")


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ({"nonsense": "x"}, "names no action 'nonsense'"),
        ({"copy": 3}, "copy must be a string of keys"),
        ({"copy": ""}, "copy must be a string of keys"),
        ({"copy": "ctrl+ y"}, "'ctrl+ y' is not a key name"),
        (["copy"], "must be a table"),
    ],
)
def test_a_keys_table_that_is_wrong_says_what_and_where(table: Any, said: str) -> None:
    with pytest.raises(KeymapError, match="config.toml: .*" + said.replace("+", r"\+")):
        check_keymap(table, "config.toml")


async def test_every_screen_keeps_the_rules(demo: Path, tmp_path: Path) -> None:
    """Each screen mounted as the app shows it, every view of the document screen brought to
    the front: every binding on it comes from the keymap with its id and keys, no key names
    two actions, no widget's key shadows the screen's; and the help page lists them all."""
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        nodes, widgets = mounted(app)
        check_place("contexts", nodes, widgets)
        assert_help_lists(app, nodes)
        await pilot.press("2")
        await settle(pilot)
        nodes, widgets = mounted(app)
        check_place("documents", nodes, widgets)
        assert_help_lists(app, nodes)
    conversation = tmp_path / "logs" / "conv-basic"
    shutil.copytree(GPTME / "conv-basic", conversation)
    app = inspector(conversation)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        nodes, widgets = mounted(app)
        check_place("masterlog", nodes, widgets)
        assert_help_lists(app, nodes)


def assert_help_lists(app: PactApp, nodes: list[type[DOMNode]]) -> None:
    """Every key on the screen is on its help page."""
    listed = {
        binding.id
        for _title, bindings in app.screen.help_groups()  # type: ignore[attr-defined]
        for binding in bindings
        if isinstance(binding, Binding)
    } | {binding.id for binding in own_bindings(type(app))}
    missing = {b.id for node in nodes for b in own_bindings(node)} - listed
    assert not missing, f"the help page of {type(app.screen).__name__} leaves out {missing}"


@pytest.mark.parametrize(
    ("place", "modal", "inside"),
    [
        ("dialog", ChooseScreen, []),
        ("dialog", PickScreen, []),
        ("dialog", PromptScreen, []),
        ("dialog", EditScreen, []),
        ("confirm", ConfirmScreen, []),
        ("help", HelpScreen, []),
        ("reader", ReaderScreen, [ContentReader]),
        ("reader", OriginalScreen, [ContentReader]),
        ("invites", InvitesScreen, []),
        ("token", TokenScreen, []),
    ],
)
def test_every_modal_screen_keeps_the_rules(
    place: str, modal: type[DOMNode], inside: list[type[DOMNode]]
) -> None:
    """A modal screen takes every key while it is open (nothing under it does)."""
    check_place(place, [modal, *inside], inside)


def test_an_action_has_one_key_wherever_it_is() -> None:
    """What ``bind`` makes: every class that declares an action gives it the registry's keys
    (checked per screen above), so an id is the same keys on every screen."""
    seen = keys_by_id([ContextScreen, DocumentScreen, MasterLogScreen, *DOCUMENT_CLASSES])
    assert {k: v for k, v in seen.items() if len(v) > 1} == {}
    assert seen["live"] == {"right_curly_bracket"}
    assert seen["copy"] == {"y"}
    assert seen["filter"] == {"f"}
    assert seen["follow"] == {"F"}


def _document_classes() -> list[type[DOMNode]]:
    from pact_tui.widgets.agents import AgentRoster
    from pact_tui.widgets.events import EventList
    from pact_tui.widgets.heatmap import SalienceHeatmap
    from pact_tui.widgets.inbox import EscalationInbox
    from pact_tui.widgets.queue import ProposalQueue

    return [AgentRoster, EventList, SalienceHeatmap, EscalationInbox, ProposalQueue]


DOCUMENT_CLASSES = _document_classes()


def write_config(text: str) -> Path:
    path = config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def footer_keys(app: PactApp) -> dict[str, str]:
    """What the footer shows: key → description, of the keys it has room for."""
    from textual.widgets._footer import FooterKey

    footer = app.screen.query_one(FittedFooter)
    return {key.key_display: key.description for key in footer.query(FooterKey) if key.display}


async def test_a_users_keys_rebind_and_are_shown_everywhere(demo: Path) -> None:
    """``[keys] live = "Y"`` in the config file: Y returns to live on the contexts screen (and
    } no more), the footer and the help page say Y, and the palette's "Return to live" does."""
    write_config('theme = "pact-midnight"\n\n[keys]\nlive = "Y"\n')
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert screen.position is not None
        await pilot.press("right_curly_bracket")
        await settle(pilot)
        assert screen.position is not None, "} is no longer live"
        assert footer_keys(app).get("Y") == "Live"
        await pilot.press("Y")
        await settle(pilot)
        assert screen.position is None
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=140, record=True, file=io.StringIO())
        for static in app.screen.query(Static):
            console.print(static.content)
        help_text = console.export_text()
        assert "return to live" in help_text
        line = next(t for t in help_text.splitlines() if "return to live" in t)
        assert line.split()[0] == "Y", line
        await pilot.press("escape")
        from textual.command import CommandPalette

        await pilot.press("ctrl+p", *"Return to live")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, CommandPalette) and "key Y" in palette_text(app.screen),
            "the palette's entry naming Y",
        )


def palette_text(palette: Any) -> str:
    from textual.command import CommandList

    options = palette.query_one(CommandList)
    return "\n".join(
        str(options.get_option_at_index(i).prompt) for i in range(options.option_count)
    )


async def test_a_keys_table_with_a_mistake_is_refused_whole(demo: Path) -> None:
    """A ``[keys]`` table naming an action that does not exist changes no key (its good entry
    neither), and the notification names the file and the mistake."""
    path = write_config('[keys]\nlive = "L"\nnonsense = "x"\n')
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        said = notifications(app)
        assert any(str(path) in n and "names no action 'nonsense'" in n for n in said), said
        screen = screen_of(app)
        await pilot.press("left_square_bracket")
        await settle(pilot)
        await pilot.press("L")
        await settle(pilot)
        assert screen.position is not None, "L was not applied"
        await pilot.press("right_curly_bracket")
        await settle(pilot)
        assert screen.position is None


# -- docs/keys.md: every action id, generated from the keymap ------------------------------------
KEYS_DOC = Path(__file__).resolve().parents[2] / "docs" / "keys.md"
ALL_CLASSES: list[type[DOMNode]] = [
    PactApp,
    ContextScreen,
    DocumentScreen,
    MasterLogScreen,
    ChooseScreen,
    PickScreen,
    PromptScreen,
    EditScreen,
    ConfirmScreen,
    HelpScreen,
    ReaderScreen,
    OriginalScreen,
    ContentReader,
    InvitesScreen,
    TokenScreen,
]


def described() -> dict[str, str]:
    """Each action id's tooltip (else its description), from the classes that bind it."""
    from pact_tui.widgets.context_list import ContextList
    from pact_tui.widgets.context_tree import ContextTree, ProviderList
    from pact_tui.widgets.cursor import CursorPane
    from pact_tui.widgets.rows import RowList
    from pact_tui.widgets.selector_bar import SelectorBar

    said: dict[str, list[str]] = {}
    widgets = [CursorPane, RowList, ContextTree, ProviderList, ContextList, SelectorBar]
    for cls in [*ALL_CLASSES, *widgets, *DOCUMENT_CLASSES]:
        for binding in own_bindings(cls):
            texts = said.setdefault(str(binding.id), [])
            text = binding.tooltip or binding.description
            if text not in texts:
                texts.append(text)
    return {action_id: " / ".join(texts) for action_id, texts in said.items()}


def test_docs_keys_lists_every_action() -> None:
    """``docs/keys.md`` is what the keymap says (to regenerate it:
    ``python -m tests.tui.test_keymap``)."""
    from pact_tui.keymap import reference

    said = described()
    assert set(said) == set(ACTIONS), f"ids bound nowhere: {set(ACTIONS) - set(said)}"
    assert KEYS_DOC.read_text(encoding="utf-8") == reference(said)


if __name__ == "__main__":
    from pact_tui.keymap import reference

    KEYS_DOC.write_text(reference(described()), encoding="utf-8")
