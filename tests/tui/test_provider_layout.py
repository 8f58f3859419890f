"""The provider view's sizes and changes, the layout keys (hide the list, hide the detail,
zoom), the layout at 80x24, rows cut with an ellipsis, the workspace's path in the status line,
and the theme remembered across runs."""

from __future__ import annotations

import json
import tempfile
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from textual.widgets import Input, Label

from engine.context import Context, ContextView, SequentialIds, SteppingClock
from engine.context.changelog import lines_of
from engine.workspace import Workspace
from pact_tui.provider import ProviderTotals, provider_changes, provider_totals
from pact_tui.screens.choose import ChooseScreen
from pact_tui.screens.confirm import ConfirmScreen
from pact_tui.screens.context import ContextScreen
from pact_tui.screens.prompt import PromptScreen
from pact_tui.tree_layout import TreeLayout
from pact_tui.widgets.context_list import ContextList
from pact_tui.widgets.detail import NodeDetail
from pact_tui.widgets.status import Status, display_path, middle_ellipsis, status_content

from .inspector import (
    SIZE,
    detail_text,
    inspector,
    notifications,
    pane_lines,
    screen_of,
    screen_text,
    settle,
    status_text,
    wait_until,
)
from .test_layout import OPS, _apply


def _estimate(chars: int) -> int:
    """The documented estimate: a token per four characters, rounded up."""
    return (chars + 3) // 4


def _messages(view: ContextView) -> dict[str, tuple[str, str]]:
    """Item id → (role, text), as the engine renders them for the provider."""
    ids = [item.id for item, *_where in view.iter_items()]
    return dict(zip(ids, view.provider_messages(), strict=True))


async def _provider(pilot, screen: ContextScreen) -> list[str]:  # type: ignore[no-untyped-def]
    await pilot.press("v")
    await settle(pilot)
    return pane_lines(screen.provider)


# -- the provider view: sizes, totals, changes ---------------------------------------------------
async def test_each_message_shows_its_coordinates_size_and_token_estimate(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        lines = await _provider(pilot, screen)
        view = screen.view
        assert view is not None
        rendered = view.render_provider()
        drawn = [line for line in lines if line]
        assert len(drawn) == len(rendered)
        widest = max(len(f"{len(m['content']):,}") for m in rendered)
        places = [(d, slot.position, offset) for _item, d, slot, offset in view.iter_items()]
        for line, message, (depth, position, offset) in zip(drawn, rendered, places, strict=True):
            chars = len(message["content"])
            assert f"({depth},{position},{offset})" in line
            assert f" {message['role']} " in line
            assert f"{chars:>{widest},} ch" in line and f"~{_estimate(chars)} tok" in line, line


async def test_the_provider_view_measured_while_hidden_shows_the_view_after_steps(
    demo: Path,
) -> None:
    """Its layout is measured while the app is idle after the first paint (issue 27: the first
    ``v`` measured every turn); what the live context does meanwhile is caught up when ``v``
    shows it, the same as a full walk of the view."""
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await settle(pilot)
        assert not screen.provider.display
        assert screen.provider.full_layout.line_count == len(
            screen.workspace.context("researcher").render_provider()
        )  # measured, not yet shown
        for key in ("full_stop", "full_stop", "full_stop"):
            await pilot.press(key)
            await settle(pilot)
        lines = await _provider(pilot, screen)
        assert screen.view is not None
        rendered = screen.view.render_provider()
        drawn = [line for line in lines if line]
        assert len(drawn) == len(rendered) == screen.provider.full_layout.line_count
        places = [(d, slot.position, offset) for _item, d, slot, offset in screen.view.iter_items()]
        for line, message, (depth, position, offset) in zip(drawn, rendered, places, strict=True):
            assert f"({depth},{position},{offset})" in line
            assert f" {message['role']} " in line


async def test_the_totals_are_on_the_panes_lower_border(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await _provider(pilot, screen)
        assert screen.view is not None
        rendered = screen.view.render_provider()
        chars = sum(len(message["content"]) for message in rendered)
        said = str(screen.provider.border_subtitle)
        expected = f"{len(rendered)} messages · {chars:,} chars · ~{_estimate(chars):,} tokens"
        assert said.startswith(expected), said


async def test_what_changed_since_the_episode_before_is_marked(demo: Path) -> None:
    """A message and an advance: compared with where episode 6 began, the new message and what
    the advance rehydrated are added (+), and the expired ones counted as removed."""
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("u", *"hello again", "enter")
        await settle(pilot)
        await pilot.press("full_stop")
        await settle(pilot)
        lines = await _provider(pilot, screen)
        now = screen.view
        assert now is not None and now.current_episode == 7
        before = await screen.workspace.at_episode("researcher", 6)
        old, new = _messages(before), _messages(now)
        added = {i for i in new if i not in old}
        changed = {i for i in new if i in old and old[i] != new[i]}
        removed = len(set(old) - set(new))
        assert added and removed  # the message, a rehydration; the expired ones

        layout = screen.provider.layout_model
        glyphs = {layout.row(n).node_id: line[0] for n, line in enumerate(lines) if line}
        assert {i for i, glyph in glyphs.items() if glyph == "+"} == added
        assert {i for i, glyph in glyphs.items() if glyph == "~"} == changed
        assert {glyph for i, glyph in glyphs.items() if i not in added | changed} == {" "}
        hello = next(n for n, line in enumerate(lines) if "hello again" in line)
        assert lines[hello].startswith("+ ")
        said = str(screen.provider.border_subtitle)
        assert f"since e6: +{len(added)} ~{len(changed)} -{removed}" in said


async def test_a_past_snapshot_is_compared_with_the_episode_before_it(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("left_curly_bracket", "right_square_bracket")  # n32: episode 2
        await settle(pilot)
        await _provider(pilot, screen)
        await wait_until(pilot, lambda: screen.provider_changes is not None, "the comparison")
        assert screen.shown is not None and screen.shown.entry is not None
        assert screen.shown.entry.episode == 2
        assert "since e1:" in str(screen.provider.border_subtitle)

        await pilot.press("left_curly_bracket")  # n24, episode 1: no episode 0 snapshot
        await wait_until(pilot, lambda: screen.provider_changes is None, "no comparison")
        assert "since" not in str(screen.provider.border_subtitle)


async def _reopened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace of four episodes, closed with a checkpoint: reopened, it holds no snapshot
    (its checkpoint keeps none of the newest: as if they were all older than those it keeps)."""
    from engine.workspace import cadence

    monkeypatch.setattr(cadence, "CHECKPOINT_ON_CLOSE", 1)
    monkeypatch.setattr(cadence, "RECENT_SNAPSHOTS", 0)
    path = tmp_path / "kept.pact"
    async with await Workspace.open(path, create=True, watch=False) as workspace:
        await workspace.create_context("kept")
        for number in range(4):
            await workspace.add_message("kept", "user", f"m{number}")
            await workspace.advance("kept")
    return path


async def test_a_small_context_reopened_rebuilds_the_episode_before_for_the_marks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reopened, this process holds no snapshot; a small context's episode before is rebuilt
    from the log (milliseconds) in a worker, and the marks follow."""
    path = await _reopened(tmp_path, monkeypatch)
    app = inspector(path, context="kept")
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        assert screen.workspace.context("kept").history.latest is None  # nothing held
        await _provider(pilot, screen)
        await wait_until(pilot, lambda: screen.provider_changes is not None, "the comparison")
        changes = screen.provider_changes
        assert changes is not None and changes.since == "e3"
        before = await screen.workspace.at_episode("kept", 3)
        view = screen.view
        assert view is not None
        added = len(set(_messages(view)) - set(_messages(before)))
        assert added == 1  # m3, the message of episode 3's turn
        assert f"since e3: +{added} ~0 -0" in str(screen.provider.border_subtitle)


async def test_the_comparison_never_rebuilds_an_old_snapshot_of_a_big_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reopened from a checkpoint, a big context's provider view does not rebuild a snapshot
    to compare with (a replay that takes seconds at 100,000 items); once two advances have
    been made here, the episode before is held and compared."""
    import pact_tui.screens.context as context_screen

    path = await _reopened(tmp_path, monkeypatch)
    monkeypatch.setattr(context_screen, "REBUILD_FOR_PROVIDER", 0)  # every context is big

    async def no_rebuild(*args: object) -> None:
        raise AssertionError("an old snapshot was rebuilt")

    app = inspector(path, context="kept")
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        assert screen.workspace.context("kept").history.latest is None  # nothing held
        monkeypatch.setattr(screen.workspace, "at_snapshot", no_rebuild)
        await _provider(pilot, screen)
        assert screen.provider_changes is None
        assert "since" not in str(screen.provider.border_subtitle)
        await pilot.press("full_stop", "full_stop")
        await settle(pilot)
        await pilot.press("u", *"new", "enter")
        await settle(pilot)
        changes = screen.provider_changes
        assert changes is not None and changes.since == "e5"
        assert "since e5: +1 ~0 -0" in str(screen.provider.border_subtitle)


@settings(max_examples=150, deadline=None)
@given(OPS, st.data())
def test_the_changes_found_are_those_of_a_plain_comparison(
    ops: list[tuple], data: st.DataObject
) -> None:
    """Against every message of both states compared by id, whatever was done between them
    (inserts, updates, deletes, messages, advances): the walk that skips unwritten turns finds
    the same."""
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    layout = TreeLayout()
    cut = data.draw(st.integers(0, len(ops)))
    for op in ops[:cut]:
        _apply(context, layout, op)
    before = context.history.at_snapshot(context.seal())
    for op in ops[cut:]:
        _apply(context, layout, op)
    old, new = _messages(before), _messages(context)
    found = provider_changes(before, context, "then")
    assert found.added == {i for i in new if i not in old}
    assert found.changed == {i for i in new if i in old and old[i] != new[i]}
    assert found.removed == len(set(old) - set(new))
    assert provider_totals(context) == ProviderTotals(
        len(new),
        sum(len(text) for _role, text in new.values()),
        max((len(text) for _role, text in new.values()), default=0),
    )


# -- hiding and zooming ---------------------------------------------------------------------------
async def test_b_hides_and_shows_the_context_list(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        contexts, tree = screen.query_one(ContextList), screen.context_tree
        assert contexts.display and screen.show_contexts
        wide = tree.region.width
        await pilot.press("b")
        await pilot.pause()
        assert not contexts.display and not screen.show_contexts
        assert tree.region.width == wide + contexts.styles.width.value  # the room it left
        await pilot.press("b")
        await pilot.pause()
        assert contexts.display and tree.region.width == wide


async def test_i_hides_and_shows_the_detail_pane(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        detail, tree = screen.query_one(NodeDetail), screen.context_tree
        wide = tree.region.width
        await pilot.press("i")
        await pilot.pause()
        assert not detail.display and not screen.show_detail
        assert tree.region.right == screen.region.right
        assert tree.region.width > wide
        await pilot.press("i")
        await pilot.pause()
        assert detail.display and tree.region.width == wide


async def test_w_zooms_the_tree_to_the_whole_width_and_back(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        contexts, detail = screen.query_one(ContextList), screen.query_one(NodeDetail)
        wide = screen.context_tree.region.width
        await pilot.press("w")
        await pilot.pause()
        assert screen.zoomed and not contexts.display and not detail.display
        assert screen.context_tree.region.width == SIZE[0]
        await pilot.press("v")  # the provider view zooms too: it is the same place
        await pilot.pause()
        assert screen.provider.region.width == SIZE[0]
        await pilot.press("v", "w")
        await pilot.pause()
        assert not screen.zoomed and contexts.display and detail.display
        assert screen.context_tree.region.width == wide


async def test_zoomed_b_and_i_bring_their_pane_back_and_c_shows_the_list(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        contexts, detail = screen.query_one(ContextList), screen.query_one(NodeDetail)
        await pilot.press("w", "i")
        await pilot.pause()
        assert not screen.zoomed and detail.display and contexts.display
        await pilot.press("b")
        await pilot.pause()
        assert not contexts.display
        await pilot.press("c")  # focusing the list shows it
        await pilot.pause()
        assert contexts.display and contexts.has_focus
        await pilot.press("b")  # hiding the focused list gives the focus to the tree
        await pilot.pause()
        assert not contexts.display and screen.context_tree.has_focus


# -- 80x24 ----------------------------------------------------------------------------------------
async def test_at_80x24_the_tree_gets_most_of_the_width(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = screen_of(app)
        await pilot.pause()
        tree, detail = screen.context_tree, screen.query_one(NodeDetail)
        assert not screen.query_one(ContextList).display  # hidden at start: b shows it
        assert tree.region.width > detail.region.width
        assert tree.region.width > 80 // 2
        # The detail wraps on words: "system_prompt" stays whole on its line.
        # The context opens with its active turn in view (at 80x24, the cursor on it): from
        # the top, the system prompt is two rows down.
        await pilot.press("home", "down", "down")  # (-1,0,0), the system prompt
        await settle(pilot)
        text = detail_text(app)
        assert any(line.split()[-1:] == ["system_prompt"] for line in text.splitlines()), text


async def test_a_long_row_ends_with_an_ellipsis_never_half_a_glyph(tmp_path: Path) -> None:
    path = tmp_path / "wide.pact"
    async with await Workspace.open(path, create=True, watch=False) as workspace:
        await workspace.create_context("wide")
        await workspace.add_message("wide", "user", "中文字符" * 40)
        await workspace.add_message("wide", "user", "x" + "中文字符" * 40)  # the cut moves a cell
        await workspace.add_message("wide", "user", "short")
    app = inspector(path, context="wide")
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.pause()
        for key in ("", "v"):  # the tree, then the provider view
            await pilot.press(*key)
            await settle(pilot)
            pane = screen.active_pane
            room = pane.scrollable_content_region.width
            lines = [line for line in pane_lines(pane) if "中" in line or "short" in line]
            assert len(lines) == 3
            for line in lines:
                assert cell_len(line) <= room, line
            cut = [line for line in lines if "中" in line]
            assert all(line.endswith("…") for line in cut), cut
            assert all(cell_len(line) >= room - 1 for line in cut)  # a half glyph left as a space
            assert not next(line for line in lines if "short" in line).endswith("…")


# -- the workspace's path in the status line ------------------------------------------------------
async def test_the_status_line_ends_with_the_workspaces_path(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE):
        assert status_text(app).endswith("   demo.pact")  # the tests run in the demo's folder
        assert status_text(app).startswith("researcher   EPISODE 6")


def test_a_path_is_shown_from_the_current_folder_or_from_home(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    assert display_path(work / "a.pact", home=home, cwd=work) == "a.pact"
    assert display_path(home / "p" / "a.pact", home=home, cwd=work) == "~/p/a.pact"
    assert display_path(Path("/elsewhere/a.pact"), home=home, cwd=work) == "/elsewhere/a.pact"


def test_a_long_path_loses_its_middle_and_keeps_the_file_name() -> None:
    path = "~/projects/agents/deployments/2026/november/research-team/workspace.pact"
    status = Status("researcher", 6, True, path=path)
    line = status_content(status, 80).plain
    assert len(line) == 79  # and a space at the right edge
    assert "…" in line and line.endswith("research-team/workspace.pact")
    assert line.startswith(" researcher ")
    assert middle_ellipsis(path, 20) == "~/pr…/workspace.pact"
    assert middle_ellipsis(path, 12) == "~/pr…ce.pact"  # no room for the name: its end
    assert len(middle_ellipsis(path, 20)) == 20
    # With no room, no path: the status itself never gives way to it.
    assert "pact" not in status_content(status, 40).plain


# -- the theme, remembered -------------------------------------------------------------------------
def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str | None = None) -> Path:
    home = tmp_path / "config-home"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    path = home / "pact-tui" / "config.toml"
    if text is not None:
        path.parent.mkdir(parents=True)
        path.write_text(text, encoding="utf-8")
    return path


async def _pick_theme(pilot, name: str) -> None:  # type: ignore[no-untyped-def]
    app = pilot.app
    await pilot.press("ctrl+p", *"theme")
    await wait_until(pilot, lambda: "Change the current theme" in screen_text(app), "Theme")
    await pilot.press("enter")
    await wait_until(pilot, lambda: name in screen_text(app), "the theme list")
    await pilot.press(*name, "enter")
    await wait_until(pilot, lambda: app.theme == name, "the theme to change")


async def test_a_theme_picked_in_the_palette_is_the_next_runs(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = '# my settings\nhuman = "ann"\ntheme = "pact-ember"\n\n[later]\ntheme = "kept"\n'
    config = _config(tmp_path, monkeypatch, mine)
    app = inspector(demo, theme=None)  # the config file's
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "pact-ember"
        await _pick_theme(pilot, "pact-paper")
    text = config.read_text(encoding="utf-8")
    expected = {"human": "ann", "theme": "pact-paper", "later": {"theme": "kept"}}
    assert tomllib.loads(text) == expected
    assert text.startswith("# my settings\n")  # the rest of the file as it was
    again = inspector(demo, theme=None)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert again.theme == "pact-paper"


async def test_a_setting_inside_a_string_is_not_taken_for_the_setting(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A multi-line string that holds ``theme = …`` is text: the theme is set beside it, and
    the string and the comments are kept as written."""
    mine = "# notes\nnote = '''\ntheme = 'inside a string'\n'''  # kept\n\n[keys]\nlive = 'J'\n"
    config = _config(tmp_path, monkeypatch, mine)
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await _pick_theme(pilot, "pact-paper")
    text = config.read_text(encoding="utf-8")
    assert tomllib.loads(text) == {
        "note": "theme = 'inside a string'\n",
        "theme": "pact-paper",
        "keys": {"live": "J"},
    }
    assert "# notes\n" in text and "'''  # kept\n" in text


async def test_with_no_config_file_one_is_made(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(tmp_path, monkeypatch)
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await _pick_theme(pilot, "pact-ember")
    assert config.read_text(encoding="utf-8") == 'theme = "pact-ember"\n'


@pytest.mark.parametrize(
    "broken, problem",
    [
        ("theme = [oops\n", "is not valid TOML"),
        (b"\xff\xfe", "cannot be read"),
        ("[theme]\nname = 'mine'\n", "its theme is not a string"),
    ],
    ids=["not TOML", "not text", "a theme that is a table"],
)
async def test_a_config_file_that_cannot_take_the_theme_is_left_alone(
    demo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    broken: str | bytes,
    problem: str,
) -> None:
    config = _config(tmp_path, monkeypatch, "")
    if isinstance(broken, bytes):
        config.write_bytes(broken)
    else:
        config.write_text(broken, encoding="utf-8")
    before = config.read_bytes()
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await _pick_theme(pilot, "pact-paper")  # shown all the same
        assert any(problem in message for message in notifications(app)), notifications(app)
        assert "EPISODE 6" in status_text(app)
    assert config.read_bytes() == before
    assert not [p for p in config.parent.iterdir() if p.name != "config.toml"]  # no temp left


async def test_a_config_folder_that_cannot_be_made_is_said_not_a_crash(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(blocker))
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await _pick_theme(pilot, "pact-paper")
        (said,) = [m for m in notifications(app) if "not remembered" in m]
        assert f"{blocker}/pact-tui/config.toml: cannot be" in said
        assert app.theme == "pact-paper" and app.is_running


# -- the demo says where its workspace is --------------------------------------------------------
@pytest.mark.parametrize("live", [False, True], ids=["demo", "demo --live"])
def test_the_demo_prints_its_workspace_before_the_app_starts(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    live: bool,
) -> None:
    from pact_tui import app as app_module
    from pact_tui.cli import main

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    said_before: list[str] = []

    def run(self: app_module.PactApp) -> None:  # instead of taking the screen
        said_before.append(capsys.readouterr().out)
        self._return_code = 0

    monkeypatch.setattr(app_module.PactApp, "run", run)
    assert main(["demo", "--live", "--interval", "60"] if live else ["demo"]) == 0
    (workspace,) = tmp_path.glob("pact-demo-*/demo.pact")
    (before,) = said_before
    assert before.startswith(f"The demo workspace is {workspace}")
    assert ("demo agents write to it every 60 s" in before) == live
    assert f"reopen it with: pact-tui {workspace}" in capsys.readouterr().out


# -- play at live asks first ----------------------------------------------------------------------
async def test_play_at_live_asks_naming_the_context_and_cancel_writes_nothing(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        applied, head = screen.workspace.applied("researcher"), screen.workspace.head
        await pilot.press("p")
        assert isinstance(app.screen, ConfirmScreen)
        question = str(app.screen.query_one("#confirm-question", Label).render())
        assert "Play writes an advance to context 'researcher' every 1 s" in question
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and screen.play_speed is None
        await pilot.press("p", "n")  # n says no too
        await pilot.press("p", "enter")  # and Enter alone: the focus is on Cancel
        await settle(pilot)
        assert screen.play_speed is None and screen._play_timer is None
        assert screen.workspace.applied("researcher") == applied
        assert screen.workspace.head == head
        assert "WRITING" not in status_text(app)


async def test_play_at_live_once_confirmed_writes_and_says_so(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        applied = screen.workspace.applied("researcher")
        await pilot.press("p", "y")
        assert screen.play_speed == 1.0 and screen.play_writes_to == "researcher"
        assert "▶ WRITING to researcher every 1s" in status_text(app)
        assert screen._play_timer is not None
        screen._play_timer.pause()  # the test steps itself
        screen.play_step()
        await settle(pilot)
        assert screen.workspace.applied("researcher") == applied + 1
        assert "EPISODE 7" in status_text(app)
        await pilot.press("p")  # pause: stops writing, and the next play asks again
        assert screen.play_speed is None and screen.play_writes_to is None
        assert "WRITING" not in status_text(app)
        await pilot.press("p")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")


async def test_writing_is_said_even_where_the_status_is_short(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("slash", *"^seq", "enter", "p", "y")
        await wait_until(pilot, lambda: "WRITING" in status_text(app), "the writing mark")
        assert len(status_text(app)) <= 80
        screen_of(app).play_speed = None


async def test_play_through_the_past_does_not_ask_and_never_writes(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        head = screen.workspace.head
        await pilot.press("left_curly_bracket", "p")
        assert app.screen is screen and screen.play_speed == 1.0
        assert "playing every 1s" in status_text(app) and "WRITING" not in status_text(app)
        assert screen._play_timer is not None
        screen._play_timer.pause()
        # to live while playing: play stops, it was not allowed to write
        await pilot.press("right_curly_bracket")
        screen.play_step()
        await settle(pilot)
        assert screen.play_speed is None and screen.workspace.head == head


async def test_play_confirmed_for_one_context_does_not_write_to_another(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("p", "y")
        assert screen._play_timer is not None
        screen._play_timer.pause()
        writer = screen.workspace.applied("writer")
        screen.switch_context("writer")
        screen.play_step()
        await settle(pilot)
        assert screen.play_speed is None and screen.workspace.applied("writer") == writer


async def test_a_read_only_workspace_does_not_offer_to_play_at_live(demo: Path) -> None:
    app = inspector(demo, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("p")
        assert app.screen is screen and screen.play_speed is None
        assert any("read-only" in message for message in notifications(app))


# -- copy ---------------------------------------------------------------------------------------
async def _on_item(pilot, screen: ContextScreen, depth: int, position: int, offset: int) -> None:  # type: ignore[no-untyped-def]
    line = screen.context_tree.layout_model.line_of(depth, position, offset)
    assert line is not None
    screen.context_tree.jump_to(line)
    await pilot.pause()
    assert screen.highlighted is not None and screen.highlighted.item is not None


async def test_y_copies_the_items_content_coordinates_or_selector(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await _on_item(pilot, screen, -1, 0, 0)  # the system prompt, #system_prompt
        node = screen.workspace.context("researcher")["d-1, 0, 0"]
        assert node is not None and node.item is not None

        await pilot.press("y")
        assert isinstance(app.screen, ChooseScreen)
        await pilot.press("c")
        assert app.clipboard == node.item.text()
        assert notifications(app)[-1] == f"Copied: Copied the content of {node.id} (37 characters)"

        await pilot.press("y", "p")
        assert app.clipboard == "d-1, 0, 0"
        await pilot.press("y", "s")
        assert app.clipboard == "#system_prompt"
        assert [n.id for n in screen.workspace.context("researcher").select(app.clipboard)] == [
            node.id
        ]
        await pilot.press("y", "escape")  # nothing chosen, nothing copied
        assert app.screen is screen and app.clipboard == "#system_prompt"


async def test_a_key_that_is_not_unique_gives_the_coordinates(tmp_path: Path) -> None:
    path = tmp_path / "keys.pact"
    async with await Workspace.open(path, create=True, watch=False) as workspace:
        await workspace.create_context("keys")
        await workspace.add_message("keys", "user", "hello")
        await workspace.insert("keys", "d0, 1, 0", {"content": "one", "key": "twice"})
        await workspace.insert("keys", "d0, 2, 0", {"content": "two", "key": "twice"})
        await workspace.insert("keys", "d0, 3, 0", {"content": "odd", "key": "a, b"})
    app = inspector(path, context="keys")
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        for position in (2, 3):  # a key shared; a key the selector language reads otherwise
            await _on_item(pilot, screen, 0, position, 0)
            await pilot.press("y", "s")
            assert app.clipboard == f"d0, {position}, 0"
            found = screen.workspace.context("keys").select(app.clipboard)
            assert [n.id for n in found] == [screen.highlighted.item.id]  # type: ignore[union-attr]


async def test_in_the_past_the_selector_names_its_snapshot(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("left_curly_bracket", "right_square_bracket", "right_square_bracket")
        await settle(pilot)  # n39
        await _on_item(pilot, screen, 0, 0, 1)  # #alert there
        await pilot.press("y", "s")
        assert app.clipboard == "@snap:n39 #alert"
        found = await screen.workspace.select("researcher", app.clipboard)
        assert [n.id for n in found] == [screen.highlighted.item.id]  # type: ignore[union-attr]


async def test_copy_on_a_turn_says_to_choose_an_item(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("home", "y")
        assert app.screen is screen_of(app)
        assert app.clipboard == ""
        assert notifications(app)[-1] == "put the cursor on an item first"


async def test_the_palette_copies_the_coordinates(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await _on_item(pilot, screen_of(app), 5, 1, 0)
        await pilot.press("ctrl+p", *"copy the item's coordinates")
        await wait_until(
            pilot, lambda: "Copy the item's coordinates" in screen_text(app), "the palette's hit"
        )
        await pilot.press("enter")
        await settle(pilot)
        assert app.clipboard == "d5, 1, 0"


# -- export -------------------------------------------------------------------------------------
async def _export(pilot, keys: str, path: str | None = None) -> str:  # type: ignore[no-untyped-def]
    """Choose an export with ``x`` and ``keys``; type ``path`` over what is offered (or take
    it); return what was offered."""
    app = pilot.app
    await pilot.press("x", *keys)
    assert isinstance(app.screen, PromptScreen)
    field = app.screen.query_one(Input)
    offered = field.value
    if path is not None:
        field.value = path
    await pilot.press("enter")
    await settle(pilot)
    return offered


async def test_the_provider_rendering_exports_as_markdown_and_json(
    demo: Path, tmp_path: Path
) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        assert screen.view is not None
        rendered = screen.view.render_provider()

        assert await _export(pilot, "p") == "researcher-e6-provider.md"
        written = tmp_path / "researcher-e6-provider.md"  # in the current folder
        assert notifications(app)[-1].endswith(f"Wrote {written}")
        markdown = written.read_text(encoding="utf-8")
        assert markdown.startswith("# What the model is sent: context researcher, episode 6")
        for message in rendered:
            assert f"\n```\n{message['content']}\n```\n" in markdown

        assert await _export(pilot, "P") == "researcher-e6-provider.json"
        data = json.loads((tmp_path / "researcher-e6-provider.json").read_text(encoding="utf-8"))
        assert data == rendered
        assert (tmp_path / "researcher-e6-provider.json").read_text() == (
            screen.view.render_provider_json() + "\n"
        )


async def test_the_suffix_typed_decides_the_format(demo: Path, tmp_path: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("left_curly_bracket")  # a snapshot: n24
        await settle(pilot)
        offered = await _export(pilot, "p", "~/../" + str(tmp_path / "sub.json")[1:])
        assert offered == "researcher-n24-provider.md"
        assert screen.view is not None
        assert json.loads((tmp_path / "sub.json").read_text()) == screen.view.render_provider()


async def test_the_diff_exports_as_json_and_markdown(demo: Path, tmp_path: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("left_curly_bracket", "d", "right_square_bracket", "right_square_bracket")
        await wait_until(pilot, lambda: screen.comparison is not None, "the diff")
        assert screen.comparison is not None
        diff = screen.comparison.diff.to_diff()  # every change listed, as the engine lists it
        assert diff.added

        assert await _export(pilot, "D") == "researcher-n24-n39-diff.json"
        data = json.loads((tmp_path / "researcher-n24-n39-diff.json").read_text())
        assert data == {
            "context": "researcher",
            "older": {"snapshot": "n24", "episode": 1},
            "newer": {"snapshot": "n39", "episode": 2},
            **diff.to_dict(),
        }

        await _export(pilot, "d")
        markdown = (tmp_path / "researcher-n24-n39-diff.md").read_text(encoding="utf-8")
        older = await screen.workspace.at_snapshot("researcher", "n24")
        newer = await screen.workspace.at_snapshot("researcher", "n39")
        for ids, view in ((diff.added, newer), (diff.removed, older)):
            for item_id in ids:
                node = view.find(item_id)
                assert node is not None
                where = ",".join(str(c) for c in node.coordinates)
                assert f"- ({where}) `{item_id}`" in markdown
        for change in diff.changed:
            assert f"`{change.id}`" in markdown
        assert "## Added" in markdown and "## Removed" in markdown


@pytest.mark.slow
async def test_a_diff_against_a_state_held_at_live_exports_with_its_name(
    demo: Path, tmp_path: Path
) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("u", *"before", "enter")  # live is no snapshot now
        await settle(pilot)
        await pilot.press("d", "u", *"after the base", "enter")
        await wait_until(pilot, lambda: screen.comparison is not None, "the diff")
        await settle(pilot)
        comparison = screen.comparison
        assert comparison is not None and comparison.older_at is None  # held, not a snapshot
        offered = await _export(pilot, "D")
        assert offered.startswith("researcher-live-live-diff")
        data = json.loads((tmp_path / offered).read_text())
        assert data["older"] == {"snapshot": None, "episode": 6}
        assert data["added"] == list(comparison.diff.to_diff().added)
        await _export(pilot, "d")
        markdown = (tmp_path / offered.replace(".json", ".md")).read_text()
        assert comparison.older.startswith("e6 held")
        assert f"From context researcher, episode 6 ({comparison.older}) to" in markdown
        assert "after the base" in markdown


@pytest.mark.slow
async def test_the_changelog_of_the_step_shown_exports_as_json_and_markdown(
    demo: Path, tmp_path: Path
) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("full_stop")  # a step that expires, rehydrates and moves things
        await settle(pilot)
        await pilot.press("left_square_bracket")  # its snapshot
        await settle(pilot)
        assert screen.shown is not None and screen.shown.entry is not None
        snapshot = screen.shown.entry.id
        step = await screen.workspace.changelogs("researcher", snapshot=snapshot)
        assert step.events

        assert await _export(pilot, "C") == f"researcher-{snapshot}-changelog.json"
        data = json.loads((tmp_path / f"researcher-{snapshot}-changelog.json").read_text())
        assert data == json.loads(json.dumps(step.to_json()))

        await _export(pilot, "c")
        markdown = (tmp_path / f"researcher-{snapshot}-changelog.md").read_text()
        assert markdown.startswith("# What happened: context researcher, episode 7")
        assert step.title() in markdown and step.summary() in markdown
        for line in lines_of(step.changelogs):
            assert f"- {line.strip()}" in markdown, line

        # live: the step since n…
        await pilot.press("right_curly_bracket", "u", *"since then", "enter")
        await settle(pilot)
        await _export(pilot, "C")
        live = json.loads((tmp_path / "researcher-e7-changelog.json").read_text())
        assert live["kind"] == "live" and len(live["events"]) == 1


async def test_without_a_diff_the_diff_is_not_offered(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x")
        assert isinstance(app.screen, ChooseScreen)
        assert [choice.value for choice in app.screen.choices] == [
            "provider markdown",
            "provider json",
            "changelog markdown",
            "changelog json",
        ]
        await pilot.press("d")  # not offered: nothing happens
        assert isinstance(app.screen, ChooseScreen)
        await pilot.press("escape")


@pytest.mark.parametrize(
    "where, why",
    [
        ("a-file/out.md", "there is no folder"),
        ("missing/out.md", "there is no folder"),
        (".", "is a folder"),
    ],
)
async def test_a_path_that_cannot_be_written_is_said_and_nothing_is_left(
    demo: Path, tmp_path: Path, where: str, why: str
) -> None:
    (tmp_path / "a-file").write_text("a file, not a folder")
    before = sorted(p.name for p in tmp_path.iterdir())
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await _export(pilot, "p", where)
        said = notifications(app)[-1]
        assert said.startswith("Cannot export the provider rendering: ") and why in said, said
        assert app.is_running and app.screen is screen_of(app)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


async def test_a_write_that_fails_half_way_leaves_no_file(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    def full_disk(handle: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await _export(pilot, "p")
        assert "No space left on device" in notifications(app)[-1]
    assert not [p for p in tmp_path.iterdir() if "provider" in p.name]


# -- fork -------------------------------------------------------------------------------------
async def _fork(pilot, name: str | None = None) -> str:  # type: ignore[no-untyped-def]
    """``K``, then the name offered or ``name``; return what was offered."""
    app = pilot.app
    await pilot.press("K")
    assert isinstance(app.screen, PromptScreen)
    field = app.screen.query_one(Input)
    offered = field.value
    if name is not None:
        field.value = name
    await pilot.press("enter")
    await settle(pilot)
    return offered


async def test_a_fork_of_a_past_snapshot_is_that_snapshot_live_in_a_new_context(
    demo: Path,
) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("left_curly_bracket", "right_square_bracket", "right_square_bracket")
        await settle(pilot)
        assert screen.shown is not None and screen.shown.entry is not None
        assert screen.shown.entry.id == "n39"
        snapshot = await screen.workspace.at_snapshot("researcher", "n39")
        source_applied = screen.workspace.applied("researcher")

        assert await _fork(pilot) == "researcher-fork"
        await wait_until(pilot, lambda: screen.context_name == "researcher-fork", "the fork")
        assert screen.position is None  # live
        fork = screen.workspace.context("researcher-fork")
        assert fork.render_provider() == snapshot.render_provider()
        assert [(n.id, n.coordinates) for n in fork.nodes()] == [
            (n.id, n.coordinates) for n in snapshot.nodes()
        ]
        assert fork.current_episode == snapshot.current_episode == 2
        assert "researcher-fork   EPISODE 2   ● LIVE" in status_text(app)
        assert notifications(app)[-1] == (
            "Forked: researcher-fork: a copy of researcher at n39 (episode 2). "
            "Commands here leave researcher as it was."
        )

        # The list marks it, and says where it came from.
        contexts = screen.query_one(ContextList)
        names = [str(contexts.get_option_at_index(i).prompt) for i in range(contexts.option_count)]
        (forked,) = [label for label in names if "researcher-fork" in label]
        assert forked.startswith("⑂ researcher-fork") and "from researcher at n39" in forked
        assert str(contexts.tooltip) == "⑂ forked from researcher at n39 (episode 2)"

        # Commands on the fork leave the source as it was.
        await pilot.press("u", *"only in the fork", "enter", "full_stop")
        await settle(pilot)
        assert screen.workspace.applied("researcher") == source_applied
        assert screen.workspace.context("researcher").current_episode == 6
        assert screen.workspace.context("researcher-fork").current_episode == 3
        texts = [m["content"] for m in screen.workspace.context("researcher").render_provider()]
        assert "only in the fork" not in texts


async def test_a_fork_at_live_and_a_second_one_get_their_own_names(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        source = screen.workspace.context("researcher").render_provider()
        assert await _fork(pilot) == "researcher-fork"
        await wait_until(pilot, lambda: screen.context_name == "researcher-fork", "the fork")
        assert screen.workspace.context("researcher-fork").render_provider() == source
        assert "researcher at episode 6 (live)" in notifications(app)[-1]
        screen.switch_context("researcher")
        assert await _fork(pilot) == "researcher-fork-2"


@pytest.mark.parametrize(
    "name, why", [("writer", "already exists"), ("no spaces please", "context name")]
)
async def test_a_fork_name_that_cannot_be_is_said_and_nothing_is_written(
    demo: Path, name: str, why: str
) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        head = screen.workspace.head
        await _fork(pilot, name)
        said = notifications(app)[-1]
        assert said.startswith("Cannot fork: ") and why in said, said
        assert screen.workspace.head == head and screen.context_name == "researcher"


@pytest.mark.slow
async def test_the_palette_forks_and_a_read_only_workspace_does_not(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p", *"fork this context")
        await wait_until(
            pilot, lambda: "Fork this context at the shown snapshot" in screen_text(app), "hit"
        )
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "the prompt")
        await pilot.press("escape")
    app = inspector(demo, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("K")
        assert app.screen is screen_of(app)
        assert (
            notifications(app)[-1]
            == "Read-only: The workspace is open read-only: a fork cannot be made."
        )


# -- one cursor for the tree and the provider view ---------------------------------------------
async def test_v_keeps_the_cursor_on_the_same_item_both_ways(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await settle(pilot)
        view = screen.view
        assert view is not None
        placed = list(view.iter_items())
        item, depth, slot, offset = placed[len(placed) // 2]  # deep in the history, not the top
        assert screen.context_tree.go_to_place(depth, slot.position, offset)
        await settle(pilot)
        assert screen.highlighted is not None and screen.highlighted.item is item
        await pilot.press("v")
        await settle(pilot)
        row = screen.provider.current_row
        assert row is not None and row.item is not None and row.item.id == item.id
        assert screen.highlighted == row
        await pilot.press("up", "up")  # another message, chosen in the provider view
        await settle(pilot)
        chosen = screen.provider.current_row
        assert chosen is not None and chosen.item is not None and chosen.item.id != item.id
        await pilot.press("v")
        await settle(pilot)
        row = screen.context_tree.current_row
        assert row is not None and row.item is not None and row.item.id == chosen.item.id


async def test_the_status_line_names_the_active_selector(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await settle(pilot)
        screen.selector = "+notes"
        await settle(pilot)
        count = len(screen.selection.matches)
        assert count > 0
        await wait_until(pilot, lambda: "+notes" in status_text(app), "the selector said")
        assert f"+notes · {count} match" in status_text(app)
        screen.selector = ""
        await settle(pilot)
        await wait_until(pilot, lambda: "+notes" not in status_text(app), "the selector gone")
