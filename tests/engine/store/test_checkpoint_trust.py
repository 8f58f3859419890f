"""A checkpoint is a cache the log vouches for: it records the event it was taken at and that
event's hash, and the store hands it out only while the log holds that event with that hash."""

from __future__ import annotations

import pytest

from engine.store import EventStore, StoreError

from .conftest import Backend, events

pytestmark = pytest.mark.filterwarnings("error")


async def set_checkpoint_seq(backend: Backend, name: str, seq: int) -> None:
    """Change a checkpoint's recorded event behind the store's back (its bytes untouched)."""
    await backend.edit("UPDATE checkpoints SET seq = ? WHERE name = ?", seq, name)


async def delete_events_after(backend: Backend, seq: int) -> None:
    """The log loses its tail (as when the write-ahead log's last frames are lost)."""
    await backend.edit("DELETE FROM events WHERE seq > ?", seq)


async def refusal(store: EventStore, name: str) -> StoreError:
    with pytest.raises(StoreError) as refused:
        await store.load_checkpoint(name)
    assert refused.value.code == "CHECKPOINT_NOT_IN_LOG"
    assert refused.value.path == str(store.path)  # type: ignore[attr-defined]
    assert refused.value.details["name"] == name
    return refused.value


async def test_a_checkpoint_past_the_log_is_refused(store: EventStore, backend: Backend) -> None:
    await store.append(events("ctx:a", 4))
    await store.save_checkpoint("tree", 4, b"state at 4")
    await set_checkpoint_seq(backend, "tree", 9999)

    refused = await refusal(store, "tree")
    assert "checkpoint 'tree' is at event 9999, past the log's last event 4" in str(refused)
    assert refused.details == {"name": "tree", "seq": 9999, "head": 4}


async def test_a_checkpoint_whose_event_the_log_lost_and_replaced_is_refused(
    store: EventStore, backend: Backend
) -> None:
    await store.append(events("ctx:a", 10))
    await store.save_checkpoint("tree", 10, b"state at 10")
    await store.close()
    await delete_events_after(backend, 8)

    async with await backend.open() as reopened:
        assert "past the log's last event 8" in str(await refusal(reopened, "tree"))
        # The log grows again: events 9 and 10 exist, but they are other events.
        await reopened.append(events("ctx:a", 2, start=100))
        refused = await refusal(reopened, "tree")
        assert "was taken at event 10 when its hash was" in str(refused)
        assert "the log's event 10 has hash" in str(refused)


async def test_a_checkpoint_moved_back_is_refused(store: EventStore, backend: Backend) -> None:
    await store.append(events("ctx:a", 10))
    await store.save_checkpoint("tree", 10, b"state at 10")
    await set_checkpoint_seq(backend, "tree", 7)

    assert "was taken at event 7 when its hash was" in str(await refusal(store, "tree"))


async def test_a_save_replaces_a_checkpoint_the_log_does_not_vouch_for_even_at_a_lower_seq(
    store: EventStore, backend: Backend
) -> None:
    await store.append(events("ctx:a", 10))
    await store.save_checkpoint("tree", 9, b"state at 9")
    await set_checkpoint_seq(backend, "tree", 9999)

    await store.save_checkpoint("tree", 5, b"state at 5")
    assert await store.load_checkpoint("tree") == (5, b"state at 5")
    # A vouched-for checkpoint at a later event still wins over an earlier one.
    await store.save_checkpoint("tree", 3, b"state at 3")
    assert await store.load_checkpoint("tree") == (5, b"state at 5")


async def test_checkpoints_lists_every_checkpoint_with_its_seq(store: EventStore) -> None:
    await store.append(events("ctx:a", 3))
    assert await store.checkpoints() == {}
    await store.save_checkpoint("b", 3, b"")
    await store.save_checkpoint("a", 0, b"before any event")
    assert await store.checkpoints() == {"a": 0, "b": 3}
    assert await store.load_checkpoint("a") == (0, b"before any event")


async def test_a_checkpoint_that_recorded_no_hash_is_trusted_as_far_as_the_log_goes(
    store: EventStore, backend: Backend
) -> None:
    # Saved by a process of the previous release still running after the upgrade: its row has
    # no event hash. It is handed out while its event is in the log (the workspace then checks
    # its place in its stream), never past the log's end.
    await store.append(events("ctx:a", 4))
    await store.save_checkpoint("tree", 4, b"state at 4")
    await backend.edit("UPDATE checkpoints SET event_hash = NULL")
    assert await store.load_checkpoint("tree") == (4, b"state at 4")
    await set_checkpoint_seq(backend, "tree", 5)
    assert "past the log's last event 4" in str(await refusal(store, "tree"))
