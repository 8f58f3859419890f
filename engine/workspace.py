"""The workspace: one event-store file that holds every agent's context (and, later, documents).

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
every ``CHECKPOINT_EVERY`` events of its stream, and on close once ``CHECKPOINT_ON_CLOSE`` have come
after it. The version-2 ``workspace`` checkpoint of earlier releases (every context in one) is read
once, when there is no index yet, and replaced by the per-context checkpoints and the index.

A document (``engine/documents.py``) has a checkpoint of its own too (``workspace:doc:<name>``),
vouched for the same way: loading it reads the checkpoint, checks that its last event is the
log's, and folds the events after it. Its checkpoint is saved on close and by ``checkpoint`` as a
context's is, and while running once the events since the last one number ``CHECKPOINT_EVERY`` or
the document's proposals and agents, whichever is more (a dump costs time in proportion to them).

Past states come from the snapshots kept in memory, or are rebuilt from the nearest per-context
archive checkpoint plus a short replay. Archives are named by marks every ``ARCHIVE_EVERY`` events
of a context, but one is only written when the context has moved on by half its size since the
last: a big context archived every thousand events would fill the disk with copies of itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import gc
import json
import re
import time
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Collection,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson

from engine.canonical import check_fit, text_problem
from engine.context import Context, ContextError, ContextView
from engine.context.changelog import OPS as CONTEXT_OPS
from engine.context.changelog import Changelog, summary_of
from engine.context.clock import FixedClock, SequentialIds
from engine.context.compact import dump_compact, load_compact, restore_compact
from engine.context.errors import InvalidCommand, NotFound, UnknownSnapshot
from engine.context.explorer import render_tree
from engine.context.history import Located, diff_views, located_diff
from engine.context.selector_ast import Selector
from engine.context.selectors import check_input_selector
from engine.context.timeline import ItemStory, StoryEvent
from engine.context.tree import Diff, Node
from engine.documents import (
    DOC_CHECKPOINT,
    DOC_PREFIX,
    FRAMEWORKS,
    DocumentInfo,
    DocumentProjection,
)
from engine.protocol_time import ADVANCED, CLOCK_STREAM, STEPPED, ProtocolTime, advance_payload
from engine.store import (
    Checkpoint,
    EventStore,
    InvalidCheckpoint,
    NewEvent,
    ReadOnlyWorkspace,
    SqliteEventStore,
    StoredEvent,
    StoreError,
    StreamHead,
    VerifyResult,
)

CONTEXT_PREFIX = "ctx:"
INDEX_CHECKPOINT = "workspace:index"  # which contexts exist, where they end, their numbers
CONTEXT_CHECKPOINT = "workspace:ctx:"  # + a context's name: that context's state
ARCHIVE_PREFIX = "archive:" + CONTEXT_PREFIX  # + "<name>:<mark>": a context's past state
DOC_ARCHIVE_PREFIX = "archive:doc:"  # + "<name>:<n>": a document after its first n events
# When `verify --deep` last passed: a row beside the checkpoints, not an event, not a projection.
DEEP_VERIFIED = "verified:deep"
LEGACY_CHECKPOINT = "workspace"  # version 2: every context in one checkpoint (read, to migrate)
LEGACY_VERSION = 2  # contexts in the compact form (engine/context/compact.py)
CHECKPOINT_VERSION = 3  # 3: one checkpoint per context, and the index
CHECKPOINT_EVERY = 5_000  # events of a context since its checkpoint, while running
CHECKPOINT_ON_CLOSE = 200  # a shorter tail is cheaper to replay than to checkpoint
INDEX_EVERY = 100  # events applied since the index was saved, while running
ARCHIVE_EVERY = 1_000  # events of one context between archive marks
READ_BATCH = 10_000  # events read at a time when a context catches up with its stream
REPLAY_YIELD_EVERY = 200  # events a replay for the app applies between giving the loop a turn
# What a cache that cannot be used raises: it is then replayed instead.
CACHE_ERRORS = (StoreError, ContextError, ValueError, KeyError, TypeError, AttributeError)
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

if TYPE_CHECKING:
    from engine.context.commands import ContextCommand
    from engine.protocol.commands import Actor, Command
    from engine.protocol.decide import Decision
    from engine.protocol.document import Document
    from engine.protocol.envelope import Ids

PrintMode = Literal["tree", "provider", "json"]


class WorkspaceError(ContextError):
    code = "WORKSPACE_ERROR"


class UnknownContext(WorkspaceError):
    code = "UNKNOWN_CONTEXT"


class ContextExists(WorkspaceError):
    code = "CONTEXT_EXISTS"


class InvalidName(WorkspaceError):
    code = "INVALID_NAME"


class InvalidActor(WorkspaceError):
    code = "INVALID_ACTOR"


class ContextNotLoaded(WorkspaceError):
    """A synchronous accessor was asked for a context this process has not loaded."""

    code = "CONTEXT_NOT_LOADED"


class ReplayDiverged(WorkspaceError):
    """Replaying an event gave another result than the one recorded (or was refused): the log
    or code changed."""

    code = "REPLAY_DIVERGED"


class BadRange(WorkspaceError):
    """A step asked for in a way that names no step: two ways at once, or a range whose first
    snapshot comes after its second."""

    code = "BAD_RANGE"


class UnreplayableEvent(WorkspaceError):
    """An event that cannot be replayed at all: of a context's stream, its payload holds no
    command this version can read, or no result to check it against, or the stream does not
    begin with the context's creation; of a document's, the fold cannot take it (see
    ``replay_document_event``). The chain may well verify: another program appended it, or
    the start was cut off."""

    code = "UNREPLAYABLE_EVENT"


FORKED = "context.forked"  # a fork's second event: the copied state it starts from


@dataclass(frozen=True, slots=True)
class ForkOrigin:
    """Where a forked context came from: context ``source`` as of its ``snapshot`` (None: as
    it was when forked), which was episode ``episode``, after event ``seq`` of the log (number
    ``stream_seq`` of the source's stream)."""

    source: str
    snapshot: str | None
    episode: int
    seq: int
    stream_seq: int

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "snapshot": self.snapshot,
            "episode": self.episode,
            "seq": self.seq,
            "stream_seq": self.stream_seq,
        }

    @classmethod
    def from_json(cls, data: Any) -> ForkOrigin:
        """Raises ``ValueError`` when ``data`` is not a fork's origin."""
        if not isinstance(data, dict) or set(data) != {
            "source",
            "snapshot",
            "episode",
            "seq",
            "stream_seq",
        }:
            raise ValueError(f"not a fork's origin: {data!r}")
        source, snapshot = data["source"], data["snapshot"]
        numbers = (data["episode"], data["seq"], data["stream_seq"])
        if not isinstance(source, str) or not (snapshot is None or isinstance(snapshot, str)):
            raise ValueError(f"not a fork's origin: {data!r}")
        if not all(type(n) is int and n >= 0 for n in numbers):
            raise ValueError(f"not a fork's origin: {data!r}")
        return cls(source, snapshot, *numbers)

    def describe(self) -> str:
        """``agent at snapshot n40 (episode 3)`` or ``agent as of event 57 (episode 3)``."""
        if self.snapshot is not None:
            return f"{self.source} at snapshot {self.snapshot} (episode {self.episode})"
        return f"{self.source} as of event {self.seq} (episode {self.episode})"


@dataclass(frozen=True, slots=True)
class DeepVerification:
    """``verify --deep`` passed at ``time_ns``, over the log's first ``seq`` events and the
    checkpoints stored then. Kept as the row ``DEEP_VERIFIED`` beside the checkpoints, saved at
    event ``seq``, so the log vouches for it as for a checkpoint (docs/workspace.md)."""

    time_ns: int
    seq: int

    def dump(self) -> dict[str, Any]:
        return {"version": 1, "timeNs": self.time_ns, "seq": self.seq}

    @classmethod
    def load(cls, seq: int, data: Any) -> DeepVerification:
        """The record saved at event ``seq``; ``ValueError`` if it is not one."""
        if not isinstance(data, dict) or data.get("version") != 1 or data.get("seq") != seq:
            raise ValueError(f"not a record of a deep verification at event {seq}")
        time_ns = data.get("timeNs")
        if type(time_ns) is not int or time_ns < 0:
            raise ValueError(f"a deep verification at time {time_ns!r}")
        return cls(time_ns, seq)


@dataclass(frozen=True, slots=True)
class ContextInfo:
    name: str
    episode: int
    items: int
    depth: int
    snapshots: int
    forked_from: ForkOrigin | None = None
    """Where it was forked from (``Workspace.fork_context``); None for a context created empty."""


@dataclass(frozen=True, slots=True)
class SnapshotEntry:
    """One snapshot of a context, as the workspace indexes it (``seq``: the event recording it)."""

    id: str
    index: int
    episode: int
    trigger: str
    created_at_ns: int
    seq: int
    stream_seq: int

    def dump(self) -> list[Any]:
        return [self.id, self.episode, self.trigger, self.created_at_ns, self.seq, self.stream_seq]

    @classmethod
    def load(cls, index: int, row: list[Any]) -> SnapshotEntry:
        id_, episode, trigger, created_at_ns, seq, stream_seq = row
        return cls(id_, index, episode, trigger, created_at_ns, seq, stream_seq)


@dataclass(frozen=True, slots=True)
class EventChanges:
    """What one event of a context's stream did (``recorded``: read from the event's result;
    otherwise recomputed by replaying it, for an event stored before results carried it)."""

    seq: int
    stream_seq: int
    type: str
    changelog: Changelog
    recorded: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "stream_seq": self.stream_seq,
            "type": self.type,
            "recorded": self.recorded,
            "changes": self.changelog.to_json(),
        }


StepKind = Literal["snapshot", "between", "live"]


@dataclass(frozen=True, slots=True)
class StepChanges:
    """The changelogs of the events that made one step of a context, in order (see
    ``Workspace.changelogs``): the events after ``since`` (None: from the context's creation)
    up to and including ``until`` (None: up to now, the live step)."""

    name: str
    kind: StepKind
    since: SnapshotEntry | None
    until: SnapshotEntry | None
    events: tuple[EventChanges, ...]

    @property
    def changelogs(self) -> tuple[Changelog, ...]:
        return tuple(event.changelog for event in self.events)

    def combined(self) -> Changelog | None:
        """Every event's changelog as one (None when no event happened)."""
        return Changelog.combined(self.changelogs) if self.events else None

    def summary(self) -> str:
        return summary_of(self.changelogs)

    def title(self) -> str:
        """One line saying which step this is: ``snapshot n40 (episode 3): 5 events since
        snapshot n31 (episode 2)``, ``live: 2 events since …``, ``from … to …: 7 events``."""
        count = len(self.events)
        events = "1 event" if count == 1 else f"{count} events"
        since = _snapshot_named(self.since)
        if self.kind == "live":
            return f"live: {events} since {since}"
        if self.kind == "between":
            return f"from {since} to {_snapshot_named(self.until)}: {events}"
        return f"{_snapshot_named(self.until)}: {events} since {since}"

    def to_json(self) -> dict[str, Any]:
        def entry(snapshot: SnapshotEntry | None) -> dict[str, Any] | None:
            if snapshot is None:
                return None
            return {
                "id": snapshot.id,
                "index": snapshot.index,
                "episode": snapshot.episode,
                "trigger": snapshot.trigger,
                "seq": snapshot.seq,
                "stream_seq": snapshot.stream_seq,
            }

        return {
            "context": self.name,
            "kind": self.kind,
            "since": entry(self.since),
            "until": entry(self.until),
            "title": self.title(),
            "summary": self.summary(),
            "events": [event.to_json() for event in self.events],
        }


@dataclass(frozen=True, slots=True)
class Change:
    """A batch of events the workspace has applied, and which contexts they touched."""

    events: tuple[StoredEvent, ...]
    contexts: frozenset[str]
    documents: frozenset[str] = frozenset()

    @property
    def seq(self) -> int:
        return self.events[-1].seq


class ContextProjection:
    """One context folded from its stream: its own id sequence, and a clock replay can set."""

    def __init__(self, context: Context, ids: SequentialIds, clock: FixedClock) -> None:
        self.context = context
        self.ids = ids
        self.clock = clock
        self.seq = 0  # the last event of its stream applied (global seq) ...
        self.stream_seq = 0  # ... and its place in the stream
        self.archived = 0  # the stream_seq of its last archive
        self.checkpointed = 0  # the stream_seq of its last checkpoint (saved, or loaded)
        self.snapshots: list[SnapshotEntry] = []
        self.cached_from: str | None = None  # the cache it was restored from, to name it
        self.forked_from: ForkOrigin | None = None

    @classmethod
    def fresh(cls, time_ns: int) -> ContextProjection:
        """A new, empty context, created at ``time_ns`` (its ``context.created`` event's time)."""
        ids, clock = SequentialIds(), FixedClock(time_ns)
        return cls(Context(ids=ids, clock=clock), ids, clock)

    @classmethod
    def restore(cls, data: dict[str, Any]) -> ContextProjection:
        """From ``dump()`` output; raises ``ContextError`` (or KeyError, TypeError) if malformed."""
        ids, clock = SequentialIds(), FixedClock()
        projection = cls(load_compact(data["context"], ids=ids, clock=clock), ids, clock)
        # Loading builds (and discards) a fresh root and turns first, spending ids: continue
        # exactly where the saved context stopped, as a replay from the first event would.
        ids.next = data["next_id"]
        projection.seq, projection.stream_seq = data["seq"], data["stream_seq"]
        projection.archived = data.get("archived", 0)
        rows = data.get("snapshots", [])
        projection.snapshots = [SnapshotEntry.load(i, row) for i, row in enumerate(rows)]
        if data.get("forked_from") is not None:
            projection.forked_from = ForkOrigin.from_json(data["forked_from"])
        return projection

    def info(self, name: str) -> ContextInfo:
        """The numbers ``contexts()`` shows for this context."""
        context = self.context
        return ContextInfo(
            name,
            context.current_episode,
            context.item_count(),
            context.history_depth,
            len(self.snapshots),
            self.forked_from,
        )

    def dump(self, *, with_snapshots: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "context": dump_compact(self.context),
            "next_id": self.ids.next,
            "seq": self.seq,
            "stream_seq": self.stream_seq,
            "archived": self.archived,
        }
        if with_snapshots:
            data["snapshots"] = [entry.dump() for entry in self.snapshots]
        if self.forked_from is not None:
            data["forked_from"] = self.forked_from.to_json()
        return data

    def apply(self, command: ContextCommand, time_ns: int) -> dict[str, Any]:
        """Run a command at ``time_ns``; a refused command changes nothing, ids included."""
        # pydantic (a quarter of the app's start-up) loads with the first command, not on open.
        from engine.context.commands import apply_command

        self.clock.now = time_ns
        next_id = self.ids.next
        try:
            return apply_command(self.context, command)
        except BaseException:
            self.ids.next = next_id
            raise

    def committed(self, seq: int, stream_seq: int, result: dict[str, Any]) -> None:
        """Note that the last applied command was stored as event ``seq``."""
        self.seq, self.stream_seq = seq, stream_seq
        snapshot_id = result.get("snapshot")
        if snapshot_id is not None:
            snapshot = self.context.history.get(snapshot_id)
            self.snapshots.append(
                SnapshotEntry(
                    snapshot.id,
                    len(self.snapshots),
                    snapshot.episode,
                    snapshot.trigger,
                    snapshot.created_at_ns,
                    seq,
                    stream_seq,
                )
            )

    def replay(self, event: StoredEvent) -> None:
        """Apply one stored event of this context's stream.

        Raises ``UnreplayableEvent`` if it holds no command this version can read, and
        ``ReplayDiverged`` if its command is refused or gives another result than recorded."""
        if event.type == "context.created":
            self.seq, self.stream_seq = event.seq, event.stream_seq
            return
        if event.type == FORKED:
            self._take_copy(event)
            return
        command = _recorded_command(event)
        recorded = _recorded_result(event)
        try:
            result = self.apply(command, event.time_ns)
        except NotFound as refused:
            # Earlier releases stored a delete that matched nothing (now refused): it changed
            # nothing then, as the refusal changes nothing now.
            if event.type != "context.delete" or recorded != {"deleted": []}:
                raise _refused_on_replay(event, refused) from None
            result = recorded
        except ContextError as refused:
            raise _refused_on_replay(event, refused) from None
        if "changes" not in recorded:
            # Recorded before results carried the changelog: the rest must agree.
            result = {key: value for key, value in result.items() if key != "changes"}
        if result != recorded:
            raise ReplayDiverged(
                f"event {event.seq} ({event.type}) replayed to {result}, "
                f"but the log recorded {recorded}",
                seq=event.seq,
            )
        self.committed(event.seq, event.stream_seq, result)

    def _take_copy(self, event: StoredEvent) -> None:
        """A fork's second event: the context becomes the copy it carries, and hands out ids
        from where its source stopped (so none collides with a copied one)."""

        def unreplayable(why: str) -> UnreplayableEvent:
            return UnreplayableEvent(
                f"event {event.seq} ({event.type}) of stream {event.stream!r} cannot be"
                f" replayed: {why}",
                seq=event.seq,
                stream=event.stream,
            )

        if event.stream_seq != 2 or self.stream_seq != 1:
            raise unreplayable("a fork's copy must follow the context's creation")
        payload = event.payload
        try:
            origin = ForkOrigin.from_json(payload["forked_from"])
            next_id = payload["next_id"]
            if type(next_id) is not int or next_id < 1:
                raise ValueError(f"next_id {next_id!r}")
            # Into the context object itself (fresh: only created), not a new one: whoever
            # holds it (an item's story replaying this stream) goes on reading the right one.
            restore_compact(payload["state"], self.context)
        except (*CACHE_ERRORS, TypeError) as error:
            raise unreplayable(f"its copy cannot be read ({error})") from None
        self.ids.next = next_id
        self.forked_from = origin
        self.seq, self.stream_seq = event.seq, event.stream_seq


def _refused_on_replay(event: StoredEvent, refused: ContextError) -> ReplayDiverged:
    return ReplayDiverged(
        f"event {event.seq} ({event.type}) was refused when replayed ({refused}), "
        "but the log recorded it as done",
        seq=event.seq,
    )


def _recorded_command(event: StoredEvent) -> ContextCommand:
    """The command an event of a context's stream recorded, or ``UnreplayableEvent``."""
    from engine.context.commands import parse_recorded  # see ContextProjection.apply

    def unreplayable(why: str) -> UnreplayableEvent:
        return UnreplayableEvent(
            f"event {event.seq} ({event.type}) of stream {event.stream!r} cannot be replayed:"
            f" {why}",
            seq=event.seq,
            stream=event.stream,
        )

    payload = event.payload
    if not isinstance(payload, Mapping) or not isinstance(payload.get("command"), Mapping):
        shown = json.dumps(payload, ensure_ascii=False, default=str)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise unreplayable(f"its payload holds no command ({shown})")
    version = payload.get("v", 1)
    if type(version) is not int:
        raise unreplayable(f"its command's form version is {version!r}, not a whole number")
    try:
        return parse_recorded(payload["command"], version)
    except ContextError as error:
        raise unreplayable(f"its command is not one this version can run ({error})") from None


def _recorded_result(event: StoredEvent) -> dict[str, Any]:
    """The result an event of a context's stream recorded for its command (what its replay
    must give), or ``UnreplayableEvent``: without one, a replay would check nothing."""
    result = event.payload.get("result")
    if not isinstance(result, dict):
        shown = json.dumps(result, ensure_ascii=False, default=str)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise UnreplayableEvent(
            f"event {event.seq} ({event.type}) of stream {event.stream!r} cannot be replayed:"
            f" its payload records no result for its command (its result: {shown})",
            seq=event.seq,
            stream=event.stream,
        )
    return result


class Workspace:
    """Open with ``await Workspace.open(path, create=True)``; close with ``await ws.close()``."""

    def __init__(
        self,
        store: EventStore,
        path: Path,
        clock: Callable[[], int],
        *,
        lazy: bool = False,
        ids: Ids | None = None,
    ) -> None:
        self.store = store
        self._ids = ids  # where document decisions get new ids (random unless given)
        self._documents: dict[str, DocumentProjection] = {}  # the loaded documents
        self._doc_pending: dict[str, list[StoredEvent]] = {}  # events arriving while one loads
        self.path = path
        self._clock = clock
        self._time = ProtocolTime()  # the ``clock`` stream: stepped, and how far ahead
        self._lazy = lazy
        self._contexts: dict[str, ContextProjection] = {}  # the loaded contexts
        self._heads: dict[str, StreamHead] = {}  # every context: where its stream ends
        # The numbers of a context as of a place in its stream (from the index, or known to be
        # those of a new, empty context): current while its stream ends there.
        self._summaries: dict[str, tuple[int, ContextInfo]] = {}
        self._origins: dict[str, ForkOrigin] = {}  # forks: where they came from (see _info)
        self._loading: dict[str, list[StoredEvent]] = {}  # events arriving while one loads
        self._load_lock = asyncio.Lock()
        self._applied = 0  # the global seq the workspace reflects
        self._index_seq = 0  # the seq of the index as last read or saved here
        self._index_basis: dict[str, list[Any]] = {}  # ... and what it said, to save only news
        self._legacy = False  # loaded from a version-2 checkpoint, to be replaced on saving
        self._rebuilt: dict[str, ContextProjection] = {}  # past states being scrubbed through
        self._rebuild_locks: dict[str, asyncio.Lock] = {}
        self._followed: _Followed | None = None  # the item whose story was last told
        self._story_lock = asyncio.Lock()  # one replay of it at a time
        self._closed = False
        self.checkpoint_problem: str | None = None  # why a checkpoint was not used or saved
        self._deciding = False  # whether the running command's decide() has been called
        # Contexts a cancelled command may have left ahead of the log: reloaded before the next.
        self._needs_reload: set[str] = set()
        # Documents a command that failed or was cancelled after deciding may have left ahead of
        # the log: still shown, never saved, fed nothing, and read again (``load_document``).
        self._documents_behind: set[str] = set()
        self._rereads: dict[str, asyncio.Task[None]] = {}  # those being read again meanwhile

    # -- lifecycle ---------------------------------------------------------------------------
    @classmethod
    async def open(
        cls,
        path: str | Path,
        *,
        create: bool = False,
        clock: Callable[[], int] = time.time_ns,
        watch: bool = True,
        lazy: bool = False,
        read_only: bool = False,
        ids: Ids | None = None,
    ) -> Workspace:
        """Open (or with ``create``, make) the workspace file at ``path``.

        A bad file raises a ``StoreError`` and is left untouched. ``watch=False`` follows this
        process's own commands only (no file watcher). ``lazy`` loads no context now: each is
        loaded when an async method names it, or by ``load``; without it every context is
        loaded, now and as other processes create them. ``read_only`` writes nothing to the
        file, checkpoints included (a long tail is replayed at every open): commands raise
        ``ReadOnlyWorkspace``.
        """
        path = Path(path)
        store = await SqliteEventStore.open(
            path, create=create, read_only=read_only, clock=clock, watch=watch
        )
        workspace = cls(store, path, clock, lazy=lazy, ids=ids)
        try:
            await workspace._start()
        except BaseException:
            await store.close()
            raise
        return workspace

    async def _start(self) -> None:
        """Read the index, learn where every stream ends now, and load what is to be loaded."""
        with _collector_paused(freeze=True):
            seq, restored = await self._read_index()
            later = await self.store.stream_heads(seq)
            for event in await self.store.read_stream(CLOCK_STREAM):
                self._time.apply(event)
            self._applied = max([seq, *(head.seq for head in later.values())])
            for stream, head in later.items():
                name = _context_name(stream)
                if name is not None:
                    self._note(name, head.seq, head.stream_seq)
            for name, projection in sorted(restored.items()):
                await self._load_one(name, projection)
            if not self._lazy:
                await self.load(*sorted(self._heads))
        # Nothing was applied since the streams' ends were read: the feed resumes from there.
        self.store.cursor = max(self.store.cursor, self._applied)

    async def _read_index(self) -> tuple[int, dict[str, ContextProjection]]:
        """Take in the stored index; returns the seq it reflects, and the contexts a version-2
        checkpoint restored if there was no index yet."""
        try:
            checkpoint = await self.store.load_checkpoint(INDEX_CHECKPOINT)
            if checkpoint is None:
                return await self._read_legacy()
            index = decode_checkpoint(checkpoint.data)
            entries = parse_index(index)
            self._origins.update(parse_origins(index))
            if checkpoint.seq > self.store.cursor and checkpoint.seq > await self.store.head():
                raise InvalidCheckpoint(f"the index is at event {checkpoint.seq}, past the log")
        except CACHE_ERRORS as error:
            # A cache: without it, the contexts are found in the log (their checkpoints remain).
            self.checkpoint_problem = (
                f"the workspace index could not be used ({error}); read the log instead"
            )
            return 0, {}
        for name, (seq, stream_seq, summary) in entries.items():
            self._heads[name] = StreamHead(seq, stream_seq)
            if summary is not None:
                at, *numbers = summary
                self._summaries[name] = (at, ContextInfo(name, *numbers))
        self._index_seq, self._index_basis = checkpoint.seq, entries
        return checkpoint.seq, {}

    async def _read_legacy(self) -> tuple[int, dict[str, ContextProjection]]:
        """A version-2 checkpoint holds every context as of its seq: read once, to migrate."""
        try:
            checkpoint = await self.store.load_checkpoint(LEGACY_CHECKPOINT)
            if checkpoint is None:
                return 0, {}
            data = decode_checkpoint(checkpoint.data)
            if not isinstance(data, dict) or data.get("version") != LEGACY_VERSION:
                raise InvalidCheckpoint("not a version-2 checkpoint")
            restored = {
                name: ContextProjection.restore(state) for name, state in data["contexts"].items()
            }
        except CACHE_ERRORS as error:
            problem = f"the checkpoint could not be used ({error}); replayed the log"
            self.checkpoint_problem = problem
            self._legacy = True  # replaced all the same, once the index is saved
            return 0, {}
        self._legacy = True
        for name, projection in restored.items():
            self._heads[name] = StreamHead(projection.seq, projection.stream_seq)
        return checkpoint.seq, restored

    @property
    def read_only(self) -> bool:
        """Opened read-only: looking only, nothing is written (see ``open``)."""
        return self.store.read_only

    def _check_writable(self) -> None:
        if self.store.read_only:
            raise ReadOnlyWorkspace(
                "the workspace was opened read-only: commands cannot run", path=str(self.path)
            )

    async def close(self) -> None:
        if self._closed:
            return
        for reread in list(self._rereads.values()):
            reread.cancel()
        await asyncio.gather(*self._rereads.values(), return_exceptions=True)
        if self.store.read_only:
            self._closed = True
            await self.store.close()
            return
        try:
            await self._save_caches(self._save_checkpoints(CHECKPOINT_ON_CLOSE))
        finally:
            self._closed = True
            await self.store.close()

    async def __aenter__(self) -> Workspace:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def checkpoint(self) -> None:
        """Save every loaded context and document that moved on since its checkpoint, and the
        index, so the next open replays only what comes after."""
        self._check_writable()
        await self._save_checkpoints(1)

    async def _save_checkpoints(self, tail: int) -> None:
        """Save the loaded contexts ``tail`` or more events past their checkpoint, then the
        index (and, once that is saved, drop a version-2 checkpoint read at opening)."""
        for name, projection in sorted(self._contexts.items()):
            if projection.stream_seq - projection.checkpointed >= tail:
                await self._save_context(name, projection)
        for name, document in sorted(self._documents.items()):
            if document.stream_seq - document.checkpointed >= tail:
                await self._save_document(name, document)
        await self._save_index()
        if self._legacy:
            await self.store.delete_checkpoint(LEGACY_CHECKPOINT)
            self._legacy = False

    async def _save_context(self, name: str, projection: ContextProjection) -> None:
        if name in self._needs_reload:
            return  # it may hold a command the log does not
        stream_seq = projection.stream_seq  # what the dump below reflects
        data = encode_checkpoint({"version": CHECKPOINT_VERSION, "name": name, **projection.dump()})
        await self.store.save_checkpoint(CONTEXT_CHECKPOINT + name, projection.seq, data)
        projection.checkpointed = max(projection.checkpointed, stream_seq)

    async def _save_index(self) -> None:
        """Save what this process knows of every context, if the stored index may not know it,
        merged with the stored one: for each context, the later end and the later numbers."""
        entries = self._index_entries()
        if entries == self._index_basis and self._applied - self._index_seq < INDEX_EVERY:
            # Nothing new about the contexts, and the log has not moved on far since (a
            # workspace of documents moves it without touching any context: saved all the
            # same, opening reads the streams' ends after it rather than over the whole log).
            return
        seq = self._applied
        merged = {name: [*entry] for name, entry in entries.items()}
        with contextlib.suppress(*CACHE_ERRORS):  # a stored index that cannot be read is replaced
            stored = await self.store.load_checkpoint(INDEX_CHECKPOINT)
            if stored is not None:
                index = decode_checkpoint(stored.data)
                theirs = parse_index(index)
                for name, origin in parse_origins(index).items():
                    self._origins.setdefault(name, origin)
                seq = max(seq, stored.seq)
                _merge_index(merged, theirs)
                for name, (_, _, summary) in theirs.items():
                    if summary is not None and name not in self._contexts:
                        known = self._summaries.get(name)
                        if known is None or summary[0] > known[0]:
                            self._summaries[name] = (summary[0], ContextInfo(name, *summary[1:]))
        for name, projection in self._contexts.items():
            if projection.forked_from is not None:
                self._origins[name] = projection.forked_from
        origins = {name: origin.to_json() for name, origin in sorted(self._origins.items())}
        index = {"version": CHECKPOINT_VERSION, "contexts": merged, "origins": origins}
        await self.store.save_checkpoint(INDEX_CHECKPOINT, seq, encode_checkpoint(index))
        self._index_seq, self._index_basis = max(self._index_seq, seq), entries

    def _index_entries(self) -> dict[str, list[Any]]:
        """Each context: ``[seq, stream_seq, summary]``, where its stream ends as known here and
        its numbers as ``[stream_seq, episode, items, depth, snapshots]`` (or None)."""
        entries: dict[str, list[Any]] = {}
        for name, head in sorted(self._heads.items()):
            projection = self._contexts.get(name)
            if projection is not None and name not in self._needs_reload:
                at, info = projection.stream_seq, projection.info(name)
            elif name in self._summaries:
                at, info = self._summaries[name]
            else:
                entries[name] = [head.seq, head.stream_seq, None]
                continue
            summary = [at, info.episode, info.items, info.depth, info.snapshots]
            entries[name] = [head.seq, head.stream_seq, summary]
        return entries

    @property
    def head(self) -> int:
        """The last event the workspace reflects (loaded contexts may reflect later ones)."""
        return self._applied

    # -- loading -------------------------------------------------------------------------------
    def loaded(self) -> frozenset[str]:
        """The contexts this process has loaded."""
        return frozenset(self._contexts)

    async def load(self, *names: str) -> None:
        """Load the named contexts not loaded yet, each from its checkpoint and its stream.

        Raises ``UnknownContext`` for a name no context has (checked in the log, so a context
        another process just created is found).
        """
        for name in names:
            if name not in self._contexts:
                await self._load_one(name)

    async def _load_one(
        self, name: str, restored: ContextProjection | None = None, *, replace: bool = False
    ) -> ContextProjection:
        """Load (or with ``replace``, reload) one context: from ``restored``, else its
        checkpoint, then the events of its stream after it, then those the change feed or a
        command brought in meanwhile."""
        async with self._load_lock:
            current = self._contexts.get(name)
            if current is not None and restored is None and not replace:
                return current  # loaded while we waited
            pending = self._loading[name] = []
            try:
                with _collector_paused(freeze=not replace):
                    projection = await self._read_context(name, restored)
                    for event in pending:
                        if event.seq > projection.seq:
                            projection.replay(event)
            finally:
                del self._loading[name]
            self._contexts[name] = projection
            self._note(name, projection.seq, projection.stream_seq)
            return projection

    async def _read_context(
        self, name: str, restored: ContextProjection | None
    ) -> ContextProjection:
        projection = restored
        if projection is None:
            try:
                projection = await self._restore(name)
            except CACHE_ERRORS as error:
                self.checkpoint_problem = (
                    f"the checkpoint of context {name!r} could not be used ({error});"
                    " replayed its stream"
                )
        if projection is not None:
            try:
                return await self._catch_up(name, projection)
            except _CheckpointMismatch as error:
                self.checkpoint_problem = (
                    f"the checkpoint of context {name!r} does not match the log ({error});"
                    " replayed its stream"
                )
            except ReplayDiverged as error:
                # The log's events after it do not replay onto it: a state that is not the
                # log's at its place. Replaying from the start says whether the log is at fault.
                self.checkpoint_problem = (
                    f"the checkpoint of context {name!r} is not the log's state at its place"
                    f" (after it, {error}); replayed its stream"
                )
        return await self._catch_up(name, None)

    async def _restore(self, name: str) -> ContextProjection | None:
        checkpoint = await self.store.load_checkpoint(CONTEXT_CHECKPOINT + name)
        if checkpoint is None:
            return None
        projection = context_checkpoint_projection(name, checkpoint)
        projection.checkpointed = projection.stream_seq
        return projection

    async def _catch_up(self, name: str, projection: ContextProjection | None) -> ContextProjection:
        """Apply the events of the context's stream after ``projection`` (all, if None)."""
        stream = CONTEXT_PREFIX + name
        # From a checkpoint, read its own last event first: it must be the log's.
        after = 0 if projection is None else projection.stream_seq - 1
        anchored = projection is None
        while True:
            events = await self.store.read_stream(stream, after, limit=READ_BATCH)
            for event in events:
                if not anchored:
                    anchored = True
                    assert projection is not None
                    if event.seq != projection.seq:
                        raise _CheckpointMismatch(
                            f"event {projection.stream_seq} of its stream is {event.seq}, "
                            f"not {projection.seq}"
                        )
                    continue
                if projection is None:
                    check_stream_start(event)
                    projection = ContextProjection.fresh(event.time_ns)
                projection.replay(event)
            if len(events) < READ_BATCH:
                break
            after = events[-1].stream_seq
        if not anchored:
            raise _CheckpointMismatch(f"its stream has no event {after + 1}")
        if projection is None:
            known = ", ".join(sorted(self._heads)) or "none yet"
            raise UnknownContext(
                f"no context named {name!r} in {self.path} (contexts: {known})", name=name
            )
        return projection

    async def _reload(self, names: Collection[str]) -> None:
        """Rebuild these contexts from the log (a command may have left them ahead of it)."""
        for name in sorted(names):
            await self._load_one(name, replace=True)
            self._needs_reload.discard(name)

    # -- projection ----------------------------------------------------------------------------
    def _note(self, name: str, seq: int, stream_seq: int) -> None:
        """The stream of context ``name`` reaches ``stream_seq`` (at global ``seq``)."""
        head = self._heads.get(name)
        if head is None:  # every context begins empty, with its creation
            self._summaries.setdefault(name, (1, _empty_info(name)))
        if head is None or stream_seq > head.stream_seq:
            self._heads[name] = StreamHead(seq, stream_seq)

    def _apply(self, event: StoredEvent) -> None:
        """Take in one event: a loaded context applies it, another context only counts it.
        Events already taken in (our own commands) are skipped."""
        if event.seq <= self._applied:
            return
        self._applied = event.seq
        if event.stream.startswith(DOC_PREFIX):
            self._apply_document(event)
            return
        if event.stream == CLOCK_STREAM:
            self._time.apply(event)
            return
        name = _context_name(event.stream)
        if name is None:
            return
        self._note(name, event.seq, event.stream_seq)
        if event.type == "context.created" and "forked_from" in event.payload:
            with contextlib.suppress(ValueError):
                self._origins[name] = ForkOrigin.from_json(event.payload["forked_from"])
        pending = self._loading.get(name)
        if pending is not None:
            pending.append(event)
        projection = self._contexts.get(name)
        if projection is None:
            if self._lazy or pending is not None or event.type != "context.created":
                return
            projection = self._contexts[name] = ContextProjection.fresh(event.time_ns)
        if event.seq > projection.seq:  # a context loaded after it was appended has it
            projection.replay(event)

    async def changes(self, after: int | None = None) -> AsyncIterator[Change]:
        """Follow the change feed: batches of events, each applied before it is yielded.

        Every event after ``after`` (default: now) comes exactly once and in order, whichever
        process appended it, this one's own commands included. Events that arrive together come
        as one batch, so a burst costs one repaint. Events of contexts not loaded are counted,
        not applied.
        """
        queue: asyncio.Queue[StoredEvent | BaseException | None] = asyncio.Queue()
        start = self._applied if after is None else after

        async def pump() -> None:
            try:
                async with self.store.subscribe(start) as subscription:
                    async for event in subscription:
                        queue.put_nowait(event)
                queue.put_nowait(None)
            except BaseException as error:  # handed to the reader, who raises it
                queue.put_nowait(error)

        task = asyncio.get_running_loop().create_task(pump(), name="workspace-changes")
        try:
            while True:
                batch = [await queue.get()]
                while not queue.empty():
                    batch.append(queue.get_nowait())
                events: list[StoredEvent] = []
                for item in batch:
                    if item is None:
                        if events:
                            yield self._changed(events)
                        return
                    if isinstance(item, BaseException):
                        raise item
                    self._apply(item)
                    events.append(item)
                self.store.cursor = max(self.store.cursor, self._applied)
                yield self._changed(events)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    @staticmethod
    def _changed(events: list[StoredEvent]) -> Change:
        names = frozenset(
            e.stream[len(CONTEXT_PREFIX) :] for e in events if e.stream.startswith(CONTEXT_PREFIX)
        )
        documents = frozenset(
            e.stream[len(DOC_PREFIX) :] for e in events if e.stream.startswith(DOC_PREFIX)
        )
        return Change(tuple(events), names, documents)

    # -- contexts ----------------------------------------------------------------------------
    def contexts(self) -> list[ContextInfo]:
        """Every context's numbers, by name: a loaded one's from its projection, another's
        from the index while they are current. Raises ``ContextNotLoaded`` if some context has
        neither (``list_contexts`` loads those)."""
        infos, unknown = [], []
        for name in sorted(self._heads):
            info = self._info(name)
            if info is None:
                unknown.append(name)
            else:
                infos.append(info)
        if unknown:
            raise ContextNotLoaded(
                f"the numbers of context(s) {', '.join(unknown)} are not known without loading"
                " them: use list_contexts()",
                names=unknown,
            )
        return infos

    async def list_contexts(self) -> list[ContextInfo]:
        """Every context's numbers, loading the contexts the index has no current numbers for."""
        while stale := [name for name in sorted(self._heads) if self._info(name) is None]:
            await self.load(*stale)
        return self.contexts()

    def _info(self, name: str) -> ContextInfo | None:
        projection = self._contexts.get(name)
        if projection is not None:
            return projection.info(name)
        summary = self._summaries.get(name)
        if summary is not None and summary[0] == self._heads[name].stream_seq:
            origin = self._origins.get(name)
            return (
                summary[1]
                if origin is None
                else dataclasses.replace(summary[1], forked_from=origin)
            )
        return None

    def applied(self, name: str) -> int:
        """How many events of a context's stream its projection reflects (its revision)."""
        return self._projection(name).stream_seq

    def context(self, name: str) -> Context:
        """The live projection of a context. Read it; change it only through commands."""
        return self._projection(name).context

    def _projection(self, name: str) -> ContextProjection:
        projection = self._contexts.get(name)
        if projection is not None:
            return projection
        if name in self._heads:
            raise ContextNotLoaded(
                f"context {name!r} is not loaded in this process: load it first"
                f" (await workspace.load({name!r}))",
                name=name,
            )
        known = ", ".join(sorted(self._heads)) or "none yet"
        raise UnknownContext(
            f"no context named {name!r} in {self.path} (contexts: {known})", name=name
        )

    async def create_context(self, name: str, *, actor: str = "") -> None:
        self._check_writable()
        check_context_name(name)
        check_actor(actor)

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            for event in others:
                self._apply(event)
            if name in self._heads:
                raise ContextExists(f"context {name!r} already exists", name=name)
            return [NewEvent(CONTEXT_PREFIX + name, "context.created", {"name": name}, actor)]

        stored = await self._execute(decide)
        for event in stored:
            self._apply(event)

    async def fork_context(
        self, name: str, new: str, *, at: str | None = None, actor: str = ""
    ) -> ForkOrigin:
        """Create context ``new`` holding a copy of context ``name`` as of snapshot ``at``
        (None: as it is now), and return where it came from.

        Two events in one transaction: the creation, which records the origin (source,
        snapshot, episode, and the source's event the copy reflects), and the copy itself
        (the state in the checkpoints' compact form, and where the source's ids stopped, so
        the fork's new ids never collide with copied ones). The fork has no snapshots of its
        own yet; commands on it never touch the source. Refused with nothing written:
        ``ContextExists``, ``InvalidName``, ``UnknownContext``, ``UnknownSnapshot``,
        ``ReadOnlyWorkspace``."""
        self._check_writable()
        check_context_name(new)
        check_actor(actor)
        if new in self._heads:
            raise ContextExists(f"context {new!r} already exists", name=new)
        await self.load(name)
        copy: tuple[ForkOrigin, dict[str, Any]] | None = None
        if at is not None:
            entry = self.snapshot(name, at)
            if entry.stream_seq == self._projection(name).stream_seq:
                source = self._projection(name)  # the newest event recorded it: now is then
            else:
                source = await self._rebuild(name, entry)
            copy = _fork_copy(name, at, source)  # now: a later rebuild may replay it on

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            nonlocal copy
            for event in others:
                self._apply(event)
            if new in self._heads:
                raise ContextExists(f"context {new!r} already exists", name=new)
            if copy is None:
                copy = _fork_copy(name, None, self._projection(name))
            stream = CONTEXT_PREFIX + new
            created = {"name": new, "forked_from": copy[0].to_json()}
            return [
                NewEvent(stream, "context.created", created, actor),
                NewEvent(stream, FORKED, copy[1], actor),
            ]

        stored = await self._execute(decide)
        for event in stored:
            self._apply(event)
        assert copy is not None
        return copy[0]

    async def run(
        self, name: str, command: ContextCommand | Mapping[str, Any], *, actor: str = ""
    ) -> dict[str, Any]:
        """Validate and apply one context command (a model from ``engine.context.commands``,
        or its JSON form), and append it as one event.

        A refused command raises a ``ContextError`` and leaves the workspace as it was.
        """
        [result] = await self.run_many(name, [command], actor=actor)
        return result

    async def run_many(
        self,
        name: str,
        commands: Sequence[ContextCommand | Mapping[str, Any]],
        *,
        actor: str = "",
    ) -> list[dict[str, Any]]:
        """Several commands in one transaction, one event each: all are appended, or none.

        Every command is checked before anything else happens; the first refusal raises its
        ``ContextError`` and the workspace is then as it was.
        """
        from engine.context.commands import FORMAT, parse_command  # see ContextProjection.apply

        # Each runs as it is stored and replayed (through JSON: string keys, lists, no NaN), so
        # the live projection never differs from a replay of the log.
        self._check_writable()
        check_actor(actor)
        parsed = [parse_command(command) for command in commands]
        if self._needs_reload:
            await self._reload(set(self._needs_reload))
        await self.load(name)
        results: list[dict[str, Any]] = []
        projection: ContextProjection | None = None
        stream = CONTEXT_PREFIX + name

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            nonlocal projection
            self._deciding = True
            for event in others:
                self._apply(event)
            now = self.now_ns()  # after the others: a step they hold dates this too
            projection = self._projection(name)
            events = []
            for command, stored in parsed:
                result = projection.apply(command, now)
                results.append(result)
                payload = {"command": stored, "result": result, "v": FORMAT}
                events.append(NewEvent(stream, f"context.{command.op}", payload, actor, now))
            return events

        try:
            stored = await self._execute(decide, touched=lambda: [name] if results else [])
        except ContextError:
            if results:  # refused after others in the batch were applied: undo them
                await self._reload([name])
            raise
        assert projection is not None
        first = projection.stream_seq
        for event, result in zip(stored, results, strict=True):
            projection.committed(event.seq, event.stream_seq, result)
        self._applied = stored[-1].seq
        self._note(name, stored[-1].seq, stored[-1].stream_seq)
        # The command is in the log: saving caches after it may fail, but must not say it did.
        mark = projection.stream_seq - projection.stream_seq % ARCHIVE_EVERY
        spacing = max(ARCHIVE_EVERY, projection.context.item_count() // 2)
        if mark > first and projection.stream_seq - projection.archived >= spacing:
            await self._save_caches(self._archive(name, projection, mark))
        if projection.stream_seq - projection.checkpointed >= CHECKPOINT_EVERY:
            await self._save_caches(self._save_context(name, projection))
        if self._applied - self._index_seq >= INDEX_EVERY:
            await self._save_caches(self._save_index())
        return results

    async def _save_caches(self, saving: Awaitable[None]) -> None:
        """Checkpoints and archives are caches: a failure to save one is noted, not raised."""
        try:
            await saving
        except StoreError as error:
            self.checkpoint_problem = f"a checkpoint could not be saved ({error})"

    async def _execute(
        self,
        decide: Callable[[Sequence[StoredEvent]], list[NewEvent]],
        touched: Callable[[], Collection[str]] = tuple,
    ) -> Any:
        """Run ``decide`` in a write transaction. If the transaction fails after ``decide``
        ran commands on contexts (``touched()``: others' events it applied are in the log),
        those contexts are rebuilt from the log."""
        self._deciding = False
        try:
            return await self.store.execute(decide)
        except ContextError:
            raise  # refused by the engine: whoever decided undoes what it did
        except asyncio.CancelledError:
            # Whether it committed is unknown, and a shutdown may be under way: the next
            # command rebuilds first.
            if self._deciding:
                self._needs_reload.update(touched())
            raise
        except BaseException:
            if self._deciding and (names := touched()):
                await self._reload(names)
            raise

    # -- convenience commands (their JSON forms; ``run`` checks them) --------------------------
    async def insert(self, name: str, selector: str, component: dict[str, Any]) -> dict[str, Any]:
        return await self.run(name, {"op": "insert", "selector": selector, "component": component})

    async def add_message(self, name: str, role: str, text: str) -> dict[str, Any]:
        return await self.run(name, {"op": "message", "role": role, "text": text})

    async def advance(self, name: str) -> dict[str, Any]:
        return await self.run(name, {"op": "advance"})

    async def seal(self, name: str, trigger: str = "checkpoint") -> dict[str, Any]:
        return await self.run(name, {"op": "seal", "trigger": trigger})

    # -- documents (engine.protocol; see engine/documents.py) -----------------------------------
    # The protocol's modules (pydantic, markdown-it) load with the first document, not on open.
    def _apply_document(self, event: StoredEvent) -> None:
        name = event.stream[len(DOC_PREFIX) :]
        pending = self._doc_pending.get(name)
        if pending is not None:
            pending.append(event)
            return
        if name in self._documents_behind:
            return  # in the log, which it is read again from
        projection = self._documents.get(name)
        if projection is not None and event.seq > projection.seq:
            replay_document_event(projection, event)

    async def document_names(self) -> list[str]:
        """Every document in the workspace, by name."""
        streams = await self.store.stream_names(DOC_PREFIX)
        return [stream[len(DOC_PREFIX) :] for stream in streams]

    async def list_documents(self) -> list[DocumentInfo]:
        """Every document's numbers (loading each)."""
        return [(await self.load_document(name)).info(name) for name in await self.document_names()]

    async def load_document(self, name: str) -> DocumentProjection:
        """Load a document (if not loaded yet, or if a command may have left it ahead of the
        log) from its stream; ``DocumentNotFound`` if none."""
        projection = self._documents.get(name)
        if projection is not None and name not in self._documents_behind:
            return projection
        async with self._load_lock:
            projection = self._documents.get(name)
            if projection is not None and name not in self._documents_behind:
                return projection
            self._doc_pending[name] = []
            try:
                projection = await self._read_document(name)
                for event in self._doc_pending[name]:
                    if event.seq > projection.seq:
                        replay_document_event(projection, event)
            finally:
                del self._doc_pending[name]
            self._documents[name] = projection
            self._documents_behind.discard(name)
            return projection

    def _read_again_later(self, name: str) -> None:
        """Document ``name`` may be ahead of the log (a command deciding on it was cancelled
        before it knew whether its transaction committed): read it again from the log in the
        background, the last state decided shown meanwhile. Cancelled by ``close``; a read
        that fails leaves it for the next ``load_document``, which says why."""
        self._documents_behind.add(name)
        if name in self._rereads:
            return

        async def read_again() -> None:
            from engine.protocol.errors import ProtocolError

            try:
                await self.load_document(name)
            except (ProtocolError, WorkspaceError, StoreError):
                pass  # still behind: the next load_document reads it again, and raises this
            finally:
                self._rereads.pop(name, None)

        loop = asyncio.get_running_loop()
        self._rereads[name] = loop.create_task(read_again(), name=f"read-again-{name}")

    async def _read_document(self, name: str) -> DocumentProjection:
        """Document ``name`` from its checkpoint and the events of its stream after it, or, if
        there is no usable checkpoint, from the whole stream (``checkpoint_problem`` says why
        one was not used)."""
        with _collector_paused(freeze=True):
            try:
                restored = await self._restore_document(name)
            except CACHE_ERRORS as error:
                restored = None
                self.checkpoint_problem = (
                    f"the checkpoint of document {name!r} could not be used ({error});"
                    " replayed its stream"
                )
            if restored is not None:
                try:
                    return await self._catch_up_document(name, restored)
                except (_CheckpointMismatch, UnreplayableEvent) as error:
                    self.checkpoint_problem = (
                        f"the checkpoint of document {name!r} does not match the log ({error});"
                        " replayed its stream"
                    )
            return await self._catch_up_document(name, None)

    async def _restore_document(self, name: str) -> DocumentProjection | None:
        checkpoint = await self.store.load_checkpoint(DOC_CHECKPOINT + name)
        if checkpoint is None:
            return None
        data = decode_checkpoint(checkpoint.data)
        return DocumentProjection.restore(name, checkpoint.seq, data)

    async def _catch_up_document(
        self, name: str, restored: DocumentProjection | None
    ) -> DocumentProjection:
        """Fold the events of the document's stream after ``restored`` (all, if None). From a
        checkpoint, its own last event is read first: it must be the log's."""
        from engine.protocol.errors import DocumentNotFound

        stream = DOC_PREFIX + name
        projection = restored or DocumentProjection()
        after = 0 if restored is None else restored.stream_seq - 1
        anchored = restored is None
        while True:
            events = await self.store.read_stream(stream, after, limit=READ_BATCH)
            for event in events:
                if not anchored:
                    anchored = True
                    if event.seq != projection.seq or event.payload.get("id") != (
                        projection.doc.last_event_id
                    ):
                        raise _CheckpointMismatch(
                            f"event {projection.stream_seq} of its stream is {event.seq},"
                            f" not {projection.seq}"
                        )
                    continue
                replay_document_event(projection, event)
            if len(events) < READ_BATCH:
                break
            after = events[-1].stream_seq
        if not anchored:
            raise _CheckpointMismatch(f"its stream has no event {after + 1}")
        if projection.stream_seq == 0:
            known = ", ".join(await self.document_names()) or "none yet"
            raise DocumentNotFound(
                f"no document named {name!r} in {self.path} (documents: {known})",
                document=name,
            )
        return projection

    async def document_at(self, name: str, count: int) -> Document:
        """Document ``name`` as it was after the first ``count`` events of its stream: a new
        projection (the live one is not touched), to be read, never changed. It starts from
        the latest cache at or before event ``count`` that matches the log (the document's
        checkpoint, else an archive of it, see ``_save_document``), else from the creation,
        and folds the events up to ``count``. Past the end, the document as it is now.
        ``DocumentNotFound`` if there is no such document; ``ValueError`` if ``count`` is below
        1 (the creation)."""
        from engine.protocol.errors import DocumentNotFound

        if count < 1:
            raise ValueError(f"event {count} of document {name!r}: the first is 1, its creation")
        stream = DOC_PREFIX + name
        with _collector_paused():
            projection = await self._document_before(name, count) or DocumentProjection()
            while projection.stream_seq < count:
                wanted = min(READ_BATCH, count - projection.stream_seq)
                events = await self.store.read_stream(stream, projection.stream_seq, wanted)
                for done, event in enumerate(events, 1):
                    replay_document_event(projection, event)
                    if done % REPLAY_YIELD_EVERY == 0:
                        await asyncio.sleep(0)  # a long fold leaves the app its turns
                if len(events) < wanted:
                    break
        if projection.stream_seq == 0:
            raise DocumentNotFound(f"no document named {name!r} in {self.path}", document=name)
        return projection.doc

    async def _document_before(self, name: str, count: int) -> DocumentProjection | None:
        """A fresh projection of the document from its latest cache at or before event
        ``count`` of its stream whose last event is the log's (None: there is none). A cache
        that cannot be used is passed over for the one before."""
        cached = await self.store.checkpoints()
        prefix = DOC_ARCHIVE_PREFIX + name + ":"
        archives = sorted(
            (int(key[len(prefix) :]), key)
            for key in cached
            if key.startswith(prefix) and key[len(prefix) :].isdigit()
        )
        candidates = [key for at, key in reversed(archives) if at <= count]
        if DOC_CHECKPOINT + name in cached:
            candidates.insert(0, DOC_CHECKPOINT + name)  # the latest, when it is not past count
        for key in candidates:
            try:
                checkpoint = await self.store.load_checkpoint(key)
                if checkpoint is None:
                    continue
                data = decode_checkpoint(checkpoint.data)
                projection = DocumentProjection.restore(name, checkpoint.seq, data)
                if projection.stream_seq > count:
                    continue
                stream = DOC_PREFIX + name
                last = await self.store.read_stream(stream, projection.stream_seq - 1, limit=1)
                if last and (last[0].seq, last[0].payload.get("id")) == (
                    projection.seq,
                    projection.doc.last_event_id,
                ):
                    return projection
                raise _CheckpointMismatch(f"event {projection.stream_seq} is not the log's")
            except (*CACHE_ERRORS, _CheckpointMismatch) as error:
                self.checkpoint_problem = (
                    f"{key!r} could not be used ({error}); read from an earlier state"
                )
        return None

    async def _save_document(
        self, name: str, projection: DocumentProjection, *, archive: bool = False
    ) -> None:
        """Save the document's checkpoint; with ``archive``, the same state is also kept as
        ``archive:doc:<name>:<n>`` (n: its events), where ``document_at`` starts a fold of
        the past from (the checkpoint itself is replaced as the document moves on)."""
        if name in self._documents_behind:
            return  # it may hold a command the log does not
        stream_seq = projection.stream_seq  # what the dump below reflects
        with _collector_paused():
            data = encode_checkpoint(projection.dump(name))
        await self.store.save_checkpoint(DOC_CHECKPOINT + name, projection.seq, data)
        projection.checkpointed = max(projection.checkpointed, stream_seq)
        if archive:
            key = f"{DOC_ARCHIVE_PREFIX}{name}:{stream_seq}"
            await self.store.save_checkpoint(key, projection.seq, data)

    def document(self, name: str) -> Document:
        """The live projection of a loaded document. Read it; change it only through commands."""
        projection = self._documents.get(name)
        if projection is None:
            raise ContextNotLoaded(
                f"document {name!r} is not loaded: await workspace.load_document({name!r})",
                name=name,
            )
        return projection.doc

    def _new_ids(self) -> Ids:
        if self._ids is None:
            from engine.protocol.envelope import RandomIds

            self._ids = RandomIds()
        return self._ids

    async def create_document(
        self,
        name: str,
        markdown: str,
        *,
        human: str,
        policy: str = "single",
        window_s: int = 60,
        strategy: str = "first-wins",
        default_trust: str = "Collaborator",
    ) -> DocumentInfo:
        """Make document ``name`` from Markdown, as human custodian ``human``."""
        from engine.documents import check_document_name, creation_event
        from engine.protocol.errors import DocumentExists

        self._check_writable()
        check_document_name(name)
        check_actor(human)
        check_text("the document's Markdown", markdown)
        ids = self._new_ids()
        now_ns = self.now_ns()
        event = creation_event(
            name=name,
            markdown=markdown,
            document_id=ids.uuid(),
            event_id=ids.uuid(),
            epoch_ms=now_ns // 1_000_000,
            human=human,
            policy=policy,
            window_s=window_s,
            strategy=strategy,
            default_trust=default_trust,
        )
        stream = DOC_PREFIX + name

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            for other in others:
                self._apply(other)
            if name in self._documents or any(e.stream == stream for e in others):
                raise DocumentExists(f"document {name!r} already exists", document=name)
            return [NewEvent(stream, "pact.document.snapshot", event, human, now_ns)]

        # Whether another process made it first: its stream already has events.
        if await self.store.read_stream(stream, 0, limit=1):
            raise DocumentExists(f"document {name!r} already exists", document=name)
        stored = await self._execute(decide)
        for other in stored:
            self._apply(other)
        projection = await self.load_document(name)
        if projection.doc.id != event["entityId"]:
            raise DocumentExists(f"document {name!r} already exists", document=name)
        return projection.info(name)

    async def run_document(
        self, name: str, command: Command | Mapping[str, Any], actor: Actor
    ) -> Decision:
        """Decide one protocol command on document ``name`` as ``actor`` and append its events
        (after the due work ``tick`` fires) in one transaction. A refusal raises its
        ``ProtocolError`` after appending only the due work, if any."""
        from engine.protocol.commands import parse_command
        from engine.protocol.decide import authorise

        # Who may do this comes first: before the workspace, the command's fields, the document
        # or its framework are looked at (an agent would otherwise learn of those first).
        authorise(command.get("op") if isinstance(command, Mapping) else command.op, actor)
        self._check_writable()
        check_actor(actor.name)
        parsed = parse_command(dict(command) if isinstance(command, Mapping) else command)
        check_fit(parsed.model_dump(mode="json"), "the command")
        parsed = await self._with_framework(name, parsed)
        return await self._decide_document(
            name, lambda doc, now, ids: _decide(doc, parsed, actor, now, ids)
        )

    async def tick_document(self, name: str) -> Decision:
        """Fire what is due on document ``name`` now (idempotent: nothing twice)."""
        from engine.protocol.decide import tick

        self._check_writable()
        return await self._decide_document(name, tick)

    async def _decide_document(
        self, name: str, decide_with: Callable[[Document, int, Ids], Decision]
    ) -> Decision:
        while True:
            decided = await self._decide_document_once(name, decide_with)
            if decided is not None:
                return decided

    async def _decide_document_once(
        self, name: str, decide_with: Callable[[Document, int, Ids], Decision]
    ) -> Decision | None:
        """One try; None if the document was read again meanwhile (another command on it
        failed or was cancelled while this one waited for the write lock): try again."""
        from engine.protocol.errors import ProtocolError

        projection = await self.load_document(name)
        stream = DOC_PREFIX + name
        ids = self._new_ids()
        outcome: list[Decision | ProtocolError] = []
        began = False  # whether decide() has begun to change the projection

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            nonlocal began
            self._deciding = True
            for other in others:  # committed whatever this command becomes: the store says so
                self._apply(other)
            if self._documents.get(name) is not projection or name in self._documents_behind:
                raise _DocumentReadAgain(name)
            began = True
            now_ns = self.now_ns()  # after the others: a step they hold is due now
            try:
                decision = decide_with(projection.doc, now_ns // 1_000_000, ids)
                events = decision.events
                outcome.append(decision)
            except ProtocolError as refused:
                if not refused.fired:
                    raise
                events = refused.fired
                outcome.append(refused)
            return [NewEvent(stream, e["eventType"], e, e["actorDisplay"], now_ns) for e in events]

        try:
            stored = await self.store.execute(decide)
        except ProtocolError:
            raise  # refused before anything was applied
        except _DocumentReadAgain:
            return None
        except asyncio.CancelledError:
            # Whether it committed is not known here, and a shutdown may be under way: the
            # document is read again from the log in the background, never dropped (a screen
            # showing it reads it every second).
            if began:
                self._read_again_later(name)
            raise
        except Exception:
            # What decide() applied is not in the log: read the document again from it now,
            # so that what is shown is the log's when the error is said.
            if began:
                self._documents_behind.add(name)
                with contextlib.suppress(ProtocolError, WorkspaceError, StoreError):
                    await self.load_document(name)
            raise
        except BaseException:
            if began:
                self._documents_behind.add(name)
            raise
        if stored:
            projection.seq, projection.stream_seq = stored[-1].seq, stored[-1].stream_seq
            self._applied = max(self._applied, stored[-1].seq)
            # A checkpoint's cost grows with the document: one every so many events, more
            # apart as it grows, keeps its share of each command's time bounded.
            spacing = max(
                CHECKPOINT_EVERY, len(projection.doc.proposals) + len(projection.doc.agents)
            )
            if projection.stream_seq - projection.checkpointed >= spacing:
                await self._save_caches(self._save_document(name, projection, archive=True))
        result = outcome[-1]
        if isinstance(result, ProtocolError):
            raise result
        return result

    async def _with_framework(self, name: str, command: Command) -> Command:
        """A classify or clearance on a document with no framework yet names the workspace's
        framework that holds its level, for the document to adopt."""
        from engine.protocol.commands import Classify, Clearance
        from engine.protocol.errors import InvalidRequest

        if not isinstance(command, Classify | Clearance) or command.levels:
            return command
        projection = await self.load_document(name)
        if projection.doc.framework is not None:
            return command
        frameworks = await self.frameworks()
        holding = [
            (fw, levels)
            for fw, levels in frameworks.items()
            if command.level in levels and command.framework in (None, fw)
        ]
        if len(holding) != 1:
            known = "; ".join(f"{fw}: {', '.join(lv)}" for fw, lv in frameworks.items())
            raise InvalidRequest(
                f"{'no' if not holding else 'more than one'} framework has level"
                f" {command.level!r} (frameworks: {known or 'none yet'});"
                " create one with `tap framework create`, or name it",
                code="classification.unknown_level",
            )
        framework, levels = holding[0]
        return command.model_copy(update={"framework": framework, "levels": tuple(levels)})

    async def frameworks(self) -> dict[str, list[str]]:
        """The workspace's classification frameworks: name → levels, lowest first."""
        from engine.documents import frameworks_from

        return frameworks_from(await self.store.read_stream(FRAMEWORKS))

    async def create_framework(self, name: str, levels: list[str], *, human: str) -> None:
        from engine.documents import check_levels
        from engine.protocol.errors import InvalidRequest

        self._check_writable()
        check_actor(human)
        check_levels(name, levels)

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            for other in others:
                self._apply(other)
            return [
                NewEvent(FRAMEWORKS, "framework.created", {"name": name, "levels": levels}, human)
            ]

        if name in await self.frameworks():
            raise InvalidRequest(f"framework {name!r} already exists", code="framework.exists")
        stored = await self._execute(decide)
        for event in stored:
            self._apply(event)

    # -- protocol time (engine/protocol_time.py) -------------------------------------------------
    def now_ns(self) -> int:
        """Protocol time: the clock, plus how far a stepped workspace was stepped ahead (as
        of the events this process has taken in; a command reads it after the others')."""
        return self._clock() + self._time.ahead_ms * 1_000_000

    @property
    def time_stepped(self) -> bool:
        """Whether this workspace's protocol time may be stepped ahead (``make_stepped``)."""
        return self._time.stepped

    @property
    def time_ahead_ms(self) -> int:
        """How far protocol time was stepped ahead of the clock, in every process."""
        return self._time.ahead_ms

    async def make_stepped(self, *, human: str) -> bool:
        """Let protocol time be stepped ahead in this workspace, for good and for every process
        (``clock.stepped``); False if it already was."""
        check_actor(human)
        self._check_writable()

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            for other in others:
                self._apply(other)
            if self._time.stepped:
                return []
            return [NewEvent(CLOCK_STREAM, STEPPED, {"by": human}, human, self.now_ns())]

        stored = await self._execute(decide)
        for event in stored:
            self._apply(event)
        return bool(stored)

    async def step_time(self, seconds: int, *, human: str) -> int:
        """Move protocol time ``seconds`` ahead (``clock.advanced``, shared by every process)
        and return how far ahead it now is, in ms. ``ClockNotStepped`` unless the workspace was
        made stepped; ``InvalidRequest`` for a step that is not 1 s to a day. It fires
        nothing: ``tick_document`` does, in whichever process runs it next."""
        check_actor(human)
        self._check_writable()
        advance_payload(self._time, seconds)  # refused before a transaction is opened

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            for other in others:
                self._apply(other)
            payload = advance_payload(self._time, seconds)
            # Dated at the new time: the step is the first thing that happens there.
            now = self.now_ns() + payload["byMs"] * 1_000_000
            return [NewEvent(CLOCK_STREAM, ADVANCED, {**payload, "by": human}, human, now)]

        stored = await self._execute(decide)
        for event in stored:
            self._apply(event)
        return self._time.ahead_ms

    async def document_events(
        self, name: str, after: int = 0, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """The v0.3 envelopes of a document with ``sequenceNumber >= after``, oldest first."""
        await self.load_document(name)
        events = await self.store.read_stream(DOC_PREFIX + name, after, limit=limit)
        return [dict(event.payload) for event in events]

    async def document_pages(
        self, name: str, after: int = 0, size: int = READ_BATCH, until: int | None = None
    ) -> AsyncIterator[list[Mapping[str, Any]]]:
        """The v0.3 envelopes of a document with ``after <= sequenceNumber`` (``< until``, if
        given), oldest first, ``size`` at a time: a log of any length read in pages of the
        store's, the document itself not loaded (an audit of a document no process has open
        replays nothing). Read them, never change them. ``DocumentNotFound`` if there is no
        such document."""
        from engine.protocol.errors import DocumentNotFound

        stream = DOC_PREFIX + name
        first = True
        while until is None or after < until:
            wanted = size if until is None else min(size, until - after)
            events = await self.store.read_stream(stream, after, limit=wanted)
            if first and not events and not await self.store.read_stream(stream, 0, limit=1):
                known = ", ".join(await self.document_names()) or "none yet"
                raise DocumentNotFound(
                    f"no document named {name!r} in {self.path} (documents: {known})",
                    document=name,
                )
            first = False
            if events:
                yield [event.payload for event in events]
            if len(events) < wanted:
                return
            after = events[-1].stream_seq

    # -- the past ------------------------------------------------------------------------------
    def snapshots(self, name: str) -> list[SnapshotEntry]:
        """Every snapshot of a context, oldest first (including those before the checkpoint)."""
        return list(self._projection(name).snapshots)

    def snapshot_count(self, name: str) -> int:
        return len(self._projection(name).snapshots)

    def snapshot_at(self, name: str, index: int) -> SnapshotEntry:
        """The ``index``-th snapshot of a context, oldest first (no copy of the list)."""
        return self._projection(name).snapshots[index]

    def snapshot(self, name: str, snapshot_id: str) -> SnapshotEntry:
        for entry in self._projection(name).snapshots:
            if entry.id == snapshot_id:
                return entry
        raise UnknownSnapshot(
            f"context {name!r} has no snapshot {snapshot_id!r}", snapshot=snapshot_id
        )

    def snapshot_of_episode(self, name: str, episode: int) -> SnapshotEntry:
        """``@eN``: the snapshot recorded when episode N began, else the first taken during it."""
        during = [e for e in self._projection(name).snapshots if e.episode == episode]
        if not during:
            raise UnknownSnapshot(
                f"context {name!r} has no snapshot of episode {episode}", episode=episode
            )
        return next((e for e in during if e.trigger == "episode"), during[0])

    def snapshot_in_memory(self, name: str, snapshot_id: str) -> ContextView | None:
        """The context at a snapshot if this process holds it now (taken since it opened the
        workspace, or rebuilt lately), without waiting; None: ``at_snapshot`` rebuilds it."""
        holders = [self._projection(name), self._rebuilt.get(name)]
        for projection in holders:
            if projection is not None:
                with contextlib.suppress(UnknownSnapshot):
                    return projection.context.history.at_snapshot(snapshot_id)
        return None

    async def at_snapshot(self, name: str, snapshot_id: str) -> ContextView:
        """The read-only context as it was at a snapshot, however long ago."""
        await self.load(name)
        held = self.snapshot_in_memory(name, snapshot_id)
        if held is not None:
            return held
        # Taken before this process loaded its checkpoint (or unknown: this says so): rebuild it.
        entry = self.snapshot(name, snapshot_id)
        rebuilt = await self._rebuild(name, entry)
        return rebuilt.context.history.at_snapshot(snapshot_id)

    async def at_episode(self, name: str, episode: int) -> ContextView:
        await self.load(name)
        return await self.at_snapshot(name, self.snapshot_of_episode(name, episode).id)

    async def _rebuild(self, name: str, entry: SnapshotEntry) -> ContextProjection:
        """A projection replayed up to ``entry``, from the nearest archive or the last rebuild.

        One at a time per context: two rebuilds would replay onto the same kept projection."""
        async with self._rebuild_locks.setdefault(name, asyncio.Lock()):
            projection = self._rebuilt.get(name)
            # Event ``entry.stream_seq`` records the snapshot, and archives hold no history:
            # start from a state before that event, or from a rebuild that replayed it.
            before = entry.stream_seq - 1
            nearest = before - before % ARCHIVE_EVERY
            reusable = projection is not None and (
                nearest <= projection.stream_seq <= before
                or (
                    projection.stream_seq == entry.stream_seq
                    and [e.id for e in projection.snapshots[-1:]] == [entry.id]
                )
            )
            if projection is None or not reusable:
                projection = await self._nearest_archive(name, before)
            self._rebuilt[name] = projection
            try:
                await self._replay_up_to(name, projection, entry.stream_seq)
            except ReplayDiverged as error:
                if projection.cached_from is None:
                    raise  # replayed from the stream's start: the log is at fault
                self._cache_not_replayed(name, projection.cached_from, error)
                projection = self._rebuilt[name] = await self._fresh(name)
                await self._replay_up_to(name, projection, entry.stream_seq)
            if projection.stream_seq < entry.stream_seq:
                stream = CONTEXT_PREFIX + name
                raise UnknownSnapshot(f"snapshot {entry.id!r} is past the end of {stream!r}")
            return projection

    async def _replay_up_to(
        self,
        name: str,
        projection: ContextProjection,
        stream_seq: int,
        observe: Callable[[StoredEvent], None] | None = None,
    ) -> None:
        """Replay the context's stream onto ``projection`` up to ``stream_seq`` (or its end),
        calling ``observe`` after each event; a long replay gives the event loop a turn now
        and then, so the app draws meanwhile."""
        stream = CONTEXT_PREFIX + name
        while projection.stream_seq < stream_seq:
            wanted = min(stream_seq - projection.stream_seq, READ_BATCH)
            events = await self.store.read_stream(stream, projection.stream_seq, limit=wanted)
            if not events:
                return
            for count, event in enumerate(events, 1):
                projection.replay(event)
                if observe is not None:
                    observe(event)
                if count % REPLAY_YIELD_EVERY == 0:
                    await asyncio.sleep(0)

    async def _nearest_archive(self, name: str, stream_seq: int) -> ContextProjection:
        mark = stream_seq - stream_seq % ARCHIVE_EVERY
        while mark > 0:
            # An archive is only a cache: one that cannot be used is passed over for the one
            # before.
            archive = archive_name(name, mark)
            try:
                checkpoint = await self.store.load_checkpoint(archive)
                if checkpoint is not None:
                    with _collector_paused():
                        archived = restored_projection(checkpoint)
                    # A batch of commands may have carried the archive past its mark.
                    if archived.stream_seq <= stream_seq:
                        await self._check_anchor(name, archived)
                        archived.cached_from = f"archive {archive!r}"
                        return archived
            except (*CACHE_ERRORS, _CheckpointMismatch) as error:
                self.checkpoint_problem = (
                    f"archive {archive!r} could not be used ({error}); replayed from an earlier"
                    " state"
                )
            mark -= ARCHIVE_EVERY
        return await self._fresh(name)

    async def _fresh(self, name: str) -> ContextProjection:
        """The context before its first event (its creation, replayed next)."""
        stream = CONTEXT_PREFIX + name
        first = await self.store.read_stream(stream, 0, limit=1)
        if not first:
            raise UnknownContext(f"no context named {name!r} in {self.path}", name=name)
        check_stream_start(first[0])
        return ContextProjection.fresh(first[0].time_ns)

    async def _check_anchor(self, name: str, projection: ContextProjection) -> None:
        """Raise ``_CheckpointMismatch`` unless the log's event at the projection's place in its
        stream is the one it says it reflects."""
        stream = CONTEXT_PREFIX + name
        events = await self.store.read_stream(stream, projection.stream_seq - 1, limit=1)
        if not events or events[0].seq != projection.seq:
            found = f"event {events[0].seq}" if events else "no such event"
            raise _CheckpointMismatch(
                f"its state is after event {projection.stream_seq} of {stream!r}, the log's"
                f" event {projection.seq}, but the log has {found} there"
            )

    def _cache_not_replayed(self, name: str, cached_from: str, error: ReplayDiverged) -> None:
        self.checkpoint_problem = (
            f"{cached_from} is not the log's state at its place (after it, {error});"
            f" replayed context {name!r} from its start"
        )

    async def _state_before(self, name: str, stream_seq: int) -> ContextProjection:
        """A fresh projection of the context at or before event ``stream_seq`` of its stream,
        from the latest cache that is: its own checkpoint (often close behind: an item born
        since the checkpoint replays only what came after it), else an archive."""
        with contextlib.suppress(*CACHE_ERRORS, _CheckpointMismatch), _collector_paused():
            saved = await self._restore(name)
            if saved is not None and saved.stream_seq <= stream_seq:
                await self._check_anchor(name, saved)
                saved.cached_from = f"the checkpoint of context {name!r}"
                return saved
        return await self._nearest_archive(name, stream_seq)

    # -- what each step did ----------------------------------------------------------------------
    async def changelogs(
        self,
        name: str,
        *,
        episode: int | None = None,
        snapshot: str | None = None,
        between: tuple[str, str] | None = None,
    ) -> StepChanges:
        """The changelogs of the events that made one step of a context, read from the
        events' stored results (the context is not rebuilt for them):

        - ``episode=N`` or ``snapshot=ID``: the events after the snapshot before it, up to and
          including the one that recorded it (episode N is ``snapshot_of_episode``'s);
        - ``between=(A, B)``: the events after snapshot A up to and including snapshot B;
        - none of them: the live step, the events since the newest snapshot (since the
          context's creation if it has none), or the newest snapshot's step when nothing has
          happened since.

        An event stored before results carried a changelog has it recomputed, by replaying the
        stream from the latest cache before it. Raises ``UnknownSnapshot`` for an unknown
        episode or snapshot, ``BadRange`` for two ways at once or A after B.
        """
        asked = [x for x in (episode, snapshot, between) if x is not None]
        if len(asked) > 1:
            raise BadRange("name the step one way: an episode, a snapshot, or a range")
        await self.load(name)
        projection = self._projection(name)
        entries = projection.snapshots
        kind: StepKind = "snapshot"
        since: SnapshotEntry | None
        until: SnapshotEntry | None
        if between is not None:
            older, newer = (self.snapshot(name, ref) for ref in between)
            if older.stream_seq > newer.stream_seq:
                raise BadRange(
                    f"snapshot {older.id} (episode {older.episode}) comes after snapshot"
                    f" {newer.id} (episode {newer.episode}): give the older one first",
                    since=older.id,
                    until=newer.id,
                )
            since, until = older, newer
            kind = "between"
        elif episode is not None or snapshot is not None:
            if episode is not None:
                made = self.snapshot_of_episode(name, episode)
            else:
                assert snapshot is not None
                made = self.snapshot(name, snapshot)
            until, since = made, (entries[made.index - 1] if made.index > 0 else None)
        else:
            newest = entries[-1] if entries else None
            if newest is not None and newest.stream_seq == projection.stream_seq:
                until, since = newest, (entries[-2] if len(entries) > 1 else None)
            else:
                until, since, kind = None, newest, "live"
        first = since.stream_seq if since is not None else 0
        last = until.stream_seq if until is not None else projection.stream_seq
        events = await self._step_events(name, first, last)
        return StepChanges(name, kind, since, until, tuple(events))

    async def _step_events(self, name: str, after: int, last: int) -> list[EventChanges]:
        """The changelogs of events ``after + 1`` .. ``last`` of a context's stream."""
        stream = CONTEXT_PREFIX + name
        events: list[StoredEvent] = []
        while after < last:
            batch = await self.store.read_stream(stream, after, limit=min(last - after, READ_BATCH))
            if not batch:
                break
            events.extend(batch)
            after = batch[-1].stream_seq
        out: list[EventChanges] = []
        unrecorded = [e for e in events if e.type in OPERATION_EVENTS and _recorded(e) is None]
        replayed = await self._replayed_changes(name, events, unrecorded[0]) if unrecorded else {}
        for event in events:
            if event.type not in OPERATION_EVENTS:
                continue  # the context's creation
            recorded = _recorded(event)
            if recorded is not None:
                log = Changelog.from_json(recorded)
                out.append(EventChanges(event.seq, event.stream_seq, event.type, log))
            else:
                log = replayed[event.stream_seq]
                out.append(EventChanges(event.seq, event.stream_seq, event.type, log, False))
        return out

    async def _replayed_changes(
        self, name: str, events: list[StoredEvent], first: StoredEvent
    ) -> dict[int, Changelog]:
        """The changelogs of ``events`` from ``first`` on, by replaying the stream onto the
        latest cache before ``first`` (from its start if a cache does not replay)."""
        projection = await self._state_before(name, first.stream_seq - 1)
        try:
            await self._replay_up_to(name, projection, first.stream_seq - 1)
        except ReplayDiverged as error:
            if projection.cached_from is None:
                raise
            self._cache_not_replayed(name, projection.cached_from, error)
            projection = await self._fresh(name)
            await self._replay_up_to(name, projection, first.stream_seq - 1)
        out: dict[int, Changelog] = {}
        for event in events:
            if event.stream_seq < first.stream_seq:
                continue
            projection.replay(event)
            changes = projection.context.last_changes
            if event.type in OPERATION_EVENTS and changes is not None:
                out[event.stream_seq] = changes
        return out

    # -- an item's story ------------------------------------------------------------------------
    async def item_story(self, name: str, item_id: str, at: str | None = None) -> list[StoryEvent]:
        """What happened to an item, told from the log (born, moved, replaced, staged), up to
        now or to snapshot ``at``, then what is due for it. ``NotFound`` if it is not there.

        The context's stream is replayed from the archive before the item's birth, whatever
        this process loaded, and the replay is kept: asked again after more events, it replays
        only those. One item is followed at a time.
        """
        view = await self.view(name, at)
        node = view.find(item_id)
        if node is None or node.item is None or node.created_at_ns is None:
            raise NotFound(f"context {name!r} has no item {item_id!r} there", item=item_id)
        entry = self.snapshot(name, at) if at is not None else None
        until = entry.stream_seq if entry is not None else self.applied(name)
        async with self._story_lock:
            followed = self._followed
            if followed is None or (followed.name, followed.story.item_id) != (name, item_id):
                stream = CONTEXT_PREFIX + name
                born = await self.store.first_at(stream, node.created_at_ns) or 1
                before = await self._state_before(name, born - 1)
                followed = self._followed = _Followed(name, before, ItemStory(item_id))
            story, context = followed.story, followed.projection.context

            def observe(event: StoredEvent) -> None:
                story.observe(context, op=event.type.removeprefix("context."), seq=event.seq)

            try:
                await self._replay_up_to(name, followed.projection, until, observe)
            except ReplayDiverged as error:
                cached_from = followed.projection.cached_from
                if cached_from is None:
                    raise  # replayed from the stream's start: the log is at fault
                self._followed = None
                self._cache_not_replayed(name, cached_from, error)
                followed = _Followed(name, await self._fresh(name), ItemStory(item_id))
                story, context = followed.story, followed.projection.context
                await self._replay_up_to(name, followed.projection, until, observe)
                self._followed = followed
        return followed.story.told(node, until=entry.seq if entry is not None else None)

    async def _archive(self, name: str, projection: ContextProjection, mark: int) -> None:
        """Save the projection as the archive for ``mark`` (its stream_seq is ``mark`` or, after
        a batch of commands, a little past it)."""
        projection.archived = projection.stream_seq
        data = encode_checkpoint(projection.dump(with_snapshots=False))
        await self.store.save_checkpoint(archive_name(name, mark), projection.seq, data)

    # -- queries -------------------------------------------------------------------------------
    async def view(self, name: str, at: str | None = None) -> ContextView:
        """The context now (``at=None``) or at snapshot ``at``."""
        await self.load(name)
        return self.context(name) if at is None else await self.at_snapshot(name, at)

    async def select(self, name: str, selector: str) -> list[Node]:
        """``select`` with the whole history reachable: ``@t-N``, ``@eN``, ``@snap:<id>``.
        The selector is one given now: checked as such (``check_input_selector``)."""
        parsed = check_input_selector(selector)
        await self.load(name)
        if not parsed.is_time_qualified:
            return self.context(name).select(parsed)
        view = await self.at_snapshot(name, self.resolve_time(name, parsed).id)
        return view.select(dataclasses.replace(parsed, time=None))

    def resolve_time(self, name: str, selector: Selector) -> SnapshotEntry:
        """The snapshot a time-qualified selector (``@t-N``, ``@eN``, ``@snap:<id>``) reads."""
        time_ = selector.time
        assert time_ is not None
        snapshots = self._projection(name).snapshots
        if time_.kind == "back":
            assert isinstance(time_.value, int)
            if not 1 <= time_.value <= len(snapshots):
                raise UnknownSnapshot(
                    f"@t-{time_.value}: context {name!r} has {len(snapshots)} snapshot(s)",
                    steps=time_.value,
                )
            return snapshots[-time_.value]
        if time_.kind == "episode":
            assert isinstance(time_.value, int)
            return self.snapshot_of_episode(name, time_.value)
        assert isinstance(time_.value, str)
        return self.snapshot(name, time_.value)

    async def render(self, name: str, mode: PrintMode = "tree", at: str | None = None) -> str:
        view = await self.view(name, at)
        if mode == "tree":
            return render_tree(view)
        if mode == "provider":
            return json.dumps(view.render_provider(), indent=2, ensure_ascii=False)
        if mode == "json":
            return json.dumps(view.model_dump(), indent=2, sort_keys=True)
        raise InvalidCommand(f"unknown print mode {mode!r}; use tree, provider or json", mode=mode)

    async def diff(self, name: str, a: str | None, b: str | None = None) -> Diff:
        """Changes from snapshot ``a`` to snapshot ``b`` (``None`` = now)."""
        return diff_views(await self.view(name, a), await self.view(name, b))

    async def located_diff(
        self, name: str, a: str | None, b: str | None = None
    ) -> tuple[Diff, Located, Located]:
        """:meth:`diff`, and where every item of each side is (``history.located_diff``)."""
        return located_diff(await self.view(name, a), await self.view(name, b))

    async def verify(self) -> VerifyResult:
        return await self.store.verify()

    async def deep_verification(self) -> DeepVerification | None:
        """When ``verify --deep`` last passed on this workspace; None if it never did, or if
        its record cannot be used (the log no longer holds the event it was saved at)."""
        try:
            record = await self.store.load_checkpoint(DEEP_VERIFIED)
            if record is None:
                return None
            return DeepVerification.load(record.seq, decode_checkpoint(record.data))
        except CACHE_ERRORS:
            return None


def _snapshot_named(entry: SnapshotEntry | None) -> str:
    """``snapshot n40 (episode 3)``, with its trigger unless it is an episode's."""
    if entry is None:
        return "the context's creation"
    if entry.trigger == "episode":
        return f"snapshot {entry.id} (episode {entry.episode})"
    return f"snapshot {entry.id} ({entry.trigger!r}, episode {entry.episode})"


OPERATION_EVENTS = frozenset(f"context.{op}" for op in CONTEXT_OPS)


def _recorded(event: StoredEvent) -> Any:
    """The changelog an event's result carries (JSON), or None (stored before they did)."""
    payload = event.payload
    result = payload.get("result") if isinstance(payload, Mapping) else None
    return result.get("changes") if isinstance(result, Mapping) else None


def _decide(doc: Document, command: Command, actor: Actor, now_ms: int, ids: Ids) -> Decision:
    from engine.protocol.decide import decide

    return decide(doc, command, actor, now_ms, ids)


def check_text(what: str, text: str) -> None:
    problem = text_problem(text)
    if problem is not None:
        from engine.protocol.errors import InvalidRequest

        raise InvalidRequest(f"{what}: {problem}")


def check_context_name(name: object) -> None:
    """Raise ``InvalidName`` unless ``name`` can name a context."""
    if not isinstance(name, str) or not NAME.fullmatch(name):  # fullmatch: no trailing newline
        raise InvalidName(
            f"context name {name!r}: use 1-64 letters, digits, '_', '.', '-', "
            "starting with a letter or digit",
            name=name,
        )


def check_actor(actor: object) -> None:
    """Raise ``InvalidActor`` unless ``actor`` can be recorded as who acted: text."""
    if not isinstance(actor, str):
        raise InvalidActor(f"an actor is a string, not {type(actor).__name__}")
    problem = text_problem(actor)
    if problem is not None:
        raise InvalidActor(f"actor {actor!a}: {problem}")


@dataclass(slots=True)
class _Followed:
    """The item whose story is being told: a replay of its context, and what it observed."""

    name: str
    projection: ContextProjection
    story: ItemStory


class _CheckpointMismatch(Exception):
    """A context's checkpoint says it ends at an event its stream does not have there."""


class _DocumentReadAgain(Exception):
    """The document a command was to decide on was read again from the log while it waited
    (``Workspace._decide_document``): it decides again, on the document as read."""


def check_stream_start(event: StoredEvent) -> None:
    """Raise ``UnreplayableEvent`` unless ``event``, the first of its stream in the log, is
    the context's creation."""
    if event.stream_seq != 1:
        raise UnreplayableEvent(
            f"event {event.seq} ({event.type}) is the first of stream {event.stream!r} in the"
            f" log, but it is number {event.stream_seq} of that stream: its start is missing",
            seq=event.seq,
            stream=event.stream,
        )
    if event.type != "context.created":
        raise UnreplayableEvent(
            f"event {event.seq} ({event.type}) begins stream {event.stream!r}, but a context's"
            " stream begins with its creation (context.created)",
            seq=event.seq,
            stream=event.stream,
        )


# What the fold raises for a stored event it cannot take: a payloadJson that is not JSON or
# not an object (ValueError), an unknown eventType or a sequenceNumber out of turn (ValueError),
# a field missing (KeyError) or not of the type its event needs (TypeError, AttributeError, ...).
_FOLD_ERRORS = (KeyError, TypeError, ValueError, IndexError, AttributeError)


def replay_document_event(projection: DocumentProjection, event: StoredEvent) -> None:
    """Fold ``event``, the next of a document's stream, onto ``projection``: the one way the
    workspace and ``verify --deep`` replay a document. ``UnreplayableEvent`` names an event the
    fold cannot take (its stream, its seq, its eventType, and why)."""
    try:
        projection.replay(event)
    except _FOLD_ERRORS as error:
        envelope = event.payload
        said = envelope.get("eventType") if isinstance(envelope, Mapping) else None
        event_type = said if isinstance(said, str) else event.type
        raise UnreplayableEvent(
            f"event {event.seq} ({event_type}) of stream {event.stream!r} cannot be replayed:"
            f" {type(error).__name__}: {error}",
            seq=event.seq,
            stream=event.stream,
            event_type=event_type,
        ) from None


def _context_name(stream: str) -> str | None:
    return stream[len(CONTEXT_PREFIX) :] if stream.startswith(CONTEXT_PREFIX) else None


@functools.cache
def _empty_numbers() -> ContextInfo:
    return ContextProjection.fresh(0).info("")


def _empty_info(name: str) -> ContextInfo:
    """The numbers of a context that has only been created."""
    return dataclasses.replace(_empty_numbers(), name=name)


def context_checkpoint_projection(name: str, checkpoint: Checkpoint) -> ContextProjection:
    """The projection context ``name``'s own checkpoint holds; raises ``InvalidCheckpoint`` (or
    KeyError, ...) if it is malformed, of another context, or not at its recorded event."""
    data = decode_checkpoint(checkpoint.data)
    if not isinstance(data, dict):
        raise InvalidCheckpoint(f"a {type(data).__name__}, not a context's state")
    if data.get("version") != CHECKPOINT_VERSION or data.get("name") != name:
        raise InvalidCheckpoint(f"version {data.get('version')!r} of context {data.get('name')!r}")
    return restored_projection(checkpoint, data)


def restored_projection(checkpoint: Checkpoint, data: Any = None) -> ContextProjection:
    """The projection a context's checkpoint or archive holds (``data``: its decoded bytes, if
    decoded already); raises ``InvalidCheckpoint`` (or KeyError, ...) if malformed, or if its
    state is not at the event the checkpoint is recorded at."""
    if data is None:
        data = decode_checkpoint(checkpoint.data)
    if not isinstance(data, dict):
        raise InvalidCheckpoint(f"a {type(data).__name__}, not a context's state")
    projection = ContextProjection.restore(data)
    if projection.seq != checkpoint.seq or projection.stream_seq < 1:
        raise InvalidCheckpoint(
            f"its state is at event {projection.seq}, its record at {checkpoint.seq}"
        )
    return projection


def parse_index(data: Any) -> dict[str, list[Any]]:
    """The entries of a stored index (see ``Workspace._index_entries``), checked for shape;
    raises ``InvalidCheckpoint`` (or KeyError, TypeError, ValueError) if malformed."""
    if not isinstance(data, dict) or data.get("version") != CHECKPOINT_VERSION:
        raise InvalidCheckpoint("not a version-3 workspace index")
    if not isinstance(data.get("contexts"), dict):
        raise InvalidCheckpoint("the index has no table of contexts")
    entries: dict[str, list[Any]] = {}
    for name, (seq, stream_seq, summary) in data["contexts"].items():
        check_context_name(name)
        numbers = [] if summary is None else summary
        if summary is not None and (not isinstance(summary, list) or len(summary) != 5):
            raise InvalidCheckpoint(f"context {name!r}: its numbers are {summary!r}")
        if not all(type(n) is int and n >= 0 for n in (seq, stream_seq, *numbers)):
            raise InvalidCheckpoint(f"context {name!r}: {[seq, stream_seq, summary]!r}")
        if stream_seq < 1 or seq < stream_seq or (summary is not None and summary[0] > stream_seq):
            raise InvalidCheckpoint(f"context {name!r}: {[seq, stream_seq, summary]!r}")
        entries[name] = [seq, stream_seq, summary]
    return entries


def _fork_copy(
    name: str, at: str | None, source: ContextProjection
) -> tuple[ForkOrigin, dict[str, Any]]:
    """The origin of a fork of ``source`` (context ``name``, as of snapshot ``at``) and the
    payload of its copy event."""
    context = source.context
    origin = ForkOrigin(name, at, context.current_episode, source.seq, source.stream_seq)
    payload = {
        "forked_from": origin.to_json(),
        "state": dump_compact(context),
        "next_id": source.ids.next,
    }
    return origin, payload


def parse_origins(data: Any) -> dict[str, ForkOrigin]:
    """The forks' origins a stored index carries (an index written before forks has none;
    one that cannot be read is left out: the context says where it came from once loaded)."""
    origins = data.get("origins") if isinstance(data, dict) else None
    out: dict[str, ForkOrigin] = {}
    for name, origin in (origins if isinstance(origins, dict) else {}).items():
        with contextlib.suppress(ValueError):
            out[name] = ForkOrigin.from_json(origin)
    return out


def _merge_index(ours: dict[str, list[Any]], theirs: dict[str, list[Any]]) -> None:
    """Fold another process's index entries into ``ours``: for each context, the later end of
    its stream and the later numbers (both only grow, so the later is the truer)."""
    for name, (seq, stream_seq, summary) in theirs.items():
        mine = ours.setdefault(name, [seq, stream_seq, summary])
        if stream_seq > mine[1]:
            mine[0], mine[1] = seq, stream_seq
        if summary is not None and (mine[2] is None or summary[0] > mine[2][0]):
            mine[2] = summary


def encode_checkpoint(data: dict[str, Any]) -> bytes:
    """A checkpoint's bytes: JSON by orjson (ten times json's speed); for what orjson refuses
    (integers beyond 64 bits in some content) json's, marked with a leading ``J`` because
    orjson would read those integers back as floats."""
    try:
        return orjson.dumps(data)
    except TypeError:
        return b"J" + json.dumps(data, separators=(",", ":")).encode()


def decode_checkpoint(data: bytes) -> Any:
    return json.loads(data[1:]) if data[:1] == b"J" else orjson.loads(data)


@contextlib.contextmanager
def _collector_paused(*, freeze: bool = False) -> Iterator[None]:
    """Loading a checkpoint allocates a container per item and none of them is garbage; left
    on, the cyclic collector walks the growing heap again and again (it doubled load time).
    With ``freeze`` (opening: what is loaded lives as long as the workspace) the heap is then
    frozen out of the collector's sight, instead of being walked by every full collection."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if enabled:
            gc.enable()


def archive_name(name: str, stream_seq: int) -> str:
    return f"{ARCHIVE_PREFIX}{name}:{stream_seq}"
