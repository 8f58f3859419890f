"""The server's one reader of the workspace's change feed, and the due-work timer.

``Live.follow`` iterates ``Workspace.changes()`` for the server's lifetime: that keeps every
loaded document's projection at the log's head, whichever process committed (the app, the CLI,
another server), and hands each document event to the streams subscribed to that document and
wakes the long polls waiting on it. ``Live.fire_due`` ticks, once a second, each document whose
next timer is due, so objection windows end, locks expire, silent agents are evicted and
questions time out while nobody writes (``tick_document`` fires each thing once, whichever
process gets there first).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from engine.documents import DOC_PREFIX
from engine.protocol.errors import ProtocolError
from engine.store import StoreError

if TYPE_CHECKING:
    from engine.workspace import Workspace

DUE_EVERY_S = 1.0  # how often the timer looks for due work
QUEUE_MAX = 10_000  # events a slow stream may fall behind by before it is ended


class Live:
    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._queues: dict[str, set[asyncio.Queue[dict[str, Any] | None]]] = defaultdict(set)
        self._changed: dict[str, asyncio.Event] = defaultdict(asyncio.Event)
        self.followed = asyncio.Event()  # set once the feed is being read

    def subscribe(self, name: str) -> asyncio.Queue[dict[str, Any] | None]:
        """A queue of document ``name``'s events (envelopes) as they are committed; None in it
        means the stream fell too far behind and must end (the client resumes from its last
        id)."""
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._queues[name].add(queue)
        return queue

    def unsubscribe(self, name: str, queue: asyncio.Queue[dict[str, Any] | None]) -> None:
        self._queues[name].discard(queue)

    async def wait(self, name: str, seconds: float) -> None:
        """Until document ``name`` changes, or ``seconds`` pass."""
        event = self._changed[name]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), seconds)

    async def follow(self) -> None:
        changes = self.workspace.changes()
        self.followed.set()
        async for change in changes:
            for stored in change.events:
                if not stored.stream.startswith(DOC_PREFIX):
                    continue
                name = stored.stream[len(DOC_PREFIX) :]
                for queue in list(self._queues.get(name, ())):
                    if queue.qsize() >= QUEUE_MAX:
                        self._queues[name].discard(queue)
                        queue.put_nowait(None)
                    else:
                        queue.put_nowait(dict(stored.payload))
            for name in change.documents:
                event = self._changed.pop(name, None)
                if event is not None:
                    event.set()

    async def fire_due(self) -> None:
        """Tick each document whose next timer is due, once a second, for ever."""
        workspace = self.workspace
        while True:
            await asyncio.sleep(DUE_EVERY_S)
            with contextlib.suppress(StoreError, ProtocolError):
                for name in await workspace.document_names():
                    doc = (await workspace.load_document(name)).doc
                    due = doc.next_due_ms()
                    if due is not None and due <= workspace.now_ns() // 1_000_000:
                        await workspace.tick_document(name)
