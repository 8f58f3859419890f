"""The context tree pane and the provider pane: draw only the lines on screen.

Both show a :class:`TreeLayout` of a context view: the tree with turn and slot headers, the
provider rendering as one line per item. They keep a cursor on a node, not on a line number, so
the selection stays put while ODI pushes turns deeper under it.

Every string from the workspace on a row (keys, tags, types, roles, ids, content) is shown
:func:`~engine.visible.visible`, one line each; a row reads a line's worth of an item's content
(``Item.text_head``), whatever its size.

During a diff (``comparison``, bound to the screen's) every row gets a column of its own in
front with its change's glyph (``+`` ``−`` ``~``, ``↓``/``↑`` for an item that only moved with
its turn), as well as its colour; a changed row says what changed (``depth 5→6 · ttl 3→2``);
and the items the other side has and this one lacks are drawn as ghost rows where they were.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import BindingType
from textual.content import Content
from textual.geometry import Region
from textual.message import Message
from textual.reactive import reactive, var
from textual.strip import Strip

from engine.context import ContextView
from engine.context.errors import MalformedPackedTurns
from engine.context.nodes import Item, Slot
from engine.context.tree import provider_role
from engine.visible import visible
from engine.workspace import SnapshotEntry

from ..filtered_layout import FilteredLayout
from ..keymap import bind
from ..provider import ProviderLayout, ProviderTotals, char_count, token_estimate
from ..reasons import Reasons
from ..tree_diff import note_of
from ..tree_layout import SYSTEM_SEQ, Row, TreeLayout
from ..types import (
    DIFF_GLYPHS,
    Account,
    Comparison,
    Mark,
    ProviderChanges,
    RowFilter,
    RowKind,
    Shown,
)
from .cursor import CursorPane

BADGES = {
    "permanent": ("PERM", "tree--permanent"),
    "temporary": ("TEMP", "tree--temporary"),
    "sticky": ("STCK", "tree--sticky"),
    "cyclic": ("CYCL", "tree--cyclic"),
}
BAR_WIDTH = 4
# What every glyph and badge a row of the tree draws means (the help page's legend; a row's
# tooltip says the same of its own item with its numbers: ``badge_notes``).
TREE_LEGEND = [
    ("▾  ▸", "an open or a folded turn or slot (Enter, ← and → fold and unfold)"),
    ("system  d-1", "the system region: what the model reads first"),
    ("turn d3  user · history", "a turn: its depth (d0 is the active turn), its message's role"),
    ("(3,1) slot   2", "a slot: depth and position (0 is the message itself), and its items"),
    ("(3,1,0)", "an item's coordinates: depth, position, offset (0 is the slot's core)"),
    ("text", "the item's type (its first six letters)"),
    ("PERM", "permanent: stays until deleted, and follows its message deeper (ODI)"),
    ("TEMP", "temporary: gone when its ttl runs out; keeps its depth as turns arrive"),
    ("STCK", "sticky: renewed every episode (ttl 1, cadence 1), follows its message"),
    ("CYCL", "cyclic: lives ttl episodes, and comes back every cadence episodes"),
    ("▰▰▱▱ 2/4", "life left: 2 of its 4 episodes (ttl); 1/… is gone at the next advance"),
    ("↻e7", "its next fresh instance comes at episode 7 (hover a row: the cadence)"),
    ("§1/2", "render lifecycle: stage 1 of 2 (moves on when its ttl runs out)"),
    ("✓ ok  ✗ shifted", "a reference into a gptme master log: the verifier's verdict (o, J)"),
    ("#key  +tag", "the item's key and tags"),
    ('"Find me…"', "the start of its content (⏎ is a newline, … means more follows)"),
    ("highlighted row", "a selector's match; in a diff, an added, removed or changed item"),
    ("+  −  ~", "in a diff (d): added, removed (struck through, where it was), changed"),
    ("↓  ↑", "in a diff: moved deeper (ODI) or shallower, with its turn"),
    ("depth 1→3 · expired", "in a diff: what changed in the row, and why (from the changelog)"),
    ("step to n64 (e6): …", "the lower border: what the last step did (C: all of it)"),
]
PROVIDER_LEGEND = [
    ("(5,0,0)  user  …", "each message the model is sent, in order: where it is, its role"),
    ("59 ch ~15 tok", "its size: characters, and tokens estimated (about 4 characters each)"),
    ("+  ~", "added, or changed, since the episode before (the lower border counts)"),
]
LIFECYCLE_NAMES = {
    "permanent": "permanent: stays until deleted",
    "temporary": "temporary: gone when its ttl runs out",
    "sticky": "sticky: a fresh instance every episode",
    "cyclic": "cyclic: lives ttl episodes, and comes back on a schedule",
}
ROW_LIMIT = 400  # characters of a key, a tag or a role a row reads (no pane is wider)
ROLES = ("system", "user", "assistant")  # each has a style (provider--<role>)


@dataclass(frozen=True, slots=True)
class Anchor:
    """What the cursor is on: a node id, and where it was, to find it again after a change
    (its turn by ``seq``, which ODI does not change; the item, to name it if it goes)."""

    node_id: str
    kind: RowKind
    depth: int
    position: int | None
    offset: int | None
    seq: int = -1
    item: Item | None = None


@dataclass(frozen=True, slots=True)
class Bookmark:
    """Where a pane's cursor and scroll were, to return there (Esc in the selector bar)."""

    anchor: Anchor | None
    line: int
    scroll_y: float


def ttl_bar(remaining: int, ttl: int) -> str:
    """``▰▰▰▱▱▱``: the share of its life an item has left."""
    if ttl <= 0:
        return "▱" * BAR_WIDTH
    filled = max(0, min(BAR_WIDTH, round(BAR_WIDTH * remaining / ttl)))
    return "▰" * filled + "▱" * (BAR_WIDTH - filled)


def rehydration_mark(next_episode: int) -> str:
    """``↻e7``: the episode of the schedule's next fresh instance (``@e7`` names it too); not
    ``↻7``, which reads as "every 7"."""
    return f"↻e{next_episode}"


def badge_notes(item: Item, view: ContextView) -> list[tuple[str, str]]:
    """What each badge on ``item``'s row says, with its numbers: (the badge, its meaning)."""
    episode = view.current_episode
    badge, _style = BADGES[item.kind]
    notes = [(badge, LIFECYCLE_NAMES[item.kind])]
    if item.ttl is not None:
        remaining = item.ttl - (episode - item.born_episode)
        when = (
            "gone at the next advance"
            if remaining <= 1
            else f"gone at episode {item.born_episode + item.ttl}"
        )
        left = f"{remaining} of its {item.ttl} episode{'s' if item.ttl != 1 else ''} left"
        notes.append((f"{ttl_bar(remaining, item.ttl)} {remaining}/{item.ttl}", f"{left}: {when}"))
    template = view.template_of(item)
    if template is not None:
        following = template.next_after(episode)
        cadence = "every episode" if template.cad == 1 else f"every {template.cad} episodes"
        notes.append(
            (
                rehydration_mark(following),
                f"a fresh instance {cadence}, next at episode {following}",
            )
        )
    elif item.lifecycle is not None:
        stages = len(item.lifecycle.stages)
        last = " (the last)" if item.stage + 1 == stages else ""
        notes.append(
            (
                f"§{item.stage + 1}/{stages}",
                f"render lifecycle: stage {item.stage + 1} of {stages}{last}",
            )
        )
    return notes


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
        "tree--ghost",
        "tree--note",
        "tree--sign-added",
        "tree--sign-removed",
        "tree--sign-changed",
        "tree--sign-moved",
    }

    TITLE: ClassVar[str] = "lines"  # what the pane's border names, before "· live"
    GLYPH_COLUMN: ClassVar[bool] = True  # a diff's glyphs in a column in front (or the pane's own)

    shown: var[Shown | None] = var(None)
    """The view drawn (bound to the screen's): live, or a snapshot's."""
    marks: reactive[Mapping[str, Mark]] = reactive(dict, repaint=True)
    """Rows to highlight, by node id: the selector's matches."""
    comparison: var[Comparison | None] = var(None)
    """The diff shown (bound to the screen's): each row's change, and the ghosts of what the
    view shown lacks; None: no diff."""
    reasons: var[Reasons | None] = var(None)
    """Why the diff's items changed, from the changelogs (bound to the screen's): a changed
    row and a ghost say it; None: not read (yet)."""
    row_filter: var[RowFilter | None] = var(None)
    """Filter mode (bound to the screen's): only these matches' rows; None: every row."""
    following: var[bool] = var(False)
    """Follow mode (bound to the screen's): the cursor stays on the active turn, kept in view
    with the rows after it as the context grows."""

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

    class Vanished(Message):
        """The item under the cursor left the live context (it expired, or was deleted or
        replaced by a fresh instance); the cursor went to the row nearest its place."""

        def __init__(self, pane: LinePane, item: Item, depth: int, position: int, offset: int):
            super().__init__()
            self.pane = pane
            self.item = item
            self.where = (depth, position, offset)  # where it was last seen

        @property
        def control(self) -> LinePane:
            return self.pane

    def __init__(self, *, headers: bool, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.full_layout = TreeLayout(headers=headers)
        self.layout_model: TreeLayout | FilteredLayout = self.full_layout
        """What is drawn: the whole tree, or filter mode's rows."""
        self._filtered_for: RowFilter | None = None  # what the filtered layout was made from
        self._anchor: Anchor | None = None
        self._opening = True  # the first layout of a context: open with the active turn in view
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
            # The live context changed under the cursor (not another context, not the past):
            # if the item it was on is gone, say so.
            grew = old is not None and old.name == new.name and old.live and new.live
            self._lay_out(new, tell=grew)

    def watch_row_filter(self) -> None:
        if not self.display:
            self._behind = True
        elif self.shown is not None:
            self._lay_out(self.shown)

    def watch_following(self, following: bool) -> None:
        if following and self.shown is not None and not self._behind:
            self._follow()

    def watch_comparison(self, comparison: Comparison | None) -> None:
        # The whole tree draws them (filter mode shows its matches only).
        self.full_layout.set_ghosts(comparison.ghosts if comparison is not None else ())
        if self.shown is not None and not self._behind:
            self._lay_out(self.shown)  # the ghosts moved the rows: find the cursor's again
        else:
            self.refresh()

    def watch_reasons(self) -> None:
        self.refresh()

    def catch_up(self) -> None:
        """Lay out what the pane shows, if that waited while the pane was hidden."""
        if self._behind and self.shown is not None:
            self._behind = False
            self._lay_out(self.shown)

    def on_show(self) -> None:
        self.catch_up()

    def prepare(self) -> None:
        """Measure, while the app is idle, the layout of what a hidden pane will show, so that
        showing it measures only the turns written since (the provider view at 100,000 items:
        every turn's messages and sizes counted on the first ``v``, a fifth of a second). The
        rows themselves are made when the pane is shown (``catch_up``)."""
        if self._behind and self.shown is not None:
            self._synced(self.shown.view)

    def _lay_out(self, new: Shown, *, tell: bool = False) -> None:
        if not self._synced(new.view):
            return
        self._choose_layout(new)
        self.fit_virtual_size()
        if self.following:
            self._follow()
            return
        line = self._find_anchor(new.view, tell=tell)
        if line is not None:
            self.cursor_line = line
        else:
            self.cursor_line = self.cursor_line  # the layout may have shrunk: clamp it again
        self.announce()
        self.refresh()
        if self._opening and self.scrollable_content_region.height:
            self._open_at_active_turn()

    def _choose_layout(self, shown: Shown) -> None:
        """The whole tree, or filter mode's rows, made from the filter's matches once they were
        found in this very view (until then, the rows made last)."""
        wanted = self.row_filter
        if wanted is None:
            self.layout_model, self._filtered_for = self.full_layout, None
        elif wanted.shown == shown and wanted is not self._filtered_for:
            self.layout_model = wanted.layout(headers=self.full_layout.headers)
            self._filtered_for = wanted

    def _forget(self) -> None:
        self.full_layout.forget()
        self._anchor = None
        self._opening = True
        self.cursor_line = 0

    def on_resize(self) -> None:  # CursorPane's runs too (Textual calls each class's handler)
        if self._opening and self.shown is not None and not self._behind:
            self._open_at_active_turn()

    def _open_at_active_turn(self) -> None:
        """A context opens with its active turn in view: if d0 is below the first screenful,
        the cursor goes to it (unless it was moved meanwhile)."""
        self._opening = False
        line = self.layout_model.line_of_turn(0)
        height = self.scrollable_content_region.height
        if self.cursor_line == 0 and line is not None and line >= height:
            self._follow()

    # -- follow mode --------------------------------------------------------------------------
    def follow_line(self) -> int:
        """Where follow mode keeps the cursor: the active turn's first row (the last row when
        the filter hides the active turn)."""
        line = self.layout_model.line_of_turn(0)
        return line if line is not None else max(0, self.line_count - 1)

    def _follow(self) -> None:
        """The cursor on the active turn, and as much of it in view as fits (its first row
        always)."""
        line = self.follow_line()
        self.cursor_line = line
        height = max(1, self.scrollable_content_region.height)
        top = max(0, min(line, self.line_count - height))
        self.scroll_to(y=top, animate=False, immediate=True)
        self.announce()
        self.refresh()

    def jump_to(self, line: int) -> None:
        """Move the cursor to ``line`` and scroll it to the middle of the pane."""
        self.cursor_line = line
        self.scroll_to_region(
            Region(0, self.cursor_line, 1, 1), animate=False, center=True, immediate=True
        )

    # -- going to a place, and back ----------------------------------------------------------
    def bookmark(self) -> Bookmark:
        return Bookmark(self._anchor, self.cursor_line, self.scroll_offset.y)

    def return_to(self, mark: Bookmark) -> None:
        """The cursor back on the node it was on (wherever it is now), and, if it is on the
        same line, the scroll as it was."""
        self._anchor = mark.anchor
        view = self.view
        line = self._find_anchor(view) if view is not None and mark.anchor is not None else None
        self.cursor_line = line if line is not None else mark.line
        if self.cursor_line == mark.line:
            self.scroll_to(y=mark.scroll_y, animate=False, immediate=True)
        self.announce()

    def shows_place(self, depth: int, position: int | None, offset: int | None) -> bool:
        """Does the layout drawn have a row for that turn, slot or item (folds aside)?"""
        layout = self.layout_model
        if isinstance(layout, TreeLayout):
            return True  # every node has a row once unfolded
        if position is None:
            return layout.line_of_turn(depth) is not None
        return layout.line_of(depth, position, offset) is not None

    def go_to_place(self, depth: int, position: int | None, offset: int | None) -> bool:
        """The cursor on that turn, slot or item (unfolding what hides it), in the middle of
        the pane; False if the pane has no row near it."""
        self.reveal(depth, position)
        line = self._line_near(depth, position, offset)
        if line is None:
            return False
        self.jump_to(line)
        return True

    def reveal(self, depth: int, position: int | None) -> None:
        """Unfold what hides the node at ``depth`` (and its slot at ``position``)."""
        self.layout_model.reveal(depth, position)
        self.fit_virtual_size()
        self.refresh()

    @property
    def current_row(self) -> Row | None:
        count = self.layout_model.line_count
        return self._row_read(self.cursor_line) if 0 <= self.cursor_line < count else None

    def _synced(self, view: ContextView) -> bool:
        """Bring the layout to ``view``; False if a turn it must measure cannot be read (see
        ``_row_read``): the layout is left empty, not half made (a later key would index past
        its ends), and the screen is told, which shows the context rebuilt from its log."""
        try:
            self.full_layout.sync(view)
        except MalformedPackedTurns as error:
            self.full_layout.forget()
            self._refuse(error)
            return False
        return True

    def _refuse(self, error: MalformedPackedTurns) -> None:
        refuse = getattr(self.screen, "packed_turns_malformed", None)
        if refuse is None:
            raise error
        refuse()

    def _row_read(self, line: int) -> Row | None:
        """The row at ``line`` for a key or the mouse; None if its turn cannot be read (a
        packed turn of a forged checkpoint, or its piece missing). Raised in a handler, that
        would end this pane's message loop (Textual stops a pump whose handler fails): the
        screen is told instead, and shows the context rebuilt from its log. (A frame that
        draws the turn fails to the app, which tells the screen: ``PactApp._handle_exception``.)"""
        try:
            return self.layout_model.row(line)
        except MalformedPackedTurns as error:
            self._refuse(error)
            return None

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

    def _find_anchor(self, view: ContextView, *, tell: bool = False) -> int | None:
        """The line of the node the cursor was on, wherever it is now (an item by its id, a
        turn by its seq: ODI moves them deeper); if it is gone, the row nearest its place (and,
        with ``tell``, a Vanished message); None: keep the cursor's line."""
        anchor = self._anchor
        if anchor is None:
            return None
        if anchor.kind in ("turn", "system") and anchor.depth == 0:
            return self._line_near(0, None, None)  # the active turn: follow it as it changes
        if anchor.kind == "ghost":  # a diff's: where it is drawn, else near its turn
            layout = self.layout_model
            found = layout.line_of_ghost(anchor.node_id) if isinstance(layout, TreeLayout) else None
            if found is not None:
                return found
            ghost_depth = _depth_of_seq(view, anchor.seq)
            return None if ghost_depth is None else self._line_near(ghost_depth, None, None)
        depth = _depth_of_seq(view, anchor.seq)
        turn = view.turn_at(depth) if depth is not None else None
        slot = (
            turn.slots.get(anchor.position)
            if turn is not None and anchor.position is not None
            else None
        )
        if anchor.kind == "item":
            assert anchor.position is not None and anchor.offset is not None
            place = self._item_place(view, anchor, slot)
            if place is not None:
                return self._line_near(*place)
            if tell and anchor.item is not None:
                self.post_message(
                    self.Vanished(self, anchor.item, anchor.depth, anchor.position, anchor.offset)
                )
            if depth is None:
                return None  # its turn went too: the row now at the cursor's line
            if slot is not None and slot.items:  # the item now nearest its offset
                index = max(0, min(slot.core + anchor.offset, len(slot.items) - 1))
                return self._line_near(depth, slot.position, index - slot.core)
            return self._line_near(depth, None, None)
        if depth is None:
            return None
        if anchor.kind == "slot" and slot is not None:
            return self._line_near(depth, slot.position, None)
        return self._line_near(depth, None, None)

    def _item_place(
        self, view: ContextView, anchor: Anchor, slot: Slot | None
    ) -> tuple[int, int, int] | None:
        """Where the anchored item is in ``view`` now, if it is there."""
        live = view.live()
        if live is not None:  # the live context knows every item's place
            found = live.find(anchor.node_id)
            if found is None or found.depth is None or found.position is None:
                return None
            assert found.offset is not None
            return found.depth, found.position, found.offset
        # A snapshot: the item in its turn's slot (ODI moved the turn, not the item in it).
        if slot is not None:
            for index, item in enumerate(slot.items):
                if item.id == anchor.node_id:
                    depth = _depth_of_seq(view, anchor.seq)
                    assert depth is not None
                    return depth, slot.position, index - slot.core
        return None

    def _line_near(self, depth: int, position: int | None, offset: int | None) -> int | None:
        """The line of that node, or of the nearest row shown above it (its slot's header, its
        turn's), or, under the filter, of the next turn shown."""
        layout = self.layout_model
        line = None
        if position is not None and offset is not None:
            line = layout.line_of(depth, position, offset)
        if line is None and position is not None:
            line = layout.line_of(depth, position)
        if line is None:
            line = layout.line_of_turn(depth)
        if line is None and isinstance(layout, FilteredLayout):
            line = layout.nearest_line(depth)
        return line

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
        change = self.row_change(row)
        mark = self.marks.get(row.node_id) or (change if change != "moved" else None)
        if mark is not None:
            over += self.background_of(f"tree--{mark}")
        if line == self.cursor_line:
            over += self.background_of("tree--cursor" if self.has_focus else "tree--cursor-blurred")
        drawn = self.render_row(row, self.shown.view)
        if self.comparison is not None and self.GLYPH_COLUMN:  # in front of every row
            drawn.insert(0, self._glyph(row, change))
        segments = [
            # A part with a background of its own (a lifecycle badge) keeps it under a mark.
            Segment(
                text,
                base + style + over if style is None or style.bgcolor is None else base + style,
                control,
            )
            for text, style, control in drawn
        ]
        # The scrollbar covers the last column when the pane scrolls: a row ends before it.
        room = self.scrollable_content_region.width
        return _fitted(Strip(segments), room, base + over).crop_extend(0, width, base).simplify()

    def row_change(self, row: Row) -> Mark | None:
        """The row's change in the diff shown, if any."""
        comparison = self.comparison
        if comparison is None:
            return None
        if row.ghost is not None:
            return row.ghost.mark
        if row.item is None:
            return None
        return comparison.mark_of(row.item.id, row.turn.seq)

    def _glyph(self, row: Row, change: Mark | None) -> Segment:
        if change is None:
            return Segment("  ")
        glyph = DIFF_GLYPHS[change]
        if change == "moved" and self.comparison is not None and row.item is not None:
            move = self.comparison.diff.change_of(row.item.id, row.turn.seq)
            if move is not None and move.depth is not None and move.depth[1] < move.depth[0]:
                glyph = "↑"  # shallower (a turn before it was removed)
        return Segment(f"{glyph} ", self.style_of(f"tree--sign-{change}"))

    def note_of(self, row: Row) -> str:
        """What changed in the row's item and why, as the row says it: ``stage 1→2 · offset
        1→-1``, ``rehydrated (replaced n57)``; for a ghost, why it is not here (empty:
        nothing, or no diff)."""
        comparison, reasons = self.comparison, self.reasons
        if comparison is None:
            return ""
        ghost = row.ghost
        if ghost is not None:
            why = reasons.reason_of(ghost.id, ghost.mark) if reasons is not None else ""
            said = why or ("gone" if ghost.mark == "removed" else "not yet")
            if not ghost.same_turn and not why:
                said += ", its turn too" if ghost.mark == "removed" else ", nor its turn"
            return said
        if row.item is None:
            return ""
        note = note_of(comparison.diff, row.item.id, row.turn.seq)
        if reasons is None:
            return note
        mark = comparison.mark_of(row.item.id, row.turn.seq)
        why = reasons.reason_of(row.item.id, mark) if mark is not None else ""
        if why == "moved by ODI" and note.startswith("depth"):
            return f"{note} (ODI)"
        return " · ".join(part for part in (why, note) if part)

    def render_row(self, row: Row, view: ContextView) -> list[Segment]:
        raise NotImplementedError  # each pane draws its own rows

    # -- tooltips: what the row under the mouse shows, said in words ------------------------
    _tip_line: int | None = None

    def on_mouse_move(self, event: events.MouseMove) -> None:
        at = event.get_content_offset(self)
        line = None if at is None else at.y + int(self.scroll_offset.y)
        if line == self._tip_line:
            return
        self._tip_line = line
        view = self.view
        if view is None or line is None or not 0 <= line < self.layout_model.line_count:
            self.tooltip = None
        else:
            row = self._row_read(line)
            self.tooltip = self.tooltip_of(row, view) if row is not None else None

    def on_leave(self) -> None:
        self._tip_line = None

    def tooltip_of(self, row: Row, view: ContextView) -> Content | None:
        """What the row's badges and marks mean, for its tooltip."""
        return None

    def ghost_tooltip(self, row: Row) -> Content | None:
        """A diff's ghost row, said in words (None: not a ghost)."""
        ghost, comparison = row.ghost, self.comparison
        if ghost is None or comparison is None:
            return None
        item = ghost.item
        key = f" #{visible(item.key, limit=80)}" if item.key is not None else ""
        if ghost.mark == "removed":
            said = f"in {comparison.older}, gone in {comparison.newer}"
        else:
            said = f"not yet in {comparison.older}, added by {comparison.newer}"
        head = f"{ghost.coordinates} {visible(item.node_type)}{key}"
        return Content(f"{head}\n{DIFF_GLYPHS[ghost.mark]} {said}: drawn where it was")

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
    if row.ghost is not None:
        return Anchor(row.node_id, row.kind, row.depth, row.ghost.position, None, row.turn.seq)
    position = row.slot.position if row.slot is not None else None
    return Anchor(row.node_id, row.kind, row.depth, position, row.offset, row.turn.seq, row.item)


def _depth_of_seq(view: ContextView, seq: int) -> int | None:
    """The depth of the turn ``seq`` in ``view`` (seqs grow towards d0), if it is there."""
    if seq == SYSTEM_SEQ:
        return -1
    deepest = view.history_depth

    def seq_at(depth: int) -> int:
        turn = view.turn_at(depth)
        return -turn.seq if turn is not None else 0

    depth = bisect_left(range(deepest + 1), -seq, key=seq_at)
    turn = view.turn_at(depth) if depth <= deepest else None
    return depth if turn is not None and turn.seq == seq else None


class ContextTree(LinePane):
    """The whole tree: coordinates, type, key, tags, lifecycle badge, TTL bar, next
    rehydration and render stage per item; turns and slots fold."""

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("select", "select_cursor", "Fold or unfold", show=False),
        bind("toggle-fold", "select_cursor", "Fold or unfold", show=False),
        bind("left", "fold", "Fold, or go to the slot", show=False),
        bind("right", "unfold", "Unfold", show=False),
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
        "tree--reference-ok",
        "tree--reference-bad",
    }

    account: var[Account | None] = var(None)
    """What the steps of the position shown did (bound to the screen's): the newest one's
    summary is the pane's lower border, one line updated in place."""

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(headers=True, name=name, id=id)

    badges: var[Mapping[str, str]] = var(dict)
    """The verdicts of the reference items shown (bound to the screen's), by item id: the
    master-log verifier's status, drawn as a badge on the item's row."""

    def watch_badges(self) -> None:
        self.refresh()

    def watch_account(self, account: Account | None) -> None:
        said = account.summary if account is not None else ""
        self.border_subtitle = Content(visible(said))  # never markup

    def activate(self, row: Row) -> None:
        """Enter (or space, or a second click) folds or unfolds a turn or a slot."""
        if row.kind not in ("item", "ghost"):
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
        if row.kind in ("item", "ghost"):
            if row.slot is None:  # a ghost of a slot that is gone: to its turn
                line = self.layout_model.line_of_turn(row.depth)
            else:
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
        if row.ghost is not None:
            return self._ghost_segments(row, view)
        return self._item_segments(row, view)

    def tooltip_of(self, row: Row, view: ContextView) -> Content | None:
        if row.ghost is not None:
            return self.ghost_tooltip(row)
        if row.kind == "item":
            item = row.item
            assert item is not None and row.slot is not None
            key = f" #{visible(item.key, limit=80)}" if item.key is not None else ""
            head = f"({row.depth},{row.slot.position},{row.offset}) {visible(item.node_type)}{key}"
            lines = [head, *(f"{badge}  {meaning}" for badge, meaning in badge_notes(item, view))]
            return Content("\n".join(lines))  # never markup: a key may hold '['
        fold = "folded: Enter or → unfolds" if row.collapsed else "open: Enter or ← folds"
        if row.kind == "slot":
            assert row.slot is not None
            what = "the message" if row.slot.position == 0 else f"slot {row.slot.position}"
            return Content(
                f"({row.depth},{row.slot.position}): {what} of turn d{row.depth}; {fold}"
            )
        if row.kind == "system":
            return Content(f"the system region (d-1), read first; {fold}")
        where = "the active turn" if row.depth == 0 else f"{row.depth} turn(s) back"
        return Content(f"turn d{row.depth}: {where}; {fold}")

    def _coords_width(self, view: ContextView) -> int:
        # As wide as the deepest turn's coordinates need, and never less than one space after.
        return max(11, len(str(view.history_depth)) + 8)

    def _ghost_segments(self, row: Row, view: ContextView) -> list[Segment]:
        """Dimmed and struck through: where it was, what it was; never a target."""
        ghost = row.ghost
        assert ghost is not None
        item, ghost_style = ghost.item, self.style_of("tree--ghost")
        width = self._coords_width(view)
        badge, _ = BADGES[item.kind]
        said = self.note_of(row)
        out = [
            Segment("    "),
            Segment(f"{ghost.coordinates:<{width - 1}} ", ghost_style),
            Segment(f"{visible(item.node_type[:6])} {badge}", ghost_style),
            Segment(f" {said} ", self.style_of("tree--note")),
        ]
        if item.key is not None:
            out.append(Segment(f"#{visible(item.key, limit=ROW_LIMIT)} ", ghost_style))
        out.append(Segment(visible(json.dumps(preview(item), ensure_ascii=False)), ghost_style))
        return out

    def _item_segments(self, row: Row, view: ContextView) -> list[Segment]:
        s = self.style_of
        item = row.item
        assert item is not None and row.slot is not None
        coords = f"({row.depth},{row.slot.position},{row.offset})"
        badge, badge_style = BADGES[item.kind]
        width = self._coords_width(view)
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
            out.append(
                Segment(f"{rehydration_mark(template.next_after(episode))} ", s("tree--cyclic"))
            )
        elif item.lifecycle is not None:
            stages = len(item.lifecycle.stages)
            out.append(Segment(f"§{item.stage + 1}/{stages} ", s("tree--stage")))
        verdict = self.badges.get(item.id)
        if verdict is not None:  # a reference into a gptme master log, as the verifier judged it
            ok = verdict == "ok"
            style = s("tree--reference-ok" if ok else "tree--reference-bad")
            out.append(Segment(f"{'✓' if ok else '✗'} {verdict} ", style))
        note = self.note_of(row)
        if note:
            out.append(Segment(f"{note} ", s("tree--note")))
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
        bind("select", "select_cursor", "Select", show=False),
    ]
    TITLE = "provider rendering"
    GLYPH_COLUMN = False  # its first column says what changed: since the episode before, or
    # during a diff, the diff's change

    changes: var[ProviderChanges | None] = var(None)
    """The messages added or changed since the episode before the one shown (bound to the
    screen's ``provider_changes``); None: nothing to compare with (yet)."""

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(headers=False, name=name, id=id)
        self.full_layout = self.layout_model = ProviderLayout()
        self.totals: ProviderTotals | None = None
        """How much the view laid out sends (worked out when it is laid out)."""

    def _lay_out(self, new: Shown, *, tell: bool = False) -> None:
        super()._lay_out(new, tell=tell)
        assert isinstance(self.full_layout, ProviderLayout)
        self.totals = self.full_layout.totals()
        self._say_totals()

    def watch_changes(self) -> None:
        self._say_totals()
        self.refresh()

    def _say_totals(self) -> None:
        said = [self.totals.describe()] if self.totals is not None else []
        if self.changes is not None:
            said.append(self.changes.describe())
        self.border_subtitle = Content(" · ".join(said))  # never markup

    def tooltip_of(self, row: Row, view: ContextView) -> Content | None:
        if row.ghost is not None:
            return self.ghost_tooltip(row)
        item = row.item
        assert item is not None and row.slot is not None
        role = visible(provider_role(row.depth, item.role, row.turn.role), limit=40)
        where = f"({row.depth},{row.slot.position},{row.offset})"
        notes = "; ".join(meaning for _badge, meaning in badge_notes(item, view))
        return Content(f"sent as {role}: the item at {where} (v: in the tree)\n{notes}")

    def render_row(self, row: Row, view: ContextView) -> list[Segment]:
        ghost = row.ghost
        item = row.item if ghost is None else ghost.item
        assert item is not None
        s = self.style_of
        role = provider_role(row.depth, item.role, row.turn.role)
        style = f"provider--{role}" if role in ROLES else "provider--user"
        if self.comparison is not None:  # the diff shown: its glyphs, in the same column
            glyph = self._glyph(row, self.row_change(row))
        else:
            glyph = Segment("  ", s("tree--dim"))
            changes = self.changes
            if changes is not None and item.id in changes.added:
                glyph = Segment("+ ", s("provider--added"))
            elif changes is not None and item.id in changes.changed:
                glyph = Segment("~ ", s("provider--changed"))
        if ghost is not None:
            coords = ghost.coordinates
        else:
            assert row.slot is not None
            coords = f"({row.depth},{row.slot.position},{row.offset})"
        width = max(9, len(str(view.history_depth)) + 7)  # (-1,0,0) … (12345,1,-1)
        chars = char_count(item)
        # The sizes line up: as wide as the largest message's (the totals know it).
        largest = self.totals.largest if self.totals is not None else chars
        wide, tokens_wide = len(f"{largest:,}"), len(f"~{token_estimate(largest):,}")
        tokens = f"~{token_estimate(chars):,}"
        size = f"{chars:>{wide},} ch {tokens:>{tokens_wide}} tok "
        content = s("tree--content" if ghost is None else "tree--ghost")
        where = s("provider--coords" if ghost is None else "tree--ghost")
        out = [
            glyph,
            Segment(f"{coords:<{width}} ", where),
            Segment(f"{visible(role, limit=ROW_LIMIT):<10}", s(style)),
            Segment(size, s("provider--size")),
            Segment("│ ", s("tree--dim")),
        ]
        note = self.note_of(row)
        if note:
            out.append(Segment(f"{note} ", s("tree--note")))
        out.append(Segment(visible(preview(item, 400)), content))
        return out
