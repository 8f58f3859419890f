"""What callers build and hand to the context: components and render-lifecycle stages.

These are the pydantic models at the boundary (``TextContent("…", ttl=3)``, as in the seeds).
Inside, the context turns them into slotted ``Item`` records.
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from .stages import Pos, RenderLifecycle, Role

__all__ = ["ContextComponent", "Pos", "RenderLifecycle", "Role", "TextContent"]


class ContextComponent(BaseModel):
    """A piece of context to place in the tree. Extra fields (``data_*``) are kept."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    content: Any = None
    key: str | None = None
    tags: list[str] = Field(default_factory=list)
    ttl: int | None = None
    cad: int | None = Field(default=None, alias="cadence")
    priority: int = 0
    role: Role | None = None

    _lifecycle: RenderLifecycle | None = PrivateAttr(default=None)
    _node_type: str = PrivateAttr(default="component")

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

    def of_type(self, node_type: str) -> Self:
        """Name the item's type (``image``, ``tool_result``…): what ``.image`` selects."""
        self._node_type = node_type
        return self

    @property
    def node_type(self) -> str:
        return self._node_type

    def data_fields(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class TextContent(ContextComponent):
    content: str = ""
    _node_type: str = PrivateAttr(default="text")

    def __init__(self, content: str | None = None, /, **data: Any) -> None:
        # Spelled out again so type checkers see the positional form the seeds use.
        super().__init__(content, **data)
