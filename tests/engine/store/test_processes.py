"""Several real processes on one workspace: concurrent writers, a follower, writers killed."""

from __future__ import annotations

import itertools
import json
import random
import signal
from pathlib import Path

import pytest

from .conftest import Backend, start_helper

pytestmark = [
    pytest.mark.filterwarnings("error"),
    pytest.mark.xdist_group("processes"),  # several processes each: one such test at a time
]

GUARD_S = 60  # failure guard for a process that hangs; never reached when things work


async def committed_commands(backend: Backend) -> tuple[set[str], list[tuple[str, int, int]]]:
    """The commands with events in the log, and those whose events are not all present:
    (command id, events found, events expected)."""
    found: dict[str, list[int]] = {}
    for (payload,) in await backend.rows("SELECT payload FROM events"):
        fields = json.loads(payload)
        found.setdefault(fields["command"], []).append(fields["of"])
    partial = [(c, len(of), max(of)) for c, of in found.items() if len(of) != max(of)]
    return set(found), partial


async def test_two_writers_and_a_follower_in_three_processes(
    backend: Backend, tmp_path: Path
) -> None:
    workspace = backend.where
    commands, per_command = 300, 3
    total = 2 * commands * per_command
    async with await backend.open(create=True):
        pass

    follower = start_helper("subscriber_process.py", workspace, 0, total, tmp_path / "seen.jsonl")
    assert follower.stdout is not None
    assert follower.stdout.readline().strip() == "ready"

    writers = [
        start_helper("writer_process.py", workspace, name, commands, per_command, "--wait-for-go")
        for name in ("alpha", "beta")
    ]
    for writer in writers:  # both open, then both go: their bursts overlap
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "ready"
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    for writer in writers:
        out, err = writer.communicate(timeout=GUARD_S)
        assert writer.returncode == 0, err
        assert out.splitlines()[-1] == "done"
        assert len(out.splitlines()) == commands + 1
    out, err = follower.communicate(timeout=GUARD_S)
    assert follower.returncode == 0, out + err

    async with await backend.open() as store:
        stored = await store.read()
        assert (await store.verify()).ok
        streams = await store.streams()

    # Every event once, global order without gaps, every stream without gaps.
    assert [e.seq for e in stored] == list(range(1, total + 1))
    assert sorted((e.payload["command"], e.payload["part"]) for e in stored) == sorted(
        (f"{name}-{n}", part)
        for name in ("alpha", "beta")
        for n in range(commands)
        for part in range(per_command)
    )
    assert streams == {"ctx:alpha": 600, "ctx:beta": 600, "ctx:shared": 600}
    for stream in streams:
        numbers = [e.stream_seq for e in stored if e.stream == stream]
        assert numbers == list(range(1, len(numbers) + 1))
    # A command's events are adjacent: nothing from the other writer in between.
    for first in range(0, total, per_command):
        assert len({e.payload["command"] for e in stored[first : first + per_command]}) == 1
    # And the two writers really did take turns.
    writer_order = [e.actor for e in stored[::per_command]]
    assert sum(a != b for a, b in itertools.pairwise(writer_order)) > 1
    # The follower saw exactly the stored events, in order.
    seen = [json.loads(line) for line in (tmp_path / "seen.jsonl").read_text().splitlines()]
    assert seen == [[e.seq, e.stream, e.stream_seq, e.hash] for e in stored]


async def test_a_writer_killed_mid_burst_leaves_whole_commands(backend: Backend) -> None:
    workspace = backend.where
    async with await backend.open(create=True):
        pass
    chooser = random.Random(20_240_611)
    reported: set[str] = set()

    for round_ in range(20):
        writer = start_helper("writer_process.py", workspace, f"w{round_}", 0, 5)
        assert writer.stdout is not None
        # Kill it once it has reported a few commits: it is writing the next one by then.
        for _ in range(chooser.randint(1, 8)):
            line = writer.stdout.readline()
            assert line.startswith("committed "), line + writer.stderr.read()  # type: ignore[union-attr]
            reported.add(line.split()[1])
        writer.send_signal(signal.SIGKILL)
        writer.communicate(timeout=GUARD_S)
        assert writer.returncode == -signal.SIGKILL

        if backend.name == "sqlite":
            assert await backend.rows("PRAGMA integrity_check") == [("ok",)]
        committed, partial = await committed_commands(backend)
        assert partial == []
        assert reported <= committed  # a commit reported to the caller survives the crash
        async with await backend.open() as store:
            result = await store.verify()
            assert result.ok, str(result)
