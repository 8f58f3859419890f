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

from collections.abc import Callable, Sequence
from itertools import compress, count, islice, pairwise
from operator import is_not
from typing import Any

from pyrsistent import pvector

from .clock import Clock, IdFactory
from .context import Context
from .errors import ContextError, InvalidExport
from .history import Snapshot
from .nodes import Item, Slot, Template, Turn, lived_ttl
from .stages import Pos, RenderLifecycle
from .tree import TreeState

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
        "templates": [_template(t) for t in context.templates()],
    }


def _template(t: Template) -> list[Any]:
    return [
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


def _load_templates(rows: list[Any]) -> dict[str, Template]:
    templates: dict[str, Template] = {}
    for t_id, anchor_seq, anchor_depth, position, offset, born, cad, live_id, proto in rows:
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
    return templates


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
        templates = _load_templates(data["templates"])
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


# -- the recent past ---------------------------------------------------------------------------
# A context restored from its checkpoint holds no snapshot taken before it, so what the last few
# steps changed (``ctx diff -1 now``) used to be rebuilt by replaying tens of thousands of events
# from an archive, into a state that shares no turn with the loaded one. The checkpoint keeps the
# newest snapshots instead, each as what differs from the next newer state (the newest: from the
# working state): copy-on-write means a few turns each. Restored, they share every other turn
# with the working state, as they did when they were taken, so the turn-by-turn diff is fast.


def dump_recent(context: Context, count: int) -> list[Any]:
    """The newest ``count`` snapshots of the context's history, newest first, each as a row
    of what differs from the next newer state (``restore_recent`` reads them back)."""
    snapshots = context.history.snapshots[-count:] if count > 0 else []
    rows: list[Any] = []
    newer = context.state()
    for snapshot in reversed(snapshots):
        state = snapshot.state
        templates = state.templates
        rows.append(
            {
                "id": snapshot.id,
                "episode": snapshot.episode,
                "trigger": snapshot.trigger,
                "created_at_ns": snapshot.created_at_ns,
                "root": state.root_id,
                "state_episode": state.episode,
                "system": None if state.system is newer.system else _turn(state.system),
                "turns": _turn_segments(state.turns, newer.turns),
                "templates": None
                if templates is newer.templates
                else [_template(t) for t in templates.values()],
            }
        )
        newer = state
    return rows


def _turn_segments(older: Sequence[Turn], newer: Sequence[Turn]) -> list[Any]:
    """``older``'s turns, oldest first, as runs of ``newer``'s (``["=", start, length]``: the
    same objects) and turns of its own (``["+", row]``). Both are in ascending seq order."""
    segments: list[Any] = []
    i = j = 0
    while i < len(older):
        turn = older[i]
        while j < len(newer) and newer[j].seq < turn.seq:
            j += 1
        length = _shared_run(older, newer, i, j) if j < len(newer) else 0
        if length:
            segments.append(["=", j, length])
            i, j = i + length, j + length
        else:
            segments.append(["+", _turn(turn)])
            i += 1
    return segments


def _shared_run(older: Sequence[Turn], newer: Sequence[Turn], i: int, j: int) -> int:
    """How many turns from ``older[i]`` and ``newer[j]`` on are the same objects (in C)."""
    if older[i] is not newer[j]:
        return 0
    differs = map(is_not, islice(older, i, None), islice(newer, j, None))
    found = next(compress(count(), differs), None)
    return min(len(older) - i, len(newer) - j) if found is None else found


def dump_turn(turn: Turn) -> list[Any]:
    """One turn as a row of ``dump_compact``'s."""
    return _turn(turn)


def recent_past(context: Context, count: int, turn: Callable[[Turn], Any] = dump_turn) -> list[Any]:
    """The newest ``count`` snapshots of the context's history, newest first, each whole: its
    own fields and every turn of its state through ``turn`` (by default the turn's row), not
    what differs from the next newer state as ``dump_recent`` writes it. Two contexts whose
    recent past is the same give equal lists, whichever turns their snapshots share."""
    rows: list[Any] = []
    for snapshot in reversed(context.history.snapshots[-count:] if count > 0 else []):
        state = snapshot.state
        rows.append(
            [
                snapshot.id,
                snapshot.episode,
                snapshot.trigger,
                snapshot.created_at_ns,
                state.root_id,
                state.episode,
                turn(state.system),
                [turn(t) for t in state.turns],
                [_template(t) for t in state.templates.values()],
            ]
        )
    return rows


def restore_recent(rows: Any, context: Context) -> None:
    """Give ``context``, just restored from the checkpoint ``rows`` were saved with, the
    snapshots they hold (``dump_recent``), sharing its turns; ``InvalidExport`` if malformed
    (``context`` is then not to be used)."""
    if not isinstance(rows, list):
        raise InvalidExport(f"the recent snapshots are a {type(rows).__name__}, not a list")
    snapshots: list[Snapshot] = []
    newer = context.state()
    try:
        for row in rows:
            turns: list[Turn] = []
            last = -1  # the seq of the last turn so far (the system region's before the first)
            for kind, value, *rest in row["turns"]:
                if kind == "=":
                    (length,) = rest
                    if not (type(value) is int and type(length) is int and length > 0):
                        raise InvalidExport(f"a run of turns [{value!r}, {length!r}]")
                    if value < 0 or value + length > len(newer.turns):
                        raise InvalidExport(f"a run of turns [{value}, {length}] out of range")
                    run = newer.turns[value : value + length]  # in ascending seq order
                    first = run[0].seq
                    turns.extend(run)
                elif kind == "+" and not rest:
                    turns.append(_load_turn(value))
                    first = turns[-1].seq
                else:
                    raise InvalidExport(f"a segment of turns of kind {kind!r}")
                if first <= last:
                    raise InvalidExport("a recent snapshot's turn seqs must be strictly increasing")
                last = turns[-1].seq
            if not turns:
                raise InvalidExport("a recent snapshot must have a turn")
            system = newer.system if row["system"] is None else _load_turn(row["system"])
            if system.seq != -1:
                raise InvalidExport("a recent snapshot's system region must have seq -1")
            templates = (
                newer.templates if row["templates"] is None else _load_templates(row["templates"])
            )
            state = TreeState(
                root_id=row["root"],
                system=system,
                turns=pvector(turns),
                episode=row["state_episode"],
                templates=templates,
            )
            snapshots.append(
                Snapshot(
                    id=row["id"],
                    index=0,  # set as the history records it
                    episode=row["episode"],
                    trigger=row["trigger"],
                    created_at_ns=row["created_at_ns"],
                    state=state,
                )
            )
            newer = state
        ids = [snapshot.id for snapshot in snapshots]
        if not all(type(i) is str for i in ids) or len(set(ids)) != len(ids):
            raise InvalidExport(f"the recent snapshots' ids are {ids!r}")
    except ContextError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        raise InvalidExport(f"malformed recent snapshots: {error}") from None
    context.adopt_past(snapshots[::-1])
