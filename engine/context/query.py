"""Evaluating parsed selectors against a context view (spec §6).

Coordinates walk straight to the addressed turns and slots; ``#key`` and ``+tag`` start from the
working context's indexes; everything else is a scan in canonical order, matched right to left
like CSS. Results always come back in canonical order (§8).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .errors import InvalidSelector
from .selector_ast import (
    Attr,
    Complex,
    Compound,
    Coord,
    Exact,
    Flag,
    HasTag,
    KeyIs,
    Part,
    Region,
    Selector,
    Span,
    Star,
    TypeIs,
)
from .selectors import parse_selector
from .tree import Node

if TYPE_CHECKING:
    from .view import ContextView

STRUCTURE_TYPES = frozenset({"root", "system", "turn", "slot"})

# Fields an attribute filter may name (anything else is a typo worth reporting).
FIELDS = frozenset(
    {
        "id",
        "parent_id",
        "node_type",
        "type",
        "key",
        "ttl",
        "cad",
        "cadence",
        "priority",
        "role",
        "content",
        "tags",
        "born_episode",
        "created_at_ns",
        "creation_index",
        "content_hash",
        "lifecycle",
        "template_id",
        "age",
        "remaining",
        "expires_at_episode",
        "next_rehydration_episode",
        "rehydrates_in",
        "stage",
        "depth",
        "position",
        "offset",
    }
)
ALIASES = {"type": "node_type", "cadence": "cad"}


def select_nodes(view: ContextView, selector: str | Selector) -> list[Node]:
    parsed = selector if isinstance(selector, Selector) else parse_selector(selector)
    check_fields(parsed)
    target = view.resolve_time(parsed) if parsed.is_time_qualified else view
    fast = _fast_path(target, parsed)
    if fast is not None:
        return fast
    return [node for node, chain in _walk(target) if _matches_any(parsed.alternatives, chain)]


def check_fields(selector: Selector) -> None:
    for complex_ in selector.alternatives:
        for compound in complex_.parts:
            for term in compound.terms:
                if isinstance(term, Attr) and term.name not in FIELDS:
                    position = selector.source.find(term.name)
                    raise InvalidSelector(
                        f"unknown field {term.name!r} (fields: {', '.join(sorted(FIELDS))})",
                        selector=selector.source,
                        position=max(position, 0),
                        token=term.name,
                    )


def _fast_path(view: ContextView, selector: Selector) -> list[Node] | None:
    """Index-backed answers for the common one-compound selectors; ``None`` = scan instead."""
    results: list[Node] = []
    for complex_ in selector.alternatives:
        if len(complex_.parts) != 1:
            return None
        compound = complex_.parts[0]
        if _names_structure(compound):
            return None
        if compound.coord is not None:
            candidates = view.select_coord(compound.coord)
            rest = compound.terms
        elif compound.terms and isinstance(compound.terms[0], KeyIs):
            candidates = view.key_candidates(compound.terms[0].key)
            rest = compound.terms[1:]
        elif compound.terms and isinstance(compound.terms[0], HasTag):
            candidates = view.tag_candidates(compound.terms[0].tag)
            rest = compound.terms[1:]
        elif any(_needs_ttl(t) for t in compound.terms):
            candidates = view.mortal_candidates()
            rest = compound.terms
        else:
            return None
        results.extend(n for n in candidates if all(_term_matches(t, n) for t in rest))
    if len(selector.alternatives) > 1:
        unique = {id(n.item): n for n in results}
        results = list(unique.values())
    results.sort(key=canonical_key)
    return results


# Fields whose value is None for an item without a ttl; a term comparing one with a number by
# order (or equal to something) matches only items with a ttl (``_compare``: None is never
# ordered, and equals only None).
TTL_FIELDS = frozenset({"ttl", "remaining", "expires_at_episode"})
MORTAL_FLAGS = frozenset({"temporary", "sticky", "cyclic"})  # each is a ttl's lifecycle


def _needs_ttl(term: object) -> bool:
    """Whether ``term`` matches only items with a ttl: the working context's index of them
    (``mortal_candidates``) answers a compound that has one, instead of a scan."""
    if isinstance(term, Flag):
        return term.name in MORTAL_FLAGS
    if isinstance(term, Attr) and ALIASES.get(term.name, term.name) in TTL_FIELDS:
        return term.op in ("<", "<=", ">", ">=") or (term.op == "=" and term.value is not None)
    return False


INDEXED_DEPTHS = 100
"""A coordinate selector spanning at most this many depths is read without a walk."""


def index_served(selector: Selector) -> bool:
    """Whether :func:`select_nodes` answers ``selector`` from the working context's indexes
    and the addressed turns (``#key``, ``+tag``, coordinates over a few depths) rather than by
    scanning every node: a reader may match it at once, and send the others off its path."""
    if selector.is_time_qualified:
        return False
    for complex_ in selector.alternatives:
        if len(complex_.parts) != 1:
            return False
        compound = complex_.parts[0]
        if _names_structure(compound):
            return False
        coord = compound.coord
        if coord is not None:
            depth = coord.depth
            if isinstance(depth, Star):
                return False
            if isinstance(depth, Span) and depth.hi - depth.lo >= INDEXED_DEPTHS:
                return False
        elif not (compound.terms and isinstance(compound.terms[0], KeyIs | HasTag)) and not any(
            _needs_ttl(t) for t in compound.terms
        ):
            return False
    return True


def canonical_key(node: Node) -> tuple[int, int, int, int]:
    depth = node.depth if node.depth is not None else -2
    return (
        0 if depth < 0 else 1,
        -depth,
        node.position if node.position is not None else 0,
        node.offset if node.offset is not None else 0,
    )


def _names_structure(compound: Compound) -> bool:
    return any(isinstance(t, TypeIs) and t.node_type in STRUCTURE_TYPES for t in compound.terms)


def _walk(view: ContextView) -> Iterator[tuple[Node, list[Node]]]:
    """Every node in canonical order with its chain ``[node, parent, …, root]``."""
    root = Node(node_type="root", id=view.root_id, parent_id=None, depth=None)
    episode = view.current_episode
    for depth, turn in view.iter_turns():
        turn_node = Node(
            node_type="system" if depth == -1 else "turn",
            id=turn.id,
            parent_id=view.root_id,
            depth=depth,
            episode=episode,
        )
        yield turn_node, [turn_node, root]
        for position in sorted(turn.slots):
            slot = turn.slots[position]
            slot_node = Node(
                node_type="slot",
                id=slot.id,
                parent_id=turn.id,
                depth=depth,
                position=position,
                episode=episode,
            )
            yield slot_node, [slot_node, turn_node, root]
            for index, item in enumerate(slot.items):
                node = view.make_node(item, slot, depth, index - slot.core)
                yield node, [node, slot_node, turn_node, root]


def walk_nodes(view: ContextView) -> Iterator[Node]:
    """Every node of ``view`` in canonical order (the system region, turns, slots, items)."""
    for node, _chain in _walk(view):
        yield node


def _matches_any(alternatives: tuple[Complex, ...], chain: list[Node]) -> bool:
    return any(_matches_complex(c, chain) for c in alternatives)


def _matches_complex(complex_: Complex, chain: list[Node]) -> bool:
    parts = complex_.parts
    subject = parts[-1]
    node = chain[0]
    if not _compound_matches(subject, node, subject_position=True):
        return False
    return _match_ancestors(parts, complex_.combinators, len(parts) - 2, chain, 1)


def _match_ancestors(
    parts: tuple[Compound, ...],
    combinators: tuple[str, ...],
    part_index: int,
    chain: list[Node],
    chain_index: int,
) -> bool:
    """Match ``parts[part_index]`` against the ancestors from ``chain[chain_index]`` upward."""
    if part_index < 0:
        return True
    combinator = combinators[part_index]
    compound = parts[part_index]
    if combinator == ">":
        if chain_index >= len(chain):
            return False
        return _compound_matches(compound, chain[chain_index], subject_position=False) and (
            _match_ancestors(parts, combinators, part_index - 1, chain, chain_index + 1)
        )
    for index in range(chain_index, len(chain)):
        if _compound_matches(compound, chain[index], subject_position=False) and (
            _match_ancestors(parts, combinators, part_index - 1, chain, index + 1)
        ):
            return True
    return False


def _compound_matches(compound: Compound, node: Node, *, subject_position: bool) -> bool:
    if subject_position and not _names_structure(compound) and not node.is_item:
        return False
    if compound.coord is not None and not _coord_matches(compound.coord, node):
        return False
    return all(_term_matches(t, node) for t in compound.terms)


def _part_matches(part: Part | None, value: int | None) -> bool:
    if part is None:
        return True
    if value is None:
        return False
    if isinstance(part, Star):
        return True
    if isinstance(part, Exact):
        return value == part.value
    assert isinstance(part, Span)
    return part.lo <= value <= part.hi


def _coord_matches(coord: Coord, node: Node) -> bool:
    return (
        _part_matches(coord.depth, node.depth)
        and _part_matches(coord.position, node.position)
        and _part_matches(coord.offset, node.offset)
    )


def _term_matches(term: object, node: Node) -> bool:
    if isinstance(term, KeyIs):
        return node.key == term.key
    if isinstance(term, HasTag):
        return node.item is not None and term.tag in node.item.tags
    if isinstance(term, TypeIs):
        if term.node_type == "item":
            return node.is_item
        return node.node_type == term.node_type
    if isinstance(term, Region):
        depth = node.depth
        if depth is None:
            return False
        if term.name == "sys":
            return depth == -1
        if term.name == "ah":
            return depth == 0
        return depth >= 1
    if isinstance(term, Flag):
        return node.lifecycle == term.name
    if isinstance(term, Attr):
        return _compare(field_value(node, term.name), term.op, term.value)
    if isinstance(term, Coord):
        return _coord_matches(term, node)
    raise TypeError(f"unknown selector term {term!r}")


def field_value(node: Node, name: str) -> Any:
    return getattr(node, ALIASES.get(name, name))


def _compare(actual: Any, op: str, expected: Any) -> bool:
    if isinstance(actual, list):
        found = expected in actual
        return found if op == "=" else (not found if op == "!=" else False)
    if op == "=":
        return _equal(actual, expected)
    if op == "!=":
        return not _equal(actual, expected)
    if actual is None or expected is None:
        return False
    numbers = (int, float)
    comparable = (
        isinstance(actual, numbers)
        and isinstance(expected, numbers)
        and not isinstance(actual, bool)
        and not isinstance(expected, bool)
    ) or (isinstance(actual, str) and isinstance(expected, str))
    if not comparable:
        return False
    if op == "<":
        return bool(actual < expected)
    if op == "<=":
        return bool(actual <= expected)
    if op == ">":
        return bool(actual > expected)
    return bool(actual >= expected)


def _equal(actual: Any, expected: Any) -> bool:
    if expected is None or actual is None:
        return actual is expected
    if isinstance(actual, bool) or isinstance(expected, bool):
        return actual is expected
    if isinstance(actual, (int, float)) and isinstance(expected, (int, float)):
        return actual == expected
    if isinstance(actual, (int, float)) and isinstance(expected, str):
        return str(actual) == expected
    return bool(actual == expected)
