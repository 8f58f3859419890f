"""A document's past (``document_at``) from its nearest cache, and protocol time stepped ahead
in a stepped workspace: durable, shared by every process, refused where time follows the
clock."""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.deep_verify import verify_deep
from engine.documents import DOC_CHECKPOINT, DOC_PREFIX
from engine.protocol.commands import Actor
from engine.protocol.document import Document
from engine.protocol.errors import InvalidRequest
from engine.protocol.persist import dump_document
from engine.protocol_time import CLOCK_STREAM, ClockNotStepped
from engine.store import InvalidCheckpoint, SqliteEventStore
from engine.workspace import DOC_ARCHIVE_PREFIX, Workspace, cadence
from engine.workspace.checkpoints import decode_checkpoint
from engine.workspace.repository import archives_pruned
from pact_tui.demo import create_memo

from .conftest import ManualClock


async def folds(path: Path, name: str) -> list[dict[str, Any]]:
    """The document after each of its events, folded from the stream's start."""
    async with await SqliteEventStore.open(path, watch=False, read_only=True) as store:
        events = await store.read_stream(DOC_PREFIX + name, 0)
    doc, states = Document(), []
    for event in events:
        doc.apply(event.payload)
        states.append(dump_document(doc))
    return states


async def archived_memo(
    path: Path, monkeypatch: pytest.MonkeyPatch, intervals: cadence.Intervals | None = None
) -> list[int]:
    """The demo memo, its state archived every few events (``intervals``: the documents'
    cadence, by default every archive kept as written); returns where the archives are."""
    chosen = intervals or cadence.Intervals(7, None)
    monkeypatch.setitem(cadence.INTERVALS, "document", chosen)
    async with await Workspace.open(path, create=True, watch=False, clock=ManualClock()) as ws:
        await create_memo(ws)
    async with await SqliteEventStore.open(path, watch=False, read_only=True) as store:
        names = await store.checkpoints()
    prefix = DOC_ARCHIVE_PREFIX + "memo:"
    return sorted(int(name[len(prefix) :]) for name in names if name.startswith(prefix))


async def test_the_past_starts_from_the_nearest_archive_and_equals_the_fold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ws.pact"
    archives = await archived_memo(path, monkeypatch)
    assert len(archives) >= 2
    expected = await folds(path, "memo")
    async with await Workspace.open(path, watch=False) as ws:
        reads: list[int] = []
        read_stream = ws.store.read_stream

        async def spied(stream: str, after: int = 0, limit: int | None = None) -> Any:
            if stream == DOC_PREFIX + "memo" and limit != 1:  # not an anchor check
                reads.append(after)
            return await read_stream(stream, after, limit)

        monkeypatch.setattr(ws.store, "read_stream", spied)
        for n in range(1, len(expected) + 1):
            reads.clear()
            past = await ws.document_at("memo", n)
            assert dump_document(past) == expected[n - 1], f"event {n}"
            nearest = max((a for a in archives if a <= n), default=0)
            # folded from the nearest archive: nothing before it is read again
            assert all(after >= nearest for after in reads), (n, reads)
            if n == nearest:
                assert reads in ([], [n]), (n, reads)


async def test_a_checkpoint_past_the_event_asked_for_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The past before the checkpoint starts from an archive without loading the checkpoint
    (at 200k events, decoding it for nothing was half of ``document_at``'s time); at or after
    the checkpoint's place the checkpoint is read."""
    path = tmp_path / "ws.pact"
    archives = await archived_memo(path, monkeypatch)
    expected = await folds(path, "memo")
    async with await Workspace.open(path, watch=False) as ws:
        loaded: list[str] = []
        load_checkpoint = ws.store.load_checkpoint

        async def spied(name: str) -> Any:
            loaded.append(name)
            return await load_checkpoint(name)

        monkeypatch.setattr(ws.store, "load_checkpoint", spied)
        own = DOC_CHECKPOINT + "memo"
        saved_at = archives[-1]  # the checkpoint was last saved (and archived) there
        last = len(expected)
        for n in (archives[0], archives[-2], saved_at - 1, saved_at, last):
            loaded.clear()
            past = await ws.document_at("memo", n)
            assert dump_document(past) == expected[n - 1], f"event {n}"
            assert (own in loaded) == (n >= saved_at), (n, loaded)


async def test_an_archive_that_cannot_be_used_is_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ws.pact"
    archives = await archived_memo(path, monkeypatch)
    expected = await folds(path, "memo")
    last = archives[-2]  # the checkpoint is at the last one
    async with await SqliteEventStore.open(path, watch=False) as store:
        name = f"{DOC_ARCHIVE_PREFIX}memo:{last}"
        saved = await store.load_checkpoint(name)
        assert saved is not None
        await store.save_checkpoint(name, saved.seq, b"not json")
    async with await Workspace.open(path, watch=False) as ws:
        past = await ws.document_at("memo", last)
        assert dump_document(past) == expected[last - 1]
        assert ws.checkpoint_problem is not None and f"memo:{last}" in ws.checkpoint_problem


async def test_deep_verify_judges_a_documents_archives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ws.pact"
    archives = await archived_memo(path, monkeypatch)
    async with await SqliteEventStore.open(path, watch=False, read_only=True) as store:
        result = await verify_deep(store)
    verdicts = {f.name: f.verdict for f in result.checkpoints}
    for at in archives:
        assert verdicts[f"{DOC_ARCHIVE_PREFIX}memo:{at}"] == "matches"


async def cache_sizes(path: Path, name: str) -> tuple[int, dict[int, int]]:
    """The bytes of document ``name``'s checkpoint, and of each of its archives by place."""
    async with await SqliteEventStore.open(path, watch=False, read_only=True) as store:
        sizes = await store.checkpoint_sizes()
    prefix = DOC_ARCHIVE_PREFIX + name + ":"
    archives = {int(k[len(prefix) :]): v for k, v in sizes.items() if k.startswith(prefix)}
    return sizes[DOC_CHECKPOINT + name], archives


@given(
    st.dictionaries(st.integers(1, 10**6), st.integers(0, 10**4), min_size=1),
    st.integers(0, 10**4),
    st.sampled_from([2, 3, 10]),
)
def test_the_archives_kept_are_the_latest_of_each_span_within_the_budget(
    archives: dict[int, int], checkpoint: int, growth: int
) -> None:
    newest = max(archives)
    pruned = archives_pruned(archives, newest, 2 * checkpoint, growth)
    kept = sorted(set(archives) - set(pruned))
    assert pruned == sorted(pruned) and set(pruned) <= set(archives)
    assert newest in kept
    assert kept == [newest] or sum(archives[p] for p in kept) <= 2 * checkpoint

    def span(place: int) -> int:
        k = 0
        while place >= growth ** (k + 1):
            k += 1
        return k

    latest = {span(p): p for p in sorted(archives)}
    # the latest of each span, and of those the newest ones: only the oldest go for bytes
    assert set(kept) <= set(latest.values()) | {newest}
    assert kept == sorted(latest.values())[len(latest) - len(kept) :]


async def test_a_documents_archives_take_at_most_twice_its_checkpoint_and_the_past_is_the_fold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ws.pact"
    archives = await archived_memo(path, monkeypatch)  # kept every one, as older workspaces did
    checkpoint, sizes = await cache_sizes(path, "memo")
    assert sum(sizes.values()) > 2 * checkpoint  # the workspace before thinning
    expected = await folds(path, "memo")
    thinned = cadence.Intervals(7, None, archive_budget=2.0)
    monkeypatch.setitem(cadence.INTERVALS, "document", thinned)
    async with await Workspace.open(path, watch=False, clock=ManualClock()) as ws:
        await ws.load_document("memo")
        for n in range(1, len(expected) + 1):  # the old workspace opens and reads as it did
            assert dump_document(await ws.document_at("memo", n)) == expected[n - 1]
        for _ in range(7):  # the next archive thins them
            await ws.run_document("memo", {"op": "heartbeat"}, Actor.agent("legal"))
    checkpoint, sizes = await cache_sizes(path, "memo")
    assert set(archives) - set(sizes)  # an old one forgotten
    assert len(sizes) >= 1 and sum(sizes.values()) <= 2 * checkpoint
    assert max(sizes) > archives[-1]
    expected = await folds(path, "memo")
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        for n in range(1, len(expected) + 1):
            assert dump_document(await ws.document_at("memo", n)) == expected[n - 1]
        assert ws.checkpoint_problem is None


async def memo(path: Path, clock: ManualClock) -> None:
    async with await Workspace.open(path, create=True, watch=False, clock=clock) as ws:
        await create_memo(ws)


async def test_stepping_is_refused_where_time_follows_the_clock(tmp_path: Path) -> None:
    path = tmp_path / "ws.pact"
    clock = ManualClock()
    await memo(path, clock)
    async with await Workspace.open(path, watch=False, clock=clock) as ws:
        head = ws.head
        with pytest.raises(ClockNotStepped, match="follows the wall clock"):
            await ws.step_time(300, human="ann")
        assert ws.head == head and ws.time_ahead_ms == 0 and ws.now_ns() == clock.now


async def test_a_bad_step_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "ws.pact"
    clock = ManualClock()
    await memo(path, clock)
    async with await Workspace.open(path, watch=False, clock=clock) as ws:
        assert await ws.make_stepped(human="ann")
        assert not await ws.make_stepped(human="ann")  # once is for good
        head = ws.head
        for bad in (0, -5, 86_401, "60", 1.5, True):
            with pytest.raises(InvalidRequest, match="whole seconds from 1 to 86400"):
                await ws.step_time(bad, human="ann")  # type: ignore[arg-type]
        assert ws.head == head and ws.time_ahead_ms == 0


async def test_a_step_is_durable_shared_and_fires_a_window_and_a_lock_expiry(
    tmp_path: Path,
) -> None:
    """One process steps; another, open all along, reads the new time in its next command
    (the due window and lock fire there); a third opened later starts from it."""
    path = tmp_path / "ws.pact"
    clock = ManualClock()
    await memo(path, clock)
    async with (
        await Workspace.open(path, watch=False, clock=clock) as custodian,
        await Workspace.open(path, watch=False, clock=clock) as other,
    ):
        doc = (await other.load_document("memo")).doc
        pending = next(p for p in doc.proposals.values() if p.status == "Pending")
        assert pending.merge_at_ms is not None and doc.by_id["sec:budget"].lock is not None
        assert pending.merge_at_ms > clock.now // 1_000_000  # not due at the wall clock
        await custodian.make_stepped(human="ann")
        assert await custodian.step_time(120, human="ann") == 120_000
        assert custodian.now_ns() == clock.now + 120 * 10**9
        assert other.time_ahead_ms == 0  # not heard of yet (no watcher)
        decision = await other.tick_document("memo")
        fired = {e["eventType"] for e in decision.events}
        assert {"pact.proposal.auto-merged", "pact.section.unlocked"} <= fired
        assert "pact.agent.evicted" not in fired  # the lock expired; its holder is still here
        assert other.time_ahead_ms == 120_000
        assert doc.proposals[pending.id].status == "Merged"
        assert doc.by_id["sec:budget"].lock is None
        # dated at protocol time, not at the wall clock
        assert all(e["epochMs"] == (clock.now // 1_000_000) + 120_000 for e in decision.events)
    async with await Workspace.open(path, watch=False, clock=clock) as later:
        assert later.time_stepped and later.time_ahead_ms == 120_000
    async with await SqliteEventStore.open(path, watch=False, read_only=True) as store:
        kinds = [e.type for e in await store.read_stream(CLOCK_STREAM, 0)]
    assert kinds == ["clock.stepped", "clock.advanced"]


async def test_stepping_through_the_past_gives_the_folds_states_and_reads_no_cache_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``document_stepped`` back from the end, forward again, jumps, and before the earliest
    event its rewind holds (which starts again from a cache): each the fold's state; a step
    back within the rewind reads nothing from the log."""
    path = tmp_path / "ws.pact"
    archives = await archived_memo(path, monkeypatch)
    expected = await folds(path, "memo")
    last = len(expected)
    async with await Workspace.open(path, watch=False) as ws:
        reads: list[int] = []
        read_stream = ws.store.read_stream

        async def spied(stream: str, after: int = 0, limit: int | None = None) -> Any:
            reads.append(after)
            return await read_stream(stream, after, limit)

        monkeypatch.setattr(ws.store, "read_stream", spied)
        doc = await ws.document_stepped("memo", last)
        assert dump_document(doc) == expected[last - 1]
        first = ws._rewinds["memo"].first
        reads.clear()
        for n in range(last - 1, first - 1, -1):
            assert dump_document(await ws.document_stepped("memo", n)) == expected[n - 1], n
        assert reads == []  # a step back is the rewind's alone
        targets = [last, 1, archives[-1] + 1, 2, last + 5, first]
        for n in targets:
            doc = await ws.document_stepped("memo", n)
            assert dump_document(doc) == expected[min(n, last) - 1], n
        with pytest.raises(ValueError, match="the first is 1"):
            await ws.document_stepped("memo", 0)


async def test_the_past_is_a_fold_where_the_rewind_does_not_reach_and_a_step_where_it_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``document_past``: with no rewind (entering the past, ``:N``) the fold's document, not
    the rewind's, and no rewind built; after ``document_stepped`` there, the points it holds
    are the rewind's steps; before its first, a fold again. Every one the fold's state."""
    path = tmp_path / "ws.pact"
    await archived_memo(path, monkeypatch)
    expected = await folds(path, "memo")
    last = len(expected)
    async with await Workspace.open(path, watch=False) as ws:
        doc, stepped = await ws.document_past("memo", last - 1)
        assert not stepped and "memo" not in ws._rewinds  # shown from a fold, nothing built
        assert dump_document(doc) == expected[last - 2]
        built = await ws.document_stepped("memo", last - 1)  # what the screen does next
        first = ws._rewinds["memo"].first
        assert first < last - 3
        for n in (last - 2, last - 3, first, last):
            doc, stepped = await ws.document_past("memo", n)
            assert stepped and doc is built, n  # the rewind's own document, stepped there
            assert dump_document(doc) == expected[n - 1], n
        assert first > 1  # the rewind starts at an archive
        doc, stepped = await ws.document_past("memo", first - 1)
        assert not stepped and doc is not built
        assert dump_document(doc) == expected[first - 2]


async def test_a_past_prepared_at_the_present_is_stepped_into_and_is_the_fold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``prepare_past`` builds the rewind at the document's present: entering the past after
    it is the rewind's step, reading no cache, and every state is the fold's."""
    path = tmp_path / "ws.pact"
    await archived_memo(path, monkeypatch)
    expected = await folds(path, "memo")
    last = len(expected)
    async with await Workspace.open(path, watch=False) as ws:
        await ws.load_document("memo")
        await ws.prepare_past("memo")
        rewind = ws._rewinds["memo"]
        assert rewind.first < last == rewind.last

        async def no_cache(name: str) -> Any:
            raise AssertionError(f"cache {name!r} read")

        monkeypatch.setattr(ws.store, "load_checkpoint", no_cache)
        for n in (last - 1, last - 2, rewind.first):
            doc, stepped = await ws.document_past("memo", n)
            assert stepped and doc is rewind.doc, n
            assert dump_document(doc) == expected[n - 1], n


@given(
    st.dictionaries(st.integers(1, 10**6), st.integers(0, 10**4), min_size=1),
    st.integers(0, 10**4),
)
def test_without_a_growth_the_newest_archives_are_kept_within_the_budget(
    archives: dict[int, int], checkpoint: int
) -> None:
    newest = max(archives)
    pruned = archives_pruned(archives, newest, 2 * checkpoint, None)
    kept = sorted(set(archives) - set(pruned))
    assert pruned == sorted(pruned) and set(pruned) <= set(archives)
    assert kept == sorted(archives)[len(archives) - len(kept) :]  # only the oldest go
    assert kept == [newest] or sum(archives[p] for p in kept) <= 2 * checkpoint
    if pruned:  # and only as many as the budget needs
        assert sum(archives[p] for p in [pruned[-1], *kept]) > 2 * checkpoint


async def test_a_documents_archives_are_kept_compressed_and_read_as_the_fold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Within a budget (the documents' cadence) an archive is stored compressed; each is read
    back as the fold's state, and ``verify --deep`` judges it; compressed bytes that do not
    decompress are a cache that cannot be used, passed over for the fold."""
    path = tmp_path / "ws.pact"
    budget = cadence.Intervals(7, None, archive_budget=1000.0, archive_growth=None)
    archives = await archived_memo(path, monkeypatch, budget)
    assert len(archives) >= 2
    expected = await folds(path, "memo")
    async with await SqliteEventStore.open(path, watch=False, read_only=True) as store:
        for at in archives:
            found = await store.load_checkpoint(f"{DOC_ARCHIVE_PREFIX}memo:{at}")
            assert found is not None and found.data[:1] == b"Z"
            assert zlib.decompress(found.data[1:])[:1] == b"{"
        verdicts = {f.name: f.verdict for f in (await verify_deep(store)).checkpoints}
    for at in archives:
        assert verdicts[f"{DOC_ARCHIVE_PREFIX}memo:{at}"] == "matches"
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        for n in range(1, len(expected) + 1):
            assert dump_document(await ws.document_at("memo", n)) == expected[n - 1]
        assert ws.checkpoint_problem is None
    with pytest.raises(InvalidCheckpoint, match="do not decompress"):
        decode_checkpoint(b"Z" + b"not zlib")
