"""A stored payload changed behind the workspace's back: ``verify()`` and ``pact-tui verify``
name the event (the command prints a break as its result, in the shape of an intact chain's),
and a replay that meets a forged result refuses to go on."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from engine.context import ContextError
from engine.store import ChainProblem, NewEvent, SqliteEventStore, StoreError
from engine.workspace import ReplayDiverged, Workspace
from tests.processes import REPO_ROOT

from .conftest import EVERY_OPERATION, run_every_operation

pytestmark = pytest.mark.filterwarnings("error")

HELLO = EVERY_OPERATION.index({"op": "message", "role": "user", "text": "Hello"}) + 2  # its seq
# A seal's trigger is in no result (its changelog is empty): a byte changed in it still replays.
SEAL = EVERY_OPERATION.index({"op": "seal", "trigger": "checkpoint"}) + 2


async def make_workspace(path: Path) -> int:
    async with await Workspace.open(path, create=True, watch=False) as ws:
        await run_every_operation(ws)
        return ws.head


def change_one_byte(path: Path, seq: int, old: bytes, new: bytes) -> None:
    """Overwrite one byte of event ``seq``'s stored payload with a raw UPDATE."""
    assert len(old) == len(new) == 1
    with closing(sqlite3.connect(path)) as connection:
        [(payload,)] = connection.execute("SELECT payload FROM events WHERE seq = ?", (seq,))
        data = payload.encode()
        assert data.count(old) >= 1, (old, payload)
        at = data.index(old)
        forged = data[:at] + new + data[at + 1 :]
        connection.execute("UPDATE events SET payload = ? WHERE seq = ?", (forged.decode(), seq))
        connection.commit()


def pact_tui(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pact_tui", *map(str, args)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_verify_passes_on_an_untouched_workspace(tmp_path: Path) -> None:
    path = tmp_path / "intact.pact"
    head = await make_workspace(path)
    async with await Workspace.open(path, watch=False) as ws:
        result = await ws.verify()
    assert result.ok and result.checked == head

    done = pact_tui("verify", path)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"ok: {head} events, chain intact\n"
    done = pact_tui("verify", path, "--json")
    assert done.returncode == 0
    assert json.loads(done.stdout) == {
        "ok": True,
        "checked": head,
        "broken_seq": None,
        "problem": None,
        "detail": "",
    }


@pytest.mark.parametrize(
    ("seq", "old", "new"),
    [(1, b"g", b"h"), (SEAL, b"k", b"K"), (-1, b"v", b"w")],
    ids=["first", "middle", "last"],
)
async def test_one_changed_payload_byte_is_named(
    tmp_path: Path, seq: int, old: bytes, new: bytes
) -> None:
    path = tmp_path / "tampered.pact"
    head = await make_workspace(path)
    seq = head if seq == -1 else seq
    change_one_byte(path, seq, old, new)  # still JSON, and still replays: only the chain knows

    async with await Workspace.open(path, watch=False) as ws:
        result = await ws.verify()
    assert not result.ok
    assert (result.broken_seq, result.problem) == (seq, ChainProblem.HASH_MISMATCH)
    assert result.checked == seq - 1
    assert str(result).startswith(f"event {seq}: hash_mismatch")

    # A break found is the verification's result: printed where an intact chain's is, exit 1.
    done = pact_tui("verify", path)
    assert (done.returncode, done.stderr) == (1, "")
    [line] = done.stdout.splitlines()
    assert line.startswith(f"broken: event {seq}: hash_mismatch")

    done = pact_tui("verify", path, "--json")
    assert (done.returncode, done.stderr) == (1, "")
    assert json.loads(done.stdout) == {
        "ok": False,
        "checked": seq - 1,
        "broken_seq": seq,
        "problem": "hash_mismatch",
        "detail": result.detail,
    }


async def test_a_payload_byte_that_breaks_the_json_is_named_by_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "broken-json.pact"
    await make_workspace(path)
    change_one_byte(path, HELLO, b'"', b"'")

    done = pact_tui("verify", path)
    assert (done.returncode, done.stderr) == (1, "")
    [line] = done.stdout.splitlines()
    assert line.startswith(f"broken: event {HELLO}: hash_mismatch")


async def test_a_payload_that_is_not_json_is_a_typed_error_naming_the_event(
    tmp_path: Path,
) -> None:
    path = tmp_path / "broken-json.pact"
    await make_workspace(path)
    change_one_byte(path, HELLO, b'"', b"'")

    with pytest.raises(StoreError) as refused:
        await Workspace.open(path, watch=False)
    assert str(HELLO) in str(refused.value)
    assert refused.value.code == "CORRUPT_EVENT"
    # A command on the context replays its stream (``ctx list`` reads only the index).
    done = pact_tui("ctx", "print", path, "agent")
    assert done.returncode == 1
    assert done.stderr.startswith("pact-tui: CORRUPT_EVENT: event ")


async def test_a_forged_result_stops_the_replay_at_that_event(tmp_path: Path) -> None:
    path = tmp_path / "forged.pact"
    await make_workspace(path)
    # The user message landed at (0, 0, 0): claim it landed at (1, 0, 0).
    change_one_byte(path, HELLO, b"0", b"1")

    with pytest.raises(ReplayDiverged) as diverged:
        await Workspace.open(path, watch=False)
    assert diverged.value.code == "REPLAY_DIVERGED"
    assert diverged.value.details == {"seq": HELLO}
    assert f"event {HELLO} (context.message)" in str(diverged.value)

    done = pact_tui("ctx", "print", path, "agent")
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert line.startswith(f"pact-tui: REPLAY_DIVERGED: event {HELLO} (context.message)")
    done = pact_tui("verify", path)
    assert (done.returncode, done.stderr) == (1, "")
    assert done.stdout.startswith(f"broken: event {HELLO}: hash_mismatch")


# -- events that verify but cannot be replayed ---------------------------------------------------
async def append_behind_the_workspace(path: Path, *events: NewEvent) -> int:
    """Append events through the store, as another program could: the chain stays intact."""
    async with await SqliteEventStore.open(path, watch=False) as store:
        stored = await store.append(list(events))
        assert (await store.verify()).ok
    return stored[0].seq


@pytest.mark.parametrize(
    ("event", "said"),
    [
        (
            NewEvent("ctx:agent", "context.insert", {"result": None}),
            "(context.insert) of stream 'ctx:agent' cannot be replayed: its payload holds no"
            ' command ({"result": null})',
        ),
        (
            NewEvent("ctx:agent", "context.insert", {"command": {"op": "fly"}, "v": 2}),
            "(context.insert) of stream 'ctx:agent' cannot be replayed: its command is not one"
            " this version can run (INVALID_COMMAND: unknown context operation 'fly'",
        ),
        (
            NewEvent("ctx:agent", "context.insert", {"command": {"op": "advance"}, "v": "2"}),
            "cannot be replayed: its command's form version is '2', not a whole number",
        ),
        (
            NewEvent("ctx:ghost", "context.message", {"command": {"op": "advance"}}),
            "(context.message) begins stream 'ctx:ghost', but a context's stream begins with its"
            " creation (context.created)",
        ),
    ],
    ids=["result-null", "unknown-op", "version-not-a-number", "no-creation"],
)
async def test_an_event_that_verifies_but_cannot_be_replayed_is_named(
    tmp_path: Path, event: NewEvent, said: str
) -> None:
    path = tmp_path / "unreplayable.pact"
    await make_workspace(path)
    seq = await append_behind_the_workspace(path, event)
    name = event.stream.removeprefix("ctx:")

    with pytest.raises(ContextError) as refused:
        await Workspace.open(path, watch=False)
    assert refused.value.code == "UNREPLAYABLE_EVENT"
    assert str(refused.value).startswith(f"UNREPLAYABLE_EVENT: event {seq} ")
    assert said in str(refused.value)
    assert refused.value.details == {"seq": seq, "stream": event.stream}

    for command in (("print",), ("user", "hello")):
        done = pact_tui("ctx", command[0], path, name, *command[1:])
        assert (done.returncode, done.stdout) == (1, "")
        [line] = done.stderr.splitlines()
        assert line.startswith(f"pact-tui: UNREPLAYABLE_EVENT: event {seq} "), line
        assert said in line
    done = pact_tui("ctx", "print", path, name, "--json")
    assert json.loads(done.stderr)["error"]["code"] == "UNREPLAYABLE_EVENT"
    assert pact_tui("verify", path).returncode == 0  # the chain itself is intact


async def test_a_stream_whose_first_event_was_deleted_is_named(tmp_path: Path) -> None:
    path = tmp_path / "no-start.pact"
    await make_workspace(path)
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("DELETE FROM events WHERE seq = 1")  # agent's creation
        connection.commit()

    done = pact_tui("ctx", "print", path, "agent")
    assert (done.returncode, done.stdout) == (1, "")
    [line] = done.stderr.splitlines()
    assert line == (
        "pact-tui: UNREPLAYABLE_EVENT: event 2 (context.insert) is the first of stream"
        " 'ctx:agent' in the log, but it is number 2 of that stream: its start is missing"
    )
    done = pact_tui("verify", path)
    assert done.stdout.startswith("broken: event 2: seq_gap")


async def test_an_event_refused_when_replayed_is_named_as_a_divergence(tmp_path: Path) -> None:
    path = tmp_path / "refused.pact"
    await make_workspace(path)
    # Recorded as done (it deleted an item), refused when replayed (there is no such item).
    command = {"op": "delete", "key": "nobody", "selector": None}
    payload = {"command": command, "result": {"deleted": ["n99"]}, "v": 2}
    seq = await append_behind_the_workspace(path, NewEvent("ctx:agent", "context.delete", payload))

    done = pact_tui("ctx", "print", path, "agent")
    assert (done.returncode, done.stdout) == (1, "")
    [line] = done.stderr.splitlines()
    assert line.startswith(
        f"pact-tui: REPLAY_DIVERGED: event {seq} (context.delete) was refused when replayed ("
    ), line
    assert line.endswith("but the log recorded it as done")


async def test_a_command_on_a_workspace_whose_last_event_was_changed_is_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tail.pact"
    head = await make_workspace(path)
    change_one_byte(path, head, b"v", b"w")  # the last event: still JSON, still replays

    done = pact_tui("ctx", "user", path, "agent", "one more")
    assert (done.returncode, done.stdout) == (1, "")
    [line] = done.stderr.splitlines()
    assert line.startswith(
        f"pact-tui: BROKEN_TAIL: event {head}, the log's last, does not verify (hash_mismatch: "
    )
    # What is there can still be read, and verified.
    done = pact_tui("ctx", "print", path, "agent")
    assert done.returncode == 0 and done.stdout
    assert pact_tui("verify", path).stdout.startswith(f"broken: event {head}: hash_mismatch")
    with closing(sqlite3.connect(path)) as connection:
        assert connection.execute("SELECT MAX(seq) FROM events").fetchone() == (head,)
