"""Internal records of the tree: slotted classes, not pydantic, because there are 100,000 of them.

Sharing rules (they are what makes ``seal()`` free):
- ``Item`` is immutable. A change (replace, a render-lifecycle move) makes a new ``Item`` with the
  same id; snapshots keep pointing at the old one.
- ``Slot`` and ``Turn`` are copy-on-write by generation: the working context only mutates one whose
  ``gen`` equals its current generation, and ``seal()`` bumps the generation, so anything a
  snapshot can reach is never mutated again.
- A slot keeps its items in a list with the index of the core: offsets are ``index - core``, so
  they are dense by construction and never stored.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from engine.canonical import canonical_json, canonical_json_head, canonical_json_length

from .errors import InvalidComponent, InvalidLifecycle
from .stages import RenderLifecycle

if TYPE_CHECKING:
    from .tree import Lifecycle


def check_json_fields(content: Any, data: dict[str, Any] | None) -> None:
    """Refuse content or data fields that canonical JSON cannot write (NaN, an infinity, a set,
    an object): the content hash and every export are canonical JSON, and would fail later, far
    from the insert that let the value in. Raises ``InvalidComponent`` naming the field."""
    for name, value in [("content", content), *(data or {}).items()]:
        if type(value) is str:  # text always can
            continue
        try:
            canonical_json(value)
        except (TypeError, ValueError, RecursionError) as error:
            problem = "it is nested too deeply" if isinstance(error, RecursionError) else error
            raise InvalidComponent(
                f"component field {name!r} is not JSON, so it cannot be hashed: {problem}",
                field=name,
            ) from None


def lifecycle_of(ttl: int | None, cad: int | None) -> Lifecycle:
    if ttl is None:
        return "permanent"
    if cad is None:
        return "temporary"
    if ttl == 1 and cad == 1:
        return "sticky"
    return "cyclic"


def follows_message(ttl: int | None, cad: int | None) -> bool:
    """Permanent and sticky items move with their message (ODI); the others keep coordinates."""
    return ttl is None or (ttl == 1 and cad == 1)


def lived_ttl(ttl: int | None) -> int | None:
    """The ttl a stored item lives by. ``ttl=0``, accepted before it was refused, lived
    exactly as ``ttl=1`` does (seen in its birth episode, gone at the next advance): every
    reader of stored state (a replay, a checkpoint, an export) reads it as 1, so they agree."""
    return 1 if ttl == 0 else ttl


def check_timers(ttl: int | None, cad: int | None) -> None:
    """Spec §3: ``ttl <= 0`` and ``cad <= 0`` are refused (at insert and at load alike): an item
    alive at no episode is a mistake, and ``ttl=1`` already means "this episode only"."""
    if ttl is not None and ttl <= 0:
        raise InvalidLifecycle(
            f"ttl must be >= 1 (1 = this episode only), got ttl={ttl}", field="ttl", value=ttl
        )
    if cad is not None and cad <= 0:
        raise InvalidLifecycle(f"cadence must be >= 1, got cad={cad}", field="cad", value=cad)


def check_render_lifecycle(lifecycle: RenderLifecycle, cad: int | None) -> None:
    """The stages must be able to run (spec §5); a cadence cannot be combined with them."""
    stages = lifecycle.stages
    if not stages:
        raise InvalidLifecycle("a render lifecycle needs at least one Pos(...) stage")
    if cad is not None:
        raise InvalidLifecycle("an item cannot have both a cadence and a render lifecycle")
    for index, stage in enumerate(stages):
        if stage.ttl is None and index != len(stages) - 1:
            raise InvalidLifecycle(
                f"stage {index} ({stage.selector!r}) has no ttl but is not the last stage",
                stage=index,
            )
        if stage.ttl is not None and stage.ttl <= 0:
            raise InvalidLifecycle(
                f"stage {index} ({stage.selector!r}) has ttl={stage.ttl}; it must be >= 1",
                stage=index,
            )
        if stage.depth < -1:
            raise InvalidLifecycle(f"stage {index} ({stage.selector!r}) has depth < -1")
    cycle = lifecycle.cycle
    if type(cycle) is int and cycle < 1:
        raise InvalidLifecycle(f"cycle must be True, False or a number >= 1, got {cycle}")
    if not isinstance(cycle, (bool, int)):
        raise InvalidLifecycle(f"cycle must be True, False or a number >= 1, got {cycle!r}")


class Item:
    __slots__ = (
        "_hash",
        "born_episode",
        "cad",
        "content",
        "created_at_ns",
        "creation_index",
        "data",
        "id",
        "key",
        "lifecycle",
        "node_type",
        "passes",
        "priority",
        "role",
        "stage",
        "tags",
        "template_id",
        "ttl",
    )

    def __init__(
        self,
        *,
        id: str,
        node_type: str,
        content: Any,
        key: str | None,
        tags: tuple[str, ...],
        ttl: int | None,
        cad: int | None,
        priority: int,
        role: str | None,
        created_at_ns: int,
        creation_index: int,
        born_episode: int,
        data: dict[str, Any] | None = None,
        template_id: str | None = None,
        lifecycle: RenderLifecycle | None = None,
        stage: int = 0,
        passes: int = 0,
    ) -> None:
        self.id = id
        self.node_type = node_type
        self.content = content
        self.key = key
        self.tags = tags
        self.ttl = ttl
        self.cad = cad
        self.priority = priority
        self.role = role
        self.created_at_ns = created_at_ns
        self.creation_index = creation_index
        self.born_episode = born_episode
        self.data = data
        self.template_id = template_id
        self.lifecycle = lifecycle
        self.stage = stage
        self.passes = passes
        self._hash: str | None = None

    def evolve(self, **changes: Any) -> Item:
        """A new version of this item (same id unless given) with some fields changed."""
        fields = {name: getattr(self, name) for name in self.__slots__ if name != "_hash"}
        fields.update(changes)
        return Item(**fields)

    @property
    def kind(self) -> Lifecycle:
        return lifecycle_of(self.ttl, self.cad)

    @property
    def follows(self) -> bool:
        return follows_message(self.ttl, self.cad)

    @property
    def expires_at_episode(self) -> int | None:
        return None if self.ttl is None else self.born_episode + self.ttl

    @property
    def content_hash(self) -> str:
        if self._hash is None:
            hashed: Any = self.content
            if self.data:
                extra = {k: v for k, v in self.data.items() if k.startswith(("content_", "data_"))}
                if extra:
                    hashed = {"content": self.content, **extra}
            self._hash = hashlib.sha256(canonical_json(hashed).encode("ascii")).hexdigest()
        return self._hash

    @property
    def content_hash_known(self) -> str | None:
        """``content_hash`` if it was worked out already, else None: a reader that must not
        wait for a large content to be hashed (about 30 ms for 10 MB) asks this first."""
        return self._hash

    def text(self) -> str:
        """The content as the model reads it: text as it is, other content as canonical JSON,
        and a component without content as its own fields (``{"type":"image","url":"x"}``),
        never as ``null``."""
        content = self.content
        if isinstance(content, str):
            return content
        if content is None:
            return canonical_json({**(self.data or {}), "type": self.node_type})
        return canonical_json(content)

    def text_length(self) -> int:
        """``len(self.text())``, without building the text of content that is not a string (a
        10 MB table is counted piece by piece, never held as one string)."""
        content = self.content
        if isinstance(content, str):
            return len(content)
        if content is None:
            return canonical_json_length({**(self.data or {}), "type": self.node_type})
        return canonical_json_length(content)

    def text_head(self, limit: int) -> str:
        """The first ``limit`` characters of :meth:`text`, without building the rest of it: a
        display of one line of a 10 MB item reads a line's worth."""
        content = self.content
        if isinstance(content, str):
            return content[:limit]
        if content is None:
            return canonical_json_head({**(self.data or {}), "type": self.node_type}, limit)
        return canonical_json_head(content, limit)


class Slot:
    __slots__ = ("core", "created_at_ns", "creation_index", "gen", "id", "items", "position")

    def __init__(
        self,
        *,
        id: str,
        position: int,
        gen: int,
        created_at_ns: int,
        creation_index: int,
        items: list[Item] | None = None,
        core: int = 0,
    ) -> None:
        self.id = id
        self.position = position
        self.gen = gen
        self.created_at_ns = created_at_ns
        self.creation_index = creation_index
        self.items: list[Item] = items if items is not None else []
        self.core = core

    def copy(self, gen: int) -> Slot:
        return Slot(
            id=self.id,
            position=self.position,
            gen=gen,
            created_at_ns=self.created_at_ns,
            creation_index=self.creation_index,
            items=list(self.items),
            core=self.core,
        )

    def _index_of(self, item: Item) -> int:
        for index, candidate in enumerate(self.items):
            if candidate is item:
                return index
        raise LookupError(item.id)

    def offset_of(self, item: Item) -> int:
        return self._index_of(item) - self.core

    def at(self, offset: int) -> Item | None:
        index = self.core + offset
        if 0 <= index < len(self.items):
            return self.items[index]
        return None

    def place(self, item: Item, offset: int) -> None:
        """Insert by the Core Offset Layout Rule: push outward, clamp past the end, first = core."""
        items = self.items
        if not items:
            items.append(item)
            self.core = 0
        elif offset >= 0:
            items.insert(min(self.core + offset, len(items)), item)
        else:
            items.insert(max(self.core + offset + 1, 0), item)
            self.core += 1

    def take(self, items: Sequence[Item]) -> list[int]:
        """Remove ``items`` in one pass and return their offsets from before, in order.

        The gaps close. A removed core is replaced by +1, or by -1 when there is no post side;
        for several items at once, whatever the order, that is the nearest remaining item on
        the post side, else the nearest on the pre side.
        """
        core = self.core
        if len(items) == 1:  # the common case, without the bookkeeping
            index = self._index_of(items[0])
            del self.items[index]
            if index < core or (index == core and core >= len(self.items)):
                self.core = max(core - 1, 0)
            return [index - core]
        doomed = {id(item) for item in items}
        offsets: dict[int, int] = {}
        kept: list[Item] = []
        new_core: int | None = None
        for index, item in enumerate(self.items):
            if id(item) in doomed:
                offsets[id(item)] = index - core
                continue
            if new_core is None and index >= core:
                new_core = len(kept)
            kept.append(item)
        if len(offsets) != len(doomed):
            missing = [item.id for item in items if id(item) not in offsets]
            raise LookupError(", ".join(missing))
        self.items = kept
        self.core = new_core if new_core is not None else max(len(kept) - 1, 0)
        return [offsets[id(item)] for item in items]

    def swap(self, old: Item, new: Item) -> None:
        self.items[self._index_of(old)] = new


class Turn:
    """One message with its component slots; ``seq`` is a stable identity (depth is derived)."""

    __slots__ = ("created_at_ns", "creation_index", "gen", "id", "seq", "slots")

    def __init__(
        self,
        *,
        id: str,
        seq: int,
        gen: int,
        created_at_ns: int,
        creation_index: int,
        slots: dict[int, Slot] | None = None,
    ) -> None:
        self.id = id
        self.seq = seq
        self.gen = gen
        self.created_at_ns = created_at_ns
        self.creation_index = creation_index
        self.slots: dict[int, Slot] = slots if slots is not None else {}

    def copy(self, gen: int) -> Turn:
        return Turn(
            id=self.id,
            seq=self.seq,
            gen=gen,
            created_at_ns=self.created_at_ns,
            creation_index=self.creation_index,
            slots=dict(self.slots),
        )

    @property
    def message(self) -> Item | None:
        slot = self.slots.get(0)
        return slot.items[slot.core] if slot is not None and slot.items else None

    @property
    def role(self) -> str | None:
        message = self.message
        return message.role if message is not None else None

    def item_count(self) -> int:
        return sum(len(slot.items) for slot in self.slots.values())

    def slot_count(self) -> int:
        return len(self.slots)

    def sorted_slots(self) -> list[Slot]:
        return [self.slots[p] for p in sorted(self.slots)]


class Template:
    """The hidden schedule behind an item with a cadence (immutable; replaced on change).

    ``anchor_seq`` is the turn it follows (sticky and permanent schedules); ``anchor_depth`` the
    depth it keeps (cyclic schedules). ``live_id`` is the current instance, if any.
    """

    __slots__ = (
        "anchor_depth",
        "anchor_seq",
        "born",
        "cad",
        "id",
        "live_id",
        "offset",
        "position",
        "prototype",
    )

    def __init__(
        self,
        *,
        id: str,
        prototype: Item,
        anchor_seq: int | None,
        anchor_depth: int | None,
        position: int,
        offset: int,
        born: int,
        cad: int,
        live_id: str | None,
    ) -> None:
        self.id = id
        self.prototype = prototype
        self.anchor_seq = anchor_seq
        self.anchor_depth = anchor_depth
        self.position = position
        self.offset = offset
        self.born = born
        self.cad = cad
        self.live_id = live_id

    def evolve(self, **changes: Any) -> Template:
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return Template(**fields)

    def next_after(self, episode: int) -> int:
        """The first episode after ``episode`` at which a fresh instance appears."""
        elapsed = episode - self.born
        if elapsed < 0:
            return self.born + self.cad
        return self.born + (elapsed // self.cad + 1) * self.cad
