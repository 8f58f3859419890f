"""The agents of a document: trust, clearance, organisation, what they care about (salience),
when they were last heard from and how long until they are evicted, and whether they are done.

Keys act on the agent under the cursor (``AgentRoster.Act``): the screen asks for the new
level and the reason, and runs ``trust``, ``clearance`` or ``remove`` as the custodian."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import BindingType
from textual.message import Message

from engine.visible import visible

from ..doc_time import duration
from ..keymap import bind
from ..server.activity import KeyActivity
from ..types import DocShown
from .outline import countdown
from .rows import RowList

AgentAction = Literal["trust", "clearance", "disclosure", "remove"]


@dataclass(frozen=True, slots=True)
class AgentRow:
    key: str  # the agent's id
    name: str
    role: str | None
    trust: str
    clearance: str | None
    organisation: str | None
    salience_sections: int  # sections it set a salience on (that the reader sees)
    salience_max: int | None  # the highest it set, None: none set
    last_seen_ms: int
    evict_at_ms: int | None  # None: gone already
    gone: str | None  # "left", "evicted", "removed"
    done: str | None  # its completion status


def agent_rows(shown: DocShown) -> list[AgentRow]:
    """Every agent that joined, the joined ones first (registration order), as the reader
    sees them: salience is summed over the sections the reader may see."""
    from engine.protocol.barriers import sees
    from engine.protocol.model import EVICT_AFTER_S

    doc, reader = shown.doc, shown.reader
    seen = {s.key for s in doc.sections if sees(doc, reader, s)}
    scores: dict[str, list[int]] = {}
    for (agent_id, key), score in doc.salience.items():
        if key in seen:
            scores.setdefault(agent_id, []).append(score)
    rows = []
    agents = sorted(doc.agents.values(), key=lambda a: (not a.active, a.order))
    for agent in agents:
        mine = scores.get(agent.id, [])
        rows.append(
            AgentRow(
                key=agent.id,
                name=agent.name,
                role=agent.role,
                trust=agent.trust,
                clearance=agent.clearance,
                organisation=agent.organisation,
                salience_sections=len(mine),
                salience_max=max(mine) if mine else None,
                last_seen_ms=agent.last_seen_ms,
                evict_at_ms=agent.last_seen_ms + EVICT_AFTER_S * 1000 if agent.active else None,
                gone=agent.gone,
                done=agent.completion[0] if agent.completion else None,
            )
        )
    return rows


class AgentRoster(RowList[DocShown, AgentRow]):
    """One line per agent: name and role, trust, clearance and organisation, salience,
    last heartbeat, eviction countdown, completion."""

    DEFAULT_CSS = """
    AgentRoster { border: round $panel; border-title-color: $text-muted; }
    AgentRoster:focus { border: round $accent; }
    AgentRoster > .rows--cursor { background: $accent 40%; }
    AgentRoster > .rows--cursor-blurred { background: $accent 20%; }
    AgentRoster > .rows--dim { color: $text-muted; }
    AgentRoster > .rows--warn { color: $warning; }
    AgentRoster > .rows--alert { color: $error; text-style: bold; }
    AgentRoster > .rows--good { color: $success; }
    """
    BORDER_TITLE: ClassVar[str] = "agents"
    BINDINGS: ClassVar[list[BindingType]] = [
        bind("trust", "act('trust')", "Trust", tooltip="change the agent's trust level"),
        bind("clearance", "act('clearance')", "Clearance", tooltip="set the agent's clearance"),
        bind(
            "disclosure", "act('disclosure')", "Disclosure", tooltip="what it sees of constraints"
        ),
        bind(
            "remove-agent", "act('remove')", "Remove", tooltip="remove the agent from the document"
        ),
    ]

    class Act(Message):
        """The user asked for ``action`` on the agent ``row``."""

        def __init__(self, roster: AgentRoster, action: AgentAction, row: AgentRow) -> None:
            super().__init__()
            self.roster = roster
            self.action = action
            self.row = row

        @property
        def control(self) -> AgentRoster:
            return self.roster

    def rows_of(self, shown: DocShown) -> Sequence[AgentRow]:
        return agent_rows(shown)

    def action_act(self, action: Any) -> None:
        row = self.current_row
        if row is not None:
            self.post_message(self.Act(self, action, row))

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.widths: dict[str, int] = {}  # each column's: the widest text it holds (refill)

    def refill(self) -> None:
        now = self.shown.now_ms if self.shown is not None else 0
        super().refill()
        # Each column as wide as the widest text it holds, over every row (not only those in
        # sight: the columns stay put as the list scrolls).
        widths: dict[str, int] = {}
        for row in self.rows:
            for column, (text, _) in agent_cells(row, now).items():
                widths[column] = max(widths.get(column, 0), cell_len(text))
        self.widths = widths

    def render_row(self, row: AgentRow, width: int) -> list[Segment]:
        now = self.shown.now_ms if self.shown is not None else 0
        tones: dict[str, Style | None] = {
            c: self.style_of(f"rows--{c}") for c in ("dim", "warn", "alert", "good")
        }
        tones[""] = None
        cells = agent_cells(row, now)
        kept = fitted(self.widths, width)
        segments: list[Segment] = []
        for column in COLUMNS:
            if column not in kept:
                continue
            text, tone = cells.get(column, ("", ""))
            size = kept[column]
            shown = set_cell_size(text, size)
            if column == "name":
                segments.append(Segment(shown, tones["dim"] if row.gone else None))
            else:
                segments.append(Segment(GAP + shown, tones[tone]))
        return segments


# The roster's columns, left to right, and the order they give way in when the pane is narrow:
# the name first and whole, then trust and clearance, then whether it is still there and when it
# is evicted; the rest as room allows.
COLUMNS = ("name", "trust", "clearance", "organisation", "salience", "seen", "evict", "done")
PRIORITY = ("name", "trust", "clearance", "seen", "evict", "salience", "organisation", "done")
GAP = "  "


def fitted(widths: dict[str, int], width: int) -> dict[str, int]:
    """The columns that fit in ``width``, each at its width: the name whole (or cut to the pane
    if it alone is wider), then the others in ``PRIORITY`` while they fit whole."""
    kept = {"name": min(widths.get("name", 0), max(1, width))}
    used = kept["name"]
    for column in PRIORITY[1:]:
        size = widths.get(column, 0)
        if size and used + len(GAP) + size <= width:
            kept[column] = size
            used += len(GAP) + size
    return kept


def agent_cells(row: AgentRow, now: int) -> dict[str, tuple[str, str]]:
    """A row's text in each column, and how it reads (a tone of the list, "": plain)."""
    role = f" ({visible(row.role)})" if row.role else ""
    cells = {
        "name": (f"{visible(row.name)}{role}", ""),
        "trust": (row.trust, ""),
        "clearance": ((visible(row.clearance), "warn") if row.clearance else ("uncleared", "dim")),
        "organisation": (visible(row.organisation or ""), "dim"),
        "salience": (
            ("S-", "dim")
            if row.salience_max is None
            else (f"S{row.salience_max}/{row.salience_sections}§", "dim")
        ),
    }
    if row.gone is not None:
        cells["seen"] = (row.gone, "alert")
    else:
        cells["seen"] = (f"seen {countdown(now, row.last_seen_ms)} ago", "dim")
        if row.evict_at_ms is not None:
            left = row.evict_at_ms - now
            tone = "warn" if left < 60_000 else "dim"
            cells["evict"] = (f"evict {countdown(row.evict_at_ms, now)}", tone)
    if row.done is not None:
        cells["done"] = (f"done: {row.done}", "good")
    return cells


DETAIL_LISTED = 20  # proposals and keys listed in the detail; the rest are counted


def agent_detail(
    shown: DocShown, agent_id: str | None, activity: Mapping[str, KeyActivity] | None = None
) -> Text:
    """What the custodian reads about one agent, beside the roster: who it is, the sections it
    set a salience on, its proposals (newest first), the locks it holds and its idempotency
    keys; only what the reader may read (viewing as an agent: through its barriers). For an
    agent that joined over HTTP, ``activity`` (what the servers on the workspace heard, by key
    hash: ``pact_tui.server.activity``) gives its key's label and its last request."""
    from engine.protocol.barriers import reads
    from engine.protocol.model import who

    doc = shown.doc
    agent = doc.agents.get(agent_id) if agent_id is not None else None
    text = Text()
    if agent is None:
        text.append("No agent selected.", style="dim")
        return text
    readable = {s.key for s in doc.sections if reads(doc, shown.reader, s)}
    role = f" ({visible(agent.role)})" if agent.role else ""
    text.append(f"{visible(who(agent.name, 'AiAgent'))}{role}\n", "bold")
    clearance = visible(agent.clearance) if agent.clearance else "uncleared"
    org = f" · {visible(agent.organisation)}" if agent.organisation else ""
    state = agent.gone or "on the document"
    text.append(f"{agent.trust} · {clearance}{org} · {agent.mode} · {state}\n")
    if agent.key_hash is not None:  # joined over HTTP (pact-tui serve): its key's id
        # Its writes and heartbeats date it (a read heartbeats once a minute at most).
        seen = duration(max(0, shown.now_ms - agent.last_seen_ms) // 1000)
        key = f"key {visible(agent.key_hash[:12])}" + (
            "" if agent.active else " (dead: agent gone)"
        )
        text.append(f"over HTTP · {key} · last seen {seen} ago\n", "dim")
        heard = (activity or {}).get(agent.key_hash)
        if heard is not None:  # a server on this workspace heard it (its file beside it)
            ago = duration(max(0, shown.now_ms - heard.last_request_ms) // 1000)
            label = visible(heard.label)
            text.append(f"key label {label} · last request {ago} ago\n", "dim")
    if agent.completion is not None:
        status, note = agent.completion
        text.append(f"done: {status}{f' ({visible(note)})' if note else ''}\n", "dim")
    sections = [
        (doc.by_key[key], score)
        for (owner, key), score in doc.salience.items()
        if owner == agent.id and key in readable and key in doc.by_key
    ]
    sections.sort(key=lambda pair: doc.positions.get(pair[0].key, 0))
    text.append(f"\nSections ({len(sections)}):\n", "bold")
    for section, score in sections:
        text.append(f"  S{score} {visible(section.title or section.id)} ({visible(section.id)})\n")
    theirs = [
        doc.proposals[pid]
        for pid in reversed(doc.by_author.get(agent.id, []))
        if doc.proposals[pid].section in readable
    ]
    text.append(f"\nProposals ({len(theirs)}):\n", "bold")
    for proposal in theirs[:DETAIL_LISTED]:
        section = doc.by_key[proposal.section]
        summary = f": {visible(proposal.summary)}" if proposal.summary else ""
        title = visible(section.title or section.id)
        text.append(f"  {proposal.status:<9} {proposal.id[-6:]} {title}{summary}\n")
    if len(theirs) > DETAIL_LISTED:
        text.append(f"  … {len(theirs) - DETAIL_LISTED:,} more\n", "dim")
    locks = [
        s
        for s in doc.sections
        if s.lock is not None and s.lock.holder == agent.id and s.key in readable
    ]
    text.append(f"\nLocks ({len(locks)}):\n", "bold")
    for section in locks:
        lock = section.lock
        until = (
            f" for {countdown(lock.until_ms, shown.now_ms)}"
            if lock is not None and lock.until_ms is not None
            else ""
        )
        text.append(f"  {visible(section.title or section.id)} ({visible(section.id)}){until}\n")
    keys = [key for owner, key in doc.idempotency if owner == agent.id]
    text.append(f"\nIdempotency keys ({len(keys)}):\n", "bold")
    for key in keys[-DETAIL_LISTED:]:
        text.append(f"  {visible(key)}\n", "dim")
    if len(keys) > DETAIL_LISTED:
        text.append(f"  … {len(keys) - DETAIL_LISTED:,} older\n", "dim")
    text.rstrip()
    return text
