"""The Positioned Adaptive Context Tree (see ``../shared/spec/context-tree.md``)."""

from .clock import Clock, IdFactory, RandomIds, SequentialIds, SteppingClock, SystemClock
from .components import ContextComponent, Pos, RenderLifecycle, TextContent
from .context import Context
from .errors import (
    ContextError,
    InvalidComponent,
    InvalidCoordinate,
    InvalidExport,
    InvalidLifecycle,
    InvalidSelector,
    InvalidUpdateMode,
    NoSuchDepth,
    NotFound,
    ReadOnlySelector,
    UnknownKey,
    UnknownSnapshot,
)
from .explorer import ContextExplorer
from .history import History, Snapshot, SnapshotContext
from .view import ContextView, Node

__all__ = [
    "Clock",
    "Context",
    "ContextComponent",
    "ContextError",
    "ContextExplorer",
    "ContextView",
    "History",
    "IdFactory",
    "InvalidComponent",
    "InvalidCoordinate",
    "InvalidExport",
    "InvalidLifecycle",
    "InvalidSelector",
    "InvalidUpdateMode",
    "NoSuchDepth",
    "Node",
    "NotFound",
    "Pos",
    "RandomIds",
    "ReadOnlySelector",
    "RenderLifecycle",
    "SequentialIds",
    "Snapshot",
    "SnapshotContext",
    "SteppingClock",
    "SystemClock",
    "TextContent",
    "UnknownKey",
    "UnknownSnapshot",
]
