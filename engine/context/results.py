"""What a context command did, as values: one type per family of commands.

``insert``, ``update`` and ``message`` place an item (:class:`Placed`), ``delete`` removes some
(:class:`Deleted`), ``advance`` starts an episode (:class:`Advanced`) and ``seal`` takes a
snapshot (:class:`Sealed`). Each carries its changelog (None when the context records none).

An event stores a result's JSON form (:meth:`to_json`: the keys and order it always had), and a
replay compares the result it gets with that form; ``ctx … --json`` and the web answer print it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

from .changelog import Changelog


def _with_changes(out: dict[str, Any], changes: Changelog | None) -> dict[str, Any]:
    if changes is not None:
        out["changes"] = changes.to_json()
    return out


@dataclass(frozen=True, slots=True)
class Placed:
    """``insert``, ``update`` or ``message``: the item ``id`` now at ``coordinates``."""

    id: str
    coordinates: tuple[int, ...]
    changes: Changelog | None = None

    def to_json(self) -> dict[str, Any]:
        return _with_changes({"id": self.id, "coordinates": list(self.coordinates)}, self.changes)


@dataclass(frozen=True, slots=True)
class Deleted:
    """``delete``: the ids of the items it removed, in the order removed."""

    deleted: tuple[str, ...]
    changes: Changelog | None = None

    def to_json(self) -> dict[str, Any]:
        return _with_changes({"deleted": list(self.deleted)}, self.changes)


@dataclass(frozen=True, slots=True)
class Advanced:
    """``advance``: the context is now in ``episode``; ``snapshot`` sealed the one before."""

    episode: int
    snapshot: str
    changes: Changelog | None = None

    def to_json(self) -> dict[str, Any]:
        return _with_changes({"episode": self.episode, "snapshot": self.snapshot}, self.changes)


@dataclass(frozen=True, slots=True)
class Sealed:
    """``seal``: the id of the snapshot it took."""

    snapshot: str
    changes: Changelog | None = None

    def to_json(self) -> dict[str, Any]:
        return _with_changes({"snapshot": self.snapshot}, self.changes)


ContextResult: TypeAlias = Placed | Deleted | Advanced | Sealed
