"""The read side of a context tree, shared by the working context and its snapshots.

A ``ContextView`` reads a ``TreeState`` (system region, the turns oldest-first, the episode and
the cadence templates). Depth is derived from a turn's place in ``turns``; nothing stores it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from json.encoder import encode_basestring_ascii as encode_string
from typing import TYPE_CHECKING, Any

from pyrsistent import PVector

from engine.canonical import canonical_json

from .errors import InvalidCoordinate
from .export import dump_state
from .nodes import Item, Slot, Template, Turn
from .query import select_nodes, walk_nodes
from .selector_ast import Complex, Compound, Coord, Exact, Part, Selector, Span, Star
from .selectors import parse_selector
from .tree import LiveView, Node, provider_role

if TYPE_CHECKING:
    from .history import History


def _slot_means_core(selector: Selector) -> Selector:
    """Indexing by two coordinates names the slot's core in either spelling, so the string form
    is narrowed to offset 0 rather than taking the slot's first item in canonical order."""
    coord = selector.single_coord
    if coord is None or coord.arity != 2:
        return selector
    core = Compound(coord=replace(coord, offset=Exact(0)), terms=())
    return replace(selector, alternatives=(Complex(parts=(core,), combinators=()),))


def part_values(part: Part | None, available: list[int]) -> list[int]:
    """The values of ``available`` (already in canonical order) that a coordinate part admits."""
    if part is None or isinstance(part, Star):
        return available
    if isinstance(part, Exact):
        return [part.value] if part.value in available else []
    assert isinstance(part, Span)
    return [v for v in available if part.lo <= v <= part.hi]


class ContextView:
    """Reading a context tree: indexing, selection, rendering and export."""

    _root_id: str
    _system: Turn
    _turns: PVector[Turn]
    _episode: int
    _templates: dict[str, Template]
    _history: History

    # -- shape -------------------------------------------------------------------------------
    @property
    def current_episode(self) -> int:
        return self._episode

    @property
    def history_depth(self) -> int:
        """The deepest history depth (0 when only the active turn exists)."""
        return len(self._turns) - 1

    @property
    def root_id(self) -> str:
        return self._root_id

    @property
    def history(self) -> History:
        """Every snapshot of the context this view belongs to (for a snapshot: its own
        context's, the later ones included)."""
        return self._history

    def live(self) -> LiveView | None:
        """The side of the working context that changes in place; None for a snapshot, which
        never changes."""
        return None

    def counters(self) -> dict[str, int] | None:
        """The id counters an export carries so a load continues them; a snapshot has none."""
        return None

    def depths(self) -> list[int]:
        """Every depth in canonical order: system, the oldest turn … the active turn."""
        return [-1, *range(len(self._turns) - 1, -1, -1)]

    def turns_oldest_first(self) -> Sequence[Turn]:
        """The turns, oldest first, the system region apart (``turn_at(depth)`` is entry
        ``len - 1 - depth``): the view's own persistent sequence, which never changes (the
        context makes a new one when it changes), so reading it costs nothing."""
        return self._turns

    def turn_at(self, depth: int) -> Turn | None:
        if depth == -1:
            return self._system
        index = len(self._turns) - 1 - depth
        if depth < -1 or index < 0:
            return None
        return self._turns[index]

    def template_of(self, item: Item) -> Template | None:
        return self._templates.get(item.template_id) if item.template_id is not None else None

    def templates(self) -> list[Template]:
        return sorted(self._templates.values(), key=lambda t: t.prototype.creation_index)

    def make_node(self, item: Item, slot: Slot, depth: int, offset: int) -> Node:
        return Node(
            node_type=item.node_type,
            id=item.id,
            parent_id=slot.id,
            depth=depth,
            position=slot.position,
            offset=offset,
            item=item,
            episode=self._episode,
            template=self.template_of(item),
        )

    # -- walking ------------------------------------------------------------------------------
    def iter_turns(self) -> Iterator[tuple[int, Turn]]:
        """``(depth, turn)`` in canonical order, the system region first as depth -1."""
        yield -1, self._system
        count = len(self._turns)
        for index, turn in enumerate(self._turns):
            yield count - 1 - index, turn

    def iter_items(self) -> Iterator[tuple[Item, int, Slot, int]]:
        """``(item, depth, slot, offset)`` for every item in canonical order."""
        for depth, turn in self.iter_turns():
            for position in sorted(turn.slots):
                slot = turn.slots[position]
                core = slot.core
                for index, item in enumerate(slot.items):
                    yield item, depth, slot, index - core

    def nodes(self) -> list[Node]:
        return [self.make_node(item, slot, d, o) for item, d, slot, o in self.iter_items()]

    def item_count(self) -> int:
        return sum(turn.item_count() for _, turn in self.iter_turns())

    def turn_counts(self) -> tuple[Sequence[int], Sequence[int]]:
        """Each turn's number of slots and of items, oldest first, the system region apart
        (``turns_oldest_first``): what a reader measures a whole tree by. A context restored
        from a packed checkpoint answers from its index, in C, until a turn is written."""
        turns = self._turns
        return [turn.slot_count() for turn in turns], [turn.item_count() for turn in turns]

    # -- addressing ----------------------------------------------------------------------------
    def __getitem__(self, address: str | tuple[int, ...]) -> Node | None:
        """``context["d0, 1, 0"]``, ``context[0, 1, 0]``; a slot (``context[0, 1]`` or
        ``context["d0, 1"]``) gives its core."""
        if isinstance(address, str):
            matches = select_nodes(self, _slot_means_core(parse_selector(address)))
            return matches[0] if matches else None
        if (
            not isinstance(address, tuple)
            or len(address) not in (2, 3)
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in address)
        ):
            raise InvalidCoordinate(
                f"index with 2 or 3 integers (depth, position[, offset]), got {address!r}",
                value=repr(address),
            )
        depth, position = address[0], address[1]
        offset = address[2] if len(address) == 3 else 0
        return self.node_at(depth, position, offset)

    def node_at(self, depth: int, position: int, offset: int) -> Node | None:
        turn = self.turn_at(depth)
        if turn is None:
            return None
        slot = turn.slots.get(position)
        if slot is None:
            return None
        item = slot.at(offset)
        return self.make_node(item, slot, depth, offset) if item is not None else None

    def select(self, selector: str | Selector) -> list[Node]:
        return select_nodes(self, selector)

    def depths_matching(self, part: Part) -> list[int]:
        """Existing depths a coordinate part admits, in canonical order, without a full walk."""
        deepest = len(self._turns) - 1
        if isinstance(part, Exact):
            return [part.value] if -1 <= part.value <= deepest else []
        if isinstance(part, Span):
            lo, hi = max(part.lo, -1), min(part.hi, deepest)
            wanted = [-1] if lo == -1 and hi >= -1 else []
            return wanted + list(range(hi, max(lo, 0) - 1, -1))
        return self.depths()

    def select_coord(self, coord: Coord) -> list[Node]:
        out: list[Node] = []
        for depth in self.depths_matching(coord.depth):
            turn = self.turn_at(depth)
            assert turn is not None
            for position in part_values(coord.position, sorted(turn.slots)):
                slot = turn.slots[position]
                offsets = list(range(-slot.core, len(slot.items) - slot.core))
                for offset in part_values(coord.offset, offsets):
                    out.append(self.make_node(slot.items[slot.core + offset], slot, depth, offset))
        return out

    def locate(self, node_ids: set[str] | frozenset[str]) -> list[Node]:
        """The nodes (turns, slots, items) with these ids, in canonical order: one walk."""
        return [node for node in walk_nodes(self) if node.id in node_ids]

    def find(self, item_id: str) -> Node | None:
        for item, depth, slot, offset in self.iter_items():
            if item.id == item_id:
                return self.make_node(item, slot, depth, offset)
        return None

    def get_by_key(self, key: str) -> Node | None:
        matches = [n for n in self.key_candidates(key)]
        return matches[0] if matches else None

    def get_by_tags(self, tags: list[str] | tuple[str, ...] | str) -> list[Node]:
        wanted = [tags] if isinstance(tags, str) else list(tags)
        if not wanted:
            return []
        candidates = self.tag_candidates(wanted[0])
        return [n for n in candidates if all(t in n.item.tags for t in wanted[1:])]  # type: ignore[union-attr]

    # Overridden by the working context, which keeps indexes; a snapshot scans.
    def key_candidates(self, key: str) -> list[Node]:
        return [self.make_node(i, s, d, o) for i, d, s, o in self.iter_items() if i.key == key]

    def tag_candidates(self, tag: str) -> list[Node]:
        return [self.make_node(i, s, d, o) for i, d, s, o in self.iter_items() if tag in i.tags]

    def mortal_candidates(self) -> list[Node]:
        """Every item with a ttl (temporary, sticky, cyclic), in canonical order: all that a
        selector on a ttl's numbers or on those lifecycles can match (the working context
        keeps them indexed)."""
        return [self.make_node(i, s, d, o) for i, d, s, o in self.iter_items() if i.ttl is not None]

    def resolve_time(self, selector: Selector) -> ContextView:
        """The state a time-qualified selector (``@t-1 …``) reads."""
        assert selector.time is not None
        if selector.time.kind == "now":
            return self
        return self._history.view_at(selector.time)

    # -- rendering -----------------------------------------------------------------------------
    def provider_messages(self) -> Iterator[tuple[str, str]]:
        """(role, text) of every item, in canonical order: what the model would be sent."""
        for depth, turn in self.iter_turns():
            turn_role = turn.role
            for position in sorted(turn.slots):
                for item in turn.slots[position].items:
                    yield provider_role(depth, item.role, turn_role), item.text()

    def render_provider(self) -> list[dict[str, str]]:
        """What the model would be sent: one entry per item, in canonical order."""
        return [{"content": text, "role": role} for role, text in self.provider_messages()]

    def render_provider_json(self) -> str:
        """``canonical_json(render_provider())``, encoded in one pass (no dict per item).

        The same text, not a second encoder: each entry is an object of two strings whose keys
        are already in sorted order, and ``encode_string`` is the very function the canonical
        encoder quotes a string with (``ensure_ascii=True``). A test compares the two.
        """
        parts = [
            f'{{"content":{encode_string(text)},"role":{encode_string(role)}}}'
            for role, text in self.provider_messages()
        ]
        return "[" + ",".join(parts) + "]"

    def model_dump(self) -> dict[str, Any]:
        """The whole tree, losslessly: ``Context.load(view.model_dump())`` gives the same tree."""
        return dump_state(self)

    def model_dump_json(self) -> str:
        return canonical_json(self.model_dump())
