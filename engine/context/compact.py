"""A compact, fast form of a context for the workspace's checkpoints.

The lossless export (``export.py``) is for people and other programs: one JSON object per node,
every redundant field spelled out, and a loader that checks each of them. Opening a workspace
needs something else: the same state, read back in a fraction of the time. Here every record is
a positional JSON array and nothing redundant is stored (no coordinates, depths, parent ids or
hashes: they follow from the tree), so 100,000 items load in well under a second.

A checkpoint is a cache. The store checks its bytes against a SHA-256 digest before handing it
over, and the workspace replays the log instead if loading fails, so the checks here are about
shape: anything malformed raises ``InvalidExport`` rather than building a broken tree.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from .clock import Clock, IdFactory
from .context import Context
from .errors import ContextError, InvalidExport
from .nodes import Item, Slot, Template, Turn, lived_ttl
from .stages import Pos, RenderLifecycle

FORMAT = "pact-context-compact"
VERSION = 1


def _item(item: Item) -> list[Any]:
    lifecycle = None
    if item.lifecycle is not None:
        stages = [[stage.selector, stage.ttl] for stage in item.lifecycle.stages]
        lifecycle = [stages, item.lifecycle.cycle]
    return [
        item.id,
        item.node_type,
        item.content,
        item.key,
        list(item.tags),
        item.ttl,
        item.cad,
        item.priority,
        item.role,
        item.created_at_ns,
        item.creation_index,
        item.born_episode,
        item.data,
        item.template_id,
        lifecycle,
        item.stage,
        item.passes,
    ]


def _turn(turn: Turn) -> list[Any]:
    slots = [
        [
            slot.id,
            slot.position,
            slot.created_at_ns,
            slot.creation_index,
            slot.core,
            [_item(item) for item in slot.items],
        ]
        for slot in turn.sorted_slots()
    ]
    return [turn.id, turn.seq, turn.created_at_ns, turn.creation_index, slots]


def dump_compact(context: Context) -> dict[str, Any]:
    """The working state (not the snapshot history) as compact JSON-native data."""
    counters = context.counters()
    turns = [turn for _depth, turn in context.iter_turns()]  # the system region first
    return {
        "format": FORMAT,
        "version": VERSION,
        "root": context.root_id,
        "episode": context.current_episode,
        "counters": [counters["creation_index"], counters["next_turn_seq"]],
        "system": _turn(turns[0]),
        "turns": [_turn(turn) for turn in turns[1:]],
        "templates": [
            [
                t.id,
                t.anchor_seq,
                t.anchor_depth,
                t.position,
                t.offset,
                t.born,
                t.cad,
                t.live_id,
                _item(t.prototype),
            ]
            for t in context.templates()
        ],
    }


def _load_item(row: list[Any], new: Any = object.__new__) -> Item:
    # Filled slot by slot rather than through Item(...): keyword calls cost twice as much, and
    # this runs once per item on every open. ITEM_FIELDS is checked against Item's slots.
    item: Item = new(Item)
    (
        item.id,
        item.node_type,
        item.content,
        item.key,
        tags,
        item.ttl,
        item.cad,
        item.priority,
        item.role,
        item.created_at_ns,
        item.creation_index,
        item.born_episode,
        item.data,
        item.template_id,
        lifecycle,
        item.stage,
        item.passes,
    ) = row
    item.tags = tuple(tags)
    item._hash = None
    if item.ttl == 0:  # written before ttl=0 was refused (see lived_ttl)
        item.ttl = lived_ttl(item.ttl)
    if lifecycle is None:
        item.lifecycle = None
    else:
        stages, cycle = lifecycle
        item.lifecycle = RenderLifecycle(
            [Pos(selector, ttl=lived_ttl(t)) for selector, t in stages], cycle
        )
    return item


# Every slot _load_item fills (a test keeps this equal to Item.__slots__).
ITEM_FIELDS = frozenset(
    {
        "id",
        "node_type",
        "content",
        "key",
        "tags",
        "ttl",
        "cad",
        "priority",
        "role",
        "created_at_ns",
        "creation_index",
        "born_episode",
        "data",
        "template_id",
        "lifecycle",
        "stage",
        "passes",
        "_hash",
    }
)


def _load_turn(row: list[Any], new: Any = object.__new__) -> Turn:
    # Slots and turns filled slot by slot too, for the same reason as items (SLOT_FIELDS and
    # TURN_FIELDS are checked against their classes' slots).
    turn: Turn = new(Turn)
    turn.id, turn.seq, turn.created_at_ns, turn.creation_index, slot_rows = row
    turn.gen = 0
    turn.slots = slots = {}
    for slot_row in slot_rows:
        slot: Slot = new(Slot)
        slot.id, slot.position, slot.created_at_ns, slot.creation_index, core, item_rows = slot_row
        slot.items = items = [_load_item(item) for item in item_rows]
        if not items or not 0 <= core < len(items) or slot.position in slots:
            raise InvalidExport(f"slot {slot.id!r}: empty, duplicated or with its core outside")
        slot.core, slot.gen = core, 0
        slots[slot.position] = slot
    return turn


SLOT_FIELDS = frozenset(
    {"id", "position", "created_at_ns", "creation_index", "items", "core", "gen"}
)
TURN_FIELDS = frozenset({"id", "seq", "created_at_ns", "creation_index", "slots", "gen"})


def load_compact(data: Any, *, ids: IdFactory | None = None, clock: Clock | None = None) -> Context:
    """Rebuild a context from ``dump_compact`` output; ``InvalidExport`` if it is malformed."""
    context = Context(ids=ids, clock=clock)
    restore_compact(data, context)
    return context


def restore_compact(data: Any, context: Context) -> None:
    """Give ``context``, fresh (nothing done to it yet), the state of ``dump_compact`` output;
    ``InvalidExport`` if it is malformed (``context`` is then not to be used)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InvalidExport(f"not a {FORMAT!r} document")
    if data.get("version") != VERSION:
        raise InvalidExport(f"{FORMAT!r} v{data.get('version')}; this build reads v{VERSION}")
    try:
        system = _load_turn(data["system"])
        turns = [_load_turn(row) for row in data["turns"]]
        templates: dict[str, Template] = {}
        for t_id, anchor_seq, anchor_depth, position, offset, born, cad, live_id, proto in data[
            "templates"
        ]:
            templates[t_id] = Template(
                id=t_id,
                prototype=_load_item(proto),
                anchor_seq=anchor_seq,
                anchor_depth=anchor_depth,
                position=position,
                offset=offset,
                born=born,
                cad=cad,
                live_id=live_id,
            )
        creation_index, next_turn_seq = data["counters"]
        seqs = [turn.seq for turn in turns]
        increasing = all(b > a for a, b in pairwise(seqs))
        if system.seq != -1 or not increasing or (seqs and seqs[0] < 0):
            raise InvalidExport("turn seqs must be -1 for the system, then strictly increasing")
        if not turns or next_turn_seq <= seqs[-1]:
            raise InvalidExport("there must be an active turn, and next_turn_seq past it")
        context.restore(
            root_id=data["root"],
            episode=data["episode"],
            system=system,
            turns=turns,
            templates=templates,
            counters=(creation_index, next_turn_seq),
        )
    except ContextError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise InvalidExport(f"malformed {FORMAT!r} document: {error}") from None
