"""Property test: a workspace file is a lossless, replayable record of its contexts.

Random command sequences (valid and invalid) run on two contexts of a real workspace file, which
is closed and reopened at random points, with checkpoint and archive intervals drawn per example.
Beside it, plain in-memory ``Context`` objects (``SequentialIds()``, a clock fixed to the same
times) run the same commands. After every command and every reopening:

- a refused command raises the same error code in both, and changes neither (event head, export);
- every context's export is byte-identical to its in-memory twin;

and at the end, after a last reopening, every snapshot reached through ``at_snapshot`` (rebuilt
from archives when the live context was loaded from a checkpoint) exports exactly what the
in-memory context's ``history.at_snapshot(id)`` does, and the snapshot index matches its history.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.context import Context, ContextError, ContextResult, SequentialIds
from engine.context.clock import FixedClock
from engine.context.commands import apply_command, parse_command
from engine.workspace import Workspace, cadence

from .conftest import ManualClock

NAMES = ("alpha", "beta")
START_NS = 1_700_000_000_000_000_000

# ------------------------------------------------------------------------------------------
# strategies: commands as the workspace stores them, many of them invalid
# ------------------------------------------------------------------------------------------
valid_coordinates = st.tuples(st.integers(-1, 2), st.integers(-2, 3), st.integers(-2, 2)).map(
    lambda t: f"d{t[0]}, {t[1]}, {t[2]}"
)
bad_coordinates = st.sampled_from(
    ["d0, 1", "@t-1 d0, 1, 0", "d0, x, 0", "d0, 1.5, 0", "d-2, 0, 0", "d9, 0, 0", "(d0"]
)
coordinates = st.one_of(*[valid_coordinates] * 4, bad_coordinates)
slots = st.one_of(
    st.tuples(st.integers(-1, 2), st.integers(-2, 3)).map(lambda t: f"d{t[0]}, {t[1]}"),
    st.sampled_from(["d0, 1, 0", "@e1 d0, 1"]),
)
queries = st.sampled_from(
    ["+t1", "#k1", "#k2", ".text", "d1, *, *", "^seq +t2", "d0, 1, 0", "@t-1 *", "d0, ,", "*"]
)
stage = st.tuples(st.integers(-1, 1), st.integers(-2, 3), st.integers(0, 3)).map(
    lambda t: {"selector": f"d{t[0]}, {t[1]}, 0", "ttl": t[2]}
)


@st.composite
def components(draw: st.DrawFn) -> dict[str, Any]:
    component: dict[str, Any] = {"type": "text", "content": draw(st.sampled_from(["a", "b", "ü"]))}
    if key := draw(st.sampled_from([None, "k1", "k2"])):
        component["key"] = key
    if tags := draw(st.lists(st.sampled_from(["t1", "t2"]), unique=True, max_size=2)):
        component["tags"] = tags
    kind = draw(
        st.sampled_from(["permanent", "ttl", "ttl", "cadence", "lifecycle", "lifecycle", "invalid"])
    )
    if kind == "ttl":
        component["ttl"] = draw(st.integers(0, 3))
    elif kind == "cadence":
        component["ttl"] = draw(st.sampled_from([None, 1, 2]))
        component["cad"] = draw(st.integers(1, 3))
    elif kind == "lifecycle":
        stages = draw(st.lists(stage, min_size=1, max_size=3))
        if draw(st.booleans()):
            stages[-1]["ttl"] = None
        component["render_lifecycle"] = {
            "stages": stages,
            "cycle": draw(st.sampled_from([False, True, 2])),
        }
    elif kind == "invalid":
        component.update(
            draw(st.sampled_from([{"ttl": -1}, {"cad": 0}, {"content": 3}, {"ttl": "soon"}]))
        )
    return component


inserts = st.builds(
    lambda s, c: {"op": "insert", "selector": s, "component": c}, coordinates, components()
)
messages = st.builds(
    lambda role, text: {"op": "message", "role": role, "text": text},
    st.sampled_from(["user", "assistant", "user", "robot"]),
    st.sampled_from(["hi", "ok", ""]),
)
commands = st.one_of(
    *[inserts] * 6,
    *[messages] * 3,
    st.just({"op": "advance"}),
    st.just({"op": "advance"}),
    st.builds(
        lambda s, c: {"op": "update", "selector": s, "component": c}, coordinates, components()
    ),
    st.builds(
        lambda s, c: {"op": "update", "selector": s, "component": c, "mode": "append"},
        slots,
        components(),
    ),
    st.builds(lambda q: {"op": "delete", "selector": q}, queries),
    st.builds(lambda k: {"op": "delete", "key": k}, st.sampled_from(["k1", "k2", "nope"])),
    st.builds(
        lambda t: {"op": "seal", "trigger": t}, st.sampled_from(["checkpoint", "review", ""])
    ),
    st.sampled_from([{"op": "explode"}, {"op": "insert", "selector": "d0, 1, 0"}, {}]),
)
steps = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(NAMES), commands),
        st.tuples(st.sampled_from(NAMES), commands),
        st.tuples(st.sampled_from(NAMES), commands),
        st.tuples(st.sampled_from(NAMES), commands),
        st.just(("reopen", None)),
    ),
    min_size=10,
    max_size=60,
)
# (checkpoint every N events, archive every N events of a context, checkpoint on close after N)
intervals = st.tuples(st.integers(1, 12), st.integers(1, 8), st.integers(0, 10))


# ------------------------------------------------------------------------------------------
# the model: plain contexts, the same commands, the same times
# ------------------------------------------------------------------------------------------
class Model:
    def __init__(self) -> None:
        # The workspace creates each context at its context.created event's time.
        self.clock = FixedClock(START_NS)
        self.contexts = {name: Context(ids=SequentialIds(), clock=self.clock) for name in NAMES}

    def run(self, name: str, command: dict[str, Any], now: int) -> ContextResult | ContextError:
        self.clock.now = now
        try:
            parsed, _stored = parse_command(command)
            return apply_command(self.contexts[name], parsed)
        except ContextError as error:
            return error


async def check_exports(ws: Workspace, model: Model) -> None:
    for name in NAMES:
        assert ws.context(name).model_dump_json() == model.contexts[name].model_dump_json(), name


async def check_history(ws: Workspace, model: Model) -> None:
    for name in NAMES:
        history = model.contexts[name].history
        entries = ws.snapshots(name)
        assert [(e.id, e.episode, e.trigger, e.created_at_ns) for e in entries] == [
            (s.id, s.episode, s.trigger, s.created_at_ns) for s in history
        ]
        for entry in entries:
            rebuilt = await ws.at_snapshot(name, entry.id)
            assert rebuilt.model_dump_json() == history.at_snapshot(entry.id).model_dump_json()


async def run_scenario(
    directory: Path, interval: tuple[int, int, int], script: list[tuple[str, Any]]
) -> None:
    path = directory / "workspace.pact"
    clock = ManualClock(START_NS)
    model = Model()

    async def open_workspace(create: bool = False) -> Workspace:
        return await Workspace.open(path, create=create, clock=clock, watch=False)

    ws = await open_workspace(create=True)
    try:
        for name in NAMES:
            await ws.create_context(name)
        for number, (name, command) in enumerate(script):
            if name == "reopen":
                await ws.close()
                ws = await open_workspace()
                await check_exports(ws, model)
                continue
            clock.now = START_NS + 1_000 * number
            expected = model.run(name, command, clock.now)
            head, before = ws.head, ws.context(name).model_dump_json()
            try:
                result = await ws.run(name, command)
            except ContextError as error:
                assert isinstance(expected, ContextError), (command, error)
                assert error.code == expected.code, (command, error, expected)
                assert (ws.head, ws.context(name).model_dump_json()) == (head, before)
                assert await ws.store.head() == head
            else:
                assert not isinstance(expected, ContextError), (command, expected)
                assert result == expected
                assert ws.head == head + 1
            await check_exports(ws, model)
        await ws.close()
        ws = await open_workspace()
        await check_exports(ws, model)
        await check_history(ws, model)
        assert (await ws.verify()).ok
    finally:
        await ws.close()


@settings(
    # PACT_PROPERTY_EXAMPLES=1000 for a longer hunt; the default keeps the suite fast
    max_examples=int(os.environ.get("PACT_PROPERTY_EXAMPLES", "100")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(interval=intervals, script=steps)
@pytest.mark.slow
def test_a_workspace_replays_to_the_in_memory_contexts(
    interval: tuple[int, int, int], script: list[tuple[str, Any]]
) -> None:
    every, archive_every, on_close = interval
    with (
        pytest.MonkeyPatch.context() as patch,
        tempfile.TemporaryDirectory(prefix="pact-ws-") as directory,
    ):
        patch.setitem(cadence.INTERVALS, "context", cadence.Intervals(every, archive_every))
        patch.setitem(cadence.INTERVALS, "document", cadence.Intervals(every, None))
        patch.setattr(cadence, "CHECKPOINT_ON_CLOSE", on_close)
        asyncio.run(run_scenario(Path(directory), interval, script))
