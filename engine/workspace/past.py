"""A context's past: its snapshots, and states rebuilt from archives and a short replay."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from engine.context import ContextView
from engine.context.errors import UnknownSnapshot
from engine.store import StoredEvent
from engine.workspace.errors import ReplayDiverged
from engine.workspace.keys import CONTEXT_PREFIX
from engine.workspace.loading import ContextLoading
from engine.workspace.projection import ContextProjection
from engine.workspace.types import SnapshotEntry


class PastStates(ContextLoading):
    """Snapshots, states at them, and the archives they are rebuilt from."""

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
            every = self._context_streams.intervals.archive_every or 1
            nearest = before - before % every
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
        await self._context_streams.replay_up_to(name, projection, stream_seq, observe)

    async def _nearest_archive(self, name: str, stream_seq: int) -> ContextProjection:
        """The context from its latest archive at or before event ``stream_seq`` of its stream
        that is the log's, else before its first event."""
        archived = await self._context_streams.before(name, stream_seq, checkpoint=False)
        return archived if archived is not None else await self._fresh(name)

    async def _fresh(self, name: str) -> ContextProjection:
        """The context before its first event (its creation, replayed next)."""
        return await self._context_streams.first(name)

    def _cache_not_replayed(self, name: str, cached_from: str, error: ReplayDiverged) -> None:
        self.checkpoint_problem = (
            f"{cached_from} is not the log's state at its place (after it, {error});"
            f" replayed context {name!r} from its start"
        )

    async def _state_before(self, name: str, stream_seq: int) -> ContextProjection:
        """A fresh projection of the context at or before event ``stream_seq`` of its stream,
        from the latest cache that is: its own checkpoint (often close behind: an item born
        since the checkpoint replays only what came after it), else an archive."""
        cached = await self._context_streams.before(name, stream_seq)
        return cached if cached is not None else await self._fresh(name)

    async def _archive(self, name: str, projection: ContextProjection, mark: int) -> None:
        """Save the projection as the archive for ``mark`` (its stream_seq is ``mark`` or, after
        a batch of commands, a little past it)."""
        await self._context_streams.archive(name, projection, mark)
