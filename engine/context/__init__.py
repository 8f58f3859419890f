"""The Positioned Adaptive Context Tree (see ``../shared/spec/context-tree.md``).

``ContextComponent`` and ``TextContent``, and the command models of ``engine.context.commands``,
are pydantic models, imported on first use: a process that only reads contexts (opening a
workspace, drawing it) never pays for loading pydantic.
"""

from typing import TYPE_CHECKING, Any

from .changelog import ChangeEntry, Changelog, Shift
from .clock import Clock, IdFactory, RandomIds, SequentialIds, SteppingClock, SystemClock
from .context import Context
from .errors import (
    ContextError,
    InvalidChangelog,
    InvalidCommand,
    InvalidComponent,
    InvalidCoordinate,
    InvalidExport,
    InvalidLifecycle,
    InvalidSelector,
    InvalidUpdateMode,
    MalformedPackedTurns,
    NoSuchDepth,
    NotAComponent,
    NotFound,
    ReadOnlySelector,
    SelectorOrKey,
    UnknownKey,
    UnknownSnapshot,
)
from .explorer import ContextExplorer
from .history import History, Snapshot, SnapshotContext
from .results import Advanced, ContextResult, Deleted, Placed, Sealed
from .stages import Pos, RenderLifecycle
from .tree import Diff, ItemChange, Lifecycle, LiveView, Node
from .view import ContextView

if TYPE_CHECKING:
    from .components import ContextComponent, TextContent

_LAZY = {"ContextComponent", "TextContent"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import components  # pydantic loads here, on first use

        return getattr(components, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Advanced",
    "ChangeEntry",
    "Changelog",
    "Clock",
    "Context",
    "ContextComponent",
    "ContextError",
    "ContextExplorer",
    "ContextResult",
    "ContextView",
    "Deleted",
    "Diff",
    "History",
    "IdFactory",
    "InvalidChangelog",
    "InvalidCommand",
    "InvalidComponent",
    "InvalidCoordinate",
    "InvalidExport",
    "InvalidLifecycle",
    "InvalidSelector",
    "InvalidUpdateMode",
    "ItemChange",
    "Lifecycle",
    "LiveView",
    "MalformedPackedTurns",
    "NoSuchDepth",
    "Node",
    "NotAComponent",
    "NotFound",
    "Placed",
    "Pos",
    "RandomIds",
    "ReadOnlySelector",
    "RenderLifecycle",
    "Sealed",
    "SelectorOrKey",
    "SequentialIds",
    "Shift",
    "Snapshot",
    "SnapshotContext",
    "SteppingClock",
    "SystemClock",
    "TextContent",
    "UnknownKey",
    "UnknownSnapshot",
]
