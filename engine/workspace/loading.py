"""Loading contexts: each from its own checkpoint and the events of its stream after it, and
saving that checkpoint."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Collection

from engine.context import Context
from engine.context.compact import unpack_turns
from engine.context.errors import InvalidExport
from engine.heap import collector_paused
from engine.store import Checkpoint, StoredEvent, StreamHead
from engine.workspace.checkpoints import (
    context_checkpoint_projection,
    encode_checkpoint,
    restored_projection,
)
from engine.workspace.errors import (
    CheckpointMismatch,
    ContextNotLoaded,
    ReplayDiverged,
    UnknownContext,
)
from engine.workspace.keys import (
    ARCHIVE_PREFIX,
    CHECKPOINT_VERSION,
    CONTEXT_CHECKPOINT,
    CONTEXT_PREFIX,
)
from engine.workspace.pieces import lay_out, pieces_prefix
from engine.workspace.projection import ContextProjection, check_stream_start, empty_info
from engine.workspace.repository import Saved, StreamRepository
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
        self,
        name: str,
        restored: ContextProjection | None = None,
        *,
        replace: bool = False,
        replay: bool = False,
    ) -> ContextProjection:
        """Load (or with ``replace``, reload) one context: from ``restored``, else its
        checkpoint (with ``replay``, not: its checkpoint was found malformed), then the events
        of its stream after it, then those the change feed or a command brought in
        meanwhile."""
        async with self._load_lock:
            current = self._contexts.get(name)
            if current is not None and restored is None and not replace:
                return current  # loaded while we waited
            pending = self._loading[name] = []
            try:
                with collector_paused(freeze=not replace):
                    if replay:
                        projection = await self._catch_up(name, None)
                    else:
                        projection = await self._read_context(name, restored)
                    for event in pending:
                        if event.seq > projection.seq:
                            projection.replay(event)
            finally:
                del self._loading[name]
            self._contexts[name] = projection
            self._note(name, projection.seq, projection.stream_seq)
            return projection

    async def unpacking(self, name: str, chunk: int = 1_000) -> AsyncIterator[int]:
        """Decode, ``chunk`` turns at a time, the turns of the loaded context ``name`` that
        opening left packed (``compact.unpack_turns``: each step says how many are left); a
        reader runs it between frames once the context is drawn, before ``build_indexes``.

        A turn found malformed (its checkpoint's digest matched: only a forged one) ends it as
        a malformed checkpoint ends opening: the context is rebuilt from its log, its
        checkpoint not used, and ``checkpoint_problem`` says which turn; ``context(name)`` is
        then another context, the log's. So are turns whose items share ids (found as the
        context is indexed, once every turn is decoded)."""
        projection = self._projection(name)
        try:
            if projection.pieces is not None:
                await projection.pieces.read_all()  # as it awaits: no turn blocks to read one
            for left in unpack_turns(projection.context, chunk):
                yield left
                if self._contexts.get(name) is not projection:
                    return  # reloaded meanwhile (a command found the turn first): the log's
            # Every turn decoded: index them now, which checks that no item id is held twice
            # (turns forged to share items decode one by one), inside the same refusal.
            projection.context.build_indexes()
            if projection.pieces is not None:
                projection.pieces.release()
        except InvalidExport as error:
            if self._contexts.get(name) is not projection:
                return
            self._note_cache_problem(
                f"the checkpoint of context {name!r} could not be used ({error});"
                " replayed its stream"
            )
            await self._load_one(name, replace=True, replay=True)

    async def _unpacked(self, name: str) -> None:
        """Before a command on the loaded context ``name``: its turns left packed decoded
        (``unpacking``; a no-op once its indexes are built, which reads them all), so that a
        malformed one rebuilds it from its log rather than failing the command halfway."""
        if not self.context(name).indexed:
            async for _left in self.unpacking(name, chunk=1 << 62):
                pass

    async def _read_context(
        self, name: str, restored: ContextProjection | None
    ) -> ContextProjection:
        return await self._context_streams.get(name, restored)

    @functools.cached_property
    def _context_streams(self) -> StreamRepository[ContextProjection]:
        """The contexts' repository: checkpoints, catching up, archives (``repository.py``)."""
        return StreamRepository(self.store, ContextKind(self), self._note_cache_problem)

    async def _restore(self, name: str) -> ContextProjection | None:
        return await self._context_streams.restore(name)

    async def _catch_up(self, name: str, projection: ContextProjection | None) -> ContextProjection:
        """Apply the events of the context's stream after ``projection`` (all, if None)."""
        return await self._context_streams.catch_up(name, projection)

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
        if projection.pieces is not None and not projection.pieces.complete:
            try:  # saving writes every turn's record: those in pieces read first, awaited
                await projection.pieces.read_all()
            except InvalidExport as error:
                self._note_cache_problem(
                    f"the checkpoint of context {name!r} could not be saved again ({error})"
                )
                return
        await self._context_streams.save(name, projection)


class ContextKind:
    """How a context's stream differs from other streams (see ``StreamKind``)."""

    noun = "context"
    stream_prefix = CONTEXT_PREFIX
    archive_prefix = ARCHIVE_PREFIX
    mismatched: tuple[type[Exception], ...] = (CheckpointMismatch,)
    diverged: tuple[type[Exception], ...] = (ReplayDiverged,)

    def __init__(self, workspace: WorkspaceState) -> None:
        self._workspace = workspace

    @property
    def checkpoint_prefix(self) -> str:
        return CONTEXT_CHECKPOINT  # read here when used (a benchmark sets it to load none)

    def restore(self, name: str, checkpoint: Checkpoint) -> ContextProjection:
        with collector_paused():
            return context_checkpoint_projection(name, checkpoint, self._workspace.store)

    def restore_archive(self, name: str, checkpoint: Checkpoint) -> ContextProjection:
        with collector_paused():
            return restored_projection(checkpoint, store=self._workspace.store)

    async def ready(self, projection: ContextProjection) -> None:
        if projection.pieces is not None and not self._workspace.store.reads_blocking:
            await projection.pieces.read_all()

    def begin(self, name: str, first: StoredEvent) -> ContextProjection:
        check_stream_start(first)
        return ContextProjection.fresh(first.time_ns)

    def apply(self, projection: ContextProjection, event: StoredEvent) -> None:
        projection.replay(event)

    def is_anchor(self, projection: ContextProjection, event: StoredEvent) -> bool:
        return event.seq == projection.seq

    def checkpoint_weight(self, projection: ContextProjection) -> int:
        return 0  # a context's checkpoint is saved every so many events, whatever its size

    def archive_weight(self, projection: ContextProjection) -> int:
        # A big context archived every thousand events would fill the disk with copies of
        # itself: one only once it has moved on by half its size since the last.
        return projection.context.item_count() // 2

    def checkpoint_data(self, name: str, projection: ContextProjection) -> Saved:
        data, turns = projection.dump_packed()
        laid = lay_out(name, data, turns)
        head = encode_checkpoint({"version": CHECKPOINT_VERSION, "name": name, **data}, laid.kept)
        stored = set(projection.pieces_saved)
        if projection.pieces is not None:
            stored.update(projection.pieces.read_names())
        return Saved(head, laid.pieces, pieces_prefix(name), stored)

    def saved(self, projection: ContextProjection, saved: Saved) -> None:
        projection.stories_unsaved = False  # its story index is in the checkpoint just saved
        projection.unpacked = False  # and its turns packed
        projection.pieces_saved = frozenset(saved.parts)  # not written again by the next

    def archive_data(self, name: str, projection: ContextProjection) -> bytes:
        return encode_checkpoint(projection.dump(with_snapshots=False))

    async def missing(self, name: str) -> Exception:
        known = ", ".join(sorted(self._workspace._heads)) or "none yet"
        return UnknownContext(
            f"no context named {name!r} in {self._workspace.path} (contexts: {known})", name=name
        )
