"""The ICS salience heatmap: agents (rows) x sections (columns), each cell the salience the agent
set on the section, 0-10, coloured from the theme (its surface, then warning, then error).

A cell reads ``" 7i"``: the score (``·`` where none is set: the agent reviews at the default),
then a mark: ``i`` an intent, ``c`` a constraint, ``b`` both. A cell is underlined when the agent
shares the section's top salience with another (a tie, broken by registration order), and its
mark is ``▲`` when the agent is invited to draft it (``views.invited_drafter``). The agents'
names and the sections' ids stay in place while the grid scrolls.

Only what is in sight is drawn (the Line API): a line reads the cells of the columns on screen,
so a grid of 1,000 agents x 500 sections scrolls as fast as a small one. The cursor is a cell
(``HeatmapCursor``); the screen shows that agent's intents and constraints on that section.

The rows and columns are filtered and sorted by ``heat_filter`` (bound to the screen's):
``min:7`` (cells below are blank, rows and columns with none are hidden), ``agent:leg``,
``section:risk``, ``sort:total`` (agents by their summed salience), ``sort:max`` (sections by
their top salience); ``s`` cycles the sorts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.color import Color
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive, var
from textual.strip import Strip

from engine.visible import visible

from ..types import DocShown
from .cursor import CursorPane

if TYPE_CHECKING:
    from engine.protocol.document import Document

LABEL = 14  # the agents' names column
CELL = 4  # a cell: two digits, a mark, a space
SORTS = ("", "sort:total", "sort:max", "sort:total sort:max")


@dataclass(frozen=True, slots=True)
class HeatFilter:
    minimum: int = 0
    agents: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()
    by_total: bool = False
    by_max: bool = False

    @classmethod
    def parse(cls, text: str) -> HeatFilter:
        """The filter ``text`` says; ``ValueError`` naming a word it does not understand."""
        minimum, agents, sections, total, top = 0, [], [], False, False
        for word in text.split():
            name, _, value = word.partition(":")
            name = name.lower()
            if name == "min" and value.isdigit() and 0 <= int(value) <= 10:
                minimum = int(value)
            elif name == "agent" and value:
                agents.append(value.lower())
            elif name == "section" and value:
                sections.append(value.lower())
            elif name == "sort" and value in ("total", "max"):
                total, top = total or value == "total", top or value == "max"
            else:
                raise ValueError(
                    f"{word!r}: use min:0-10, agent:…, section:…, sort:total or sort:max"
                )
        return cls(minimum, tuple(agents), tuple(sections), total, top)


@dataclass(slots=True)
class Grid:
    """The rows and columns of the heatmap as the reader sees them, and the marks."""

    agents: list[Any] = field(default_factory=list)  # Agent records, in row order
    sections: list[Any] = field(default_factory=list)  # Section records, in column order
    scores: dict[tuple[str, int], int] = field(default_factory=dict)
    intents: set[tuple[str, int]] = field(default_factory=set)
    constraints: set[tuple[str, int]] = field(default_factory=set)
    top: dict[int, tuple[int, int]] = field(default_factory=dict)  # key: (top score, how many)
    invited: dict[int, str] = field(default_factory=dict)  # key: the invited drafter's id
    minimum: int = 0

    def cell(self, agent_id: str, key: int) -> tuple[str, int | None, bool]:
        """A cell's text, its score (None: not set or below the minimum), and whether it is
        tied at the top of its section."""
        score = self.scores.get((agent_id, key))
        if score is not None and score < self.minimum:
            score = None
        pair = (agent_id, key)
        mark = " "
        if self.invited.get(key) == agent_id:
            mark = "▲"
        elif pair in self.intents and pair in self.constraints:
            mark = "b"
        elif pair in self.intents:
            mark = "i"
        elif pair in self.constraints:
            mark = "c"
        top, many = self.top.get(key, (0, 0))
        tied = score is not None and many > 1 and score == top
        digits = "·" if score is None else str(score)
        return f"{digits:>2}{mark} ", score, tied


def grid_of(doc: Document, reader: Any, wanted: HeatFilter) -> Grid:
    """The heatmap of ``doc`` as ``reader`` may see it, filtered and sorted as ``wanted`` says."""
    from engine.protocol.barriers import reads
    from engine.protocol.views import invited_drafter

    sections = [s for s in doc.sections if reads(doc, reader, s)]
    if wanted.sections:
        sections = [s for s in sections if any(w in s.id.lower() for w in wanted.sections)]
    agents = doc.active_agents()
    if wanted.agents:
        agents = [a for a in agents if any(w in a.name.lower() for w in wanted.agents)]
    keys = {s.key for s in sections}
    ids = {a.id for a in agents}
    grid = Grid(minimum=wanted.minimum)
    for key in keys:
        column = doc.salience_by_section.get(key, {})
        for agent_id, score in column.items():
            if agent_id in ids:
                grid.scores[(agent_id, key)] = score
        shown = [v for a, v in column.items() if a in ids and v >= wanted.minimum]
        if shown:
            best = max(shown)
            grid.top[key] = (best, shown.count(best))
    for intent in doc.intents.values():
        if intent.section in keys and intent.status != "Superseded":
            grid.intents.add((intent.author, intent.section))
    for constraint in doc.constraints.values():
        if constraint.section in keys and not constraint.withdrawn:
            grid.constraints.add((constraint.author, constraint.section))
    if wanted.minimum > 0:  # hide the rows and columns left empty
        hot = [pair for pair, v in grid.scores.items() if v >= wanted.minimum]
        hot_agents, hot_keys = {a for a, _ in hot}, {key for _, key in hot}
        agents = [a for a in agents if a.id in hot_agents]
        sections = [s for s in sections if s.key in hot_keys]
    if wanted.by_total:
        totals: dict[str, int] = {}
        for (agent_id, _), score in grid.scores.items():
            totals[agent_id] = totals.get(agent_id, 0) + score
        agents = sorted(agents, key=lambda a: -totals.get(a.id, 0))
    if wanted.by_max:
        sections = sorted(sections, key=lambda s: -grid.top.get(s.key, (0, 0))[0])
    for section in sections:
        drafter = invited_drafter(doc, section) if section.key in grid.top else None
        if drafter is not None:
            grid.invited[section.key] = drafter.id
    grid.agents, grid.sections = agents, sections
    return grid


class SalienceHeatmap(CursorPane):
    """Agents x sections, coloured by salience; a cell cursor."""

    DEFAULT_CSS = """
    SalienceHeatmap { border: round $panel; border-title-color: $text-muted; }
    SalienceHeatmap:focus { border: round $accent; }
    SalienceHeatmap > .heat--label { color: $text-muted; }
    SalienceHeatmap > .heat--cursor { background: $accent; color: $text; text-style: bold; }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"heat--label", "heat--cursor"}
    BORDER_TITLE: ClassVar[str] = "salience"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left,h", "column(-1)", "Left", show=False),
        Binding("right,l", "column(1)", "Right", show=False),
        Binding("f", "ask_filter", "Filter", tooltip="min:N, agent:…, section:…, sort:…"),
        Binding("s", "cycle_sort", "Sort", tooltip="agents by total, sections by top salience"),
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
        """The user wants the next sort."""

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.grid = Grid()
        self._drawn: tuple[Any, ...] | None = None
        self._ramp: list[Style] | None = None
        self._pane_styles: tuple[Style, Style, Style] | None = None  # base, label, cursor
        self._announced: tuple[str, int] | None = None

    # -- data ------------------------------------------------------------------------------------
    @property
    def line_count(self) -> int:
        return len(self.grid.agents)

    def watch_shown(self) -> None:
        shown = self.shown
        # The grid does not depend on the clock: a tick that moved only ``now_ms`` redraws nothing.
        drawn = None if shown is None else (shown.name, shown.revision, shown.reader)
        if drawn != self._drawn:
            self.regrid()

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
            rows = [a.id for a in self.grid.agents]
            columns = [s.key for s in self.grid.sections]
            if keep[0] in rows:
                self.set_reactive(SalienceHeatmap.cursor_line, rows.index(keep[0]))
            if keep[1] in columns:
                self.set_reactive(SalienceHeatmap.cursor_column, columns.index(keep[1]))
        self.set_reactive(SalienceHeatmap.cursor_line, self.validate_cursor_line(self.cursor_line))
        self.set_reactive(
            SalienceHeatmap.cursor_column, self.validate_cursor_column(self.cursor_column)
        )
        title = f"salience ({len(self.grid.agents)} agents x {len(self.grid.sections)} sections)"
        self.border_title = title + (f" · {visible(self.heat_filter)}" if self.heat_filter else "")
        self.refresh()
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
        self.border_subtitle = (
            ""
            if cell is None
            else f"{visible(grid.agents[self.cursor_line].name)}"
            f" · {visible(grid.sections[self.cursor_column].id)}"
        )
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
        self.refresh()
        self._show_cursor()
        self.announce()

    def _show_cursor(self) -> None:
        """Scroll so that the cursor's cell is in sight below the header, right of the names."""
        x = self.cursor_column * CELL
        self.scroll_to_region(
            Region(x, self.cursor_line, CELL + LABEL, 2), animate=False, immediate=True
        )

    def action_column(self, step: int) -> None:
        self.cursor_column += step

    def action_ask_filter(self) -> None:
        self.post_message(self.FilterAsked())

    def action_cycle_sort(self) -> None:
        self.post_message(self.SortAsked())

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

    def ramp(self) -> list[Style]:
        """Eleven styles, salience 0 to 10: the theme's surface, through warning, to error."""
        if self._ramp is None:
            variables = self.app.theme_variables
            low = Color.parse(variables.get("surface", "#202020"))
            mid = Color.parse(variables.get("warning", "#c0a000"))
            high = Color.parse(variables.get("error", "#c03030"))
            styles = []
            for score in range(11):
                back = low.blend(mid, score / 5) if score <= 5 else mid.blend(high, (score - 5) / 5)
                styles.append(
                    Style(bgcolor=back.rich_color, color=back.get_contrast_text().rich_color)
                )
            self._ramp = styles
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
        if y == 0:  # the header: the sections' ids, cut to the cell
            segments = [Segment(" " * LABEL, label_style)]
            for at, section in enumerate(columns, start=first):
                _, many = grid.top.get(section.key, (0, 0))
                name = visible(section.id.removeprefix("sec:"))[: CELL - 1]
                text = f"{name:<{CELL - 1}}{'=' if many > 1 else ' '}"
                style = label_style + Style(underline=at == self.cursor_column)
                segments.append(Segment(text, style))
            return Strip(segments).crop_extend(0, width, base)
        line = y - 1 + int(self.scroll_offset.y)
        if not 0 <= line < len(grid.agents):
            return Strip.blank(width, base)
        agent = grid.agents[line]
        name = visible(agent.name)[: LABEL - 1]
        on_row = line == self.cursor_line
        row_label = label_style + Style(bold=on_row)
        segments = [Segment(f"{name:<{LABEL}}", row_label)]
        ramp = self.ramp()
        for at, section in enumerate(columns, start=first):
            text, score, tied = grid.cell(agent.id, section.key)
            if on_row and at == self.cursor_column:
                style = cursor
            elif score is None:
                style = label_style
            else:
                style = ramp[score] + Style(underline=tied)
            segments.append(Segment(text, style))
        return Strip(segments).crop_extend(0, width, base)
