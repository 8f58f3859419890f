"""``Workspace.fork_context``: a copy of a context as of a snapshot (or now) in a new context
that says where it came from, replays in a fresh process, hands out ids that never collide
with the copied ones, and never touches its source."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.context import ContextView, UnknownSnapshot
from engine.store import ReadOnlyWorkspace
from engine.workspace import (
    ContextExists,
    ForkOrigin,
    InvalidName,
    UnknownContext,
    Workspace,
)
from tests.processes import REPO_ROOT

from .conftest import replay_from_scratch, text

pytestmark = pytest.mark.filterwarnings("error")

SCRIPT: list[dict[str, Any]] = [
    {"op": "insert", "selector": "d-1, 0, 0", "component": text("You are careful.")},
    {"op": "message", "role": "user", "text": "hello"},
    {"op": "insert", "selector": "d0, 1, 0", "component": text("deadline", key="deadline", ttl=3)},
    {"op": "insert", "selector": "d0, 2, 0", "component": text("mode", key="mode", ttl=1, cad=1)},
    {"op": "advance"},  # episode 1
    {"op": "message", "role": "assistant", "text": "noted"},
    {"op": "insert", "selector": "d0, 1, 0", "component": text("later note", key="later")},
    {"op": "advance"},  # episode 2
    {"op": "message", "role": "user", "text": "and now?"},
]


async def agent(path: Path) -> Workspace:
    ws = await Workspace.open(path, create=True, watch=False)
    await ws.create_context("agent")
    for command in SCRIPT:
        await ws.run("agent", command)
    return ws


def state(view: ContextView) -> dict[str, Any]:
    """A view's export without its counters (a snapshot keeps none)."""
    dumped = view.model_dump()
    dumped.pop("counters", None)
    return dumped


def ids(view: ContextView) -> list[str]:
    """Every id of the tree: root, turns, slots and items (a slot once per item in it)."""
    found = [view.root_id, *(turn.id for _depth, turn in view.iter_turns())]
    slots: dict[str, None] = {}
    for item, _depth, slot, _offset in view.iter_items():
        found.append(item.id)
        slots[slot.id] = None
    return found + list(slots)


def printed_in_a_fresh_process(path: Path, name: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-m", "pact_tui", "ctx", "print", str(path), name, "--mode", "json"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


async def test_a_fork_at_a_snapshot_holds_that_state_and_says_where_it_came_from(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.pact"
    async with await agent(path) as ws:
        first = ws.snapshot_of_episode("agent", 1)
        origin = await ws.fork_context("agent", "trial", at=first.id, actor="me")
        assert origin == ForkOrigin("agent", first.id, 1, first.seq, first.stream_seq)
        past = await ws.at_snapshot("agent", first.id)
        fork = ws.context("trial")
        assert state(fork) == state(past)
        assert fork.current_episode == 1 and ws.snapshots("trial") == []
        [info] = [i for i in ws.contexts() if i.name == "trial"]
        assert (info.forked_from, info.items, info.snapshots) == (origin, past.item_count(), 0)
        assert next(i for i in ws.contexts() if i.name == "agent").forked_from is None
        events = [e for e in await ws.store.read() if e.stream == "ctx:trial"]
        assert [(e.type, e.actor) for e in events] == [
            ("context.created", "me"),
            ("context.forked", "me"),
        ]
        assert events[0].payload["forked_from"] == origin.to_json()
        exported = fork.model_dump_json()

    # A fresh process replays it from the log: the same state.
    assert printed_in_a_fresh_process(path, "trial") == json.loads(exported)
    assert (await replay_from_scratch(path))["trial"].context.model_dump_json() == exported
    async with await Workspace.open(path, watch=False, lazy=True) as ws:
        # the numbers and the origin from the index, without loading the fork
        [info] = [i for i in ws.contexts() if i.name == "trial"]
        assert info.forked_from == origin and "trial" not in ws.loaded()
        assert (await ws.view("trial")).model_dump_json() == exported


async def test_a_fork_of_now_is_the_context_as_it_is(tmp_path: Path) -> None:
    async with await agent(tmp_path / "w.pact") as ws:
        origin = await ws.fork_context("agent", "copy")
        source = ws.context("agent")
        assert origin.snapshot is None and origin.stream_seq == ws.applied("agent")
        assert ws.context("copy").model_dump_json() == source.model_dump_json()
        # the newest snapshot, recorded by the newest event but one: rebuilt, not the live one
        newest = ws.snapshots("agent")[-1]
        at_newest = await ws.fork_context("agent", "newest", at=newest.id)
        assert state(ws.context("newest")) == state(await ws.at_snapshot("agent", newest.id))
        assert at_newest.stream_seq == newest.stream_seq < origin.stream_seq


async def test_the_fork_is_its_own_context(tmp_path: Path) -> None:
    path = tmp_path / "w.pact"
    async with await agent(path) as ws:
        await ws.fork_context("agent", "trial", at=ws.snapshot_of_episode("agent", 1).id)
        copied = set(ids(ws.context("trial")))
        source_before = (ws.applied("agent"), ws.context("agent").model_dump_json())
        results = [
            await ws.run("trial", command)
            for command in [
                {"op": "insert", "selector": "d0, 3, 0", "component": text("mine")},
                {"op": "message", "role": "user", "text": "in the fork"},
                {"op": "advance"},
                {"op": "advance"},
                {"op": "delete", "key": "mode"},
                {"op": "seal", "trigger": "tried"},
            ]
        ]
        assert (ws.applied("agent"), ws.context("agent").model_dump_json()) == source_before
        fork = ws.context("trial")
        every = ids(fork)
        assert len(every) == len(set(every))  # no id twice
        made = {
            entry["id"]
            for result in results
            for entry in result.to_json()["changes"]["entries"]
            if entry["kind"] in ("inserted", "rehydrated")
        }
        assert len(made) >= 4 and not made & copied  # every id made in the fork is new
        assert [s.trigger for s in ws.snapshots("trial")] == ["episode", "episode", "tried"]
        # its steps read back like any context's: the copy is no step of its own
        step = await ws.changelogs("trial", episode=ws.context("trial").current_episode - 1)
        assert [log.op for log in step.changelogs] == ["insert", "message", "advance"]
        assert step.changelogs[0] == results[0].changes
        exported = fork.model_dump_json()
    assert printed_in_a_fresh_process(path, "trial") == json.loads(exported)
    async with await Workspace.open(path, watch=False) as ws:
        assert ws.context("trial").model_dump_json() == exported
        assert ws.context("agent").model_dump_json() == source_before[1]


async def test_a_copied_item_s_story_begins_with_the_fork(tmp_path: Path) -> None:
    async with await agent(tmp_path / "w.pact") as ws:
        await ws.fork_context("agent", "trial", at=ws.snapshot_of_episode("agent", 1).id)
        [deadline] = ws.context("trial").select("#deadline")
        await ws.run("trial", {"op": "message", "role": "user", "text": "moves it"})
        story = await ws.item_story("trial", deadline.id)
        forked = [e for e in await ws.store.read() if e.type == "context.forked"]
        assert [(e.what, e.seq) for e in story if e.seq is not None][:1] == [
            ("born", forked[0].seq)
        ]
        assert (
            story[0].detail
            == f"({','.join(map(str, deadline.coordinates))}) · copied into this fork"
        )


async def test_the_origin_survives_a_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "w.pact"
    async with await agent(path) as ws:
        origin = await ws.fork_context("agent", "trial")
        await ws.run("trial", {"op": "advance"})
        await ws.checkpoint()
    async with await Workspace.open(path, watch=False) as ws:
        assert ws.checkpoint_problem is None
        [info] = [i for i in ws.contexts() if i.name == "trial"]
        assert info.forked_from == origin
        # a fork of the fork says so
        second = await ws.fork_context("trial", "again")
        assert second.source == "trial"
        assert ws.context("again").model_dump_json() == ws.context("trial").model_dump_json()


async def test_a_fork_refused_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "w.pact"
    async with await agent(path) as ws:
        await ws.create_context("taken")
        head = ws.head
        with pytest.raises(ContextExists):
            await ws.fork_context("agent", "taken")
        with pytest.raises(InvalidName):
            await ws.fork_context("agent", "bad name")
        with pytest.raises(UnknownSnapshot):
            await ws.fork_context("agent", "trial", at="n999")
        with pytest.raises(UnknownContext):
            await ws.fork_context("nobody", "trial")
        assert ws.head == head and await ws.store.head() == head
        assert {i.name for i in ws.contexts()} == {"agent", "taken"}
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        with pytest.raises(ReadOnlyWorkspace):
            await ws.fork_context("agent", "trial")
        assert await ws.store.head() == head
