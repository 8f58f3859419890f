"""``Workspace.changelogs``: what each step of a context did, read back from the events' stored
results for any past step (an episode's, between two snapshots, the live one), and recomputed
by replaying for events stored before results carried it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from engine.context import Changelog, UnknownSnapshot
from engine.store import SqliteEventStore
from engine.workspace import (
    CONTEXT_PREFIX,
    BadRange,
    ContextProjection,
    UnknownContext,
    Workspace,
)

from .conftest import text

pytestmark = pytest.mark.filterwarnings("error")

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "v1-commands.pact"

SCRIPT: list[dict[str, Any]] = [
    {"op": "message", "role": "user", "text": "hello"},
    {
        "op": "insert",
        "selector": "d0, 1, 0",
        "component": text("Submit by Friday", key="deadline", ttl=2),
    },
    {
        "op": "insert",
        "selector": "d0, 2, 0",
        "component": text("research", key="mode", ttl=1, cad=1),
    },
    {"op": "advance"},  # episode 1
    {"op": "message", "role": "assistant", "text": "noted"},
    {"op": "seal", "trigger": "mine"},
    {"op": "advance"},  # episode 2: the deadline expires
    {"op": "message", "role": "user", "text": "and now?"},
    {"op": "delete", "key": "mode"},
]


async def scripted(path: Path) -> list[Changelog]:
    """Run the script on context "agent"; the changelogs its results carry, in order."""
    async with await Workspace.open(path, create=True, watch=False) as ws:
        await ws.create_context("agent")
        results = [await ws.run("agent", command) for command in SCRIPT]
    return [result.changes for result in results]


def ops(logs: tuple[Changelog, ...]) -> list[str]:
    return [log.op for log in logs]


async def test_each_step_is_the_changelogs_its_events_recorded(tmp_path: Path) -> None:
    path = tmp_path / "w.pact"
    recorded = await scripted(path)
    async with await Workspace.open(path, watch=False, lazy=True) as ws:
        first = await ws.changelogs("agent", episode=1)
        assert first.changelogs == tuple(recorded[:4])
        assert (first.kind, first.since, first.until) == (
            "snapshot",
            None,
            ws.snapshots("agent")[0],
        )
        assert (
            first.title()
            == f"snapshot {first.until.id} (episode 1): 4 events since the context's creation"
        )

        # episode 2's snapshot comes after the seal: its step starts there
        second = await ws.changelogs("agent", episode=2)
        assert ops(second.changelogs) == ["advance"]
        assert second.changelogs == (recorded[6],)
        [expired] = [e for e in second.changelogs[0].of_kind("expired") if e.key == "deadline"]
        assert (expired.key, expired.age, expired.ttl) == ("deadline", 2, 2)
        sealed = await ws.changelogs("agent", snapshot=ws.snapshots("agent")[1].id)
        assert sealed.changelogs == tuple(recorded[4:6])
        assert "'mine'" in sealed.title()

        live = await ws.changelogs("agent")
        assert live.kind == "live" and live.until is None
        assert live.since == ws.snapshots("agent")[-1]
        assert live.changelogs == tuple(recorded[7:])
        assert live.title().startswith("live: 2 events since snapshot")
        assert live.summary() == Changelog.combined(recorded[7:]).summary()

        snapshots = ws.snapshots("agent")
        between = await ws.changelogs("agent", between=(snapshots[0].id, snapshots[2].id))
        assert between.changelogs == tuple(recorded[4:7])
        assert between.kind == "between" and between.title().startswith("from snapshot")
        empty = await ws.changelogs("agent", between=(snapshots[1].id, snapshots[1].id))
        assert empty.events == () and empty.combined() is None and empty.summary() == "no changes"
        assert all(event.recorded for event in live.events + between.events)


async def test_with_nothing_since_the_newest_snapshot_the_default_is_its_step(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.pact"
    recorded = await scripted(path)
    async with await Workspace.open(path, watch=False) as ws:
        await ws.advance("agent")
        step = await ws.changelogs("agent")
        assert step.kind == "snapshot" and step.until == ws.snapshots("agent")[-1]
        assert ops(step.changelogs) == ["message", "delete", "advance"]
        assert step.changelogs[:2] == tuple(recorded[7:])


async def test_recorded_steps_are_read_without_rebuilding_the_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "w.pact"
    await scripted(path)

    async def refuse(*_: Any) -> None:
        raise AssertionError("rebuilt the context for changelogs its events carry")

    async with await Workspace.open(path, watch=False, lazy=True) as ws:
        monkeypatch.setattr(ws, "_state_before", refuse)
        monkeypatch.setattr(ws, "_rebuild", refuse)
        for episode in (1, 2):
            assert (await ws.changelogs("agent", episode=episode)).events


async def test_a_step_asked_for_wrongly_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "w.pact"
    await scripted(path)
    async with await Workspace.open(path, watch=False, lazy=True) as ws:
        with pytest.raises(UnknownSnapshot, match="episode 9"):
            await ws.changelogs("agent", episode=9)
        with pytest.raises(UnknownSnapshot, match="nope"):
            await ws.changelogs("agent", snapshot="nope")
        first, last = ws.snapshots("agent")[0].id, ws.snapshots("agent")[-1].id
        with pytest.raises(BadRange, match="comes after") as caught:
            await ws.changelogs("agent", between=(last, first))
        assert caught.value.details == {"since": last, "until": first}
        with pytest.raises(BadRange, match="one way"):
            await ws.changelogs("agent", episode=1, snapshot=first)
        with pytest.raises(UnknownContext):
            await ws.changelogs("nobody", episode=1)


async def from_scratch(path: Path, name: str) -> dict[int, Changelog]:
    """Every operation's changelog by stream position, replaying the stream from its first
    event on a fresh projection (no checkpoint, no archive)."""
    out: dict[int, Changelog] = {}
    async with await SqliteEventStore.open(path, watch=False) as store:
        events = await store.read_stream(CONTEXT_PREFIX + name, 0)
    projection = ContextProjection.fresh(events[0].time_ns)
    for event in events:
        projection.replay(event)
        if event.type != "context.created":
            assert projection.context.last_changes is not None
            out[event.stream_seq] = projection.context.last_changes
    return out


async def test_events_stored_before_changelogs_have_them_recomputed(tmp_path: Path) -> None:
    path = tmp_path / "old.pact"
    shutil.copy(FIXTURE, path)
    expected = await from_scratch(path, "agent")
    async with await Workspace.open(path, watch=False, lazy=True, read_only=True) as ws:
        await ws.load("agent")
        seen = 0
        for entry in ws.snapshots("agent"):
            step = await ws.changelogs("agent", snapshot=entry.id)
            assert step.events and not any(event.recorded for event in step.events)
            for event in step.events:
                assert event.changelog == expected[event.stream_seq]
                seen += 1
        assert any(log for log in expected.values())  # some step did change something
        live = await ws.changelogs("agent")
        assert [e.changelog for e in live.events] == [expected[e.stream_seq] for e in live.events]
    assert seen > 0
