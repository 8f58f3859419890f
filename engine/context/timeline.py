"""An item's story: where it was born, how it moved, what replaced it, which stage it reached,
and what is due next. Told from the operations themselves: :meth:`ItemStory.observe` looks at
the item after each operation (the workspace replays its log to do so), so nothing that
happened between two snapshots is missed, however the context was opened.

Pure: the caller runs the operations and says which one ran; this only compares.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .nodes import Item
from .tree import Node
from .view import ContextView

What = Literal["born", "moved", "replaced", "staged", "expires", "moves on", "rehydrates"]

# How each operation of a command log (its ``op``) is said when it places or moves an item.
BORN_BY = {
    "insert": "inserted",
    "update": "appended",
    "message": "a message",
    "advance": "rehydrated by its schedule",
    "forked": "copied into this fork",
}
MOVED_BY = {
    "insert": "an insert",
    "update": "an update",
    "delete": "a delete",
    "message": "a new message",
    "advance": "the advance",
}


@dataclass(frozen=True, slots=True)
class StoryEvent:
    """One line of the story: at ``episode``, by the event ``seq`` (None for what is due)."""

    episode: int
    seq: int | None
    what: What
    detail: str
    times: int = 1  # moves alike in a row, told once (a message pushes a note one deeper each)


@dataclass(frozen=True, slots=True)
class _Move:
    """One observed move: kept apart until told, so a story cut at some event never includes
    a later move merged into an earlier one."""

    episode: int
    seq: int
    before: tuple[int, ...]
    after: tuple[int, ...]
    by: str  # how the operation is said ("a new message")
    depth_only: bool = False  # an ODI move told from the shifts: only its depth is known
    times: int = 1  # the events it stands for (a run read from the shifts)


def where(coordinates: tuple[int, ...]) -> str:
    return "(" + ",".join(str(c) for c in coordinates) + ")"


class ItemStory:
    """The story of one item, observed operation by operation."""

    def __init__(self, item_id: str) -> None:
        self.item_id = item_id
        self._observed: list[StoryEvent | _Move] = []
        self._seen: tuple[tuple[int, ...], Item] | None = None  # where and what, last time

    def observe(self, view: ContextView, *, op: str, seq: int) -> None:
        """After the operation ``op`` (recorded as event ``seq``) on the context ``view`` reads
        (the working context finds the item by its index; a snapshot walks its tree)."""
        node = view.find(self.item_id)
        if node is None or node.item is None:
            return  # not born yet (an id is never used again once its item is gone)
        episode, item, here = view.current_episode, node.item, node.coordinates
        if self._seen is None:
            self._seen = (here, item)
            detail = f"{where(here)} · {BORN_BY.get(op, op)}"
            self._observed.append(StoryEvent(episode, seq, "born", detail))
            return
        before, old = self._seen
        self._seen = (here, item)
        staged = False
        if item is not old and _replaced(old, item):
            detail = f"content {old.content_hash[:8]} → {item.content_hash[:8]}"
            self._observed.append(StoryEvent(episode, seq, "replaced", detail))
        elif item is not old and (item.stage, item.passes) != (old.stage, old.passes):
            assert item.lifecycle is not None
            stages = len(item.lifecycle.stages)
            detail = f"stage {old.stage + 1} → {item.stage + 1} of {stages} · {where(here)}"
            self._observed.append(StoryEvent(episode, seq, "staged", detail))
            staged = True
        if here != before and not staged:
            self._observed.append(_Move(episode, seq, before, here, MOVED_BY.get(op, op)))

    def tell(self, event: StoryEvent) -> None:
        """Add a line read from the log rather than observed (``story_index.tell``)."""
        self._observed.append(event)

    def move(
        self,
        episode: int,
        seq: int,
        before: tuple[int, ...],
        after: tuple[int, ...],
        by: str,
        *,
        depth_only: bool = False,
        times: int = 1,
    ) -> None:
        """Add a move read from the log (``times`` events' worth); ``depth_only`` when only
        its depth is known."""
        self._observed.append(_Move(episode, seq, before, after, by, depth_only, times))

    def told(self, node: Node | None = None, *, until: int | None = None) -> list[StoryEvent]:
        """The story up to event ``until`` (all of it by default), moves by the same kind of
        operation one after another told as one, then what is due for the item as ``node``
        shows it (its state at that point)."""
        events: list[StoryEvent] = []
        run: list[_Move] = []
        for observed in self._observed:
            if until is not None and observed.seq is not None and observed.seq > until:
                break  # what was observed is in the order of the events
            if isinstance(observed, _Move):
                if run and (run[-1].by, run[-1].depth_only) != (observed.by, observed.depth_only):
                    events.append(_told_moves(run))
                    run = []
                run.append(observed)
                continue
            if run:
                events.append(_told_moves(run))
                run = []
            events.append(observed)
        if run:
            events.append(_told_moves(run))
        if node is None or node.item is None:
            return events
        return [*events, *due(node)]


def _told_moves(run: list[_Move]) -> StoryEvent:
    first, last = run[0], run[-1]
    if first.depth_only:
        detail = f"d{first.before[0]} → d{last.after[0]} · {first.by}"
    else:
        detail = f"{where(first.before)} → {where(last.after)} · {first.by}"
    return StoryEvent(first.episode, first.seq, "moved", detail, times=sum(m.times for m in run))


def due(node: Node) -> list[StoryEvent]:
    """What is scheduled for an item: its expiry or next stage, its schedule's next instance."""
    item = node.item
    assert item is not None
    events = []
    if node.expires_at_episode is not None:
        what: What = "moves on" if item.lifecycle is not None else "expires"
        events.append(StoryEvent(node.expires_at_episode, None, what, ""))
    if node.template is not None:
        episode = node.template.next_after(node.episode)
        events.append(StoryEvent(episode, None, "rehydrates", "a fresh instance replaces it"))
    return events


def _replaced(old: Item, new: Item) -> bool:
    """A change by ``pact_update``, not a stage move (which keeps every field but its stage's
    ttl and clock)."""
    fields = ("content", "key", "tags", "cad", "priority", "role", "data", "lifecycle")
    changed = any(getattr(old, name) != getattr(new, name) for name in fields)
    return changed or (new.lifecycle is None and old.ttl != new.ttl)
