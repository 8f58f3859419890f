"""Comments as the custodian reads them: under a section's Markdown, in a proposal's detail,
in the inbox's briefing; and the choices of the "resolve a comment" picker.

What is drawn comes from ``engine.protocol.views.comments`` through the reader's barriers
(viewing as an agent, only what it may read), every text made visible. Open comments come
first, oldest first; resolved ones follow, dimmed, with who resolved them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from engine.visible import visible

from .outline import countdown

if TYPE_CHECKING:
    from engine.protocol.model import Comment, Section

    from ..screens.choose import Choice
    from ..types import DocShown

SHOWN_MOST = 30  # comments drawn in a pane; the rest are counted
PREVIEW = 70  # characters of a comment's text in a picker


def comments_of(
    shown: DocShown, *, section: Section | None = None, proposal: str | None = None
) -> list[Comment]:
    """The comments on ``section`` or ``proposal`` the reader may read: open ones first."""
    from engine.protocol import views

    found = views.comments(shown.doc, shown.reader, section=section, proposal=proposal)
    return sorted(found, key=lambda k: k.resolved_by is not None)  # stable: oldest first


def comment_head(shown: DocShown, comment: Comment) -> str:
    """Who wrote it, when, on which proposal, to whom (visible text)."""
    from engine.protocol.model import who
    from engine.protocol.views import comment_row

    row = comment_row(shown.doc, comment)
    on = f" on {visible(comment.proposal[-12:])}" if comment.proposal else ""
    to = f" → {visible(', '.join(row['to']))}" if row["to"] else ""
    ago = countdown(shown.now_ms, comment.at_ms)
    return f"{visible(who(row['author'], row['authorKind']))}{on}{to} · {ago} ago"


def comments_text(
    shown: DocShown, *, section: Section | None = None, proposal: str | None = None
) -> Text:
    """The comments block of a pane (empty when there is none)."""
    found = comments_of(shown, section=section, proposal=proposal)
    text = Text()
    if not found:
        return text
    still = sum(1 for k in found if k.resolved_by is None)
    text.append(f"Comments ({still} open, {len(found) - still} resolved)\n", "bold")
    for comment in found[:SHOWN_MOST]:
        resolved = comment.resolved_by is not None
        style = "dim" if resolved else ""
        text.append("✓ " if resolved else "● ", "dim" if resolved else "bold")
        text.append(comment_head(shown, comment), "dim")
        if resolved:
            text.append(f" · resolved by {visible(comment.resolved_by or '')}", "dim")
        text.append("\n  ")
        text.append(visible(comment.text, multiline=True).replace("\n", "\n  ") + "\n", style)
    if len(found) > SHOWN_MOST:
        text.append(f"… and {len(found) - SHOWN_MOST} more\n", "dim")
    return text


def resolve_choices(comments: list[Comment], shown: DocShown) -> list[Choice]:
    """The picker's choices: each open comment, keyed 1-9 then a-z (the rest by the cursor)."""
    from ..screens.choose import Choice

    keys = "123456789abcdefghijklmnopqrstuvwxyz"
    choices = []
    for at, comment in enumerate(comments):
        said = visible(comment.text, limit=PREVIEW)
        key = keys[at] if at < len(keys) else ""  # no key: chosen with the cursor
        choices.append(Choice(key, f"{comment_head(shown, comment)}: {said}", comment.id))
    return choices
