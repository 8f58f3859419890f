"""A workspace whose last event does not verify (checked when the store opens) takes no writes:
appending would extend a broken chain. Reads still work, so that the damage can be seen."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from engine.store import NewEvent, StoreError

from .conftest import Backend, events

pytestmark = pytest.mark.filterwarnings("error")

COUNT = 6


def edit(statement: str, *parameters: object) -> Callable[[Backend], Awaitable[None]]:
    return lambda backend: backend.edit(statement, *parameters)


async def rows(backend: Backend) -> list[tuple[object, ...]]:
    return await backend.rows("SELECT * FROM events ORDER BY seq")


DAMAGE: dict[str, tuple[Callable[[Backend], Awaitable[None]], int, str]] = {
    # what is done to the log, the event named, and the problem
    "payload": (
        edit("UPDATE events SET payload = ? WHERE seq = ?", '{"n":99}', COUNT),
        COUNT,
        "hash_mismatch",
    ),
    "hash": (
        edit("UPDATE events SET hash = ? WHERE seq = ?", "f" * 64, COUNT),
        COUNT,
        "hash_mismatch",
    ),
    "link": (
        edit("UPDATE events SET prev_hash = ? WHERE seq = ?", "e" * 64, COUNT),
        COUNT,
        "prev_hash_mismatch",
    ),
    "hash-before": (  # the event before it changed its hash: the last one's link is broken
        edit("UPDATE events SET hash = ? WHERE seq = ?", "f" * 64, COUNT - 1),
        COUNT,
        "prev_hash_mismatch",
    ),
    "deleted-before": (
        edit("DELETE FROM events WHERE seq = ?", COUNT - 1),
        COUNT,
        "seq_gap",
    ),
    "place-in-stream": (
        edit("UPDATE events SET stream_seq = 9 WHERE seq = ?", COUNT),
        COUNT,
        "hash_mismatch",
    ),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
async def test_a_write_to_a_workspace_whose_tail_does_not_verify_is_refused(
    backend: Backend, damage: str
) -> None:
    async with await backend.open(create=True) as store:
        await store.append(events("ctx:a", COUNT))
    change, seq, problem = DAMAGE[damage]
    await change(backend)
    before = await rows(backend)

    async with await backend.open() as store:
        writes = {
            "append": lambda: store.append(events("ctx:a", 1)),
            "execute": lambda: store.execute(lambda _seen: [NewEvent("ctx:a", "noted")]),
            "save_checkpoint": lambda: store.save_checkpoint("tree", 1, b"state"),
        }
        for write in writes.values():
            with pytest.raises(StoreError) as refused:
                await write()
            assert refused.value.code == "BROKEN_TAIL"
            assert refused.value.details == {"seq": seq, "problem": problem}
            assert str(refused.value).startswith(
                f"BROKEN_TAIL: event {seq}, the log's last, does not verify ({problem}: "
            )
            assert str(store.path) in str(refused.value)  # type: ignore[attr-defined]
        # Reads still work, and verify names what is wrong.
        assert len(await store.read()) == len(before)
        result = await store.verify()
        assert not result.ok
    assert await rows(backend) == before  # nothing was written


async def test_only_the_tail_is_checked_at_open(backend: Backend) -> None:
    # A broken event before the last two is verify's to find: the check at open costs the
    # same however long the log is.
    async with await backend.open(create=True) as store:
        await store.append(events("ctx:a", COUNT))
    await backend.edit("UPDATE events SET payload = ? WHERE seq = 2", '{"n":99}')
    async with await backend.open() as store:
        await store.append(events("ctx:a", 1))
        assert (await store.verify()).broken_seq == 2


async def test_a_log_of_one_event_and_an_empty_log_are_checked_too(backend: Backend) -> None:
    async with await backend.open(create=True) as store:
        assert await store.head() == 0
        await store.append(events("ctx:a", 1))
    await backend.edit("UPDATE events SET payload = ? WHERE seq = 1", '{"n":99}')
    async with await backend.open() as store:
        with pytest.raises(StoreError) as refused:
            await store.append(events("ctx:a", 1))
        assert refused.value.details == {"seq": 1, "problem": "hash_mismatch"}
