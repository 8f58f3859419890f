"""``pact-tui ctx import``: a gptme conversation directory or a messages list as a new context,
in one transaction; bad input is one typed line naming where, and nothing is appended; and
``--follow`` as a real process while a gptme directory is appended to."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.masterlog.lines import encode_message
from engine.store import SqliteEventStore

from ..pipes import lines_of
from .conftest import FIXTURES, REPO_ROOT, failed, ok

pytestmark = pytest.mark.usefixtures("cache")  # no test reads or writes the user's cache


def tree_hash(directory: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(directory.rglob("*")):
        digest.update(str(path.relative_to(directory)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


async def events(ws: Path) -> int:
    store = await SqliteEventStore.open(ws, create=False)
    try:
        return await store.head()
    finally:
        await store.close()


def event_count(ws: Path) -> int:
    import asyncio

    return asyncio.run(events(ws))


def sent(path: Path) -> list[dict[str, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [{"role": m["role"], "content": m["content"]} for m in map(json.loads, lines)]


@pytest.mark.parametrize("fixture", ["conv-basic", "conv-branches"])
def test_import_a_gptme_conversation(tmp_path: Path, fixture: str) -> None:
    directory = Path(shutil.copytree(FIXTURES / fixture, tmp_path / fixture))
    before = tree_hash(directory)
    ws = tmp_path / "ws.db"
    ran = ok("ctx", "import", ws, "agent", "--gptme", directory, "--json")
    views = sorted(p.stem for p in (directory / "views").glob("*.jsonl"))
    assert ran.data["snapshots"] == views
    current = (directory / "views" / ".current").read_text().strip()
    assert ran.data["log"] == f"views/{current}.jsonl"
    assert event_count(ws) == ran.data["events"]  # the creation and one per command
    provider = ok("ctx", "print", ws, "agent", "--mode", "provider", "--json").data
    assert provider == sent(directory / "views" / f"{current}.jsonl")
    for snapshot in ok("ctx", "snapshots", ws, "agent", "--json").data:
        at = ok("ctx", "print", ws, "agent", "--mode", "provider", "--json", "--at", snapshot["id"])
        assert at.data == sent(directory / "views" / f"{snapshot['trigger']}.jsonl")
    assert tree_hash(directory) == before  # nothing written into the gptme directory
    text = ok("ctx", "import", ws, "again", "--gptme", directory).out
    assert text.startswith(f"imported {len(provider)} messages from {directory}")


def test_a_bad_directory_appends_nothing(tmp_path: Path, basic: Path) -> None:
    ws = tmp_path / "ws.db"
    missing = tmp_path / "nowhere"
    failed("ctx", "import", ws, "agent", "--gptme", missing, code="NOT_A_CONVERSATION")
    assert not ws.exists()  # not even made
    lines = (basic / "conversation.jsonl").read_bytes().splitlines(keepends=True)
    lines[6] = b'{"role": "assistant", "content": "cut\n'
    (basic / "conversation.jsonl").write_bytes(b"".join(lines))
    ran = failed("ctx", "import", ws, "agent", "--gptme", basic, code="BAD_LOG_LINE")
    assert "conversation.jsonl:7: not JSON" in ran.err
    assert not ws.exists()
    ok("ctx", "create", ws, "other")
    count = event_count(ws)
    ran = failed("ctx", "import", ws, "agent", "--gptme", basic, "--json", code="BAD_LOG_LINE")
    assert ran.error["line"] == 7
    assert event_count(ws) == count
    failed("ctx", "import", ws, "other", "--gptme", FIXTURES / "conv-basic", code="CONTEXT_EXISTS")
    assert event_count(ws) == count


# -- messages lists -----------------------------------------------------------------------------
def built(ws: Path) -> None:
    ok("ctx", "create", ws, "agent")
    ok("ctx", "insert", ws, "agent", "d-1, 0, 0", "You are careful.")
    ok("ctx", "user", ws, "agent", "List the files.")
    ok("ctx", "assistant", ws, "agent", "Running ls.")
    ok(
        "ctx",
        "insert",
        ws,
        "agent",
        "d0, 1, 0",
        "README.md\nsetup.py",
        "--component",
        json.dumps({"role": "system", "content": "README.md\nsetup.py"}),
    )
    ok("ctx", "user", ws, "agent", "Thanks — and «ünïcode» 🚀?")
    ok("ctx", "assistant", ws, "agent", "Fine.")


@pytest.mark.parametrize("form", ["openai", "anthropic"])
def test_messages_round_trip_through_print(tmp_path: Path, form: str) -> None:
    ws = tmp_path / "ws.db"
    built(ws)
    printed = ok("ctx", "print", ws, "agent", "--mode", "messages", "--format", form).out
    given = tmp_path / "messages.json"
    given.write_text(printed, encoding="utf-8")
    ran = ok("ctx", "import", ws, "copy", "--messages", given, "--json")
    again = ok("ctx", "print", ws, "copy", "--mode", "messages", "--format", form).out
    assert json.loads(again) == json.loads(printed)
    assert ran.data["messages"] == len(json.loads(printed)["messages"]) + (form == "anthropic")


def test_tool_messages_sit_with_the_turn_that_called_them(tmp_path: Path) -> None:
    ws = tmp_path / "ws.db"
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "prompt"},
        {"role": "user", "content": "run ls"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        {"role": "assistant", "content": [{"type": "text", "text": "One file."}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t9", "content": "late result"},
                {"type": "text", "text": "ok"},
            ],
        },
    ]
    given = tmp_path / "m.json"
    given.write_text(json.dumps(messages))
    ok("ctx", "import", ws, "agent", "--messages", given)
    provider = ok("ctx", "print", ws, "agent", "--mode", "provider", "--json").data
    assert provider == [
        {"role": "system", "content": "prompt"},
        {"role": "user", "content": "run ls"},
        {"role": "assistant", "content": ""},
        {"role": "system", "content": "a.txt"},
        {"role": "assistant", "content": "One file."},
        {"role": "system", "content": "late result"},
        {"role": "user", "content": "ok"},
    ]
    [call] = ok("ctx", "select", ws, "agent", "d2, 0, 0", "--json").data
    assert call["data"]["source"]["message"]["tool_calls"][0]["id"] == "c1"
    [result] = ok("ctx", "select", ws, "agent", "d2, 1, 0", "--json").data
    assert result["data"]["source"]["message"] == {"tool_call_id": "c1"}


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("[1, 2", "not JSON: "),
        ('{"role": "user"}', "an object must hold 'messages'"),
        ('[{"role": "user", "content": "a"}, "b"]', "messages[1]: a message is a JSON object"),
        (
            '[{"role": "user", "content": "a"}, {"role": "robot", "content": "b"}]',
            "messages[1]: role 'robot' is not one of",
        ),
        ('[{"role": "user"}]', "messages[0]: no 'content'"),
        (
            '[{"role": "user", "content": [{"type": "text", "text": 3}]}]',
            "messages[0].content[0]: a text block's 'text' must be a string",
        ),
        ('[{"role": "user", "content": 7}]', "messages[0]: content is a string or a list"),
    ],
)
def test_a_bad_messages_list_names_the_bad_message(tmp_path: Path, given: str, said: str) -> None:
    ws = tmp_path / "ws.db"
    ok("ctx", "create", ws, "other")
    count = event_count(ws)
    path = tmp_path / "m.json"
    path.write_text(given)
    ran = failed("ctx", "import", ws, "agent", "--messages", path, code="BAD_MESSAGES")
    assert said in ran.err
    assert event_count(ws) == count


# -- following ----------------------------------------------------------------------------------
def _lines(process: subprocess.Popen[str]) -> Iterator[dict[str, Any]]:
    """JSON lines of a process's stdout as they come (30 s at most for each)."""
    for line in lines_of(process, "the follower"):
        yield json.loads(line)


def test_follow_keeps_the_context_in_step_as_gptme_appends(
    tmp_path: Path, basic: Path, cache: Path
) -> None:
    ws = tmp_path / "ws.db"
    env = {**os.environ, "PACT_TUI_CACHE": str(cache)}
    command = [sys.executable, "-m", "pact_tui", "ctx", "import", str(ws), "agent"]
    command += ["--gptme", str(basic), "--follow", "--json"]
    view = basic / "views" / "compacted-001.jsonl"
    with subprocess.Popen(
        command, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as process:
        try:
            said = _lines(process)
            assert next(said)["snapshots"] == ["compacted-001"]
            assert next(said) == {"event": "following", "log": "views/compacted-001.jsonl"}
            for n, role in enumerate(["user", "assistant"]):
                line = encode_message({"role": role, "content": f"append {n} 🚢"})
                for log in (basic / "conversation.jsonl", view):  # gptme's dual-write
                    with log.open("ab") as file:
                        file.write(line)
                event = next(said)
                assert (event["event"], event["line"], event["role"]) == ("message", 23 + n, role)
            provider = ok("ctx", "print", ws, "agent", "--mode", "provider", "--json").data
            assert provider == sent(view)
            # An undo of the view followed: said as what it is, and not merged.
            lines = view.read_bytes().splitlines(keepends=True)
            view.write_bytes(b"".join(lines[:-1]))
            event = next(said)
            assert (event["event"], event["log"], event["held"]) == (
                "rewritten",
                "views/compacted-001.jsonl",
                True,
            )
            assert ok("ctx", "print", ws, "agent", "--mode", "provider", "--json").data == provider
        finally:
            process.terminate()
