"""Checks an installed pact-tui wheel as a new user would meet it; exits non-zero on any problem.

Run by the python of a virtual environment that has only the wheel installed, from a directory
outside the checkout, with the checkout's path as its argument (``.ci/run`` does this):

- the wheel holds every file of the checkout's packages (``themes/`` becomes
  ``pact_tui/bundled_themes/``), and the installed package is not the checkout;
- ``pact-tui demo --print`` prints the scripted walk;
- the app starts headless on every bundled theme, whose names are the checkout's ``themes/*.toml``:
  the theme is active, ``app.tcss`` was applied (the context list is 22 cells wide, the tree is
  drawn on the theme's surface) and the tree drew its rows.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

# Files of the checkout's packages that are deliberately not in the wheel (none, today).
LEFT_OUT: list[str] = []
SIZE = (120, 40)
WAIT = 30.0  # seconds the app may take to draw on a loaded machine


def fail(message: str) -> None:
    raise SystemExit(f"check_wheel: {message}")


def installed_files(checkout: Path, site: Path) -> None:
    """Every file git tracks in engine/, pact_tui/ and themes/ is installed where it belongs."""
    listed = subprocess.run(
        ["git", "-C", str(checkout), "ls-files", "--", "engine", "pact_tui", "themes"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    if not listed:
        fail(f"git lists no package files in {checkout}")
    wanted = [f for f in listed if not any(fnmatch.fnmatch(f, p) for p in LEFT_OUT)]
    placed = [
        "pact_tui/bundled_themes/" + f.removeprefix("themes/") if f.startswith("themes/") else f
        for f in wanted
    ]
    missing = [f for f in placed if not (site / f).is_file()]
    if missing:
        fail(f"the wheel leaves out {', '.join(missing)}")
    print(f"the wheel holds all {len(placed)} files of the checkout's packages")


def demo_print() -> None:
    script = Path(sys.executable).parent / "pact-tui"
    done = subprocess.run(
        [str(script), "demo", "--print"], capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0 or done.stderr:
        fail(f"pact-tui demo --print exited {done.returncode}: {done.stderr.strip()}")
    for expected in ("── the context after the demo", "── what the model would be sent"):
        if expected not in done.stdout:
            fail(f"pact-tui demo --print did not print {expected!r}:\n{done.stdout}")
    print(f"pact-tui demo --print: {len(done.stdout.splitlines())} lines")


async def run_app(path: Path, name: str, surface: str) -> None:
    from textual.pilot import Pilot

    from pact_tui.app import PactApp
    from pact_tui.screens.context import ContextScreen

    async def wait_for(pilot: Pilot[int], condition: Callable[[], bool], what: str) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT
        while not condition():
            if loop.time() > deadline:
                fail(f"theme {name}: gave up waiting for {what}")
            await pilot.pause(0.05)

    app = PactApp(path, theme=name, watch=False, context="researcher")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ContextScreen), "the inspector")
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        tree = screen.context_tree

        def lines() -> list[str]:
            height = tree.scrollable_content_region.height
            return [tree.render_line(y).text.rstrip() for y in range(height)]

        await wait_for(pilot, lambda: any(line.startswith("▾ turn d") for line in lines()), "rows")
        if app.theme != name:
            fail(f"theme {name}: the app shows {app.theme!r}")
        width = screen.query_one("#contexts").outer_size.width
        if width != 22:
            fail(f"theme {name}: the context list is {width} wide, not app.tcss's 22")
        style = next(iter(tree.render_line(3))).style  # a line the cursor is not on
        drawn = style.bgcolor.get_truecolor().hex if style and style.bgcolor else None
        if drawn != surface.lower():
            fail(f"theme {name}: the tree is drawn on {drawn}, not app.tcss's $surface {surface}")
        print(f"theme {name}: {len(lines())} rows drawn, first {lines()[0]!r}")


def themes(checkout: Path, site: Path) -> None:
    from pact_tui.demo import create_demo
    from pact_tui.themes import bundled_themes_dir, load_themes

    folder = bundled_themes_dir()
    if not folder.is_relative_to(site):
        fail(f"the bundled themes are found in {folder}, not in the installed package")
    loaded, errors = load_themes([folder])
    if errors:
        fail(f"bundled theme files do not load: {'; '.join(map(str, errors))}")
    installed = {theme_file.path.name for theme_file in loaded}
    in_checkout = {path.name for path in (checkout / "themes").glob("*.toml")}
    if installed != in_checkout:
        fail(f"the wheel's themes {sorted(installed)} are not the checkout's {sorted(in_checkout)}")
    with tempfile.TemporaryDirectory(prefix="pact-wheel-") as scratch:
        path = Path(scratch) / "demo.pact"
        asyncio.run(create_demo(path))
        for theme_file in loaded:
            theme = theme_file.theme
            assert theme.surface is not None, theme_file.path
            asyncio.run(run_app(path, theme.name, theme.surface))


def main() -> None:
    checkout = Path(sys.argv[1]).resolve()
    if Path.cwd().resolve().is_relative_to(checkout):
        fail(f"run this from outside the checkout, not from {Path.cwd()}")
    import pact_tui

    site = Path(pact_tui.__file__).resolve().parent.parent
    if site.is_relative_to(checkout):
        fail(f"pact_tui is imported from the checkout ({site}), not from the wheel")
    installed_files(checkout, site)
    demo_print()
    with tempfile.TemporaryDirectory(prefix="pact-config-") as config:
        os.environ["XDG_CONFIG_HOME"] = config  # the user's own themes stay out of it
        themes(checkout, site)
    print("the wheel works")


if __name__ == "__main__":
    main()
