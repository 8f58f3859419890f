"""``:``: where a typed coordinate (``d3, 1, 0``, ``3,1,0``), depth (``d3``, ``3``) or ``#key``
is in a context view, or what is wrong with it, in words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.context import InvalidSelector
from engine.context.selector_ast import Exact, KeyIs, Part
from engine.context.selectors import check_input_selector
from engine.visible import visible

if TYPE_CHECKING:
    from engine.context import ContextView

WHAT = "a coordinate (d3, 1, 0), a depth (d3) or a #key"


class JumpError(ValueError):
    """Why a typed place cannot be gone to (shown to the user as it is)."""


@dataclass(frozen=True, slots=True)
class Place:
    """A turn (``position`` None), a slot (``offset`` None) or an item of a view."""

    depth: int
    position: int | None = None
    offset: int | None = None

    @property
    def label(self) -> str:
        parts = [self.depth, self.position, self.offset]
        shown = [str(part) for part in parts if part is not None]
        return f"d{self.depth}" if len(shown) == 1 else f"({','.join(shown)})"


def _exact(part: Part | None, role: str) -> int | None:
    if part is None:
        return None
    if not isinstance(part, Exact):
        raise JumpError(f"the {role} must be one number: ':' goes to one place (/ finds many)")
    return part.value


def find_place(view: ContextView, text: str) -> Place:
    """Where ``text`` is in ``view``; raises JumpError saying what is wrong."""
    try:
        parsed = check_input_selector(text.strip())
    except InvalidSelector as error:
        raise JumpError(
            f"{error.reason} (at character {error.position + 1}); type {WHAT}"
        ) from None
    alternatives = parsed.alternatives
    compound = alternatives[0].parts[0] if len(alternatives[0].parts) == 1 else None
    if parsed.is_time_qualified or len(alternatives) > 1 or compound is None:
        raise JumpError(f"':' goes to one place: type {WHAT}; / finds a selector's matches")
    if compound.coord is not None and not compound.terms:
        coord = compound.coord
        depth = _exact(coord.depth, "depth")
        assert depth is not None  # a coordinate always has a depth
        place = Place(depth, _exact(coord.position, "position"), _exact(coord.offset, "offset"))
        return _checked(view, place)
    if compound.coord is None and len(compound.terms) == 1:
        term = compound.terms[0]
        if isinstance(term, KeyIs):
            node = view.get_by_key(term.key)
            if node is None or node.depth is None or node.position is None:
                key = f"#{visible(term.key, limit=80)}"
                raise JumpError(f"no item has the key {key}{_why_gone(view, term.key)}")
            return Place(node.depth, node.position, node.offset)
    raise JumpError(f"':' goes to {WHAT}, not to {visible(text.strip(), limit=80)!r}")


def _why_gone(view: ContextView, key: str) -> str:
    """Why a schedule's item is not there now (``: it expired at e7 (ttl 2), next instance at
    e10``), from the schedule's phase; empty when no schedule has the key."""
    episode = view.current_episode
    for template in view.templates():
        prototype = template.prototype
        if prototype.key != key or prototype.ttl is None:
            continue
        elapsed = episode - template.born
        born = template.born + (elapsed // template.cad) * template.cad if elapsed >= 0 else None
        expired = born + prototype.ttl if born is not None else None
        gone = ""
        if expired is not None and expired <= episode:
            gone = f"it expired at e{expired} (ttl {prototype.ttl}), "
        return f": {gone}next instance at e{template.next_after(episode)}"
    return ""


def _checked(view: ContextView, place: Place) -> Place:
    """``place`` if it is in ``view``, else a JumpError naming the part that is not."""
    deepest = view.history_depth
    turn = view.turn_at(place.depth)
    if turn is None:
        raise JumpError(f"there is no depth {place.depth}: this view has d-1 to d{deepest}")
    if place.position is None:
        return place
    slot = turn.slots.get(place.position)
    if slot is None:
        positions = ", ".join(str(position) for position in sorted(turn.slots)) or "none"
        raise JumpError(
            f"turn d{place.depth} has no slot {place.position} (its slots: {positions})"
        )
    if place.offset is None:
        return place
    if not 0 <= slot.core + place.offset < len(slot.items):
        low, high = -slot.core, len(slot.items) - 1 - slot.core
        raise JumpError(
            f"slot ({place.depth},{place.position}) has no offset {place.offset} "
            f"(its offsets: {low} to {high})"
        )
    return place
