"""Export the README's screenshots, drawn by the app itself: ``python -m pact_tui.screenshot``.

The demo workspace is built with a fixed clock, the app runs headless at a fixed size, steps a
little (as a user would), and saves an SVG of the screen. With ``--conversation DIR`` it shows a
gptme conversation directory instead, on its first reference that is not ok.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import sys
import tempfile
from functools import partial
from pathlib import Path

from .app import PactApp
from .demo import create_demo

SIZE = (132, 36)


def fixed_clock(start: int = 1_795_000_000_000_000_000) -> partial[int]:
    """A clock that moves one second a reading: the same run draws the same screen."""
    return partial(next, itertools.count(start, 1_000_000_000))


async def screenshot(out: Path, custodian: bool = False) -> None:
    """The context inspector on the demo, or (``custodian``) the document screen's proposal
    queue with the pending proposal's diff."""
    out = out.resolve()
    here = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="pact-shot-") as scratch:
        # Run from the scratch folder: the status line shows the workspace's path relative to
        # the current folder, 'demo.pact', never the temporary one (every run draws the same).
        os.chdir(scratch)
        try:
            await _screenshot(out, Path(scratch) / "demo.pact", custodian)
        finally:
            os.chdir(here)


async def _screenshot(out: Path, path: Path, custodian: bool) -> None:
    """The demo built at ``path``, the app on it, its screen saved to ``out``."""
    await create_demo(path, clock=fixed_clock())
    app = PactApp(
        path, clock=fixed_clock(), watch=False, context="researcher", theme=None, human="ann"
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        if custodian:
            await pilot.press("2")
            await app.workers.wait_for_complete()
            await pilot.press("P", "down", "down")
        else:
            await pilot.press("end", "up")  # onto the render-lifecycle alert
            await pilot.pause(0.3)  # its story is read once the cursor rests...
            await app.workers.wait_for_complete()
            await pilot.press("C")  # the changelog pane: what the last step did, and why
        await app.workers.wait_for_complete()  # ...from the log, in a worker
        await pilot.pause()
        out.parent.mkdir(parents=True, exist_ok=True)
        app.save_screenshot(filename=out.name, path=str(out.parent))


async def conversation_screenshot(out: Path, directory: Path) -> None:
    """The master-log screen on a copy of ``directory``, ``n`` pressed: the first reference
    that is not ok, its verdict and its original. The copy keeps the directory's name (the
    status line shows it; the detail draws paths in it relative to it) in a temporary folder,
    with the index cache beside it."""
    cached = os.environ.get("PACT_TUI_CACHE")
    with tempfile.TemporaryDirectory(prefix="pact-shot-") as scratch:
        os.environ["PACT_TUI_CACHE"] = str(Path(scratch) / "cache")
        try:
            copy = Path(scratch) / directory.name
            shutil.copytree(directory, copy)
            app = PactApp(copy, watch=False, theme=None)
            async with app.run_test(size=SIZE) as pilot:
                await app.workers.wait_for_complete()  # every reference verified, catalogued
                await pilot.pause()
                await pilot.press("n")
                await app.workers.wait_for_complete()
                await pilot.pause()
                app.clear_notifications()  # "problem 1 of 1" would time out on a slow machine
                await pilot.pause()
                out.parent.mkdir(parents=True, exist_ok=True)
                app.save_screenshot(filename=out.name, path=str(out.parent))
        finally:
            if cached is None:
                os.environ.pop("PACT_TUI_CACHE", None)
            else:
                os.environ["PACT_TUI_CACHE"] = cached


def main() -> int:
    """``python -m pact_tui.screenshot [OUT.svg] [--custodian | --conversation DIR]``."""
    args = sys.argv[1:]
    directory = None
    if "--conversation" in args:
        at = args.index("--conversation")
        if at + 1 >= len(args):
            print("--conversation needs a gptme conversation directory", file=sys.stderr)
            return 2
        directory = Path(args[at + 1])
        del args[at : at + 2]
    custodian = "--custodian" in args
    args = [a for a in args if a != "--custodian"]
    out = Path(args[0] if args else "docs/screenshot.svg")
    if directory is not None:
        asyncio.run(conversation_screenshot(out, directory))
    else:
        asyncio.run(screenshot(out, custodian=custodian))
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
