"""The workspace: one event-store file that holds every agent's context and document.

Every context operation is a command. It is validated against the in-memory projection and
appended as one event inside the store's write transaction, after catching up with whatever
other processes appended, so the projection and the log never disagree. Events store the
command and its result; replay re-runs the command with the recorded time and the context's own
sequential ids, and checks it gets the recorded result.

Loading. A process loads only the contexts it uses. Each context has a checkpoint of its own
(``workspace:ctx:<name>``: its compact state, its snapshot index, and the event it reflects),
and the small ``workspace:index`` says which contexts exist, where each one's stream ends, and
each one's numbers (episode, items, depth, snapshots) as of a place in its stream. Loading a
context reads its checkpoint and then only the events of its own stream after it. Opening reads
the index and brings it up to date with the events after it (which streams they touched, not
their payloads); ``Workspace.open(path)`` then loads every context, ``Workspace.open(path,
lazy=True)`` none.

The rule: the async methods (``run``, ``run_many``, ``view``, ``select``, ``render``, ``diff``,
``at_snapshot``, ``at_episode``, ``load``, ``list_contexts``) load the context they name
themselves; the synchronous ones (``context``, ``snapshots``, ``snapshot_at``, ``resolve_time``,
...) need it loaded and raise ``ContextNotLoaded`` otherwise (``UnknownContext`` for a name no
context has). ``contexts()`` needs each context loaded or its numbers in the index current.
``loaded()`` names the loaded contexts. A workspace opened without ``lazy`` loads every context,
including those other processes create later, so for it nothing ever raises ``ContextNotLoaded``.

An event of a context this process has not loaded is only counted (where its stream now ends);
a context loaded later catches up from its checkpoint and its stream, events that arrive while
it loads included.

The numbers in the index are exact: they were taken from a projection at a known place of the
context's stream, and are used only while the stream still ends there; otherwise the context is
loaded (``list_contexts``) or ``contexts()`` refuses. Every process writes the index on closing
when what it knows is newer (and every ``INDEX_EVERY`` events while running), merged with the
one stored: for each context the later stream end and the later numbers win, so processes
closing together keep each other's numbers, and a lost race leaves numbers behind, never wrong.

Checkpoints are caches the chain vouches for: the store hands out only a checkpoint whose event is
still the log's event at its place, with the hash it had when the checkpoint was saved. One that
cannot be used is replayed instead, for that context only, and ``checkpoint_problem`` says why; so
is one whose state the events after it do not replay onto (its state is not the log's), and an
archive whose place in its stream is not the log's. A context's checkpoint is saved while running
every ``checkpoint_every`` events of its stream, and on close once ``CHECKPOINT_ON_CLOSE`` have come
after it. The version-2 ``workspace`` checkpoint of earlier releases (every context in one) is read
once, when there is no index yet, and replaced by the per-context checkpoints and the index.

A document (``engine/documents.py``) has a checkpoint of its own too (``workspace:doc:<name>``),
vouched for the same way: loading it reads the checkpoint, checks that its last event is the
log's, and folds the events after it. Its checkpoint is saved on close and by ``checkpoint`` as a
context's is, and while running once the events since the last one number ``checkpoint_every`` or
the document's proposals and agents, whichever is more (a dump costs time in proportion to them).

Past states come from the snapshots kept in memory, or are rebuilt from the nearest per-context
archive checkpoint plus a short replay. Archives are named by marks every ``archive_every`` events
of a context, but one is only written when the context has moved on by half its size since the
last: a big context archived every thousand events would fill the disk with copies of itself.

The package, one role per module, each role a class the facade ``Workspace`` (``facade.py``)
is made of; a role builds on the roles below it, never on one above (import-linter checks it):

- ``state.py``: what the roles share (the store, the loaded projections, where streams end),
  and the primitives every command uses (``_check_writable``, ``_save_caches``).
- ``loading.py``: loading contexts from their checkpoints and streams, and saving those.
- ``index.py``: the workspace index, and the version-2 checkpoint read once to migrate.
- ``feed.py``: the change feed, and the write transaction a command runs in.
- ``clock.py``: protocol time, and stepping it.
- ``past.py``: snapshots, past states rebuilt from archives, and writing archives.
- ``contexts.py``: creating, forking and running commands on contexts; their numbers.
- ``documents.py``: documents and classification frameworks.
- ``queries.py``, ``changelogs.py``, ``stories.py``: views, selections, renderings and diffs;
  what each step did; an item's story.
- ``lifecycle.py``: opening, starting, checkpointing and closing.

Beside them: ``repository.py`` (one ``StreamRepository`` for every kind of stream: restoring
from a checkpoint, catching up, saving, archiving, the latest cache before a place; what differs
per kind is its ``StreamKind``, ``ContextKind`` in ``loading.py`` and ``DocumentKind`` in
``documents.py``), ``errors.py`` and ``types.py`` (what callers catch and get), ``keys.py``
(stream and checkpoint names, format versions), ``cadence.py`` (how often caches are written,
per kind of stream in ``INTERVALS``: set there, read there), ``checks.py`` (names, actors,
text), ``projection.py`` (a context's projection and how a stored event is replayed),
``checkpoints.py`` (checkpoints' bytes, the index's entries), ``pieces.py`` (a big context's
turns and story index kept in pieces beside its checkpoint, read when needed), ``trail.py`` (a
document's audit trail kept in pieces beside its checkpoint). ``engine/heap.py``, beside the
package (a process's start uses it too), is the one place the garbage collector is paused and
the loaded heap frozen.
"""

# Callers have always found these here too.
from engine.documents import DOC_CHECKPOINT
from engine.store import ReadOnlyWorkspace
from engine.workspace import cadence
from engine.workspace.checkpoints import (
    archive_name,
    context_checkpoint_projection,
    decode_checkpoint,
    encode_checkpoint,
    parse_index,
    parse_origins,
    restored_projection,
)
from engine.workspace.checks import NAME, check_actor, check_context_name, check_text
from engine.workspace.errors import (
    CACHE_ERRORS,
    BadRange,
    ContextExists,
    ContextNotLoaded,
    InvalidActor,
    InvalidName,
    ReplayDiverged,
    UnknownContext,
    UnreplayableEvent,
    WorkspaceError,
)
from engine.workspace.facade import Workspace
from engine.workspace.keys import (
    ARCHIVE_PREFIX,
    CHECKPOINT_VERSION,
    CONTEXT_CHECKPOINT,
    CONTEXT_PREFIX,
    DEEP_VERIFIED,
    DOC_ARCHIVE_PREFIX,
    FORKED,
    INDEX_CHECKPOINT,
    LEGACY_CHECKPOINT,
    LEGACY_VERSION,
)
from engine.workspace.projection import ContextProjection, check_stream_start, replay_document_event
from engine.workspace.types import (
    Change,
    ContextInfo,
    DeepVerification,
    EventChanges,
    ForkOrigin,
    PrintMode,
    SnapshotEntry,
    StepChanges,
    StepKind,
)

__all__ = [
    "ARCHIVE_PREFIX",
    "CACHE_ERRORS",
    "CHECKPOINT_VERSION",
    "CONTEXT_CHECKPOINT",
    "CONTEXT_PREFIX",
    "DEEP_VERIFIED",
    "DOC_ARCHIVE_PREFIX",
    "DOC_CHECKPOINT",
    "FORKED",
    "INDEX_CHECKPOINT",
    "LEGACY_CHECKPOINT",
    "LEGACY_VERSION",
    "NAME",
    "BadRange",
    "Change",
    "ContextExists",
    "ContextInfo",
    "ContextNotLoaded",
    "ContextProjection",
    "DeepVerification",
    "EventChanges",
    "ForkOrigin",
    "InvalidActor",
    "InvalidName",
    "PrintMode",
    "ReadOnlyWorkspace",
    "ReplayDiverged",
    "SnapshotEntry",
    "StepChanges",
    "StepKind",
    "UnknownContext",
    "UnreplayableEvent",
    "Workspace",
    "WorkspaceError",
    "archive_name",
    "cadence",
    "check_actor",
    "check_context_name",
    "check_stream_start",
    "check_text",
    "context_checkpoint_projection",
    "decode_checkpoint",
    "encode_checkpoint",
    "parse_index",
    "parse_origins",
    "replay_document_event",
    "restored_projection",
]
