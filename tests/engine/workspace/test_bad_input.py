"""Bad input through ``Workspace.run`` and ``create_context``: a typed error with a code, and
nothing changed (the event head, every export and the snapshot index are as they were, in this
process and after reopening)."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from engine.context import ContextError, InvalidSelector
from engine.workspace import Workspace

from .conftest import exports, run_every_operation, text

pytestmark = pytest.mark.filterwarnings("error")


@pytest.fixture
async def ws(tmp_path: Path) -> AsyncIterator[Workspace]:
    async with await Workspace.open(tmp_path / "ws.pact", create=True, watch=False) as opened:
        await run_every_operation(opened)  # three episodes deep, keys, tags, snapshots
        yield opened


async def refused(ws: Workspace, call: Callable[[], Awaitable[Any]], code: str) -> ContextError:
    """Run ``call``: it must raise a ContextError with ``code`` and change nothing."""
    before = ws.head, await ws.store.head(), exports(ws), ws.snapshots("agent"), ws.contexts()
    with pytest.raises(ContextError) as error:
        await call()
    assert error.value.code == code, error.value
    assert str(error.value).startswith(f"{code}: ")
    assert error.value.to_dict()["code"] == code
    after = ws.head, await ws.store.head(), exports(ws), ws.snapshots("agent"), ws.contexts()
    assert after == before
    async with await Workspace.open(ws.path, watch=False) as reopened:  # nothing was stored
        assert (reopened.head, exports(reopened)) == (before[0], before[2])
    return error.value


def insert(selector: str, component: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"op": "insert", "selector": selector, "component": component or text("x")}


@pytest.mark.parametrize(
    ("selector", "position", "token"),
    [
        ("d0, x, 0", 4, "x"),
        ("(d0, 1, 0", 0, "(d0, 1, 0"),
        ("d0, 1, 0)", 8, ")"),
        ("d-2-1, 0, 0", 1, "-2-1"),
        ("d0,, 1", 3, ","),
        ("d0, 3..1, 0", 4, "3..1"),
        ("d0, 1.5, 0", 4, "1.5"),
        ("", 0, ""),
    ],
)
@pytest.mark.parametrize("op", ["insert", "update", "delete"])
async def test_a_malformed_selector_names_position_and_token(
    ws: Workspace, op: str, selector: str, position: int, token: str
) -> None:
    command: dict[str, Any] = {"op": op, "selector": selector}
    if op != "delete":
        command["component"] = text("x")
    error = await refused(ws, lambda: ws.run("agent", command), "INVALID_SELECTOR")
    assert isinstance(error, InvalidSelector)
    assert (error.position, error.token) == (position, token)
    assert f"at position {position} (token {token!r})" in error.message
    assert error.to_dict()["position"] == position


@pytest.mark.parametrize(
    ("command", "code", "named"),
    [
        # coordinates that parse but are no place to write
        (insert("d0, *, 0"), "INVALID_COORDINATE", "d0, *, 0"),
        (insert("d0, 1-2, 0"), "INVALID_COORDINATE", "d0, 1-2, 0"),
        (insert("d0, 1"), "INVALID_COORDINATE", "d0, 1"),
        (insert("d-2, 0, 0"), "INVALID_COORDINATE", "depth -2"),
        # a depth that does not exist (the history is three turns deep)
        (insert("d4, 1, 0"), "NO_SUCH_DEPTH", "depth 4"),
        (insert("d99, 0, 0"), "NO_SUCH_DEPTH", "depth 99"),
        ({"op": "update", "selector": "d7, 1", "mode": "append", "component": text("x")},
         "NO_SUCH_DEPTH", "depth 7"),
        # lifecycles
        (insert("d0, 1, 0", text("x", ttl=-1)), "INVALID_LIFECYCLE", "ttl=-1"),
        (insert("d0, 1, 0", text("x", cad=0)), "INVALID_LIFECYCLE", "cad=0"),
        (insert("d0, 1, 0", text("x", cad=-2, ttl=1)), "INVALID_LIFECYCLE", "cad=-2"),
        (insert("d0, 1, 0", text("x", render_lifecycle={
            "stages": [{"selector": "d0, 1, 0", "ttl": -1}]})), "INVALID_LIFECYCLE", "ttl=-1"),
        # writes through the past
        (insert("@t-1 d0, 1, 0"), "READ_ONLY", "@t-1 d0, 1, 0"),
        ({"op": "update", "selector": "@e1 d1, 1, 0", "component": text("x")}, "READ_ONLY",
         "@e1 d1, 1, 0"),
        ({"op": "delete", "selector": "@t-2 *"}, "READ_ONLY", "@t-2 *"),
        # nothing there
        ({"op": "delete", "key": "nope"}, "UNKNOWN_KEY", "'nope'"),
        ({"op": "update", "selector": "d0, 9, 0", "component": text("x")}, "NOT_FOUND",
         "d0, 9, 0"),
        ({"op": "delete", "selector": "d0, 9, 0"}, "NOT_FOUND", "d0, 9, 0"),
        # malformed commands
        ({"op": "explode"}, "INVALID_COMMAND", "'explode'"),
        ({}, "INVALID_COMMAND", "None"),
        ({"op": "insert", "selector": "d0, 1, 0"}, "INVALID_COMMAND", "'component'"),
        ({"op": "insert", "selector": 7, "component": text("x")}, "INVALID_COMMAND", "'selector'"),
        (insert("d0, 1, 0", {"type": "text", "content": 5}), "INVALID_COMMAND", "content"),
        (insert("d0, 1, 0", text("x", ttl="soon")), "INVALID_COMMAND", "ttl"),
        ({"op": "message", "role": "robot", "text": "hi"}, "INVALID_COMMAND", "'robot'"),
        ({"op": "message", "role": "user"}, "INVALID_COMMAND", "'text'"),
        ({"op": "seal", "trigger": " "}, "INVALID_COMMAND", "trigger"),
        ({"op": "update", "selector": "d0, 0, 0", "mode": "sideways", "component": text("x")},
         "INVALID_UPDATE_MODE", "'sideways'"),
        ({"op": "delete", "selector": "d0, 0, 0", "key": "prefs"}, "SELECTOR_OR_KEY", "not both"),
        ({"op": "delete"}, "SELECTOR_OR_KEY", "neither"),
        # a lifetime of no episode
        (insert("d0, 1, 0", text("x", ttl=0)), "INVALID_LIFECYCLE", "ttl=0"),
    ],
)  # fmt: skip
async def test_a_refused_command_changes_nothing(
    ws: Workspace, command: dict[str, Any], code: str, named: str
) -> None:
    error = await refused(ws, lambda: ws.run("agent", command), code)
    assert named in error.message


@pytest.mark.parametrize(
    "content",
    [
        pytest.param({"a": object()}, id="an-object"),
        pytest.param({"a": {1, 2}}, id="a-set"),
        pytest.param(b"bytes", id="bytes"),
        pytest.param(math.nan, id="nan"),
        pytest.param([math.inf], id="infinity"),
        pytest.param({1: "a", "b": 2}, id="mixed-keys"),
    ],
)
async def test_a_command_that_is_not_json_is_refused_before_anything(
    ws: Workspace, content: Any
) -> None:
    command = insert("d0, 1, 0", {"type": "component", "content": content})
    error = await refused(ws, lambda: ws.run("agent", command), "INVALID_COMMAND")
    assert "JSON" in error.message


async def test_a_command_runs_as_it_is_stored(ws: Workspace) -> None:
    """What the live projection applies is what a replay applies: JSON, not Python objects."""
    command = insert("d0, 1, 0", {"type": "component", "content": {1: ("a", "b")}, "tags": ("t",)})
    await ws.run("agent", command)
    live = ws.context("agent")["d0, 1, 0"]
    assert live is not None
    async with await Workspace.open(ws.path, watch=False) as reopened:
        replayed = reopened.context("agent")["d0, 1, 0"]
        assert replayed is not None
        assert (live.content, live.tags) == (replayed.content, replayed.tags)
        assert live.content == {"1": ["a", "b"]}


async def test_an_unknown_context(ws: Workspace) -> None:
    error = await refused(ws, lambda: ws.add_message("ghost", "user", "hi"), "UNKNOWN_CONTEXT")
    assert "'ghost'" in error.message and "contexts: agent" in error.message
    await refused(ws, lambda: ws.select("ghost", "*"), "UNKNOWN_CONTEXT")
    await refused(ws, lambda: ws.render("ghost"), "UNKNOWN_CONTEXT")


@pytest.mark.parametrize(
    "name",
    [
        "",
        "bad name",
        "-leading-dash",
        "a" * 65,
        "ctx/../x",
        "naïve",
        "a\nb",
        "agent\x00",
        "agent\n",
    ],
)
async def test_an_invalid_context_name(ws: Workspace, name: str) -> None:
    error = await refused(ws, lambda: ws.create_context(name), "INVALID_NAME")
    assert repr(name) in error.message


async def test_a_context_that_exists_already(ws: Workspace) -> None:
    await refused(ws, lambda: ws.create_context("agent"), "CONTEXT_EXISTS")


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda ws: ws.at_snapshot("agent", "n9999"), "UNKNOWN_SNAPSHOT"),
        (lambda ws: ws.at_episode("agent", 42), "UNKNOWN_SNAPSHOT"),
        (lambda ws: ws.select("agent", "@t-99 *"), "UNKNOWN_SNAPSHOT"),
        (lambda ws: ws.select("agent", "@snap:n2 *"), "UNKNOWN_SNAPSHOT"),
        (lambda ws: ws.select("agent", "d0, (1"), "INVALID_SELECTOR"),
        (lambda ws: ws.render("agent", "poster"), "INVALID_COMMAND"),
        (lambda ws: ws.diff("agent", "n9999"), "UNKNOWN_SNAPSHOT"),
    ],
)
async def test_bad_queries(
    ws: Workspace, call: Callable[[Workspace], Awaitable[Any]], code: str
) -> None:
    await refused(ws, lambda: call(ws), code)
