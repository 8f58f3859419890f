"""The detail pane: every field of the node under the cursor, its content and its story.

Every string from the workspace is shown :func:`~engine.visible.visible`: a field on one line
(a newline in a key is ``\\n``), the content with its own line breaks. The content is shown up
to ``CONTENT_CHARS`` characters or ``CONTENT_LINES`` lines, whichever comes first, then a line
saying how much more there is: ``o`` (or Enter on the item) reads all of it
(:class:`~pact_tui.screens.reader.ReaderScreen`). A field is shown up to ``FIELD_CHARS``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import work
from textual.containers import VerticalScroll
from textual.reactive import var
from textual.widgets import Static

from engine.context import ContextView, ItemChange
from engine.context.nodes import Item
from engine.context.timeline import StoryEvent
from engine.context.tree_diff import TreeDiff
from engine.visible import visible

from ..provider import char_count
from ..reasons import Reasons
from ..themes import Palette
from ..tree_layout import Row
from ..types import DIFF_GLYPHS, Comparison, Ghost, Shown

CONTENT_CHARS = 4_000  # of an item's content in the pane (o reads all of it)
CONTENT_LINES = 80
FIELD_CHARS = 2_000  # of a key, a tag list, the data: more than a pane's height of them
MISSING_LISTED = 12  # of the items the view shown lacks, listed above the node during a diff
DIFF_LINES = 60  # of a changed content's side-by-side diff
# ensure_ascii=False: the data as people read it (visible() makes what must be visible so).
_READABLE_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True)


@dataclass(frozen=True, slots=True)
class Subject:
    """What the detail pane describes: a row of the view shown, and the diff shown, if any.

    ``shown`` rather than its view: the live view changes in place (an item's age moves on
    with the episode even when the tree is not written), and a new ``shown`` says so.
    """

    shown: Shown
    row: Row
    comparison: Comparison | None = None
    story: tuple[StoryEvent, ...] | None = None  # the item's, once the log has told it
    reasons: Reasons | None = None  # why the diff's items changed, once read


def _fields_table(rows: list[tuple[str, Any]]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for name, value in rows:
        table.add_row(name, Text(visible(str(value), limit=FIELD_CHARS)))
    return table


def timestamp(time_ns: int) -> str:
    """A timestamp as people read it (UTC, to the millisecond)."""
    moment = datetime.fromtimestamp(time_ns / 1e9, tz=UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d} UTC"


def _dash(value: Any) -> str:
    return "—" if value is None or value == [] else str(value)


def json_head(value: Any, limit: int) -> str:
    """The first ``limit`` characters of ``value`` as JSON (then ``…``), without writing the
    rest (item data can be as big as content)."""
    pieces: list[str] = []
    length = 0
    for piece in _READABLE_JSON.iterencode(value):
        pieces.append(piece)
        length += len(piece)
        if length > limit:
            return "".join(pieces)[: limit - 1] + "…"
    return "".join(pieces)


def content_head(item: Item) -> tuple[str, bool]:
    """The start of an item's content the pane shows, and whether there is more."""
    head = item.text_head(CONTENT_CHARS + 1)
    more = len(head) > CONTENT_CHARS
    lines = head[:CONTENT_CHARS].split("\n", CONTENT_LINES)
    if len(lines) > CONTENT_LINES:
        return "\n".join(lines[:CONTENT_LINES]), True
    return head[:CONTENT_CHARS], more


def _more_of(item: Item, shown: str) -> Text:
    """How much of the content is not shown, and how to read it."""
    if isinstance(item.content, str):
        total = len(item.content)
        said = f"the first {len(shown):,} of {total:,} characters"
    else:
        said = f"the first {len(shown):,} characters"
    return Text(f"… {said} · o reads it all", style="dim italic")


def describe(
    view: ContextView,
    row: Row,
    change: ItemChange | None = None,
    story: tuple[StoryEvent, ...] | None = None,
    changed_text: RenderableType | None = None,
) -> RenderableType:
    """A renderable describing ``row``'s node as it is in ``view``."""
    if row.kind in ("system", "turn"):
        turn = row.turn
        title = "system region" if row.kind == "system" else f"turn at depth {row.depth}"
        return Group(
            Text(title, style="bold"),
            _fields_table(
                [
                    ("id", turn.id),
                    ("depth", row.depth),
                    ("role", _dash(turn.role)),
                    ("slots", ", ".join(str(p) for p in sorted(turn.slots)) or "none"),
                    ("items", turn.item_count()),
                    ("created", f"#{turn.creation_index} · {timestamp(turn.created_at_ns)}"),
                ]
            ),
        )
    if row.ghost is not None:  # a diff's, drawn while the diff is being cleared
        return Text(f"{visible(row.ghost.id)} is not in this view", style="dim")
    if row.kind == "slot":
        slot = row.slot
        assert slot is not None
        return Group(
            Text(f"slot ({row.depth},{slot.position})", style="bold"),
            _fields_table(
                [
                    ("id", slot.id),
                    ("parent", row.turn.id),
                    ("items", len(slot.items)),
                    ("offsets", f"{-slot.core} … {len(slot.items) - slot.core - 1}"),
                    ("created", f"#{slot.creation_index} · {timestamp(slot.created_at_ns)}"),
                ]
            ),
        )
    return _describe_item(view, row, change, story, changed_text)


def _describe_item(
    view: ContextView,
    row: Row,
    change: ItemChange | None,
    story: tuple[StoryEvent, ...] | None,
    changed_text: RenderableType | None = None,
) -> RenderableType:
    """Every field, the change in the diff shown, the content, and the story (None: not told
    yet, the log is being read)."""
    item = row.item
    assert item is not None and row.slot is not None
    node = view.make_node(item, row.slot, row.depth, row.offset or 0)
    coords = ",".join(str(c) for c in node.coordinates)
    timers: list[tuple[str, Any]] = []
    if item.ttl is not None:
        timers.append(
            (
                "ttl",
                f"{item.ttl}  ·  age {node.age}  ·  remaining {node.remaining}"
                f"  ·  expires at episode {node.expires_at_episode}",
            )
        )
    else:
        timers.append(("ttl", f"permanent  ·  age {node.age}"))
    if node.template is not None:
        timers.append(
            (
                "cadence",
                f"every {item.cad}  ·  next rehydration at episode "
                f"{node.next_rehydration_episode}  ·  schedule {node.template.id}",
            )
        )
    if item.lifecycle is not None:
        stages = item.lifecycle.stages
        nxt = stages[item.stage + 1].selector if item.stage + 1 < len(stages) else "end"
        timers.append(
            (
                "render",
                f"stage {item.stage + 1} of {len(stages)}  ·  pass {item.passes + 1}"
                f"  ·  then {nxt}  ·  {_cycle_words(item.lifecycle.cycle)}",
            )
        )
    parts: list[RenderableType] = [
        Text.assemble(
            (f"{visible(item.node_type, limit=FIELD_CHARS)} ", "bold"),
            (visible(item.id), "bold"),
            f"   ({coords})  ",
        ),
        Text(node.lifecycle or "", style="italic"),
        _fields_table(
            [
                ("key", _dash(item.key)),
                ("tags", _dash(", ".join(item.tags) or None)),
                ("role", _dash(item.role)),
                ("priority", item.priority),
                *timers,
                ("born", f"episode {item.born_episode}  ·  creation #{item.creation_index}"),
                ("created", f"{timestamp(item.created_at_ns)} ({item.created_at_ns} ns)"),
                ("parent", row.slot.id),
                ("hash", _hash_of(item)),  # a short name: the values get the width
                *([("data", json_head(item.data, FIELD_CHARS))] if item.data else []),
            ]
        ),
    ]
    if change is not None:
        moved = [f"{name} {before} → {after}" for name, (before, after) in change.moves().items()]
        parts += [
            Text("\nchanged in this diff", style="bold"),
            Text(visible(", ".join([*change.fields, *moved]), limit=FIELD_CHARS) or "—"),
        ]
    if changed_text is not None:
        parts.append(changed_text)
    shown, more = content_head(item)
    parts += [Text("\ncontent", style="bold"), Text(visible(shown, multiline=True))]
    if more:
        parts.append(_more_of(item, shown))
    parts.append(Text("\nhistory", style="bold"))
    if story is None:
        parts.append(Text("reading the log…", style="dim"))
    else:
        table = Table.grid(padding=(0, 2))
        table.add_column(justify="right", style="dim")
        table.add_column(style="bold")
        table.add_column(overflow="fold")
        now = view.current_episode
        for event in story:
            when = f"ep {event.episode}" + (" (due)" if event.episode > now else "")
            times = f", {event.times} times" if event.times > 1 else ""
            detail = visible(event.detail, limit=FIELD_CHARS) + times
            table.add_row(Text(when), Text(event.what), Text(detail))
        parts.append(table)
    return Group(*parts)


def describe_subject(subject: Subject, palette: Palette | None = None) -> RenderableType:
    """The node, and above it what the diff shown found (and why, once the changelogs of the
    steps between its sides are read)."""
    comparison, row, view = subject.comparison, subject.row, subject.shown.view
    if comparison is None:
        return describe(view, row, None, subject.story)
    palette = palette or Palette()
    reasons = subject.reasons
    summary = diff_summary(comparison, palette, reasons)
    if row.ghost is not None:
        return Group(summary, describe_ghost(comparison, row.ghost, reasons))
    parts: list[RenderableType] = [summary]
    change = None
    if row.item is not None:
        item_id = row.item.id
        change = comparison.diff.change_of(item_id, row.turn.seq)
        if item_id in comparison.diff.added or item_id in comparison.diff.removed:
            parts.append(_presence(comparison, item_id))
        mark = comparison.mark_of(item_id, row.turn.seq)
        why = reasons.reason_of(item_id, mark) if reasons is not None and mark else ""
        if why:
            parts.append(Text.assemble(("why: ", "bold"), visible(why)))
    changed_text = None
    if row.item is not None:
        delta = comparison.diff.changed.get(row.item.id)
        if delta is not None and "content" in delta.change.fields:
            changed_text = content_diff(comparison, delta.before, delta.after, palette)
    parts.append(describe(view, row, change, subject.story, changed_text))
    return Group(*parts)


def _presence(comparison: Comparison, item_id: str) -> Text:
    """Why a row of the view shown is marked + or −."""
    if item_id in comparison.diff.added:
        return Text(f"+ added: not in {visible(comparison.older)}", style="bold")
    return Text(f"− removed: not in {visible(comparison.newer)}", style="bold")


def content_diff(comparison: Comparison, before: Item, after: Item, palette: Palette) -> Group:
    """A changed content, word by word, side by side: the older side on the left."""
    from .queue import diff_renderable  # the document screen's module: not loaded at start

    old, _ = content_head(before)
    new, _ = content_head(after)
    titles = (comparison.older, comparison.newer)
    return Group(
        Text("\ncontent changed, word by word", style="bold"),
        diff_renderable(old, new, True, titles, palette, DIFF_LINES),
    )


def describe_ghost(
    comparison: Comparison, ghost: Ghost, reasons: Reasons | None = None
) -> RenderableType:
    """An item the view shown lacks: what it was, where, on which side it is, and why it is
    not on this one."""
    item = ghost.item
    if ghost.mark == "removed":
        head = f"− removed: in {comparison.older}, not in {comparison.newer}"
    else:
        head = f"+ added: in {comparison.newer}, not yet in {comparison.older}"
    why = reasons.reason_of(ghost.id, ghost.mark) if reasons is not None else ""
    where = f"{ghost.coordinates}" + ("" if ghost.same_turn else " (its turn is gone)")
    timers = "permanent" if item.ttl is None else f"{item.ttl}"
    shown, more = content_head(item)
    parts: list[RenderableType] = [
        Text(visible(head), style="bold"),
        *([Text.assemble(("why: ", "bold"), visible(why))] if why else []),
        Text.assemble(
            (f"{visible(item.node_type, limit=FIELD_CHARS)} ", "bold"),
            (visible(item.id), "bold"),
            f"   was at {where}",
        ),
        _fields_table(
            [
                ("key", _dash(item.key)),
                ("tags", _dash(", ".join(item.tags) or None)),
                ("role", _dash(item.role)),
                ("ttl", timers),
                ("born", f"episode {item.born_episode}  ·  creation #{item.creation_index}"),
            ]
        ),
        Text("\ncontent", style="bold"),
        Text(visible(shown, multiline=True)),
    ]
    if more:
        parts.append(_more_of(item, shown))
    return Group(*parts)


def diff_summary(
    comparison: Comparison, palette: Palette | None = None, reasons: Reasons | None = None
) -> RenderableType:
    """What a diff found, above the selected node: its sides (as the header names them),
    counts with the rows' glyphs, what moved whole, and the first items the view shown lacks
    (drawn as ghosts where they were)."""
    palette = palette or Palette()
    diff = comparison.diff
    added, removed, changed, moved = diff.tally
    counts = Text.assemble(
        ("diff ", "bold"),
        (visible(comparison.label), "bold"),
        "   ",
        (f"+{added} added", palette.added),
        "  ",
        (f"−{removed} removed", palette.removed),
        "  ",
        (f"~{changed} changed", palette.warn),
    )
    parts: list[RenderableType] = [counts]
    if moved:
        said = reasons.moved_summary(diff.depth_moves) if reasons else moved_summary(diff)
        parts.append(Text(f"{DIFF_GLYPHS['moved']} {said}", style="dim"))
    missing = comparison.ghosts
    if missing:
        side = comparison.older if comparison.shown_is_newer else comparison.newer
        parts.append(Text(f"only in {visible(side)} (drawn where they were):", style="dim"))
    for ghost in missing[:MISSING_LISTED]:
        short = preview_of(ghost.item, 40)
        glyph = DIFF_GLYPHS[ghost.mark]
        style = palette.removed if ghost.mark == "removed" else palette.added
        parts.append(
            Text.assemble(
                (f"  {glyph} ", style),
                f"{visible(ghost.id)} {ghost.coordinates} ",
                (visible(short), "dim"),
            )
        )
    more = len(missing) - MISSING_LISTED
    if more > 0:
        parts.append(Text(f"  … and {more} more", style="dim"))
    parts.append(Text(""))
    return Group(*parts)


def moved_summary(diff: TreeDiff) -> str:
    """``99,990 items one deeper`` (the turns they are in moved: ODI, or a turn removed)."""
    said = []
    for steps, count in sorted(diff.depth_moves.items()):
        how = "one" if abs(steps) == 1 else f"{abs(steps)}"
        way = "deeper" if steps > 0 else "shallower"
        said.append(f"{count:,} item{'s' if count != 1 else ''} {how} {way}")
    return "moved: " + ", ".join(said)


def preview_of(item: Item, width: int) -> str:
    text = item.text_head(width + 1).replace("\n", " ⏎ ")
    return text if len(text) <= width else text[: width - 1] + "…"


class NodeDetail(VerticalScroll):
    """Describes the node under the cursor (:func:`describe_subject`)."""

    DEFAULT_CSS = """
    NodeDetail > Static { width: 1fr; height: auto; }
    """

    subject: var[Subject | None] = var(None)
    """What to describe (bound to the screen's)."""

    def compose(self) -> Any:
        yield Static(
            Text("Select a node to see its fields.", style="dim"), id="detail-body", markup=False
        )

    _described: str | None = None  # the node described last
    _hashing: Item | None = None  # the item whose content a thread is hashing

    def watch_subject(self, subject: Subject | None) -> None:
        if subject is not None:
            palette = Palette.of(self.app.theme_variables)
            self.query_one("#detail-body", Static).update(describe_subject(subject, palette))
            if subject.row.node_id != self._described:  # another node: read from its top
                self._described = subject.row.node_id
                self.scroll_home(animate=False, immediate=True)
            item = subject.row.item
            if item is not None and item.content_hash_known is None and item is not self._hashing:
                # Described with HASHING; hashed once this frame is drawn (in a thread, but
                # encoding the JSON holds the interpreter), then described again; once, however
                # often it is described meanwhile (a thread worker runs on when superseded).
                self._hashing = item
                self.call_after_refresh(self._hash, item)

    @work(thread=True, exclusive=True, group="hash")
    def _hash(self, item: Item) -> None:
        item.content_hash  # noqa: B018  (worked out, and kept by the item)
        self.app.call_from_thread(self._hashed, item)

    def _hashed(self, item: Item) -> None:
        self._hashing = None
        subject = self.subject
        if subject is not None and subject.row.item is item:
            self.watch_subject(subject)


# Content up to this many characters is hashed as it is described; larger content is hashed
# after the frame that shows it (``NodeDetail``): a 10 MB message took 30 ms of that frame.
HASHED_AT_ONCE = 100_000
HASHING = "working it out…"


def _hash_of(item: Item) -> str:
    known = item.content_hash_known
    if known is not None:
        return known
    # The size its row shows (counted once an item, a table without building its text).
    return item.content_hash if char_count(item) <= HASHED_AT_ONCE else HASHING


def _cycle_words(cycle: bool | int) -> str:
    """What a render lifecycle does after its last stage, in words (not ``cycle=False``)."""
    if cycle is True:
        return "cycles forever"
    if cycle is False:
        return "no cycle: it ends after its last stage (stays there if that has no ttl)"
    return "1 pass in all" if cycle == 1 else f"{cycle} passes in all"
