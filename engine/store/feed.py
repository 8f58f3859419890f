"""The change feed: tells subscriptions about new events, whichever process appended them.

One :class:`ChangeFeed` per open store keeps ``known_head``, the last committed ``seq`` it knows
of, and a window of recent events so that several subscriptions share one read. It learns about
new events two ways:

* this process's own commits are published by the store right after COMMIT, so they reach local
  subscribers without a round trip through the file system;
* other processes' commits are noticed by watching the database directory with watchfiles. A
  change to the database or its write-ahead log triggers ``PRAGMA data_version`` (a cheap
  counter SQLite bumps when another connection commits); only when it moved are the new rows
  read. The table is never polled in a loop.

A subscription is only a cursor: it pulls the events after its position from the window, or from
the store when it has fallen behind the window. That makes delivery in order and exactly once
hold by construction, however notifications and reads interleave.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

from engine.store.base import StoredEvent, Subscription
from engine.store.errors import ChangeFeedFailed, StoreClosed

ReadAfter = Callable[[int, int], Awaitable[list[StoredEvent]]]
"""``(after_seq, limit)`` → the committed events after ``after_seq``, at most ``limit``."""

DataVersion = Callable[[], Awaitable[int]]

Watch = Callable[[Callable[[], Awaitable[None]], asyncio.Event], Awaitable[None]]
"""``(check, stop)``: runs until ``stop`` is set, awaiting ``check()`` whenever another process
may have committed (another store's way of hearing of commits: PostgreSQL's LISTEN)."""

# How many recent events the feed keeps for subscriptions to share; a subscription further
# behind reads from the store instead.
RECENT_WINDOW = 10_000
# watchfiles groups changes: after the first one it waits until the files are quiet for
# WATCH_STEP_MS, but never longer than WATCH_DEBOUNCE_MS, before reporting. These bound the
# delivery latency across processes (target: p95 under 100 ms).
WATCH_STEP_MS = 10
WATCH_DEBOUNCE_MS = 40
# With no file events at all, look at data_version this often anyway: it covers a commit that
# lands while the watcher is still being set up, and file systems without change notifications.
SAFETY_CHECK_MS = 1_000


class ChangeFeed:
    def __init__(
        self,
        *,
        head: int,
        read_after: ReadAfter,
        data_version: DataVersion | None,
        database_file: Path | None,
        watch: Watch | None = None,
    ) -> None:
        """``database_file`` is None to follow this process's own commits only; ``watch``, if
        given, hears of other processes' commits instead of a file watcher (then every check
        reads, with no ``data_version`` to ask first)."""
        self.known_head = head
        self.failure: BaseException | None = None
        self._recent: deque[StoredEvent] = deque(maxlen=RECENT_WINDOW)
        self._read_after = read_after
        self._data_version = data_version
        self._last_data_version: int | None = None
        self._database_file = database_file
        self._watch = watch
        self._subscriptions: set[FeedSubscription] = set()
        self._watcher: asyncio.Task[None] | None = None
        self._stop_watching = asyncio.Event()
        self._closed = False

    def subscribe(self, after_seq: int) -> FeedSubscription:
        if self._closed:
            raise StoreClosed("the store is closed")
        subscription = FeedSubscription(self, after_seq)
        self._subscriptions.add(subscription)
        if self._watcher is None:
            watching: Coroutine[Any, Any, None] | None = None
            if self._watch is not None:
                watching = self._watched(self._watch)
            elif self._database_file is not None:
                watching = self._watch_other_processes(self._database_file)
            if watching is not None:
                self._watcher = asyncio.get_running_loop().create_task(
                    watching, name="event-store-feed"
                )
        return subscription

    def publish(self, events: Sequence[StoredEvent]) -> None:
        """Record newly committed events: a run of consecutive ``seq``, as read or appended."""
        if not events or events[-1].seq <= self.known_head:
            return
        if self._recent and events[0].seq <= self._recent[-1].seq + 1:
            last_kept = self._recent[-1].seq
            self._recent.extend(event for event in events if event.seq > last_kept)
        else:
            # Not adjacent to the window (events in between were never read here): start a new
            # window, so it stays a run without holes. Subscriptions fill the hole from the store.
            self._recent.clear()
            self._recent.extend(events)
        self.known_head = events[-1].seq
        self._wake_all()

    async def events_after(self, seq: int) -> list[StoredEvent]:
        recent = self._recent
        if recent and recent[0].seq <= seq + 1 <= recent[-1].seq:
            return list(itertools.islice(recent, seq + 1 - recent[0].seq, None))
        return await self._read_after(seq, RECENT_WINDOW)

    def unsubscribe(self, subscription: FeedSubscription) -> None:
        self._subscriptions.discard(subscription)

    async def close(self) -> None:
        self._closed = True
        for subscription in list(self._subscriptions):
            subscription.end()
        self._subscriptions.clear()
        if self._watcher is not None:
            # awatch checks this event between steps and returns: no cancellation needed, so no
            # thread is left behind blocked in the watcher.
            self._stop_watching.set()
            await self._watcher
            self._watcher = None

    async def _watch_other_processes(self, database_file: Path) -> None:
        # Imported here: only a process that subscribes pays for loading the watcher.
        from watchfiles import awatch

        watched_names = {database_file.name, database_file.name + "-wal"}

        def is_database_file(_change: Any, path: str) -> bool:
            return os.path.basename(path) in watched_names

        try:
            await self._check_for_new_events()
            async for _changes in awatch(
                database_file.parent,
                watch_filter=is_database_file,
                debounce=WATCH_DEBOUNCE_MS,
                step=WATCH_STEP_MS,
                rust_timeout=SAFETY_CHECK_MS,
                yield_on_timeout=True,
                stop_event=self._stop_watching,
                recursive=False,
            ):
                await self._check_for_new_events()
        except Exception as error:  # the feed cannot go on: tell every subscription
            self.failure = error
            self._wake_all()

    async def _watched(self, watch: Watch) -> None:
        try:
            await watch(self._check_for_new_events, self._stop_watching)
        except Exception as error:  # the feed cannot go on: tell every subscription
            self.failure = error
            self._wake_all()

    async def _check_for_new_events(self) -> None:
        if self._data_version is not None:
            version = await self._data_version()
            if version == self._last_data_version:
                return
            self._last_data_version = version
        while True:
            events = await self._read_after(self.known_head, RECENT_WINDOW)
            self.publish(events)
            if len(events) < RECENT_WINDOW:
                return

    def _wake_all(self) -> None:
        for subscription in self._subscriptions:
            subscription.wake()


class FeedSubscription(Subscription):
    def __init__(self, feed: ChangeFeed, after_seq: int) -> None:
        self._feed = feed
        self._position = after_seq
        self._pending: deque[StoredEvent] = deque()
        self._wakeup = asyncio.Event()
        self._ended = False

    @property
    def position(self) -> int:
        return self._position

    async def __anext__(self) -> StoredEvent:
        while True:
            if self._ended:
                raise StopAsyncIteration
            if self._pending:
                event = self._pending.popleft()
                self._position = event.seq
                return event
            if self._feed.failure is not None:
                raise ChangeFeedFailed(
                    f"the change feed stopped: {self._feed.failure}"
                ) from self._feed.failure
            if self._position < self._feed.known_head:
                try:
                    self._pending.extend(await self._feed.events_after(self._position))
                except Exception:
                    if self._ended:  # the store closed under the read
                        raise StopAsyncIteration from None
                    raise
                if self._pending:
                    continue
            self._wakeup.clear()
            await self._wakeup.wait()

    def wake(self) -> None:
        self._wakeup.set()

    def end(self) -> None:
        self._ended = True
        self._pending.clear()
        self._wakeup.set()

    async def close(self) -> None:
        self.end()
        self._feed.unsubscribe(self)
