"""Files that are not usable workspaces, through ``Workspace.open``: a typed error that names the
file, and the file left exactly as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.workspace import Workspace

from .bad_files import BAD_FILES, state

pytestmark = pytest.mark.filterwarnings("error")


@pytest.mark.parametrize("kind", BAD_FILES)
async def test_a_bad_file_is_refused_and_left_untouched(tmp_path: Path, kind: str) -> None:
    maker, error_type, code, refused_on_create = BAD_FILES[kind]
    path = await maker(tmp_path / "workspace.pact")
    before = state(path)

    with pytest.raises(error_type) as refused:
        await Workspace.open(path, watch=False)
    assert refused.value.code == code
    assert refused.value.path == str(path)
    assert str(path) in str(refused.value)
    assert str(refused.value).startswith(f"{code}: ")
    assert "\n" not in str(refused.value)
    assert state(path) == before

    if refused_on_create:
        with pytest.raises(error_type):
            await Workspace.open(path, create=True, watch=False)
        assert state(path) == before


@pytest.mark.parametrize("kind", ["empty-file", "missing-file"])
async def test_create_makes_a_workspace_where_there_was_none(tmp_path: Path, kind: str) -> None:
    maker = BAD_FILES[kind][0]
    path = await maker(tmp_path / "workspace.pact")
    async with await Workspace.open(path, create=True, watch=False) as ws:
        await ws.create_context("agent")
        await ws.add_message("agent", "user", "hello")
    async with await Workspace.open(path, watch=False) as ws:
        assert [(i.name, i.items) for i in ws.contexts()] == [("agent", 1)]
        assert (await ws.verify()).ok
