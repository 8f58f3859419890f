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
from textual.widgets import Static

from engine.visible import visible

from ..text import plain

# What the status line can say (the help page's legend).
STATUS_LEGEND = [
    ("EPISODE 6", "the episode of the view shown"),
    ("● LIVE", "the live context: commands write to it, and it changes as agents work"),
    ("◆ PAST", "a snapshot: read-only; } returns to live"),
    ("3 new events", "what arrived while you look at the past"),
    ("▶ playing every 1s", "automatic stepping through the past (p; + and - change the pace)"),
    ("▶ WRITING to …", "playing at live: every step appends an advance to the context"),
    ("diff a ↔ b  +2 -1 ~3", "the two ends of the diff, and what was added, removed, changed"),
    ("+tag · 1/3 matches", "the active selector, its matches, and which one n/N went to"),
    ("⚑ 2 waiting (2)", "what waits for the custodian in a document (2 shows it)"),
    ("demo.pact", "at the right: the workspace file shown"),
    (
        "checkpoints deep-verified 2026-11-27",
        "when `pact-tui verify --deep` last passed on it (never: it has not)",
    ),
    ("↓ FOLLOWING", "follow mode (F): the active turn stays in view as the context grows"),
    ("▽ FILTER 3 matches · 8 rows", "filter mode (f): only the matches and their turns and slots"),
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
    selector: str = ""  # the active selector (typed, or a quick filter's), said before matches
    read_only: bool = False  # the workspace is open read-only: no commands
    waiting: int = 0  # items in the document screen's escalation inbox
    writing: bool = False  # playing at live: every step appends an advance to the context
    path: str = ""  # the workspace file, as people read it (``display_path``)
    verified: str = ""  # when its checkpoints were last deep-verified (``deep_verified``)
    # -- filter and follow --
    following: bool = False  # follow mode: the active turn is kept in view
    filtered: tuple[int, int] | None = None  # filter mode: (matches, rows shown)
    # -- the keys the line names (those in force: the user may have rebound them) --
    live_key: str = "}"
    documents_key: str = "2"


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
                f"   {status.pending} new {noun} · {status.live_key} returns to live",
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
            _Part(
                f"   ⚑ {status.waiting} waiting ({status.documents_key})",
                "bold $error",
                f" ⚑{status.waiting}",
                4,  # another screen's news: said shorter first, before this screen's own
            )
        )
    if status.matches:
        matches = visible(status.matches)
        if status.selector:  # which selector the matches are of (the bar may be closed)
            selector = visible(status.selector, limit=60)
            parts.append(_Part(f"   {selector}", "$secondary", "", 3))  # gives way first
        lead = " · " if status.selector else "   "  # (said short, the count goes first)
        parts.append(_Part(f"{lead}{matches}", "$secondary", f" {matches}", 3))
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


# -- the document screen's and the master-log screen's lines ------------------------------------
@dataclass(frozen=True, slots=True)
class DocStatus:
    """What the document screen's line says (``DocumentScreen._derive_status``)."""

    name: str | None = None  # the document shown; None: none
    version: int = 0
    events: int = 0  # the events of the document shown
    live_events: int = 0  # of the live document: more than ``events`` in the past
    past: bool = False
    sections: int = 0  # those the eyes in use may know of
    agents: int = 0
    proposals: int = 0  # open, on the sections those eyes may read
    custodian: str = ""
    read_only: bool = False
    waiting: int = 0  # what waits for a human in the document shown
    viewing_as: str | None = None  # the agent whose eyes the views use
    ahead: str = ""  # how far protocol time is stepped ahead, and what the last step fired
    unreadable: tuple[str, str] | None = None  # (document, why it cannot be shown)
    no_documents: bool = False  # the workspace has none
    # the keys the line names (those in force)
    later_key: str = "]"
    live_key: str = "}"
    back_key: str = "V"


def doc_status_content(status: DocStatus) -> Content:
    if status.unreadable is not None:
        name, why = status.unreadable
        said = visible(f" document {name!r} cannot be shown: {why}")
        return Content.styled(said, "bold $error")
    if status.no_documents:
        return plain("No documents in this workspace yet: make one with `pact-tui doc create`.")
    if status.name is None:
        return Content("")
    past = (
        f"PAST: after event #{status.events - 1} of #{status.live_events - 1}"
        f" ({status.later_key} later, {status.live_key} live) · "
        if status.past
        else ""
    )
    badge = f" · ⚑ {status.waiting} waiting" if status.waiting else ""
    viewing = (
        f" · VIEWING AS {status.viewing_as} ({status.back_key}: back)"
        if status.viewing_as is not None
        else ""
    )
    return plain(
        f" {past}{status.name} · v{status.version} · {status.events} events ·"
        f" {status.sections} sections ·"
        f" {status.agents} agents · {status.proposals} open proposals · as {status.custodian}"
        f"{' · read-only' if status.read_only else ''}{badge}{viewing}{status.ahead}"
    )


@dataclass(frozen=True, slots=True)
class LogStatus:
    """What the master-log screen's line says (``MasterLogScreen._show_status``)."""

    directory: str = ""
    master_lines: int = 0
    logs: int = 0  # views and branches
    verified: bool = False
    references: int = 0
    ok: int = 0
    catalogued: tuple[int, int] = (0, 0)  # (lines catalogued for the search, lines)
    following: bool = False
    next_key: str = "n"


def log_status_content(status: LogStatus) -> Content:
    if not status.directory:
        return Content("")
    problems = status.references - status.ok
    if not status.verified:
        refs = "verifying references…"
    else:
        refs = f"{status.references:,} references: {status.ok:,} ok"
        if problems:
            refs += f", {problems:,} not ok ({status.next_key} walks them)"
    done, total = status.catalogued
    search = f" · search: {done * 100 // total}% catalogued" if done < total else ""
    follow = "FOLLOWING · " if status.following else ""  # first: a narrow terminal cuts the end
    return plain(
        f" {follow}{status.directory} · master {status.master_lines:,} lines · "
        f"{status.logs} views and branches · {refs}{search}"
    )


class LineBar(Static):
    """A screen's one-line (or two) status, drawn from the value bound to ``status``: a
    ``DocStatus`` or a ``LogStatus``."""

    status: reactive[DocStatus | LogStatus | None] = reactive(None)
    """What the line says (bound to the screen's ``status``)."""

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id, markup=False)

    def watch_status(self, status: DocStatus | LogStatus | None) -> None:
        if isinstance(status, DocStatus):
            self.update(doc_status_content(status))
        elif isinstance(status, LogStatus):
            self.update(log_status_content(status))
        else:
            self.update("")
