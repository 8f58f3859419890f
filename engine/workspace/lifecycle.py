"""Opening and closing the workspace, and saving its checkpoints."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Self

from engine.heap import collector_paused
from engine.protocol_time import CLOCK_STREAM
from engine.store.opening import open_store, where_shown
from engine.workspace import cadence
from engine.workspace.contexts import ContextCommands
from engine.workspace.documents import DocumentsAndFrameworks
from engine.workspace.keys import LEGACY_CHECKPOINT
from engine.workspace.projection import context_name

if TYPE_CHECKING:
    from engine.protocol.envelope import Ids


class Lifecycle(ContextCommands, DocumentsAndFrameworks):
    """Open, start, checkpoint, close."""

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
    ) -> Self:
        """Open (or with ``create``, make) the workspace at ``path``: a file, or a
        ``postgresql://`` URL (:func:`engine.store.opening.open_store`).

        A bad file raises a ``StoreError`` and is left untouched. ``watch=False`` follows this
        process's own commands only (no file watcher). ``lazy`` loads no context now: each is
        loaded when an async method names it, or by ``load``; without it every context is
        loaded, now and as other processes create them. ``read_only`` writes nothing to the
        file, checkpoints included (a long tail is replayed at every open): commands raise
        ``ReadOnlyWorkspace``.
        """
        store = await open_store(path, create=create, read_only=read_only, clock=clock, watch=watch)
        workspace = cls(store, where_shown(path), clock, lazy=lazy, ids=ids)
        try:
            await workspace._start()
        except BaseException:
            await store.close()
            raise
        return workspace

    async def _start(self) -> None:
        """Read the index, learn where every stream ends now, and load what is to be loaded."""
        with collector_paused(freeze=True):
            seq, restored = await self._read_index()
            later = await self.store.stream_heads(seq)
            for event in await self.store.read_stream(CLOCK_STREAM):
                self._time.apply(event)
            self._applied = max([seq, *(head.seq for head in later.values())])
            for stream, head in later.items():
                name = context_name(stream)
                if name is not None:
                    self._note(name, head.seq, head.stream_seq)
            for name, projection in sorted(restored.items()):
                await self._load_one(name, projection)
            if not self._lazy:
                await self.load(*sorted(self._heads))
        # Nothing was applied since the streams' ends were read: the feed resumes from there.
        self.store.cursor = max(self.store.cursor, self._applied)

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
            await self._save_caches(self._save_checkpoints(cadence.CHECKPOINT_ON_CLOSE))
        finally:
            self._closed = True
            await self.store.close()

    async def __aenter__(self) -> Self:
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
            behind = projection.stream_seq - projection.checkpointed >= tail
            if behind or projection.stories_unsaved or projection.unpacked:
                await self._save_context(name, projection)
        for name, document in sorted(self._documents.items()):
            if document.stream_seq - document.checkpointed >= tail:
                await self._save_document(name, document)
        await self._save_index()
        if self._legacy:
            await self.store.delete_checkpoint(LEGACY_CHECKPOINT)
            self._legacy = False
