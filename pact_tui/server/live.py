"""The server's one reader of the workspace's change feed, and the due-work timer.

``Live.follow`` iterates ``Workspace.changes()`` for the server's lifetime: that keeps every
loaded document's projection at the log's head, whichever process committed (the app, the CLI,
another server), and hands each document event to the streams subscribed to that document and
wakes the long polls waiting on it; it also keeps each document's latest ``WINDOW`` events,
from which a poll's page is served without reading the log. ``Live.fire_due`` ticks, once a
second, each document whose next timer is due, so objection windows end, locks expire, silent
agents are evicted and questions time out while nobody writes (``tick_document`` fires each
thing once, whichever process gets there first).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import defaultdict, deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from engine.documents import DOC_PREFIX
from engine.errors import CodedError
from engine.protocol.errors import ProtocolError
from engine.store import StoreError

if TYPE_CHECKING:
    from engine.workspace import Workspace

DUE_EVERY_S = 1.0  # how often the timer looks for due work
QUEUE_MAX = 10_000  # events a slow stream may fall behind by before it is ended
FEED_RETRIES = 5  # restarts of the change feed in a row, with no event between, before giving up
FEED_BACKOFF_S = 0.2  # the first wait before a restart; doubled after each failure in a row
# Each document's latest events kept for the polls, as the feed handed them on: the same
# payloads as the change feed's own window of recent events (engine/store/feed.py), so most of
# what this keeps is kept there anyway.
WINDOW = 10_000
TAIL_MAX = 200  # committed events the feed has not handed on yet that a poll reads itself


class FeedFailed(CodedError):
    """The change feed kept failing: the server can no longer keep its projections current."""

    code = "FEED_FAILED"


class Live:
    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._queues: dict[str, set[asyncio.Queue[dict[str, Any] | None]]] = defaultdict(set)
        self._changed: dict[str, asyncio.Event] = defaultdict(asyncio.Event)
        self.followed = asyncio.Event()  # set once the feed is being read
        self.delivered: int | None = None  # the last sequence handed on (None: none yet)
        self.restarts = 0  # times the feed was restarted after a failure
        # document name → its latest envelopes, a run of sequence numbers without holes
        self._windows: dict[str, deque[Mapping[str, Any]]] = {}
        self._filling: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

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

    async def page(
        self, name: str, since: int, count: int, head: int
    ) -> list[Mapping[str, Any]] | None:
        """Up to ``count`` envelopes of document ``name`` from sequence number ``since``, from
        the window the feed fills, if it holds them all up to ``head`` (the sequence number
        of the projection's next event: a command this process ran is in the projection before
        the feed delivers it); else None, and the page is read from the log. Events before the
        window are read into it from the log once, while it has room for them. The envelopes
        are shared: read them, never change them."""
        found = self._page(name, since, count, head)
        if found is None and await self._fill(name, since, head):
            found = self._page(name, since, count, head)
        return found

    def _page(self, name: str, since: int, count: int, head: int) -> list[Mapping[str, Any]] | None:
        window = self._windows.get(name)
        if not window:
            return None
        first = window[0]["sequenceNumber"]
        last = window[-1]["sequenceNumber"]
        if not first <= since <= last + 1 or last + 1 < min(head, since + count):
            return None
        return list(itertools.islice(window, since - first, since - first + count))

    async def _fill(self, name: str, since: int, head: int) -> bool:
        """Read into the window from the log what a page from ``since`` needs of it: the
        events before its first (if it has room for them; if it has none, up to ``head``), and
        the committed events up to ``head`` the feed has not handed on yet (this process's
        commands, which the projection holds at once); whether it read any."""
        async with self._filling[name]:  # one read of a document's events at a time
            window = self._windows.setdefault(name, deque(maxlen=WINDOW))
            first = window[0]["sequenceNumber"] if window else head
            read = False
            if 0 <= since < first and len(window) + first - since <= WINDOW:
                older = await self.workspace.document_events(name, since, first - since)
                # Meanwhile the feed may have handed on some of these (a window that was empty)
                # or started a new run: keep only what joins the window without a hole.
                if window:
                    first = window[0]["sequenceNumber"]
                    older = [e for e in older if e["sequenceNumber"] < first]
                    if not older or older[-1]["sequenceNumber"] + 1 != first:
                        older = []
                if older and len(window) + len(older) <= WINDOW:
                    window.extendleft(reversed(older))
                    read = True
            if window and window[0]["sequenceNumber"] <= since:
                after = window[-1]["sequenceNumber"] + 1
                if after < head <= after + TAIL_MAX:
                    for event in await self.workspace.document_events(name, after, head - after):
                        self._keep(name, event)
                    read = True
            return read

    def _keep(self, name: str, envelope: Mapping[str, Any]) -> None:
        window = self._windows.get(name)
        if window is None:
            window = self._windows[name] = deque(maxlen=WINDOW)
        elif window:
            last = window[-1]["sequenceNumber"]
            if envelope["sequenceNumber"] <= last:
                return  # read from the log into the window before the feed handed it on
            if envelope["sequenceNumber"] != last + 1:
                window.clear()  # not the next one (never, from one feed): start a new run
        window.append(envelope)

    async def follow(self) -> None:
        """Read the change feed for the server's lifetime. If it fails, it is read again from
        the last sequence delivered (nothing missed, nothing twice), after a backoff; after
        ``FEED_RETRIES`` failures in a row with nothing delivered between, ``FeedFailed``."""
        self.delivered = self.workspace.head
        failures = 0
        while True:
            before = self.delivered
            try:
                await self._follow_from(self.delivered)
                return
            except Exception as error:  # any failure of the feed: restart it, or give up
                failures = 1 if self.delivered != before else failures + 1
                if failures > FEED_RETRIES:
                    raise FeedFailed(
                        f"the workspace's change feed failed {failures} times in a row after "
                        f"event {self.delivered} ({type(error).__name__}: {error}); "
                        "the server stopped rather than serve stale documents",
                        path=str(self.workspace.path),
                    ) from error
                self.restarts += 1
                await asyncio.sleep(FEED_BACKOFF_S * 2 ** (failures - 1))

    async def _follow_from(self, after: int | None) -> None:
        changes = self.workspace.changes(after)
        self.followed.set()
        async for change in changes:
            for stored in change.events:
                self.delivered = stored.seq
                if not stored.stream.startswith(DOC_PREFIX):
                    continue
                name = stored.stream[len(DOC_PREFIX) :]
                self._keep(name, stored.payload)
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
