"""What the custodian's keys and detail panes do around the selection (issue 24, bug 7): a
diff holds only what a proposal changes, the detail of a new selection starts at its top, one
key means one thing on a screen, ``:N`` shows the document after event #N, and after a
decision the cursor goes on to the next open proposal."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from pact_tui.diffs import without_separator
from pact_tui.widgets.queue import Palette, diff_renderable, proposal_detail

from .inspector import SIZE, inspector, settle
from .test_document_inbox import cursor_to
from .test_document_queue import by_status, queue_of, text_of


def removed_blank_lines(text: str) -> int:
    """The lines of a unified diff that remove a blank line."""
    return sum(1 for line in text.splitlines() if line.rstrip() == "-")


async def test_a_diff_holds_no_removed_blank_line_the_proposal_did_not_remove(
    demo: Path,
) -> None:
    """A section's content ends with the blank line that keeps it apart from the next one; a
    proposal's content need not (the merge puts the blank line back): that blank line is
    the document's, not something the proposal removes."""
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        pending = by_status(screen, "Pending")
        assert pending.base_content.endswith("\n\n") and not pending.content.endswith("\n\n")
        await cursor_to(pilot, queue, lambda row: row.key == pending.id)
        await settle(pilot)
        shown = text_of(screen.query_one("#proposal-detail", Static).content)
        assert "Diff against its base (-2 +2 lines):" in shown
        assert removed_blank_lines(shown) == 0
        # Every side of a conflict is diffed the same way.
        assert screen.shown is not None
        conflicted = by_status(screen, "Conflict")
        sides = text_of(proposal_detail(screen.shown, conflicted.id, False))
        assert removed_blank_lines(sides) == 0


def test_a_blank_line_a_proposal_does_remove_is_shown() -> None:
    """Only the blank lines that end a section are set aside: one inside it that the
    proposal removes is part of the diff."""
    base, proposed = without_separator("a\n\nb\n\n"), without_separator("a\nb\n")
    shown = text_of(diff_renderable(base, proposed, False, ("", ""), Palette()))
    assert removed_blank_lines(shown) == 1
