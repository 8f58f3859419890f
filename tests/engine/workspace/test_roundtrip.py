"""Every context operation through a real workspace file: closed, reopened, byte-identical.

Reopening takes whichever path the checkpoint settings lead to: a full replay, the context's
checkpoint plus a tail, and past states rebuilt from per-context archives.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from engine.canonical import canonical_json
from engine.store import NewEvent
from engine.workspace import CONTEXT_CHECKPOINT, Workspace

from .conftest import (
    EVERY_OPERATION,
    ManualClock,
    exports,
    replay_from_scratch,
    run_every_operation,
    small_checkpoints,
)

pytestmark = pytest.mark.filterwarnings("error")

# (checkpoint every N events while running, archive every N events of a context, on close),
# and the event the last checkpoint is at: the script appends 21 events.
CHECKPOINT_SETTINGS = [
    pytest.param(None, None, id="defaults-full-replay"),
    pytest.param((5_000, 1_000, 0), 21, id="checkpoint-on-close"),
    pytest.param((3, 2, 0), 21, id="checkpoints-and-archives-every-few-events"),
    pytest.param((6, 5, 10**9), 18, id="checkpoint-mid-way-then-a-tail"),
    pytest.param((1, 1, 10**9), 21, id="after-every-event"),
]


class Observed:
    """What a workspace shows about one context: everything that must survive reopening."""

    def __init__(self, ws: Workspace, name: str) -> None:
        context = ws.context(name)
        self.export_json = context.model_dump_json()
        self.canonical = canonical_json(context.model_dump())
        self.provider = context.render_provider()
        self.snapshots = ws.snapshots(name)
        self.info = [info for info in ws.contexts() if info.name == name]

    async def past(self, ws: Workspace, name: str) -> dict[str, str]:
        """Every snapshot's export, as ``at_snapshot`` rebuilds it."""
        return {
            entry.id: (await ws.at_snapshot(name, entry.id)).model_dump_json()
            for entry in ws.snapshots(name)
        }


def apply_settings(monkeypatch: pytest.MonkeyPatch, settings: tuple[int, int, int] | None) -> None:
    if settings is not None:
        every, archive_every, on_close = settings
        small_checkpoints(monkeypatch, every=every, archive_every=archive_every, on_close=on_close)


@pytest.mark.parametrize(("settings", "checkpoint_seq"), CHECKPOINT_SETTINGS)
async def test_every_operation_survives_reopening(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    settings: tuple[int, int, int] | None,
    checkpoint_seq: int | None,
) -> None:
    apply_settings(monkeypatch, settings)
    path = tmp_path / "agents.pact"
    clock = ManualClock()
    async with await Workspace.open(path, create=True, clock=clock, watch=False) as ws:
        await ws.create_context("agent")
        for command in EVERY_OPERATION:
            clock.tick()
            await ws.run("agent", command)
        before = Observed(ws, "agent")
        past_before = await before.past(ws, "agent")
        head = ws.head

    async with await Workspace.open(path, clock=ManualClock(), watch=False) as reopened:
        after = Observed(reopened, "agent")
        assert reopened.head == head == len(EVERY_OPERATION) + 1
        assert after.export_json == before.export_json
        assert after.canonical == before.canonical
        assert after.provider == before.provider
        assert after.snapshots == before.snapshots
        assert after.info == before.info
        assert await after.past(reopened, "agent") == past_before
        checkpoint = await reopened.store.load_checkpoint(CONTEXT_CHECKPOINT + "agent")

    # The settings really did lead down their path.
    assert (checkpoint and checkpoint.seq) == checkpoint_seq
    # And the state is what a replay from the first event gives.
    replayed = await replay_from_scratch(path)
    assert replayed["agent"].context.model_dump_json() == before.export_json


async def test_the_script_reaches_every_operation_and_lifecycle(tmp_path: Path) -> None:
    """The round trip above is only as good as its script: check what it exercises."""
    async with await Workspace.open(tmp_path / "a.pact", create=True, watch=False) as ws:
        results = await run_every_operation(ws)
        context = ws.context("agent")
        first_snapshot = ws.snapshots("agent")[0].id
        past = await ws.at_snapshot("agent", first_snapshot)

    ops = [command["op"] for command in EVERY_OPERATION]
    assert set(ops) == {"insert", "update", "delete", "message", "advance", "seal"}
    assert {c.get("mode", "replace") for c in EVERY_OPERATION if c["op"] == "update"} == {
        "replace",
        "append",
    }
    assert {("selector" in c, "key" in c) for c in EVERY_OPERATION if c["op"] == "delete"} == {
        (True, False),
        (False, True),
    }
    deleted = results[EVERY_OPERATION.index({"op": "delete", "key": "tool"})]
    assert deleted.deleted == ("n16",)
    assert [(e["kind"], e["id"], e["key"]) for e in deleted.to_json()["changes"]["entries"]] == [
        ("deleted", "n16", "tool")
    ]
    # Every kind of change the script makes is in some result's changelog.
    kinds = {e["kind"] for result in results for e in result.to_json()["changes"]["entries"]}
    assert kinds >= {"inserted", "replaced", "deleted", "expired", "rehydrated", "stage"}
    assert context.current_episode == 3
    # The sticky schedule rehydrated (a new id each episode), the render lifecycle moved on.
    by_content = {n.content: n for n in context.select(".text")}
    assert by_content["Mode: research"].cad == 1
    assert by_content["Mode: research"].id != results[4].id
    assert by_content["Draft, then summary"].coordinates == (0, 5, 0)
    assert by_content["Formal, brief"].key == "prefs"
    assert "scratch" not in by_content and "before the message" not in by_content
    # The first snapshot still shows what has gone since.
    assert {n.content for n in past.select(".text")} >= {"scratch", "Ask about follow-up"}
    assert [n.content for n in past.select("#tool")] == [{"tool": "search", "args": [1, 2.5, None]}]


async def test_each_command_is_one_event_that_records_command_and_result(tmp_path: Path) -> None:
    path = tmp_path / "log.pact"
    clock = ManualClock()
    async with await Workspace.open(path, create=True, clock=clock, watch=False) as ws:
        await ws.create_context("agent")
        results = []
        for command in EVERY_OPERATION:
            results.append(await ws.run("agent", command, actor="tester"))
            clock.tick()
        events = await ws.store.read()

    [created, *commands] = events
    assert (created.stream, created.type, created.payload) == (
        "ctx:agent",
        "context.created",
        {"name": "agent"},
    )
    assert [e.stream_seq for e in events] == list(range(1, len(EVERY_OPERATION) + 2))
    assert [e.type for e in commands] == [f"context.{c['op']}" for c in EVERY_OPERATION]
    # v: the command forms and rules version
    assert [dict(e.payload) for e in commands] == [
        {"command": command, "result": result.to_json(), "v": 3}
        for command, result in zip(EVERY_OPERATION, results, strict=True)
    ]
    assert {e.actor for e in commands} == {"tester"}
    # Each event carries the time its command ran at: replay runs it at that time again.
    assert [e.time_ns for e in commands] == [
        1_700_000_000_000_000_000 + 1_000 * n for n in range(len(EVERY_OPERATION))
    ]


async def test_reopening_after_every_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One workspace kept open, one closed and reopened after each command: same every step."""
    small_checkpoints(monkeypatch, every=4, archive_every=3, on_close=2)
    clocks = ManualClock(), ManualClock()
    steady_path, reopened_path = tmp_path / "steady.pact", tmp_path / "reopened.pact"
    async with await Workspace.open(steady_path, create=True, clock=clocks[0], watch=False) as ws:
        await ws.create_context("agent")
        async with await Workspace.open(reopened_path, create=True, clock=clocks[1]) as other:
            await other.create_context("agent")
        for command in EVERY_OPERATION:
            for clock in clocks:
                clock.tick()
            expected = await ws.run("agent", command)
            async with await Workspace.open(reopened_path, clock=clocks[1]) as other:
                assert await other.run("agent", command) == expected
            async with await Workspace.open(reopened_path, watch=False) as other:
                assert (
                    other.context("agent").model_dump_json()
                    == ws.context("agent").model_dump_json()
                )
                assert other.snapshots("agent") == ws.snapshots("agent")
                for entry in ws.snapshots("agent"):
                    ours = await ws.at_snapshot("agent", entry.id)
                    theirs = await other.at_snapshot("agent", entry.id)
                    assert theirs.model_dump_json() == ours.model_dump_json()


@pytest.mark.parametrize("recent", [0, 3])
async def test_time_qualified_selects_and_diffs_after_reopening(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, recent: int
) -> None:
    small_checkpoints(monkeypatch, every=5, archive_every=4, on_close=0, recent=recent)
    path = tmp_path / "past.pact"
    queries = ["@t-1 *", "@t-3 .text", "@e1 ^seq", "@e2 #prefs", "@e3 +profile", "*"]

    async def observe(ws: Workspace) -> dict[str, Any]:
        entries = ws.snapshots("agent")
        seen: dict[str, Any] = {}
        for query in [*queries, *(f"@snap:{e.id} *" for e in entries)]:
            seen[query] = [n.model_dump() for n in await ws.select("agent", query)]
        for older in entries:
            seen[f"diff {older.id}"] = await ws.diff("agent", older.id, None)
            seen[f"diff {older.id} {entries[-1].id}"] = await ws.diff(
                "agent", older.id, entries[-1].id
            )
        for episode in (1, 2, 3):
            seen[f"episode {episode}"] = (await ws.at_episode("agent", episode)).model_dump()
        for mode in ("tree", "provider", "json"):
            seen[mode] = await ws.render("agent", mode, at=entries[0].id)  # type: ignore[arg-type]
        return seen

    async with await Workspace.open(path, create=True, clock=ManualClock(), watch=False) as ws:
        await run_every_operation(ws)
        before = await observe(ws)
    async with await Workspace.open(path, watch=False) as reopened:
        # Loaded from the checkpoint: the live context holds only the newest snapshots the
        # checkpoint keeps (sharing its turns) ...
        held = [s.id for s in reopened.context("agent").history]
        entries = reopened.snapshots("agent")
        assert held == ([e.id for e in entries[-recent:]] if recent else [])
        assert 0 < recent < len(entries) or not held
        # ... so every other past state below is rebuilt from archives and replay.
        assert await observe(reopened) == before
    assert before["@t-1 *"] != before["@t-3 .text"]  # the queries do tell states apart
    assert before["@e2 #prefs"][0]["content"] == "Formal, brief"


async def test_contexts_are_independent_streams(tmp_path: Path) -> None:
    path = tmp_path / "two.pact"
    async with await Workspace.open(path, create=True, watch=False) as ws:
        await run_every_operation(ws, "first")
        await ws.create_context("second")
        await ws.add_message("second", "user", "only one message here")
        before = exports(ws)
        infos = ws.contexts()
    async with await Workspace.open(path, watch=False) as reopened:
        assert exports(reopened) == before
        assert reopened.contexts() == infos
    assert [i.name for i in infos] == ["first", "second"]
    assert [(i.items, i.snapshots) for i in infos][1] == (1, 0)
    # Ids are per context: the second context starts at n1 like the first did.
    assert '"id":"n1"' in before["second"] and '"id":"n1"' in before["first"]


async def test_changes_yield_own_commands_once_in_order(tmp_path: Path) -> None:
    async with await Workspace.open(tmp_path / "feed.pact", create=True, watch=False) as ws:
        await ws.create_context("agent")
        start = ws.head
        seen: list[int] = []
        contexts: set[str] = set()
        done = asyncio.Event()

        async def follow() -> None:
            async for change in ws.changes(after=start):
                seen.extend(e.seq for e in change.events)
                contexts.update(change.contexts)
                if change.seq >= start + len(EVERY_OPERATION):
                    done.set()
                    return

        follower = asyncio.create_task(follow())
        for command in EVERY_OPERATION:
            await ws.run("agent", command)
        async with asyncio.timeout(10):
            await done.wait()
        await follower
    assert seen == list(range(start + 1, start + len(EVERY_OPERATION) + 1))
    assert contexts == {"agent"}


async def test_changes_from_another_workspace_are_applied_before_they_are_yielded(
    tmp_path: Path,
) -> None:
    path = tmp_path / "shared.pact"
    async with (
        await Workspace.open(path, create=True, watch=False) as writer,
        await Workspace.open(path) as reader,
    ):
        await writer.create_context("agent")
        exports_seen: list[tuple[int, str | None]] = []

        async def follow() -> None:
            async for change in reader.changes(after=0):
                for name in change.contexts:
                    exports_seen.append((change.seq, reader.context(name).model_dump_json()))
                if change.seq == len(EVERY_OPERATION) + 1:
                    return

        follower = asyncio.create_task(follow())
        for command in EVERY_OPERATION:
            await writer.run("agent", command)
        async with asyncio.timeout(30):
            await follower
        final = writer.context("agent").model_dump_json()
        assert reader.context("agent").model_dump_json() == final
        assert exports_seen[-1] == (len(EVERY_OPERATION) + 1, final)
        assert reader.head == writer.head


async def test_closing_twice_is_harmless(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small_checkpoints(monkeypatch, every=1_000, archive_every=1_000, on_close=0)
    path = tmp_path / "twice.pact"
    async with await Workspace.open(path, create=True, watch=False) as ws:
        await run_every_operation(ws)
        await ws.close()  # and again on leaving the block, with a checkpoint due
    async with await Workspace.open(path, watch=False) as reopened:
        checkpoint = await reopened.store.load_checkpoint(CONTEXT_CHECKPOINT + "agent")
        assert checkpoint is not None and checkpoint.seq == reopened.head


async def test_a_logged_zero_ttl_insert_still_opens_and_lives_one_episode(tmp_path: Path) -> None:
    """Before ``ttl=0`` was refused, the log could record one; it lived exactly as ``ttl=1``
    does, and a workspace holding it opens and replays as it ran."""
    clock = ManualClock()
    command = {"op": "insert", "selector": "d0, 1, 0", "component": {"content": "blink"}}
    reference = tmp_path / "reference.pact"
    async with await Workspace.open(reference, create=True, clock=clock, watch=False) as ws:
        await ws.create_context("agent")
        result = await ws.run("agent", {**command, "component": {"content": "blink", "ttl": 1}})
    old = tmp_path / "old.pact"
    async with await Workspace.open(old, create=True, clock=clock, watch=False) as ws:
        await ws.create_context("agent")
        # What an older version appended for the same insert with ttl=0:
        legacy = {**command, "component": {"content": "blink", "ttl": 0}}
        payload = {"command": legacy, "result": result.to_json()}
        await ws.store.append([NewEvent("ctx:agent", "context.insert", payload, "old", clock())])
    async with await Workspace.open(old, clock=clock, watch=False) as ws:
        item = ws.context("agent").find(result.id)
        assert item is not None and item.ttl == 1 and item.content == "blink"
        await ws.advance("agent")
        assert ws.context("agent").find(result.id) is None
        assert (await ws.verify()).ok
