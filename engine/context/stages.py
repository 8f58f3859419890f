"""Render-lifecycle stages and message roles: plain classes, no pydantic.

Kept apart from ``components`` (the pydantic models callers build) so that reading a workspace,
which needs these but never builds a component, does not pay for importing pydantic.
"""

from __future__ import annotations

from typing import Any, Literal

from .coords import exact_coordinates

Role = Literal["user", "assistant", "system"]


class Pos:
    """One stage of a render lifecycle: ``Pos("d0, 0, 1", ttl=2)``; no ttl = final stage."""

    __slots__ = ("depth", "offset", "position", "selector", "ttl")

    def __init__(self, selector: str, ttl: int | None = None) -> None:
        self.selector = selector
        self.depth, self.position, self.offset = exact_coordinates(selector)
        self.ttl = ttl

    def model_dump(self) -> dict[str, Any]:
        return {"selector": self.selector, "ttl": self.ttl}

    def __repr__(self) -> str:
        return f"Pos({self.selector!r}, ttl={self.ttl!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pos) and (self.selector, self.ttl) == (other.selector, other.ttl)

    def __hash__(self) -> int:
        return hash((self.selector, self.ttl))


class RenderLifecycle:
    """Stages an item walks through; ``cycle`` is ``False``, ``True`` or a number of passes."""

    __slots__ = ("cycle", "stages")

    def __init__(self, stages: list[Pos], cycle: bool | int = False) -> None:
        self.stages = tuple(stages)
        self.cycle = cycle

    def model_dump(self) -> dict[str, Any]:
        return {"stages": [s.model_dump() for s in self.stages], "cycle": self.cycle}

    def goes_on_after(self, passes: int) -> bool:
        """Whether an item that has made ``passes`` full passes starts another: always with
        ``cycle=True``, never after the first with ``False``, while fewer than ``N``."""
        if self.cycle is True:
            return True
        return passes < (1 if self.cycle is False else self.cycle)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, RenderLifecycle)
            and self.stages == other.stages
            and self.cycle == other.cycle
        )

    def __hash__(self) -> int:
        return hash((self.stages, self.cycle))
