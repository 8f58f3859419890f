"""The document's v0.3 event stream, oldest first, as the reader sees it (the custodian: all
of it; an agent: through ``engine.protocol.views.redact``), with when, who, what and why, read
lazily: however long the log, only the pages of events in sight are held.

The screen talks to the workspace; this list says which events it lacks (``PagesWanted``: pages
of ``PAGE`` events by sequence number) and draws those it was given (``add_events``). Unfiltered,
its rows are the document's events ``0 … revision-1``; filtered, the screen searches every event
of the log (``EventSearch``, a page of the store's at a time) and the rows are those it kept,
the title saying how many it searched. A filter is words (``engine.protocol.audit.EventFilter``):
``type:proposal`` (the event type contains it), ``agent:legal`` (the actor), ``section:risk``
(the section id); a bare word matches any of those."""

from __future__ import annotations

import bisect
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.text import Text
from textual.binding import BindingType
from textual.geometry import Region
from textual.message import Message
from textual.reactive import var

from engine.protocol.audit import AuditTrail, EventFilter, iso_time
from engine.visible import visible

from ..keymap import bind
from ..text import plain
from ..types import DocShown
from .rows import LazyRows, RowList

__all__ = ["PAGE", "EventFilter", "EventList", "EventRow", "EventSearch", "event_detail"]

Event = Mapping[str, Any]
PAGE = 200  # events asked for at a time: a page of sequence numbers
HELD = 50_000  # events held at most: past it, those held are let go and read again when seen
DETAIL_CHARS = 20_000  # of a payload shown beside the list (Enter shows it whole)


@dataclass(frozen=True, slots=True)
class EventRow:
    key: str  # the event's sequence number
    sequence: int
    at_ms: int
    type: str  # without the "pact." prefix
    actor: str  # its name (actorDisplay)
    who: str  # its kind, from the event's actorKind, then its name: "agent legal", "system"
    section_id: str | None
    payload: str  # the payload as the reader may see it, one line
    why: str = ""  # the reason, justification or reasoning given
    override: bool = False  # a human overriding the protocol
    loading: bool = False  # not read yet: a placeholder until its page comes


@dataclass(frozen=True, slots=True)
class EventSearch:
    """What the screen's search of the whole log found: the events of document ``name`` that
    filter ``wanted`` keeps as ``reader`` (an agent's id; None: the custodian) sees them, of
    the first ``searched``; ``done`` once it searched up to the revision it was asked for."""

    name: str
    wanted: str
    reader: str | None
    found: tuple[int, ...]  # their sequence numbers, oldest first
    searched: int
    done: bool


def event_row(shown: DocShown, event: Event) -> EventRow:
    """One event as the reader sees it."""
    from engine.protocol.model import who
    from engine.protocol.views import redact

    seen = redact(shown.doc, shown.reader, event)
    audit = AuditTrail().row(seen)
    try:
        payload = json.loads(seen["payloadJson"])
    except (TypeError, ValueError):
        payload = seen.get("payloadJson")
    if isinstance(payload, dict):
        payload = {k: v for k, v in payload.items() if k not in ("sectionId", "sectionKey")}
    return EventRow(
        key=str(seen["sequenceNumber"]),
        sequence=seen["sequenceNumber"],
        at_ms=seen["epochMs"],
        type=seen["eventType"].removeprefix("pact."),
        actor=seen.get("actorDisplay") or "",
        who=who(seen.get("actorDisplay") or "", seen.get("actorKind") or ""),
        section_id=seen.get("sectionId"),
        payload=json.dumps(payload, ensure_ascii=False, sort_keys=True),
        why=audit.why,
        override=audit.override,
    )


def _waiting(sequence: int) -> EventRow:
    return EventRow(str(sequence), sequence, 0, "", "", "", None, "", loading=True)


def event_detail(shown: DocShown, event: Event | None, *, whole: bool = False) -> Text:
    """One event, as the reader sees it: when (UTC), who, what, on which section and what, why,
    whether it overrode the protocol, then its whole payload (beside the list: its first
    ``DETAIL_CHARS`` characters unless ``whole``)."""
    from engine.protocol.views import redact

    if event is None:
        return Text("No event under the cursor (or it is being read).", style="dim")
    seen = redact(shown.doc, shown.reader, event)
    row = AuditTrail().row(seen)
    data = _payload(seen.get("payloadJson"))
    subject = row.subject
    agent = shown.doc.agents.get(str(data.get("agentId"))) if "agentId" in data else None
    if agent is not None and row.type.startswith("agent."):
        subject = agent.name  # the trail names an agent by its join: the document knows it
    text = Text()
    text.append(f"event #{row.sequence} · {visible(row.type)}\n", "bold")
    if row.override:
        text.append("⚑ override: a human overriding the protocol or its policy\n", "bold")
    fields = [
        ("when", f"{iso_time(row.at_ms)} (UTC)"),
        ("who", f"{row.who} ({row.actor_kind or 'unknown kind'})"),
        ("actor id", str(seen.get("actorId") or "")),
        ("section", row.section or ""),
        ("on", subject),
        ("why", row.why),
        ("detail", "(withheld from this reader)" if row.withheld else row.detail),
        ("event id", str(seen.get("id") or "")),
    ]
    for label, value in fields:
        if value:
            text.append(f"{label}: ", "bold")
            text.append(visible(value) + "\n")
    body = json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True, default=str)
    more = len(body) - DETAIL_CHARS
    if not whole and more > 0:
        body = body[:DETAIL_CHARS]
    text.append("\npayload:\n", "bold")
    text.append(visible(body, multiline=True))
    if not whole and more > 0:
        text.append(f"\n… {more:,} more characters (Enter: the whole payload)", "dim")
    return text


def _payload(text: object) -> dict[str, Any]:
    from engine.protocol.audit import read_payload

    return read_payload(text)


class _Rows(LazyRows[EventRow]):
    """The rows of the events ``sequences``, made from those the list holds."""

    def __init__(self, events: EventList, sequences: Sequence[int]) -> None:
        self.events = events
        self.sequences = sequences

    def __len__(self) -> int:
        return len(self.sequences)

    def make(self, index: int) -> EventRow:
        return self.events.row_of(self.sequences[index])


class EventList(RowList[DocShown, EventRow]):
    """One line per event: its number, time (UTC), type, actor (its kind, from the event, then
    its name: ``agent legal``, ``human carol``, ``system``), section, ⚑ if it overrode the
    protocol, then why (or its payload)."""

    DEFAULT_CSS = """
    EventList { border: round $panel; border-title-color: $text-muted; }
    EventList:focus { border: round $accent; }
    EventList > .rows--cursor { background: $accent 40%; }
    EventList > .rows--cursor-blurred { background: $accent 20%; }
    EventList > .rows--dim { color: $text-muted; }
    EventList > .rows--warn { color: $warning; }
    EventList > .rows--alert { color: $error; text-style: bold; }
    EventList > .rows--good { color: $success; }
    """
    BORDER_TITLE: ClassVar[str] = "events"
    BINDINGS: ClassVar[list[BindingType]] = [
        bind("filter", "ask_filter", "Filter", tooltip="filter by type:, agent:, section:"),
        bind("export", "export", "Export", tooltip="write the audit trail to a file"),
    ]

    event_filter: var[str] = var("")
    """What the rows are filtered by (bound to the screen's)."""
    event_search: var[EventSearch | None] = var(None)
    """What the screen's search for the filter found so far (bound to the screen's)."""

    class FilterAsked(Message):
        """The user wants to change the filter."""

    class ExportAsked(Message):
        """The user wants the audit trail written to a file."""

    class PagesWanted(Message):
        """The list lacks the events of these pages (``PAGE`` sequence numbers each, the
        first at ``page * PAGE``) of document ``name``: the screen reads them
        (``add_events``)."""

        def __init__(self, name: str, pages: tuple[int, ...]) -> None:
            super().__init__()
            self.name = name
            self.pages = pages

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self._held: dict[int, Event] = {}  # the events read, by sequence number
        self._made: dict[int, EventRow] = {}  # the custodian's rows made, by sequence number
        self._held_of: str | None = None  # the document they are of
        self._asked: dict[int, int] = {}  # page → the revision it was asked for at
        self._wanted: set[int] = set()  # pages to ask for once this frame is drawn
        self._drawn: tuple[Any, ...] | None = None  # what the rows were made from

    def show_now(self) -> None:
        shown = self.shown
        # The rows do not depend on the clock: a tick that moved only ``now_ms`` redraws nothing.
        drawn = None if shown is None else (shown.name, shown.revision, shown.reader)
        if drawn != self._drawn:
            self.refill()

    def watch_event_filter(self) -> None:
        self.refill()

    def watch_event_search(self) -> None:
        self.refill()

    # -- the events held --------------------------------------------------------------------
    def _hold_for(self, name: str) -> None:
        if self._held_of != name:
            self._held, self._made, self._asked, self._held_of = {}, {}, {}, name

    def add_events(self, name: str, events: Sequence[Event]) -> None:
        """Events of document ``name`` the screen read: drawn where their rows are."""
        self._hold_for(name)
        if len(self._held) + len(events) > HELD:
            self._held, self._made, self._asked = {}, {}, {}
        for event in events:
            self._held[event["sequenceNumber"]] = event
        self.refresh()
        self.announce()  # the row under the cursor may be the one that came

    def event(self, sequence: int) -> Event | None:
        """The event ``sequence`` of the document shown, if the list holds it."""
        shown = self.shown
        return self._held.get(sequence) if shown and self._held_of == shown.name else None

    def row_of(self, sequence: int) -> EventRow:
        """The row of event ``sequence``: a placeholder (its page asked for) until it is read."""
        shown = self.shown
        assert shown is not None
        self._hold_for(shown.name)
        if shown.reader is None:
            made = self._made.get(sequence)
            if made is not None:
                return made
        event = self._held.get(sequence)
        if event is None:
            page = sequence // PAGE
            if self._asked.get(page, -1) < shown.revision:
                if not self._wanted:
                    self.call_after_refresh(self._ask)
                self._wanted.add(page)
            return _waiting(sequence)
        row = event_row(shown, event)
        if shown.reader is None:  # an agent's rows are redacted afresh, through its barriers
            self._made[sequence] = row
        return row

    def ask_now(self) -> None:
        """Ask now for the pages of the screenful at the cursor (the newest rows, where the list
        opens), not once they have been drawn as placeholders: the read is on its way while
        the first frame is drawn (the screen calls it as it shows the list)."""
        rows = self.rows
        if not isinstance(rows, _Rows) or not len(rows):
            return
        last = self.cursor_line
        for line in {last, max(0, last - max(self.size.height, 1))}:
            rows.make(line)  # a row not yet read has its page wanted
        self._ask()

    def _ask(self) -> None:
        shown = self.shown
        wanted, self._wanted = self._wanted, set()
        if shown is None or not wanted:
            return
        for page in wanted:
            self._asked[page] = shown.revision
        self.post_message(self.PagesWanted(shown.name, tuple(sorted(wanted))))

    # -- the rows ---------------------------------------------------------------------------
    def _sequences(self, shown: DocShown) -> Sequence[int]:
        if not self.event_filter.strip():
            return range(shown.revision)
        search = self.event_search
        reader = shown.reader.id if shown.reader is not None else None
        if search is None or (search.name, search.wanted, search.reader) != (
            shown.name,
            self.event_filter,
            reader,
        ):
            return ()  # the search is on its way
        return search.found

    def rows_of(self, shown: DocShown) -> Sequence[EventRow]:
        self._drawn = (shown.name, shown.revision, shown.reader)
        return _Rows(self, self._sequences(shown))

    def line_of(self, key: str) -> int | None:
        rows = self.rows
        if not isinstance(rows, _Rows) or not key.isdigit():
            return None
        sequences, sequence = rows.sequences, int(key)
        line = bisect.bisect_left(sequences, sequence)
        return line if line < len(sequences) and sequences[line] == sequence else None

    def refill(self) -> None:
        """As ``RowList.refill``, but a cursor on the newest row follows the stream, moved
        there before a row is made (no page is read for a row the cursor only passes)."""
        if len(self.rows) and self.cursor_line < len(self.rows) - 1:
            super().refill()
        else:  # following the stream: stay on the newest
            self.rows = () if self.shown is None else self.rows_of(self.shown)
            self.fit_virtual_size()
            self.set_reactive(EventList.cursor_line, max(0, len(self.rows) - 1))
            self.ask_now()
            self.scroll_to_region(Region(0, self.cursor_line, 1, 1), animate=False, immediate=True)
            self.refresh()
            self.announce()
        self.border_title = plain(self.title())

    def on_resize(self) -> None:
        super().on_resize()
        # Made while hidden (no size, nothing to scroll), the rows are shown at the cursor.
        self.scroll_to_region(Region(0, self.cursor_line, 1, 1), animate=False, immediate=True)

    def title(self) -> str:
        """The list's title: how many events, and with a filter how many it searched."""
        wanted = self.event_filter.strip()
        if not wanted:
            return f"events ({len(self.rows):,})"
        search = self.event_search
        if search is None or search.wanted != self.event_filter:
            return f"events · searching… · {wanted}"
        still = "" if search.done else ", searching…"
        return f"events ({len(search.found):,} of {search.searched:,} searched{still}) · {wanted}"

    def action_ask_filter(self) -> None:
        self.post_message(self.FilterAsked())

    def action_export(self) -> None:
        self.post_message(self.ExportAsked())

    def render_row(self, row: EventRow, width: int) -> list[Segment]:
        dim, warn = self.style_of("rows--dim"), self.style_of("rows--warn")
        if row.loading:
            return [Segment(f"{row.sequence:>6} …", dim)]
        head = [
            (f"{row.sequence:>6} ", dim),
            (f"{_clock(row.at_ms)} ", dim),
            (f"{row.type:<26} ", None),
            (f"{visible(row.who):<16} ", warn),
        ]
        if row.section_id:
            head.append((f"{visible(row.section_id)} ", dim))
        if row.override:
            head.append(("⚑ ", self.style_of("rows--alert")))
        used = sum(cell_len(t) for t, _ in head)
        said = f"why: {row.why}" if row.why else row.payload
        room = max(0, width - used)
        # Escaped up to what fits (a payload may be megabytes: this runs for every line drawn).
        body = set_cell_size(visible(said, limit=room + 1), room)
        return [*(Segment(t, s) for t, s in head), Segment(body, None if row.why else dim)]


def _clock(epoch_ms: int) -> str:
    """When, in UTC, to the second: ``03-01 09:30:00`` (the detail says the year and ms)."""
    try:
        return datetime.fromtimestamp(epoch_ms / 1000, UTC).strftime("%m-%d %H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return f"{epoch_ms:>14}"
