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

import json
import sys
import threading
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from itertools import accumulate, chain, compress, count, islice
from operator import is_not, lt
from typing import Any, Protocol

import orjson
from pyrsistent import PVector, pvector

from .clock import Clock, IdFactory
from .context import Context
from .errors import ContextError, InvalidExport, MalformedPackedTurns
from .history import Snapshot
from .nodes import Item, Slot, Template, Turn, lived_ttl
from .stages import Pos, RenderLifecycle
from .tree import TreeState

FORMAT = "pact-context-compact"
VERSION = 1
PACKED_VERSION = 2  # the turns as packed records beside the rest (``dump_packed``)
PIECES_VERSION = 3  # and the middle of the history's records in pieces of their own (``in_pieces``)


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
    return [turn.id, turn.seq, turn.created_at_ns, turn.creation_index, _slot_rows(turn)]


def _slot_rows(turn: Turn) -> list[Any]:
    return [
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


def dump_compact(context: Context) -> dict[str, Any]:
    """The working state (not the snapshot history) as compact JSON-native data."""
    data = _dump_head(context)
    data["turns"] = [_turn(turn) for turn in data.pop("_turns")]
    return data


def _dump_head(context: Context) -> dict[str, Any]:
    """``dump_compact`` but for its turns after the system region, left under ``_turns``."""
    counters = context.counters()
    turns = [turn for _depth, turn in context.iter_turns()]  # the system region first
    return {
        "format": FORMAT,
        "version": VERSION,
        "root": context.root_id,
        "episode": context.current_episode,
        "counters": [counters["creation_index"], counters["next_turn_seq"]],
        "system": _turn(turns[0]),
        "_turns": turns[1:],
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
    turn.slots = _load_slots(slot_rows)
    return turn


def _load_slots(slot_rows: list[Any], new: Any = object.__new__) -> dict[int, Slot]:
    slots: dict[int, Slot] = {}
    for slot_row in slot_rows:
        slot: Slot = new(Slot)
        slot.id, slot.position, slot.created_at_ns, slot.creation_index, core, item_rows = slot_row
        slot.items = items = [_load_item(item) for item in item_rows]
        if not items or not 0 <= core < len(items) or slot.position in slots:
            raise InvalidExport(f"slot {slot.id!r}: empty, duplicated or with its core outside")
        slot.core, slot.gen = core, 0
        slots[slot.position] = slot
    return slots


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


def load_compact(
    data: Any,
    *,
    ids: IdFactory | None = None,
    clock: Clock | None = None,
    packed: bytes | memoryview | None = None,
    pieces: TurnPieces | None = None,
) -> Context:
    """Rebuild a context from ``dump_compact`` output (or ``dump_packed``'s, with ``packed``
    its turns, and ``pieces`` those ``in_pieces`` kept apart); ``InvalidExport`` if it is
    malformed."""
    context = Context(ids=ids, clock=clock)
    restore_compact(data, context, packed, pieces)
    return context


def restore_compact(
    data: Any,
    context: Context,
    packed: bytes | memoryview | None = None,
    pieces: TurnPieces | None = None,
) -> None:
    """Give ``context``, fresh (nothing done to it yet), the state of ``dump_compact`` output,
    or of ``dump_packed``'s (``packed``: the turns' bytes beside it; ``pieces``: where the
    records ``in_pieces`` kept apart are read); ``InvalidExport`` if it is malformed
    (``context`` is then not to be used). Packed turns are decoded when first read
    (``PackedTurn``), and their item ids checked for duplicates when the context is
    indexed."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InvalidExport(f"not a {FORMAT!r} document")
    version = data.get("version")
    if version not in (VERSION, PACKED_VERSION, PIECES_VERSION):
        raise InvalidExport(f"{FORMAT!r} v{version}; this build reads v{VERSION} to v3")
    if (version == VERSION) != (packed is None):
        raise InvalidExport(f"{FORMAT!r} v{version} with its turns packed beside it or not")
    if (version == PIECES_VERSION) != (pieces is not None):
        raise InvalidExport(f"{FORMAT!r} v{version} with its turns in pieces or not")
    try:
        system = _load_turn(data["system"])
        item_count: int | None = None
        turn_counts: tuple[Sequence[int], Sequence[int]] | None = None
        turns: list[Turn]
        seqs: Sequence[int]
        if packed is None:
            turns = [_load_turn(row) for row in data["turns"]]
            seqs = [turn.seq for turn in turns]
        else:
            layout = _Layout.read(data["pieces"], pieces) if pieces is not None else None
            turns, seqs, turn_counts = _packed_turns(data["turns"], packed, layout)
            item_count = sum(turn_counts[1]) + system.item_count()
            # Those a reader draws first (the first and the last, where a tree opens and
            # where it follows), decoded now: one found malformed after opening costs a
            # reload (``Workspace.unpacking``); here, before anything is drawn, a refusal.
            # (Not those in pieces: their pieces are read when a reader draws them.)
            for turn in chain(turns[:DRAWN_FIRST], turns[max(0, len(turns) - DRAWN_FIRST) :]):
                if isinstance(turn, PackedTurn) and not turn.in_piece:
                    turn.unpack()
        templates = _load_templates(data["templates"])
        creation_index, next_turn_seq = data["counters"]
        increasing = all(map(lt, seqs, islice(seqs, 1, None)))  # in C: 150,000 at a gigabyte
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
            item_count=item_count,
            turn_counts=turn_counts,
            seqs=seqs,
        )
    except ContextError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise InvalidExport(f"malformed {FORMAT!r} document: {error}") from None


# -- packed turns --------------------------------------------------------------------------------
# Opening a workspace to look at a 100,000-item context used to decode and build every turn
# before the first paint (two thirds of its opening), while the screen draws a few dozen. A
# packed checkpoint keeps each turn's slots as a record of its own, encoded apart, with the
# turn's own fields and its counts (what the tree pane measures it by) in the index beside
# them: opening builds the turns from the index, and each turn decodes its slots when they are
# first read (a reader decodes the rest once the first frame is shown).


_UNPACKING = threading.Lock()
# The packed turns decoded as a context is restored, at each end of its history: more than a
# screenful of turns (each takes a row at the least), so that a malformed one a first frame
# would draw is refused with the checkpoint (about a millisecond for 128 turns).
DRAWN_FIRST = 64


class PackedTurn(Turn):
    """A turn restored from a packed checkpoint: its own fields are read from the index, and
    its slots decoded, when first read (opening a context of 100,000 items draws a few dozen
    of its 33,332 turns: making each with nothing but its place was half their cost)."""

    __slots__ = ("at", "packing")

    # Where its record is (shared by the turns restored with it), and which turn of them it
    # is; None once decoded.
    packing: _Packing | None
    at: int

    def __getattr__(self, name: str) -> Any:
        # Called only for an attribute without a value: ``slots`` until they are decoded, a
        # field of the index until it is first read.
        if name == "slots":
            return self.unpack()
        if name == "gen":
            self.gen = 0
            return 0
        packing = self.packing
        if packing is None or name not in _Packing.FIELDS:
            raise AttributeError(name)
        value = getattr(packing, _Packing.FIELDS[name])[self.at]
        setattr(self, name, value)
        return value

    @property
    def decoded(self) -> bool:
        return self.packing is None

    @property
    def in_piece(self) -> bool:
        """Whether its record, not decoded yet, is in one of the checkpoint's pieces."""
        packing = self.packing
        return packing is not None and packing.in_piece(self.at)

    def unpack(self) -> dict[int, Slot]:
        """Decode the turn's slots now (once); ``InvalidExport`` if they are malformed or not
        what the index said."""
        if self.packing is None:
            return self.slots
        # A thread may read the tree too (a selector matched off the input's path): the turn
        # is decoded once, or two readers would hold different items for the same ids.
        with _UNPACKING:
            packing = self.packing
            if packing is None:
                return self.slots
            return self._decoded(packing)

    def _decoded(self, packing: _Packing) -> dict[int, Slot]:
        at = self.at
        try:
            slots = _load_slots(_decode(packing.record(at)))
        except ContextError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise MalformedPackedTurns(
                f"the checkpoint's packed turn {self.id!r} is malformed ({error})"
            ) from None
        counts = (len(slots), sum([len(slot.items) for slot in slots.values()]))
        if counts != (packing.slots[at], packing.items[at]):
            raise MalformedPackedTurns(
                f"the checkpoint's packed turn {self.id!r} holds {counts} slots and items,"
                f" its index says {(packing.slots[at], packing.items[at])}"
            )
        # The fields, read or not yet, set before the index is let go of.
        self.id, self.seq = packing.ids[at], packing.seqs[at]
        self.created_at_ns, self.creation_index = packing.created[at], packing.creation[at]
        self.slots = slots
        self.packing = None
        return slots

    def item_count(self) -> int:
        packing = self.packing
        return packing.items[self.at] if packing is not None else super().item_count()

    def slot_count(self) -> int:
        packing = self.packing
        return packing.slots[self.at] if packing is not None else super().slot_count()


class _Packing:
    """Where the records of the turns restored from one packed checkpoint are, and the counts
    of slots and items its index gives each (what the tree pane measures a turn by): shared
    by those turns, so that opening makes nothing for each but the turn (150,000 records'
    views and counts' pairs took a quarter of restoring them). A record is found when read."""

    __slots__ = ("created", "creation", "ids", "items", "layout", "seqs", "slots", "starts", "view")

    # A packed turn's fields, and the index's columns they are read from.
    FIELDS = {"id": "ids", "seq": "seqs", "created_at_ns": "created", "creation_index": "creation"}

    def __init__(
        self,
        columns: Sequence[Sequence[Any]],
        view: memoryview,
        layout: _Layout | None,
    ) -> None:
        self.ids, self.seqs, self.created, self.creation, self.slots, self.items, lengths = columns
        self.view, self.layout = view, layout
        # Where each record starts in ``view`` (in C: a context of 150,000 turns), and ends.
        self.starts = array("q", [0])
        if layout is None:
            self.starts.extend(accumulate(lengths))
            if self.starts[-1] != len(view):
                raise InvalidExport(
                    f"the packed turns take {len(view)} bytes, their index says"
                    f" {self.starts[-1:].tolist()}"
                )
        else:
            layout.fit(lengths, view)

    def in_piece(self, at: int) -> bool:
        return self.layout is not None and self.layout.in_piece(at)

    def record(self, at: int) -> memoryview:
        layout = self.layout
        if layout is None:
            starts = self.starts
            return self.view[starts[at] : starts[at + 1]]
        return layout.record(at, self.view)


def unpack_turns(context: Context, chunk: int) -> Iterator[int]:
    """Decode the context's packed turns (``PackedTurn``) not read yet, ``chunk`` at a time,
    yielding how many are left after each chunk: a reader runs it between frames once the
    tree is drawn, so that no later read decodes one, and no frame waits for all of them."""
    waiting = [
        turn
        for _depth, turn in context.iter_turns()
        if isinstance(turn, PackedTurn) and not turn.decoded
    ]
    for start in range(0, len(waiting), chunk):
        for turn in waiting[start : start + chunk]:
            turn.unpack()
        yield max(0, len(waiting) - start - chunk)


def _encode(row: Any) -> bytes:
    """One turn's slots: JSON by orjson; json's, marked ``J``, for what orjson refuses
    (integers beyond 64 bits, which orjson would read back as floats)."""
    try:
        return orjson.dumps(row)
    except TypeError:
        return b"J" + json.dumps(row, separators=(",", ":")).encode()


def _decode(data: bytes | memoryview) -> Any:
    return json.loads(bytes(data[1:])) if data[:1] == b"J" else orjson.loads(data)


def dump_packed(context: Context) -> tuple[dict[str, Any], bytes]:
    """``dump_compact`` with the turns (after the system region) packed: the data, whose
    ``turns`` are an index of columns (``INDEX_COLUMNS``: each turn's fields, its counts of
    slots and items, and the length of its record), and the turns' encoded slots one after
    another, as ``restore_compact`` reads them. A turn restored packed and never read is
    written as it was read, without decoding it."""
    data = _dump_head(context)
    turns: list[Turn] = data.pop("_turns")
    records: list[bytes | memoryview] = []
    rows: list[tuple[Any, ...]] = []  # each turn's entry of the index, but its record's length
    for turn in turns:
        if isinstance(turn, PackedTurn) and turn.packing is not None:
            # Never read: from the index, not through its lazy fields.
            packing, at = turn.packing, turn.at
            records.append(packing.record(at))
            rows.append(
                (
                    packing.ids[at],
                    packing.seqs[at],
                    packing.created[at],
                    packing.creation[at],
                    packing.slots[at],
                    packing.items[at],
                )
            )
        else:
            records.append(_encode(_slot_rows(turn)))
            rows.append(
                (
                    turn.id,
                    turn.seq,
                    turn.created_at_ns,
                    turn.creation_index,
                    turn.slot_count(),
                    turn.item_count(),
                )
            )
    columns = [list(column) for column in zip(*rows, strict=True)] or [[] for _ in range(6)]
    data["version"] = PACKED_VERSION
    data["turns"] = dict(zip(INDEX_COLUMNS, [*columns, [len(r) for r in records]], strict=True))
    return data, b"".join(records)


INDEX_COLUMNS = ("id", "seq", "created_at_ns", "creation_index", "slots", "items", "length")


def unpacked(
    data: Any, packed: bytes | memoryview, pieces: TurnPieces | None = None
) -> dict[str, Any]:
    """``dump_packed`` output (with ``pieces``, laid out by ``in_pieces``) as ``dump_compact``
    would have made it (for tools and tests that read a checkpoint as plain data);
    ``InvalidExport`` if it is malformed."""
    version = data.get("version") if isinstance(data, dict) else None
    if version not in (PACKED_VERSION, PIECES_VERSION):
        raise InvalidExport(f"not a packed {FORMAT!r} document")
    if (version == PIECES_VERSION) != (pieces is not None):
        raise InvalidExport(f"{FORMAT!r} v{version} with its turns in pieces or not")
    try:
        layout = _Layout.read(data["pieces"], pieces) if pieces is not None else None
        turns, _seqs, _counts = _packed_turns(data["turns"], packed, layout)
        rows = [_turn(turn) for turn in turns]
    except ContextError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise InvalidExport(f"malformed packed {FORMAT!r} document: {error}") from None
    plain = {**data, "version": VERSION, "turns": rows}
    plain.pop("pieces", None)
    return plain


def _packed_turns(
    index: dict[str, Any],
    packed: bytes | memoryview,
    layout: _Layout | None = None,
    new: Any = object.__new__,
) -> tuple[list[Turn], Sequence[int], tuple[Sequence[int], Sequence[int]]]:
    """The turns of a packed index over ``packed`` (not decoded), their seqs, and their
    counts of slots and of items; with a ``layout``, ``packed`` holds the records of the
    first and last turns it keeps there, and its pieces the rest."""
    view = memoryview(packed)
    if layout is None:
        ids, seqs, created, creation, slots, items, lengths = (index[c] for c in INDEX_COLUMNS)
        if set(map(type, chain(slots, items, lengths))) - {int}:
            raise InvalidExport("the packed turns' counts and lengths must be integers")
    else:
        ids = index["id"]
        numeric, view = layout.columns(view, len(ids) if isinstance(ids, list) else 0)
        seqs, created, creation, slots, items, lengths = numeric
    columns = (ids, seqs, created, creation, slots, items, lengths)
    if not all(isinstance(column, list | array) and len(column) == len(ids) for column in columns):
        raise InvalidExport("the packed turns' index has columns of different lengths")
    if ids and (min(lengths) < 2 or min(slots) < 1 or min(items) < 1):
        raise InvalidExport("a packed turn is empty")
    packing = _Packing(columns, view, layout)
    turns: list[Turn] = []
    append = turns.append
    for at in range(len(ids)):  # each with its place alone (``PackedTurn``)
        turn: PackedTurn = new(PackedTurn)
        turn.packing = packing
        turn.at = at
        append(turn)
    return turns, seqs, (slots, items)


# -- pieces --------------------------------------------------------------------------------------
# A context of a gigabyte of messages (an imported agent's conversation) has a checkpoint of a
# gigabyte: reading and hashing all of it took seconds before the first paint, which draws a
# few dozen turns. Its records can be kept in pieces apart (a workspace stores each piece as a
# checkpoint of its own, named by its digest): the checkpoint keeps the first and the last
# ``inline`` turns' records (those a reader draws first), and the pieces hold the turns between
# them, in order, cut at turns' ends. A turn in a piece reads it when first decoded.


class TurnPieces(Protocol):
    """Where the pieces of a context's records are read, in order."""

    def piece(self, index: int) -> memoryview:
        """Piece ``index``'s bytes (read now if not read yet; ``MalformedPackedTurns`` if it
        cannot be)."""
        ...


class _Layout:
    """How a checkpoint's packed records are laid out in pieces (its ``pieces`` entry)."""

    def __init__(self, inline: int, lengths: list[int], pieces: TurnPieces) -> None:
        self.inline, self.lengths, self.pieces = inline, lengths, pieces
        # Set by ``fit``: where the records kept in the checkpoint start (and the last ends),
        # the first turn kept at the end, and where the records between and the pieces start
        # in the pieces read one after another.
        self.kept = self.middle = self.piece_starts = array("q")
        self.first_after = 0

    @classmethod
    def read(cls, entry: Any, pieces: TurnPieces) -> _Layout:
        inline, lengths = entry["inline"], entry["lengths"]
        if type(inline) is not int or inline < 1 or not isinstance(lengths, list):
            raise InvalidExport(f"the turns' pieces are laid out as {entry!r}")
        if not lengths or set(map(type, lengths)) != {int} or min(lengths) < 2:
            raise InvalidExport("the turns' pieces must each have a length of 2 or more")
        return cls(inline, lengths, pieces)

    # The index's numeric columns, as 64-bit little-endian integers at the start of the packed
    # bytes: read in C at once, where 150,000 turns' six columns of JSON numbers took 38 ms.
    NUMERIC = INDEX_COLUMNS[1:]

    def columns(self, view: memoryview, turns: int) -> tuple[list[array[int]], memoryview]:
        """The numeric columns of ``turns`` turns at the start of ``view``, and the rest."""
        size = 8 * turns
        if turns < 1 or len(view) < size * len(self.NUMERIC):
            raise InvalidExport(f"the packed bytes hold no columns of {turns} turns")
        columns = []
        for start in range(0, size * len(self.NUMERIC), size):
            column = array("q")
            column.frombytes(view[start : start + size])
            if sys.byteorder == "big":
                column.byteswap()
            columns.append(column)
        return columns, view[size * len(self.NUMERIC) :]

    @classmethod
    def columns_of(cls, index: dict[str, Any]) -> bytes:
        """``index``'s numeric columns as ``columns`` reads them (each then left out of it)."""
        out = bytearray()
        for name in cls.NUMERIC:
            column = array("q", index.pop(name))
            if sys.byteorder == "big":
                column.byteswap()
            out += column.tobytes()
        return bytes(out)

    def fit(self, lengths: Sequence[int], view: memoryview) -> None:
        """Lay out the records of ``lengths``: the first and last ``inline`` in ``view``, the
        others in the pieces, none crossing a piece's end (``InvalidExport`` otherwise)."""
        inline = self.inline
        if len(lengths) <= 2 * inline:
            raise InvalidExport(f"{len(lengths)} turns, {inline} kept at each end, none in pieces")
        self.first_after = len(lengths) - inline  # the first of those kept at the end
        self.kept = array("q", accumulate(chain(lengths[:inline], lengths[-inline:]), initial=0))
        if self.kept[-1] != len(view):
            raise InvalidExport(
                f"the packed turns take {len(view)} bytes, their index says [{self.kept[-1]}]"
            )
        # Where each record between starts in the pieces read one after another, and each
        # piece (in C: 150,000 turns); a piece must end where a record does.
        middle = self.middle = array("q", accumulate(lengths[inline : self.first_after], initial=0))
        self.piece_starts = array("q", accumulate(self.lengths, initial=0))
        pieces, total = len(self.lengths), middle[-1]
        if total > self.piece_starts[-1]:
            raise InvalidExport(f"the turns' records go past their {pieces} pieces")
        for piece, end in enumerate(self.piece_starts[1:]):
            if end < total and middle[bisect_left(middle, end)] != end:
                raise InvalidExport(f"a turn's record crosses the end of piece {piece}")
            if end >= total:
                filled = piece + (end == total)
                if filled != pieces:
                    said = f"{filled} of their {pieces} pieces"
                    raise InvalidExport(f"the turns' records fill {said}")
                break

    def in_piece(self, at: int) -> bool:
        return self.inline <= at < self.first_after

    def record(self, at: int, view: memoryview) -> memoryview:
        """Turn ``at``'s record: in ``view`` (the records kept), or read from its piece."""
        inline, first_after = self.inline, self.first_after
        if at < inline or at >= first_after:
            kept = at if at < inline else at - first_after + inline
            return view[self.kept[kept] : self.kept[kept + 1]]
        middle = self.middle
        start, end = middle[at - inline], middle[at - inline + 1]
        piece = bisect_right(self.piece_starts, start) - 1
        offset = self.piece_starts[piece]
        return self.pieces.piece(piece)[start - offset : end - offset]


def in_pieces(
    data: dict[str, Any], packed: bytes, inline: int, piece_bytes: int
) -> tuple[bytes, list[memoryview]]:
    """``dump_packed``'s output with its records laid out in pieces: what the checkpoint keeps
    (the records of the first and last ``inline`` turns) and the pieces (the others, in order,
    a piece ending at the first turn's end at or past ``piece_bytes``). ``data`` becomes v3,
    its ``pieces`` entry saying how; unchanged, with ``packed`` and no pieces, when the turns
    between fill less than one piece. The pieces are views of ``packed``, not copies (a
    gigabyte, for an imported conversation)."""
    lengths = data["turns"]["length"]
    ends = [0, *accumulate(lengths)]
    if len(lengths) <= 2 * inline or ends[-inline - 1] - ends[inline] < piece_bytes:
        return packed, []
    view = memoryview(packed)
    pieces: list[memoryview] = []
    start = ends[inline]
    for end in ends[inline + 1 : -inline]:
        if end - start >= piece_bytes or end == ends[-inline - 1]:
            pieces.append(view[start:end])
            start = end
    data["version"] = PIECES_VERSION
    data["pieces"] = {"inline": inline, "lengths": [len(piece) for piece in pieces]}
    columns = _Layout.columns_of(data["turns"])
    kept = columns + bytes(view[: ends[inline]]) + bytes(view[ends[-inline - 1] :])
    return kept, pieces


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
            # Built as a persistent vector from the newer state's (in C: a run of 150,000
            # turns is sliced, not copied into a list and a vector made of it).
            turns: PVector[Turn] = pvector()
            last = -1  # the seq of the last turn so far (the system region's before the first)
            for kind, value, *rest in row["turns"]:
                if kind == "=":
                    (length,) = rest
                    if not (type(value) is int and type(length) is int and length > 0):
                        raise InvalidExport(f"a run of turns [{value!r}, {length!r}]")
                    if value < 0 or value + length > len(newer.turns):
                        raise InvalidExport(f"a run of turns [{value}, {length}] out of range")
                    whole = value == 0 and length == len(newer.turns)
                    run = newer.turns if whole else newer.turns[value : value + length]
                    first = run[0].seq  # in ascending seq order
                    turns = turns.extend(run) if turns else run
                elif kind == "+" and not rest:
                    turns = turns.append(_load_turn(value))
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
                turns=turns,
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
