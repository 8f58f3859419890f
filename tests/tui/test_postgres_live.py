"""The app on a workspace in PostgreSQL: it opens by URL and follows, live, the commands other
processes commit (heard through LISTEN/NOTIFY), the CLI's and those of two ``pact-tui serve``."""

from __future__ import annotations

import asyncio
import contextlib
import sys

import pytest

from pact_tui.demo import create_demo
from pact_tui.screens.document import DocumentScreen
from pact_tui.screenshot import fixed_clock
from pact_tui.widgets.outline import SectionOutline
from tests.server.served import HUMAN, Served, make_workspace, pact_server

from .inspector import SIZE, WAIT, inspector, pane_lines, screen_of, status_text, wait_until

BUDGET = "sec:plan/budget"


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


@pytest.mark.slow
@pytest.mark.xdist_group("processes")  # two servers besides the app: one such test at a time
async def test_the_document_screen_follows_commits_through_either_server(
    postgres_url: str,
) -> None:
    """Two ``pact-tui serve`` processes on the app's database: what agents write through each
    reaches the document screen live (with nothing pressed), on the outline as on the model."""
    await asyncio.to_thread(make_workspace, postgres_url)  # type: ignore[arg-type]
    with contextlib.ExitStack() as servers:
        one, two = (servers.enter_context(pact_server(postgres_url)) for _ in range(2))  # type: ignore[arg-type]
        keys = [one.join("plan", "legal")[0], two.join("plan", "finance")[0]]

        def post(served: Served, key: str, route: str, body: dict[str, str]) -> None:
            with served.client(key) as http:
                answer = http.post(f"/api/pact/plan/{route}", json=body)
            assert answer.status_code == 201, answer.text

        app = inspector(postgres_url, watch=True, human=HUMAN)  # type: ignore[arg-type]
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("2")
            screen = app.screen
            assert isinstance(screen, DocumentScreen), screen
            outline = screen.query_one(SectionOutline)
            await wait_until(pilot, lambda: BUDGET in {r.key for r in outline.rows}, "the plan")

            def comments() -> list[str]:
                doc = screen.shown.doc if screen.shown is not None else None
                return sorted(c.text for c in doc.comments.values()) if doc else []

            def budget_line() -> str:
                row = next(y for y, r in enumerate(outline.rows) if r.key == BUDGET)
                return outline.render_line(row).text

            text = {"sectionId": BUDGET, "text": "through server one"}
            await asyncio.to_thread(post, one, keys[0], "comments", text)
            await wait_until(pilot, lambda: comments() == [text["text"]], "server one's comment")
            offer = {"sectionId": BUDGET, "newContent": "## Budget\n\nTotal: 2M.\n"}
            await asyncio.to_thread(post, two, keys[1], "proposals", offer)
            await wait_until(pilot, lambda: "1 pending" in budget_line(), "server two's proposal")
