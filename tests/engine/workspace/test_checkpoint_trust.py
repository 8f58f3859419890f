"""The checkpoint is a cache the chain vouches for: one whose event is past the log's end, or
is no longer the log's event at that place, is ignored (the log is replayed, and
``checkpoint_problem`` says why); one the log vouches for whose state is not the log's is
replayed past too. Every kind: a context's, the index, an archive, the version-2 one."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from engine.store import NewEvent, SqliteEventStore, StoreError
from engine.workspace import (
    CONTEXT_CHECKPOINT,
    INDEX_CHECKPOINT,
    LEGACY_CHECKPOINT,
    Workspace,
    decode_checkpoint,
    encode_checkpoint,
)

from .conftest import EVERY_OPERATION, ManualClock, replay_from_scratch, small_checkpoints

FIXTURES = Path(__file__).resolve().parent / "fixtures"

pytestmark = pytest.mark.filterwarnings("error")


def sql(path: Path, statement: str, *parameters: object) -> list[tuple[object, ...]]:
    """One statement on the file, behind the workspace's back."""
    with closing(sqlite3.connect(path)) as connection:
        rows = connection.execute(statement, parameters).fetchall()
        connection.commit()
    return rows


def message(text: str) -> dict[str, str]:
    return {"op": "message", "role": "user", "text": text}


async def expected_contexts(path: Path) -> dict[str, str]:
    """Every context's export as the log's events build it, no checkpoint used."""
    return {n: p.context.model_dump_json() for n, p in (await replay_from_scratch(path)).items()}


async def test_a_version_2_checkpoint_set_past_the_log_hides_no_write(tmp_path: Path) -> None:
    # The case: the checkpoint's sequence set to 9999 made four acknowledged writes
    # of another process invisible to the one that had read it.
    path = tmp_path / "old.pact"
    shutil.copy(FIXTURES / "v2-checkpoint.pact", path)
    sql(path, "UPDATE checkpoints SET seq = 9999 WHERE name = ?", LEGACY_CHECKPOINT)

    async with await Workspace.open(path, watch=False) as reader:
        problem = reader.checkpoint_problem
        assert problem is not None and "is at event 9999, past the log's last event 29" in problem
        assert reader.head == 29
        async with await Workspace.open(path, watch=False, lazy=True) as writer:
            for number in range(4):
                await writer.run("agent", message(f"acknowledged {number}"))
            written = writer.context("agent").model_dump_json()
        await reader.run("helper", message("after them"))  # catches up with the log
        assert reader.context("agent").model_dump_json() == written
    assert (await expected_contexts(path))["agent"] == written


@pytest.mark.parametrize("kind", ["context", "index", "archive"])
async def test_each_kind_of_checkpoint_set_past_the_log_is_ignored_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    small_checkpoints(monkeypatch, every=5, archive_every=4, on_close=1)
    path = tmp_path / "w.pact"
    async with await Workspace.open(path, create=True, clock=ManualClock(), watch=False) as ws:
        await ws.create_context("agent")
        for command in EVERY_OPERATION:
            await ws.run("agent", command)
        first_snapshot = ws.snapshots("agent")[0]
    archives = [n for (n,) in sql(path, "SELECT name FROM checkpoints WHERE name LIKE 'archive:%'")]
    assert len(archives) >= 2
    damaged = {
        "context": [CONTEXT_CHECKPOINT + "agent"],
        "index": [INDEX_CHECKPOINT],
        "archive": archives,
    }[kind]
    for name in damaged:
        sql(path, "UPDATE checkpoints SET seq = 9999 WHERE name = ?", name)
    monkeypatch.setattr("engine.workspace.cadence.CHECKPOINT_ON_CLOSE", 10**9)  # leave it damaged
    expected = await expected_contexts(path)
    from_scratch = await replay_from_scratch(path)
    past = from_scratch["agent"]

    async with await Workspace.open(path, watch=False, lazy=True) as ws:
        assert (await ws.view("agent")).model_dump_json() == expected["agent"]
        # A past snapshot, rebuilt from the nearest archive or the stream's start.
        view = await ws.at_snapshot("agent", first_snapshot.id)
        await ws.item_story("agent", view.nodes()[-1].id, at=first_snapshot.id)
        problem = ws.checkpoint_problem
        assert problem is not None and "is at event 9999, past the log's last event" in problem
        assert any(repr(name) in problem for name in damaged)
    assert past.context.history.at_snapshot(first_snapshot.id).model_dump_json() == (
        view.model_dump_json()
    )


async def test_a_checkpoint_of_a_lost_tail_hides_no_write_once_the_log_grows_again(
    tmp_path: Path,
) -> None:
    # The case: a truncated tail hid two of four writes made after it.
    path = tmp_path / "w.pact"
    async with await Workspace.open(path, create=True, clock=ManualClock(), watch=False) as ws:
        await ws.create_context("agent")
        await ws.run_many("agent", EVERY_OPERATION[:8])
        await ws.checkpoint()  # the context's checkpoint at the log's last event
        head = ws.head
    sql(path, "DELETE FROM events WHERE seq > ?", head - 2)

    async with await Workspace.open(path, watch=False, lazy=True) as ws:
        for number in range(4):
            await ws.run("agent", message(f"acknowledged {number}"))
        written = ws.context("agent").model_dump_json()
    assert (await expected_contexts(path))["agent"] == written
    for lazy in (True, False):
        async with await Workspace.open(path, watch=False, lazy=lazy) as reopened:
            assert (await reopened.view("agent")).model_dump_json() == written
            problem = reopened.checkpoint_problem
            assert problem is not None and f"was taken at event {head} when its hash" in problem


async def two_contexts_checkpointed(path: Path) -> None:
    """Contexts ``agent`` and ``helper``, checkpointed, then a tail."""
    async with await Workspace.open(path, create=True, clock=ManualClock(), watch=False) as ws:
        for name in ("agent", "helper"):
            await ws.create_context(name)
            await ws.run_many(name, EVERY_OPERATION[:8])
        await ws.checkpoint()
        await ws.run("agent", message("after it"))


def moved_back(data: bytes, seq: int) -> bytes:
    """A context's checkpoint that says it is one event earlier than its state is."""
    state = decode_checkpoint(data)  # plain data, its turns unpacked
    state["seq"], state["stream_seq"] = seq, state["stream_seq"] - 1
    return encode_checkpoint(state)


async def test_a_checkpoint_moved_back_by_hand_is_ignored(tmp_path: Path) -> None:
    # The case: a checkpoint moved back made every command fail with REPLAY_DIVERGED.
    path = tmp_path / "w.pact"
    await two_contexts_checkpointed(path)
    name = CONTEXT_CHECKPOINT + "agent"
    [(seq,)] = sql(path, "SELECT seq FROM checkpoints WHERE name = ?", name)
    [(data,)] = sql(path, "SELECT data FROM checkpoint_chunks WHERE name = ?", name)
    forged = moved_back(data, seq - 1)
    # The row and its bytes edited, the digest and size fixed: only the log can tell.
    sql(path, "UPDATE checkpoint_chunks SET data = ? WHERE name = ?", forged, name)
    sql(
        path,
        "UPDATE checkpoints SET seq = ?, size = ?, sha256 = ? WHERE name = ?",
        seq - 1,
        len(forged),
        hashlib.sha256(forged).hexdigest(),
        name,
    )
    expected = await expected_contexts(path)

    async with await Workspace.open(path, watch=False, lazy=True) as ws:
        await ws.run("agent", message("a command"))
        problem = ws.checkpoint_problem
        assert problem is not None and "context 'agent'" in problem
        assert f"was taken at event {seq - 1} when its hash was" in problem
        expected_now = ws.context("agent").model_dump_json()
    assert (await expected_contexts(path))["agent"] == expected_now
    assert expected["helper"] == (await expected_contexts(path))["helper"]


async def test_a_forged_checkpoint_the_log_vouches_for_is_replayed_past(tmp_path: Path) -> None:
    # Saved through the store: it records the true hash of the event it names, but its state
    # is one event further on. The events after it do not replay onto it: replayed instead.
    path = tmp_path / "w.pact"
    await two_contexts_checkpointed(path)
    name = CONTEXT_CHECKPOINT + "agent"
    async with await SqliteEventStore.open(path, watch=False) as store:
        checkpoint = await store.load_checkpoint(name)
        assert checkpoint is not None
        await store.delete_checkpoint(name)  # a later one would win over it
        forged = moved_back(checkpoint.data, checkpoint.seq - 1)
        await store.save_checkpoint(name, checkpoint.seq - 1, forged)
    expected = await expected_contexts(path)

    for lazy in (True, False):
        async with await Workspace.open(path, watch=False, lazy=lazy) as ws:
            assert (await ws.view("agent")).model_dump_json() == expected["agent"]
            problem = ws.checkpoint_problem
            assert problem is not None and "context 'agent'" in problem
            assert "is not the log's state at its place" in problem
            assert "REPLAY_DIVERGED" in problem or "replayed to" in problem
    async with await Workspace.open(path, watch=False, lazy=True) as ws:
        await ws.run("agent", message("commands work"))


async def test_a_checkpoint_past_the_log_at_the_upgrade_is_never_used(tmp_path: Path) -> None:
    # A file written by the previous release (schema 1: checkpoints recorded no hash) whose
    # log lost its tail, checkpoint included: the upgrade records that its event is missing,
    # so the checkpoint stays unused when the log grows past its place again.
    path = tmp_path / "old.pact"
    shutil.copy(FIXTURES / "v2-checkpoint.pact", path)
    sql(path, "DELETE FROM events WHERE seq >= 27")  # the checkpoint is at event 27
    async with await SqliteEventStore.open(path, watch=False) as store:
        assert await store.head() == 26
        await store.append([NewEvent("notes", "noted")] * 3)
        with pytest.raises(StoreError) as refused:
            await store.load_checkpoint(LEGACY_CHECKPOINT)
    assert refused.value.code == "CHECKPOINT_NOT_IN_LOG"
    assert "past the log's end when the file was upgraded" in str(refused.value)

    # Untouched, the same file's checkpoint is vouched for by its event as the upgrade found it.
    intact = tmp_path / "intact.pact"
    shutil.copy(FIXTURES / "v2-checkpoint.pact", intact)
    async with await SqliteEventStore.open(intact, watch=False) as store:
        checkpoint = await store.load_checkpoint(LEGACY_CHECKPOINT)
        assert checkpoint is not None and checkpoint.seq == 27
