"""``pact-tui backup`` between an SQLite file and a PostgreSQL database, both ways: the copy
holds the same events and checkpoints, verifies (deeply too), and replays to the same state."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from engine.workspace import Workspace
from pact_tui.demo import create_demo
from pact_tui.screenshot import fixed_clock

from .conftest import cli


def state(where: str | Path) -> dict[str, Any]:
    return asyncio.run(_state(where))


def ok(*args: object) -> str:
    ran = cli(*args)
    assert (ran.code, ran.err) == (0, ""), ran
    return ran.out


async def _state(where: str | Path) -> dict[str, Any]:
    """What a workspace shows, rebuilt from its log: every context's provider messages and
    tree, every document's markdown, and the events' places and hashes."""
    async with await Workspace.open(where, watch=False, read_only=True) as workspace:
        contexts = {
            info.name: (
                list(workspace.context(info.name).provider_messages()),
                workspace.context(info.name).current_episode,
            )
            for info in workspace.contexts()
        }
        documents = {}
        for name in await workspace.document_names():
            projection = await workspace.load_document(name)
            documents[name] = projection.doc.markdown()
        events = [(e.seq, e.stream, e.stream_seq, e.hash) for e in await workspace.store.read()]
        checkpoints = await workspace.store.checkpoints()
    return {"contexts": contexts, "documents": documents, "events": events,
            "checkpoints": checkpoints}  # fmt: skip


def files(folder: Path) -> list[str]:
    """The files in ``folder``, but for those SQLite keeps beside the demo workspace."""
    return sorted(p.name for p in folder.iterdir() if p.name not in SIDE_FILES)


SIDE_FILES = {"demo.pact-wal", "demo.pact-shm"}


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    path = tmp_path / "demo.pact"
    asyncio.run(create_demo(path, clock=fixed_clock()))
    return path


def test_a_file_backed_up_into_a_database_and_back_is_the_same_workspace(
    demo: Path, postgres_url: str, tmp_path: Path
) -> None:
    original = state(demo)
    assert original["contexts"] and original["documents"] and original["checkpoints"]

    said = ok("backup", demo, postgres_url)
    events = len(original["events"])
    assert said.startswith(f"backed up {demo} to postgresql://postgres@/test_")
    assert f": {events} events and {len(original['checkpoints'])} checkpoint(s), " in said
    assert said.endswith("; chain intact\n")
    assert state(postgres_url) == original
    assert ok("verify", "--deep", "--no-record", postgres_url).splitlines()[-1].startswith("ok: ")

    back = tmp_path / "back.pact"
    said = ok("backup", postgres_url, back)
    counts = f"{events} events and {len(original['checkpoints'])} checkpoint(s)"
    assert said.endswith(f"to {back}: {counts}, {back.stat().st_size} bytes; chain intact\n")
    assert state(back) == original
    assert ok("verify", "--deep", "--no-record", back).splitlines()[-1].startswith("ok: ")
    assert files(tmp_path) == ["back.pact", "demo.pact"]


def test_a_backup_never_lands_on_a_workspace_unless_told(
    demo: Path, postgres_url: str, tmp_path: Path
) -> None:
    ok("ctx", "create", postgres_url, "other")
    before = state(postgres_url)
    ran = cli("backup", demo, postgres_url)
    assert ran.code == 1 and ran.out == ""
    assert ran.err.startswith("pact-tui: DESTINATION_EXISTS: the database holds a workspace")
    assert state(postgres_url) == before

    ok("backup", demo, postgres_url, "--force")
    assert state(postgres_url) == state(demo)

    taken = tmp_path / "taken.pact"
    taken.write_text("mine")
    ran = cli("backup", postgres_url, taken)
    assert ran.code == 1 and ran.err.startswith("pact-tui: DESTINATION_EXISTS: ")
    assert taken.read_text() == "mine"
    assert files(tmp_path) == ["demo.pact", "taken.pact"]


def test_a_source_that_is_no_workspace_copies_nothing(postgres_url: str, tmp_path: Path) -> None:
    ran = cli("backup", postgres_url, tmp_path / "copy.pact")
    assert ran.code == 1 and ran.err.startswith("pact-tui: WORKSPACE_NOT_FOUND: ")
    assert list(tmp_path.iterdir()) == []
