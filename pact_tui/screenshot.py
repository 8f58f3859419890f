"""Export the README's screenshot, drawn by the app itself: ``python -m pact_tui.screenshot``.

The demo workspace is built with a fixed clock, the app runs headless at a fixed size, steps a
little (as a user would), and saves an SVG of the screen.
"""

from __future__ import annotations

import asyncio
import itertools
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
    with tempfile.TemporaryDirectory(prefix="pact-shot-") as scratch:
        path = Path(scratch) / "demo.pact"
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
            await app.workers.wait_for_complete()  # ...from the log, in a worker
            await pilot.pause()
            out.parent.mkdir(parents=True, exist_ok=True)
            app.save_screenshot(filename=out.name, path=str(out.parent))


def main() -> int:
    """``python -m pact_tui.screenshot [OUT.svg] [--custodian]``."""
    args = [a for a in sys.argv[1:] if a != "--custodian"]
    out = Path(args[0] if args else "docs/screenshot.svg")
    asyncio.run(screenshot(out, custodian="--custodian" in sys.argv[1:]))
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
