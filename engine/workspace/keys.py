"""The names the workspace stores things under: its streams' prefixes, its checkpoints' and
archives' names, and the versions of their formats."""

from __future__ import annotations

CONTEXT_PREFIX = "ctx:"
INDEX_CHECKPOINT = "workspace:index"  # which contexts exist, where they end, their numbers
CONTEXT_CHECKPOINT = "workspace:ctx:"  # + a context's name: that context's state
PIECE_PREFIX = "workspace:turns:"  # + "<context>:<sha256>": a piece of its checkpoint's turns
ARCHIVE_PREFIX = "archive:" + CONTEXT_PREFIX  # + "<name>:<mark>": a context's past state
DOC_ARCHIVE_PREFIX = "archive:doc:"  # + "<name>:<n>": a document after its first n events
# When `verify --deep` last passed: a row beside the checkpoints, not an event, not a projection.
DEEP_VERIFIED = "verified:deep"
LEGACY_CHECKPOINT = "workspace"  # version 2: every context in one checkpoint (read, to migrate)
LEGACY_VERSION = 2  # contexts in the compact form (engine/context/compact.py)
CHECKPOINT_VERSION = 3  # 3: one checkpoint per context, and the index

FORKED = "context.forked"  # a fork's second event: the copied state it starts from
