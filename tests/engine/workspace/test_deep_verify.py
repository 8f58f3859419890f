"""``verify --deep``: every context rebuilt from the log and every checkpoint compared with it.
A forged checkpoint (content edited, digest fixed) is reported by name, not shown as fact; one
the workspace would not use is reported as ignored; files written by older code verify."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import closing
from pathlib import Path
from typing import Any, TypeVar

import pytest

from engine.deep_verify import DeepVerifyResult, verify_deep
from engine.store import NewEvent, SqliteEventStore
from engine.workspace import (
    CONTEXT_CHECKPOINT,
    DEEP_VERIFIED,
    INDEX_CHECKPOINT,
    DeepVerification,
    Workspace,
    decode_checkpoint,
    encode_checkpoint,
)
from tests.cli.conftest import cli
from tests.forged_packed import rewrite_checkpoint
from tests.processes import run_as_ordinary_user

from .bad_files import state
from .conftest import EVERY_OPERATION, ManualClock, small_checkpoints

FIXTURES = Path(__file__).resolve().parent / "fixtures"
STORE_FIXTURES = Path(__file__).resolve().parents[1] / "store" / "fixtures"

pytestmark = pytest.mark.filterwarnings("error")
T = TypeVar("T")


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Contexts agent and helper, each with its checkpoint and archives, and the index."""
    small_checkpoints(monkeypatch, every=5, archive_every=4, on_close=1)
    path = tmp_path / "w.pact"

    async def make() -> None:
        async with await Workspace.open(path, create=True, clock=ManualClock(), watch=False) as ws:
            for name in ("agent", "helper"):
                await ws.create_context(name)
                for command in EVERY_OPERATION:
                    await ws.run(name, command)

    asyncio.run(make())
    return path


def deep(path: Path) -> DeepVerifyResult:
    async def verified() -> DeepVerifyResult:
        async with await SqliteEventStore.open(path, watch=False) as store:
            return await verify_deep(store)

    return asyncio.run(verified())


def on_store(path: Path, work: Callable[[SqliteEventStore], Awaitable[T]]) -> T:
    """``work(store)`` on the file, through the store (the tests run the CLI in this process,
    so they are not coroutines themselves)."""

    async def run() -> T:
        async with await SqliteEventStore.open(path, watch=False) as store:
            return await work(store)

    return asyncio.run(run())


def names(path: Path, like: str) -> list[str]:
    with closing(sqlite3.connect(path)) as connection:
        rows = connection.execute("SELECT name FROM checkpoints WHERE name LIKE ?", (like,))
        return sorted(name for (name,) in rows)


def forge(path: Path, name: str, change: Any) -> None:
    """Edit a checkpoint's content by hand and fix its digest: only the log can tell."""
    # Its turns unpacked: written back in the plain form.
    rewrite_checkpoint(path, name, lambda data: encode_checkpoint(change(decode_checkpoint(data))))


def findings(result: DeepVerifyResult) -> dict[str, str]:
    return {finding.name: finding.verdict for finding in result.checkpoints}


def test_an_intact_workspace_verifies_deeply(workspace: Path) -> None:
    archives = names(workspace, "archive:%")
    assert len(archives) >= 4
    done = cli("verify", workspace, "--deep")
    assert (done.code, done.err) == (0, "")
    total = len(archives) + 3
    assert done.out == (
        "ok: 42 events, chain intact\n"
        f"ok: 2 context(s) and 0 document(s) rebuilt from their 42 events;"
        f" {total} checkpoint(s) match\n"
    )
    done = cli("verify", workspace, "--deep", "--json")
    data = json.loads(done.out)
    assert done.code == 0 and data["ok"] is True
    assert data["contexts"] == [
        {"name": "agent", "events": 21, "error": None},
        {"name": "helper", "events": 21, "error": None},
    ]
    assert {c["name"]: c["verdict"] for c in data["checkpoints"]} == dict.fromkeys(
        [*archives, CONTEXT_CHECKPOINT + "agent", CONTEXT_CHECKPOINT + "helper", INDEX_CHECKPOINT],
        "matches",
    )


def edit_text(old: str, new: str) -> Any:
    def change(state: Any) -> Any:
        return json.loads(json.dumps(state).replace(old, new))

    return change


@pytest.mark.parametrize("kind", ["context", "archive"])
def test_a_forged_state_is_reported_by_name(workspace: Path, kind: str) -> None:
    name = (
        CONTEXT_CHECKPOINT + "agent"
        if kind == "context"
        else max(names(workspace, "archive:ctx:agent:%"), key=lambda n: int(n.split(":")[-1]))
    )
    forge(workspace, name, edit_text("Formal, brief", "Casual, long"))
    # The workspace shows it as fact: only the deep verification can tell.
    result = deep(workspace)
    assert not result.ok and result.chain.ok
    assert findings(result)[name] == "differs"
    assert [f.name for f in result.checkpoints if f.verdict != "matches"] == [name]
    [finding] = [f for f in result.checkpoints if f.name == name]
    assert finding.detail.startswith("its state of context 'agent' after event ")
    assert finding.detail.endswith("is not the log's: they differ in context")

    done = cli("verify", workspace, "--deep")
    assert (done.code, done.err) == (1, "")
    lines = done.out.splitlines()
    assert lines[0] == "ok: 42 events, chain intact"
    assert lines[1] == f"broken: checkpoint {name!r} (event {finding.seq}): {finding.detail}"
    assert lines[2].startswith(
        "broken: 2 context(s) and 0 document(s) rebuilt from their 42 events; of "
    )
    assert lines[2].endswith(" 1 differing")
    data = json.loads(cli("verify", workspace, "--deep", "--json").out)
    assert data["ok"] is False
    assert data["checkpoints"][[c["name"] for c in data["checkpoints"]].index(name)] == {
        "name": name,
        "seq": finding.seq,
        "verdict": "differs",
        "detail": finding.detail,
    }
    # The plain verification walks the chain only: it is intact.
    assert cli("verify", workspace).code == 0


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (
            lambda index: {
                **index,
                "contexts": {
                    **index["contexts"],
                    "agent": [*index["contexts"]["agent"][:2], [21, 9, 9, 9, 9]],
                },
            },
            "its numbers of context 'agent' after event 21 of its stream (episode, items, depth,"
            " snapshots) are [9, 9, 9, 9]; the log's are [",
        ),
        (
            lambda index: {**index, "contexts": {"agent": index["contexts"]["agent"]}},
            "it leaves out context 'helper', in the log since event 22",
        ),
        (
            lambda index: {**index, "contexts": {**index["contexts"], "helper": [41, 20, None]}},
            "it says context 'helper' ended at event 20 of its stream (event 41) as of event 42;"
            " the log's events there: [(20, 41), (21, 42)]",
        ),
        (
            lambda index: {**index, "contexts": {**index["contexts"], "ghost": [3, 1, None]}},
            "no context 'ghost' in the log",
        ),
    ],
    ids=["numbers", "context-left-out", "end-moved-back", "context-made-up"],
)
def test_a_forged_index_is_reported(workspace: Path, change: Any, said: str) -> None:
    forge(workspace, INDEX_CHECKPOINT, change)
    result = deep(workspace)
    assert not result.ok
    [finding] = [f for f in result.checkpoints if f.verdict != "matches"]
    assert (finding.name, finding.verdict) == (INDEX_CHECKPOINT, "differs")
    assert said in finding.detail


def recent_workspace(path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Context agent whose checkpoints keep their 3 newest snapshots; written by two
    processes' worth of opening, so the last checkpoint is written by a restored context."""
    small_checkpoints(monkeypatch, every=5, archive_every=4, on_close=1, recent=3)

    async def make() -> None:
        for first in (True, False):
            async with await Workspace.open(
                path, create=first, clock=ManualClock(), watch=False
            ) as ws:
                if first:
                    await ws.create_context("agent")
                for command in EVERY_OPERATION:
                    await ws.run("agent", command)

    asyncio.run(make())
    return path


def test_a_checkpoints_recent_snapshots_are_compared_with_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = recent_workspace(tmp_path / "w.pact", monkeypatch)
    name = CONTEXT_CHECKPOINT + "agent"
    recent = on_store(path, lambda store: store.load_checkpoint(name))
    assert recent is not None and len(decode_checkpoint(recent.data)["recent"]) == 3
    assert set(findings(deep(path)).values()) == {"matches"}

    def retriggered(state: Any) -> Any:
        state["recent"][1]["trigger"] = "forged"
        return state

    forge(path, name, retriggered)
    result = deep(path)
    assert not result.ok and findings(result)[name] == "differs"
    [finding] = [f for f in result.checkpoints if f.name == name]
    assert finding.detail.endswith("is not the log's: they differ in recent")


def test_a_checkpoint_the_workspace_would_not_use_is_ignored_not_failed(
    workspace: Path,
) -> None:
    name = CONTEXT_CHECKPOINT + "helper"
    with closing(sqlite3.connect(workspace)) as connection:
        connection.execute("UPDATE checkpoints SET seq = 9999 WHERE name = ?", (name,))
        connection.execute(
            "UPDATE checkpoint_chunks SET data = x'00' WHERE name LIKE 'archive:ctx:agent:4'"
        )
        connection.commit()
    result = deep(workspace)
    assert result.ok
    ignored = {f.name: f.detail for f in result.checkpoints if f.verdict == "ignored"}
    assert ignored.keys() == {name, "archive:ctx:agent:4"}
    assert "is at event 9999, past the log's last event 42" in ignored[name]
    assert "does not match its digest" in ignored["archive:ctx:agent:4"]
    done = cli("verify", workspace, "--deep")
    assert done.code == 0
    assert (
        f"ignored: checkpoint {name!r} (event 9999): the workspace would not use it: " in done.out
    )


def test_a_checkpoint_moved_back_with_its_hash_is_reported(workspace: Path) -> None:
    # Saved through the store, so the log vouches for its place: its state is one event on.
    name = CONTEXT_CHECKPOINT + "agent"

    async def move_back(store: SqliteEventStore) -> None:
        checkpoint = await store.load_checkpoint(name)
        assert checkpoint is not None
        state = decode_checkpoint(checkpoint.data)
        earlier = (await store.read_stream("ctx:agent", state["stream_seq"] - 2, limit=1))[0]
        state["seq"], state["stream_seq"] = earlier.seq, earlier.stream_seq
        await store.delete_checkpoint(name)
        await store.save_checkpoint(name, earlier.seq, encode_checkpoint(state))

    on_store(workspace, move_back)
    result = deep(workspace)
    assert findings(result)[name] == "differs" and not result.ok


def test_a_stream_that_cannot_be_replayed_fails_the_deep_verification(
    workspace: Path,
) -> None:
    [event] = on_store(
        workspace,
        lambda store: store.append([NewEvent("ctx:agent", "context.insert", {"result": None})]),
    )
    result = deep(workspace)
    assert result.chain.ok and not result.ok
    [agent] = [replay for replay in result.contexts if replay.name == "agent"]
    assert agent.error is not None and agent.error.code == "UNREPLAYABLE_EVENT"
    assert agent.events == 21
    done = cli("verify", workspace, "--deep")
    assert done.code == 1
    assert (
        f"broken: context 'agent' cannot be rebuilt from the log: UNREPLAYABLE_EVENT: event"
        f" {event.seq} (context.insert)"
    ) in done.out
    data = json.loads(cli("verify", workspace, "--deep", "--json").out)
    assert data["contexts"][0]["error"]["code"] == "UNREPLAYABLE_EVENT"


@pytest.mark.parametrize(
    "fixture",
    [
        FIXTURES / "v1-commands.pact",
        FIXTURES / "v2-checkpoint.pact",
        STORE_FIXTURES / "chain-v1.pact",
    ],
    ids=lambda path: path.name,
)
def test_files_written_by_older_code_verify_deeply(tmp_path: Path, fixture: Path) -> None:
    path = tmp_path / fixture.name
    shutil.copy(fixture, path)
    result = deep(path)
    assert result.ok, result
    assert all(finding.verdict == "matches" for finding in result.checkpoints)


@pytest.mark.parametrize("result", [None, "absent", 5], ids=["null", "absent", "a-number"])
def test_a_command_recorded_without_a_result_stops_the_replay(workspace: Path, result: Any) -> None:
    """docs/workspace.md: an event appended with ``"result": null`` stops the replay with
    UNREPLAYABLE_EVENT; one that still carries its command was replayed with nothing to check
    it against (and a result that is not an object raised a TypeError)."""

    async def append(store: SqliteEventStore) -> int:
        events = await store.read_stream("ctx:agent", 0)
        said = next(event for event in events if event.type == "context.message")
        payload = {key: value for key, value in said.payload.items() if key != "result"}
        if result != "absent":
            payload["result"] = result
        [event] = await store.append([NewEvent("ctx:agent", "context.message", payload)])
        return event.seq

    seq = on_store(workspace, append)
    named = (
        f"UNREPLAYABLE_EVENT: event {seq} (context.message) of stream 'ctx:agent' cannot be"
        " replayed: its payload records no result for its command"
    )
    result_of_deep = deep(workspace)
    assert result_of_deep.chain.ok and not result_of_deep.ok
    [agent] = [replay for replay in result_of_deep.contexts if replay.name == "agent"]
    assert str(agent.error).startswith(named)
    done = cli("verify", workspace, "--deep")
    assert done.code == 1
    assert f"broken: context 'agent' cannot be rebuilt from the log: {named}" in done.out
    # The workspace refuses to load it too (the event is after the context's checkpoint).
    printed = cli("ctx", "print", workspace, "agent")
    assert printed.code == 1 and printed.err.startswith(f"pact-tui: {named}")


# -- when a deep verification last passed --------------------------------------------------------


def last_pass(path: Path) -> DeepVerification | None:
    async def read() -> DeepVerification | None:
        async with await Workspace.open(path, watch=False, read_only=True, lazy=True) as ws:
            return await ws.deep_verification()

    return asyncio.run(read())


def test_a_deep_verification_that_passed_is_recorded_beside_the_checkpoints(
    workspace: Path,
) -> None:
    assert last_pass(workspace) is None
    head = on_store(workspace, lambda store: store.head())
    before, events = time.time_ns(), event_rows(workspace)
    done = cli("verify", workspace, "--deep", "--json")
    after = time.time_ns()
    assert (done.code, done.err) == (0, "")
    assert json.loads(done.out)["recorded"] is True
    recorded = last_pass(workspace)
    assert recorded is not None and recorded.seq == head
    assert before <= recorded.time_ns <= after
    # The log is as it was: the record is a row beside the checkpoints, not an event, and a
    # deep verification does not judge it as a checkpoint.
    assert event_rows(workspace) == events
    assert names(workspace, DEEP_VERIFIED) == [DEEP_VERIFIED]
    assert DEEP_VERIFIED not in findings(deep(workspace))

    # A verification that fails records nothing: the last pass stands.
    forge(workspace, CONTEXT_CHECKPOINT + "agent", edit_text("Formal, brief", "Casual, long"))
    failed = cli("verify", workspace, "--deep", "--json")
    assert failed.code == 1 and json.loads(failed.out)["recorded"] is False
    assert last_pass(workspace) == recorded


def test_no_record_writes_nothing(workspace: Path) -> None:
    before = state(workspace)
    done = cli("verify", workspace, "--deep", "--no-record", "--json")
    assert done.code == 0 and json.loads(done.out)["recorded"] is False
    assert state(workspace) == before
    assert last_pass(workspace) is None


def test_a_record_of_another_log_is_not_believed(workspace: Path) -> None:
    """The log lost its tail and grew again: the record's event is no longer the log's, so the
    pass it records was of another log."""
    assert cli("verify", workspace, "--deep").code == 0
    assert last_pass(workspace) is not None
    with closing(sqlite3.connect(workspace)) as connection:
        connection.execute("DELETE FROM events WHERE seq = (SELECT MAX(seq) FROM events)")
        connection.commit()
    on_store(
        workspace,
        lambda store: store.append([NewEvent("ctx:agent", "context.advance", {})]),
    )
    assert last_pass(workspace) is None


def test_a_deep_verification_this_user_cannot_record_still_works_and_writes_nothing(
    workspace: Path,
) -> None:
    expected = cli("verify", workspace, "--deep", "--no-record").out
    folder = workspace.parent
    workspace.chmod(0o444)
    folder.chmod(0o555)
    try:
        before = state(workspace)
        done = run_as_ordinary_user(
            [sys.executable, "-m", "pact_tui", "verify", str(workspace), "--deep"]
        )
        assert (done.returncode, done.stdout) == (0, expected)
        assert done.stderr == (
            "pact-tui: note: this user cannot write the workspace: the pass is not recorded\n"
        )
        assert state(workspace) == before
    finally:
        folder.chmod(0o755)
        workspace.chmod(0o644)
    assert last_pass(workspace) is None


def event_rows(path: Path) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(path)) as connection:
        return connection.execute("SELECT * FROM events ORDER BY seq").fetchall()
