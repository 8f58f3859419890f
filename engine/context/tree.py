"""The shapes every reader of a context tree shares: a picture of the tree, a node as callers
see it, a diff, and what makes a view "live".

This module imports nothing else of the package at run time, so the modules that read the tree
(``view``, ``query``, ``history``, ``export``, ``context``) can all use it without importing
each other in a circle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from pyrsistent import PVector

    from .nodes import Item, Template, Turn

SYSTEM_SEQ = -1
"""The turn seq of the system region (depth -1), which never moves."""

Lifecycle = Literal["permanent", "temporary", "sticky", "cyclic"]
NodeKind = Literal["root", "system", "turn", "slot"]


class TreeState:
    """One immutable-by-convention picture of the tree (what a snapshot holds)."""

    __slots__ = ("episode", "root_id", "system", "templates", "turns")

    def __init__(
        self,
        *,
        root_id: str,
        system: Turn,
        turns: PVector[Turn],
        episode: int,
        templates: dict[str, Template],
    ) -> None:
        self.root_id = root_id
        self.system = system
        self.turns = turns
        self.episode = episode
        self.templates = templates


class Node:
    """A node as callers see it: the record plus where it sits now and what its timers say."""

    __slots__ = (
        "depth",
        "episode",
        "id",
        "item",
        "node_type",
        "offset",
        "parent_id",
        "position",
        "template",
    )

    def __init__(
        self,
        *,
        node_type: str,
        id: str,
        parent_id: str | None,
        depth: int | None,
        position: int | None = None,
        offset: int | None = None,
        item: Item | None = None,
        episode: int = 0,
        template: Template | None = None,
    ) -> None:
        self.node_type = node_type
        self.id = id
        self.parent_id = parent_id
        self.depth = depth
        self.position = position
        self.offset = offset
        self.item = item
        self.episode = episode
        self.template = template

    # -- where ---------------------------------------------------------------------------
    @property
    def coordinates(self) -> tuple[int, ...]:
        parts = (self.depth, self.position, self.offset)
        return tuple(p for p in parts if p is not None)

    @property
    def is_item(self) -> bool:
        return self.item is not None

    # -- what (items) ----------------------------------------------------------------------
    def _field(self, name: str) -> Any:
        return getattr(self.item, name) if self.item is not None else None

    @property
    def content(self) -> Any:
        return self._field("content")

    @property
    def key(self) -> str | None:
        return self._field("key")  # type: ignore[no-any-return]

    @property
    def tags(self) -> list[str]:
        return list(self.item.tags) if self.item is not None else []

    @property
    def ttl(self) -> int | None:
        return self._field("ttl")  # type: ignore[no-any-return]

    @property
    def cad(self) -> int | None:
        return self._field("cad")  # type: ignore[no-any-return]

    @property
    def priority(self) -> int:
        return self.item.priority if self.item is not None else 0

    @property
    def role(self) -> str | None:
        return self._field("role")  # type: ignore[no-any-return]

    @property
    def born_episode(self) -> int | None:
        return self._field("born_episode")  # type: ignore[no-any-return]

    @property
    def created_at_ns(self) -> int | None:
        return self._field("created_at_ns")  # type: ignore[no-any-return]

    @property
    def creation_index(self) -> int | None:
        return self._field("creation_index")  # type: ignore[no-any-return]

    @property
    def content_hash(self) -> str | None:
        return self.item.content_hash if self.item is not None else None

    @property
    def lifecycle(self) -> Lifecycle | None:
        return self.item.kind if self.item is not None else None

    @property
    def template_id(self) -> str | None:
        return self._field("template_id")  # type: ignore[no-any-return]

    # -- timers ----------------------------------------------------------------------------
    @property
    def age(self) -> int | None:
        if self.item is None:
            return None
        return self.episode - self.item.born_episode

    @property
    def remaining(self) -> int | None:
        if self.item is None or self.item.ttl is None:
            return None
        return self.item.ttl - (self.episode - self.item.born_episode)

    @property
    def expires_at_episode(self) -> int | None:
        return self.item.expires_at_episode if self.item is not None else None

    @property
    def next_rehydration_episode(self) -> int | None:
        return self.template.next_after(self.episode) if self.template is not None else None

    @property
    def rehydrates_in(self) -> int | None:
        """Episodes until its schedule makes the next fresh instance (1: at the next advance);
        None for an item no schedule makes."""
        if self.template is None:
            return None
        return self.template.next_after(self.episode) - self.episode

    @property
    def stage(self) -> int | None:
        if self.item is None or self.item.lifecycle is None:
            return None
        return self.item.stage

    def model_dump(self) -> dict[str, Any]:
        if self.item is None:
            return {
                "id": self.id,
                "node_type": self.node_type,
                "parent_id": self.parent_id,
                "coordinates": list(self.coordinates),
            }
        assert self.depth is not None and self.position is not None and self.offset is not None
        return dump_item(self.item, self.parent_id, (self.depth, self.position, self.offset))

    def __repr__(self) -> str:
        coords = ",".join(str(c) for c in self.coordinates)
        if self.item is None:
            return f"<Node {self.node_type} ({coords}) id={self.id}>"
        return f"<Node {self.node_type} ({coords}) id={self.id} key={self.key!r} {self.content!r}>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Node):
            return NotImplemented
        return (
            self.id == other.id
            and self.coordinates == other.coordinates
            and self.item is other.item
            and self.episode == other.episode
        )

    __hash__ = None  # type: ignore[assignment]


def dump_item(
    item: Item, parent_id: str | None, coords: tuple[int, int, int] | None
) -> dict[str, Any]:
    """The lossless export of one item (canonical fields first, then what this project adds)."""
    out: dict[str, Any] = {
        "id": item.id,
        "parent_id": parent_id,
        "node_type": item.node_type,
        "offset": coords[2] if coords is not None else None,
        "ttl": item.ttl,
        "cad": item.cad,
        "created_at_ns": item.created_at_ns,
        "creation_index": item.creation_index,
        "key": item.key,
        "tags": list(item.tags),
        "content": item.content,
        "priority": item.priority,
        "born_episode": item.born_episode,
        "content_hash": item.content_hash,
        "role": item.role,
    }
    if coords is not None:
        out["coordinates"] = list(coords)
    if item.template_id is not None:
        out["template_id"] = item.template_id
    if item.lifecycle is not None:
        out["render_lifecycle"] = {
            **item.lifecycle.model_dump(),
            "stage": item.stage,
            "passes": item.passes,
        }
    if item.data:
        out["data"] = item.data
    return out


def provider_role(depth: int, item_role: str | None, turn_role: str | None) -> str:
    """The role an item is sent with: system in the system region, else its own role, else
    its turn's message's, else user (a turn with no message yet)."""
    return "system" if depth == -1 else item_role or turn_role or "user"


# -- diffs ---------------------------------------------------------------------------------------
Move = tuple[int, int]  # (before, after)


@dataclass(frozen=True, slots=True)
class ItemChange:
    """How one item that is in both states differs: the fields that changed, and where it moved
    (each ``(before, after)``, or None where that coordinate stayed)."""

    id: str
    fields: tuple[str, ...] = ()
    depth: Move | None = None
    position: Move | None = None
    offset: Move | None = None

    def moves(self) -> dict[str, Move]:
        """The coordinates that changed, by name: ``{"depth": (3, 4)}``."""
        moved = {"depth": self.depth, "position": self.position, "offset": self.offset}
        return {name: move for name, move in moved.items() if move is not None}

    def to_dict(self) -> dict[str, Any]:
        """The spec's form: ``{"id", "fields", "offset_changed"?, "position_changed"?,
        "depth_changed"?}``, each move as ``[before, after]``."""
        out: dict[str, Any] = {"id": self.id, "fields": list(self.fields)}
        for name, (before, after) in self.moves().items():
            out[f"{name}_changed"] = [before, after]
        return out


@dataclass(frozen=True, slots=True)
class Diff:
    """From an older state to a newer one: the ids added, removed and changed, each in its
    state's canonical order (``removed`` in the older one's)."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[ItemChange, ...] = ()

    def change_of(self, item_id: str) -> ItemChange | None:
        return next((change for change in self.changed if change.id == item_id), None)

    @property
    def counts(self) -> tuple[int, int, int]:
        """``(added, removed, changed)``."""
        return len(self.added), len(self.removed), len(self.changed)

    def to_dict(self) -> dict[str, Any]:
        """The spec's JSON form (§7): ``{"added": [ids], "removed": [ids], "changed": [...]}``."""
        return {
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": [change.to_dict() for change in self.changed],
        }


# -- live views ----------------------------------------------------------------------------------
class LiveView(Protocol):
    """A view that changes in place: the working context. A snapshot never changes, so readers
    that redraw only what changed ask a view for its live side (``view.live()``) and get None
    for a snapshot."""

    @property
    def journal_token(self) -> int:
        """Where the record of written turns is now; see :meth:`turns_changed_since`."""
        ...

    def turns_changed_since(self, token: int) -> set[int] | None:
        """The seqs of turns written or added since ``token``, or None: re-read everything."""
        ...

    def find(self, item_id: str) -> Node | None:
        """The item with this id, wherever it has moved (an index lookup)."""
        ...
