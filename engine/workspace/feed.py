"""Taking events in: the change feed (others' commits and this process's own) and the write
transaction a command runs in."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from typing import Any

from engine.context import ContextError
from engine.documents import DOC_PREFIX
from engine.protocol_time import CLOCK_STREAM
from engine.store import NewEvent, StoredEvent
from engine.workspace.keys import CONTEXT_PREFIX
from engine.workspace.loading import ContextLoading
from engine.workspace.projection import ContextProjection, context_name, replay_document_event
from engine.workspace.types import Change, ForkOrigin


class ChangeFeed(ContextLoading):
    """Events in, applied to the loaded projections, and out to subscribers."""

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
        name = context_name(event.stream)
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
