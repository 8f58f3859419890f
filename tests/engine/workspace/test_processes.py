"""Real processes on one workspace: two writers and a follower at once, and writers killed."""

from __future__ import annotations

import itertools
import json
import random
import signal
import sqlite3
from collections import Counter
from contextlib import closing
from pathlib import Path

import pytest

from engine.deep_verify import verify_deep
from engine.store import SqliteEventStore, StoredEvent
from engine.workspace import Workspace

from .conftest import replay_from_scratch, start_helper
from .writer_process import CONTEXTS, CYCLE, script

pytestmark = [
    pytest.mark.filterwarnings("error"),
    pytest.mark.xdist_group("processes"),  # several processes each: one such test at a time
]

GUARD_S = 120  # failure guard for a process that hangs; never reached when things work


async def make_workspace(path: Path) -> None:
    async with await Workspace.open(path, create=True, watch=False) as ws:
        for name in CONTEXTS:
            await ws.create_context(name)


def commands_of(events: list[StoredEvent], writer: str) -> list[tuple[str, dict[str, object]]]:
    """The (context, command) pairs a writer's events record, in log order."""
    return [
        (e.stream.removeprefix("ctx:"), dict(e.payload["command"]))
        for e in events
        if e.actor == writer
    ]


async def assert_projections_are_a_fresh_replay(path: Path) -> dict[str, str]:
    """Opening (checkpoint + tail) gives what a replay from the first event gives, past included;
    and every checkpoint the processes left says what the log says (``verify --deep``)."""
    async with await SqliteEventStore.open(path, watch=False) as store:
        deep = await verify_deep(store)
    assert deep.ok and {f.verdict for f in deep.checkpoints} <= {"matches"}, deep
    replayed = await replay_from_scratch(path)
    async with await Workspace.open(path, watch=False) as ws:
        exports = {name: ws.context(name).model_dump_json() for name in CONTEXTS}
        for name in CONTEXTS:
            fresh = replayed[name]
            assert exports[name] == fresh.context.model_dump_json()
            assert ws.snapshots(name) == fresh.snapshots
            for entry in ws.snapshots(name):
                past = await ws.at_snapshot(name, entry.id)
                expected = fresh.context.history.at_snapshot(entry.id)
                assert past.model_dump_json() == expected.model_dump_json()
    return exports


async def test_two_writers_and_a_follower_in_three_processes(tmp_path: Path) -> None:
    path = tmp_path / "shared.pact"
    commands = 160
    await make_workspace(path)

    follower = start_helper("subscriber_process.py", path, 2 * commands, tmp_path / "seen.jsonl")
    assert follower.stdout is not None
    ready, start = follower.stdout.readline().split()
    assert (ready, start) == ("ready", str(len(CONTEXTS)))

    writers = {
        name: start_helper("writer_process.py", path, name, commands, "--wait-for-go", "--halfway")
        for name in ("alpha", "beta")
    }
    for writer in writers.values():  # both open, then both go: their bursts overlap
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "ready"
    for writer in writers.values():
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    # Both stop halfway until both got there: on a loaded machine one burst could otherwise end
    # before the other began, and the writers would never take turns.
    for writer in writers.values():
        assert writer.stdout is not None
        lines = [writer.stdout.readline().strip() for _ in range(commands // 2 + 1)]
        assert lines == [f"committed {n}" for n in range(commands // 2)] + ["half"]
    for writer in writers.values():
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    for writer in writers.values():
        out, err = writer.communicate(timeout=GUARD_S)
        assert writer.returncode == 0, out + err
        second = [f"committed {n}" for n in range(commands // 2, commands)]
        assert out.splitlines() == [*second, "done"]
    out, err = follower.communicate(timeout=GUARD_S)
    assert follower.returncode == 0, out + err

    async with await SqliteEventStore.open(path, watch=False) as store:
        events = await store.read()
        result = await store.verify()
        streams = await store.streams()
    assert result.ok, str(result)
    assert result.checked == len(events) == len(CONTEXTS) + 2 * commands

    # Every command is in the log exactly once, in its writer's order, on its context.
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    for writer in writers:
        assert commands_of(events, writer) == [script(writer, n) for n in range(commands)]
    assert Counter(e.actor for e in events) == {
        "": len(CONTEXTS),
        "alpha": commands,
        "beta": commands,
    }
    # Per-stream sequences are gapless.
    for stream, length in streams.items():
        assert [e.stream_seq for e in events if e.stream == stream] == list(range(1, length + 1))
    assert set(streams) == {f"ctx:{name}" for name in CONTEXTS}
    # The writers really did take turns, on the same contexts.
    actors = [e.actor for e in events[len(CONTEXTS) :]]
    assert sum(a != b for a, b in itertools.pairwise(actors)) > 1
    for name in CONTEXTS:
        assert {e.actor for e in events if e.stream == f"ctx:{name}"} >= {"alpha", "beta"}

    # The final projections equal a fresh replay; the follower saw every event once, in order,
    # and its projections (updated by changes()) ended the same.
    exports = await assert_projections_are_a_fresh_replay(path)
    seen = [json.loads(line) for line in (tmp_path / "seen.jsonl").read_text().splitlines()]
    assert seen == [[e.seq, e.stream, e.stream_seq, e.hash] for e in events[len(CONTEXTS) :]]
    followed = json.loads((tmp_path / "seen.jsonl.exports.json").read_text())
    assert followed == exports


def group_sizes(path: Path, writer: str) -> tuple[Counter[str], set[str]]:
    """How many items the log inserted into each of a writer's groups, and which it deleted."""
    inserted: Counter[str] = Counter()
    deleted: set[str] = set()
    with closing(sqlite3.connect(path)) as connection:
        rows = connection.execute(
            "SELECT json_extract(payload, '$.command') FROM events WHERE actor = ? ORDER BY seq",
            (writer,),
        ).fetchall()
    for (text,) in rows:
        command = json.loads(text)
        tags = command.get("component", {}).get("tags", [])
        for tag in tags:
            if tag.startswith(f"{writer}-g"):
                inserted[tag] += 1
        if command["op"] == "delete":
            deleted.add(command["selector"].removeprefix("+"))
    return inserted, deleted


@pytest.mark.slow
async def test_writers_killed_mid_burst_leave_whole_commands(tmp_path: Path) -> None:
    path = tmp_path / "crashes.pact"
    await make_workspace(path)
    chooser = random.Random(20_240_612)
    reported: dict[str, int] = {}

    for round_ in range(20):
        writer = f"w{round_}"
        # Checkpoints and archives every few events, so kills land in those writes too.
        process = start_helper(
            "writer_process.py", path, writer, 0, "--checkpoint-every", 7, "--archive-every", 3
        )
        assert process.stdout is not None
        # Kill it once it has reported some commits: it is in the middle of the next by then.
        for expected in range(chooser.randint(1, 2 * CYCLE + 3)):
            line = process.stdout.readline()
            assert line == f"committed {expected}\n", line + process.communicate()[1]
            reported[writer] = expected
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=GUARD_S)
        assert process.returncode == -signal.SIGKILL

        with closing(sqlite3.connect(path)) as connection:
            assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        async with await SqliteEventStore.open(path, watch=False) as store:
            result = await store.verify()
            assert result.ok, str(result)
            events = await store.read()

        for earlier in reported:
            # Each writer's commands are in the log whole and in order, with no gap: a prefix
            # of its script, holding at least every commit it reported (each is one event).
            logged = commands_of(events, earlier)
            assert logged == [script(earlier, n) for n in range(len(logged))]
            assert len(logged) > reported[earlier]

        exports = await assert_projections_are_a_fresh_replay(path)
        # A command's effects are all there exactly when its event is: each group holds as many
        # items as the log inserted into it, or none once its delete (one command) is logged.
        async with await Workspace.open(path, watch=False) as ws:
            assert {n: ws.context(n).model_dump_json() for n in CONTEXTS} == exports
            for earlier in reported:
                inserted, deleted = group_sizes(path, earlier)
                for tag in set(inserted) | deleted:
                    live = sum(len(ws.context(n).select(f"+{tag}")) for n in CONTEXTS)
                    assert live == (0 if tag in deleted else inserted[tag]), (tag, live)
    # The kills did land at different points of the cycle, deletes included.
    assert len({count % CYCLE for count in reported.values()}) > 3
    assert sum(n >= CYCLE - 2 for n in reported.values()) > 3  # ... after a group's delete
