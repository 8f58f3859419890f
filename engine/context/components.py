"""What callers build and hand to the context: components and render-lifecycle stages.

These are the pydantic models at the boundary (``TextContent("…", ttl=3)``, as in the seeds).
Inside, the context turns them into slotted ``Item`` records.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

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

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, RenderLifecycle)
            and self.stages == other.stages
            and self.cycle == other.cycle
        )

    def __hash__(self) -> int:
        return hash((self.stages, self.cycle))


class ContextComponent(BaseModel):
    """A piece of context to place in the tree. Extra fields (``data_*``) are kept."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    node_type: ClassVar[str] = "component"

    content: Any = None
    key: str | None = None
    tags: list[str] = Field(default_factory=list)
    ttl: int | None = None
    cad: int | None = Field(default=None, alias="cadence")
    priority: int = 0
    role: Role | None = None

    _lifecycle: RenderLifecycle | None = PrivateAttr(default=None)

    def __init__(self, content: Any = None, /, **data: Any) -> None:
        # The seeds write ``TextContent("User prefers formal tone")``: accept content positionally.
        if content is not None:
            data["content"] = content
        super().__init__(**data)

    def render_lifecycle(self, stages: list[Pos], cycle: bool | int = False) -> ContextComponent:
        self._lifecycle = RenderLifecycle(stages, cycle)
        return self

    @property
    def lifecycle(self) -> RenderLifecycle | None:
        return self._lifecycle

    def data_fields(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class TextContent(ContextComponent):
    node_type: ClassVar[str] = "text"

    content: str = ""

    def __init__(self, content: str | None = None, /, **data: Any) -> None:
        # Spelled out again so type checkers see the positional form the seeds use.
        super().__init__(content, **data)
