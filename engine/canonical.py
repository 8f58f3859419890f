"""Canonical JSON: the one encoding the engine hashes (the event chain and item content hashes).

``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)``:
keys sorted, no spaces, nothing past ASCII (``\\u`` escapes instead), NaN and the infinities
refused. Equal JSON values give equal text, and any program with a JSON library can write it
again, so anyone can recompute a hash.

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
