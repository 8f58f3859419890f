"""Canonical JSON: the one encoding the engine hashes (the event chain and item content hashes).

``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)``:
keys sorted, no spaces, nothing past ASCII (``\\u`` escapes instead), NaN and the infinities
refused. Equal JSON values give equal text, and any program with a JSON library can write it
again, so anyone can recompute a hash.

It also says what the engine takes in at all (:func:`check_fit`): text that UTF-8 can write,
integers in SQLite's 64-bit range, nesting of bounded depth. Commands, actors and selectors are
checked with it where they come in, so nothing later fails to print, store or read them back.

This module imports nothing else of the package: ``engine.store`` and ``engine.context`` both
use it.
"""

from __future__ import annotations

import json

# json.dumps with options builds a new encoder for every call; this one is built once.
_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
)


def canonical_json(value: object) -> str:
    """The canonical JSON text of ``value``.

    Raises what ``json.dumps`` raises: ``TypeError`` for a value JSON cannot represent (or keys
    that cannot be sorted together), ``ValueError`` for NaN, an infinity or a circular
    reference, ``RecursionError`` for nesting deeper than the interpreter allows.
    """
    return _ENCODER.encode(value)


def canonical_json_head(value: object, limit: int) -> str:
    """The first ``limit`` characters of :func:`canonical_json`, without writing the rest: a
    display of one line of a 10 MB value writes a line's worth of it (the encoder's iterencode
    yields its text piece by piece). Raises what :func:`canonical_json` raises for what it
    reaches."""
    pieces: list[str] = []
    length = 0
    for piece in _ENCODER.iterencode(value):
        pieces.append(piece)
        length += len(piece)
        if length >= limit:
            break
    return "".join(pieces)[:limit]


def canonical_json_length(value: object) -> int:
    """``len(canonical_json(value))``, without holding the text whole: the size of a 10 MB
    value is counted piece by piece. Raises what :func:`canonical_json` raises."""
    return sum(map(len, _ENCODER.iterencode(value)))


# -- what the engine takes in -------------------------------------------------------------------
# The engine's integers are SQLite's INTEGER: a signed 64-bit number. A coordinate, a ttl or any
# other number outside it is refused where it comes in, not clamped or carried as a big int.
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
# How deeply a value given to the engine may nest (lists and objects): far more than any
# component needs, far less than would exhaust the interpreter's stack in a later reader.
MAX_NESTING = 64


class UnfitValue(ValueError):
    """A value the engine does not take in: ``where`` names the place (``content``,
    ``data.rows[3]``; empty for the value itself), ``problem`` says what is wrong there."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}" if where else problem)
        self.where = where
        self.problem = problem


def is_text(value: str) -> bool:
    """Whether ``value`` is Unicode text, which UTF-8 can write: no lone surrogates (what an
    invalid UTF-8 byte in a command-line argument decodes to, or ``"\\ud800"`` in JSON)."""
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def lone_surrogate(value: str) -> int | None:
    """Where the first lone surrogate in ``value`` is (what makes it not text), or None."""
    if is_text(value):
        return None
    return next(i for i, c in enumerate(value) if 0xD800 <= ord(c) <= 0xDFFF)


def text_problem(value: str) -> str | None:
    """What makes ``value`` not text, and where, or None."""
    at = lone_surrogate(value)
    if at is None:
        return None
    return (
        f"not Unicode text: a lone surrogate {value[at]!r} at character {at} (an invalid UTF-8 "
        "byte, or half of a '\\uXXXX' pair)"
    )


def check_fit(value: object, where: str = "") -> None:
    """Raise :class:`UnfitValue` at the first place in ``value`` (JSON-like: dicts, lists,
    strings, numbers) that the engine does not take in: a string that is not text, an integer
    outside ``INT_MIN..INT_MAX``, nesting deeper than ``MAX_NESTING``. Walks without recursing,
    so any depth is reported, not a ``RecursionError``."""
    stack: list[tuple[object, str, int]] = [(value, where, 0)]
    while stack:
        item, at, depth = stack.pop()
        if isinstance(item, str):
            problem = text_problem(item)
            if problem is not None:
                raise UnfitValue(at, problem)
        elif isinstance(item, int) and not isinstance(item, bool):
            if not INT_MIN <= item <= INT_MAX:
                # str() of a huge int is refused by Python itself (sys.int_info): say its size.
                shown = (
                    str(item) if item.bit_length() <= 256 else f"a {item.bit_length()}-bit integer"
                )
                raise UnfitValue(
                    at, f"{shown} is outside the engine's range ({INT_MIN}..{INT_MAX})"
                )
        elif isinstance(item, (dict, list, tuple)):
            if depth >= MAX_NESTING:
                raise UnfitValue(at, f"nested more than {MAX_NESTING} levels deep")
            if isinstance(item, dict):
                for key, member in reversed(item.items()):
                    if isinstance(key, str) and (problem := text_problem(key)) is not None:
                        raise UnfitValue(at, f"a key is {problem}")
                    inner = f"{at}.{key}" if at else str(key)
                    stack.append((member, inner, depth + 1))
            else:
                for index in range(len(item) - 1, -1, -1):
                    stack.append((item[index], f"{at}[{index}]", depth + 1))


def whole_number(text: str) -> int:
    """``text`` as an integer written in ASCII digits (an optional sign, spaces around), in the
    engine's range; ``ValueError`` saying what is wrong otherwise. ``int()`` also reads other
    scripts' digits (``int("\\u0661")`` is 1) and any size."""
    digits = text.strip()
    unsigned = digits[1:] if digits[:1] in "+-" else digits
    if not (unsigned.isascii() and unsigned.isdigit()):
        raise ValueError(f"{_quoted(text)} is not a whole number in ASCII digits")
    # int() of thousands of digits is slow and then refused: anything past 19 digits is out.
    number = int(digits) if len(unsigned.lstrip("0")) <= 19 else INT_MAX + 1
    if not INT_MIN <= number <= INT_MAX:
        raise ValueError(f"{_quoted(text)} is outside the engine's range ({INT_MIN}..{INT_MAX})")
    return number


def _quoted(text: str, limit: int = 40) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "…"
