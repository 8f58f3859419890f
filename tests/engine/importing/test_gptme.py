"""``engine.importing.gptme``: a gptme conversation directory as a context, through what the
model was sent: each view a sealed snapshot whose provider rendering is that view, message for
message, and the log gptme sends from now as the working state."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from engine.importing.errors import BadLogLine, TruncatedLog
from engine.importing.gptme import Follower, Importing, Step, plan_conversation
from engine.importing.plan import Plan
from engine.masterlog.conversation import Conversation
from engine.workspace import Workspace

from .conftest import FIXTURES

Opened = Callable[..., Conversation]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def sent(path: Path) -> list[dict[str, str]]:
    """What gptme sends for a log: the role and content of each line, in order."""
    return [{"role": m["role"], "content": m["content"]} for m in lines(path)]


def tree_hash(directory: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(directory.rglob("*")):
        digest.update(str(path.relative_to(directory)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


async def provided(ws: Workspace, snapshot: str | None = None) -> list[dict[str, str]]:
    """What the context ``agent`` sends the model now, or as the snapshot ``snapshot`` held."""
    return (await ws.view("agent", snapshot)).render_provider()


@asynccontextmanager
async def imported(
    tmp_path: Path, conversation: Conversation, commands: list[dict[str, Any]] | None = None
) -> AsyncIterator[Workspace]:
    """A new workspace holding the context ``agent``, closed after: the conversation's import
    as ``ctx import`` runs it (the commands made as the logs are read, written a few at a time,
    batches of 4 here, in one transaction), or as much of it as ``commands``."""
    async with await Workspace.open(tmp_path / "ws.db", create=True, watch=False) as ws:
        if commands is None:
            await ws.create_context_streamed("agent", Importing(conversation), batch=4)
        else:
            await ws.create_context_with("agent", commands)
        yield ws


@asynccontextmanager
async def following(
    tmp_path: Path, conversation: Conversation
) -> AsyncIterator[tuple[Workspace, Follower]]:
    """The conversation imported as ``agent``, and a follower of it from there on."""
    plan = Plan()
    planned = plan_conversation(conversation, plan)
    async with imported(tmp_path, conversation, planned.commands) as ws:
        yield ws, Follower(conversation, plan, planned)


@pytest.mark.parametrize("fixture", ["conv-basic", "conv-branches"])
async def test_each_view_is_a_snapshot_the_model_was_sent_message_for_message(
    tmp_path: Path, copy: Callable[[str], Path], opened: Opened, fixture: str
) -> None:
    directory = copy(fixture)
    before = tree_hash(directory)
    conversation = opened(directory)
    views = sorted((directory / "views").glob("compacted-*.jsonl"))
    assert views  # every fixture was compacted at least once
    async with imported(tmp_path, conversation) as ws:
        entries = ws.snapshots("agent")
        assert [e.trigger for e in entries] == [view.stem for view in views]
        for entry, view in zip(entries, views, strict=True):
            assert await provided(ws, entry.id) == sent(view), view.name
        name = (directory / "views" / ".current").read_text().strip()
        current = directory / "views" / f"{name}.jsonl"
        assert await provided(ws) == sent(current)
    # Reopened from the log alone: the same context (the import replays).
    async with await Workspace.open(tmp_path / "ws.db", watch=False) as ws:
        assert await provided(ws) == sent(current)
    assert tree_hash(directory) == before  # nothing written into the gptme directory


async def test_without_a_current_view_the_context_is_the_master_log(
    tmp_path: Path, copy: Callable[[str], Path], opened: Opened
) -> None:
    directory = copy("conv-branches")
    (directory / "views" / ".current").unlink()  # a session on the master (switch_to_master)
    async with imported(tmp_path, opened(directory)) as ws:
        assert await provided(ws) == sent(directory / "conversation.jsonl")
        assert [e.trigger for e in ws.snapshots("agent")] == ["compacted-001", "compacted-002"]


async def test_messages_turns_tool_results_and_the_system_prompt(
    tmp_path: Path, copy: Callable[[str], Path], opened: Opened
) -> None:
    directory = copy("conv-basic")
    master = lines(directory / "conversation.jsonl")
    async with imported(tmp_path, opened(directory)) as ws:
        context = ws.context("agent")
        prompt = context["d-1, 0, 0"]
        assert prompt is not None and prompt.item is not None
        assert prompt.item.content == master[0]["content"]
        # One turn per user or assistant message; gptme's tool results sit with the turn that
        # ran the tool (slot 1), in order.
        turns = [m for m in master if m["role"] in ("user", "assistant")]
        assert context.history_depth + 1 == len(turns)
        node = context[f"d{len(turns) - 2}, 1, 0"]  # master line 4, after line 3's turn
        assert node is not None and node.item is not None
        tool = node.item
        assert tool.role == "system"
        assert tool.content.startswith("[Large tool output removed - 2362 tokens]")
        assert tool.data["source"]["master_line"] == 4


async def test_a_compacted_message_carries_its_reference_and_saved_output(
    tmp_path: Path, copy: Callable[[str], Path], opened: Opened
) -> None:
    directory = copy("conv-basic")
    facts = json.loads((FIXTURES / "references.json").read_text())
    basic = next(c for c in facts["conversations"] if c["directory"] == "conv-basic")
    async with imported(tmp_path, opened(directory)) as ws:
        items = {
            n.item.data["source"]["line"]: n.item
            for n in await ws.select("agent", ".text")
            if n.item is not None and n.item.data.get("source", {}).get("references")
        }
        expected = {ref["line"]: ref for ref in basic["references"]}
        assert sorted(items) == sorted(expected)
        for line, item in items.items():
            [carried] = item.data["source"]["references"]
            assert carried["bytes"] == expected[line]["bytes"]
            assert carried["preview"] == expected[line]["preview"]
            assert carried["kind"] == expected[line]["kind"]
            if carried["kind"] == "tool-output":
                assert carried["saved_output"] == expected[line]["tool_output"]
                assert (directory / carried["saved_output"]).is_file()


async def test_the_item_before_its_compaction_held_the_original(
    tmp_path: Path, copy: Callable[[str], Path], opened: Opened
) -> None:
    directory = copy("conv-basic")
    master = lines(directory / "conversation.jsonl")
    conversation = opened(directory)
    plan = Plan()
    commands = plan_conversation(conversation, plan).commands
    seal = next(i for i, c in enumerate(commands) if c["op"] == "seal")
    replaced = [c for c in commands[:seal] if c.get("mode") == "replace"]
    # The 4 references and the stale stub: each compacted in place, where its original sat.
    assert len(replaced) == 5
    first = next(i for i, c in enumerate(commands) if c.get("mode") == "replace")
    async with imported(tmp_path, conversation, commands[:first]) as ws:
        rendered = await provided(ws)
        # Up to gptme's status message, the messages the master log holds.
        assert rendered == [{"role": m["role"], "content": m["content"]} for m in master[:21]]


def broken_line(directory: Path, name: str, line: int, text: bytes) -> None:
    path = directory / name
    data = path.read_bytes().splitlines(keepends=True)
    data[line - 1] = text
    path.write_bytes(b"".join(data))


@pytest.mark.parametrize(
    ("name", "line", "text", "error", "said"),
    [
        ("conversation.jsonl", 5, b"{not json\n", BadLogLine, "conversation.jsonl:5: not JSON"),
        ("conversation.jsonl", 3, b"\n", BadLogLine, "conversation.jsonl:3: a blank line"),
        (
            "views/compacted-001.jsonl",
            7,
            b'{"role": "tool", "content": "x"}\n',
            BadLogLine,
            "views/compacted-001.jsonl:7: role 'tool'",
        ),
    ],
)
def test_a_bad_line_is_an_error_naming_the_file_and_line(
    copy: Callable[[str], Path],
    opened: Opened,
    name: str,
    line: int,
    text: bytes,
    error: type[Exception],
    said: str,
) -> None:
    directory = copy("conv-basic")
    broken_line(directory, name, line, text)
    with pytest.raises(error) as raised:
        plan_conversation(opened(directory))
    assert str(raised.value).startswith(f"{error.code}: {said}")  # type: ignore[attr-defined]


def test_the_first_commands_come_before_the_logs_are_read_to_their_end(
    copy: Callable[[str], Path], opened: Opened
) -> None:
    directory = copy("conv-basic")
    broken_line(directory, "conversation.jsonl", 20, b"{not json\n")
    commands = iter(Importing(opened(directory)))
    first = [next(commands) for _ in range(3)]  # the log's bad line 20 not read yet
    assert first[0]["op"] == "update" and first[0]["selector"] == "d-1, 0"  # the system prompt
    with pytest.raises(BadLogLine) as raised:
        list(commands)
    assert raised.value.details["line"] == 20


def test_a_cut_off_last_line_is_an_error_naming_it(
    copy: Callable[[str], Path], opened: Opened
) -> None:
    directory = copy("conv-basic")
    master = directory / "conversation.jsonl"
    master.write_bytes(master.read_bytes()[:-40])  # the last line cut short, no newline
    with pytest.raises(TruncatedLog) as raised:
        plan_conversation(opened(directory))
    assert raised.value.message.startswith("conversation.jsonl:22: the last line is cut off")
    assert raised.value.details["line"] == 22


# -- following ----------------------------------------------------------------------------------
def append(path: Path, message: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as file:
        file.write(json.dumps(message) + "\n")


async def test_following_takes_each_appended_message_as_one_event(
    tmp_path: Path, copy: Callable[[str], Path], opened: Opened
) -> None:
    directory = copy("conv-basic")
    conversation = opened(directory)
    async with following(tmp_path, conversation) as (ws, follower):
        view = directory / "views" / "compacted-001.jsonl"
        new = [
            {"role": "user", "content": "Push it, please."},
            {"role": "assistant", "content": "```shell\ngit push\n```"},
            {"role": "system", "content": "Ran command: `git push`\n\nok"},
        ]
        for message in new:  # gptme's dual-write: the master and the active view
            append(directory / "conversation.jsonl", message)
            append(view, message)
        step = follower.step()
        assert [e["event"] for e in step.events] == ["message"] * 3
        assert [e["line"] for e in step.events] == [23, 24, 25]
        assert len(step.commands) == 3  # one event per message
        await ws.run_many("agent", step.commands)
        assert await provided(ws) == sent(view)
        assert follower.step().commands == []  # nothing new: nothing done
        raw = (json.dumps({"role": "user", "content": "half written"}) + "\n").encode()
        for log in (directory / "conversation.jsonl", view):
            with log.open("ab") as file:
                file.write(raw[:15])  # gptme in the middle of its write
        assert follower.step().events == []  # left for the next look, not an error
        for log in (directory / "conversation.jsonl", view):
            with log.open("ab") as file:
                file.write(raw[15:])
        [event] = follower.step().events
        assert (event["line"], event["first_line"]) == (26, "half written")
        with view.open("ab") as file:
            file.write(b"[1, 2]\n")  # no message gptme writes
        [event] = follower.step().events
        assert event["event"] == "refused" and event["code"] == "BAD_LOG_LINE"
        assert event["what"].startswith("views/compacted-001.jsonl:27: a JSON list")
        append(view, {"role": "user", "content": "later"})
        assert follower.step() == Step()  # nothing more is taken


async def test_a_rewrite_of_the_followed_log_is_said_and_not_merged(
    tmp_path: Path, copy: Callable[[str], Path], opened: Opened
) -> None:
    directory = copy("conv-basic")
    (directory / "views" / ".current").unlink()  # gptme on the master log
    conversation = opened(directory)
    async with following(tmp_path, conversation) as (ws, follower):
        master = directory / "conversation.jsonl"
        held = await provided(ws)
        # gptme's undo of 2: the file rewritten without its last two lines, and recorded.
        master.write_bytes(b"".join(master.read_bytes().splitlines(keepends=True)[:-2]))
        append(directory / "events.jsonl", {"type": "undo", "seq": 99, "payload": {"n": 2}})
        step = follower.step()
        [event] = step.events
        assert event["event"] == "rewritten" and event["held"] is True
        assert event["what"] == "undo: lines 21 to 22 removed"
        assert step.commands == []
        append(master, {"role": "user", "content": "after the undo"})
        assert follower.step().commands == []  # held: never silently merged
        assert await provided(ws) == held


async def test_a_compaction_while_following_is_sealed_as_its_view(
    tmp_path: Path, copy: Callable[[str], Path], opened: Opened
) -> None:
    """conv-branches as it was after its first compaction (compacted-001 alone, on it), then
    gptme's second compaction appearing: the follower seals it as gptme wrote it."""
    directory = copy("conv-branches")
    later = directory / "views" / "compacted-002.jsonl"
    kept = later.read_bytes()
    later.unlink()
    (directory / "views" / ".current").write_text("compacted-001")
    conversation = opened(directory)
    async with following(tmp_path, conversation) as (ws, follower):
        later.write_bytes(kept)
        (directory / "views" / ".current").write_text("compacted-002")
        step = follower.step()
        assert step.events[0] == {
            "event": "compacted",
            "view": "views/compacted-002.jsonl",
            "snapshot": "compacted-002",
        }
        await ws.run_many("agent", step.commands)
        entries = ws.snapshots("agent")
        assert [e.trigger for e in entries] == ["compacted-001", "compacted-002"]
        assert await provided(ws, entries[-1].id) == sent(later)
        assert await provided(ws) == sent(later)
