"""``pact-tui web`` in a real browser: the server as a process, headless Chromium on its page,
the keys typed into the page, and what xterm.js shows read back through the DevTools protocol."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.workspace import Workspace
from tests.browser import CHROMIUM, NO_CHROMIUM, chromium_page
from tests.web_server import web_server

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM),
    pytest.mark.e2e,
    pytest.mark.xdist_group("chromium"),  # one browser at a time
]

# The page's own parts (textual-serve's template): the name it shows while it connects, and the
# class its script gives the body once the app's first bytes arrived, or once the app ended.
INTRO_NAME = "document.querySelector('.intro-dialog .intro div')?.textContent.trim()"
FIRST_BYTE = "document.body.classList.contains('-first-byte')"
CLOSED = "document.body.classList.contains('-closed')"


async def read_memo(path: Path) -> tuple[list[str], set[str]]:
    """The demo memo's section titles and the names of its proposals' authors: what the
    document screen and its queue must show (neither changes when a timer fires)."""
    async with await Workspace.open(path, watch=False, lazy=True, read_only=True) as workspace:
        doc = (await workspace.load_document("memo")).doc
    titles = [section.title for section in doc.sections if section.title]
    return titles, {proposal.author_name for proposal in doc.proposals.values()}


async def test_the_app_in_chromium_opens_the_document_screen_and_its_queue(
    demo: Path, tmp_path: Path
) -> None:
    titles, authors = await read_memo(demo)
    assert len(titles) >= 5 and len(authors) >= 2  # the demo has something to show
    with web_server(demo, "--human", "ann", "--theme", "pact-midnight") as served:
        async with chromium_page(tmp_path / "chromium", width=1200, height=800) as page:
            await page.call("Page.navigate", url=served.url)
            # The page loads, names the workspace, and the app's first screen arrives.
            assert await page.wait_for(INTRO_NAME, "the page") == "pact-tui · demo.pact"
            await page.wait_for(FIRST_BYTE, "the app's first bytes")
            context = await page.wait_for_screen("context tree", "researcher", "writer")
            assert "sections" not in context
            before = await page.screenshot()

            await page.evaluate("window.pactTerminal.focus()")  # where a click would put it
            await page.type("2")
            document = await page.wait_for_screen("memo · ", "─ sections ─")
            assert "context tree" not in document  # the document screen replaced it
            for title in titles:
                assert title in document, (title, document)

            await page.type("P")
            queue = await page.wait_for_screen("─ proposals (")
            rows = [line for line in queue.splitlines() if " · agent " in line]
            for author in authors:  # a row per proposal, its author named
                assert any(f"agent {author} " in row for row in rows), (author, queue)
            shot = await page.screenshot()
            (tmp_path / "queue.png").write_bytes(shot)  # for a person to look at
            assert not await page.evaluate(CLOSED)

            # The screenshot is the queue drawn: many colours (text, its highlighted row, the
            # diff's colours), the page's size, and not the context screen's picture.
            drawn = await page.colours(shot)
            assert drawn["colours"] > 100, drawn
            assert drawn["width"] == (await page.colours(before))["width"]
            assert shot != before
    assert any(line.startswith("a browser connected from ") for line in served.said)
