"""The ICS salience heatmap: agents (rows) x sections (columns), each cell the salience the agent
set on the section, 0-10, coloured from the theme (a ramp of eleven steps from the pane's
``heat--cold`` colour, through ``heat--warm``, to ``heat--hot``: the theme's surface, warning
and error unless a stylesheet says otherwise).

A cell reads ``" 7i"``: the score (``·`` where none is set: the agent reviews at the default),
then a mark: ``i`` an intent, ``c`` a constraint, ``b`` both. A cell is underlined when the agent
shares the section's top salience with another active agent (a tie, broken by registration
order; the section's header ends in ``=``), and its mark is ``▲`` when the agent is invited to
draft it (``views.invited_drafter``). The agents' names and the sections' titles (abbreviated
word by word to the cell: ``abbreviate``; the whole title in the header's tooltip and the
cursor's subtitle) stay in place while the grid scrolls.

Only what is in sight is drawn (the Line API), and only what is in sight is read: a cell's
score comes straight from the engine's index (``Document.salience``), a column's top score and
its invited drafter are worked out the first time the column is drawn after a change, so a grid
of 1,000 agents x 500 sections scrolls, and follows a live document, as fast as a small one.
Only ``min:`` and the sorts by salience read every cell, once per change. The cursor is a cell;
the screen shows that agent's intents and constraints on that section.

The rows and columns are filtered and sorted by ``heat_filter`` (bound to the screen's):
``min:7`` (cells below are blank, rows and columns with none are hidden), ``agent:leg``,
``section:risk`` (a section id or a word of its title, as in every view:
``engine.protocol.filters``), ``sort:name`` or ``sort:total`` (agents by name, or
by their summed salience, highest first; else as they joined), ``sort:max`` (sections by their
top salience; else in document order); ``s`` cycles the agents' order, ``S`` the sections'.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import BindingType
from textual.color import Color
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive, var
from textual.strip import Strip

from engine.protocol.filters import any_section_matches
from engine.visible import visible

from ..keymap import bind
from ..text import plain
from ..types import DocShown
from .cursor import CursorPane

if TYPE_CHECKING:
    from engine.protocol.document import Document
    from engine.protocol.model import Agent, Section

LABEL = 14  # the agents' names column
CELL = 4  # a cell: two digits, a mark, a space
AgentOrder = Literal["joined", "name", "total"]
SectionOrder = Literal["document", "max"]
AGENT_ORDERS: tuple[AgentOrder, ...] = ("joined", "name", "total")
SECTION_ORDERS: tuple[SectionOrder, ...] = ("document", "max")
SORT_WORDS = {"name": "agents", "total": "agents", "max": "sections"}


@dataclass(frozen=True, slots=True)
class HeatFilter:
    """What the heatmap shows, parsed from the words of ``heat_filter``."""

    minimum: int = 0
    agents: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()
    agent_order: AgentOrder = "joined"
    section_order: SectionOrder = "document"

    @classmethod
    def parse(cls, text: str) -> HeatFilter:
        """The filter ``text`` says; ``ValueError`` naming a word it does not understand."""
        minimum, agents, sections = 0, [], []
        agent_order: AgentOrder = "joined"
        section_order: SectionOrder = "document"
        for word in text.split():
            name, _, value = word.partition(":")
            name = name.lower()
            if name == "min" and value.isdigit() and 0 <= int(value) <= 10:
                minimum = int(value)
            elif name == "agent" and value:
                agents.append(value.lower())
            elif name == "section" and value:
                sections.append(value.lower())
            elif name == "sort" and value in ("name", "total"):
                agent_order = "name" if value == "name" else "total"
            elif name == "sort" and value == "max":
                section_order = "max"
            else:
                raise ValueError(
                    f"{word!r}: use min:0-10, agent:…, section:…, sort:name, sort:total or sort:max"
                )
        return cls(minimum, tuple(agents), tuple(sections), agent_order, section_order)


def next_sort(text: str, axis: Literal["agents", "sections"]) -> str:
    """``text`` (a ``heat_filter``) with the next order of ``axis``: agents as they joined, by
    name, by total salience; sections in document order, by top salience. The other words
    stay; a filter that does not parse gets the first order after the default."""
    kept = [
        w for w in text.split() if not (w.startswith("sort:") and SORT_WORDS.get(w[5:]) == axis)
    ]
    try:
        wanted = HeatFilter.parse(text)
    except ValueError:
        wanted = HeatFilter()
    if axis == "agents":
        order: str = AGENT_ORDERS[(AGENT_ORDERS.index(wanted.agent_order) + 1) % 3]
        new = "" if order == "joined" else f"sort:{order}"
    else:
        order = SECTION_ORDERS[(SECTION_ORDERS.index(wanted.section_order) + 1) % 2]
        new = "" if order == "document" else f"sort:{order}"
    return " ".join([*kept, new]).strip()


@dataclass(slots=True)
class Grid:
    """The rows and columns of the heatmap as the reader sees them, and how to read a cell.

    The order of the rows and columns is fixed when the grid is made; a cell is read from the
    document when it is drawn, and a column's top score and invited drafter when the column is
    first drawn (the grid is made anew whenever the document changes)."""

    doc: Document | None = None
    agents: list[Agent] = field(default_factory=list)  # in row order
    sections: list[Section] = field(default_factory=list)  # in column order
    intents: set[tuple[str, int]] = field(default_factory=set)  # (agent id, section key)
    constraints: set[tuple[str, int]] = field(default_factory=set)
    minimum: int = 0
    active: frozenset[str] = frozenset()  # the ids of every joined agent
    tops: dict[int, tuple[int, int]] = field(default_factory=dict)  # key: (top score, how many)
    drafters: dict[int, str | None] = field(default_factory=dict)  # key: the invited agent's id

    def score(self, agent_id: str, key: int) -> int | None:
        """The salience ``agent_id`` set on section ``key`` (None: not set)."""
        return self.doc.salience.get((agent_id, key)) if self.doc is not None else None

    def top(self, key: int) -> tuple[int, int]:
        """The top score set on section ``key`` by a joined agent, and how many share it
        ((0, 0): none set). Every joined agent counts, whatever the filter hides."""
        found = self.tops.get(key)
        if found is None:
            best, many = 0, 0
            if self.doc is not None:
                active = self.active
                for agent_id, score in self.doc.salience_by_section.get(key, {}).items():
                    if agent_id in active:
                        if score > best or many == 0:
                            best, many = score, 1
                        elif score == best:
                            many += 1
            found = self.tops[key] = (best, many)
        return found

    def invited(self, key: int) -> str | None:
        """The id of the agent invited to draft section ``key``, if its intents align."""
        if key in self.drafters:
            return self.drafters[key]
        from engine.protocol.views import invited_drafter

        doc, drafter = self.doc, None
        if doc is not None and key in doc.by_key:
            agent = invited_drafter(doc, doc.by_key[key])
            drafter = agent.id if agent is not None else None
        self.drafters[key] = drafter
        return drafter

    def cell(self, agent_id: str, key: int) -> tuple[str, int | None, bool]:
        """A cell's text, its score (None: not set or below the minimum), and whether it is
        tied at the top of its section."""
        score = self.score(agent_id, key)
        if score is not None and score < self.minimum:
            score = None
        pair = (agent_id, key)
        mark = " "
        if self.invited(key) == agent_id:
            mark = "▲"
        elif pair in self.intents:
            mark = "b" if pair in self.constraints else "i"
        elif pair in self.constraints:
            mark = "c"
        tied = False
        if score is not None:
            top, many = self.top(key)
            tied = many > 1 and score == top
        digits = "·" if score is None else str(score)
        return f"{digits:>2}{mark} ", score, tied


def abbreviate(title: str, width: int) -> str:
    """A section's title in ``width`` cells, word by word: one word is cut (``Budget``:
    ``Bud``), several give their first letters, a number whole (``Part 12 of the plan``:
    ``P12``, ``Risk mitigation``: ``Rm``)."""
    words = title.split()
    if len(words) == 1:
        short = words[0]
    else:
        short = "".join(word if word.isdigit() else word[0] for word in words)
    return set_cell_size(short, width).rstrip() if cell_len(short) > width else short


def column_name(section: Section, width: int) -> str:
    """A column's header: its section's title abbreviated (``abbreviate``), or, for a section
    without one (the text before the first heading), its id."""
    if section.title.strip():
        return abbreviate(visible(section.title), width)
    return set_cell_size(visible(section.id.removeprefix("sec:")), width).rstrip()


def section_name(section: Section) -> str:
    """A section as the header's tooltip and the cursor's subtitle name it: its whole title,
    then its id."""
    return f"{section.title} ({section.id})" if section.title else section.id


def standing(doc: Document, agent_id: str, key: int) -> list[str]:
    """Where the agent stands on section ``key`` among the joined agents: tied at the top
    (with whom), and whether it is invited to draft."""
    from engine.protocol.views import invited_drafter

    said = []
    mine = doc.salience.get((agent_id, key))
    column = doc.salience_by_section.get(key, {})
    scores = {a: v for a, v in column.items() if a in doc.agents and doc.agents[a].active}
    if mine is not None and agent_id in scores and mine == max(scores.values()):
        others = [doc.agents[a].name for a, v in scores.items() if v == mine and a != agent_id]
        if others:
            said.append(f"tied at the top ({mine}) with {', '.join(sorted(others))}")
    section = doc.by_key.get(key)
    drafter = invited_drafter(doc, section) if section is not None else None
    if drafter is not None and drafter.id == agent_id:
        said.append("invited to draft: its intents align and it leads on salience")
    return said


def grid_of(doc: Document, reader: Agent | None, wanted: HeatFilter) -> Grid:
    """The heatmap of ``doc`` as ``reader`` may see it (None: the custodian), filtered and
    sorted as ``wanted`` says. Reads every cell only for ``min:`` and the sorts by salience."""
    from engine.protocol.barriers import reads

    sections = [s for s in doc.sections if reads(doc, reader, s)]
    if wanted.sections:
        sections = [s for s in sections if any_section_matches(wanted.sections, s.id, s.title)]
    everyone = doc.active_agents()
    agents = everyone
    if wanted.agents:
        agents = [a for a in agents if any(w in a.name.lower() for w in wanted.agents)]
    grid = Grid(doc, minimum=wanted.minimum, active=frozenset(a.id for a in everyone))
    keys = {s.key for s in sections}
    for key in keys:
        for intent_id in doc.intents_on.get(key, ()):
            intent = doc.intents[intent_id]
            if intent.status != "Superseded":
                grid.intents.add((intent.author, key))
        for constraint_id in doc.constraints_on.get(key, ()):
            constraint = doc.constraints[constraint_id]
            if not constraint.withdrawn:
                grid.constraints.add((constraint.author, key))
    if wanted.minimum > 0 or wanted.agent_order == "total":
        ids = {a.id for a in agents}
        totals: dict[str, int] = {}
        hot_keys: set[int] = set()
        for key in keys:
            for agent_id, score in doc.salience_by_section.get(key, {}).items():
                if agent_id in ids and score >= wanted.minimum:
                    totals[agent_id] = totals.get(agent_id, 0) + score
                    hot_keys.add(key)
        if wanted.minimum > 0:  # hide the rows and columns left empty
            agents = [a for a in agents if a.id in totals]
            sections = [s for s in sections if s.key in hot_keys]
        if wanted.agent_order == "total":
            agents = sorted(agents, key=lambda a: -totals.get(a.id, 0))
    if wanted.agent_order == "name":
        agents = sorted(agents, key=lambda a: a.name.lower())
    if wanted.section_order == "max":
        sections = sorted(sections, key=lambda s: -grid.top(s.key)[0])
    grid.agents, grid.sections = agents, sections
    return grid


class SalienceHeatmap(CursorPane):
    """Agents x sections, coloured by salience; a cell cursor."""

    DEFAULT_CSS = """
    SalienceHeatmap { border: round $panel; border-title-color: $text-muted; }
    SalienceHeatmap:focus { border: round $accent; }
    SalienceHeatmap > .heat--label { color: $text-muted; }
    SalienceHeatmap > .heat--cursor { background: $accent; color: $text; text-style: bold; }
    SalienceHeatmap > .heat--cold { background: $surface; }
    SalienceHeatmap > .heat--warm { background: $warning; }
    SalienceHeatmap > .heat--hot { background: $error; }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "heat--label",
        "heat--cursor",
        "heat--cold",
        "heat--warm",
        "heat--hot",
    }
    BORDER_TITLE: ClassVar[str] = "salience"
    BINDINGS: ClassVar[list[BindingType]] = [
        bind("left", "column(-1)", "Left", show=False, tooltip="the section before"),
        bind("right", "column(1)", "Right", show=False, tooltip="the next section"),
        bind(
            "first-column", "first_column", "First section", show=False, tooltip="the first column"
        ),
        bind("last-column", "last_column", "Last section", show=False, tooltip="the last column"),
        bind(
            "page-left",
            "page_columns(-1)",
            "Page left",
            show=False,
            tooltip="a screenful of sections back",
        ),
        bind(
            "page-right",
            "page_columns(1)",
            "Page right",
            show=False,
            tooltip="a screenful of sections on",
        ),
        bind("first-cell", "first_cell", "First cell", show=False, tooltip="the top left cell"),
        bind("last-cell", "last_cell", "Last cell", show=False, tooltip="the bottom right cell"),
        bind("filter", "ask_filter", "Filter", tooltip="min:N, agent:…, section:…, sort:…"),
        bind(
            "sort-agents", "cycle_sort('agents')", "Sort", tooltip="agents: as joined, name, total"
        ),
        bind(
            "sort-sections",
            "cycle_sort('sections')",
            "Sort sections",
            show=False,
            tooltip="sections: in document order, by top salience",
        ),
    ]

    shown: var[DocShown | None] = var(None)
    """The document drawn (bound to the screen's)."""
    heat_filter: var[str] = var("")
    """What the grid is filtered and sorted by (bound to the screen's)."""
    cursor_column: reactive[int] = reactive(0, repaint=False)
    """The column the cursor is on."""

    class CellHighlighted(Message):
        """The cursor is on ``agent_id``'s cell of section ``section_key`` (None: no cell)."""

        def __init__(self, heatmap: SalienceHeatmap, cell: tuple[str, int] | None) -> None:
            super().__init__()
            self.heatmap = heatmap
            self.cell = cell

        @property
        def control(self) -> SalienceHeatmap:
            return self.heatmap

    class FilterAsked(Message):
        """The user wants to change the filter."""

    class SortAsked(Message):
        """The user wants the next order of the agents or of the sections."""

        def __init__(self, axis: Literal["agents", "sections"]) -> None:
            super().__init__()
            self.axis = axis

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.grid = Grid()
        self._drawn: tuple[Any, ...] | None = None
        self._ramp: tuple[list[Style], list[Style]] | None = None  # plain, and tied
        self._pane_styles: tuple[Style, Style, Style] | None = None  # base, label, cursor
        self._announced: tuple[str, int] | None = None

    # -- data ------------------------------------------------------------------------------------
    @property
    def line_count(self) -> int:
        return len(self.grid.agents)

    def watch_shown(self) -> None:
        shown = self.shown
        # The grid does not depend on the clock: a tick that moved only ``now_ms`` redraws nothing;
        # hidden behind another view, it is made again when it is shown (``on_show``).
        drawn = None if shown is None else (shown.name, shown.revision, shown.reader)
        same_reader = (
            drawn is not None and self._drawn is not None and (drawn[0::2] == self._drawn[0::2])
        )  # another document or reader is made at once, shown or not
        if drawn != self._drawn and (self.display or not same_reader):
            self.regrid()

    def on_show(self) -> None:
        self.watch_shown()  # what changed while the grid was hidden

    def watch_heat_filter(self) -> None:
        self.regrid()

    def regrid(self) -> None:
        shown = self.shown
        try:
            wanted = HeatFilter.parse(self.heat_filter)
        except ValueError:
            wanted = HeatFilter()  # the screen refused it already
        keep = self.current_cell
        if shown is None:
            self.grid, self._drawn = Grid(), None
        else:
            self.grid = grid_of(shown.doc, shown.reader, wanted)
            self._drawn = (shown.name, shown.revision, shown.reader)
        self.fit_virtual_size()
        if keep is not None:  # the cursor stays on its cell if it is still there
            line = next((n for n, a in enumerate(self.grid.agents) if a.id == keep[0]), None)
            column = next((n for n, s in enumerate(self.grid.sections) if s.key == keep[1]), None)
            if line is not None:
                self.set_reactive(SalienceHeatmap.cursor_line, line)
            if column is not None:
                self.set_reactive(SalienceHeatmap.cursor_column, column)
        self.set_reactive(SalienceHeatmap.cursor_line, self.validate_cursor_line(self.cursor_line))
        self.set_reactive(
            SalienceHeatmap.cursor_column, self.validate_cursor_column(self.cursor_column)
        )
        title = f"salience ({len(self.grid.agents)} agents x {len(self.grid.sections)} sections)"
        self.border_title = plain(title + (f" · {self.heat_filter}" if self.heat_filter else ""))
        self.refresh()
        if self.current_cell != keep:
            self._show_cursor()
        self.announce()

    @property
    def current_cell(self) -> tuple[str, int] | None:
        grid = self.grid
        if 0 <= self.cursor_line < len(grid.agents) and 0 <= self.cursor_column < len(
            grid.sections
        ):
            return grid.agents[self.cursor_line].id, grid.sections[self.cursor_column].key
        return None

    def announce(self) -> None:
        cell = self.current_cell
        grid = self.grid
        if cell is None:
            self.border_subtitle = None
        else:
            agent, section = grid.agents[self.cursor_line], grid.sections[self.cursor_column]
            self.border_subtitle = plain(f"{agent.name} · {section_name(section)}")
        if cell != self._announced or cell is None:
            self._announced = cell
            self.post_message(self.CellHighlighted(self, cell))

    # -- the cursor ------------------------------------------------------------------------------
    def validate_cursor_column(self, column: int) -> int:
        return max(0, min(column, len(self.grid.sections) - 1))

    def watch_cursor_line(self, old: int, new: int) -> None:
        self.refresh_lines(old + 1)  # agent n is drawn at virtual line n + 1, under the header
        self.refresh_lines(new + 1)
        self._show_cursor()
        self.announce()

    def watch_cursor_column(self) -> None:
        self.refresh()  # the header's underline and the cursor's row; a scroll redraws all
        self._show_cursor()
        self.announce()

    def _show_cursor(self) -> None:
        """Scroll so that the cursor's cell is in sight below the header, right of the names."""
        x = self.cursor_column * CELL
        self.scroll_to_region(
            Region(x, self.cursor_line, CELL + LABEL, 2), animate=False, immediate=True
        )

    @property
    def columns_in_sight(self) -> int:
        return max(1, (self.scrollable_content_region.width - LABEL) // CELL)

    def action_column(self, step: int) -> None:
        self.cursor_column += step

    def action_page_columns(self, direction: int) -> None:
        self.cursor_column += direction * self.columns_in_sight

    def action_first_column(self) -> None:
        self.cursor_column = 0

    def action_last_column(self) -> None:
        self.cursor_column = len(self.grid.sections) - 1

    def action_first_cell(self) -> None:
        self.cursor_line, self.cursor_column = 0, 0

    def action_last_cell(self) -> None:
        self.cursor_line = len(self.grid.agents) - 1
        self.cursor_column = len(self.grid.sections) - 1

    def action_ask_filter(self) -> None:
        self.post_message(self.FilterAsked())

    def action_cycle_sort(self, axis: Literal["agents", "sections"]) -> None:
        self.post_message(self.SortAsked(axis))

    def on_mouse_move(self, event: events.MouseMove) -> None:
        """Over the header, the tooltip is the whole title (and id) of the column's section."""
        at = event.get_content_offset(self)
        section = None
        if at is not None and at.y == 0 and at.x >= LABEL:
            column = (at.x - LABEL) // CELL + int(self.scroll_offset.x) // CELL
            if 0 <= column < len(self.grid.sections):
                section = self.grid.sections[column]
        self.tooltip = plain(section_name(section)) if section is not None else None

    async def _on_click(self, event: events.Click) -> None:
        at = event.get_content_offset(self)
        if at is None or at.y == 0 or at.x < LABEL:
            return
        line = at.y - 1 + int(self.scroll_offset.y)
        column = (at.x - LABEL) // CELL + int(self.scroll_offset.x) // CELL
        if 0 <= line < len(self.grid.agents) and 0 <= column < len(self.grid.sections):
            self.cursor_line, self.cursor_column = line, column

    def fit_virtual_size(self) -> None:
        size = Size(LABEL + CELL * len(self.grid.sections), len(self.grid.agents) + 1)
        if size != self.virtual_size:
            self.virtual_size = size
            self._scroll_update(size)

    # -- drawing ---------------------------------------------------------------------------------
    def notify_style_update(self) -> None:
        self._ramp = self._pane_styles = None
        super().notify_style_update()

    def ramp(self) -> tuple[list[Style], list[Style]]:
        """Eleven styles, salience 0 to 10, from the ``heat--cold`` background through
        ``heat--warm`` to ``heat--hot``, each with the text that reads best on it; and the same
        underlined, for a tie (read once per theme)."""
        if self._ramp is None:
            low, mid, high = (
                self.get_component_styles(f"heat--{name}").background
                for name in ("cold", "warm", "hot")
            )
            plain, tied = [], []
            for score in range(11):
                back: Color = (
                    low.blend(mid, score / 5) if score <= 5 else mid.blend(high, (score - 5) / 5)
                )
                style = Style(bgcolor=back.rich_color, color=back.get_contrast_text().rich_color)
                plain.append(style)
                tied.append(style + Style(underline=True))
            self._ramp = (plain, tied)
        return self._ramp

    def pane_styles(self) -> tuple[Style, Style, Style]:
        """The pane's own style, the labels' and the cursor's (read once per theme)."""
        if self._pane_styles is None:
            base = self.rich_style
            label = base + self.get_component_rich_style("heat--label", partial=True)
            cursor = base + self.get_component_rich_style("heat--cursor", partial=True)
            self._pane_styles = (base, label, cursor)
        return self._pane_styles

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base, label_style, cursor = self.pane_styles()
        grid = self.grid
        first = int(self.scroll_offset.x) // CELL
        room = max(0, (width - LABEL) // CELL)
        columns = grid.sections[first : first + room]
        if y == 0:  # the header: the sections' titles, abbreviated to the cell
            segments = [Segment(" " * LABEL, label_style)]
            underlined = label_style + Style(underline=True)
            for at, section in enumerate(columns, start=first):
                _, many = grid.top(section.key)
                name = column_name(section, CELL - 1)
                text = f"{name:<{CELL - 1}}{'=' if many > 1 else ' '}"
                segments.append(
                    Segment(text, underlined if at == self.cursor_column else label_style)
                )
            return Strip(segments).crop_extend(0, width, base)
        line = y - 1 + int(self.scroll_offset.y)
        if not 0 <= line < len(grid.agents):
            return Strip.blank(width, base)
        agent = grid.agents[line]
        name = visible(agent.name)[: LABEL - 1]
        on_row = line == self.cursor_line
        segments = [
            Segment(f"{name:<{LABEL}}", label_style + Style(bold=True) if on_row else label_style)
        ]
        plain, tied_ramp = self.ramp()
        for at, section in enumerate(columns, start=first):
            text, score, tied = grid.cell(agent.id, section.key)
            if on_row and at == self.cursor_column:
                style = cursor
            elif score is None:
                style = label_style
            else:
                style = tied_ramp[score] if tied else plain[score]
            segments.append(Segment(text, style))
        return Strip(segments).crop_extend(0, width, base)
