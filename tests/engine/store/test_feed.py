"""The change feed within one process: cursors, order, exactly once, clean shutdown."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from engine.store import (
    ChangeFeedFailed,
    EventStore,
    StoreClosed,
    StoredEvent,
    Subscription,
)
from engine.store.feed import ChangeFeed

from .conftest import Backend, PostgresBackend, events

pytestmark = pytest.mark.filterwarnings("error")

# A failure guard only: every wait below ends as soon as the events arrive.
GUARD_S = 20


async def take(subscription: Subscription, count: int) -> list[StoredEvent]:
    taken: list[StoredEvent] = []
    async with asyncio.timeout(GUARD_S):
        async for event in subscription:
            taken.append(event)
            if len(taken) == count:
                break
    return taken


async def test_a_subscription_starts_after_its_cursor(store: EventStore) -> None:
    await store.append(events("ctx:a", 10))

    async with store.subscribe(after_seq=4) as subscription:
        assert [e.seq for e in await take(subscription, 6)] == [5, 6, 7, 8, 9, 10]
        assert subscription.position == 10
        await store.append(events("ctx:a", 2, start=10))
        assert [e.seq for e in await take(subscription, 2)] == [11, 12]


async def test_own_appends_arrive_in_order_exactly_once(backend: Backend) -> None:
    # No file watcher at all: this process's own commits are delivered directly.
    async with await backend.open(create=True, watch=False) as store:
        early = store.subscribe(after_seq=0)
        await store.append(events("ctx:a", 3))
        late = store.subscribe(after_seq=2)
        await asyncio.gather(*(store.append(events(f"ctx:{n}", 2)) for n in range(5)))

        assert [e.seq for e in await take(early, 13)] == list(range(1, 14))
        assert [e.seq for e in await take(late, 11)] == list(range(3, 14))
        await early.close()
        await late.close()


async def test_a_subscriber_far_behind_reads_its_way_back(store: EventStore) -> None:
    # More events than the feed's shared window: the subscription pages through the store.
    for start in range(0, 12_000, 4_000):
        await store.append(events("ctx:bulk", 4_000, start=start))

    async with store.subscribe(after_seq=0) as subscription:
        received = await take(subscription, 12_000)
    assert [e.seq for e in received] == list(range(1, 12_001))


async def test_another_connection_s_commits_arrive_through_the_watcher(backend: Backend) -> None:
    async with (
        await backend.open(create=True) as follower,
        await backend.open(watch=False) as other_writer,
    ):
        subscription = follower.subscribe(after_seq=0)
        for round_ in range(5):
            await other_writer.append(events("ctx:other", 3, start=3 * round_))
            received = await take(subscription, 3)
            assert [e.seq for e in received] == [3 * round_ + 1, 3 * round_ + 2, 3 * round_ + 3]
        assert [e.seq for e in await follower.read()] == list(range(1, 16))


async def test_closing_the_store_ends_subscriptions_and_leaves_no_tasks(backend: Backend) -> None:
    tasks_before = asyncio.all_tasks()
    store = await backend.open(create=True)
    subscription = store.subscribe(after_seq=0)
    await store.append(events("ctx:a", 1))
    assert [e.seq for e in await take(subscription, 1)] == [1]

    waiting = asyncio.create_task(take(subscription, 1))
    await asyncio.sleep(0)  # lets it reach the wait; it ends either way
    await store.close()

    assert await waiting == []  # iteration ended with the store
    assert asyncio.all_tasks() == tasks_before
    with pytest.raises(StoreClosed):
        store.subscribe(0)


async def test_a_closed_subscription_stops_and_others_continue(store: EventStore) -> None:
    first = store.subscribe(0)
    second = store.subscribe(0)
    await store.append(events("ctx:a", 2))
    await first.close()

    assert [e async for e in first] == []
    assert [e.seq for e in await take(second, 2)] == [1, 2]
    await second.close()


async def test_events_the_feed_never_saw_are_read_from_the_store_in_order(
    backend: Backend,
) -> None:
    async with (
        await backend.open(create=True, watch=False) as follower,
        await backend.open(watch=False) as other,
    ):
        subscription = follower.subscribe(after_seq=0)
        await other.append(events("ctx:other", 3))  # unseen here: no watcher
        await follower.append(events("ctx:mine", 1))  # published at once, after a gap

        assert [e.seq for e in await take(subscription, 4)] == [1, 2, 3, 4]
        await subscription.close()


async def test_a_failing_feed_fails_its_subscriptions_instead_of_hanging(tmp_path: Path) -> None:
    database = tmp_path / "gone.pact"
    database.touch()

    async def data_version() -> int:
        return 1

    async def read_after(after_seq: int, limit: int) -> list[StoredEvent]:
        raise OSError("disk I/O error")

    feed = ChangeFeed(
        head=0, read_after=read_after, data_version=data_version, database_file=database
    )
    subscription = feed.subscribe(after_seq=0)
    with pytest.raises(ChangeFeedFailed) as failed:
        async with asyncio.timeout(GUARD_S):
            await anext(subscription)
    assert failed.value.code == "CHANGE_FEED_FAILED"
    assert isinstance(failed.value.__cause__, OSError)
    await feed.close()


async def test_a_listener_whose_connection_is_lost_reads_what_it_missed(
    postgres_url: str,
) -> None:
    # PostgreSQL's feed listens on a connection of its own. The server ends it (as a restart
    # or a network cut would); commits made while it is away arrive after it reconnects.
    backend = PostgresBackend(postgres_url)
    async with (
        await backend.open(create=True) as follower,
        await backend.open(watch=False) as other,
    ):
        subscription = follower.subscribe(after_seq=0)
        await other.append(events("ctx:other", 2))
        assert [e.seq for e in await take(subscription, 2)] == [1, 2]
        [(ended,)] = await backend.rows(
            "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE application_name = 'pact-tui feed'"
        )
        assert ended == 1
        await other.append(events("ctx:other", 3, start=2))
        assert [e.seq for e in await take(subscription, 3)] == [3, 4, 5]
        await subscription.close()
