"""How the inspector says a diff (``engine.context.tree_diff.TreeDiff``): each changed item as
people say it (:func:`change_note`: ``depth 5→6``, ``ttl 3→2``, ``content``), and the items the
view shown lacks as ghosts where they were (:func:`ghosts_of`)."""

from __future__ import annotations

from engine.context.nodes import Slot
from engine.context.tree_diff import ItemDelta, Placed, TreeDiff, turn_by_seq

from .types import Ghost, Mark

NOTE_PARTS = 2  # what a row says changed, at most (then "…")


def note_of(diff: TreeDiff, item_id: str, turn_seq: int) -> str:
    """What changed, as a row says it: ``depth 5→6 · ttl 3→2 · content``."""
    delta = diff.changed.get(item_id)
    if delta is not None:
        return change_note(delta)
    shift = diff.shift_of(turn_seq)
    return f"depth {shift[0]}→{shift[1]}" if shift is not None else ""


SHOWN_VALUES = {  # fields whose values a note gives (the others are named only)
    "ttl": lambda item: "∞" if item.ttl is None else str(item.ttl),
    "cad": lambda item: "—" if item.cad is None else str(item.cad),
    "priority": lambda item: str(item.priority),
    "born_episode": lambda item: str(item.born_episode),
    "stage": lambda item: str(item.stage + 1),
    "passes": lambda item: str(item.passes + 1),
}
FIELD_NAMES = {"born_episode": "born", "passes": "pass", "template_id": "template"}


def change_note(delta: ItemDelta) -> str:
    """``depth 5→6 · offset 1→0 · ttl 3→2 · content``: the moves, then each changed field
    (with its values where they are short numbers), at most ``NOTE_PARTS`` of them."""
    change = delta.change
    parts = [f"{name} {before}→{after}" for name, (before, after) in change.moves().items()]
    for name in change.fields:
        label = FIELD_NAMES.get(name, name)
        shown = SHOWN_VALUES.get(name)
        if shown is None:
            parts.append(label)
        else:
            parts.append(f"{label} {shown(delta.before)}→{shown(delta.after)}")
    if len(parts) > NOTE_PARTS:
        parts = [*parts[:NOTE_PARTS], "…"]
    return " · ".join(parts)


# -- ghosts: what the view shown lacks, drawn where it was -----------------------------------------
def ghosts_of(diff: TreeDiff, shown_is_newer: bool) -> tuple[Ghost, ...]:
    """The items the other state has and the view shown lacks (the removed ones when the newer
    is shown, else the added ones), each placed where it was: in its turn if the view shown
    still has it, in its slot after the nearest neighbour the view still has; else in the turn
    now at the depth it had."""
    missing = diff.removed if shown_is_newer else diff.added
    if not missing:
        return ()
    shown = diff.newer if shown_is_newer else diff.older
    mark: Mark = "removed" if shown_is_newer else "added"
    present: dict[int, frozenset[str]] = {}  # a shown slot's item ids, by the slot's id()

    def ids_of(slot: Slot) -> frozenset[str]:
        key = id(slot)
        if key not in present:
            present[key] = frozenset(item.id for item in slot.items)
        return present[key]

    out: list[Ghost] = []
    for placed in missing.values():
        target = turn_by_seq(shown, placed.turn_seq)
        position = placed.slot.position
        if target is not None:
            after = None
            slot = target.slots.get(position)
            if slot is not None:
                here = ids_of(slot)
                for index in range(placed.slot_index - 1, -1, -1):  # the nearest one still there
                    neighbour = placed.slot.items[index].id
                    if neighbour in here:
                        after = neighbour
                        break
            out.append(_ghost(placed, mark, target.seq, after, same_turn=True))
            continue
        target_turn = shown.turn_at(min(placed.depth, shown.history_depth))
        assert target_turn is not None  # a view always has its system region and active turn
        out.append(_ghost(placed, mark, target_turn.seq, None, same_turn=False))
    return tuple(out)


def _ghost(placed: Placed, mark: Mark, seq: int, after: str | None, *, same_turn: bool) -> Ghost:
    return Ghost(
        item=placed.item,
        mark=mark,
        depth=placed.depth,
        position=placed.slot.position,
        offset=placed.offset,
        turn_seq=seq,
        after=after,
        same_turn=same_turn,
    )
