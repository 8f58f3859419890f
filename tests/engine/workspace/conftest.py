"""Shared helpers for the workspace tests: a clock the test sets, a script of every operation,
a replay from scratch that ignores checkpoints, and helper processes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from engine.store import SqliteEventStore
from engine.workspace import CONTEXT_PREFIX, ContextProjection, Workspace, cadence
from tests.processes import start_script

HELPERS = Path(__file__).resolve().parent


class ManualClock:
    """Reads ``now``, which the test sets (or ``tick()`` moves on by a microsecond)."""

    def __init__(self, now: int = 1_700_000_000_000_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now

    def tick(self) -> int:
        self.now += 1_000
        return self.now


def small_checkpoints(
    monkeypatch: pytest.MonkeyPatch,
    *,
    every: int,
    archive_every: int,
    on_close: int,
    recent: int = 0,
) -> None:
    """Make the workspace checkpoint and archive after a few events instead of thousands,
    its checkpoints keeping ``recent`` snapshots (none: the past is rebuilt from archives)."""
    monkeypatch.setattr(cadence, "RECENT_SNAPSHOTS", recent)
    monkeypatch.setitem(cadence.INTERVALS, "context", cadence.Intervals(every, archive_every))
    monkeypatch.setitem(cadence.INTERVALS, "document", cadence.Intervals(every, None))
    monkeypatch.setattr(cadence, "CHECKPOINT_ON_CLOSE", on_close)


def text(content: str, **fields: Any) -> dict[str, Any]:
    return {"type": "text", "content": content, **fields}


# Every operation of the context, as the commands the workspace stores. Run on context "agent".
EVERY_OPERATION: list[dict[str, Any]] = [
    {"op": "insert", "selector": "d-1, 0, 0", "component": text("You are a careful assistant.")},
    {"op": "message", "role": "user", "text": "Hello"},
    {
        "op": "insert",
        "selector": "d0, 1, 0",
        "component": text("User prefers formal tone", key="prefs", tags=["profile", "style"]),
    },
    {"op": "insert", "selector": "d0, 2, 0", "component": text("Ask about follow-up", ttl=3)},
    {"op": "insert", "selector": "d0, 3, 0", "component": text("Mode: research", ttl=1, cad=1)},
    {
        "op": "insert",
        "selector": "d0, 4, 0",
        "component": text(
            "Draft, then summary",
            render_lifecycle={
                "stages": [
                    {"selector": "d0, 4, 0", "ttl": 1},
                    {"selector": "d0, 5, 0", "ttl": 1},
                ],
                "cycle": 2,
            },
        ),
    },
    {
        "op": "insert",
        "selector": "d-1, 1, 0",
        "component": {
            "type": "component",
            "content": {"tool": "search", "args": [1, 2.5, None]},
            "key": "tool",
            "priority": 3,
            "data": {"data_source": "bench"},
        },
    },
    {"op": "insert", "selector": "d0, 6, 0", "component": text("scratch", tags=["drop"])},
    {"op": "message", "role": "user", "text": "How are you?"},
    {"op": "update", "selector": "d1, 1, 0", "component": text("Formal, brief", key="prefs")},
    {"op": "update", "selector": "d1, 1", "mode": "append", "component": text("Also: metric")},
    {"op": "advance"},
    {"op": "message", "role": "assistant", "text": "Very well, thank you."},
    {"op": "delete", "selector": "+drop"},
    {"op": "delete", "key": "tool"},
    {"op": "seal", "trigger": "checkpoint"},
    {"op": "advance"},
    {"op": "insert", "selector": "d1, -1, 0", "component": text("before the message", ttl=1)},
    {"op": "advance"},
    {"op": "seal", "trigger": "review"},
]


async def run_every_operation(ws: Workspace, name: str = "agent") -> list[dict[str, Any]]:
    await ws.create_context(name)
    return [await ws.run(name, command) for command in EVERY_OPERATION]


def exports(ws: Workspace) -> dict[str, str]:
    """Every context's lossless export, by name."""
    return {info.name: ws.context(info.name).model_dump_json() for info in ws.contexts()}


async def replay_from_scratch(path: Path) -> dict[str, ContextProjection]:
    """Every context folded from the first event on, checkpoints and archives ignored."""
    projections: dict[str, ContextProjection] = {}
    async with await SqliteEventStore.open(path, watch=False) as store:
        async for batch in store.scan(0):
            for event in batch:
                name = event.stream.removeprefix(CONTEXT_PREFIX)
                if event.type == "context.created":
                    projections[name] = ContextProjection.fresh(event.time_ns)
                projections[name].replay(event)
    return projections


def file_state(path: Path) -> tuple[bytes, int, list[str]]:
    """The file's bytes, its modification time, and what lies beside it."""
    return path.read_bytes(), path.stat().st_mtime_ns, sorted(os.listdir(path.parent))


def start_helper(script: str, *args: object) -> subprocess.Popen[str]:
    """Start one of the helper scripts in this folder as a separate Python process."""
    return start_script(HELPERS / script, *args)


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


@pytest.fixture(params=["sqlite", "postgres"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a workspace is: a SQLite file, or a real PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "ws.pact")
    url: str = request.getfixturevalue("postgres_url")
    return url
