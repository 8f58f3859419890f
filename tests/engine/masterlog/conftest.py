"""Real gptme 0.35.1 conversation directories (tests/fixtures/gptme, see its README), copied
into a temporary directory per test so that a test may damage its copy."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.masterlog.conversation import Conversation

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "gptme"
FACTS: dict[str, Any] = json.loads((FIXTURES / "references.json").read_text())


def facts(name: str) -> dict[str, Any]:
    return next(c for c in FACTS["conversations"] if c["directory"] == name)


@pytest.fixture
def copy(tmp_path: Path) -> Callable[[str], Path]:
    def make(name: str) -> Path:
        target = tmp_path / "logs" / name
        shutil.copytree(FIXTURES / name, target)
        return target

    return make


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[Callable[[Path], Conversation]]:
    """Open a directory with a cache file in the test's directory (closed at the end)."""
    made: list[Conversation] = []

    def open_(directory: Path, cache: str = "index.sqlite") -> Conversation:
        conversation = Conversation.open(directory, tmp_path / cache)
        made.append(conversation)
        return conversation

    yield open_
    for conversation in made:
        conversation.close()


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def write_lines(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(lines))
