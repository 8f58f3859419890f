"""The parsed form of a selector (see ``docs/selectors.md`` and spec §6).

The parser (``selectors.parse_selector``) produces these; the evaluator (``query``) consumes
them. All classes are frozen so a parsed selector can be cached and shared.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class Exact:
    value: int


@dataclass(frozen=True, slots=True)
class Span:
    """An inclusive range ``lo..hi`` (``1-3`` and ``1..3`` both parse to ``Span(1, 3)``)."""

    lo: int
    hi: int


@dataclass(frozen=True, slots=True)
class Star:
    pass


Part = Exact | Span | Star


@dataclass(frozen=True, slots=True)
class Coord:
    """``d0, 1, 0``: depth, then optional position and offset (``None`` = not given)."""

    depth: Part
    position: Part | None = None
    offset: Part | None = None

    @property
    def arity(self) -> int:
        return 1 + (self.position is not None) + (self.offset is not None)


@dataclass(frozen=True, slots=True)
class Region:
    """``^sys`` (depth -1), ``^ah`` (depth 0, the active turn), ``^seq`` (depth >= 1)."""

    name: Literal["sys", "ah", "seq"]


@dataclass(frozen=True, slots=True)
class KeyIs:
    """``#key`` (matches the node's key, never its id)."""

    key: str


@dataclass(frozen=True, slots=True)
class HasTag:
    """``+tag``; several in one compound are ANDed."""

    tag: str


@dataclass(frozen=True, slots=True)
class TypeIs:
    """``.text``, ``.turn``, ``.slot``, ``.system``: the node type."""

    node_type: str


Op = Literal["=", "!=", "<", "<=", ">", ">="]
Value = int | float | str | bool | None


@dataclass(frozen=True, slots=True)
class Attr:
    """``[ttl<=1]``, ``[ttl=null]``, ``[key='x']``: a comparison on any field."""

    name: str
    op: Op
    value: Value


@dataclass(frozen=True, slots=True)
class Flag:
    """``[permanent]``, ``[temporary]``, ``[sticky]``, ``[cyclic]``."""

    name: Literal["permanent", "temporary", "sticky", "cyclic"]


Simple = Region | KeyIs | HasTag | TypeIs | Attr | Flag


@dataclass(frozen=True, slots=True)
class Compound:
    """Terms that must all match one node. ``coord`` (if any) comes first in the text."""

    coord: Coord | None
    terms: tuple[Simple, ...]


@dataclass(frozen=True, slots=True)
class Complex:
    """``A B`` (descendant) and ``A > B`` (child): ``combinators[i]`` joins parts i and i+1."""

    parts: tuple[Compound, ...]
    combinators: tuple[Literal[" ", ">"], ...]


@dataclass(frozen=True, slots=True)
class Time:
    """``@t0`` (working state), ``@t-N`` (N-th newest snapshot), ``@eN``, ``@snap:<id>``."""

    kind: Literal["now", "back", "episode", "snapshot"]
    value: int | str | None = None


@dataclass(frozen=True, slots=True)
class Selector:
    source: str
    time: Time | None
    alternatives: tuple[Complex, ...]

    @property
    def is_time_qualified(self) -> bool:
        return self.time is not None and self.time.kind != "now"

    @property
    def single_coord(self) -> Coord | None:
        """The coordinate if the selector is exactly one coordinate with no other terms."""
        if len(self.alternatives) != 1:
            return None
        complex_ = self.alternatives[0]
        if len(complex_.parts) != 1:
            return None
        compound = complex_.parts[0]
        if compound.terms:
            return None
        return compound.coord
