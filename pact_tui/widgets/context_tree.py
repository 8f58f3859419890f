"""The context tree pane and the provider pane: draw only the lines on screen.

Both show a :class:`TreeLayout` of a context view: the tree with turn and slot headers, the
provider rendering as one line per item. They keep a cursor on a node, not on a line number, so
the selection stays put while ODI pushes turns deeper under it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from engine.context import ContextView
from engine.context.nodes import Item
from engine.context.tree import provider_role

from ..tree_layout import Row, TreeLayout
from ..types import Mark, RowKind

BADGES = {
    "permanent": ("PERM", "tree--permanent"),
    "temporary": ("TEMP", "tree--temporary"),
    "sticky": ("STCK", "tree--sticky"),
    "cyclic": ("CYCL", "tree--cyclic"),
}
BAR_WIDTH = 4


@dataclass(frozen=True, slots=True)
class Anchor:
    """What the cursor is on: a node id, and where it was, to find it again after a change."""

    node_id: str
    kind: RowKind
    depth: int
    position: int | None
    offset: int | None


def ttl_bar(remaining: int, ttl: int) -> str:
    """``▰▰▰▱▱▱``: the share of its life an item has left."""
    if ttl <= 0:
        return "▱" * BAR_WIDTH
    filled = max(0, min(BAR_WIDTH, round(BAR_WIDTH * remaining / ttl)))
    return "▰" * filled + "▱" * (BAR_WIDTH - filled)


def preview(item: Item, width: int = 200) -> str:
    text = item.text().replace("\n", " ⏎ ")
    return text if len(text) <= width else text[: width - 1] + "…"


class LinePane(ScrollView, can_focus=True):
    """A scrolling list of layout rows with a cursor that sticks to its node."""

    # The cursor and the marks, shared by both panes (Textual merges these down the classes).
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "tree--cursor",
        "tree--cursor-blurred",
        "tree--dim",
        "tree--content",
        "tree--added",
        "tree--removed",
        "tree--changed",
        "tree--match",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home,g", "edge(0)", "Top", show=False),
        Binding("end,G", "edge(1)", "Bottom", show=False),
    ]

    cursor: reactive[int] = reactive(0, always_update=True, repaint=False)

    class Selected(Message):
        """The cursor moved to ``row`` (None when the view is empty)."""

        def __init__(self, pane: LinePane, row: Row | None) -> None:
            super().__init__()
            self.pane = pane
            self.row = row

        @property
        def control(self) -> LinePane:
            return self.pane

    def __init__(self, *, headers: bool, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.layout_model = TreeLayout(headers=headers)
        self.view: ContextView | None = None
        self.marks: dict[str, Mark] = {}
        self._anchor: Anchor | None = None
        self._base_style: Style | None = None  # rich_style walks the DOM: once per CSS change

    def notify_style_update(self) -> None:
        self._base_style = None
        super().notify_style_update()

    # -- data in ----------------------------------------------------------------------------
    def show(self, view: ContextView, marks: dict[str, Mark] | None = None) -> None:
        """Display ``view`` (the same live context again, or another state)."""
        self.view = view
        if marks is not None:
            self.marks = marks
        self.layout_model.sync(view)
        self._fit_virtual_size()
        line = self._find_anchor(view)
        self._set_cursor(line if line is not None else self.cursor, scroll=line is not None)
        self.refresh()

    def forget(self) -> None:
        """Drop the layout, folds and cursor anchor: another context is about to be shown."""
        self.layout_model.forget()
        self._anchor = None
        self.view = None
        self.cursor = 0

    def jump_to(self, line: int) -> None:
        self._set_cursor(line, scroll=True, center=True)

    @property
    def current_row(self) -> Row | None:
        count = self.layout_model.line_count
        return self.layout_model.row(self.cursor) if 0 <= self.cursor < count else None

    # -- the cursor -------------------------------------------------------------------------
    def _set_cursor(self, line: int, *, scroll: bool = True, center: bool = False) -> None:
        count = self.layout_model.line_count
        line = max(0, min(line, count - 1))
        previous = self._anchor
        self.cursor = line
        row = self.current_row
        self._anchor = _anchor_of(row) if row is not None else None
        if scroll and row is not None:
            self.scroll_to_region(
                Region(0, line, 1, 1), animate=False, center=center, immediate=True
            )
        if self._anchor != previous or row is None:
            self.post_message(self.Selected(self, row))

    def _find_anchor(self, view: ContextView) -> int | None:
        anchor, layout = self._anchor, self.layout_model
        if anchor is None:
            return None
        if anchor.kind in ("turn", "system") and anchor.depth == 0:
            return layout.line_of_turn(0)  # on the active turn: follow it as messages arrive
        if anchor.kind == "item":
            live = view.live()  # a snapshot never changes: its items stay where they were
            found = live.find(anchor.node_id) if live is not None else None
            if found is not None and found.depth is not None and found.position is not None:
                return layout.line_of(found.depth, found.position, found.offset)
            assert anchor.position is not None
            return layout.line_of(anchor.depth, anchor.position, anchor.offset)
        if anchor.kind == "slot":
            assert anchor.position is not None
            return layout.line_of(anchor.depth, anchor.position)
        return layout.line_of_turn(anchor.depth)

    def action_cursor(self, step: int) -> None:
        self._set_cursor(self.cursor + step)

    def action_page(self, direction: int) -> None:
        self._set_cursor(self.cursor + direction * max(1, self.scrollable_content_region.height))

    def action_edge(self, end: int) -> None:
        self._set_cursor(self.layout_model.line_count - 1 if end else 0)

    async def _on_click(self, event: events.Click) -> None:
        at = event.get_content_offset(self)  # under the border: None on the border itself
        if at is None:
            return
        line = at.y + int(self.scroll_offset.y)
        if 0 <= line < self.layout_model.line_count:
            if line == self.cursor:
                self.activate()
            self._set_cursor(line, scroll=False)

    def activate(self) -> None:
        """Enter or a click on the selected line."""

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh_lines(old)
        self.refresh_lines(new)

    # -- drawing ------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        line = y + int(self.scroll_offset.y)
        width = self.size.width
        if self._base_style is None:
            self._base_style = self.rich_style
        base = self._base_style
        if not 0 <= line < self.layout_model.line_count:
            return Strip.blank(width, base)
        row = self.layout_model.row(line)
        # The row's own colours sit on the pane's background; a mark (diff, match) and the
        # cursor are laid over them, across the whole width.
        over = Style()
        mark = self.marks.get(row.node_id)
        if mark is not None:
            over += self.background_of(f"tree--{mark}")
        if line == self.cursor:
            over += self.background_of("tree--cursor" if self.has_focus else "tree--cursor-blurred")
        segments = [
            # A part with a background of its own (a lifecycle badge) keeps it under a mark.
            Segment(
                text,
                base + style + over if style is None or style.bgcolor is None else base + style,
                control,
            )
            for text, style, control in self.render_row(row)
        ]
        return Strip(segments).crop_extend(0, width, base + over).simplify()

    def render_row(self, row: Row) -> list[Segment]:
        raise NotImplementedError  # each pane draws its own rows

    def style_of(self, component: str) -> Style:
        return self.get_component_rich_style(component, partial=True)

    def background_of(self, component: str) -> Style:
        """Only the background (blended over the pane's) and the text style of a component:
        laid over a row, it must not repaint the row's own colours."""
        full = self.get_component_rich_style(component)
        partial = self.style_of(component)
        return Style(bgcolor=full.bgcolor, bold=partial.bold, italic=partial.italic)

    def on_resize(self) -> None:
        self._fit_virtual_size()

    def _fit_virtual_size(self) -> None:
        """The scrollable extent: one line per laid-out row, at the pane's width."""
        self.virtual_size = Size(self.size.width, self.layout_model.line_count)


def _anchor_of(row: Row) -> Anchor:
    position = row.slot.position if row.slot is not None else None
    return Anchor(row.node_id, row.kind, row.depth, position, row.offset)


class ContextTree(LinePane):
    """The whole tree: coordinates, type, key, tags, lifecycle badge, TTL bar, next
    rehydration and render stage per item; turns and slots fold."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "toggle_fold", "Fold or unfold", show=False),
        Binding("left,h", "fold(1)", "Fold, or go to the slot", show=False),
        Binding("right,l", "fold(0)", "Unfold", show=False),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "tree--turn",
        "tree--system",
        "tree--slot",
        "tree--coords",
        "tree--type",
        "tree--key",
        "tree--tag",
        "tree--permanent",
        "tree--temporary",
        "tree--sticky",
        "tree--cyclic",
        "tree--bar",
        "tree--stage",
    }

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(headers=True, name=name, id=id)

    def activate(self) -> None:
        self.action_toggle_fold()

    def action_toggle_fold(self) -> None:
        row = self.current_row
        if row is None or row.kind == "item":
            return
        self.layout_model.toggle(row)
        self._fit_virtual_size()
        self.refresh()

    def action_fold(self, fold: int) -> None:
        row = self.current_row
        if row is None:
            return
        if row.kind == "item":
            if fold:  # left on an item goes to its slot's header
                assert row.slot is not None
                line = self.layout_model.line_of(row.depth, row.slot.position)
                if line is not None:
                    self._set_cursor(line)
            return
        if row.collapsed != bool(fold):
            self.action_toggle_fold()

    def fold_all(self, folded: bool) -> None:
        self.layout_model.set_all(folded)
        if self.view is not None:
            self.show(self.view)

    def render_row(self, row: Row) -> list[Segment]:
        s = self.style_of
        view = self.view
        assert view is not None
        if row.kind in ("system", "turn"):
            glyph = "▸ " if row.collapsed else "▾ "
            turn = row.turn
            count = turn.item_count()
            if row.kind == "system":
                title, style = "system  d-1", s("tree--system")
            else:
                where = "active" if row.depth == 0 else "history"
                role = turn.role or "no message"
                title, style = f"turn d{row.depth}  {role} · {where}", s("tree--turn")
            return [
                Segment(glyph, style),
                Segment(title, style),
                Segment(f"   {count} item{'s' if count != 1 else ''}", s("tree--dim")),
            ]
        if row.kind == "slot":
            assert row.slot is not None
            glyph = "▸ " if row.collapsed else "▾ "
            label = "message" if row.slot.position == 0 else "slot"
            size = len(row.slot.items)
            return [
                Segment("  " + glyph, s("tree--slot")),
                Segment(f"({row.depth},{row.slot.position}) {label}", s("tree--slot")),
                Segment(f"   {size}", s("tree--dim")),
            ]
        return self._item_segments(row, view)

    def _item_segments(self, row: Row, view: ContextView) -> list[Segment]:
        s = self.style_of
        item = row.item
        assert item is not None and row.slot is not None
        coords = f"({row.depth},{row.slot.position},{row.offset})"
        badge, badge_style = BADGES[item.kind]
        out = [
            Segment("    "),
            Segment(f"{coords:<11}", s("tree--coords")),
            Segment(f"{item.node_type[:6]} ", s("tree--type")),
            Segment(badge, s(badge_style)),
            Segment(" "),
        ]
        # Timers only where an item has them: most items are permanent, and the content is
        # worth more than a column of blanks.
        episode = view.current_episode
        if item.ttl is not None:
            remaining = item.ttl - (episode - item.born_episode)
            out.append(Segment(ttl_bar(remaining, item.ttl), s("tree--bar")))
            out.append(Segment(f" {remaining}/{item.ttl} ", s("tree--dim")))
        template = view.template_of(item)
        if template is not None:
            out.append(Segment(f"↻{template.next_after(episode)} ", s("tree--cyclic")))
        elif item.lifecycle is not None:
            stages = len(item.lifecycle.stages)
            out.append(Segment(f"§{item.stage + 1}/{stages} ", s("tree--stage")))
        if item.key is not None:
            out.append(Segment(f"#{item.key} ", s("tree--key")))
        for tag in item.tags:
            out.append(Segment(f"+{tag} ", s("tree--tag")))
        out.append(Segment(json.dumps(preview(item), ensure_ascii=False), s("tree--content")))
        return out


class ProviderList(LinePane):
    """What the model would be sent at this episode: one line per entry, in order."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "provider--system",
        "provider--user",
        "provider--assistant",
    }

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(headers=False, name=name, id=id)

    def render_row(self, row: Row) -> list[Segment]:
        item = row.item
        assert item is not None
        role = provider_role(row.depth, item.role, row.turn.role)
        return [
            Segment(f"{role:<10}", self.style_of(f"provider--{role}")),
            Segment("│ ", self.style_of("tree--dim")),
            Segment(preview(item, 400), self.style_of("tree--content")),
        ]
