"""Snapshots, read-only past contexts and diffs (spec §7).

A snapshot holds a ``TreeState`` that shares every unchanged turn, slot and item with the working
context and with the other snapshots: sealing costs the same at 100 items as at 100,000.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .errors import ReadOnlySelector, UnknownSnapshot
from .nodes import Item
from .selector_ast import Time
from .tree import Diff, ItemChange, TreeState
from .view import ContextView


class Snapshot:
    __slots__ = ("created_at_ns", "episode", "id", "index", "state", "trigger")

    def __init__(
        self,
        *,
        id: str,
        index: int,
        episode: int,
        trigger: str,
        created_at_ns: int,
        state: TreeState,
    ) -> None:
        self.id = id
        self.index = index
        self.episode = episode
        self.trigger = trigger
        self.created_at_ns = created_at_ns
        self.state = state

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "index": self.index,
            "episode": self.episode,
            "trigger": self.trigger,
            "created_at_ns": self.created_at_ns,
        }

    def __repr__(self) -> str:
        return f"<Snapshot {self.index} {self.id} episode={self.episode} {self.trigger}>"


class SnapshotContext(ContextView):
    """A past state of a context: everything a ``ContextView`` reads, and no writes."""

    def __init__(self, snapshot: Snapshot, history: History) -> None:
        state = snapshot.state
        self.snapshot = snapshot
        self._root_id = state.root_id
        self._system = state.system
        self._turns = state.turns
        self._episode = state.episode
        self._templates = state.templates
        self._history = history

    def __getattr__(self, name: str) -> Any:
        if name.startswith("pact_") or name in {"add_user", "add_assistant", "advance", "seal"}:
            raise ReadOnlySelector(
                f"snapshot {self.snapshot.id} is read-only; {name}() needs the working context",
                snapshot=self.snapshot.id,
            )
        raise AttributeError(name)


class History:
    """Every snapshot of one context, oldest first."""

    def __init__(self) -> None:
        self._snapshots: list[Snapshot] = []
        self._by_id: dict[str, Snapshot] = {}

    def record(self, snapshot: Snapshot) -> None:
        self._snapshots.append(snapshot)
        self._by_id[snapshot.id] = snapshot

    def __len__(self) -> int:
        return len(self._snapshots)

    def __iter__(self) -> Iterator[Snapshot]:
        return iter(self._snapshots)

    @property
    def snapshots(self) -> list[Snapshot]:
        return list(self._snapshots)

    @property
    def latest(self) -> Snapshot | None:
        return self._snapshots[-1] if self._snapshots else None

    def get(self, snapshot_id: str) -> Snapshot:
        try:
            return self._by_id[snapshot_id]
        except KeyError:
            raise UnknownSnapshot(f"no snapshot {snapshot_id!r}", snapshot=snapshot_id) from None

    def at_snapshot(self, snapshot_id: str) -> SnapshotContext:
        return SnapshotContext(self.get(snapshot_id), self)

    def view_at(self, time: Time) -> SnapshotContext:
        """The read-only context a selector's time prefix (``@t-1``, ``@e3``, …) names."""
        return SnapshotContext(self.resolve(time), self)

    def back(self, steps: int) -> Snapshot:
        """``@t-N``: the N-th newest snapshot (1 = the newest)."""
        if steps < 1 or steps > len(self._snapshots):
            raise UnknownSnapshot(
                f"@t-{steps}: there are {len(self._snapshots)} snapshot(s)", steps=steps
            )
        return self._snapshots[-steps]

    def at_episode(self, episode: int) -> Snapshot:
        """``@eN``: the snapshot recorded when episode N began, else the first taken during it."""
        during = [s for s in self._snapshots if s.episode == episode]
        if not during:
            raise UnknownSnapshot(f"no snapshot of episode {episode}", episode=episode)
        for snapshot in during:
            if snapshot.trigger == "episode":
                return snapshot
        return during[0]

    def resolve(self, time: Time) -> Snapshot:
        if time.kind == "back":
            assert isinstance(time.value, int)
            return self.back(time.value)
        if time.kind == "episode":
            assert isinstance(time.value, int)
            return self.at_episode(time.value)
        assert isinstance(time.value, str)
        return self.get(time.value)


# The fields a diff compares (identity and creation stamps are what make an item the same).
DIFFED_FIELDS = (
    "content",
    "key",
    "tags",
    "ttl",
    "cad",
    "priority",
    "role",
    "born_episode",
    "data",
    "lifecycle",
    "stage",
    "passes",
    "template_id",
)


Located = dict[str, tuple[Item, int, int, int]]
"""id → (item, depth, position, offset) of every item of one state, in canonical order."""


def _locations(view: ContextView) -> Located:
    """id → (item, depth, position, offset), in canonical order."""
    return {
        item.id: (item, depth, slot.position, offset)
        for item, depth, slot, offset in view.iter_items()
    }


def _move(before: int, after: int) -> tuple[int, int] | None:
    return None if before == after else (before, after)


def diff_views(older: ContextView, newer: ContextView) -> Diff:
    """Added, removed and changed items between two states, in the newer state's order: every
    item of both compared, the plain way. The oracle the property tests hold
    ``tree_diff.TreeDiff`` (what the engine answers with) to; not used to answer."""
    return located_diff(older, newer)[0]


def located_diff(older: ContextView, newer: ContextView) -> tuple[Diff, Located, Located]:
    """:func:`diff_views`, and where every item of each state is (what a reader showing the
    changes with their coordinates, keys and texts needs, read in the same one pass)."""
    before = _locations(older)
    after = _locations(newer)
    changed: list[ItemChange] = []
    for item_id, (item, depth, position, offset) in after.items():
        previous = before.get(item_id)
        if previous is None:
            continue
        old_item, old_depth, old_position, old_offset = previous
        fields: tuple[str, ...] = ()
        if old_item is not item:
            fields = tuple(f for f in DIFFED_FIELDS if getattr(old_item, f) != getattr(item, f))
        change = ItemChange(
            item_id,
            fields,
            depth=_move(old_depth, depth),
            position=_move(old_position, position),
            offset=_move(old_offset, offset),
        )
        if fields or change.moves():
            changed.append(change)
    diff = Diff(
        added=tuple(i for i in after if i not in before),
        removed=tuple(i for i in before if i not in after),
        changed=tuple(changed),
    )
    return diff, before, after
