"""What happened to one item across a context's snapshots: born, moved, replaced, gone.

Looking an item up in a snapshot by scanning the tree would cost the whole tree per snapshot.
An item only ever sits in the turn it was placed in (ODI moves turns, not items) or, for items
that keep their coordinates, in whichever turn is at its depth; render stages name their
depths. So each snapshot is searched in those few turns only.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

from .context import Context
from .history import Snapshot, SnapshotContext
from .nodes import Item, Turn

MAX_SNAPSHOTS = 500


@dataclass(frozen=True, slots=True)
class Sighting:
    """Where an item was at one snapshot."""

    snapshot: Snapshot
    coordinates: tuple[int, int, int]
    item: Item


@dataclass(frozen=True, slots=True)
class TimelineEvent:
    episode: int
    snapshot_id: str | None
    what: str  # born, seen, moved, replaced, gone; then scheduled: expires, moves on, rehydrates
    detail: str


def _find_in_turn(turn: Turn, depth: int, item_id: str) -> tuple[tuple[int, int, int], Item] | None:
    for position, slot in turn.slots.items():
        for index, item in enumerate(slot.items):
            if item.id == item_id:
                return (depth, position, index - slot.core), item
    return None


def _sight(snapshot: Snapshot, item_id: str, seq: int, depths: set[int]) -> Sighting | None:
    state = snapshot.state
    turns = state.turns
    count = len(turns)
    candidates: list[tuple[int, Turn]] = []
    if seq == -1:
        candidates.append((-1, state.system))
    else:
        index = bisect_left(turns, seq, key=lambda t: t.seq)
        if index < count and turns[index].seq == seq:
            candidates.append((count - 1 - index, turns[index]))
    for depth in depths:
        if depth == -1:
            candidates.append((-1, state.system))
        elif 0 <= depth < count:
            candidates.append((depth, turns[count - 1 - depth]))
    for depth, turn in candidates:
        found = _find_in_turn(turn, depth, item_id)
        if found is not None:
            return Sighting(snapshot, found[0], found[1])
    return None


def item_timeline(view: Context | SnapshotContext, item_id: str) -> list[TimelineEvent]:
    """The item's story over the last ``MAX_SNAPSHOTS`` snapshots up to ``view``, then what is
    scheduled for it. Empty if ``view`` does not hold the item."""
    node = view.find(item_id)
    if node is None or node.item is None or node.depth is None:
        return []
    item = node.item
    turn = view.turn_at(node.depth)
    assert turn is not None
    depths = {node.depth}
    if item.lifecycle is not None:
        depths.update(stage.depth for stage in item.lifecycle.stages)
    # The story up to the view: all of it for the working context, up to its own snapshot for
    # a past one (snapshots sealed later in the same episode are its future).
    snapshots = view.history.snapshots
    if isinstance(view, SnapshotContext):
        mine = next((i for i, s in enumerate(snapshots) if s is view.snapshot), None)
        snapshots = snapshots[: mine + 1] if mine is not None else []
    window = snapshots[-MAX_SNAPSHOTS:]
    events: list[TimelineEvent] = []
    previous: Sighting | None = None
    for snapshot in window:
        seen = _sight(snapshot, item_id, turn.seq, depths)
        episode, at = snapshot.episode, snapshot.id
        if seen is None:
            if previous is not None:
                events.append(TimelineEvent(episode, at, "gone", _where(previous.coordinates)))
        elif previous is None:
            first_ever = snapshot is snapshots[0] or len(snapshots) <= MAX_SNAPSHOTS
            if first_ever and not events:
                born = seen.item.born_episode
                where = _where(seen.coordinates)
                if episode != born:  # the first snapshot came later: it may have moved already
                    where = f"at {where} by episode {episode}"
                events.append(TimelineEvent(born, at, "born", where))
            else:
                events.append(TimelineEvent(episode, at, "seen", _where(seen.coordinates)))
        else:
            if seen.coordinates != previous.coordinates:
                detail = f"{_where(previous.coordinates)} → {_where(seen.coordinates)}"
                events.append(TimelineEvent(episode, at, "moved", detail))
            if seen.item is not previous.item and _replaced(previous.item, seen.item):
                detail = f"content {previous.item.content_hash[:8]} → {seen.item.content_hash[:8]}"
                events.append(TimelineEvent(episode, at, "replaced", detail))
        previous = seen
    if previous is None:  # placed since the last snapshot
        events.append(TimelineEvent(view.current_episode, None, "born", _where(node.coordinates)))
    if node.expires_at_episode is not None:
        what = "moves on" if item.lifecycle is not None else "expires"
        events.append(TimelineEvent(node.expires_at_episode, None, what, ""))
    template = view.template_of(item)
    if template is not None:
        episode = template.next_after(view.current_episode)
        events.append(TimelineEvent(episode, None, "rehydrates", "a fresh instance replaces it"))
    return events


def _replaced(old: Item, new: Item) -> bool:
    """A change by ``pact_update`` (not a stage move, which only resets the item's clock)."""
    return (
        any(
            getattr(old, name) != getattr(new, name)
            for name in ("content", "key", "tags", "ttl", "cad", "priority", "role", "data")
        )
        and old.lifecycle == new.lifecycle
    )


def _where(coordinates: tuple[int, ...]) -> str:
    return "(" + ",".join(str(c) for c in coordinates) + ")"
