"""The custodian's document screen: switching to it, the section outline and its marks, the
selected section's Markdown, live changes from another writer, and a refused action shown."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.widgets import Markdown

from engine.protocol.commands import Actor
from engine.workspace import Workspace
from pact_tui.screens.document import DocumentScreen
from pact_tui.screenshot import fixed_clock
from pact_tui.widgets.outline import SectionOutline, countdown

from .inspector import SIZE, inspector, notifications, settle, wait_until


def document_screen(app: object) -> DocumentScreen:
    screen = app.screen  # type: ignore[attr-defined]
    assert isinstance(screen, DocumentScreen), screen
    return screen


def outline_lines(outline: SectionOutline) -> list[str]:
    return [
        outline.render_line(y).text.rstrip()
        for y in range(outline.scrollable_content_region.height)
    ]


async def test_2_shows_the_demo_document_outline_with_its_marks(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        screen = document_screen(app)
        await wait_until(pilot, lambda: screen.shown is not None, "the memo to load")
        doc = screen.shown.doc  # type: ignore[union-attr]
        outline = screen.query_one(SectionOutline)
        await wait_until(pilot, lambda: len(outline.rows) == len(doc.sections), "the rows")
        # One row per section, in document order, each with its version and salience.
        assert [row.key for row in outline.rows] == [s.id for s in doc.sections]
        lines = outline_lines(outline)
        for row, line in zip(outline.rows, lines, strict=False):
            assert f" v{row.version}" in line and f" S{row.salience}" in line
            if row.pending:
                assert f"{row.pending} pending" in line
        assert "memo" in str(screen.query_one("#doc-status").render())
        assert "as ann" in str(screen.query_one("#doc-status").render())


async def test_the_selected_section_is_rendered_beside_the_outline(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        screen = document_screen(app)
        outline = screen.query_one(SectionOutline)
        await wait_until(pilot, lambda: len(outline.rows) > 2, "the rows")
        await pilot.press("down", "down")
        await settle(pilot)
        section = screen.shown.doc.by_id[outline.rows[2].key]  # type: ignore[union-attr]
        assert screen.section_id == section.id
        markdown = screen.query_one("#section-markdown", Markdown)
        assert markdown.source == section.content


async def test_a_commit_by_another_writer_appears_live(demo: Path) -> None:
    """Without a file watcher the app follows its own workspace handle: a second handle's
    commit is picked up at the next write of this one; here the screen's own tick (``t``),
    which catches up inside its write transaction."""
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        screen = document_screen(app)
        await wait_until(pilot, lambda: screen.shown is not None, "the memo to load")
        before = screen.shown.doc.sequence  # type: ignore[union-attr]
        agent = next(iter(screen.shown.doc.active))  # type: ignore[union-attr]
        # The app's clock (fixed): on the real one every agent of the demo is long evicted.
        async with await Workspace.open(demo, watch=False, lazy=True, clock=fixed_clock()) as other:
            command = {"op": "comment", "sectionId": "sec:summary", "text": "from elsewhere"}
            await other.run_document("memo", command, Actor.agent(agent))
        await pilot.press("t")
        await settle(pilot)
        assert screen.revision > before
        assert any(
            c.text == "from elsewhere"
            for c in screen.shown.doc.comments.values()  # type: ignore[union-attr]
        )


async def test_a_refused_action_is_shown_and_changes_nothing(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        screen = document_screen(app)
        await wait_until(pilot, lambda: screen.shown is not None, "the memo to load")
        before = screen.shown.doc.sequence  # type: ignore[union-attr]
        screen.run_document({"op": "approve", "proposalId": "no-such-proposal"})
        await settle(pilot)
        assert any(n.startswith("Refused:") for n in notifications(app)), notifications(app)
        assert screen.shown.doc.sequence == before  # type: ignore[union-attr]


def test_countdowns_read_minutes_and_seconds() -> None:
    assert countdown(1_000 + 42_000, 1_000) == "42s"
    assert countdown(185_000, 0) == "3m05s"
    assert countdown(0, 5_000) == "0s"
    assert countdown(1_500, 1_000) == "1s"  # a part of a second left counts as one


def test_every_duration_is_said_in_its_two_largest_units() -> None:
    """Issue 24: a merge a day away read "merges in 1432m09s"."""
    from pact_tui.doc_time import duration

    assert countdown(1_432 * 60_000 + 9_000, 0) == "23h52m"
    assert [duration(s) for s in (0, 59, 60, 90, 3_600, 3_660, 86_400, 183_600)] == [
        *("0s", "59s", "1m", "1m30s", "1h", "1h01m", "1d", "2d 3h"),
    ]


@pytest.mark.slow
async def test_every_view_on_a_document_built_by_tap_commands(tmp_path: Path) -> None:
    """A workspace made only with ``pact-tui doc`` and ``pact-tui tap`` (as agents would make
    it, process by process): the outline, queue, heatmap, inbox and agents all show it."""
    import subprocess
    import sys

    from pact_tui.widgets.agents import AgentRoster
    from pact_tui.widgets.heatmap import SalienceHeatmap
    from pact_tui.widgets.inbox import EscalationInbox
    from pact_tui.widgets.queue import ProposalQueue

    ws = tmp_path / "team.pact"
    plan = tmp_path / "plan.md"
    plan.write_text("# Scope\n\nSmall.\n\n# Budget\n\nTotal: $1M.\n")

    def cli(*args: str) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "pact_tui", *args], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr

    cli(
        "doc",
        "create",
        str(ws),
        "plan",
        "--from",
        str(plan),
        "--policy",
        "single",
        "--human",
        "ann",
    )
    for name in ("ada", "bo"):
        cli("tap", "join", str(ws), "plan", "--as", name)
    tap = ("tap",)
    cli(
        *tap,
        "salience",
        str(ws),
        "plan",
        "--agent",
        "ada",
        "--section",
        "sec:budget",
        "--score",
        "8",
    )
    cli(
        *tap,
        "intent",
        str(ws),
        "plan",
        "--agent",
        "ada",
        "--section",
        "sec:budget",
        "--goal",
        "Cut",
    )
    cli(
        *tap, "constrain", str(ws), "plan", "--agent", "bo", "--section", "sec:budget",
        "--boundary", "Stay under $1M",
    )  # fmt: skip
    cli(
        *tap, "propose", str(ws), "plan", "--agent", "ada", "--section", "sec:budget",
        "--content", "# Budget\\n\\nTotal: $0.9M.\\n", "--summary", "Trim",
    )  # fmt: skip
    cli(
        *tap, "ask-human", str(ws), "plan", "--agent", "bo", "--question", "Is $0.9M enough?",
        "--section", "sec:budget", "--timeout", "600",
    )  # fmt: skip
    app = inspector(ws, human="ann", clock=time.time_ns)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        screen = app.screen
        assert isinstance(screen, DocumentScreen)
        await wait_until(pilot, lambda: screen.shown is not None, "the plan")
        assert [r.key for r in screen.query_one(SectionOutline).rows] == [
            "sec:_root", "sec:scope", "sec:budget",
        ]  # fmt: skip
        queue = screen.query_one(ProposalQueue)
        assert [(r.status, r.summary, r.progress) for r in queue.rows] == [
            ("Pending", "Trim", "0/1 approval")
        ]
        heatmap = screen.query_one(SalienceHeatmap)
        ada = screen.shown.doc.agent_named("ada")  # type: ignore[union-attr]
        budget = screen.shown.doc.by_id["sec:budget"].key  # type: ignore[union-attr]
        assert heatmap.grid.cell(ada.id, budget)[0] == " 8i "  # type: ignore[union-attr]
        inbox = screen.query_one(EscalationInbox)
        assert [r.text for r in inbox.rows] == ["Is $0.9M enough?"]
        assert [r.name for r in screen.query_one(AgentRoster).rows] == ["ada", "bo"]
