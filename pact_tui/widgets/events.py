"""The document's v0.3 event stream, newest last, as the reader sees it (the custodian: all of
it; an agent: through ``engine.protocol.views.redact``), filtered by type, agent and section.

The screen reads the events from the workspace and binds them (``events``); this list only
filters and draws them. A filter is words: ``type:proposal`` (the event type contains it),
``agent:legal`` (the actor), ``section:risk`` (the section id); a bare word matches any of
those."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import var

from engine.visible import visible

from ..text import plain
from ..types import DocShown
from .rows import RowList

Event = Mapping[str, Any]


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


@dataclass(frozen=True, slots=True)
class EventFilter:
    types: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()
    words: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> EventFilter:
        parts: dict[str, list[str]] = {"type": [], "agent": [], "section": [], "": []}
        for word in text.lower().split():
            field, _, value = word.partition(":")
            if value and field in parts:
                parts[field].append(value)
            else:
                parts[""].append(word)
        return cls(
            tuple(parts["type"]), tuple(parts["agent"]), tuple(parts["section"]), tuple(parts[""])
        )

    def keeps(self, row: EventRow) -> bool:
        kind, actor, section = row.type.lower(), row.actor.lower(), (row.section_id or "").lower()
        if self.types and not any(t in kind for t in self.types):
            return False
        if self.agents and not any(a == actor for a in self.agents):
            return False
        if self.sections and not any(s in section for s in self.sections):
            return False
        return all(w in kind or w in actor or w in section for w in self.words)


def event_rows(
    shown: DocShown,
    events: Sequence[Event],
    wanted: str,
    made: dict[int, EventRow] | None = None,
) -> list[EventRow]:
    """The events as rows, filtered. ``made``: the custodian's rows made before, by sequence
    number (an event never changes, and the custodian sees it whole), filled as it goes."""
    keep = EventFilter.parse(wanted)
    rows = []
    for event in events:
        row = made.get(event["sequenceNumber"]) if made is not None else None
        if row is None:
            row = event_row(shown, event)
            if made is not None:
                made[row.sequence] = row
        if keep.keeps(row):
            rows.append(row)
    return rows


def event_row(shown: DocShown, event: Event) -> EventRow:
    """One event as the reader sees it."""
    from engine.protocol.model import who
    from engine.protocol.views import redact

    seen = redact(shown.doc, shown.reader, event)
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
    )


class EventList(RowList[DocShown, EventRow]):
    """One line per event: its number, type, actor (its kind, from the event, then its name:
    ``agent legal``, ``human carol``, ``system``), section, then its payload."""

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
        Binding("f", "ask_filter", "Filter", tooltip="filter by type:, agent:, section:"),
    ]

    events: var[tuple[Event, ...]] = var(())
    """The events the screen read, oldest first (bound to the screen's)."""
    event_filter: var[str] = var("")
    """What the rows are filtered by (bound to the screen's)."""

    class FilterAsked(Message):
        """The user wants to change the filter."""

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self._made: dict[int, EventRow] = {}  # the custodian's rows, by sequence number
        self._made_of: str | None = None  # the document they are of
        self._drawn: tuple[Any, ...] | None = None  # what the rows were made from

    def watch_shown(self) -> None:
        shown = self.shown
        # The rows do not depend on the clock: a tick that moved only ``now_ms`` redraws nothing.
        drawn = None if shown is None else (shown.name, shown.revision, shown.reader)
        if drawn != self._drawn:
            self.refill()

    def watch_events(self) -> None:
        self.refill()

    def watch_event_filter(self) -> None:
        self.refill()

    def rows_of(self, shown: DocShown) -> Sequence[EventRow]:
        self._drawn = (shown.name, shown.revision, shown.reader)
        if shown.reader is not None:  # an agent's view: redacted afresh, through its barriers
            return event_rows(shown, self.events, self.event_filter)
        if self._made_of != shown.name:
            self._made, self._made_of = {}, shown.name
        return event_rows(shown, self.events, self.event_filter, self._made)

    def refill(self) -> None:
        at_end = self.cursor_line >= len(self.rows) - 1
        super().refill()
        if at_end:  # following the stream: stay on the newest
            self.cursor_line = len(self.rows) - 1
        wanted = f" · {self.event_filter}" if self.event_filter else ""
        self.border_title = plain(f"events ({len(self.rows)}){wanted}")

    def action_ask_filter(self) -> None:
        self.post_message(self.FilterAsked())

    def render_row(self, row: EventRow, width: int) -> list[Segment]:
        dim, warn = self.style_of("rows--dim"), self.style_of("rows--warn")
        head = [
            (f"{row.sequence:>5} ", dim),
            (f"{row.type:<28} ", None),
            (f"{visible(row.who):<16} ", warn),
        ]
        if row.section_id:
            head.append((f"{visible(row.section_id)} ", dim))
        used = sum(cell_len(t) for t, _ in head)
        body = set_cell_size(visible(row.payload), max(0, width - used))
        return [*(Segment(t, s) for t, s in head), Segment(body, dim)]
