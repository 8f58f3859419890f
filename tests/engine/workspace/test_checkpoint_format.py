"""Checkpoints: one per context in the compact form (orjson, with json for what orjson cannot
write), the workspace index, and what happens when one of them cannot be used."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import engine.context.commands as commands_module
from engine.context import compact
from engine.context.compact import PackedTurn
from engine.store import SqliteEventStore
from engine.workspace import (
    CONTEXT_CHECKPOINT,
    INDEX_CHECKPOINT,
    LEGACY_CHECKPOINT,
    ContextProjection,
    Workspace,
    cadence,
    decode_checkpoint,
    encode_checkpoint,
)

from .conftest import EVERY_OPERATION, ManualClock, replay_from_scratch, small_checkpoints

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def count_restores(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the contexts restored from a checkpoint (each decode of one context's state)."""
    calls: list[int] = []
    real = ContextProjection.restore.__func__  # type: ignore[attr-defined]

    def restore(
        cls: type[ContextProjection], data: dict[str, Any], packed: Any = None, pieces: Any = None
    ) -> ContextProjection:
        calls.append(data["stream_seq"])
        projection: ContextProjection = real(cls, data, packed, pieces)
        return projection

    monkeypatch.setattr(ContextProjection, "restore", classmethod(restore))
    return calls


async def two_checkpointed_contexts(path: Path) -> dict[str, str]:
    """Contexts ``agent`` and ``helper``, both checkpointed (then a tail): their exports."""
    async with await Workspace.open(path, create=True, clock=ManualClock(), watch=False) as ws:
        for name in ("agent", "helper"):
            await ws.create_context(name)
            await ws.run_many(name, EVERY_OPERATION[:8])
        await ws.checkpoint()
        await ws.run("helper", {"op": "message", "role": "user", "text": "after it"})
        return {name: ws.context(name).model_dump_json() for name in ("agent", "helper")}


@pytest.mark.parametrize(
    "content",
    [
        {"big": 2**70, "negative": -(2**65)},  # beyond orjson's 64-bit integers
        {"text": "é ☃ \u2028", "float": 1e-7, "nested": [[], {}, None, True]},
    ],
)
async def test_a_checkpointed_context_reopens_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: dict[str, object]
) -> None:
    small_checkpoints(monkeypatch, every=1, archive_every=1_000, on_close=1)
    # Integers past 64 bits are refused at input now; logs written before hold them, and
    # their checkpoints must keep them: written here as the previous release took them in.
    monkeypatch.setattr(commands_module, "check_fit", lambda value: None)
    path = tmp_path / "w.pact"
    async with await Workspace.open(path, create=True, clock=ManualClock(), watch=False) as ws:
        await ws.create_context("agent")
        await ws.run("agent", {"op": "message", "role": "user", "text": "hi"})
        await ws.run(
            "agent",
            {
                "op": "insert",
                "selector": "d0, 1, 0",
                "component": {"type": "data", "content": content},
            },
        )
        export = ws.context("agent").model_dump_json()
        checkpointed = ws.head
    monkeypatch.undo()
    async with await Workspace.open(path, watch=False) as reopened:
        assert reopened.checkpoint_problem is None
        checkpoint = await reopened.store.load_checkpoint(CONTEXT_CHECKPOINT + "agent")
        assert checkpoint is not None and checkpoint.seq == checkpointed  # nothing was replayed
        assert reopened.context("agent").model_dump_json() == export
        assert reopened.context("agent")["d0, 1, 0"].content == content  # type: ignore[union-attr]


async def test_each_context_is_restored_from_its_own_checkpoint_and_only_when_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "w.pact"
    exports = await two_checkpointed_contexts(path)
    restores = count_restores(monkeypatch)
    async with await Workspace.open(path, watch=False, lazy=True) as ws:
        assert (ws.loaded(), restores) == (frozenset(), [])
        await ws.load("helper")
        assert ws.loaded() == {"helper"}
        assert restores == [9]  # helper's checkpoint (9 events), then its 1-event tail
        assert ws.context("helper").model_dump_json() == exports["helper"]
        assert ws.checkpoint_problem is None


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(b'{"version": 3, "name": "helper", "context": 7}', id="not-a-state"),
        pytest.param(b"{not json", id="not-json"),
        pytest.param(b"null", id="null"),
        pytest.param(b"agent", id="another-contexts-state"),  # filled in below
        pytest.param(b"moved", id="state-not-where-the-log-is"),  # filled in below
    ],
)
async def test_a_damaged_context_checkpoint_is_replayed_for_that_context_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: bytes
) -> None:
    path = tmp_path / "w.pact"
    exports = await two_checkpointed_contexts(path)
    async with await Workspace.open(path, watch=False) as ws:
        checkpoint = await ws.store.load_checkpoint(CONTEXT_CHECKPOINT + "helper")
        assert checkpoint is not None
        if damage == b"agent":  # a well-formed state, of the other context
            agent = await ws.store.load_checkpoint(CONTEXT_CHECKPOINT + "agent")
            assert agent is not None
            damage = agent.data
        elif damage == b"moved":  # a well-formed state whose place is not in its stream
            damage = checkpoint.data.replace(b'"stream_seq":9', b'"stream_seq":8')
            assert damage != checkpoint.data
        # A digest that matches: the store hands it over, the workspace must judge it.
        await ws.store.save_checkpoint(CONTEXT_CHECKPOINT + "helper", checkpoint.seq, damage)
    monkeypatch.setattr(cadence, "CHECKPOINT_ON_CLOSE", 10**9)  # leave it damaged
    restores = count_restores(monkeypatch)
    async with await Workspace.open(path, watch=False) as reopened:
        problem = reopened.checkpoint_problem
        assert problem is not None and "context 'helper'" in problem and "replayed" in problem
        assert {n: reopened.context(n).model_dump_json() for n in exports} == exports
        # agent came from its checkpoint (and helper's state, where it was one, was rejected).
        assert restores[:1] == [9]
    replayed = await replay_from_scratch(path)
    assert replayed["helper"].context.model_dump_json() == exports["helper"]


async def test_a_damaged_index_leaves_the_contexts_and_their_numbers_to_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "w.pact"
    exports = await two_checkpointed_contexts(path)
    async with await Workspace.open(path, watch=False) as ws:
        infos = ws.contexts()
        head = ws.head
    for damage in (
        b'{"version": 3, "contexts": {"agent": [1, 1, [2, 0, 0, 0, 0]]}}',  # past its end
        b'{"version": 3, "contexts": {"agent": [1, 1, [1, 0, -1, 0, 0]]}}',
        b'{"version": 3, "contexts": {"bad name!": [1, 1, null]}}',
        b'{"version": 3, "contexts": {"agent": ["1", 1, null]}}',
        b'{"version": 3, "contexts": []}',
        b"[]",
    ):
        async with await Workspace.open(path, watch=False, lazy=True) as ws:
            await ws.store.save_checkpoint(INDEX_CHECKPOINT, head, damage)
        async with await Workspace.open(path, watch=False, lazy=True) as lazy:
            problem = lazy.checkpoint_problem
            assert problem is not None and "index could not be used" in problem, damage
            assert lazy.head == head
            assert await lazy.list_contexts() == infos
            assert {n: lazy.context(n).model_dump_json() for n in exports} == exports
        # ... and closing wrote a good one again: numbers known without loading anything.
        async with await Workspace.open(path, watch=False, lazy=True) as lazy:
            assert lazy.checkpoint_problem is None
            assert lazy.contexts() == infos
            assert lazy.loaded() == frozenset()


async def test_a_version_2_checkpoint_written_by_the_previous_release_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # fixtures/v2-checkpoint.pact: written by the previous release's code (commit 117e8e7):
    # context "agent" through EVERY_OPERATION as it was then, "helper" with a message every
    # fourth of those, Workspace.checkpoint() at event 27 (one ``workspace`` checkpoint holding
    # both), then one more event on each.
    path = tmp_path / "old.pact"
    shutil.copy(FIXTURES / "v2-checkpoint.pact", path)
    replayed = await replay_from_scratch(path)
    expected = {name: p.context.model_dump_json() for name, p in replayed.items()}
    monkeypatch.setattr(cadence, "CHECKPOINT_ON_CLOSE", 10)
    restores = count_restores(monkeypatch)
    async with await Workspace.open(path, watch=False, lazy=True) as ws:
        assert ws.checkpoint_problem is None
        old = await ws.store.load_checkpoint(LEGACY_CHECKPOINT)
        assert old is not None and old.seq == 27
        # Read once: every context it holds, then each one's own tail.
        assert sorted(restores) == [6, 21]
        assert ws.loaded() == {"agent", "helper"}
        assert {n: ws.context(n).model_dump_json() for n in ws.loaded()} == expected
        assert ws.snapshots("agent") == replayed["agent"].snapshots
        infos = ws.contexts()
    # Closing replaced it: each context big enough has its own checkpoint, and the index.
    restores.clear()
    async with await Workspace.open(path, watch=False, lazy=True) as ws:
        assert await ws.store.load_checkpoint(LEGACY_CHECKPOINT) is None
        assert await ws.store.load_checkpoint(CONTEXT_CHECKPOINT + "agent") is not None
        assert await ws.store.load_checkpoint(CONTEXT_CHECKPOINT + "helper") is None  # 7 events
        assert ws.contexts() == infos  # from the index, nothing loaded
        assert (ws.loaded(), restores) == (frozenset(), [])
        assert (await ws.view("agent")).model_dump_json() == expected["agent"]
        assert restores == [22]
    assert (await replay_from_scratch(path)).keys() == replayed.keys()


@pytest.mark.parametrize(
    "damage",
    [b'{"version": 2, "contexts": {"agent": 7}}', b'{"version": 2, "contexts": []}', b"2"],
)
async def test_a_damaged_version_2_checkpoint_is_replaced_by_a_replay(
    tmp_path: Path, damage: bytes
) -> None:
    path = tmp_path / "old.pact"
    shutil.copy(FIXTURES / "v2-checkpoint.pact", path)
    replayed = await replay_from_scratch(path)
    async with await SqliteEventStore.open(path, watch=False) as store:
        # A checkpoint whose digest matches but whose content is not a checkpoint at all.
        await store.save_checkpoint(LEGACY_CHECKPOINT, 27, damage)
    async with await Workspace.open(path, watch=False) as reopened:
        assert reopened.checkpoint_problem is not None
        assert "replayed" in reopened.checkpoint_problem
        for name, projection in replayed.items():
            assert reopened.context(name).model_dump_json() == projection.context.model_dump_json()


async def test_a_context_checkpoint_is_packed_and_opens_without_decoding_its_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compact, "DRAWN_FIRST", 0)  # none decoded as it is restored
    path = tmp_path / "w.pact"
    exports = await two_checkpointed_contexts(path)
    async with await Workspace.open(path, watch=False) as ws:
        checkpoint = await ws.store.load_checkpoint(CONTEXT_CHECKPOINT + "agent")
        assert checkpoint is not None and checkpoint.data[:1] == b"P"
        context = ws.context("agent")
        turns = [turn for depth, turn in context.iter_turns() if depth >= 0]
        assert turns and all(isinstance(turn, PackedTurn) for turn in turns)
        assert all(not turn.decoded for turn in turns)  # type: ignore[attr-defined]
        assert context.item_count() == sum(turn.item_count() for _, turn in context.iter_turns())
        ws.build_indexes("agent")  # a reader does so once the context is drawn
        assert all(turn.decoded for turn in turns)  # type: ignore[attr-defined]
        assert context.model_dump_json() == exports["agent"]
        assert ws.checkpoint_problem is None


async def test_a_checkpoint_written_before_turns_were_packed_opens_and_is_packed_on_close(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.pact"
    exports = await two_checkpointed_contexts(path)
    name = CONTEXT_CHECKPOINT + "agent"
    async with await SqliteEventStore.open(path, watch=False) as store:
        checkpoint = await store.load_checkpoint(name)
        assert checkpoint is not None
        plain = encode_checkpoint(decode_checkpoint(checkpoint.data))  # as written before
        assert plain[:1] == b"{"
        await store.save_checkpoint(name, checkpoint.seq, plain)
    async with await Workspace.open(path, watch=False) as ws:
        assert ws.context("agent").model_dump_json() == exports["agent"]
        assert ws.checkpoint_problem is None
    async with await SqliteEventStore.open(path, watch=False) as store:
        checkpoint = await store.load_checkpoint(name)
        assert checkpoint is not None and checkpoint.data[:1] == b"P"
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        assert ws.context("agent").model_dump_json() == exports["agent"]
        assert ws.checkpoint_problem is None
