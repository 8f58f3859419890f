"""The status line: which context, which episode, live or past, what is going on, and (at the
right, in the room left) which workspace file.

It always fits its width: when the whole line does not, the least important parts are said
shorter first, then left out, so what matters most (where you are, and that the app is writing
while it plays) never falls off the end. The workspace's path gets what room is left, shortened
in the middle (``~/work/…/agents.pact``), or none.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from engine.visible import visible

# What the status line can say (the help page's legend).
STATUS_LEGEND = [
    ("EPISODE 6", "the episode of the view shown"),
    ("● LIVE", "the live context: commands write to it, and it changes as agents work"),
    ("◆ PAST", "a snapshot: read-only; L returns to live"),
    ("3 new events", "what arrived while you look at the past"),
    ("▶ playing every 1s", "automatic stepping through the past (p; + and - change the pace)"),
    ("▶ WRITING to …", "playing at live: every step appends an advance to the context"),
    ("diff a ↔ b  +2 -1 ~3", "the two ends of the diff, and what was added, removed, changed"),
    ("1/3 matches", "the selector's matches, and which one n/N went to"),
    ("⚑ 2 waiting (2)", "what waits for the custodian in a document (2 shows it)"),
    ("demo.pact", "at the right: the workspace file shown"),
    (
        "checkpoints deep-verified 2026-11-27",
        "when `pact-tui verify --deep` last passed on it (never: it has not)",
    ),
    ("↓ FOLLOWING", "follow mode (f): the active turn stays in view as the context grows"),
    ("▽ FILTER 3 matches · 8 rows", "filter mode (F): only the matches and their turns and slots"),
]


@dataclass(frozen=True, slots=True)
class Status:
    context: str | None
    episode: int | None
    live: bool
    snapshot: str | None = None  # the snapshot shown, when in the past
    trigger: str | None = None
    pending: int = 0  # events that arrived while looking at the past
    diff: str | None = None  # "n21 (base) → live": older first, as the detail says it
    diff_counts: tuple[int, int, int, int] | None = None  # added, removed, changed, moved
    playing: float | None = None  # seconds per step while playing
    matches: str | None = None  # "3/12 matches", or "invalid selector"
    read_only: bool = False  # the workspace is open read-only: no commands
    waiting: int = 0  # items in the document screen's escalation inbox
    writing: bool = False  # playing at live: every step appends an advance to the context
    path: str = ""  # the workspace file, as people read it (``display_path``)
    verified: str = ""  # when its checkpoints were last deep-verified (``deep_verified``)
    # -- filter and follow --
    following: bool = False  # follow mode: the active turn is kept in view
    filtered: tuple[int, int] | None = None  # filter mode: (matches, rows shown)


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
    if status.playing is not None and status.writing:  # never left out: it changes the file
        playing = f"{status.playing:g}s"
        parts.append(
            _Part(
                f"   ▶ WRITING to {context} every {playing}",
                "bold reverse $error",
                f" ▶ WRITING {playing}",
                0,
            )
        )
    elif status.playing is not None:
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
            counts = diff_counts(*status.diff_counts)
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
    parts.extend(_filter_and_follow(status))
    return parts


def _filter_and_follow(status: Status) -> list[_Part]:
    parts = []
    if status.following:
        parts.append(_Part("   ↓ FOLLOWING", "bold $accent", " ↓", 1))
    if status.filtered is not None:
        matches, rows = status.filtered
        noun = "match" if matches == 1 else "matches"
        parts.append(
            _Part(
                f"   ▽ FILTER {matches:,} {noun} · {rows:,} row{'s' if rows != 1 else ''}",
                "bold $secondary",
                f" ▽ {rows:,} rows",
                1,
            )
        )
    return parts


def diff_counts(added: int, removed: int, changed: int, moved: int) -> str:
    """``+2 −1 ~3 ↓10``: with the glyphs the rows carry (``↓``: moved with their turn)."""
    counts = f"+{added} −{removed} ~{changed}"
    return f"{counts} ↓{moved}" if moved else counts


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


PATH_GAP = 3  # spaces at least between the status and the path at the right
PATH_MIN = 12  # a path shorter than this says too little to be worth showing


def display_path(path: Path, home: Path | None = None, cwd: Path | None = None) -> str:
    """A workspace's path as people read it: relative to the current folder when it is inside
    it (as it was most likely typed), else with the home folder as ``~``."""
    absolute = Path(os.path.abspath(path))
    try:
        here = cwd if cwd is not None else Path.cwd()
    except OSError:  # the folder the app was started in has been removed
        here = None
    if here is not None and absolute.is_relative_to(here) and absolute != here:
        return str(absolute.relative_to(here))
    try:
        home = home if home is not None else Path.home()
    except (OSError, RuntimeError):  # no home folder known
        return str(absolute)
    if absolute.is_relative_to(home) and absolute != home:
        return str(Path("~") / absolute.relative_to(home))
    return str(absolute)


def middle_ellipsis(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters: its start and its end (the file's name), with
    ``…`` for what is left out of the middle."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    tail = (width - 1) * 2 // 3  # the end says which file: it gets the larger share,
    name = len(text) - max(text.rfind("/"), text.rfind(os.sep))  # the whole name if it fits
    if name <= width - 3:
        tail = max(tail, name)
    head = width - 1 - tail
    return text[:head] + "…" + text[len(text) - tail :]


def deep_verified(time_ns: int | None) -> str:
    """What the status line says of the last ``verify --deep`` that passed: its day (local)."""
    if time_ns is None:
        return "checkpoints never deep-verified"
    day = datetime.fromtimestamp(time_ns // 1_000_000_000).date().isoformat()
    return f"checkpoints deep-verified {day}"


def status_content(status: Status, width: int | None = None) -> Content:
    """The line at ``width`` (at its right edge, when they fit whole, when the checkpoints were
    last deep-verified and the path; else the path, shortened if need be), or whole (None:
    both after it)."""
    if status.context is None:
        return Content.styled(" no context selected ", "bold")
    parts = fit(_parts(status), width if width is not None else 10**9)
    path = visible(status.path)
    right = [text for text in (status.verified, path) if text]
    used = sum(len(text) for text, _style in parts)
    whole = (" " * PATH_GAP).join(right)
    if width is None:
        for text in right:
            parts += [(" " * PATH_GAP, ""), (text, "$text-muted")]
    elif status.verified and width - used - PATH_GAP - 1 >= len(whole):
        parts += [(" " * (width - used - len(whole) - 1), ""), (whole, "$text-muted")]
    elif path and width - used - PATH_GAP - 1 >= min(PATH_MIN, len(path)):
        shown = middle_ellipsis(path, width - used - PATH_GAP - 1)  # and a space at the end
        parts += [(" " * (width - used - len(shown) - 1), ""), (shown, "$text-muted")]
    return Content.assemble(*parts)


class StatusBar(Widget):
    """One line, always visible; the episode number stands out."""

    status: reactive[Status | None] = reactive(None)
    """What the bar says (bound to the screen's)."""

    def render(self) -> Content:
        if self.status is None:
            return Content("")
        return status_content(self.status, self.size.width)
