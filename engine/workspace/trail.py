"""A document's audit trail kept beside its checkpoint, in pieces (``docs/audit.md``).

Every audit and every ``doc log`` of a document made each event's row (``AuditTrail.rows``)
from its envelope, so each read and parsed the whole log: 209,000 events took about 1.2 s to
read before a row was made. A writing workspace now keeps the rows it has made as pieces, each
the rows of the events of a range of the document's stream, as checkpoints named
``audit:doc:<name>:<after>-<upto>`` (its events are those after ``after`` up to ``upto``).
A piece is saved with the document's checkpoint, holding the rows of the events since the
last piece, and when there are ``MERGE_AT`` of them they are saved again as one.

A piece is a cache like a checkpoint: the store vouches that its last event is still the log's
(``load_checkpoint``) and that its bytes are those saved; what it holds is checked here as it
is read (``InvalidTrailPiece``: the audit then reads the log from there). A piece made by a
build whose rows differ (``ROWS_VERSION``) is not read. This module encodes, decodes and names
pieces; reading and saving them is ``DocumentsAndFrameworks``'s.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from engine.protocol.audit import ROWS_VERSION, AuditRow

TRAIL_PREFIX = "audit:doc:"  # + "<name>:<after>-<upto>"
FORMAT = "pact-audit-trail"
MERGE_AT = 8  # pieces of one document: saved again as one when there are this many

# Each column's types, in ``AuditRow``'s order; a column of text is kept as its distinct
# values and, for each row, the place of its value among them (``_SHARED``): an audit's types,
# actors and sections come from a few dozen values, and each is then read once, not once a row.
_COLUMN_TYPES: tuple[frozenset[type], ...] = (
    frozenset({int}),  # sequence
    frozenset({int}),  # at_ms
    frozenset({str}),  # type
    frozenset({str}),  # actor
    frozenset({str}),  # actor_kind
    frozenset({str, type(None)}),  # section
    frozenset({str}),  # subject
    frozenset({str}),  # detail
    frozenset({str}),  # why
    frozenset({bool}),  # override
    frozenset({bool}),  # withheld
)
_SHARED = frozenset({2, 3, 4, 5, 6, 7, 8})

_row_of_values = functools.partial(tuple.__new__, AuditRow)


class InvalidTrailPiece(ValueError):
    """A stored piece of an audit trail that is not one this build can read as it is."""


@dataclass(frozen=True, slots=True)
class TrailPiece:
    """The rows of the events of a document's stream after ``after`` up to ``upto``, and the
    agents' names the trail had learned by the end of them (``AuditTrail.names``)."""

    after: int
    upto: int
    names: dict[str, str]
    rows: Sequence[AuditRow]


def piece_name(document: str, after: int, upto: int) -> str:
    return f"{TRAIL_PREFIX}{document}:{after}-{upto}"


def piece_range(document: str, name: str) -> tuple[int, int] | None:
    """The ``(after, upto)`` a checkpoint's name gives a piece of ``document``'s trail (None:
    the name is not one)."""
    prefix = f"{TRAIL_PREFIX}{document}:"
    if not name.startswith(prefix):
        return None
    after, dash, upto = name[len(prefix) :].partition("-")
    if not (dash and after.isdigit() and upto.isdigit()) or int(after) >= int(upto):
        return None
    return int(after), int(upto)


def chain_of(document: str, names: Iterable[str]) -> list[tuple[int, int, str]]:
    """The pieces of ``document``'s trail among checkpoint ``names`` that follow one another
    from its first event, as ``(after, upto, name)``, oldest first: where two start at the
    same place the longer is taken, and a gap ends the chain (the log is read from there)."""
    starts: dict[int, tuple[int, str]] = {}
    for name in names:
        found = piece_range(document, name)
        if found is not None and found[1] > starts.get(found[0], (0, ""))[0]:
            starts[found[0]] = (found[1], name)
    chain, covered = [], 0
    while covered in starts:
        upto, name = starts[covered]
        chain.append((covered, upto, name))
        covered = upto
    return chain


def encode_piece(piece: TrailPiece) -> bytes:
    """The piece as bytes: a header line (what it covers, the names, the versions), then its
    rows as columns (one list per field of ``AuditRow``). orjson writes it; json, marked
    ``J``, what orjson refuses (an integer past 64 bits, a lone surrogate)."""
    header = {
        "format": FORMAT,
        "rows": ROWS_VERSION,
        "after": piece.after,
        "upto": piece.upto,
        "names": piece.names,
    }
    columns: list[Any] = [list(column) for column in zip(*piece.rows, strict=True)] or [
        [] for _ in _COLUMN_TYPES
    ]
    for place in _SHARED:
        places: dict[Any, int] = {}
        index = [places.setdefault(value, len(places)) for value in columns[place]]
        columns[place] = [list(places), index]
    try:
        return orjson.dumps(header) + b"\n" + orjson.dumps(columns)
    except TypeError:
        return b"J" + json.dumps([header, columns], separators=(",", ":")).encode()


def decode_piece(data: bytes, after: int, upto: int) -> TrailPiece:
    """The piece ``encode_piece`` wrote, that its name says covers the events after ``after``
    up to ``upto``; ``InvalidTrailPiece`` if it is malformed, of another version, or not
    what its name says."""
    try:
        if data[:1] == b"J":
            header, columns = json.loads(data[1:])
        else:
            head, newline, body = data.partition(b"\n")
            if not newline:
                raise ValueError("no header line")
            header, columns = orjson.loads(head), orjson.loads(body)
    except (ValueError, TypeError, RecursionError) as error:
        raise InvalidTrailPiece(f"not a piece of an audit trail ({error})") from None
    names = _names(header, after, upto)
    return TrailPiece(after, upto, names, _rows(columns, upto - after))


def piece_names(data: bytes, after: int, upto: int) -> dict[str, str]:
    """The agents' names of the piece ``data`` (as ``decode_piece``'s), its header alone read
    where it can be: what a new piece after it starts from, without its rows."""
    end = data.find(b"\n")
    if data[:1] == b"J" or end < 0:
        return decode_piece(data, after, upto).names
    try:
        header = orjson.loads(data[:end])
    except orjson.JSONDecodeError as error:
        raise InvalidTrailPiece(f"not a piece of an audit trail ({error})") from None
    return _names(header, after, upto)


def _names(header: Any, after: int, upto: int) -> dict[str, str]:
    """A piece's header checked (its format, its rows' version, the range its name says):
    the names it holds."""
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise InvalidTrailPiece("not a piece of an audit trail")
    if header.get("rows") != ROWS_VERSION:
        raise InvalidTrailPiece(
            f"rows of version {header.get('rows')!r}; this build makes version {ROWS_VERSION}"
        )
    if (header.get("after"), header.get("upto")) != (after, upto):
        raise InvalidTrailPiece(
            f"it says it covers events {header.get('after')!r}-{header.get('upto')!r},"
            f" its name {after}-{upto}"
        )
    names = header.get("names")
    if not isinstance(names, dict) or set(map(type, names.values())) - {str}:
        raise InvalidTrailPiece("its agents' names are not a map of names")
    return names


def _rows(columns: Any, count: int) -> list[AuditRow]:
    """The rows of a piece's columns, each column's types checked at once."""
    if not isinstance(columns, list) or len(columns) != len(_COLUMN_TYPES):
        raise InvalidTrailPiece(f"its rows are not {len(_COLUMN_TYPES)} columns")
    for place, types in enumerate(_COLUMN_TYPES):
        column = columns[place]
        if place in _SHARED:
            column = columns[place] = _shared(column, types)  # its values' types checked
        if not isinstance(column, list) or len(column) != count:
            raise InvalidTrailPiece(f"a column of its rows does not hold {count} values")
        if place not in _SHARED and set(map(type, column)) - types:
            raise InvalidTrailPiece("a column of its rows holds a value of the wrong type")
    # Each row made from its values' tuple by tuple's own constructor (AuditRow's, a Python
    # function called once a row, took a fifth of reading a piece): every field is given.
    return list(map(_row_of_values, zip(*columns, strict=True)))


def _shared(column: Any, types: frozenset[type]) -> list[Any]:
    """A column kept as its distinct values and each row's place among them, as the values."""
    if not (isinstance(column, list) and len(column) == 2 and all(map(_is_list, column))):
        raise InvalidTrailPiece("a column of text is not its values and their places")
    values, index = column
    if set(map(type, values)) - types:
        raise InvalidTrailPiece("a column of its rows holds a value of the wrong type")
    if set(map(type, index)) - {int} or (index and not 0 <= min(index) <= max(index) < len(values)):
        raise InvalidTrailPiece("a column of text names a value it does not hold")
    return list(map(values.__getitem__, index))


def _is_list(value: object) -> bool:
    return isinstance(value, list)


def rows_between(piece: TrailPiece, after: int, until: int | None) -> Sequence[AuditRow]:
    """The piece's rows of the events after ``after`` up to ``until`` (None: its last)."""
    start = max(0, after - piece.after)
    stop = len(piece.rows) if until is None else max(0, min(len(piece.rows), until - piece.after))
    return piece.rows[start:stop] if (start, stop) != (0, len(piece.rows)) else piece.rows
