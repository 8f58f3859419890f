"""A workspace the previous release wrote opens, and reads the same from its checkpoint as from
a replay of its log: command forms that release accepted and this one refuses (or reads
otherwise) are read by the rules of then. The fixture is ``fixtures/v1-commands.pact``
(``fixtures/write_v1_commands.py`` says what is in it and which code wrote it)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from engine.context.errors import InvalidCommand, InvalidSelector, NotFound
from engine.store import SqliteEventStore
from engine.workspace import LEGACY_CHECKPOINT, Workspace

from .conftest import replay_from_scratch

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "v1-commands.pact"


async def test_commands_of_the_previous_release_read_the_same_from_a_checkpoint_and_the_log(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.pact"
    shutil.copy(FIXTURE, path)
    async with await SqliteEventStore.open(path, watch=False) as store:
        checkpoint = await store.load_checkpoint(LEGACY_CHECKPOINT)
        assert checkpoint is not None and 0 < checkpoint.seq < await store.head()
    replayed = (await replay_from_scratch(path))["agent"].context
    async with await Workspace.open(path, watch=False) as ws:
        assert ws.checkpoint_problem is None  # the checkpoint was used, then the tail replayed
        opened = ws.context("agent")
        assert opened.model_dump_json() == replayed.model_dump_json()
        assert (await ws.verify()).ok

        # ttl=0 lived as ttl=1 does, and is read as that from the checkpoint ("late") and from
        # the log ("later") alike
        for key in ("late", "later"):
            node = opened.get_by_key(key)
            assert node is not None and (node.ttl, node.remaining) == (1, 1), key
        staged = opened.get_by_key("staged")
        assert staged is not None and staged.stage == 1  # its ttl=0 first stage lasted one
        # a component typed "image" then was a "component"; what the model is sent is its
        # fields, not "null"
        image = opened.get_by_key("image")
        assert image is not None and image.node_type == "component"
        sent = [m["content"] for m in opened.render_provider()]
        assert "null" not in sent
        assert json.loads(next(t for t in sent if "example.org" in t)) == {
            "type": "component",
            "url": "https://example.org/a.png",
        }

        # what is appended now says which rules it was written by
        await ws.advance("agent")
        [event] = await ws.store.read(ws.head - 1)
        assert event.payload["v"] == 3
    assert (await replay_from_scratch(path))["agent"].context.model_dump_json() == (
        opened.model_dump_json()
    )


ACCEPTED = Path(__file__).resolve().parent / "fixtures" / "v1-accepted.pact"


async def test_what_the_previous_release_accepted_and_this_one_refuses_still_replays(
    tmp_path: Path,
) -> None:
    """fixtures/v1-accepted.pact (see write_v1_accepted.py) holds deletes that matched nothing,
    coordinates past the engine's range, a lone surrogate and a 70-bit integer: input refused
    today, in a log that must replay to what the previous release showed."""
    path = tmp_path / "old.pact"
    shutil.copy(ACCEPTED, path)
    shown_then = json.loads(ACCEPTED.with_suffix(".json").read_text())
    async with await Workspace.open(path, watch=False) as ws:
        assert (await ws.verify()).ok
        agent = ws.context("agent")
        assert json.loads(agent.model_dump_json()) == shown_then
        far = agent.get_by_key("far")
        assert far is not None and far.coordinates[1:] == (1, 1)  # clamped then: kept so
        head = ws.head

        # The same input now: each refused, nothing appended.
        refused: list[tuple[dict[str, object], type[Exception], str]] = [
            ({"op": "delete", "selector": "+no-such-tag"}, NotFound, "nothing matches"),
            (insert("d0, 1, 99999999999999999999999", "far"), InvalidSelector, "range"),
            (insert("d0, 99999999999999999999999, 0", "wide"), InvalidSelector, "range"),
            (insert("d0, 2, 0", "half \ud800 pair"), InvalidCommand, "lone surrogate"),
            (insert("d0, 3, 0", {"big": 2**70}, "data"), InvalidCommand, "engine's range"),
        ]
        for command, error, words in refused:
            with pytest.raises(error, match=words):
                await ws.run("agent", command)
        assert ws.head == head
        assert json.loads(ws.context("agent").model_dump_json()) == shown_then


def insert(selector: str, content: object, type_: str = "text") -> dict[str, object]:
    return {"op": "insert", "selector": selector, "component": {"type": type_, "content": content}}


RULES_2 = Path(__file__).resolve().parent / "fixtures" / "v2-rules.pact"


async def test_steps_the_rules_of_version_2_ran_replay_as_then(tmp_path: Path) -> None:
    """fixtures/v2-rules.pact (see write_v2_rules.py) holds steps the engine before issue 27
    ran by other rules than today's (a temporary item re-seated twice, a sticky renewed at its
    schedule's offset, changelogs whose ``before`` was read mid-step). Its events say version 2:
    they replay by those rules, to the state and the changelogs they recorded, and what is
    appended now runs by today's."""
    path = tmp_path / "old.pact"
    shutil.copy(RULES_2, path)
    replayed = (await replay_from_scratch(path))["agent"].context  # diverging would raise
    async with await Workspace.open(path, watch=False) as ws:
        assert ws.checkpoint_problem is None
        agent = ws.context("agent")
        assert agent.model_dump_json() == replayed.model_dump_json()
        where = {key: agent.get_by_key(key) for key in ("P", "Mode", "Note")}
        assert {key: node.coordinates for key, node in where.items() if node} == {
            "P": (2, 1, 0),
            "Mode": (1, 2, 0),  # the renewed Mode pushed Note after it (issue 27, exact 3)
            "Note": (1, 2, 1),
        }
        await ws.run("agent", {"op": "message", "role": "user", "text": "now"})
        [event] = await ws.store.read(ws.head - 1)
        assert event.payload["v"] == 3
    assert (await replay_from_scratch(path))["agent"].context.model_dump_json() == (
        agent.model_dump_json()
    )
