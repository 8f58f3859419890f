"""Themes: switching (palette and ``app.theme``), a theme file edited while the app runs
(reloaded by a call or by the watcher), and a broken file (a notification, a fallback, no
crash)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.segment import Segment

from pact_tui.app import PactApp
from pact_tui.themes import bundled_themes_dir, load_theme_file
from pact_tui.widgets.scrubber import Scrubber

from .inspector import (
    SIZE,
    copy_themes,
    holds_within,
    inspector,
    notifications,
    screen_of,
    screen_text,
    settle,
    status_text,
    wait_until,
)

SURFACES = {"pact-midnight": "#161d26", "pact-paper": "#f1eee8", "pact-ember": "#241916"}


def _drawn_surface(app: PactApp) -> str:
    """The background the tree pane is drawn with, on a line the cursor is not on."""
    tree = screen_of(app).context_tree
    segment = next(iter(tree.render_line(3)))
    assert segment.style is not None and segment.style.bgcolor is not None
    return segment.style.bgcolor.get_truecolor().hex


def _near(drawn: str, colour: str) -> bool:
    """Textual's colour arithmetic may move a channel by one."""
    a, b = (bytes.fromhex(c.removeprefix("#")) for c in (drawn, colour))
    return all(abs(x - y) <= 1 for x, y in zip(a, b, strict=True))


def _set_colour(path: Path, field: str, value: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines = [f'{field} = "{value}"' if line.startswith(f"{field} =") else line for line in lines]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_bundled_theme_files_have_the_surfaces_these_tests_expect() -> None:
    for name, surface in SURFACES.items():
        theme = load_theme_file(bundled_themes_dir() / f"{name.removeprefix('pact-')}.toml").theme
        assert (theme.name, theme.surface) == (name, surface)


@pytest.mark.parametrize("name", ["pact-paper", "pact-ember", "pact-midnight"])
async def test_setting_app_theme_redraws_the_panes(demo: Path, name: str) -> None:
    app = inspector(demo, theme="textual-dark")
    async with app.run_test(size=SIZE) as pilot:
        app.theme = name
        await pilot.pause()
        assert _drawn_surface(app) == SURFACES[name]


@pytest.mark.slow
async def test_the_palette_switches_the_theme(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        assert _drawn_surface(app) == SURFACES["pact-midnight"]
        await pilot.press("ctrl+p", *"theme")
        await wait_until(pilot, lambda: "Change the current theme" in screen_text(app), "Theme")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "pact-paper" in screen_text(app), "the theme list")
        await pilot.press(*"pact-paper", "enter")
        await wait_until(pilot, lambda: app.theme == "pact-paper", "the theme to change")
        await pilot.pause()
        assert _drawn_surface(app) == SURFACES["pact-paper"]
        assert "EPISODE 6" in status_text(app)


async def test_an_edited_theme_file_is_reloaded(demo: Path, tmp_path: Path) -> None:
    themes = copy_themes(tmp_path / "themes")
    app = inspector(demo, theme="pact-ember", theme_dirs=[themes])
    async with app.run_test(size=SIZE) as pilot:
        assert _drawn_surface(app) == SURFACES["pact-ember"]
        _set_colour(themes / "ember.toml", "surface", "#402020")
        app.reload_theme_file(themes / "ember.toml")
        await pilot.pause()
        assert app.theme == "pact-ember"
        assert _near(_drawn_surface(app), "#402020")
        assert notifications(app)[-1] == "theme 'pact-ember' reloaded"


async def test_the_watcher_reloads_a_theme_file_when_it_changes(demo: Path, tmp_path: Path) -> None:
    themes = copy_themes(tmp_path / "themes")
    app = inspector(demo, theme="pact-ember", theme_dirs=[themes], watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: screen_of(app).context_name is not None, "the screen")
        path = themes / "ember.toml"

        def reloaded() -> bool:
            return "theme 'pact-ember' reloaded" in notifications(app)

        # The watcher starts after the screen; an edit made before it watches goes unseen, so
        # edit again (a new colour each time) until one is reloaded.
        for attempt in range(40):
            _set_colour(path, "surface", f"#40{attempt:02x}20")
            if await holds_within(pilot, reloaded, timeout=0.5):
                break
        assert reloaded(), "the watcher never reloaded ember.toml"
        surface = load_theme_file(path).theme.surface
        assert surface is not None and surface.startswith("#40")
        await wait_until(pilot, lambda: _near(_drawn_surface(app), surface), "the new surface")
        assert app.theme == "pact-ember"


async def test_a_broken_theme_file_is_reported_and_the_app_falls_back(
    demo: Path, tmp_path: Path
) -> None:
    themes = copy_themes(tmp_path / "themes")
    app = inspector(demo, theme="pact-ember", theme_dirs=[themes])
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        (themes / "ember.toml").write_text('name = "pact-ember"\nprimary = [oops\n')
        app.reload_theme_file(themes / "ember.toml")
        await pilot.pause()
        assert app.theme == "pact-midnight"
        assert _drawn_surface(app) == SURFACES["pact-midnight"]
        (message,) = notifications(app)
        assert message.startswith("Theme file ember.toml: is not valid TOML")
        assert message.endswith("Using pact-midnight until it is fixed.")
        await wait_until(pilot, lambda: "Theme file ember.toml" in screen_text(app), "the toast")

        await pilot.press("full_stop")  # still working
        await settle(pilot)
        assert "EPISODE 7" in status_text(app)


@pytest.mark.parametrize(
    "content, problem",
    [
        ('name = "pact-ember"\nprimary = "not-a-colour"\n', "`primary` = 'not-a-colour'"),
        ('name = "pact-ember"\n', "needs at least a `primary` colour"),
        ('name = "pact-ember"\nprimary = "#fff"\nglow = 1\n', "unknown field(s) glow"),
        (b"\xff\xfe", "is not UTF-8 text"),
    ],
    ids=["bad colour", "no primary", "unknown field", "not text"],
)
async def test_each_kind_of_broken_theme_file_names_its_problem(
    demo: Path, tmp_path: Path, content: str | bytes, problem: str
) -> None:
    themes = copy_themes(tmp_path / "themes")
    app = inspector(demo, theme="pact-ember", theme_dirs=[themes])
    async with app.run_test(size=SIZE) as pilot:
        path = themes / "ember.toml"
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        app.reload_theme_file(path)
        await pilot.pause()
        assert app.theme == "pact-midnight"
        assert problem in notifications(app)[-1]


async def test_a_broken_default_theme_falls_back_to_textual_dark(
    demo: Path, tmp_path: Path
) -> None:
    themes = copy_themes(tmp_path / "themes")
    app = inspector(demo, theme_dirs=[themes])
    async with app.run_test(size=SIZE) as pilot:
        (themes / "midnight.toml").write_text("nonsense")
        app.reload_theme_file(themes / "midnight.toml")
        await pilot.pause()
        assert app.theme == "textual-dark"
        assert "Using textual-dark until it is fixed." in notifications(app)[-1]


async def test_a_broken_theme_file_at_start_is_reported_and_the_others_load(
    demo: Path, tmp_path: Path
) -> None:
    themes = copy_themes(tmp_path / "themes")
    (themes / "ember.toml").write_text("name = 3\n")
    app = inspector(demo, theme="pact-ember", theme_dirs=[themes])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.theme == "pact-midnight"
        assert "pact-paper" in app.available_themes
        assert "pact-ember" not in app.available_themes
        messages = notifications(app)
        assert any("ember.toml: needs a `name" in message for message in messages)
        assert any("theme 'pact-ember' not found; using the default" in m for m in messages)
        assert "EPISODE 6" in status_text(app)


async def test_fixing_a_broken_theme_file_brings_the_theme_back(demo: Path, tmp_path: Path) -> None:
    themes = copy_themes(tmp_path / "themes")
    good = (themes / "ember.toml").read_text()
    app = inspector(demo, theme="pact-ember", theme_dirs=[themes])
    async with app.run_test(size=SIZE) as pilot:
        (themes / "ember.toml").write_text("broken")
        app.reload_theme_file(themes / "ember.toml")
        await pilot.pause()
        assert app.theme == "pact-midnight"
        (themes / "ember.toml").write_text(good)
        app.reload_theme_file(themes / "ember.toml")
        await pilot.pause()
        assert app.theme == "pact-ember"
        assert _drawn_surface(app) == SURFACES["pact-ember"]


async def test_fixing_a_theme_file_after_choosing_another_theme_keeps_the_choice(
    demo: Path, tmp_path: Path
) -> None:
    themes = copy_themes(tmp_path / "themes")
    good = (themes / "ember.toml").read_text()
    app = inspector(demo, theme="pact-ember", theme_dirs=[themes])
    async with app.run_test(size=SIZE) as pilot:
        (themes / "ember.toml").write_text("broken")
        app.reload_theme_file(themes / "ember.toml")
        app.theme = "pact-paper"
        (themes / "ember.toml").write_text(good)
        app.reload_theme_file(themes / "ember.toml")
        await pilot.pause()
        assert app.theme == "pact-paper"


# -- legibility: what is drawn, in each theme ----------------------------------------------------
PANELS = {"pact-midnight": "#1f2a36", "pact-paper": "#e4dfd5", "pact-ember": "#33231e"}


def _contrast(a: str, b: str) -> float:
    """The WCAG contrast ratio of two colours (1 to 21; 3 is the floor for legible UI text)."""

    def luminance(colour: str) -> float:
        channels = [c / 255 for c in bytes.fromhex(colour.removeprefix("#"))]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _colours(segment: Segment) -> tuple[str, str]:
    style = segment.style
    assert style is not None and style.color is not None and style.bgcolor is not None
    return style.color.get_truecolor().hex, style.bgcolor.get_truecolor().hex


@pytest.mark.parametrize("theme", list(SURFACES))
async def test_the_scrubber_is_drawn_on_its_own_background(demo: Path, theme: str) -> None:
    app = inspector(demo, theme=theme)
    async with app.run_test(size=SIZE):
        line = screen_of(app).query_one(Scrubber).render_line(0)
        assert {_colours(segment)[1] for segment in line} == {PANELS[theme]}


@pytest.mark.parametrize("theme", ["pact-midnight", "pact-paper", "pact-ember"])
async def test_muted_text_in_the_tree_is_legible(demo: Path, theme: str) -> None:
    app = inspector(demo, theme=theme)
    async with app.run_test(size=SIZE):
        header = screen_of(app).context_tree.render_line(5)  # ▾ turn d5  user · history  3 items
        (count,) = [segment for segment in header if "3 items" in segment.text]
        assert _contrast(*_colours(count)) >= 3


@pytest.mark.parametrize("theme", list(SURFACES))
async def test_a_lifecycle_badge_on_a_marked_row_is_legible(demo: Path, theme: str) -> None:
    app = inspector(demo, theme=theme)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("left_curly_bracket", "d", "right_square_bracket", "home")
        await settle(pilot)
        tree = screen_of(app).context_tree
        layout = tree.layout_model
        marked = [
            y
            for y in range(layout.line_count)
            if layout.row(y).kind == "item" and tree.row_change(layout.row(y)) is not None
        ]
        assert marked
        for line in marked:
            (badge,) = [s for s in tree.render_line(line) if s.text in ("PERM", "TEMP", "STCK")]
            assert _contrast(*_colours(badge)) >= 3, (theme, tree.render_line(line).text)


async def test_a_theme_chosen_at_start_is_drawn_with_the_rules_parsed_once(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual.css.stylesheet import Stylesheet

    reparsed: list[bool] = []
    real = Stylesheet.reparse

    def counted(self: Stylesheet) -> None:
        reparsed.append(True)
        real(self)

    monkeypatch.setattr(Stylesheet, "reparse", counted)
    app = inspector(demo, theme="pact-paper")  # not Textual's default: its variables differ
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert reparsed == []  # parsed once, into the app's stylesheet, with the theme's
        assert _drawn_surface(app) == SURFACES["pact-paper"]
        app.theme = "pact-midnight"
        await pilot.pause()
        assert reparsed == [True] and _drawn_surface(app) == SURFACES["pact-midnight"]


async def test_a_new_modes_screen_is_styled_as_it_mounts_and_restyled_by_a_later_theme(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual.css.stylesheet import Stylesheet

    reparsed: list[str] = []
    real = Stylesheet.reparse

    def counted(self: Stylesheet) -> None:
        reparsed.append(app.current_mode)
        real(self)

    app = inspector(demo, theme="pact-midnight")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        monkeypatch.setattr(Stylesheet, "reparse", counted)
        await app.switch_mode("document")  # a screen not made yet
        await settle(pilot)
        assert reparsed == []  # its widgets styled as they mounted, the CSS not read again
        app.theme = "pact-paper"
        await pilot.pause()
        assert reparsed  # a theme restyles every screen, the new one too
        await app.switch_mode("context")
        await pilot.pause()
        assert _drawn_surface(app) == SURFACES["pact-paper"]


async def test_a_new_modes_screen_is_not_restyled_as_it_resumes_until_it_was_suspended(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual.screen import Screen

    restyled: list[str] = []
    real = Screen.update_node_styles

    def counted(self: Screen[object], animate: bool = True) -> None:
        restyled.append(type(self).__name__)
        real(self, animate)

    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        monkeypatch.setattr(Screen, "update_node_styles", counted)
        await app.switch_mode("document")  # new: styled as its widgets mounted, and drawn
        await settle(pilot)
        assert "DocumentScreen" not in restyled
        await app.switch_mode("context")  # the document screen suspended ...
        await settle(pilot)
        await app.switch_mode("document")  # ... and resumed: restyled (what changed meanwhile)
        await settle(pilot)
        assert "DocumentScreen" in restyled


async def test_the_tree_is_the_first_widget_focused_as_the_context_screen_opens(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual.widget import Widget

    focused: list[tuple[str, bool]] = []
    real = Widget.watch_has_focus

    def noted(self: Widget, value: bool) -> None:
        focused.append((self.id or type(self).__name__, value))
        real(self, value)

    monkeypatch.setattr(Widget, "watch_has_focus", noted)
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # Each change of focus restyles the widgets it touches: one, not a detour through the
        # context list (the first focusable widget).
        assert focused == [("tree", True)]
        assert screen_of(app).focused is screen_of(app).context_tree
