from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from engine.store import NewEvent, SqliteEventStore
from tests.processes import start_script

HELPERS = Path(__file__).resolve().parent


class SteppingClock:
    """Deterministic nanoseconds: 1000, 2000, 3000..."""

    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        self.now += 1000
        return self.now


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path / "workspace.pact"


@pytest.fixture
async def store(workspace: Path) -> AsyncIterator[SqliteEventStore]:
    opened = await SqliteEventStore.open(workspace, create=True, clock=SteppingClock())
    yield opened
    await opened.close()


def events(stream: str, count: int, start: int = 0) -> list[NewEvent]:
    return [
        NewEvent(stream, "noted", {"n": n, "text": f"note {n}"}, actor="tester")
        for n in range(start, start + count)
    ]


def start_helper(script: str, *args: object) -> subprocess.Popen[str]:
    """Start one of the helper scripts in this folder as a separate Python process."""
    return start_script(HELPERS / script, *args)
