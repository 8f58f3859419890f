"""The app on a workspace in PostgreSQL: it opens by URL and follows, live, the commands other
processes commit (heard through LISTEN/NOTIFY)."""

from __future__ import annotations

import asyncio
import sys

from pact_tui.demo import create_demo
from pact_tui.screenshot import fixed_clock

from .inspector import SIZE, WAIT, inspector, pane_lines, screen_of, status_text, wait_until


async def _pact_tui(*args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pact_tui", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), timeout=WAIT)
    assert process.returncode == 0, err.decode()
    return out.decode()


async def test_the_app_on_a_database_follows_another_process_live(postgres_url: str) -> None:
    await create_demo(postgres_url, clock=fixed_clock())  # type: ignore[arg-type]
    app = inspector(postgres_url, watch=True)  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await wait_until(pilot, lambda: "EPISODE 6" in status_text(app), "the demo shown")
        assert "● LIVE" in status_text(app)
        await _pact_tui("ctx", "user", postgres_url, "researcher", "Hello from the database")
        await _pact_tui("ctx", "advance", postgres_url, "researcher")
        await wait_until(pilot, lambda: "EPISODE 7" in status_text(app), "episode 7 on screen")
        await pilot.press("end")
        assert any('"Hello from the database"' in line for line in pane_lines(screen.context_tree))
