"""Nothing an agent writes acts on the custodian's terminal or crashes the app: every screen
and view, at 80x24 and 160x48, over a workspace (a context and a document) and a gptme
conversation whose every text field holds the hostile set of ``tests/hostile.py`` (C0 and C1
controls, OSC 0/2/8/52 ended by BEL and by ST, bidi overrides, ``[/]``, ``[@click=…]``,
``[link=…]``, Rich and Textual markup, 10 MB texts).

At every step the screen as drawn is read segment by segment: no raw control character, no
link and no action made from the data (the data's name them "pwned"), and the app still runs.
The data is shown, made visible: the hostile markup appears on screen as the text it is."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.content import Content
from textual.pilot import Pilot
from textual.widgets import Input

from pact_tui.app import PactApp
from pact_tui.screens.choose import ChooseScreen
from pact_tui.screens.custodian import InvitesScreen, TokenScreen
from pact_tui.screens.document import DocumentScreen
from pact_tui.screens.masterlog import MasterLogScreen
from pact_tui.screens.original import OriginalScreen
from pact_tui.screens.pick import PickScreen
from pact_tui.screens.prompt import PromptScreen
from pact_tui.screens.reader import ReaderScreen
from pact_tui.widgets.context_tree import ContextTree
from pact_tui.widgets.rows import RowList
from tests.hostile import (
    HOSTILE,
    MARKS,
    build_hostile,
    build_hostile_conversation,
    build_hostile_document,
    raw_controls,
)

from .inspector import inspector, notifications, settle, wait_until

SIZES = [(80, 24), (160, 48)]
TYPED_FILTER = "[/] [@click=app.bell('pwned')]x[/] [link='https://pwned.example/']y"
# What the hostile markup looks like once drawn as text (a name cut short still shows its start).
SHOWN_MARKUP = "x[/] [@click=app.bell("


@pytest.fixture(scope="session")  # kept while other modules' slow tests run
def hostile_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import asyncio

    path = tmp_path_factory.mktemp("hostile") / "evil.pact"
    asyncio.run(build_hostile(path, actor=HOSTILE, payload=HOSTILE))
    asyncio.run(build_hostile_document(path))
    return path


@pytest.fixture(scope="session")  # kept while other modules' slow tests run
def hostile_conversation(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_hostile_conversation(tmp_path_factory.mktemp("gptme") / "conversation")


@pytest.fixture
def workspace(hostile_workspace: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "evil.pact"
    shutil.copy(hostile_workspace, copy)
    return copy


@pytest.fixture
def conversation(
    hostile_conversation: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    monkeypatch.setenv("PACT_TUI_CACHE", str(tmp_path / "cache"))
    copy = tmp_path / "conversation"
    shutil.copytree(hostile_conversation, copy)
    return copy


# -- what is drawn ------------------------------------------------------------------------------
def spans_from_data(app: PactApp) -> Iterator[str]:
    """Every link, and every action naming the data's mark, on the screen as drawn."""
    for strip in app.screen._compositor.render_strips():
        for segment in strip:
            style = segment.style
            if style is None:
                continue
            if style.link:
                yield f"a link to {style.link!r} on {segment.text!r}"
            action = str(style.meta.get("@click", "")) if style.meta else ""
            if any(mark in action for mark in MARKS):
                yield f"the action {action!r} on {segment.text!r}"


def check(app: PactApp, where: str) -> str:
    """The app runs; what it draws (its notifications too) holds no raw control character and
    no link or action made from the data. Returns the text drawn."""
    assert app.is_running and app._exception is None, f"{where}: the app stopped"
    drawn = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
    raw = raw_controls(drawn) + raw_controls("\n".join(notifications(app)))
    assert not raw, f"{where}: raw control characters {raw[:3]}"
    spans = list(spans_from_data(app))
    assert not spans, f"{where}: {spans[:3]}"
    return drawn


async def step(pilot: Pilot[Any], *keys: str, where: str) -> str:
    await pilot.press(*keys)
    await settle(pilot)
    return check(pilot.app, where)  # type: ignore[arg-type]


async def walk_rows(pilot: Pilot[Any], rows: RowList[Any, Any], where: str, most: int = 12) -> str:
    """The list's rows from the top, the detail beside each drawn; returns everything drawn."""
    rows.focus()
    seen = await step(pilot, "home", where=f"{where}, row 0")
    for line in range(1, min(most, len(rows.rows))):
        seen += await step(pilot, "down", where=f"{where}, row {line}")
    return seen


async def through(pilot: Pilot[Any], *keys: str, where: str) -> str:
    """Press each key, waiting for the screen it opens (or for the work it starts to end),
    and check what is drawn after each; no settling: a worker may wait on the screen."""
    app = pilot.app
    drawn = ""
    for key in keys:
        before = app.screen
        await pilot.press(key)
        await wait_until(
            pilot,
            lambda before=before: (
                app.screen is not before or not any(w.is_running for w in app.workers)
            ),
            f"{where}: after {key}",
        )
        await pilot.pause()
        drawn += check(app, f"{where}: after {key}")  # type: ignore[arg-type]
    return drawn


async def close_to(pilot: Pilot[Any], screen: Any) -> None:
    """Escape the modal screens above ``screen``, and let the work they held end."""
    app = pilot.app
    while app.screen is not screen:
        top = app.screen
        await pilot.press("escape")
        await wait_until(pilot, lambda top=top: app.screen is not top, "a modal screen closed")
    await settle(pilot)


async def prompt_then_cancel(pilot: Pilot[Any], key: str, where: str) -> str:
    """Press ``key``: a prompt opens (its worker waits for it: no settling until it closes),
    or the action says why it does not apply; check what is drawn, then Escape."""
    app = pilot.app
    before = app.screen
    await pilot.press(key)
    await wait_until(
        pilot,
        lambda: app.screen is not before or not any(w.is_running for w in app.workers),
        f"{where}: a prompt, or the action done",
    )
    await pilot.pause()
    drawn = check(app, where)  # type: ignore[arg-type]
    # A picker or a choice first: take its first option, and check each question after it
    # (a side, a level, what a resolution puts in the section, how a revert goes).
    for depth in range(4):
        top = app.screen
        if isinstance(top, PickScreen) and top.left:
            await pilot.press("enter")
        elif isinstance(top, ChooseScreen):
            await pilot.press(top.choices[0].key)
        else:
            break
        await wait_until(
            pilot,
            lambda top=top: app.screen is not top or not any(w.is_running for w in app.workers),
            f"{where}: after the picker",
        )
        await pilot.pause()
        drawn += check(app, f"{where}, step {depth + 1}")  # type: ignore[arg-type]
    while app.screen is not before:
        await pilot.press("escape")
        await settle(pilot)
        check(app, f"{where}, cancelled")  # type: ignore[arg-type]
    return drawn


async def type_filter(pilot: Pilot[Any], key: str, where: str) -> str:
    """Open a view's filter prompt and type markup into it: shown as text in its title."""
    app = pilot.app
    await pilot.press(key)
    await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), f"{where}'s prompt")
    app.screen.query_one(Input).value = TYPED_FILTER  # as a paste would put it there
    await pilot.press("enter")
    await settle(pilot)
    drawn = check(app, f"{where} filtered by markup")  # type: ignore[arg-type]
    if isinstance(app.screen, PromptScreen):  # the filter was refused: said in the prompt
        await pilot.press("escape")
        await settle(pilot)
    else:  # clear it again
        await pilot.press(key)
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "the prompt")
        await pilot.press("ctrl+u", "minus", "enter")
        await settle(pilot)
    return drawn


# -- the workspace: its context and its document ------------------------------------------------
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.slow
async def test_every_document_view_draws_hostile_data_as_text(
    workspace: Path, size: tuple[int, int]
) -> None:
    app = inspector(workspace, human="ann", document="hostile")
    async with app.run_test(size=size) as pilot:
        await pilot.press("2")
        screen = app.screen
        assert isinstance(screen, DocumentScreen)
        await wait_until(pilot, lambda: screen.shown is not None, "the document")
        await settle(pilot)
        drawn = check(app, "the document screen")

        # The outline and each section's Markdown; the 10 MB one read whole.
        outline = screen.query_one("#outline", RowList)
        drawn += await walk_rows(pilot, outline, "the outline")
        await pilot.press("end")
        await settle(pilot)
        await step(pilot, "enter", where="the big section, whole")
        assert isinstance(app.screen, ReaderScreen)
        await step(pilot, "escape", where="back from the reader")

        # Every view, its rows, the actions' prompts (each cancelled) and its filter.
        views: list[tuple[str, str, tuple[str, ...]]] = [
            ("P", "#queue", ("a", "r", "m", "c", "u")),
            ("I", "#inbox", ("e", "R", "X")),
            ("A", "#agents", ("T", "L", "B", "delete")),
            ("E", "#events", ("x",)),  # x: the export's prompt; the detail pane beside each row
        ]
        for key, view, actions in views:
            await step(pilot, key, where=f"view {key}")
            rows = screen.query_one(view, RowList)
            drawn += await walk_rows(pilot, rows, f"view {key}")
            if key == "A":  # the agent detail pane was drawn beside each agent of the walk
                assert screen.query_one("#agent-pane").display
            for action in actions:
                await pilot.press("home")
                drawn += await prompt_then_cancel(pilot, action, f"view {key}, {action}")
            if key in ("P", "E"):
                drawn += await type_filter(pilot, "f", f"view {key}")

        # Comments: the inbox's (the newest item: reply, resolve, dismiss), the outline's
        # section's and the queue's proposal's; each prompt and picker cancelled.
        for key, view in (("I", "#inbox"), ("O", "#outline"), ("P", "#queue")):
            await step(pilot, key, where=f"view {key} for comments")
            rows = screen.query_one(view, RowList)
            rows.focus()
            await step(pilot, "home", where=f"view {key}, a row")
            if key == "I":  # the newest comment that waits (settled items are below)
                waiting = [r.kind == "comment" and r.closed is None for r in rows.rows]
                last = len(waiting) - 1 - waiting[::-1].index(True)
                for _ in range(last):
                    await step(pilot, "down", where="the inbox's newest comment")
            if key == "O":
                await step(pilot, "down", where="the outline's section with comments")
            drawn += check(app, f"view {key}, its comments")
            for action in ("e", "R", "X", "M", "U") if key == "I" else ("M", "U"):
                drawn += await prompt_then_cancel(pilot, action, f"view {key}, {action}")

        # The custodian's menu over a hostile section; the invites list (a hostile
        # organisation and human); a new invite's token screen; each power's first question.
        await step(pilot, "O", where="the outline for the custodian's menu")
        await step(pilot, "home", "down", where="a hostile section")
        drawn += await through(pilot, "exclamation_mark", "v", where="the invites list")
        assert isinstance(app.screen, InvitesScreen)
        await close_to(pilot, screen)
        drawn += await through(pilot, "exclamation_mark", "n", where="a new invite")
        for _ in range(4):  # trust, mode, clearance, how long: the first of each
            if isinstance(app.screen, ChooseScreen):
                key = app.screen.choices[0].key
                drawn += await through(pilot, key, where="an invite's choice")
        assert isinstance(app.screen, TokenScreen)
        await close_to(pilot, screen)
        for key in ("p", "s", "k", "l", "f"):
            drawn += await through(pilot, "exclamation_mark", key, where=f"the menu's {key}")
            await close_to(pilot, screen)

        # The heatmap, cell by cell, with its lower border naming the cell's agent.
        await step(pilot, "H", where="the heatmap")
        for move in ("down", "right", "down", "right", "down", "right"):
            drawn += await step(pilot, move, where=f"the heatmap, {move}")
        drawn += await type_filter(pilot, "f", "the heatmap")

        # Through an agent's eyes (the palette names every agent), then the past and a diff.
        await step(pilot, "ctrl+p", where="the palette")
        drawn += await step(pilot, *"view as", where="the palette, searched")
        await step(pilot, "enter", where="viewing as an agent")
        await step(pilot, "escape", where="the palette closed")
        drawn += await step(pilot, "O", where="the outline as an agent")
        drawn += await prompt_then_cancel(pilot, "W", "share as the agent")
        await step(pilot, "V", where="back to the custodian (V again)")
        drawn += await prompt_then_cancel(pilot, "W", "share as the custodian: refused")
        # The view-as picker: every agent, named as text (V: the picker, or back from an agent).
        drawn += await prompt_then_cancel(pilot, "V", "the view-as picker")
        await step(pilot, "left_square_bracket", "d", "left_curly_bracket", where="a diff")
        drawn += await step(pilot, "right_curly_bracket", where="live again")
        await step(pilot, "question_mark", where="the help page")
        await step(pilot, "escape", where="help closed")

        assert SHOWN_MARKUP in drawn  # the data was drawn, as the text it is
        assert "\\u001b]2;pwned\\u001b\\\\" in drawn  # an OSC ended by ST, made visible
        assert "@human x[/]" in drawn  # a comment to a human, as text
        assert "✓ answered by human ann x[/]" in drawn  # the inbox's history, as text
        assert app.is_running


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.slow
async def test_the_context_screen_draws_hostile_data_as_text(
    workspace: Path, size: tuple[int, int]
) -> None:
    """The context screen over a context whose keys, tags, contents, types, triggers and actor
    hold the hostile set: the tree and its detail, the provider view, the changelog pane, the
    past and a diff, the content reader, the palette and the help page."""
    app = inspector(workspace, context="evil")
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: getattr(app.screen, "view", None) is not None, "a context")
        tree = app.screen.active_pane  # type: ignore[attr-defined]
        drawn = await step(pilot, "home", where="the tree")
        for line in range(1, tree.layout_model.line_count):
            drawn += await step(pilot, "down", where=f"the tree, row {line}")
        # Each row's tooltip (what its badges mean, with its key): Content, made visible.
        tips = 0
        for y in range(min(tree.layout_model.line_count, tree.scrollable_content_region.height)):
            await pilot.hover(ContextTree, (20, y + 1))
            tip = tree.tooltip
            assert tip is None or isinstance(tip, Content), (y, tip)
            assert not raw_controls(str(tip or "")), (y, tip)
            tips += tip is not None and "x[/] [@click=" in str(tip)
        assert tips  # an item's key, in its tooltip, as the text it is
        steps: list[tuple[str, ...]] = [
            ("o",),
            ("escape",),
            ("v",),
            ("v",),
            ("C",),
            ("left_square_bracket",),
            ("left_curly_bracket", "d", "right_curly_bracket"),
            ("home",),
            ("d", "C"),
            ("question_mark",),
            ("escape",),
            ("ctrl+p",),
            tuple("seal"),
            ("escape",),
        ]
        for keys in steps:
            drawn += await step(pilot, *keys, where=f"the context screen after {keys}")
        assert SHOWN_MARKUP in drawn


# -- a gptme conversation -----------------------------------------------------------------------
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.slow
async def test_every_master_log_view_draws_hostile_data_as_text(
    conversation: Path, size: tuple[int, int]
) -> None:
    app = inspector(conversation)
    async with app.run_test(size=size) as pilot:
        screen = app.screen
        assert isinstance(screen, MasterLogScreen)
        await wait_until(pilot, lambda: screen.shown is not None, "the conversation")
        await settle(pilot)
        drawn = check(app, "the master-log screen")
        logs = screen.query_one("#logs", RowList)
        for number in range(len(logs.rows)):  # every log: the master, the views, the branches
            logs.focus()
            await pilot.press("home", *["down"] * number)
            drawn += await step(pilot, "enter", where=f"log {number}")
            messages = screen.query_one("#messages", RowList)
            drawn += await walk_rows(pilot, messages, f"log {number}'s lines", most=40)
            await pilot.press("end")
            await settle(pilot)
            drawn += await step(pilot, "o", where=f"log {number}'s last line, read")
            if isinstance(app.screen, ReaderScreen):
                await step(pilot, "escape", where="the reader closed")
        drawn += await step(pilot, "n", where="the next problem")
        screen.query_one("#messages", RowList).focus()
        drawn += await step(pilot, "colon", where="the go-to prompt (names the log)")
        drawn += await step(pilot, *"x1", "enter", where="the go-to prompt, refused")
        await step(pilot, "escape", where="the go-to prompt closed")
        await pilot.press("slash")
        field = screen.query_one("#log-search", Input)
        await wait_until(pilot, lambda: field.has_focus, "the search field")
        drawn += await step(pilot, *"pwned", "enter", where="a search")
        await step(pilot, "escape", where="the search closed")
        await step(pilot, "ctrl+p", where="the palette")
        drawn += await step(pilot, *"show", where="the palette, searched")
        await step(pilot, "escape", where="the palette closed")
        assert "x[link=https:evil]q" in drawn  # a branch named with markup, shown as text
        assert SHOWN_MARKUP in drawn


@pytest.fixture(scope="session")  # kept while other modules' slow tests run
def hostile_import(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A hostile conversation (no 10 MB message, only roles gptme writes) imported into a
    workspace with ``ctx import``: its folder is beside the workspace."""
    import contextlib
    import io

    from pact_tui.cli import main

    folder = tmp_path_factory.mktemp("imported")
    conversation = build_hostile_conversation(folder / "conversation", big=False, odd_role=False)
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        argv = ["ctx", "import", str(folder / "evil.pact"), "evil", "--gptme", str(conversation)]
        assert main(argv) == 0, err.getvalue()
    return folder


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.slow
async def test_reference_items_of_a_hostile_conversation_draw_as_text(
    hostile_import: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    """The context imported from it: the reference items' badges (this project's compaction
    quotes the hostile text in its previews), ``o``'s original beside what was shown, ``J`` to
    the master-log screen over the context and back. The folder stays where the import read
    it (the items name it), the workspace is copied."""
    monkeypatch.setenv("PACT_TUI_CACHE", str(tmp_path / "cache"))
    workspace = tmp_path / "evil.pact"
    shutil.copy(hostile_import / "evil.pact", workspace)
    app = inspector(workspace, context="evil")
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: getattr(app.screen, "view", None) is not None, "a context")
        screen = app.screen
        # the newest snapshot: the view this project's compaction wrote, hostile previews
        drawn = await step(pilot, "right_curly_bracket", where="the newest snapshot")
        await wait_until(pilot, lambda: bool(screen.badges), "the badges")  # type: ignore[attr-defined]
        tree = screen.active_pane  # type: ignore[attr-defined]
        badges = screen.badges  # type: ignore[attr-defined]
        drawn += await step(pilot, "end", where="the tree")
        read = 0  # the newest two: the hostile messages' (the oldest are gptme's own)
        for line in range(tree.layout_model.line_count - 2, -1, -1):
            drawn += await step(pilot, "up", where=f"the tree, row {line}")
            row = screen.highlighted  # type: ignore[attr-defined]
            if row is None or row.item is None or row.item.id not in badges or read >= 2:
                continue
            read += 1
            drawn += await through(pilot, "o", where=f"row {line}'s original")
            assert isinstance(app.screen, OriginalScreen)
            drawn += await step(pilot, "tab", "end", where="the other side, its end")
            await close_to(pilot, screen)
            drawn += await through(pilot, "J", where=f"row {line} on the master log")
            log_screen = app.screen
            assert isinstance(log_screen, MasterLogScreen)
            await settle(pilot)
            drawn += check(app, "the master-log screen over the context")
            drawn += await step(pilot, "J", where="back to the context")
            assert app.screen is screen
        assert read == 2
        assert "✓ ok" in drawn
        assert "[@click=" in drawn  # the data's markup drawn as text (a half is narrow)
