"""The status line: which context, which episode, live or past, and what is pending."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.widgets import Static


@dataclass(frozen=True, slots=True)
class Status:
    context: str | None
    episode: int | None
    live: bool
    snapshot: str | None = None  # the snapshot shown, when in the past
    trigger: str | None = None
    pending: int = 0  # events that arrived while looking at the past
    diff: str | None = None  # "n21 → now"
    playing: float | None = None  # seconds per step while playing
    matches: str | None = None  # "3/12 matches"


def status_content(status: Status) -> Content:
    if status.context is None:
        return Content.styled(" no context selected ", "bold")
    parts: list[tuple[str, str]] = [
        (f" {status.context} ", "bold reverse"),
        ("  EPISODE ", "bold"),
        (f"{status.episode}", "bold $accent"),
    ]
    if status.live:
        parts.append(("   ● LIVE", "bold $success"))
    else:
        parts.append(
            (
                f"   ◆ PAST  snapshot {status.snapshot} ({status.trigger}) · read-only",
                "bold $warning",
            )
        )
        if status.pending:
            noun = "event" if status.pending == 1 else "events"
            parts.append((f"   {status.pending} new {noun} · L returns to live", "$warning"))
    if status.diff:
        parts.append((f"   diff {status.diff}", "bold $secondary"))
    if status.matches:
        parts.append((f"   {status.matches}", "$secondary"))
    if status.playing is not None:
        parts.append((f"   ▶ playing every {status.playing:g}s", "bold $accent"))
    return Content.assemble(*parts)


class StatusBar(Static):
    """One line, always visible; the episode number stands out."""

    status: Status | None = None  # what the bar last drew

    def show(self, status: Status) -> None:
        self.status = status
        self.update(status_content(status))
