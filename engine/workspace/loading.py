"""Loading contexts: each from its own checkpoint and the events of its stream after it, and
saving that checkpoint."""

from __future__ import annotations

from collections.abc import Collection

from engine.context import Context
from engine.store import StreamHead
from engine.workspace import cadence
from engine.workspace.checkpoints import context_checkpoint_projection, encode_checkpoint
from engine.workspace.errors import (
    CACHE_ERRORS,
    CheckpointMismatch,
    ContextNotLoaded,
    ReplayDiverged,
    UnknownContext,
)
from engine.workspace.heap import collector_paused
from engine.workspace.keys import CHECKPOINT_VERSION, CONTEXT_CHECKPOINT, CONTEXT_PREFIX
from engine.workspace.projection import ContextProjection, check_stream_start, empty_info
from engine.workspace.state import WorkspaceState


class ContextLoading(WorkspaceState):
    """Which contexts are loaded, loading them, and their checkpoints."""

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
                with collector_paused(freeze=not replace):
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
            except CheckpointMismatch as error:
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
            events = await self.store.read_stream(stream, after, limit=cadence.READ_BATCH)
            for event in events:
                if not anchored:
                    anchored = True
                    assert projection is not None
                    if event.seq != projection.seq:
                        raise CheckpointMismatch(
                            f"event {projection.stream_seq} of its stream is {event.seq}, "
                            f"not {projection.seq}"
                        )
                    continue
                if projection is None:
                    check_stream_start(event)
                    projection = ContextProjection.fresh(event.time_ns)
                projection.replay(event)
            if len(events) < cadence.READ_BATCH:
                break
            after = events[-1].stream_seq
        if not anchored:
            raise CheckpointMismatch(f"its stream has no event {after + 1}")
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
            self._summaries.setdefault(name, (1, empty_info(name)))
        if head is None or stream_seq > head.stream_seq:
            self._heads[name] = StreamHead(seq, stream_seq)

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

    async def _save_context(self, name: str, projection: ContextProjection) -> None:
        if name in self._needs_reload:
            return  # it may hold a command the log does not
        stream_seq = projection.stream_seq  # what the dump below reflects
        data = encode_checkpoint({"version": CHECKPOINT_VERSION, "name": name, **projection.dump()})
        await self.store.save_checkpoint(CONTEXT_CHECKPOINT + name, projection.seq, data)
        projection.checkpointed = max(projection.checkpointed, stream_seq)
        projection.stories_unsaved = False
