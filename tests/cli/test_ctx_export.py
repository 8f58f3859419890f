"""``ctx export WS NAME --gptme DIR``: a context written as a gptme conversation folder, read
back with the project's own master-log reader (here) and by gptme 0.35.1 itself
(``test_gptme_loads.py``); a folder that holds anything is refused with nothing written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.masterlog.conversation import MASTER, Conversation
from engine.masterlog.lines import Message, parse_line

from .conftest import failed, ok

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gptme"

HOSTILE = "[b]bold[/b] [@click=app.quit]x[/] \x1b[31mred\x1b[0m\ttab"


def make_context(ws: Path, name: str = "agent") -> list[dict[str, Any]]:
    """A context with a system prompt, turns, a tool result and text of every kind; its
    provider rendering."""
    ok("ctx", "create", ws, name)
    ok("ctx", "insert", ws, name, "d-1, 0, 0", "You are gptme.\nBe brief.")
    ok("ctx", "user", ws, name, "Zoë's café feed from 東京湾 🚀 fails")
    ok("ctx", "assistant", ws, name, "```shell\npytest -q\n```")
    ok("ctx", "insert", ws, name, "d0, 1, 0", "Ran command: `pytest -q`\n\r\nexit 1")
    ok("ctx", "user", ws, name, HOSTILE)
    ok("ctx", "insert", ws, name, "d0, 0, 1", "a note after the message")
    provider: list[dict[str, Any]] = ok(
        "ctx", "print", ws, name, "--mode", "provider", "--json"
    ).data
    return provider


def read_back(directory: Path, cache: Path) -> list[Message]:
    """Every line of the master log, through the master-log reader (its byte index and its
    line parser): each must be a message."""
    with Conversation.open(directory, cache) as conversation:
        index = conversation.master
        messages = []
        for _line, raw in index.each(0, index.lines):
            parsed = parse_line(raw)
            assert isinstance(parsed, Message), parsed
            messages.append(parsed)
        assert index.partial == 0  # every line ends with its newline
        return messages


def test_a_context_is_written_as_a_conversation_the_master_log_reader_reads(
    tmp_path: Path,
) -> None:
    ws, out = tmp_path / "ws.db", tmp_path / "out" / "conv"
    out.parent.mkdir()
    provider = make_context(ws)
    ran = ok("ctx", "export", ws, "agent", "--gptme", out, "--json")
    assert ran.data == {"exported": "agent", "gptme": str(out), "messages": len(provider)}
    assert sorted(p.name for p in out.iterdir()) == [MASTER]
    assert sorted(p.name for p in out.parent.iterdir()) == ["conv"]  # no temporary left
    messages = read_back(out, tmp_path / "cache.sqlite")
    assert [(m.role, m.content) for m in messages] == [
        (entry["role"], entry["content"]) for entry in provider
    ]
    roles = ["system", "user", "assistant", "assistant", "user", "user"]
    assert [m.role for m in messages] == roles
    for message in messages:  # gptme's time: ISO 8601, naive
        assert message.timestamp is not None and "+" not in message.timestamp
        assert message.extra == {}
    # written as gptme writes a line: json.dumps' separators, non-ASCII escaped
    first_user = (out / MASTER).read_bytes().splitlines()[1]
    assert first_user.startswith(b'{"role": "user", "content": "Zo\\u00eb')
    text = ok("ctx", "export", ws, "agent", "--gptme", tmp_path / "again").out
    assert text == f"exported context 'agent' (6 messages) to {tmp_path / 'again'}\n"


def test_an_empty_folder_is_written_in_place(tmp_path: Path) -> None:
    ws, out = tmp_path / "ws.db", tmp_path / "empty"
    out.mkdir(mode=0o700)
    provider = make_context(ws)
    ok("ctx", "export", ws, "agent", "--gptme", out)
    assert len(read_back(out, tmp_path / "cache.sqlite")) == len(provider)
    assert out.stat().st_mode & 0o777 == 0o700  # the folder it replaced keeps its mode


def test_an_item_imported_from_gptme_keeps_gptmes_fields(tmp_path: Path) -> None:
    ws, out = tmp_path / "ws.db", tmp_path / "conv"
    ok("ctx", "create", ws, "agent")
    source = {
        "from": "gptme",
        "log": MASTER,
        "line": 1,
        "message": {
            "timestamp": "2026-03-14T09:12:05.123456",
            "pinned": True,
            "hide": True,
            "metadata": {"model": "openai/gpt-4o", "cost": 0.0041},
            "files": ["/etc/passwd"],  # not one gptme reads back without the file: not written
            "ephemeral_ttl": True,  # a boolean is no number of turns: not written
        },
    }
    component = {"content": "You are gptme.", "source": source}
    ok("ctx", "insert", ws, "agent", "d-1, 0, 0", "--component", json.dumps(component))
    bad_time = {"from": "gptme", "message": {"timestamp": "yesterday", "hide": "yes"}}
    component = {"content": "the first user message", "role": "user", "source": bad_time}
    ok("ctx", "user", ws, "agent", "hello")
    ok("ctx", "insert", ws, "agent", "d0, 1, 0", "--component", json.dumps(component))
    other = {"from": "messages", "message": {"name": "x", "tool_calls": []}}
    component = {"content": "an OpenAI tool result", "source": other}
    ok("ctx", "insert", ws, "agent", "d0, 1, 1", "--component", json.dumps(component))
    ok("ctx", "export", ws, "agent", "--gptme", out)
    lines = [json.loads(line) for line in (out / MASTER).read_text().splitlines()]
    assert lines[0] == {
        "role": "system",
        "content": "You are gptme.",
        "timestamp": "2026-03-14T09:12:05.123456",
        "pinned": True,
        "hide": True,
        "metadata": {"model": "openai/gpt-4o", "cost": 0.0041},
    }
    assert list(lines[0]) == ["role", "content", "timestamp", "pinned", "hide", "metadata"]
    for line in lines[1:]:  # a time gptme cannot read, a wrong type, another source's keys
        assert list(line) == ["role", "content", "timestamp"]
        assert line["timestamp"] != "yesterday"


def test_a_folder_that_holds_anything_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    ws = tmp_path / "ws.db"
    make_context(ws)
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine")
    before = sorted(p.name for p in tmp_path.iterdir())
    ran = failed("ctx", "export", ws, "agent", "--gptme", full, code="NOT_EMPTY")
    assert str(full) in ran.err and "is not empty" in ran.err
    ran = failed("ctx", "export", ws, "agent", "--gptme", full, "--json", code="NOT_EMPTY")
    assert ran.error["path"] == str(full)
    assert [p.name for p in full.iterdir()] == ["notes.txt"]
    assert (full / "notes.txt").read_text() == "mine"
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / ".lock").touch()  # a hidden file is something too
    failed("ctx", "export", ws, "agent", "--gptme", hidden, code="NOT_EMPTY")
    a_file = tmp_path / "file.jsonl"
    a_file.write_text("x")
    ran = failed("ctx", "export", ws, "agent", "--gptme", a_file, code="WRITE_FAILED")
    assert "is not a folder" in ran.err and a_file.read_text() == "x"
    nowhere = tmp_path / "missing" / "conv"
    ran = failed("ctx", "export", ws, "agent", "--gptme", nowhere, code="WRITE_FAILED")
    assert f"there is no folder {tmp_path / 'missing'}" in ran.err
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*before, "hidden", "file.jsonl"])
    failed("ctx", "export", ws, "nobody", "--gptme", tmp_path / "new", code="UNKNOWN_CONTEXT")
    assert not (tmp_path / "new").exists()


def test_an_imported_conversation_is_written_back_as_the_view_gptme_sends(
    tmp_path: Path,
) -> None:
    """``ctx import --gptme`` then ``ctx export --gptme``: the master log written is, byte for
    byte, the log gptme sends from (``views/.current``), for both fixtures."""
    ws = tmp_path / "ws.db"
    for name in ("conv-basic", "conv-branches"):
        ok("ctx", "import", ws, name, "--gptme", FIXTURES / name)
        ok("ctx", "export", ws, name, "--gptme", tmp_path / name)
        current = (FIXTURES / name / "views" / ".current").read_text().strip()
        sent = (FIXTURES / name / "views" / f"{current}.jsonl").read_bytes()
        assert (tmp_path / name / MASTER).read_bytes() == sent, name
