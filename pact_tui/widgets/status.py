"""The status line: which context, which episode, live or past, and what is going on.

It always fits its width: when the whole line does not, the least important parts are said
shorter first, then left out, so what matters most (where you are, and that the app is writing
while it plays) never falls off the end.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from engine.visible import visible


@dataclass(frozen=True, slots=True)
class Status:
    context: str | None
    episode: int | None
    live: bool
    snapshot: str | None = None  # the snapshot shown, when in the past
    trigger: str | None = None
    pending: int = 0  # events that arrived while looking at the past
    diff: str | None = None  # "n21 ↔ now"
    diff_counts: tuple[int, int, int] | None = None  # added, removed, changed
    playing: float | None = None  # seconds per step while playing
    matches: str | None = None  # "3/12 matches", or "invalid selector"
    read_only: bool = False  # the workspace is open read-only: no commands
    waiting: int = 0  # items in the document screen's escalation inbox


@dataclass(frozen=True, slots=True)
class _Part:
    text: str
    style: str
    short: str  # what it says when space is short ("" to leave it out)
    rank: int  # 0 is kept whole if it can be; higher ranks give way first


def _parts(status: Status) -> list[_Part]:
    # The names and the trigger come from the workspace: shown visible, a trigger at most a
    # line's worth (the line gives way by rank anyway).
    context = visible(str(status.context), limit=64)
    snapshot, trigger = visible(str(status.snapshot)), visible(str(status.trigger), limit=200)
    parts = [
        _Part(f" {context} ", "bold reverse", f" {context} ", 0),
        _Part("  EPISODE ", "bold", " ep ", 0),
        _Part(f"{status.episode}", "bold $accent", f"{status.episode}", 0),
    ]
    if status.live:
        parts.append(_Part("   ● LIVE", "bold $success", " ● LIVE", 0))
    else:
        parts.append(
            _Part(
                f"   ◆ PAST  snapshot {snapshot} ({trigger}) · read-only",
                "bold $warning",
                f" ◆ PAST {snapshot}",
                0,
            )
        )
    if status.read_only:
        parts.append(_Part("   READ-ONLY", "bold $warning", " RO", 0))
    if status.playing is not None:
        playing = f"{status.playing:g}s"
        parts.append(_Part(f"   ▶ playing every {playing}", "bold $accent", f" ▶ {playing}", 1))
    if status.pending:
        noun = "event" if status.pending == 1 else "events"
        parts.append(
            _Part(
                f"   {status.pending} new {noun} · L returns to live",
                "$warning",
                f" +{status.pending} new",
                1,
            )
        )
    if status.diff:
        counts = ""
        if status.diff_counts is not None:
            added, removed, changed = status.diff_counts
            counts = f"+{added} -{removed} ~{changed}"
        parts.append(
            _Part(
                f"   diff {visible(status.diff)}  {counts}".rstrip(),
                "bold $secondary",
                f" ± {counts}",
                2,
            )
        )
    if status.waiting:
        parts.append(
            _Part(f"   ⚑ {status.waiting} waiting (2)", "bold $error", f" ⚑{status.waiting}", 1)
        )
    if status.matches:
        matches = visible(status.matches)
        parts.append(_Part(f"   {matches}", "$secondary", f" {matches}", 3))
    return parts


def fit(parts: list[_Part], width: int) -> list[tuple[str, str]]:
    """The parts as (text, style), made to fit ``width``: the highest ranks give way first,
    said shorter, then left out; rank 0 is only ever said shorter."""
    texts = [part.text for part in parts]
    order = sorted(range(len(parts)), key=lambda i: (-parts[i].rank, -i))
    for shorten in (True, False):
        for index in order:
            if sum(map(len, texts)) <= width:
                break
            if shorten:
                texts[index] = parts[index].short
            elif parts[index].rank > 0:
                texts[index] = ""
    return [(text, part.style) for text, part in zip(texts, parts, strict=True) if text]


def status_content(status: Status, width: int = 10_000) -> Content:
    if status.context is None:
        return Content.styled(" no context selected ", "bold")
    return Content.assemble(*fit(_parts(status), width))


class StatusBar(Widget):
    """One line, always visible; the episode number stands out."""

    status: reactive[Status | None] = reactive(None)
    """What the bar says (bound to the screen's)."""

    def render(self) -> Content:
        if self.status is None:
            return Content("")
        return status_content(self.status, self.size.width)
