"""A ``ctx`` command loads only the context it names (``ctx list`` none), and says what a
workspace holding every context would say."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from engine.workspace import Workspace
from tests.engine.workspace.test_packed_turns import TURNS, many_turns, stored
from tests.forged_packed import forge_packed_turn

from .conftest import cli, failed, ok

pytestmark = pytest.mark.filterwarnings("error")


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """Two contexts with some history each, as separate commands left them."""
    path = tmp_path / "two.pact"
    for name in ("agent", "other"):
        ok("ctx", "create", path, name)
        ok("ctx", "insert", path, name, "d-1, 0, 0", f"You are {name}.", "--key", "system")
        ok("ctx", "user", path, name, "hello")
        ok("ctx", "insert", path, name, "d0, 1, 0", "a note", "--ttl", "2", "--tag", "note")
        ok("ctx", "advance", path, name)
        ok("ctx", "assistant", path, name, "hi there")
        ok("ctx", "seal", path, name, "review")
    return path


@pytest.fixture
def loaded(monkeypatch: pytest.MonkeyPatch) -> list[frozenset[str]]:
    """What each workspace the command line opens has loaded when it closes."""
    seen: list[frozenset[str]] = []
    close = Workspace.close

    async def recording_close(self: Workspace) -> None:
        seen.append(self.loaded())
        await close(self)

    monkeypatch.setattr(Workspace, "close", recording_close)
    return seen


def full(path: Path, *commands: tuple[str, dict[str, Any]]) -> Any:
    """Open ``path`` with every context loaded; run ``commands``; return their results and
    what the workspace shows of ``agent`` and of every context."""

    async def go() -> Any:
        async with await Workspace.open(path, watch=False) as ws:
            results = [(await ws.run(name, command)).to_json() for name, command in commands]
            view = ws.context("agent")
            return {
                "results": results,
                "agent": view.model_dump(),
                "select": [n.model_dump() for n in await ws.select("agent", "@t-1 *")],
                "snapshots": [e.id for e in ws.snapshots("agent")],
                "list": [dataclasses.asdict(i) for i in ws.contexts()],
                "loaded": ws.loaded(),
            }

    return asyncio.run(go())


READS = [
    ("select", "@t-1 *"),
    ("print", "--mode", "json", "--episode", "1"),
    ("print", "--mode", "provider"),
    ("diff", "-1", "now"),
    ("changes", "--episode", "1"),
    ("story", "@t-1 *"),
    ("snapshots",),
]
WRITES = [
    ("user", "one more"),
    ("insert", "d0, 2, 0", "x", "--ttl", "1"),
    ("update", "d1, 1", "appended", "--mode", "append"),
    ("delete", "--key", "system"),
    ("advance", "--steps", "2"),
    ("seal", "checked"),
]


@pytest.mark.parametrize("args", READS + WRITES, ids=lambda args: " ".join(args))
def test_a_command_loads_only_the_context_it_names(
    path: Path, loaded: list[frozenset[str]], args: tuple[str, ...]
) -> None:
    verb, *rest = args
    ok("ctx", verb, path, "agent", *rest)
    assert loaded == [{"agent"}]


@pytest.mark.parametrize("args", [("list",), ("create", "third")], ids=["list", "create"])
def test_list_and_create_load_no_context(
    path: Path, loaded: list[frozenset[str]], args: tuple[str, ...]
) -> None:
    verb, *rest = args
    ok("ctx", verb, path, *rest)
    assert loaded == [frozenset()]


def test_what_it_prints_and_writes_is_what_a_full_workspace_computes(
    path: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy.pact"
    shutil.copy(path, copy)
    # The same writes: through the command line on one file, a full workspace on its copy.
    results = [
        ok("ctx", "user", path, "agent", "one more", "--json").data,
        ok("ctx", "advance", path, "agent", "--json").data,
        ok("ctx", "delete", path, "agent", "--key", "system", "--json").data,
    ]
    expected = full(
        copy,
        ("agent", {"op": "message", "role": "user", "text": "one more"}),
        ("agent", {"op": "advance"}),
        ("agent", {"op": "delete", "key": "system"}),
    )
    assert results == expected["results"]
    # What the command line reads equals what a full workspace reads (times aside: the two
    # files were written at different moments, so compare the file the command line wrote).
    here = full(path)
    assert here["loaded"] == {"agent", "other"}
    assert ok("ctx", "select", path, "agent", "@t-1 *", "--json").data == here["select"]
    printed = ok("ctx", "print", path, "agent", "--mode", "json", "--json").data
    assert printed == json.loads(json.dumps(here["agent"]))
    snapshots = ok("ctx", "snapshots", path, "agent", "--json").data
    assert [row["id"] for row in snapshots] == here["snapshots"]
    assert ok("ctx", "list", path, "--json").data == here["list"]
    # ... and the structure (ids, places, episodes) is the same as the copy's.
    strip = _without_times
    assert strip(here["agent"]) == strip(expected["agent"])


def _without_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if not k.endswith("_ns")}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def test_a_query_reading_a_malformed_packed_turn_fails_in_one_line_writing_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.pact"
    asyncio.run(many_turns(path))
    turn_id = forge_packed_turn(path, "agent", TURNS // 2)  # not decoded on opening
    before = stored(path)
    for query in (("print",), ("select", "#k1"), ("story", "#k1")):
        ran = failed("ctx", query[0], path, "agent", *query[1:], code="INVALID_EXPORT")
        assert f"packed turn {turn_id!r} is malformed" in ran.err
        assert failed("ctx", query[0], path, "agent", *query[1:], "--json", code="INVALID_EXPORT")
    assert "question 1" in ok("ctx", "select", path, "agent", "d1").out  # it reads no other
    assert stored(path) == before


def test_a_command_on_a_context_with_a_malformed_packed_turn_runs_on_the_logs_state(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.pact"
    asyncio.run(many_turns(path))
    turn_id = forge_packed_turn(path, "agent", TURNS // 2)
    ran = cli("ctx", "delete", path, "agent", "#k1")
    assert ran.code == 0, ran
    [note] = ran.err.splitlines()
    assert note.startswith("pact-tui: note: the checkpoint of context 'agent' could not be used")
    assert repr(turn_id) in note
    after = cli("ctx", "select", path, "agent", "#k1", "--json")  # and saved anew
    assert (after.code, after.data, after.err) == (1, [], "")  # exit 1: no match
