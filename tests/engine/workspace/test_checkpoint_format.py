"""Checkpoints: the compact form, written by orjson, with json for what orjson cannot write."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.workspace import Workspace

from .conftest import ManualClock, small_checkpoints


@pytest.mark.parametrize(
    "content",
    [
        {"big": 2**70, "negative": -(2**65)},  # beyond orjson's 64-bit integers
        {"text": "é ☃ \u2028", "float": 1e-7, "nested": [[], {}, None, True]},
    ],
)
async def test_a_checkpointed_context_reopens_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: dict[str, object]
) -> None:
    small_checkpoints(monkeypatch, every=1, archive_every=1_000, on_close=1)
    path = tmp_path / "w.pact"
    async with await Workspace.open(path, create=True, clock=ManualClock(), watch=False) as ws:
        await ws.create_context("agent")
        await ws.run("agent", {"op": "message", "role": "user", "text": "hi"})
        await ws.run(
            "agent",
            {
                "op": "insert",
                "selector": "d0, 1, 0",
                "component": {"type": "data", "content": content},
            },
        )
        export = ws.context("agent").model_dump_json()
        checkpointed = ws.head
    async with await Workspace.open(path, watch=False) as reopened:
        assert reopened.checkpoint_problem is None
        checkpoint = await reopened.store.load_checkpoint("workspace")
        assert checkpoint is not None and checkpoint.seq == checkpointed  # nothing was replayed
        assert reopened.context("agent").model_dump_json() == export
        assert reopened.context("agent")["d0, 1, 0"].content == content  # type: ignore[union-attr]


async def test_a_damaged_checkpoint_is_replaced_by_a_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_checkpoints(monkeypatch, every=1, archive_every=1_000, on_close=1)
    path = tmp_path / "w.pact"
    async with await Workspace.open(path, create=True, clock=ManualClock(), watch=False) as ws:
        await ws.create_context("agent")
        await ws.run("agent", {"op": "message", "role": "user", "text": "hi"})
        export = ws.context("agent").model_dump_json()
        # A checkpoint whose digest matches but whose content is not a checkpoint at all.
        await ws.store.save_checkpoint(
            "workspace", ws.head, b'{"version": 2, "contexts": {"agent": 7}}'
        )
        ws._checkpointed = ws.head  # type: ignore[attr-defined]  (do not overwrite it on close)
    async with await Workspace.open(path, watch=False) as reopened:
        assert reopened.checkpoint_problem is not None
        assert "replayed" in reopened.checkpoint_problem
        assert reopened.context("agent").model_dump_json() == export
