"""The agents of a document: trust, clearance, organisation, what they care about (salience),
when they were last heard from and how long until they are evicted, and whether they are done.

Keys act on the agent under the cursor (``AgentRoster.Act``): the screen asks for the new
level and the reason, and runs ``trust``, ``clearance`` or ``remove`` as the custodian."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.message import Message

from engine.visible import visible

from ..types import DocShown
from .outline import countdown
from .rows import RowList

AgentAction = Literal["trust", "clearance", "remove"]


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
        Binding("T", "act('trust')", "Trust", tooltip="change the agent's trust level"),
        Binding("L", "act('clearance')", "Clearance", tooltip="set the agent's clearance"),
        Binding("X", "act('remove')", "Remove", tooltip="remove the agent from the document"),
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

    def render_row(self, row: AgentRow, width: int) -> list[Segment]:
        now = self.shown.now_ms if self.shown is not None else 0
        dim, warn, alert, good = (
            self.style_of(f"rows--{c}") for c in ("dim", "warn", "alert", "good")
        )
        role = f" ({visible(row.role)})" if row.role else ""
        marks: list[tuple[str, Style | None]] = [(f" {row.trust}", None)]
        clearance = visible(row.clearance) if row.clearance else "uncleared"
        marks.append((f" · {clearance}", warn if row.clearance else dim))
        if row.organisation:
            marks.append((f" · {visible(row.organisation)}", dim))
        if row.salience_max is None:
            marks.append((" · S-", dim))
        else:
            marks.append((f" · S{row.salience_max}/{row.salience_sections}§", dim))
        if row.gone is not None:
            marks.append((f" · {row.gone}", alert))
        else:
            marks.append((f" · seen {countdown(now, row.last_seen_ms)} ago", dim))
            if row.evict_at_ms is not None:
                left = row.evict_at_ms - now
                marks.append(
                    (f" · evict {countdown(row.evict_at_ms, now)}", warn if left < 60_000 else dim)
                )
        if row.done is not None:
            marks.append((f" · done: {row.done}", good))
        right = sum(cell_len(text) for text, _ in marks)
        left_text = set_cell_size(f"{visible(row.name)}{role}", max(1, width - right - 1)).rstrip()
        return [
            Segment(left_text, dim if row.gone else None),
            Segment(" " * max(1, width - cell_len(left_text) - right)),
            *(Segment(text, style) for text, style in marks),
        ]
