"""The workspace: one event-store file that holds every agent's context (and, later, documents).

Every context operation is a command. It is validated against the in-memory projection and
appended as one event inside the store's write transaction, after catching up with whatever
other processes appended, so the projection and the log never disagree. Events store the
command and its result; replay re-runs the command with the recorded time and the context's own
sequential ids, and checks it gets the recorded result.

Opening loads the latest ``workspace`` checkpoint and replays only the events after it. Past
states come from the snapshots kept in memory, or are rebuilt from the nearest per-context
archive checkpoint plus a short replay. Archives are named by marks every ``ARCHIVE_EVERY`` events
of a context, but one is only written when the context has moved on by half its size since the
last: a big context archived every thousand events would fill the disk with copies of itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import json
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson

from engine.context import Context, ContextError, ContextView
from engine.context.clock import FixedClock, SequentialIds
from engine.context.compact import dump_compact, load_compact
from engine.context.errors import InvalidCommand, UnknownSnapshot
from engine.context.explorer import render_tree
from engine.context.history import diff_views
from engine.context.selector_ast import Selector
from engine.context.selectors import parse_selector
from engine.context.tree import Diff, Node
from engine.store import (
    EventStore,
    InvalidCheckpoint,
    NewEvent,
    SqliteEventStore,
    StoredEvent,
    StoreError,
    VerifyResult,
)

CONTEXT_PREFIX = "ctx:"
CHECKPOINT = "workspace"
CHECKPOINT_VERSION = 2  # 2: contexts in the compact form (engine/context/compact.py)
CHECKPOINT_EVERY = 5_000  # events applied since the last checkpoint, while running
CHECKPOINT_ON_CLOSE = 200  # a shorter tail is cheaper to replay than to checkpoint
ARCHIVE_EVERY = 1_000  # events of one context between archive marks
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

if TYPE_CHECKING:
    from engine.context.commands import ContextCommand

PrintMode = Literal["tree", "provider", "json"]


class WorkspaceError(ContextError):
    code = "WORKSPACE_ERROR"


class UnknownContext(WorkspaceError):
    code = "UNKNOWN_CONTEXT"


class ContextExists(WorkspaceError):
    code = "CONTEXT_EXISTS"


class InvalidName(WorkspaceError):
    code = "INVALID_NAME"


class ReplayDiverged(WorkspaceError):
    """Replaying an event gave another result than the one recorded: the log or code changed."""

    code = "REPLAY_DIVERGED"


@dataclass(frozen=True, slots=True)
class ContextInfo:
    name: str
    episode: int
    items: int
    depth: int
    snapshots: int


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
class Change:
    """A batch of events the workspace has applied, and which contexts they touched."""

    events: tuple[StoredEvent, ...]
    contexts: frozenset[str]

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
        self.snapshots: list[SnapshotEntry] = []

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
        return projection

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
        """Apply one stored event of this context's stream."""
        if event.type != "context.created":
            from engine.context.commands import parse_command  # see apply()

            command, _stored = parse_command(event.payload["command"], recorded=True)
            result = self.apply(command, event.time_ns)
            recorded = event.payload.get("result")
            if recorded is not None and result != recorded:
                raise ReplayDiverged(
                    f"event {event.seq} ({event.type}) replayed to {result}, "
                    f"but the log recorded {recorded}",
                    seq=event.seq,
                )
            self.committed(event.seq, event.stream_seq, result)
        else:
            self.seq, self.stream_seq = event.seq, event.stream_seq


class Workspace:
    """Open with ``await Workspace.open(path, create=True)``; close with ``await ws.close()``."""

    def __init__(self, store: EventStore, path: Path, clock: Callable[[], int]) -> None:
        self.store = store
        self.path = path
        self._clock = clock
        self._contexts: dict[str, ContextProjection] = {}
        self._applied = 0  # the global seq the projections reflect
        self._checkpointed = 0
        self._rebuilt: dict[str, ContextProjection] = {}  # past states being scrubbed through
        self._closed = False
        self.checkpoint_problem: str | None = None  # why a checkpoint was not used or saved
        self._deciding = False  # whether the running command's decide() has been called
        self._needs_reload = False  # a cancelled command may have left the projections ahead

    # -- lifecycle ---------------------------------------------------------------------------
    @classmethod
    async def open(
        cls,
        path: str | Path,
        *,
        create: bool = False,
        clock: Callable[[], int] = time.time_ns,
        watch: bool = True,
    ) -> Workspace:
        """Open (or with ``create``, make) the workspace file at ``path``.

        A bad file raises a ``StoreError`` and is left untouched. ``watch=False`` follows this
        process's own commands only (no file watcher).
        """
        path = Path(path)
        store = await SqliteEventStore.open(path, create=create, clock=clock, watch=watch)
        workspace = cls(store, path, clock)
        try:
            await workspace._load()
        except BaseException:
            await store.close()
            raise
        return workspace

    async def _load(self) -> None:
        """(Re)build every projection from the latest checkpoint and the log after it.

        Built aside and swapped in at once: while it awaits, the old projections stay whole
        for whoever reads them, and what arrives meanwhile is caught up with afterwards.
        """
        with _collector_paused(freeze=not self._contexts):
            contexts, applied, problem = await self._load_projections()
        self._contexts, self._applied, self._checkpointed = contexts, applied, applied
        self._rebuilt.clear()
        self._needs_reload = False
        if problem is not None:
            self.checkpoint_problem = problem
        # The scan read to the end with no await since: the feed resumes from here.
        self.store.cursor = max(self.store.cursor, self._applied)

    async def _load_projections(self) -> tuple[dict[str, ContextProjection], int, str | None]:
        contexts: dict[str, ContextProjection] = {}
        applied, problem = 0, None
        try:
            checkpoint = await self.store.load_checkpoint(CHECKPOINT)
            if checkpoint is not None:
                data = _decode(checkpoint.data)
                if data.get("version") != CHECKPOINT_VERSION:
                    raise InvalidCheckpoint(f"checkpoint version {data.get('version')!r}")
                for name, state in data["contexts"].items():
                    contexts[name] = ContextProjection.restore(state)
                applied = checkpoint.seq
        except (StoreError, ContextError, ValueError, KeyError, TypeError) as error:
            # A checkpoint is only a cache: without it, the log is replayed from the start.
            problem = f"the checkpoint could not be used ({error}); replayed the log"
            contexts, applied = {}, 0
        async for batch in self.store.scan(applied):
            for event in batch:
                applied = _fold(contexts, event)
        return contexts, applied, problem

    async def close(self) -> None:
        if self._closed:
            return
        try:
            if self._applied - self._checkpointed >= CHECKPOINT_ON_CLOSE:
                await self._save_caches(self.checkpoint())
        finally:
            self._closed = True
            await self.store.close()

    async def __aenter__(self) -> Workspace:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def checkpoint(self) -> None:
        """Save every projection, so the next open replays only what comes after."""
        applied = self._applied  # what the dump below reflects, whatever arrives meanwhile
        data = {
            "version": CHECKPOINT_VERSION,
            "contexts": {name: p.dump() for name, p in sorted(self._contexts.items())},
        }
        await self.store.save_checkpoint(CHECKPOINT, applied, _encode(data))
        self._checkpointed = max(self._checkpointed, applied)

    @property
    def head(self) -> int:
        """The last event the projections reflect."""
        return self._applied

    # -- projection ----------------------------------------------------------------------------
    def _apply(self, event: StoredEvent) -> None:
        """Fold one event in; events already folded in (our own commands) are skipped."""
        if event.seq > self._applied:
            self._applied = _fold(self._contexts, event)

    async def changes(self, after: int | None = None) -> AsyncIterator[Change]:
        """Follow the change feed: batches of events, each applied before it is yielded.

        Every event after ``after`` (default: now) comes exactly once and in order, whichever
        process appended it, this one's own commands included. Events that arrive together come
        as one batch, so a burst costs one repaint.
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
        return Change(tuple(events), names)

    # -- contexts ----------------------------------------------------------------------------
    def contexts(self) -> list[ContextInfo]:
        return [
            ContextInfo(
                name,
                p.context.current_episode,
                p.context.item_count(),
                p.context.history_depth,
                len(p.snapshots),
            )
            for name, p in sorted(self._contexts.items())
        ]

    def applied(self, name: str) -> int:
        """How many events of a context's stream its projection reflects (its revision)."""
        return self._projection(name).stream_seq

    def context(self, name: str) -> Context:
        """The live projection of a context. Read it; change it only through commands."""
        return self._projection(name).context

    def _projection(self, name: str) -> ContextProjection:
        try:
            return self._contexts[name]
        except KeyError:
            known = ", ".join(sorted(self._contexts)) or "none yet"
            raise UnknownContext(
                f"no context named {name!r} in {self.path} (contexts: {known})", name=name
            ) from None

    async def create_context(self, name: str, *, actor: str = "") -> None:
        check_context_name(name)

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            for event in others:
                self._apply(event)
            if name in self._contexts:
                raise ContextExists(f"context {name!r} already exists", name=name)
            return [NewEvent(CONTEXT_PREFIX + name, "context.created", {"name": name}, actor)]

        stored = await self._execute(decide)
        for event in stored:
            self._apply(event)

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
        from engine.context.commands import parse_command  # see ContextProjection.apply

        # Each runs as it is stored and replayed (through JSON: string keys, lists, no NaN), so
        # the live projection never differs from a replay of the log.
        parsed = [parse_command(command) for command in commands]
        if self._needs_reload:
            await self._load()
        now = self._clock()
        results: list[dict[str, Any]] = []
        projection: ContextProjection | None = None
        stream = CONTEXT_PREFIX + name

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            nonlocal projection
            self._deciding = True
            for event in others:
                self._apply(event)
            projection = self._projection(name)
            events = []
            for command, stored in parsed:
                result = projection.apply(command, now)
                results.append(result)
                payload = {"command": stored, "result": result}
                events.append(NewEvent(stream, f"context.{command.op}", payload, actor, now))
            return events

        try:
            stored = await self._execute(decide, changed=lambda: bool(results))
        except ContextError:
            if results:  # refused after others in the batch were applied: undo them
                await self._load()
            raise
        assert projection is not None
        first = projection.stream_seq
        for event, result in zip(stored, results, strict=True):
            projection.committed(event.seq, event.stream_seq, result)
        self._applied = stored[-1].seq
        # The command is in the log: saving caches after it may fail, but must not say it did.
        mark = projection.stream_seq - projection.stream_seq % ARCHIVE_EVERY
        spacing = max(ARCHIVE_EVERY, projection.context.item_count() // 2)
        if mark > first and projection.stream_seq - projection.archived >= spacing:
            await self._save_caches(self._archive(name, projection, mark))
        if self._applied - self._checkpointed >= CHECKPOINT_EVERY:
            await self._save_caches(self.checkpoint())
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
        changed: Callable[[], bool] = lambda: True,
    ) -> Any:
        """Run ``decide`` in a write transaction. If the transaction fails after ``decide``
        changed the projections (``changed()``), they are rebuilt from the log."""
        self._deciding = False
        try:
            return await self.store.execute(decide)
        except ContextError:
            raise  # refused by the engine: whoever decided undoes what it did
        except asyncio.CancelledError:
            # Whether it committed is unknown, and a shutdown may be under way: the next
            # command rebuilds first.
            if self._deciding and changed():
                self._needs_reload = True
            raise
        except BaseException:
            if self._deciding and changed():
                await self._load()
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
        held = self.snapshot_in_memory(name, snapshot_id)
        if held is not None:
            return held
        # Taken before this process loaded its checkpoint (or unknown: this says so): rebuild it.
        entry = self.snapshot(name, snapshot_id)
        rebuilt = await self._rebuild(name, entry)
        return rebuilt.context.history.at_snapshot(snapshot_id)

    async def at_episode(self, name: str, episode: int) -> ContextView:
        return await self.at_snapshot(name, self.snapshot_of_episode(name, episode).id)

    async def _rebuild(self, name: str, entry: SnapshotEntry) -> ContextProjection:
        """A projection replayed up to ``entry``, from the nearest archive or the last rebuild."""
        projection = self._rebuilt.get(name)
        # Event ``entry.stream_seq`` records the snapshot, and archives hold no history: start
        # from a state before that event, or from a rebuild that replayed it.
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
        stream = CONTEXT_PREFIX + name
        while projection.stream_seq < entry.stream_seq:
            wanted = entry.stream_seq - projection.stream_seq
            events = await self.store.read(projection.seq, limit=min(wanted, 10_000), stream=stream)
            if not events:
                raise UnknownSnapshot(f"snapshot {entry.id!r} is past the end of {stream!r}")
            for event in events:
                projection.replay(event)
        return projection

    async def _nearest_archive(self, name: str, stream_seq: int) -> ContextProjection:
        mark = stream_seq - stream_seq % ARCHIVE_EVERY
        while mark > 0:
            # An archive is only a cache: one that cannot be read is passed over for the one
            # before.
            with contextlib.suppress(StoreError, ContextError, ValueError, KeyError, TypeError):
                checkpoint = await self.store.load_checkpoint(_archive_name(name, mark))
                if checkpoint is not None:
                    with _collector_paused():
                        archived = ContextProjection.restore(_decode(checkpoint.data))
                    # A batch of commands may have carried the archive past its mark.
                    if archived.stream_seq <= stream_seq:
                        return archived
            mark -= ARCHIVE_EVERY
        [created] = await self.store.read(0, limit=1, stream=CONTEXT_PREFIX + name)
        return ContextProjection.fresh(created.time_ns)

    async def _archive(self, name: str, projection: ContextProjection, mark: int) -> None:
        """Save the projection as the archive for ``mark`` (its stream_seq is ``mark`` or, after
        a batch of commands, a little past it)."""
        projection.archived = projection.stream_seq
        data = _encode(projection.dump(with_snapshots=False))
        await self.store.save_checkpoint(_archive_name(name, mark), projection.seq, data)

    # -- queries -------------------------------------------------------------------------------
    async def view(self, name: str, at: str | None = None) -> ContextView:
        """The context now (``at=None``) or at snapshot ``at``."""
        return self.context(name) if at is None else await self.at_snapshot(name, at)

    async def select(self, name: str, selector: str) -> list[Node]:
        """``select`` with the whole history reachable: ``@t-N``, ``@eN``, ``@snap:<id>``."""
        parsed = parse_selector(selector)
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

    async def verify(self) -> VerifyResult:
        return await self.store.verify()


def check_context_name(name: object) -> None:
    """Raise ``InvalidName`` unless ``name`` can name a context."""
    if not isinstance(name, str) or not NAME.fullmatch(name):  # fullmatch: no trailing newline
        raise InvalidName(
            f"context name {name!r}: use 1-64 letters, digits, '_', '.', '-', "
            "starting with a letter or digit",
            name=name,
        )


def _fold(contexts: dict[str, ContextProjection], event: StoredEvent) -> int:
    """Apply one event to the projections it concerns; returns its seq."""
    if event.stream.startswith(CONTEXT_PREFIX):
        name = event.stream[len(CONTEXT_PREFIX) :]
        if event.type == "context.created":
            contexts[name] = ContextProjection.fresh(event.time_ns)
        contexts[name].replay(event)
    return event.seq


def _encode(data: dict[str, Any]) -> bytes:
    """A checkpoint's bytes: JSON by orjson (ten times json's speed); for what orjson refuses
    (integers beyond 64 bits in some content) json's, marked with a leading ``J`` because
    orjson would read those integers back as floats."""
    try:
        return orjson.dumps(data)
    except TypeError:
        return b"J" + json.dumps(data, separators=(",", ":")).encode()


def _decode(data: bytes) -> Any:
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


def _archive_name(name: str, stream_seq: int) -> str:
    return f"archive:{CONTEXT_PREFIX}{name}:{stream_seq}"
