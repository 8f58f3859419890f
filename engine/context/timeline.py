"""An item's story: where it was born, how it moved, what replaced it, which stage it reached,
and what is due next. Told from the operations themselves: :meth:`ItemStory.observe` looks at
the item after each operation (the workspace replays its log to do so), so nothing that
happened between two snapshots is missed, however the context was opened.

Pure: the caller runs the operations and says which one ran; this only compares.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
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


def where(coordinates: tuple[int, ...]) -> str:
    return "(" + ",".join(str(c) for c in coordinates) + ")"


class ItemStory:
    """The story of one item, observed operation by operation."""

    def __init__(self, item_id: str) -> None:
        self.item_id = item_id
        self.events: list[StoryEvent] = []
        self._seen: tuple[tuple[int, ...], Item] | None = None  # where and what, last time

    def observe(self, view: ContextView, *, op: str, seq: int) -> None:
        """After the operation ``op`` (recorded as event ``seq``) on the context ``view`` reads
        (the live side's ``find`` is an index lookup; a snapshot's is a walk)."""
        live = view.live()
        node = live.find(self.item_id) if live is not None else view.find(self.item_id)
        if node is None or node.item is None:
            return  # not born yet (an id is never used again once its item is gone)
        episode, item, here = view.current_episode, node.item, node.coordinates
        if self._seen is None:
            self._seen = (here, item)
            self._add(StoryEvent(episode, seq, "born", f"{where(here)} · {BORN_BY.get(op, op)}"))
            return
        before, old = self._seen
        self._seen = (here, item)
        staged = False
        if item is not old and _replaced(old, item):
            detail = f"content {old.content_hash[:8]} → {item.content_hash[:8]}"
            self._add(StoryEvent(episode, seq, "replaced", detail))
        elif item is not old and (item.stage, item.passes) != (old.stage, old.passes):
            assert item.lifecycle is not None
            stages = len(item.lifecycle.stages)
            detail = f"stage {old.stage + 1} → {item.stage + 1} of {stages} · {where(here)}"
            self._add(StoryEvent(episode, seq, "staged", detail))
            staged = True
        if here != before and not staged:
            detail = f"{where(before)} → {where(here)} · {MOVED_BY.get(op, op)}"
            self._add(StoryEvent(episode, seq, "moved", detail))

    def _add(self, event: StoryEvent) -> None:
        """Moves by the same kind of operation, one after another, are told as one."""
        last = self.events[-1] if self.events else None
        if (
            last is not None
            and last.what == event.what == "moved"
            and last.detail.split(" · ")[1] == event.detail.split(" · ")[1]
        ):
            start = last.detail.split(" → ")[0]
            joined = f"{start} → {event.detail.split(' → ')[1]}"
            self.events[-1] = replace(last, detail=joined, times=last.times + 1)
            return
        self.events.append(event)

    def told(self, node: Node | None = None, *, until: int | None = None) -> list[StoryEvent]:
        """The story up to event ``until`` (all of it by default), then what is due for the
        item as ``node`` shows it (its state at that point)."""
        events = [e for e in self.events if until is None or e.seq is None or e.seq <= until]
        if node is None or node.item is None:
            return events
        return [*events, *due(node)]


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
