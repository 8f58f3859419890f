"""A document's checkpoint: its whole projection as JSON-native data, and back.

``dump_document(doc)`` gives a dict of str keys, lists, ints, strs, bools and None that
``json.dumps`` takes as it is; ``restore_document(data)`` rebuilds the ``Document`` it came from,
or raises ``CheckpointError`` (a ``ValueError``) naming the first thing wrong, before any document
exists. Two documents are the same state when their dumps are equal.

Most of a long-lived document's proposals are closed (merged, rejected, withdrawn, objected),
and few are ever read again. ``restore_document`` checks the whole proposals table as it does
every other, but builds only the open proposals; ``doc.proposals`` is then a ``Restored``
mapping that builds a closed one from the checkpoint's columns when it is first read, and all
those left at once when its values are walked. The document of 1M events of
``bench/bench_protocol.py`` (143k proposals, all but 500 closed) restores so in 0.29-0.31 s
instead of 0.49-0.51 s (on a shared 2-vCPU VM).

The shape is typed once: ``_Checkpoint`` below lists the fields of ``Document`` with their types
(as its ``__init__`` has them), and the records are the dataclasses of ``engine.protocol.model``.
A codec for each type is built from those annotations, so there is no code per field:

- a table of records (the sections, the agents, the proposals, ...) is an object of columns, one
  per field (``{"id": [...], "status": [...], ...}``), in the table's order;
- a record inside another (a vote, a lock, an override) is an array of its values in field
  order; ``"layout"`` names those fields, and a checkpoint with another layout is refused;
- a tuple is an array; a dict keyed by tuples (salience, idempotency records) is an array of
  rows; str, int, bool and None are themselves, checked by exact type (``true`` is no int).

Values are checked and built a column at a time (every proposal's ``status`` at once), in C
loops (``map``, ``zip``, ``set``, ``countOf``) rather than a Python loop per value. On the small
shared 2-vCPU VM this was written on, a document of 1,000 agents, 500 sections and 100,000
proposals (each with a vote and an idempotency record) dumps in 0.65-0.9 s and restores in
0.6-0.9 s; ``pickle`` takes 2.7 s and 2.4 s for the same document there. (Measured before
idempotency records kept the first answer. Since then, on the same VM: 200 agents, 500 sections,
20,000 keyed proposals each with a keyed approval dump to 25 MB of JSON instead of 15 MB, in
0.12 s, and restore in 0.51 s instead of 0.45 s.)

Derived indexes are left out and rebuilt: ``by_key``, ``by_id``, ``positions`` and ``barred``
(from ``sections``), ``active`` (from the joined agents), ``by_author``, ``intents_on`` and
``constraints_on`` (from ``proposals``, ``intents`` and ``constraints``, in order) and
``salience_by_section`` (from ``salience``); ``parts_cache`` (checked merge
parts) starts empty, as a cache may. ``by_status`` and ``open_by_section`` are kept, and
checked against the proposals: their order is the order of status changes, which nothing else
holds. The timers are kept sorted: a sorted list is a heap, and what ``heappop`` gives does not
depend on the layout, so documents with the same due work dump the same timers however their
heaps grew. The timers a tick set aside (``Document.quiet_timers``) are dumped among them, as a
replay of the log holds them, and restored as waiting: the next tick sets them aside again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import types
from collections import defaultdict
from collections.abc import (
    Callable,
    ItemsView,
    Iterable,
    Iterator,
    KeysView,
    MutableMapping,
    ValuesView,
)
from dataclasses import dataclass
from itertools import chain, compress, islice, repeat
from operator import add, attrgetter, countOf, is_not, itemgetter
from typing import (
    Any,
    Literal,
    NamedTuple,
    TypedDict,
    TypeVar,
    Union,
    cast,
    get_args,
    get_origin,
    get_type_hints,
)

from engine.protocol.document import Document
from engine.protocol.model import (
    OPEN_STATUSES,
    STATUSES,
    Agent,
    Comment,
    ConflictGroup,
    Constraint,
    Intent,
    Invite,
    Override,
    Policy,
    Proposal,
    Query,
    Resolution,
    Section,
    Strategy,
    Trust,
)

# 2: idempotency records keep the first answer; 3: section ids cut to fit 256; 4: the names
# humans acted under (``humans``), and the actor's kind on votes, locks, overrides, proposals;
# 5: a section keeps its id across merges (an older one may hold ids the fold now gives
# otherwise); 6: the removal guard (``removal_guard``, a proposal's ``removes_most``); 7: an
# agent's API key hash (``Agent.key_hash``, ``pact-tui serve``).
# A checkpoint of another format is refused, and its document replayed from its events.
FORMAT = 7


class CheckpointError(ValueError):
    """Not a checkpoint of this format: malformed, of another format, or inconsistent."""


class _Checkpoint(TypedDict):
    """Every field of ``Document`` but the derived indexes, as a checkpoint holds it."""

    id: str
    name: str
    created_ms: int
    sequence: int
    last_event_id: str | None
    policy: Policy
    window_s: int
    strategy: Strategy
    default_trust: Trust
    removal_guard: int
    framework: tuple[str | None, tuple[str, ...]] | None
    version: int
    sections: list[Section]
    aliases: dict[str, tuple[int, int]]
    next_key: int
    locked: Override | None
    agents: dict[str, Agent]
    humans: dict[str, int]  # name → when a human first acted under it
    salience: list[tuple[str, int, int]]  # (agent id, section key, score)
    proposals: dict[str, Proposal]
    open_by_section: list[tuple[int, list[str]]]  # (section key, its open proposals in order)
    by_status: dict[str, list[str]]
    conflicts: dict[str, ConflictGroup]
    intents: dict[str, Intent]
    constraints: dict[str, Constraint]
    comments: dict[str, Comment]
    queries: dict[str, Query]
    resolutions: dict[str, Resolution]
    invites: dict[str, Invite]
    overrides: list[tuple[str, Override]]
    # (actor, key, request hash, entity, first answer as JSON)
    idempotency: list[tuple[str, str, str, str | None, str | None]]
    timers: list[tuple[int, str, str]]  # sorted


DERIVED = frozenset(
    {
        *("by_key", "by_id", "positions", "barred", "active", "by_author", "parts_cache"),
        *("intents_on", "constraints_on", "salience_by_section"),
        "quiet_timers",  # dumped among the timers, as a replay holds them; restored waiting
    }
)
# The tables that are dicts, and the field of their records they are keyed by.
_KEYED = {
    "agents": "id",
    "proposals": "id",
    "conflicts": "id",
    "intents": "id",
    "constraints": "id",
    "comments": "id",
    "queries": "id",
    "resolutions": "id",
    "invites": "token_hash",
}
_TIMER_KINDS = frozenset({"lock", "alias", "intent", "query", "merge", "vote", "escalate"})

# -- codecs: a column of values ⇄ a column of JSON-native values --------------------------------
Column = list[Any]


@dataclass(frozen=True, slots=True)
class _Codec:
    encode: Callable[[Column], Column]
    # A JSON column's values, checked. A scalar codec gives the column itself back: its values
    # are immutable, and callers build records from it and drop the list.
    decode: Callable[[Any, str], Column]
    # ``decode`` in two halves, for a table whose records are built when first read (see
    # ``Restored``): ``verify`` checks a JSON column as ``decode`` does and builds nothing;
    # ``build`` gives what ``decode`` gives for a verified column, and ``one`` for one value.
    verify: Callable[[Any, str], None]
    build: Callable[[Column], Column]
    one: Callable[[Any], Any]
    check: Callable[[Iterable[Any], str], None] | None = None  # a scalar's: check, no copy


def _fail(where: str, what: str) -> CheckpointError:
    return CheckpointError(f"checkpoint: {where}: {what}")


def _names(kinds: Iterable[type]) -> str:
    return " or ".join(sorted("null" if k is types.NoneType else k.__name__ for k in kinds))


def _only(values: Iterable[Any], kind: type) -> bool:
    """Whether ``values``, a list, are all of type ``kind`` exactly: a count of the types in a C
    loop, a fifth faster than gathering them in a set (False: another type, or no list)."""
    return type(values) is list and countOf(map(type, values), kind) == len(values)


def _all(values: Iterable[Any], kind: type, where: str) -> None:
    if _only(values, kind):
        return
    found = set(map(type, values))
    if not found <= {kind}:
        raise _fail(where, f"expected {_names({kind})}, found {_names(found - {kind})}")


def _scalar(kinds: frozenset[type], values: frozenset[str] | None = None) -> _Codec:
    """str, int, bool, a Literal's strs, each maybe None: JSON-native as they are."""
    none = {None} if types.NoneType in kinds else set()
    (kind,) = kinds if len(kinds) == 1 else (None,)

    def check(column: Iterable[Any], where: str) -> None:
        if values is None:
            if kind is not None and _only(column, kind):
                return
            found = set(map(type, column))
            if not found <= kinds:
                raise _fail(where, f"expected {_names(kinds)}, found {_names(found - kinds)}")
            return
        try:
            bad = ", ".join(sorted(map(repr, set(column) - values - none)))
        except TypeError:  # unhashable
            bad = "an array or an object"
        if bad:
            raise _fail(where, f"{bad} is not one of {sorted(values)}")

    def decode(column: Any, where: str) -> Column:
        check(column, where)
        return cast(Column, column)

    return _Codec(list, decode, check, _itself, _itself, check)


def _itself(value: Any) -> Any:
    return value


def _present(column: Column) -> list[int]:
    """Where the values of ``column`` that are not None are."""
    return list(compress(range(len(column)), map(is_not, column, repeat(None))))


def _optional(inner: _Codec) -> _Codec:
    """Values that may be None: the others go through ``inner`` together."""

    def apart(column: Column, code: Callable[[Column], Column]) -> Column:
        """``column`` with the values that are not None coded by ``code``, all at once."""
        at = _present(column)
        out: Column = [None] * len(column)
        for i, value in zip(at, code(list(map(column.__getitem__, at))), strict=True):
            out[i] = value
        return out

    def decode(column: Any, where: str) -> Column:
        return apart(column, lambda values: inner.decode(values, where))

    def verify(column: Any, where: str) -> None:
        inner.verify(list(map(column.__getitem__, _present(column))), where)

    def one(value: Any) -> Any:
        return None if value is None else inner.one(value)

    return _Codec(
        lambda column: apart(column, inner.encode),
        decode,
        verify,
        lambda column: apart(column, inner.build),
        one,
    )


def _sequence(element: _Codec, build: Callable[[Any], Any]) -> _Codec:
    """``list[X]`` or ``tuple[X, ...]``: arrays. Their elements are coded all at once."""
    check = element.check

    def decode(column: Any, where: str) -> Column:
        _all(column, list, where)
        if check is not None:
            check(chain.from_iterable(column), where + "[]")
            return list(map(build, column))
        values = iter(element.decode(list(chain.from_iterable(column)), where + "[]"))
        return [build(list(islice(values, len(value)))) for value in column]

    def verify(column: Any, where: str) -> None:
        _all(column, list, where)
        if check is not None:
            check(chain.from_iterable(column), where + "[]")
        else:
            element.verify(list(chain.from_iterable(column)), where + "[]")

    if check is not None:
        return _Codec(
            lambda column: list(map(list, column)),
            decode,
            verify,
            lambda column: list(map(build, column)),
            build,
        )

    def encode(column: Column) -> Column:
        values = iter(element.encode(list(chain.from_iterable(column))))
        return [list(islice(values, len(value))) for value in column]

    def built(column: Column) -> Column:
        values = iter(element.build(list(chain.from_iterable(column))))
        return [build(list(islice(values, len(value)))) for value in column]

    return _Codec(encode, decode, verify, built, lambda value: build(map(element.one, value)))


def _transpose(rows: Column, width: int) -> list[Column]:
    """Rows (each ``width`` long) as columns."""
    return [list(map(itemgetter(i), rows)) for i in range(width)]


def _tuple(elements: list[_Codec]) -> _Codec:
    """A tuple of known types (``tuple[int, str]``): an array of that length."""
    width = len(elements)
    flat = all(e.check is not None for e in elements)

    def encode(column: Column) -> Column:
        if flat:
            return list(map(list, column))
        coded = [e.encode(c) for e, c in zip(elements, _transpose(column, width), strict=True)]
        return list(map(list, zip(*coded, strict=True)))

    def columns(column: Any, where: str) -> list[Column]:
        _all(column, list, where)
        if column and set(map(len, column)) != {width}:
            raise _fail(where, f"expected arrays of {width} values")
        return _transpose(column, width)

    def decode(column: Any, where: str) -> Column:
        pairs = enumerate(zip(elements, columns(column, where), strict=True))
        decoded = [e.decode(c, f"{where}[{i}]") for i, (e, c) in pairs]
        return list(zip(*decoded, strict=True))

    def verify(column: Any, where: str) -> None:
        for i, (e, c) in enumerate(zip(elements, columns(column, where), strict=True)):
            e.verify(c, f"{where}[{i}]")

    def build(column: Column) -> Column:
        pairs = zip(elements, _transpose(column, width), strict=True)
        return list(zip(*[e.build(c) for e, c in pairs], strict=True))

    def one(value: Any) -> Any:
        return tuple(e.one(v) for e, v in zip(elements, value, strict=True))

    return _Codec(encode, decode, verify, build, one)


def _mapping(value: _Codec) -> _Codec:
    """``dict[str, X]``: an object, in its order. The values of every object in the column are
    coded at once and dealt back to the objects that are not empty: ``zip(d, values)`` takes
    as many as ``d`` has keys (``d`` comes first and ends it)."""

    def deal(column: Column, values: Column) -> Column:
        if not values:  # all empty, as most of a proposal's votes are
            return [{} for _ in column]
        full = map(dict, map(zip, compress(column, column), repeat(iter(values))))
        return [next(full) if d else {} for d in column]

    def encode(column: Column) -> Column:
        return deal(column, value.encode(list(chain.from_iterable(map(dict.values, column)))))

    def values_of(column: Any, where: str) -> Column:
        _all(column, dict, where)
        _all(chain.from_iterable(column), str, where + " (its keys)")
        return list(chain.from_iterable(map(dict.values, column)))

    def decode(column: Any, where: str) -> Column:
        return deal(column, value.decode(values_of(column, where), where + "{}"))

    def verify(column: Any, where: str) -> None:
        if column and not any(column):  # all empty, as most of a proposal's votes are
            _all(column, dict, where)
            return
        value.verify(values_of(column, where), where + "{}")

    def build(column: Column) -> Column:
        return deal(column, value.build(list(chain.from_iterable(map(dict.values, column)))))

    def one(mapping: dict[str, Any]) -> dict[str, Any]:
        return {key: value.one(v) for key, v in mapping.items()} if mapping else {}

    return _Codec(encode, decode, verify, build, one)


@dataclass(frozen=True, slots=True)
class _Fields:
    """A dataclass's fields: their names and codecs, and the records taken apart and built."""

    record: type[Any]
    names: tuple[str, ...]
    codecs: tuple[_Codec, ...]
    values: Callable[[Any], tuple[Any, ...]]  # a record's values, in field order
    getters: tuple[Callable[[Any], Any], ...]  # each field's
    # The fields whose JSON values are not their values (not scalars), by place, and the
    # ``one`` of their codecs: what building a single record converts.
    converted: tuple[tuple[int, Callable[[Any], Any]], ...]

    @classmethod
    def of(cls, record: type[Any]) -> _Fields:
        hints = get_type_hints(record)
        names = tuple(f.name for f in dataclasses.fields(record))
        assert len(names) > 1  # attrgetter of one name gives the value, not a tuple
        codecs = tuple(_codec(hints[name]) for name in names)
        getters = tuple(map(attrgetter, names))
        converted = tuple((i, c.one) for i, c in enumerate(codecs) if c.check is None)
        return cls(record, names, codecs, attrgetter(*names), getters, converted)

    @property
    def flat(self) -> bool:
        return all(codec.check is not None for codec in self.codecs)

    def columns(self, records: Iterable[Any]) -> list[Column]:
        """The records' values, coded, a column per field."""
        records = records if isinstance(records, list) else list(records)
        pairs = zip(self.codecs, self.getters, strict=True)
        return [codec.encode(list(map(get, records))) for codec, get in pairs]

    def build(self, columns: list[Column], where: str) -> Column:
        """The records whose values are ``columns``, one per field: checked, then built."""
        if len(set(map(len, columns))) > 1:
            raise _fail(where, "its fields hold different numbers of values")
        pairs = zip(self.names, self.codecs, columns, strict=True)
        decoded = [codec.decode(column, f"{where}.{name}") for name, codec, column in pairs]
        return list(map(self.record, *decoded))

    def verify(self, columns: list[Column], where: str) -> None:
        """What ``build`` checks, and nothing built."""
        if len(set(map(len, columns))) > 1:
            raise _fail(where, "its fields hold different numbers of values")
        for name, codec, column in zip(self.names, self.codecs, columns, strict=True):
            codec.verify(column, f"{where}.{name}")

    def built(self, columns: list[Column]) -> Column:
        """The records whose values are ``columns`` (verified), all at once."""
        pairs = zip(self.codecs, columns, strict=True)
        return list(map(self.record, *[codec.build(column) for codec, column in pairs]))

    def one(self, values: Iterable[Any]) -> Any:
        """The record whose values (verified) are ``values``, in field order."""
        values = list(values)
        for i, convert in self.converted:
            values[i] = convert(values[i])
        return self.record(*values)


def _record(fields: _Fields) -> _Codec:
    """A record inside another: an array of its values in field order."""
    width = len(fields.names)
    flat = fields.flat

    def encode(column: Column) -> Column:
        if flat:  # no value to code: each record's values as they are
            return list(map(list, map(fields.values, column)))
        return list(map(list, zip(*fields.columns(column), strict=True)))

    def columns(column: Any, where: str) -> list[Column]:
        _all(column, list, where)
        if column and set(map(len, column)) != {width}:
            raise _fail(where, f"expected arrays of the {width} fields {list(fields.names)}")
        return _transpose(column, width)

    def decode(column: Any, where: str) -> Column:
        return fields.build(columns(column, where), where)

    def verify(column: Any, where: str) -> None:
        fields.verify(columns(column, where), where)

    def build(column: Column) -> Column:
        return fields.built(_transpose(column, width))

    return _Codec(encode, decode, verify, build, fields.one)


def _columns(table: Any, fields: _Fields, where: str) -> list[Column]:
    """A table as the checkpoint holds it, an object of arrays, as its columns in field order
    (their values unchecked)."""
    if type(table) is not dict or set(table) != set(fields.names):
        raise _fail(where, f"expected an object of the columns {list(fields.names)}")
    columns = [table[name] for name in fields.names]
    for name, values in zip(fields.names, columns, strict=True):
        if type(values) is not list:
            raise _fail(f"{where}.{name}", "expected an array")
    return columns


def _table(fields: _Fields, key: str | None) -> _Codec:
    """A table of the document's (its sections, agents, proposals, ...): an object of columns,
    one per field. With ``key``, a dict of the records by that field; else a list."""
    by_key = attrgetter(key) if key is not None else None
    at = fields.names.index(key) if key is not None else None

    def encode(column: Column) -> Column:
        tables = (t.values() if by_key else t for t in column)
        return [dict(zip(fields.names, fields.columns(t), strict=True)) for t in tables]

    def keyed(records: Column, where: str) -> Any:
        if by_key is None:
            return records
        out = dict(zip(map(by_key, records), records, strict=True))
        if len(out) != len(records):
            raise _fail(where, f"two records with the same {key}")
        return out

    def decode(column: Any, where: str) -> Column:
        return [keyed(fields.build(_columns(t, fields, where), where), where) for t in column]

    def verify(column: Any, where: str) -> None:
        for table in column:
            columns = _columns(table, fields, where)
            fields.verify(columns, where)
            if at is not None and len(set(columns[at])) != len(columns[at]):
                raise _fail(where, f"two records with the same {key}")

    def build(column: Column) -> Column:
        return [keyed(fields.built([t[name] for name in fields.names]), "") for t in column]

    return _Codec(encode, decode, verify, build, lambda table: build([table])[0])


_LAYOUT: dict[str, list[str]] = {}  # the fields of the records kept as arrays, by type


def _codec(kind: Any) -> _Codec:
    origin, args = get_origin(kind), get_args(kind)
    if kind in (str, int, bool):
        return _scalar(frozenset({kind}))
    if origin is Literal:
        return _scalar(frozenset({str}), frozenset(args))
    if origin in (Union, types.UnionType):
        rest = [a for a in args if a is not types.NoneType]
        if len(rest) != 1 or len(args) != 2:
            raise TypeError(f"no codec for {kind!r}")
        inner = _codec(rest[0])
        if inner.check is not None:  # a scalar or None: one check for the column
            literal = get_args(rest[0]) if get_origin(rest[0]) is Literal else None
            kinds = frozenset({str} if literal else {rest[0]}) | {types.NoneType}
            return _scalar(kinds, frozenset(literal) if literal else None)
        return _optional(inner)
    if origin is list:
        return _sequence(_codec(args[0]), list)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return _sequence(_codec(args[0]), tuple)
    if origin is tuple:
        return _tuple([_codec(a) for a in args])
    if origin is dict and args[0] is str:
        return _mapping(_codec(args[1]))
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        _LAYOUT[kind.__name__] = [f.name for f in dataclasses.fields(kind)]
        return _record(_Fields.of(kind))
    raise TypeError(f"no codec for {kind!r}")


def _field(name: str, kind: Any) -> _Codec:
    """A field of the checkpoint: a table if it holds records, else as its type says."""
    record = get_args(kind)[-1] if get_origin(kind) in (list, dict) else None
    if dataclasses.is_dataclass(record) and isinstance(record, type):
        return _table(_Fields.of(record), _KEYED.get(name))
    return _codec(kind)


_FIELDS = get_type_hints(_Checkpoint)
_CODECS = {name: _field(name, kind) for name, kind in _FIELDS.items()}
_PROPOSAL_FIELDS = _Fields.of(Proposal)

R = TypeVar("R")
BUILT_ALONE = 1_000  # records of a Restored built one by one, at least, before all the rest


class Restored(MutableMapping[str, R]):
    """A table of records by key restored from a checkpoint (a document's proposals), that
    builds its records from the checkpoint's columns only when they are read.

    It is the dict the fold keeps in every way the document's code can tell: the same keys in
    the same order, the same records, each built once and then kept (the same object every
    time, changed in place by the fold like any other), new ones added at the end. The columns
    are checked whole when it is made (``restore_document`` refuses a checkpoint before any of
    this exists); a record is built when it is looked up, and every record left is built at once,
    a column at a time, when the values or items are walked (or compared, copied, pickled: all
    go through ``items``). Walking the keys, ``in`` and ``len`` build nothing.

    A record built alone takes about twice as long as one of many built together, so once an
    eighth of them were looked up one by one (a scan of the keys that reads each, as a filter
    on closed statuses does), the rest are built together: the scan then costs about what
    building them all at once would."""

    __slots__ = ("_alone", "_columns", "_fields", "_items", "_keys", "_unbuilt")

    def __init__(self, fields: _Fields, keys: Column, columns: list[Column]) -> None:
        """The records whose values are ``columns`` (verified), by ``keys`` (distinct)."""
        # A key's record, or (an int) its row in ``columns``: no record is an int.
        self._items: dict[str, Any] = dict(zip(keys, range(len(keys)), strict=True))
        self._keys: Column | None = keys
        self._fields = fields
        self._columns: list[Column] | None = columns
        self._unbuilt = len(self._items)
        self._alone = max(BUILT_ALONE, len(keys) // 8)  # built one by one before all are

    def __getitem__(self, key: str) -> R:
        value: R = self._items[key]  # (no cast: a call, on the path every lookup takes)
        if type(value) is int:
            value = self._build_one(key, value)
        return value

    def _build_one(self, key: str, row: Any) -> Any:
        """The record of ``key``, in ``row`` of the columns, built now."""
        assert self._columns is not None
        record = self._items[key] = self._fields.one([c[row] for c in self._columns])
        self._built(1)
        self._alone -= 1
        if not self._alone:
            self.build_all()
        return record

    def __setitem__(self, key: str, value: R) -> None:
        if type(self._items.get(key)) is int:
            self._built(1)
        self._items[key] = value

    def __delitem__(self, key: str) -> None:
        if type(self._items.pop(key)) is int:
            self._built(1)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._items)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def unbuilt(self) -> int:
        """How many of its records are not built yet."""
        return self._unbuilt

    def keys(self) -> KeysView[str]:
        return self._items.keys()

    def values(self) -> ValuesView[R]:
        self.build_all()
        return self._items.values()

    def items(self) -> ItemsView[str, R]:
        self.build_all()
        return self._items.items()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self.items())!r})"

    def __reduce__(self) -> tuple[type[dict[str, R]], tuple[dict[str, R]]]:
        """A copy, a deep copy or a pickle of it is a dict of all its records."""
        return dict, (dict(self.items()),)

    def build_rows(self, rows: list[int]) -> None:
        """Build the records of ``rows`` of the columns (not built yet), a column at a time."""
        if not rows:
            return
        keys, columns = self._keys, self._columns
        assert keys is not None and columns is not None
        # Every row, when none is built yet, is every row in order: the rows left in ``_items``
        # keep their places (a key deleted or set anew holds no row any more).
        if len(rows) != len(keys):
            columns = [list(map(column.__getitem__, rows)) for column in columns]
        records = self._fields.built(columns)
        self._items.update(zip(map(keys.__getitem__, rows), records, strict=True))
        self._built(len(rows))

    def build_all(self) -> None:
        """Build every record not built yet."""
        if self._unbuilt:
            self.build_rows([value for value in self._items.values() if type(value) is int])

    def _built(self, count: int) -> None:
        self._unbuilt -= count
        if not self._unbuilt:  # every record is built: the checkpoint's columns can go
            self._columns = self._keys = None


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Both ways build a container or more per record, none of them garbage: left on, the
    cyclic collector walks the growing heap again and again (it doubled the time). As in
    ``engine.workspace``, it is paused meanwhile, then left as the caller had it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# -- dump and restore ----------------------------------------------------------------------------
def dump_document(doc: Document) -> dict[str, Any]:
    """The whole state of ``doc`` as JSON-native data (see the module's docstring). Nothing in
    it is shared with ``doc``."""
    state: dict[str, Any] = {name: getattr(doc, name) for name in _FIELDS}
    state["salience"] = [(*key, score) for key, score in doc.salience.items()]
    state["open_by_section"] = [(key, list(ids)) for key, ids in doc.open_by_section.items()]
    state["by_status"] = {status: list(ids) for status, ids in doc.by_status.items()}
    state["idempotency"] = list(map(add, doc.idempotency.keys(), doc.idempotency.values()))
    state["timers"] = doc.all_timers()
    data: dict[str, Any] = {"format": FORMAT, "layout": {k: list(v) for k, v in _LAYOUT.items()}}
    with _collector_paused():
        for name, codec in _CODECS.items():
            data[name] = codec.encode([state[name]])[0]
    return data


def restore_document(data: Any) -> Document:
    """The document ``data`` holds (a ``dump_document``, or its JSON parsed); nothing of
    ``data`` is shared with it but its proposals' columns, kept as they are to build the closed
    proposals from when they are read (see ``Restored``): ``data`` must not be changed after.
    ``CheckpointError`` (a ``ValueError``) if ``data`` is not a checkpoint of this format, or
    not a consistent one: every column is checked here, the closed proposals' too."""
    if type(data) is not dict:
        raise _fail("the checkpoint", f"expected an object, found {type(data).__name__}")
    if type(data.get("format")) is not int or data["format"] != FORMAT:
        raise _fail("format", f"expected {FORMAT}, found {data.get('format')!r}")
    if data.get("layout") != _LAYOUT:
        raise _fail("layout", f"expected the records' fields to be {_LAYOUT}")
    expected = {"format", "layout", *_FIELDS}
    if set(data) != expected:
        missing, extra = sorted(expected - set(data)), sorted(set(data) - expected)
        raise _fail("the checkpoint", f"missing {missing}, unexpected {extra}")
    with _collector_paused():
        state: dict[str, Any] = {}
        for name, codec in _CODECS.items():
            if name == "proposals":
                state[name], index = _proposals(data[name])
            else:
                state[name] = codec.decode([data[name]], name)[0]
        return _build(state, index)


class _Index(NamedTuple):
    """The columns of the proposals table the indexes and the checks need."""

    id: Column
    author: Column
    section: Column
    status: Column


def _proposals(table: Any) -> tuple[Restored[Proposal], _Index]:
    """The proposals table, checked whole; only the open proposals are built now, the closed
    ones when they are read (see ``Restored``)."""
    fields = _PROPOSAL_FIELDS
    columns = _columns(table, fields, "proposals")
    fields.verify(columns, "proposals")
    index = _Index(*(columns[fields.names.index(name)] for name in _Index._fields))
    proposals = Restored[Proposal](fields, index.id, columns)
    if len(proposals) != len(index.id):
        raise _fail("proposals", "two records with the same id")
    proposals.build_rows([i for i, s in enumerate(index.status) if s in OPEN_STATUSES])
    return proposals, index


def _build(state: dict[str, Any], index: _Index) -> Document:
    doc = Document()
    for name in _FIELDS:
        setattr(doc, name, state[name])
    sections = doc.sections
    doc.by_key = dict(zip(map(attrgetter("key"), sections), sections, strict=True))
    doc.by_id = dict(zip(map(attrgetter("id"), sections), sections, strict=True))
    if len(doc.by_key) != len(sections) or len(doc.by_id) != len(sections):
        raise _fail("sections", "two sections with the same key or id")
    doc.positions = {section.key: place for place, section in enumerate(sections)}
    doc.barred = {s.key for s in sections if s.rank > 0 or s.organisation is not None}
    doc.salience = {(agent, key): score for agent, key, score in state["salience"]}
    doc.salience_by_section = defaultdict(dict)
    for agent, key, score in state["salience"]:
        doc.salience_by_section[key][agent] = score
    rows = state["idempotency"]
    doc.idempotency = dict(
        zip(map(itemgetter(0, 1), rows), map(itemgetter(2, 3, 4), rows), strict=True)
    )
    doc.open_by_section = defaultdict(dict)
    for key, ids in state["open_by_section"]:
        if key in doc.open_by_section:
            raise _fail("open_by_section", f"section {key} is listed twice")
        doc.open_by_section[key] = dict.fromkeys(ids)
    doc.by_status = defaultdict(dict)
    for status, ids in state["by_status"].items():
        doc.by_status[status] = dict.fromkeys(ids)
    doc.active = {a.name: a.id for a in doc.agents.values() if a.active}
    doc.by_author = defaultdict(list)
    for author, proposal_id in zip(index.author, index.id, strict=True):
        doc.by_author[author].append(proposal_id)
    doc.timers = sorted(state["timers"])
    doc.intents_on, doc.constraints_on = defaultdict(list), defaultdict(list)
    for on, table in ((doc.intents_on, doc.intents), (doc.constraints_on, doc.constraints)):
        for key, record_id in zip(map(attrgetter("section"), table.values()), table, strict=True):
            on[key].append(record_id)
    _check(doc, index)
    return doc


def _check(doc: Document, proposals: _Index) -> None:
    """What would leave the document inconsistent: references to nothing, and kept indexes
    that do not index what they say."""
    if len(doc.active) != sum(a.active for a in doc.agents.values()):
        raise _fail("agents", "two joined agents with the same name")
    keys = doc.by_key.keys()
    if not {s.parent for s in doc.sections} <= {None, *keys}:
        raise _fail("sections", "a parent that is not a section")
    if any(len(s.history) != s.version or s.history[-1] != s.content for s in doc.sections):
        raise _fail("sections", "a history that does not end at the content of its version")
    if doc.next_key <= max(keys, default=-1) or doc.sequence < 0:
        raise _fail("next_key", "a key already given, or a negative sequence")
    if not set(proposals.section) <= keys:
        raise _fail("proposals", "a proposal on a section that does not exist")
    if not {key for key, _ in doc.aliases.values()} <= keys:
        raise _fail("aliases", "an alias of a section that does not exist")
    if not set(doc.by_status) <= set(STATUSES):
        raise _fail("by_status", f"a status that is not one of {list(STATUSES)}")
    # As many listed as there are proposals, each under its own status, so each once.
    listed = sum(map(len, doc.by_status.values()))
    statuses = dict(zip(proposals.id, proposals.status, strict=True))
    if listed != len(proposals.id) or any(
        countOf(map(statuses.get, ids), status) != len(ids) for status, ids in doc.by_status.items()
    ):
        raise _fail("by_status", "does not list each proposal once, under its status")
    open_by_section = {pid: key for key, ids in doc.open_by_section.items() for pid in ids}
    listed = sum(map(len, doc.open_by_section.values()))
    opened = list(map(OPEN_STATUSES.__contains__, proposals.status))
    ids, keys_of = compress(proposals.id, opened), compress(proposals.section, opened)
    really = dict(zip(ids, keys_of, strict=True))
    if listed != len(really) or open_by_section != really:
        raise _fail("open_by_section", "does not list the open proposals by their section")
    if not {kind for _, kind, _ in doc.timers} <= _TIMER_KINDS:
        raise _fail("timers", f"a kind that is not one of {sorted(_TIMER_KINDS)}")
