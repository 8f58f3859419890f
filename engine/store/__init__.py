"""The event store: one append-only, hash-chained log of events per workspace.

Everything above the store uses the :class:`EventStore` interface and the event types from
:mod:`engine.store.base`; only the code that opens a workspace names :class:`SqliteEventStore`.
"""

from engine.store.base import (
    ChainProblem,
    Checkpoint,
    Clock,
    Decide,
    EventStore,
    NewEvent,
    StoredEvent,
    StreamHead,
    Subscription,
    VerifyResult,
)
from engine.store.errors import (
    BrokenTail,
    ChangeFeedFailed,
    CheckpointNotInLog,
    CorruptCheckpoint,
    CorruptDatabase,
    CorruptEvent,
    EmptyWorkspaceFile,
    ForeignDatabase,
    InvalidCheckpoint,
    InvalidEvent,
    NotADatabase,
    SchemaTooNew,
    StorageFailure,
    StoreClosed,
    StoreError,
    TruncatedDatabase,
    WorkspaceLocked,
    WorkspaceNotFound,
)
from engine.store.sqlite import SqliteEventStore

__all__ = [
    "BrokenTail",
    "ChainProblem",
    "ChangeFeedFailed",
    "Checkpoint",
    "CheckpointNotInLog",
    "Clock",
    "CorruptCheckpoint",
    "CorruptDatabase",
    "CorruptEvent",
    "Decide",
    "EmptyWorkspaceFile",
    "EventStore",
    "ForeignDatabase",
    "InvalidCheckpoint",
    "InvalidEvent",
    "NewEvent",
    "NotADatabase",
    "SchemaTooNew",
    "SqliteEventStore",
    "StorageFailure",
    "StoreClosed",
    "StoreError",
    "StoredEvent",
    "StreamHead",
    "Subscription",
    "TruncatedDatabase",
    "VerifyResult",
    "WorkspaceLocked",
    "WorkspaceNotFound",
]
