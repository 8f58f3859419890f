"""The context tree pane and the provider pane: draw only the lines on screen.

Both show a :class:`TreeLayout` of a context view: the tree with turn and slot headers, the
provider rendering as one line per item. They keep a cursor on a node, not on a line number, so
the selection stays put while ODI pushes turns deeper under it.

Every string from the workspace on a row (keys, tags, types, roles, ids, content) is shown
:func:`~engine.visible.visible`, one line each; a row reads a line's worth of an item's content
(``Item.text_head``), whatever its size.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.geometry import Region
from textual.message import Message
from textual.reactive import reactive, var
from textual.strip import Strip

from engine.context import ContextView
from engine.context.nodes import Item
from engine.context.tree import provider_role
from engine.visible import visible
from engine.workspace import SnapshotEntry

from ..provider import ProviderTotals, char_count, provider_totals, token_estimate
from ..tree_layout import Row, TreeLayout
from ..types import Mark, ProviderChanges, RowKind, Shown
from .cursor import CursorPane

BADGES = {
    "permanent": ("PERM", "tree--permanent"),
    "temporary": ("TEMP", "tree--temporary"),
    "sticky": ("STCK", "tree--sticky"),
    "cyclic": ("CYCL", "tree--cyclic"),
}
BAR_WIDTH = 4
ROW_LIMIT = 400  # characters of a key, a tag or a role a row reads (no pane is wider)
ROLES = ("system", "user", "assistant")  # each has a style (provider--<role>)


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
    """The start of an item's content on one line (newlines as ⏎), at most ``width``
    characters; as it is, for the caller to quote or make visible."""
    # A newline becomes three characters, so the first `width + 1` say all a preview shows
    # (and whether there is more).
    text = item.text_head(width + 1).replace("\n", " ⏎ ")
    return text if len(text) <= width else text[: width - 1] + "…"


class LinePane(CursorPane):
    """A scrolling list of layout rows with a cursor that sticks to its node.

    Given what to show (``shown``, bound to the screen's) and how to mark rows (``marks``); says
    which row the cursor is on (``Highlighted``) and which one Enter or a click chose
    (``Selected``).
    """

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

    TITLE: ClassVar[str] = "lines"  # what the pane's border names, before "· live"

    shown: var[Shown | None] = var(None)
    """The view drawn (bound to the screen's): live, or a snapshot's."""
    marks: reactive[Mapping[str, Mark]] = reactive(dict, repaint=True)
    """Rows to highlight, by node id: the diff's changes and the selector's matches."""

    class Highlighted(Message):
        """The row under the cursor is now ``row`` (None when the pane is empty): the cursor
        moved, or what it is on changed."""

        def __init__(self, pane: LinePane, row: Row | None) -> None:
            super().__init__()
            self.pane = pane
            self.row = row

        @property
        def control(self) -> LinePane:
            return self.pane

    class Selected(Message):
        """Enter, or a click on the cursor's line, chose ``row``."""

        def __init__(self, pane: LinePane, row: Row) -> None:
            super().__init__()
            self.pane = pane
            self.row = row

        @property
        def control(self) -> LinePane:
            return self.pane

    def __init__(self, *, headers: bool, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.layout_model = TreeLayout(headers=headers)
        self._anchor: Anchor | None = None
        self._highlighted: Row | None = None  # the row last announced by Highlighted
        self._behind = False  # hidden when ``shown`` changed: not laid out yet (watch_shown)
        self._base_style: Style | None = None  # rich_style walks the DOM: once per CSS change

    def notify_style_update(self) -> None:
        self._base_style = None
        super().notify_style_update()

    # -- data in ----------------------------------------------------------------------------
    @property
    def view(self) -> ContextView | None:
        return self.shown.view if self.shown is not None else None

    def watch_shown(self, old: Shown | None, new: Shown | None) -> None:
        if new is None or (old is not None and old.name != new.name):
            self._forget()  # folds and the cursor's node belong to the context they were for
        if new is None:
            return
        self.border_title = Content(f"{self.TITLE} · {_when(new.entry)}")  # never markup
        # A hidden pane (the provider view, most of the time) lays out what it shows only when
        # it is shown: at 100,000 items that is a tenth of a second off the app's start.
        self._behind = not self.display
        if not self._behind:
            self._lay_out(new)

    def catch_up(self) -> None:
        """Lay out what the pane shows, if that waited while the pane was hidden."""
        if self._behind and self.shown is not None:
            self._behind = False
            self._lay_out(self.shown)

    def on_show(self) -> None:
        self.catch_up()

    def _lay_out(self, new: Shown) -> None:
        self.layout_model.sync(new.view)
        self.fit_virtual_size()
        line = self._find_anchor(new.view)
        if line is not None:
            self.cursor_line = line
        else:
            self.cursor_line = self.cursor_line  # the layout may have shrunk: clamp it again
        self.announce()
        self.refresh()

    def _forget(self) -> None:
        self.layout_model.forget()
        self._anchor = None
        self.cursor_line = 0

    def jump_to(self, line: int) -> None:
        """Move the cursor to ``line`` and scroll it to the middle of the pane."""
        self.cursor_line = line
        self.scroll_to_region(
            Region(0, self.cursor_line, 1, 1), animate=False, center=True, immediate=True
        )

    def reveal(self, depth: int, position: int | None) -> None:
        """Unfold what hides the node at ``depth`` (and its slot at ``position``)."""
        self.layout_model.reveal(depth, position)
        self.fit_virtual_size()
        self.refresh()

    @property
    def current_row(self) -> Row | None:
        count = self.layout_model.line_count
        return self.layout_model.row(self.cursor_line) if 0 <= self.cursor_line < count else None

    @property
    def line_count(self) -> int:
        return self.layout_model.line_count

    def announce(self) -> None:
        """Post Highlighted when the row under the cursor is another row than last said (the
        cursor moved, or a change rebuilt the row: another item, or the same one changed)."""
        row = self.current_row
        self._anchor = _anchor_of(row) if row is not None else None
        if row != self._highlighted or row is None:
            self._highlighted = row
            self.post_message(self.Highlighted(self, row))

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

    def select_cursor(self) -> None:
        row = self.current_row
        if row is not None:
            self.activate(row)
            self.post_message(self.Selected(self, row))

    def activate(self, row: Row) -> None:
        """What Enter or a click on the cursor's line does here, besides saying Selected."""

    # -- drawing ------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        line = y + int(self.scroll_offset.y)
        width = self.size.width
        if self._base_style is None:
            self._base_style = self.rich_style
        base = self._base_style
        if self.shown is None or not 0 <= line < self.layout_model.line_count:
            return Strip.blank(width, base)
        row = self.layout_model.row(line)
        # The row's own colours sit on the pane's background; a mark (diff, match) and the
        # cursor are laid over them, across the whole width.
        over = Style()
        mark = self.marks.get(row.node_id)
        if mark is not None:
            over += self.background_of(f"tree--{mark}")
        if line == self.cursor_line:
            over += self.background_of("tree--cursor" if self.has_focus else "tree--cursor-blurred")
        segments = [
            # A part with a background of its own (a lifecycle badge) keeps it under a mark.
            Segment(
                text,
                base + style + over if style is None or style.bgcolor is None else base + style,
                control,
            )
            for text, style, control in self.render_row(row, self.shown.view)
        ]
        # The scrollbar covers the last column when the pane scrolls: a row ends before it.
        room = self.scrollable_content_region.width
        return _fitted(Strip(segments), room, base + over).crop_extend(0, width, base).simplify()

    def render_row(self, row: Row, view: ContextView) -> list[Segment]:
        raise NotImplementedError  # each pane draws its own rows

    def background_of(self, component: str) -> Style:
        """Only the background (blended over the pane's) and the text style of a component:
        laid over a row, it must not repaint the row's own colours."""
        full = self.get_component_rich_style(component)
        partial = self.style_of(component)
        return Style(bgcolor=full.bgcolor, bold=partial.bold, italic=partial.italic)


def _fitted(strip: Strip, width: int, style: Style) -> Strip:
    """``strip`` at ``width`` cells: a row too long for the pane ends with ``…`` (a glyph
    the edge would cut in half is left out whole), a short one is padded with ``style``."""
    if strip.cell_length > width >= 1:
        cut = strip.crop(0, width - 1)
        last = next((s.style for s in reversed(list(cut)) if s.text), None) or style
        return Strip([*cut, Segment("…", last)], width)
    return strip.crop_extend(0, width, style)


def _when(entry: SnapshotEntry | None) -> str:
    if entry is None:
        return "live"
    return f"PAST · snapshot {visible(entry.id)} · episode {entry.episode} · read-only"


def _anchor_of(row: Row) -> Anchor:
    position = row.slot.position if row.slot is not None else None
    return Anchor(row.node_id, row.kind, row.depth, position, row.offset)


class ContextTree(LinePane):
    """The whole tree: coordinates, type, key, tags, lifecycle badge, TTL bar, next
    rehydration and render stage per item; turns and slots fold."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "select_cursor", "Fold or unfold", show=False),
        Binding("left,h", "fold", "Fold, or go to the slot", show=False),
        Binding("right,l", "unfold", "Unfold", show=False),
    ]
    TITLE = "context tree"

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

    def activate(self, row: Row) -> None:
        """Enter (or space, or a second click) folds or unfolds a turn or a slot."""
        if row.kind != "item":
            self._toggle(row)

    def _toggle(self, row: Row) -> None:
        self.layout_model.toggle(row)
        self.fit_virtual_size()
        self.refresh()

    def action_fold(self) -> None:
        """Fold the turn or slot under the cursor; on an item, go to its slot's header."""
        row = self.current_row
        if row is None:
            return
        if row.kind == "item":
            assert row.slot is not None
            line = self.layout_model.line_of(row.depth, row.slot.position)
            if line is not None:
                self.cursor_line = line
        elif not row.collapsed:
            self._toggle(row)

    def action_unfold(self) -> None:
        row = self.current_row
        if row is not None and row.kind != "item" and row.collapsed:
            self._toggle(row)

    def fold_history(self) -> None:
        """Fold every history turn; the system region and the active turn stay open."""
        self._fold_all(folded=True)

    def unfold_all(self) -> None:
        self._fold_all(folded=False)

    def _fold_all(self, *, folded: bool) -> None:
        self.layout_model.set_all(folded)
        self.fit_virtual_size()
        line = self._find_anchor(self.view) if self.view is not None else None
        self.cursor_line = line if line is not None else self.cursor_line
        self.announce()
        self.refresh()

    def render_row(self, row: Row, view: ContextView) -> list[Segment]:
        s = self.style_of
        if row.kind in ("system", "turn"):
            glyph = "▸ " if row.collapsed else "▾ "
            turn = row.turn
            count = turn.item_count()
            if row.kind == "system":
                title, style = "system  d-1", s("tree--system")
            else:
                where = "active" if row.depth == 0 else "history"
                role = visible(turn.role or "no message", limit=40)
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
        # As wide as the deepest turn's coordinates need, and never less than one space after.
        width = max(11, len(str(view.history_depth)) + 8)
        out = [
            Segment("    "),
            Segment(f"{coords:<{width - 1}} ", s("tree--coords")),
            Segment(f"{visible(item.node_type[:6])} ", s("tree--type")),
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
        # A row is as wide as the pane: a key or a tag is never read further than a row shows.
        if item.key is not None:
            out.append(Segment(f"#{visible(item.key, limit=ROW_LIMIT)} ", s("tree--key")))
        for tag in item.tags[:ROW_LIMIT]:
            out.append(Segment(f"+{visible(tag, limit=ROW_LIMIT)} ", s("tree--tag")))
        quoted = json.dumps(preview(item), ensure_ascii=False)  # a JSON string, made visible
        out.append(Segment(visible(quoted), s("tree--content")))
        return out


class ProviderList(LinePane):
    """What the model would be sent at this episode: one line per message, in order, with its
    coordinates, its size (characters, and an estimate of tokens: ``pact_tui.provider``) and a
    mark when it was added (``+``) or changed (``~``) since the episode before; the totals on
    the pane's lower border."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "provider--system",
        "provider--user",
        "provider--assistant",
        "provider--added",
        "provider--changed",
        "provider--size",
        "provider--coords",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Select", show=False),
    ]
    TITLE = "provider rendering"

    changes: var[ProviderChanges | None] = var(None)
    """The messages added or changed since the episode before the one shown (bound to the
    screen's ``provider_changes``); None: nothing to compare with (yet)."""

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(headers=False, name=name, id=id)
        self.totals: ProviderTotals | None = None
        """How much the view laid out sends (worked out when it is laid out)."""

    def _lay_out(self, new: Shown) -> None:
        super()._lay_out(new)
        self.totals = provider_totals(new.view)
        self._say_totals()

    def watch_changes(self) -> None:
        self._say_totals()
        self.refresh()

    def _say_totals(self) -> None:
        said = [self.totals.describe()] if self.totals is not None else []
        if self.changes is not None:
            said.append(self.changes.describe())
        self.border_subtitle = Content(" · ".join(said))  # never markup

    def render_row(self, row: Row, view: ContextView) -> list[Segment]:
        item = row.item
        assert item is not None and row.slot is not None
        s = self.style_of
        role = provider_role(row.depth, item.role, row.turn.role)
        style = f"provider--{role}" if role in ROLES else "provider--user"
        glyph, glyph_style = " ", s("tree--dim")
        changes = self.changes
        if changes is not None and item.id in changes.added:
            glyph, glyph_style = "+", s("provider--added")
        elif changes is not None and item.id in changes.changed:
            glyph, glyph_style = "~", s("provider--changed")
        coords = f"({row.depth},{row.slot.position},{row.offset})"
        width = max(9, len(str(view.history_depth)) + 7)  # (-1,0,0) … (12345,1,-1)
        chars = char_count(item)
        # The sizes line up: as wide as the largest message's (the totals know it).
        largest = self.totals.largest if self.totals is not None else chars
        wide, tokens_wide = len(f"{largest:,}"), len(f"~{token_estimate(largest):,}")
        tokens = f"~{token_estimate(chars):,}"
        size = f"{chars:>{wide},} ch {tokens:>{tokens_wide}} tok "
        return [
            Segment(f"{glyph} ", glyph_style),
            Segment(f"{coords:<{width}} ", s("provider--coords")),
            Segment(f"{visible(role, limit=ROW_LIMIT):<10}", s(style)),
            Segment(size, s("provider--size")),
            Segment("│ ", s("tree--dim")),
            Segment(visible(preview(item, 400)), s("tree--content")),
        ]
