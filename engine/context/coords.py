"""Turning selectors into the exact coordinates a write needs."""

from __future__ import annotations

from .errors import InvalidCoordinate, ReadOnlySelector
from .selector_ast import Coord, Exact, Selector
from .selectors import parse_selector

Coordinates = tuple[int, int, int]


def parse_for_write(selector: str) -> Selector:
    """Parse a selector a write uses (to address or to match): no time prefix."""
    parsed = parse_selector(selector)
    if parsed.is_time_qualified:
        raise ReadOnlySelector(
            f"selector {selector!r} is time-qualified; past states are read-only",
            selector=selector,
        )
    return parsed


def write_coord(selector: str, *, arity: tuple[int, ...] = (3,)) -> Coord:
    """Parse a selector that addresses one place to write: plain integers, no time prefix."""
    coord = parse_for_write(selector).single_coord
    if coord is None:
        raise InvalidCoordinate(
            f"selector {selector!r} is a query; a write needs coordinates like 'd0, 1, 0'",
            selector=selector,
        )
    if coord.arity not in arity:
        wanted = " or ".join(str(a) for a in arity)
        raise InvalidCoordinate(
            f"selector {selector!r} has {coord.arity} coordinate(s); this write needs {wanted}",
            selector=selector,
        )
    for name, part in (
        ("depth", coord.depth),
        ("position", coord.position),
        ("offset", coord.offset),
    ):
        if part is not None and not isinstance(part, Exact):
            raise InvalidCoordinate(
                f"the {name} in {selector!r} is a range or '*'; a write needs one integer",
                selector=selector,
                field=name,
            )
    return coord


def exact_coordinates(selector: str) -> Coordinates:
    coord = write_coord(selector)
    assert isinstance(coord.depth, Exact)
    assert isinstance(coord.position, Exact) and isinstance(coord.offset, Exact)
    return coord.depth.value, coord.position.value, coord.offset.value
