"""The hash chain: canonical JSON, event hashes, and verification over stored rows.

An event's hash is the SHA-256 (hex) of the canonical JSON of all its other fields, its
``prev_hash`` included::

    {"actor":..,"payload":{..},"prev_hash":..,"seq":..,"stream":..,"stream_seq":..,
     "time_ns":..,"type":..}

Canonical JSON is ``json.dumps(..., sort_keys=True, separators=(",", ":"), ensure_ascii=True,
allow_nan=False)``, so any program can recompute a hash from the stored columns; the payload
column holds the payload's canonical JSON. Each event links to the previous event of the whole
log (the first to :data:`GENESIS_HASH`), which orders the streams too.

The store writes that form with orjson where orjson writes the same bytes (see
:func:`canonical_json_fast`), and with json's own encoder everywhere else.
"""

from __future__ import annotations

import enum
import hashlib
import json
import marshal
import math
import operator
import os
import re
import uuid
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring_ascii
from typing import Any

import orjson

from engine.store.base import ChainProblem, NewEvent, StoredEvent, VerifyResult
from engine.store.errors import InvalidEvent

# The optional C extension (_chain_c.c), built by setup.py where a C compiler was at hand: the
# link loop and marshal's type check, several times faster. The Python code here stays the
# reference: each C function is used only once a check at import finds that it agrees.
# PACT_STORE_PURE_PYTHON=1 leaves the extension unused.
try:
    from engine.store import _chain_c
except ImportError:
    _C_BUILT = False
else:
    _C_BUILT = True
_USE_C = _C_BUILT and not os.environ.get("PACT_STORE_PURE_PYTHON")


def _c_disagrees(function: str, problem: str) -> None:
    """Say so: the C function is left unused, but a build that disagrees needs looking into."""
    warnings.warn(
        f"engine.store._chain_c.{function} disagrees with the Python code ({problem}): not used",
        RuntimeWarning,
        stacklevel=3,
    )


GENESIS_HASH = "0" * 64

# Rows as stored, in this column order.
ChainRow = tuple[int, str, int, str, int, str, str, str, str]
CHAIN_COLUMNS = "seq, stream, stream_seq, type, time_ns, actor, payload, prev_hash, hash"

# The C string encoder behind json.dumps(..., ensure_ascii=True), without its per-call setup.
_quote = encode_basestring_ascii


def _not_json(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# json.dumps builds a C encoder for every call, which costs as much as encoding a small payload:
# on CPython the same encoder is built once here. It keeps no table of the containers it is in
# (json's check for circular references), so a circular value ends in RecursionError, which
# canonical_json turns into the ValueError json.dumps raises.
_encode_chunks: Callable[[object, int], Iterable[str]]
try:
    from _json import make_encoder
except ImportError:  # not CPython: json's own encoder
    _json_encoder = json.JSONEncoder(
        sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )
    _encode_chunks = lambda value, _indent_level: (_json_encoder.encode(value),)  # noqa: E731
else:
    _encode_chunks = make_encoder(None, _not_json, _quote, None, ":", ",", True, False, False)


def canonical_json(value: object) -> str:
    """Canonical JSON by json's own encoder: the reference, and the fallback of the fast one.

    Raises ``TypeError`` or ``ValueError`` for values JSON cannot represent (NaN included).
    """
    try:
        return "".join(_encode_chunks(value, 0))
    except RecursionError as error:
        raise ValueError("Circular reference detected (or nesting too deep)") from error


# Canonical JSON by orjson, several times faster than json's encoder, wherever orjson's output is
# known to be json's. For values of the builtin types themselves (no subclasses, no enums: see
# _exact_builtins) the two differ only in ways orjson's output or errors show:
#  - orjson raises for ints past 64 bits, keys that are not str (json converts int, float, bool
#    and None keys), lone surrogates (json escapes them), and nesting deeper than 255;
#  - it writes NaN and the infinities as null, where json refuses them;
#  - below 1e-4 it writes some floats in full (0.00001234) and others with a one-digit exponent
#    (1e-7), where json always writes two or more digits (1.234e-05, 1e-07): patterns json never
#    writes in a number;
#  - it writes text past ASCII as UTF-8 and DEL raw, where json writes \u escapes. That one is
#    undone, not avoided: see _escaped_like_json. Keys past ASCII sort alike, since UTF-8 bytes
#    sort in code point order.
# Any other difference hands the value to json's encoder. The checks may fire on strings that
# merely look alike ("e-7" in a text): that costs a fallback, never a wrong byte.

# Subclasses, dataclasses and datetimes raise rather than being written orjson's way. marshal
# keeps them out already, and enums, which orjson has no such option for; this costs nothing.
_ORJSON_OPTIONS = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
)
_ORJSON_ONLY_FLOAT = re.compile(r"e-[0-9](?![0-9])|0\.0000")


def _marshal_takes(value: Any) -> bool:
    """Whether ``value`` is made of builtin types only, subclasses excluded: marshal's rule.

    orjson writes some values json refuses (plain enums, UUIDs, its own Fragment) and writes
    ``.value`` for enums that subclass int or str, where json writes the int or str itself.
    marshal takes exact builtin types only (and a few orjson refuses: bytes, sets, complex), so
    orjson is only given values whose differences from json the checks below cover.
    """
    try:
        marshal.dumps(value)
    except ValueError:
        return False
    return True


def _c_plain_json_types() -> Callable[[object], bool] | None:
    """The C version of :func:`_marshal_takes`, if it is in use and agrees on a few values.

    It takes exact dicts, lists, tuples, str, int, float, bool and None, as marshal does, and
    refuses every other type and nesting past 256 levels: values orjson refuses too, so json's
    encoder writes them either way. Marshal writes out the whole value to answer; this does not.
    """
    if not _USE_C:
        return None
    check = _chain_c.plain_json_types
    plain: list[object] = [{"a": [1, -2.5, None, True, (2**70, "\u00e9\ud800")]}, [[[]]]]
    not_plain: list[object] = [[re.RegexFlag.ASCII], {"a": [1, {2}]}, [b"bytes"]]
    if all(map(check, plain)) and not any(map(check, not_plain)):
        return check
    _c_disagrees("plain_json_types", "on a few values")
    return None


# Whether orjson may be given a value at all (see _orjson_text).
_exact_builtins: Callable[[object], bool] = _c_plain_json_types() or _marshal_takes


def _orjson_text(value: object, read_back: object) -> str | None:
    """orjson's JSON text of ``value``, or None where json may write it otherwise.

    ``value`` must pass :func:`_exact_builtins`; ``read_back`` is what the text reads back as
    when it is right. The text may still need :func:`_escaped_like_json`.
    """
    try:
        text = orjson.dumps(value, option=_ORJSON_OPTIONS).decode()
    except orjson.JSONEncodeError:
        return None
    # Each pattern is looked for after one of its characters, which is quicker to scan for.
    if (("-" in text and "e-" in text) or ("." in text and "0.0000" in text)) and (
        _ORJSON_ONLY_FLOAT.search(text)
    ):
        return None
    # null stands for None, or for NaN or an infinity: only None reads back equal.
    if "null" in text and orjson.loads(text) != read_back:
        return None
    return text


def _escaped_like_json(text: str) -> str:
    """orjson's ``text`` with what json escapes escaped: past ASCII, and DEL.

    json's own string escaper, run over the whole JSON text, escapes those (orjson leaves no
    control character raw), and also every quote and backslash, which are then unescaped: each
    ``\\"`` first (no quote is left raw, so each is a whole escape), then each ``\\\\`` from
    left to right, which keeps the backslash that opens each new ``\\u`` escape.
    """
    if text.isascii() and "\x7f" not in text:
        return text
    return _quote(text)[1:-1].replace('\\"', '"').replace("\\\\", "\\")


def canonical_json_fast(value: object) -> str:
    """Exactly :func:`canonical_json`, and the same errors; faster, and more so in batches."""
    text = _by_orjson(value)
    return canonical_json(value) if text is None else text


def _by_orjson(value: object) -> str | None:
    """The canonical JSON of ``value`` by orjson, or None where it may differ from json's."""
    if not (_ORJSON_TRUSTED and _exact_builtins(value)):
        return None
    text = _orjson_text(value, value)
    return None if text is None else _escaped_like_json(text)


# Between the values of a batch: orjson writes a Fragment as given, and never writes a raw
# newline itself (not even in strings), so the batch's text splits exactly at ",\n0,". The 0
# keeps the text JSON: the separators read back as 0.
_BATCH_SEPARATOR = orjson.Fragment(b"\n0")


def canonical_json_batch(values: Iterable[object]) -> list[str] | None:
    """:func:`canonical_json_fast` of each of ``values``, by one call of marshal and of orjson.

    Returns None when some value needs more care (json's encoder, or an error): encode them one
    by one then. Most of a call's cost is the same whatever the value: for small payloads a
    batch costs half as much per payload as one call each.
    """
    values = list(values)
    if len(values) < 2:  # nothing to share
        texts = [text for text in map(_by_orjson, values) if text is not None]
        return texts if len(texts) == len(values) else None
    if not (_ORJSON_TRUSTED and _exact_builtins(values)):
        return None
    items: list[object] = [_BATCH_SEPARATOR] * (2 * len(values) - 1)
    items[::2] = values
    read_back: list[object] = [0] * len(items)
    read_back[::2] = values
    text = _orjson_text(items, read_back)
    if text is None:
        return None
    texts = text[1:-1].split(",\n0,")
    if text.isascii() and "\x7f" not in text:
        return texts
    return [_escaped_like_json(part) for part in texts]


class _Probe(enum.Enum):
    MEMBER = 1


def _orjson_keeps_to_the_checks() -> bool:
    """Whether the installed orjson differs from json only in the ways the checks above catch.

    The tests prove it for the orjson they run with (tests/engine/store/test_canonical_json.py);
    this probe of the likeliest changes, run once, turns orjson off should a later release write
    numbers or text otherwise, or write a type that marshal lets through.
    """
    numbers: list[object] = [
        *(float(f"{mantissa}e{exponent}") for mantissa in (1, 1.5) for exponent in range(-8, 24)),
        0.1, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 123456.789,
        2**63 - 1, 2**63, 2**64 - 1, -(2**63), 0, -1,
    ]  # fmt: skip
    texts = ['\x00\x1f\x7f"\\/', "\u00e9\u2028\uffff\U0001f600", "plain"]
    probes: list[object] = [
        *([number] for number in numbers),  # one each: a fallback on one must not hide another
        *([text] for text in texts),
        {text: None for text in ["b", "a", "\u00e9", "\uffff", "\U0001f600", "B", "", "\x7f"]},
        [{"nested": [[], {}, [None, True, False]]}],
    ]
    checked = [(probe, _by_orjson(probe)) for probe in probes]
    taken = [probe for probe, text in checked if text is not None]
    batch = canonical_json_batch(taken)
    if batch is not None:
        checked += zip(taken, batch, strict=True)
    if any(text is not None and text != canonical_json(probe) for probe, text in checked):
        return False
    # What json refuses or writes otherwise must not come out of orjson.
    refused = [[orjson.Fragment(b"1")], [_Probe.MEMBER], [uuid.UUID(int=1)], [math.nan]]
    return canonical_json_batch(refused) is None and not any(map(_by_orjson, refused))


_ORJSON_TRUSTED = True  # while probing
_ORJSON_TRUSTED = _orjson_keeps_to_the_checks()


def event_hash(
    seq: int,
    stream: str,
    stream_seq: int,
    type: str,
    time_ns: int,
    actor: str,
    payload_json: str,
    prev_hash: str,
) -> str:
    # Spelled out rather than canonical_json(a dict): the payload is already canonical text, and
    # encoding it again for every hash would cost as much as the rest of an append. The keys are
    # written in sorted order; a test checks this equals canonical_json of the whole envelope.
    # link_python and the C loop write the same envelope inline.
    envelope = (
        f'{{"actor":{_quote(actor)},"payload":{payload_json},"prev_hash":{_quote(prev_hash)},'
        f'"seq":{seq},"stream":{_quote(stream)},"stream_seq":{stream_seq},'
        f'"time_ns":{time_ns},"type":{_quote(type)}}}'
    )
    return hashlib.sha256(envelope.encode()).hexdigest()


class _Quoted(dict[str, str]):
    """Each string json-quoted once: streams, types and actors repeat within a batch."""

    def __missing__(self, text: str) -> str:
        quoted = self[text] = _quote(text)
        return quoted


_stream_and_length = operator.itemgetter(1, 2)  # of a StoredEvent


@dataclass(slots=True)
class ChainHead:
    """What the next event links to: the last event's seq and hash, and stream lengths.

    ``stream_lengths`` holds the streams whose length is known; any other stream must be looked
    up before appending to it. Kept current by :meth:`record`-ing every later event.
    """

    seq: int = 0
    hash: str = GENESIS_HASH
    stream_lengths: dict[str, int] = field(default_factory=dict)

    def record(self, events: Sequence[StoredEvent]) -> None:
        """Move the head past ``events``, the committed events that follow it, in order."""
        if events:
            self.seq, self.hash = events[-1].seq, events[-1].hash
            self.stream_lengths.update(map(_stream_and_length, events))

    def link(
        self, events: Sequence[NewEvent], payloads: Sequence[str], now_ns: int
    ) -> tuple[list[StoredEvent], list[ChainRow]]:
        """Give ``events`` their positions, times and hashes after this head, left unchanged.

        ``events`` and ``payloads`` come from :func:`encode_events`; events without a time get
        ``now_ns``. Returns the stored events and the same as rows to insert. The length of
        every stream in ``events`` must be known.
        """
        if type(now_ns) is not int:
            raise TypeError(f"the clock returned {now_ns!r}, not an int")
        return linker(events, payloads, self.seq, self.hash, now_ns, self.stream_lengths)


Linker = Callable[
    [Sequence[NewEvent], Sequence[str], int, str, int, dict[str, int]],
    tuple[list[StoredEvent], list[ChainRow]],
]


def link_python(
    events: Sequence[NewEvent],
    payloads: Sequence[str],
    seq: int,
    prev_hash: str,
    now_ns: int,
    known_lengths: dict[str, int],
) -> tuple[list[StoredEvent], list[ChainRow]]:
    """:meth:`ChainHead.link` after a head at ``seq`` and ``prev_hash``: the reference.

    The C loop in _chain_c.c does the same, several times faster; see :data:`linker`.
    """
    stored: list[StoredEvent] = []
    rows: list[ChainRow] = []
    appended_lengths: dict[str, int] = {}
    quoted = _Quoted()
    sha256, new_tuple = hashlib.sha256, tuple.__new__
    quoted_prev = _quote(prev_hash)
    for event, payload_json in zip(events, payloads, strict=True):
        seq += 1
        stream, type_, actor, payload = event.stream, event.type, event.actor, event.payload
        time_ns = now_ns if event.time_ns is None else event.time_ns
        stream_seq = appended_lengths[stream] = (
            appended_lengths.get(stream) or known_lengths[stream]
        ) + 1
        # event_hash(), inlined: this loop is most of an append's own cost.
        hash_ = sha256(
            f'{{"actor":{quoted[actor]},"payload":{payload_json},"prev_hash":{quoted_prev},'
            f'"seq":{seq},"stream":{quoted[stream]},"stream_seq":{stream_seq},'
            f'"time_ns":{time_ns},"type":{quoted[type_]}}}'.encode()
        ).hexdigest()
        # The payload object is shared, not decoded again from payload_json: for JSON-native
        # payloads (the only kind canonical JSON accepts unchanged) the two are equal.
        # StoredEvent(...) without the NamedTuple's Python-level __new__: half the cost.
        stored.append(
            new_tuple(
                StoredEvent,
                (seq, stream, stream_seq, type_, time_ns, actor, payload, prev_hash, hash_),
            )
        )
        rows.append(
            (seq, stream, stream_seq, type_, time_ns, actor, payload_json, prev_hash, hash_)
        )
        prev_hash, quoted_prev = hash_, f'"{hash_}"'  # hex digits need no escaping
    return stored, rows


def _c_link() -> Linker | None:
    """The C version of :func:`link_python`, if it is built and links a few awkward events alike.

    Tests compare the two on many more (tests/engine/store/test_chain_c.py).
    """
    if not _C_BUILT:
        return None

    def link_c(
        events: Sequence[NewEvent],
        payloads: Sequence[str],
        seq: int,
        prev_hash: str,
        now_ns: int,
        known_lengths: dict[str, int],
    ) -> tuple[list[StoredEvent], list[ChainRow]]:
        return _chain_c.link(events, payloads, seq, prev_hash, now_ns, known_lengths, StoredEvent)

    events = [
        NewEvent("ctx:\u00e9", 'type "\\\n"', {"text": "\u2603 \U0001f600" * 20}, "\x00\x7f"),
        NewEvent("s", "t", {}, time_ns=-(2**63)),
        NewEvent("ctx:\u00e9", "t", {"n": [1.5, None, True]}, time_ns=2**80),
    ]
    payloads = [canonical_json(event.payload) for event in events]
    check = (events, payloads, 41, 'head "\u2028"', 7, {"ctx:\u00e9": 2, "s": 0})
    try:
        if link_c(*check) == link_python(*check):
            return link_c
        _c_disagrees("link", "different hashes or rows")
    except Exception as error:
        _c_disagrees("link", repr(error))
    return None


link_c = _c_link()
# What ChainHead.link uses (tests may set it).
linker: Linker = link_c if _USE_C and link_c else link_python


# Payloads are encoded in batches of this many: enough to share the cost of each call, small
# enough that one odd payload slows only its own batch, and that the batch's text stays small
# (larger texts were slower to allocate, not faster).
_PAYLOADS_PER_BATCH = 1024
# SQLite's INTEGER range, for times given with an event.
_MIN_INT64, _MAX_INT64 = -(2**63), 2**63 - 1


def encode_events(
    events: Iterable[object], where: str | None = None
) -> tuple[list[NewEvent], list[str]]:
    """Check that ``events`` can be stored; return them and their payloads' canonical JSON.

    Events come back as given, but for fields of a subclass of str or int (a StrEnum stream, an
    IntEnum time), which come back as the plain str or int that is hashed, stored and read back.
    This part of linking does not depend on where the events land in the log, so it can run
    before the write lock is taken. Raises :class:`InvalidEvent` naming the first bad event.
    """
    checked: list[NewEvent] = []
    for index, event in enumerate(events):
        if not (
            type(event) is NewEvent
            and type(event.stream) is str
            and type(event.type) is str
            and type(event.actor) is str
            and event.stream
            and event.type
            and (event.time_ns is None or _is_int64(event.time_ns))
        ):
            event = _checked_event(index, event, where)
        checked.append(event)
    payloads: list[str] = []
    for start in range(0, len(checked), _PAYLOADS_PER_BATCH):
        batch = checked[start : start + _PAYLOADS_PER_BATCH]
        texts = canonical_json_batch([event.payload for event in batch])
        if texts is None:  # some payload needs json's encoder, or is not JSON
            texts = [_payload_json(index, event, where) for index, event in enumerate(batch, start)]
        payloads += texts
    return checked, payloads


def _payload_json(index: int, event: NewEvent, where: str | None) -> str:
    try:
        return canonical_json_fast(event.payload)
    except (TypeError, ValueError) as error:
        raise InvalidEvent(
            f"event {index} ({event.type!r}): the payload is not JSON: {error}",
            path=where,
            index=index,
        ) from error


def _is_int64(value: object) -> bool:
    return type(value) is int and _MIN_INT64 <= value <= _MAX_INT64


def _checked_event(index: int, event: object, where: str | None) -> NewEvent:
    """``event`` with plain str and int fields, or InvalidEvent saying what is wrong with it."""

    def invalid(problem: str) -> InvalidEvent:
        return InvalidEvent(f"event {index}: {problem}", path=where, index=index)

    if not isinstance(event, NewEvent):
        raise invalid(f"commands must return NewEvent objects, not {type(event).__name__}")
    texts = []
    for name in ("stream", "type", "actor"):
        value = getattr(event, name)
        if not isinstance(value, str):
            raise invalid(f"{name} must be a str, not {type(value).__name__}")
        texts.append(str.__str__(value))
    stream, type_, actor = texts
    if not stream or not type_:
        raise invalid("stream and type must be non-empty")
    time_ns = event.time_ns
    if time_ns is not None:
        if isinstance(time_ns, bool) or not isinstance(time_ns, int):
            raise invalid(f"time_ns must be an int or None, not {type(time_ns).__name__}")
        time_ns = int.__index__(time_ns)
        if not _is_int64(time_ns):
            raise invalid(f"time_ns {time_ns} is out of SQLite's 64-bit integer range")
    return NewEvent(stream, type_, event.payload, actor, time_ns)


def verify_rows(rows: Iterable[ChainRow]) -> VerifyResult:
    """Walk rows in ``seq`` order and report the first one that breaks the chain.

    Streaming: holds one row and the last ``stream_seq`` of each stream, never the whole log.
    """
    expected_seq = 1
    prev_hash = GENESIS_HASH
    stream_lengths: dict[str, int] = {}
    checked = 0
    for seq, stream, stream_seq, type_, time_ns, actor, payload, stored_prev, stored_hash in rows:
        if seq != expected_seq:
            return VerifyResult(
                checked, seq, ChainProblem.SEQ_GAP, f"expected seq {expected_seq}, found {seq}"
            )
        if stored_prev != prev_hash:
            return VerifyResult(
                checked,
                seq,
                ChainProblem.PREV_HASH_MISMATCH,
                f"prev_hash {stored_prev} does not match the hash of event {seq - 1}",
            )
        recomputed = event_hash(
            seq, stream, stream_seq, type_, time_ns, actor, payload, stored_prev
        )
        if recomputed != stored_hash:
            return VerifyResult(
                checked,
                seq,
                ChainProblem.HASH_MISMATCH,
                f"stored hash {stored_hash} but the event's fields hash to {recomputed}",
            )
        expected_stream_seq = stream_lengths.get(stream, 0) + 1
        if stream_seq != expected_stream_seq:
            return VerifyResult(
                checked,
                seq,
                ChainProblem.STREAM_SEQ_GAP,
                f"stream {stream!r}: expected stream_seq {expected_stream_seq}, found {stream_seq}",
            )
        stream_lengths[stream] = stream_seq
        prev_hash = stored_hash
        expected_seq += 1
        checked += 1
    return VerifyResult(checked)
