"""Loading only the contexts a process uses (``Workspace.open(lazy=True)``): what it computes
is what a workspace holding every context computes, whatever other processes append meanwhile,
and the numbers the index keeps for the contexts it did not load are exact."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.deep_verify import verify_deep
from engine.store import SqliteEventStore, StoredEvent
from engine.workspace import (
    INDEX_CHECKPOINT,
    ContextInfo,
    ContextNotLoaded,
    ContextProjection,
    UnknownContext,
    Workspace,
    decode_checkpoint,
    parse_index,
)
from tests.processes import REPO_ROOT

from .conftest import (
    ManualClock,
    replay_from_scratch,
    run_every_operation,
    start_helper,
)
from .writer_process import CONTEXTS

pytestmark = pytest.mark.filterwarnings("error")

GUARD_S = 120  # failure guard for a process or an event that never comes


async def two_contexts(path: Path, names: tuple[str, str] = ("agent", "other")) -> None:
    """Both contexts through every operation, checkpointed, then a tail on each."""
    async with await Workspace.open(path, create=True, clock=ManualClock(), watch=False) as ws:
        for name in names:
            await run_every_operation(ws, name)
        await ws.checkpoint()
        for name in names:
            await ws.run(name, {"op": "message", "role": "user", "text": f"{name}, after it"})


def export(ws: Workspace, name: str) -> str:
    return ws.context(name).model_dump_json()


async def test_a_lazy_workspace_loads_only_what_it_uses_and_computes_what_a_full_one_does(
    tmp_path: Path,
) -> None:
    path, copy = tmp_path / "lazy.pact", tmp_path / "full.pact"
    await two_contexts(path)
    shutil.copy(path, copy)
    script = [
        {"op": "message", "role": "user", "text": "next"},
        {"op": "insert", "selector": "d0, 1, 0", "component": {"content": "n", "ttl": 1}},
        {"op": "advance"},
        {"op": "delete", "key": "prefs"},
        {"op": "seal", "trigger": "mine"},
    ]
    async with (
        await Workspace.open(path, clock=ManualClock(), watch=False, lazy=True) as lazy,
        await Workspace.open(copy, clock=ManualClock(), watch=False) as full,
    ):
        assert (lazy.loaded(), full.loaded()) == (frozenset(), {"agent", "other"})
        assert lazy.contexts() == full.contexts()  # numbers from the index
        assert lazy.head == full.head
        for command in script:
            assert await lazy.run("agent", command) == await full.run("agent", command)
        assert lazy.loaded() == {"agent"}
        assert export(lazy, "agent") == export(full, "agent")
        assert lazy.snapshots("agent") == full.snapshots("agent")
        for entry in full.snapshots("agent"):
            past = await lazy.at_snapshot("agent", entry.id)
            expected = await full.at_snapshot("agent", entry.id)
            assert past.model_dump_json() == expected.model_dump_json()
        # One loaded, one from the index: the same numbers.
        assert lazy.contexts() == full.contexts()
        assert lazy.loaded() == {"agent"}
        # Reading the other context loads it, and only then.
        nodes = [n.model_dump() for n in await lazy.select("other", "@t-2 *")]
        assert nodes == [n.model_dump() for n in await full.select("other", "@t-2 *")]
        assert lazy.loaded() == {"agent", "other"}
        assert export(lazy, "other") == export(full, "other")


async def test_what_is_not_loaded_is_named_not_guessed(tmp_path: Path) -> None:
    path = tmp_path / "w.pact"
    await two_contexts(path)
    async with (
        await Workspace.open(path, watch=False, lazy=True) as ws,
        await Workspace.open(path, watch=False) as other_process,
    ):
        for accessor in (ws.context, ws.snapshots, ws.snapshot_count):
            with pytest.raises(ContextNotLoaded) as refused:
                accessor("agent")
            assert refused.value.code == "CONTEXT_NOT_LOADED"
            assert "load" in str(refused.value)
        with pytest.raises(ContextNotLoaded):
            ws.snapshot_of_episode("agent", 1)
        with pytest.raises(UnknownContext):
            ws.context("nobody")
        with pytest.raises(UnknownContext):
            await ws.load("nobody")
        with pytest.raises(UnknownContext):
            await ws.run("nobody", {"op": "advance"})
        assert ws.loaded() == frozenset()

        # Another process moves "agent" on; this one learns of it through its own command on
        # "other", which counts agent's event without applying it.
        await other_process.run("agent", {"op": "advance"})
        await ws.run("other", {"op": "advance"})
        assert ws.loaded() == {"other"}
        assert ws.head == other_process.head + 1
        with pytest.raises(ContextNotLoaded) as refused:
            ws.contexts()  # agent's numbers in the index are from before that event
        assert refused.value.details == {"names": ["agent"]}
        replayed = await replay_from_scratch(path)
        assert await ws.list_contexts() == [p.info(n) for n, p in sorted(replayed.items())]
        assert ws.loaded() == {"agent", "other"}


async def test_a_context_loaded_later_catches_up_with_what_other_processes_appended(
    tmp_path: Path,
) -> None:
    path = tmp_path / "shared.pact"
    await two_contexts(path, CONTEXTS)
    async with await Workspace.open(path, watch=False, lazy=True) as ws:
        await ws.load("common")
        head = ws.head
        writer = start_helper("writer_process.py", path, "alpha", 40, "--lazy")
        out, err = writer.communicate(timeout=GUARD_S)
        assert writer.returncode == 0, out + err
        assert ws.head == head  # no watcher, no command: nothing seen yet

        await ws.load("shared")  # its checkpoint, then its stream up to now
        assert ws.checkpoint_problem is None
        replayed = await replay_from_scratch(path)
        assert export(ws, "shared") == replayed["shared"].context.model_dump_json()
        assert ws.snapshots("shared") == replayed["shared"].snapshots

        # "common" was loaded before the writer ran: a command brings it up to date, and skips
        # the events of "shared" it is shown, which the load above already applied.
        await ws.run("common", {"op": "message", "role": "user", "text": "caught up"})
        replayed = await replay_from_scratch(path)
        for name in CONTEXTS:
            assert export(ws, name) == replayed[name].context.model_dump_json()
            assert ws.snapshots(name) == replayed[name].snapshots
        assert ws.head == max(p.seq for p in replayed.values())


async def test_events_that_arrive_while_a_context_loads_are_applied_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "w.pact"
    await two_contexts(path)
    async with (
        await Workspace.open(path, watch=False) as writer,
        await Workspace.open(path, lazy=True) as reader,  # follows the file
    ):
        seen: list[int] = []
        arrived = asyncio.Event()

        async def follow() -> None:
            async for change in reader.changes():
                seen.extend(event.seq for event in change.events)
                arrived.set()

        follower = asyncio.create_task(follow())
        real_read = reader.store.read_stream
        appended: list[StoredEvent] = []

        async def read_then_append(
            stream: str, after: int = 0, limit: int | None = None
        ) -> list[StoredEvent]:
            events = await real_read(stream, after, limit)
            if not appended:  # once this read is done, another process appends to the context
                await writer.run("agent", {"op": "message", "role": "user", "text": "meanwhile"})
                appended.append((await writer.store.read(writer.head - 1))[0])
                async with asyncio.timeout(GUARD_S):
                    while writer.head not in seen:
                        arrived.clear()
                        await arrived.wait()
            return events

        monkeypatch.setattr(reader.store, "read_stream", read_then_append)
        await reader.load("agent")
        follower.cancel()
        # The read the load made did not hold the event; the change feed brought it meanwhile.
        assert appended and appended[0].stream == "ctx:agent"
        assert reader.loaded() == {"agent"}
        assert export(reader, "agent") == export(writer, "agent")
        assert reader.head == writer.head


async def replayed_numbers(path: Path, name: str, stream_seq: int) -> ContextInfo:
    """A context's numbers after the first ``stream_seq`` events of its stream."""
    from engine.store import SqliteEventStore

    async with await SqliteEventStore.open(path, watch=False) as store:
        events = await store.read_stream(f"ctx:{name}", 0, limit=stream_seq)
    projection = ContextProjection.fresh(events[0].time_ns)
    for event in events:
        projection.replay(event)
    return projection.info(name)


def pact_tui(*args: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "pact_tui", *map(str, args)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def test_the_numbers_in_the_index_stay_exact_with_several_processes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "shared.pact"
    await two_contexts(path, CONTEXTS)
    writers = [
        start_helper("writer_process.py", path, name, 60, "--lazy", "--wait-for-go")
        for name in ("alpha", "beta")
    ]
    for writer in writers:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    # Command-line processes at the same time, each loading one context and closing.
    commands = [
        pact_tui("ctx", "user", path, CONTEXTS[n % 2], f"from the command line {n}")
        for n in range(4)
    ]
    commands.append(pact_tui("ctx", "list", path))
    for process in [*writers, *commands]:
        out, err = process.communicate(timeout=GUARD_S)
        assert process.returncode == 0, out + err

    # The index the processes left (where each stream ends, as of its event) and every
    # context checkpoint say what the log says.
    async with await SqliteEventStore.open(path, watch=False) as store:
        deep = await verify_deep(store)
    assert deep.ok and {f.verdict for f in deep.checkpoints} <= {"matches"}, deep
    replayed = await replay_from_scratch(path)
    expected = [replayed[name].info(name) for name in sorted(replayed)]
    # Whatever the stored index says of a context is what a replay to that place gives.
    async with await Workspace.open(path, watch=False, lazy=True) as ws:
        checkpoint = await ws.store.load_checkpoint(INDEX_CHECKPOINT)
        assert checkpoint is not None
        for name, (_, stream_seq, summary) in parse_index(
            decode_checkpoint(checkpoint.data)
        ).items():
            assert summary is not None
            at, *numbers = summary
            assert at <= stream_seq <= replayed[name].stream_seq
            assert ContextInfo(name, *numbers) == await replayed_numbers(path, name, at)
        # Where it is behind, those contexts are loaded; the rest come from the index.
        assert await ws.list_contexts() == expected
    # That process's close leaves numbers that are current: nothing needs loading.
    async with await Workspace.open(path, watch=False, lazy=True) as ws:
        assert ws.contexts() == expected
        assert ws.loaded() == frozenset()


async def test_a_full_workspace_loads_contexts_other_processes_create(tmp_path: Path) -> None:
    path = tmp_path / "w.pact"
    async with (
        await Workspace.open(path, create=True, watch=False) as ws,
        await Workspace.open(path, watch=False, lazy=True) as lazy,
    ):
        await lazy.create_context("late")
        await lazy.run("late", {"op": "message", "role": "user", "text": "hi"})
        assert lazy.loaded() == {"late"}
        await ws.create_context("mine")  # shown the other process's events first
        assert ws.loaded() == {"late", "mine"}
        assert export(ws, "late") == export(lazy, "late")
        assert [info.name for info in lazy.contexts()] == ["late"]  # it has not seen "mine"
        await lazy.create_context("third")
        assert [i.name for i in lazy.contexts()] == ["late", "mine", "third"]  # empty: known
        assert lazy.loaded() == {"late"}


async def test_processes_closing_one_after_the_other_keep_each_others_numbers(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.pact"
    await two_contexts(path)
    async with (
        await Workspace.open(path, watch=False, lazy=True) as first,
        await Workspace.open(path, watch=False, lazy=True) as second,
    ):
        await first.run("agent", {"op": "advance"})
        await second.run("other", {"op": "advance"})  # shown first's event on "agent"
        await first.close()  # its index: agent's new numbers; it never saw other's event
        # second closes next: its own index would have agent's numbers behind.
    replayed = await replay_from_scratch(path)
    async with await Workspace.open(path, watch=False, lazy=True) as ws:
        assert ws.contexts() == [p.info(n) for n, p in sorted(replayed.items())]
        assert ws.loaded() == frozenset()
