"""Every ``pact-tui ctx`` subcommand and ``pact-tui verify``: what the human output and the
``--json`` output say, checked against what the workspace holds afterwards."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from engine.workspace import Workspace
from pact_tui.cli import build_parser

from .conftest import Ran, cli, events, failed, ok, read_state

pytestmark = pytest.mark.filterwarnings("error")

PLACED = re.compile(r"^(?P<verb>.+) (?P<id>n\d+) at \((?P<coords>-?\d+,-?\d+,-?\d+)\)$")


def placed(ran_out: str, verb: str) -> tuple[str, list[int]]:
    """The id and coordinates of an ``inserted n4 at (0,1,0)`` line."""
    match = PLACED.match(ran_out.rstrip("\n"))
    assert match is not None and match["verb"] == verb, ran_out
    return match["id"], [int(c) for c in match["coords"].split(",")]


def select(path: Path, selector: str, name: str = "agent") -> list[dict[str, Any]]:
    """The nodes ``ctx select --json`` prints; it exits 0 with some, 1 with none."""
    ran = cli("ctx", "select", path, name, selector, "--json")
    nodes: list[dict[str, Any]] = ran.data
    assert (ran.code, ran.err) == (0 if nodes else 1, ""), ran
    return nodes


@pytest.fixture
def path(tmp_path: Path) -> Path:
    path = tmp_path / "agents.pact"
    ok("ctx", "create", path, "agent")
    return path


def test_create_and_list(tmp_path: Path) -> None:
    path = tmp_path / "new.pact"
    failed("ctx", "list", path, code="WORKSPACE_NOT_FOUND")
    assert not path.exists()

    assert ok("ctx", "create", path, "agent").out == f"created context 'agent' in {path}\n"
    assert ok("ctx", "create", path, "helper", "--json", "--actor", "me").data == {
        "created": "helper"
    }
    failed("ctx", "create", path, "agent", code="CONTEXT_EXISTS")
    ok("ctx", "user", path, "helper", "hello")

    rows = [line.split() for line in ok("ctx", "list", path).out.splitlines()]
    assert rows == [
        ["name", "episode", "items", "depth", "snapshots"],
        ["agent", "0", "0", "0", "0"],
        ["helper", "0", "1", "0", "0"],
    ]
    assert ok("ctx", "list", path, "--json").data == [
        {
            "name": "agent",
            "episode": 0,
            "items": 0,
            "depth": 0,
            "snapshots": 0,
            "forked_from": None,
        },
        {
            "name": "helper",
            "episode": 0,
            "items": 1,
            "depth": 0,
            "snapshots": 0,
            "forked_from": None,
        },
    ]
    # Each command is recorded under its actor (default "cli").
    assert [(e.stream, e.type, e.actor) for e in events(path)] == [
        ("ctx:agent", "context.created", "cli"),
        ("ctx:helper", "context.created", "me"),
        ("ctx:helper", "context.message", "cli"),
    ]


def test_list_of_a_workspace_without_contexts(tmp_path: Path) -> None:
    path = tmp_path / "empty.pact"

    async def make() -> None:
        async with await Workspace.open(path, create=True, watch=False):
            pass

    asyncio.run(make())
    assert ok("ctx", "list", path).out == "no contexts yet\n"
    assert ok("ctx", "list", path, "--json").data == []


def test_insert_with_every_option(path: Path) -> None:
    ran = ok("ctx", "insert", path, "agent", "d0, 1, 0", "prefs", "--key", "prefs",
             "--tag", "a,b", "--tag", "c", "--priority", "2")  # fmt: skip
    prefs, coords = placed(ran.out, "inserted")
    assert coords == [0, 1, 0]
    [node] = select(path, "#prefs")
    assert (node["id"], node["content"], node["tags"], node["priority"]) == (
        prefs, "prefs", ["a", "b", "c"], 2
    )  # fmt: skip

    ran = ok("ctx", "insert", path, "agent", "d0, 2, 0", "soon gone", "--ttl", "3", "--json")
    [node] = select(path, "d0, 2, 0")
    data = ran.data
    changes = data.pop("changes")  # the event's result: what the insert did, too
    assert data == {"id": node["id"], "coordinates": [0, 2, 0]}
    assert [(e["kind"], e["id"], e["after"]) for e in changes["entries"]] == [
        ("inserted", node["id"], [0, 2, 0])
    ]
    assert (node["content"], node["ttl"], node["cad"]) == ("soon gone", 3, None)

    sticky, _ = placed(
        ok("ctx", "insert", path, "agent", "d0, 3, 0", "mode", "--ttl", "1", "--cadence", "1").out,
        "inserted",
    )
    [node] = select(path, "d0, 3, 0")
    assert (node["id"], node["ttl"], node["cad"]) == (sticky, 1, 1)

    ok("ctx", "insert", path, "agent", "d0, 4, 0", "draft",
       "--stage", "d0, 4, 0:1", "--stage", "d0, 5, 0", "--cycle", "2")  # fmt: skip
    [node] = select(path, "d0, 4, 0")
    assert node["render_lifecycle"]["stages"] == [
        {"selector": "d0, 4, 0", "ttl": 1},
        {"selector": "d0, 5, 0", "ttl": None},
    ]
    assert node["render_lifecycle"]["cycle"] == 2

    component = {"type": "component", "content": {"tool": "search"}, "key": "tool"}
    ran = ok("ctx", "insert", path, "agent", "d-1, 1, 0", "--component", json.dumps(component))
    tool, coords = placed(ran.out, "inserted")
    assert coords == [-1, 1, 0]
    [node] = select(path, "#tool")
    assert (node["id"], node["node_type"], node["content"]) == (
        tool,
        "component",
        {"tool": "search"},
    )

    # The human listing shows all of it, one line per item in canonical order.
    lines = ok("ctx", "select", path, "agent", "*").out.splitlines()
    assert lines == [
        f'(-1,1,0)  component  {tool}  #tool  permanent  "{{\\"tool\\":\\"search\\"}}"',
        f'(0,1,0)  text  {prefs}  #prefs  +a  +b  +c  permanent  "prefs"',
        f'(0,2,0)  text  {select(path, "d0, 2, 0")[0]["id"]}  temporary  "soon gone"',
        f'(0,3,0)  text  {sticky}  sticky  "mode"',
        f'(0,4,0)  text  {select(path, "d0, 4, 0")[0]["id"]}  temporary  "draft"',
    ]


def test_update_and_delete(path: Path) -> None:
    prefs, _ = placed(
        ok("ctx", "insert", path, "agent", "d0, 1, 0", "formal", "--key", "prefs").out, "inserted"
    )
    ran = ok("ctx", "update", path, "agent", "d0, 1, 0", "formal, brief", "--key", "prefs")
    assert placed(ran.out, "replaced") == (prefs, [0, 1, 0])  # same id, same place
    ran = ok("ctx", "update", path, "agent", "d0, 1", "metric", "--mode", "append", "--json")
    data = ran.data
    appended = data["id"]
    assert data.pop("changes")["entries"][0]["after"] == [0, 1, 1]
    assert data == {"id": appended, "coordinates": [0, 1, 1]}
    assert [(n["id"], n["content"]) for n in select(path, "d0, 1, *")] == [
        (prefs, "formal, brief"),
        (appended, "metric"),
    ]

    assert ok("ctx", "delete", path, "agent", "d0, 1, 1").out == f"deleted 1: {appended}\n"
    deleted = ok("ctx", "delete", path, "agent", "--key", "prefs", "--json").data
    assert deleted["deleted"] == [prefs]
    assert [(e["kind"], e["id"], e["before"]) for e in deleted["changes"]["entries"]] == [
        ("deleted", prefs, [0, 1, 0])
    ]
    assert select(path, "*") == []
    ok("ctx", "insert", path, "agent", "d0, 1, 0", "x", "--tag", "t")
    ok("ctx", "insert", path, "agent", "d0, 2, 0", "y", "--tag", "t")
    ran = ok("ctx", "delete", path, "agent", "+t")
    assert re.fullmatch(r"deleted 2: n\d+ n\d+\n", ran.out)
    # Deleting nothing is refused and appends nothing (it appended an event before).
    head = ok("verify", path, "--json").data["checked"]
    assert (
        "nothing matches '+t'" in failed("ctx", "delete", path, "agent", "+t", code="NOT_FOUND").err
    )
    assert ok("verify", path, "--json").data["checked"] == head

    failed("ctx", "delete", path, "agent", code="USAGE")
    failed("ctx", "delete", path, "agent", "d0, 1, 0", "--key", "k", code="USAGE")


def test_messages_advance_seal_and_snapshots(path: Path) -> None:
    user, coords = placed(ok("ctx", "user", path, "agent", "Hello").out, "user message")
    assert coords == [0, 0, 0]
    ran = ok("ctx", "assistant", path, "agent", "Hi there", "--json")
    assert ran.data["coordinates"] == [0, 0, 0]
    assert [(n["id"], n["coordinates"], n["role"]) for n in select(path, "d*, 0, 0")] == [
        (user, [1, 0, 0], "user"),
        (ran.data["id"], [0, 0, 0], "assistant"),
    ]

    episode_one = ok("ctx", "advance", path, "agent").out
    match = re.fullmatch(r"episode 1 \(snapshot (n\d+)\)\n", episode_one)
    assert match is not None
    first = match[1]
    ran = ok("ctx", "advance", path, "agent", "--steps", "2", "--json")
    assert [step["episode"] for step in ran.data] == [2, 3]
    sealed = ok("ctx", "seal", path, "agent", "review").out
    match = re.fullmatch(r"sealed 'review' as snapshot (n\d+)\n", sealed)
    assert match is not None
    review = match[1]
    last = ok("ctx", "seal", path, "agent", "--json").data["snapshot"]
    failed("ctx", "advance", path, "agent", "--steps", "0", code="USAGE")

    ids = [first, ran.data[0]["snapshot"], ran.data[1]["snapshot"], review, last]
    rows = [line.split() for line in ok("ctx", "snapshots", path, "agent").out.splitlines()]
    assert rows == [
        ["0", first, "episode", "1", "episode"],
        ["1", ids[1], "episode", "2", "episode"],
        ["2", ids[2], "episode", "3", "episode"],
        ["3", review, "episode", "3", "review"],
        ["4", last, "episode", "3", "checkpoint"],
    ]
    listed = ok("ctx", "snapshots", path, "agent", "--json").data
    assert [(r["index"], r["id"], r["episode"], r["trigger"]) for r in listed] == [
        (int(row[0]), row[1], int(row[3]), row[4]) for row in rows
    ]
    assert [r["seq"] for r in listed] == [4, 5, 6, 7, 8]  # the events that recorded them
    assert ok("ctx", "list", path, "--json").data[0] == {
        "name": "agent", "episode": 3, "items": 2, "depth": 1, "snapshots": 5, "forked_from": None
    }  # fmt: skip
    assert read_state(path)[2] == {"agent": ids}


def test_no_snapshots_yet(path: Path) -> None:
    assert ok("ctx", "snapshots", path, "agent").out == "no snapshots yet\n"
    assert ok("ctx", "snapshots", path, "agent", "--json").data == []


@pytest.fixture
def history(path: Path) -> dict[str, str]:
    """Episode 1 with a note and a temporary item; episode 2 with the note changed and the
    temporary gone; the ids of what the tests look for."""
    ok("ctx", "insert", path, "agent", "d-1, 0, 0", "You are careful.")
    ok("ctx", "user", path, "agent", "Hello")
    note = ok("ctx", "insert", path, "agent", "d0, 1, 0", "note", "--key", "note", "--json")
    temp = ok("ctx", "insert", path, "agent", "d0, 2, 0", "temp", "--ttl", "2", "--json")
    one = ok("ctx", "advance", path, "agent", "--json").data["snapshot"]
    ok("ctx", "update", path, "agent", "d0, 1, 0", "note, revised", "--key", "note")
    added = ok("ctx", "insert", path, "agent", "d0, 3, 0", "added", "--json")
    two = ok("ctx", "advance", path, "agent", "--json").data["snapshot"]
    return {
        "note": note.data["id"],
        "temp": temp.data["id"],
        "added": added.data["id"],
        "one": one,
        "two": two,
    }


def test_select_now_and_in_the_past(path: Path, history: dict[str, str]) -> None:
    assert [n["content"] for n in select(path, ".text")] == [
        "You are careful.", "Hello", "note, revised", "added"
    ]  # fmt: skip
    assert [n["content"] for n in select(path, "@t-2 .text")] == [
        "You are careful.", "Hello", "note", "temp"
    ]  # fmt: skip
    assert select(path, "@e1 .text") == select(path, "@t-2 .text")
    assert select(path, f"@snap:{history['one']} #note")[0]["content"] == "note"
    # no match exits 1 as grep does, saying so on stdout (it is an answer, not an error)
    assert cli("ctx", "select", path, "agent", "#missing") == Ran(1, "no match\n", "")
    missing = cli("ctx", "select", path, "agent", "#missing", "--json")
    assert (missing.code, missing.data, missing.err) == (1, [], "")
    failed("ctx", "select", path, "agent", "@t-9 *", code="UNKNOWN_SNAPSHOT")


def test_print_modes_now_and_in_the_past(path: Path, history: dict[str, str]) -> None:
    tree = ok("ctx", "print", path, "agent").out
    assert tree.startswith("context n1  episode 2\n")
    assert "├─ system (d-1)" in tree and "turn d0 [active]" in tree
    assert '"note, revised"' in tree and '"temp"' not in tree
    past = ok("ctx", "print", path, "agent", "--at", history["one"]).out
    assert past.startswith("context n1  episode 1\n")
    assert '"note"' in past and '"temp"' in past and '"added"' not in past
    assert ok("ctx", "print", path, "agent", "--episode", "1").out == past

    provider = ok("ctx", "print", path, "agent", "--mode", "provider").out
    assert json.loads(provider) == [
        {"content": "You are careful.", "role": "system"},
        {"content": "Hello", "role": "user"},
        {"content": "note, revised", "role": "user"},
        {"content": "added", "role": "user"},
    ]
    assert ok("ctx", "print", path, "agent", "--mode", "provider", "--json").data == json.loads(
        provider
    )

    export = json.loads(ok("ctx", "print", path, "agent", "--mode", "json").out)
    assert json.dumps(export, sort_keys=True) == json.dumps(
        json.loads(read_state(path)[1]["agent"]), sort_keys=True
    )
    assert ok("ctx", "print", path, "agent", "--json").data == export
    assert ok("ctx", "print", path, "agent", "--json", "--at", history["one"]).data["episode"] == 1
    failed("ctx", "print", path, "agent", "--at", "n999", code="UNKNOWN_SNAPSHOT")
    failed("ctx", "print", path, "agent", "--episode", "7", code="UNKNOWN_SNAPSHOT")


def test_diff(path: Path, history: dict[str, str]) -> None:
    expected = {
        "added": [history["added"]],
        "removed": [history["temp"]],
        "changed": [history["note"]],
    }
    for older, newer in [("e1", "now"), (history["one"], history["two"]), ("-2", "-1")]:
        data = ok("ctx", "diff", path, "agent", older, newer, "--json").data
        assert {
            "added": data["added"],
            "removed": data["removed"],
            "changed": [change["id"] for change in data["changed"]],
        } == expected
    data = ok("ctx", "diff", path, "agent", "e1", "--json").data
    [change] = data["changed"]
    assert "content" in change["fields"]
    # Every item the diff names, with where it was and is, its key and the head of its text.
    where = {
        n["id"]: n["coordinates"]
        for k in ("one", "two")
        for n in select(path, f"@snap:{history[k]} *")
    }
    assert data["items"] == {
        history["added"]: {
            "before": None,
            "after": where[history["added"]],
            "key": None,
            "node_type": "text",
            "preview": "added",
        },
        history["temp"]: {
            "before": where[history["temp"]],
            "after": None,
            "key": None,
            "node_type": "text",
            "preview": "temp",
        },
        history["note"]: {
            "before": [0, 1, 0],
            "after": [0, 1, 0],
            "key": "note",
            "node_type": "text",
            "preview": "note, revised",
        },
    }
    assert data["odi"] == {}
    lines = ok("ctx", "diff", path, "agent", "e1").out.splitlines()
    assert lines == [
        f'+ (0,3,0)  text  {history["added"]}  "added"',
        f'- (0,2,0)  text  {history["temp"]}  "temp"',
        f'~ (0,1,0)  text  {history["note"]}  #note  "note, revised": content, born_episode',
    ]
    assert ok("ctx", "diff", path, "agent", "-1").out == "no changes\n"
    assert ok("ctx", "diff", path, "agent", "e2", "now", "--json").data == {
        "added": [], "removed": [], "changed": [], "items": {}, "odi": {}
    }  # fmt: skip
    failed("ctx", "diff", path, "agent", "-3", code="USAGE")
    failed("ctx", "diff", path, "agent", "n999", code="UNKNOWN_SNAPSHOT")
    failed("ctx", "diff", path, "agent", "e9", code="UNKNOWN_SNAPSHOT")


def test_diff_counts_a_mass_move_of_any_steps_on_one_line(path: Path) -> None:
    for n in range(25):
        ok("ctx", "user", path, "agent", f"message {n}")
    ok("ctx", "seal", path, "agent")
    ok("ctx", "user", path, "agent", "one more")
    ok("ctx", "assistant", path, "agent", "and its answer")
    lines = ok("ctx", "diff", path, "agent", "-1").out.splitlines()
    assert lines[2:] == ["~ ODI: 25 items moved two deeper (depth +2), nothing else"]
    assert [line[:9] for line in lines[:2]] == ["+ (1,0,0)", "+ (0,0,0)"]
    data = ok("ctx", "diff", path, "agent", "-1", "--json").data
    assert data["odi"] == {"+2": 25} and len(data["changed"]) == 25


def test_diff_counts_a_mass_move_on_one_line(path: Path) -> None:
    for n in range(25):
        ok("ctx", "user", path, "agent", f"message {n}")
    ok("ctx", "seal", path, "agent")
    ok("ctx", "user", path, "agent", "one more")
    lines = ok("ctx", "diff", path, "agent", "-1").out.splitlines()
    assert lines == [
        f'+ (0,0,0)  text  {select(path, "d0, 0, 0")[0]["id"]}  "one more"',
        "~ ODI: 25 items moved one deeper (depth +1), nothing else",
    ]
    data = ok("ctx", "diff", path, "agent", "-1", "--json").data
    assert data["odi"] == {"+1": 25} and len(data["changed"]) == 25
    assert all(c["depth_changed"][1] == c["depth_changed"][0] + 1 for c in data["changed"])
    # A few are listed one by one.
    ok("ctx", "seal", path, "agent")
    ok("ctx", "delete", path, "agent", "d20-23, 0, 0")
    shallower = ok("ctx", "diff", path, "agent", "-1").out.splitlines()
    assert len(shallower) == 4 + 2  # four deleted, the two deeper than them come up
    assert shallower[-2].endswith('"message 0": depth 25→21')
    assert shallower[-1].endswith('"message 1": depth 24→20')


def test_changes(path: Path, history: dict[str, str]) -> None:
    # Nothing since episode 2's snapshot: its step, the update, the insert and the advance.
    lines = ok("ctx", "changes", path, "agent").out.splitlines()
    assert lines[0] == (
        f"snapshot {history['two']} (episode 2): 3 events since snapshot {history['one']}"
        " (episode 1)"
    )
    assert lines[1].startswith("event ") and " update → episode 1: replaced #note" in lines[1]
    assert lines[2].split()[:4] == ["replaced", "(0,1,0)", "→", "(0,1,0)"]
    assert lines[2].endswith('#note  "note, revised"')
    assert "inserted text (0,3,0)" in lines[3]
    assert " advance → episode 2: expired text (0,2,0) (ttl 2)" in lines[5]
    assert lines[6].split()[:4] == ["expired", "(0,2,0)", "→", "—"]
    assert lines[6].endswith('"temp"  (age 2, ttl 2)')
    assert lines[-1] == (
        "in all: inserted text (0,3,0) · replaced #note · expired text (0,2,0) (ttl 2)"
    )
    assert ok("ctx", "changes", path, "agent", "--episode", "2").out.splitlines() == lines
    assert (
        ok("ctx", "changes", path, "agent", "--between", "e1", "e2").out.splitlines()[1:]
        == (lines[1:])
    )

    data = ok("ctx", "changes", path, "agent", "--episode", "1", "--json").data
    assert (data["kind"], data["since"], data["until"]["id"]) == ("snapshot", None, history["one"])
    assert [e["type"] for e in data["events"]] == [
        "context.insert", "context.message", "context.insert", "context.insert",
        "context.advance",
    ]  # fmt: skip
    assert data["events"][1]["changes"]["entries"][0]["preview"] == "Hello"
    assert all(e["recorded"] for e in data["events"])

    ok("ctx", "user", path, "agent", "later")
    live = ok("ctx", "changes", path, "agent").out.splitlines()
    assert live[0] == f"live: 1 event since snapshot {history['two']} (episode 2)"
    assert "ODI: 3 items one deeper" in live[1]
    assert live[3] == "  ODI: 3 items in 1 turn moved one deeper (d0 → d1)"
    # `now` ends a range as `ctx diff e1 now` does: the steps since e1, the live one included
    until_now = ok("ctx", "changes", path, "agent", "--between", "e1", "now").out.splitlines()
    assert until_now[0] == f"from snapshot {history['one']} (episode 1) to now: 4 events"
    assert until_now[1:-1] == lines[1:-1] + live[1:]
    data = ok("ctx", "changes", path, "agent", "--between", "e1", "now", "--json").data
    assert (data["kind"], data["since"]["id"], data["until"]) == ("between", history["one"], None)

    failed("ctx", "changes", path, "agent", "--episode", "9", code="UNKNOWN_SNAPSHOT")
    failed("ctx", "changes", path, "agent", "--between", "e2", "e1", code="BAD_RANGE")
    failed("ctx", "changes", path, "agent", "--between", "e1", "n999", code="UNKNOWN_SNAPSHOT")
    failed("ctx", "changes", path, "agent", "--between", "now", "e1", code="USAGE")
    failed("ctx", "changes", path, "nobody", code="UNKNOWN_CONTEXT")
    assert cli("ctx", "changes", path, "agent", "--episode", "1", "--between", "e1", "e2").code == 2


def test_fork(path: Path, history: dict[str, str]) -> None:
    head = read_state(path)[0]
    one = history["one"]
    ran = ok("ctx", "fork", path, "agent", "trial", "--at", "e1", "--actor", "me")
    assert ran.out == f"forked agent at snapshot {one} (episode 1) into context 'trial'\n"
    assert select(path, "*", "trial") == select(path, f"@snap:{one} *")
    data = ok("ctx", "fork", path, "agent", "copy", "--json").data
    assert data == {
        "forked": "copy",
        "from": {
            "source": "agent",
            "snapshot": None,
            "episode": 2,
            "seq": head,
            "stream_seq": data["from"]["stream_seq"],
        },
    }
    assert select(path, "*", "copy") == select(path, "*")
    rows = [line.split("  ") for line in ok("ctx", "list", path).out.splitlines()]
    assert rows[0][-1] == "forked from"
    assert rows[2][-1] == f"agent as of event {head} (episode 2)"  # copy
    assert rows[3][-1] == f"agent at snapshot {one} (episode 1)"  # trial
    listed = ok("ctx", "list", path, "--json").data
    assert [r["forked_from"] and r["forked_from"]["snapshot"] for r in listed] == [None, None, one]

    # The fork goes its own way; the agent's context is as it was.
    agent = read_state(path)[1]["agent"]
    ok("ctx", "user", path, "trial", "what if?")
    ok("ctx", "advance", path, "trial")
    assert read_state(path)[1]["agent"] == agent
    assert [n["content"] for n in select(path, "d0, 0, 0", "trial")] == ["what if?"]

    written = read_state(path)
    failed("ctx", "fork", path, "agent", "trial", code="CONTEXT_EXISTS")
    failed("ctx", "fork", path, "agent", "bad name", code="INVALID_NAME")
    failed("ctx", "fork", path, "agent", "other", "--at", "n999", code="UNKNOWN_SNAPSHOT")
    failed("ctx", "fork", path, "agent", "other", "--at", "-9", code="USAGE")
    failed("ctx", "fork", path, "nobody", "other", code="UNKNOWN_CONTEXT")
    assert read_state(path) == written


def test_export(path: Path, history: dict[str, str]) -> None:
    """``ctx export --gptme``: what the model is sent, as gptme's master log (more in
    test_ctx_export.py and, by gptme itself, test_gptme_loads.py)."""
    out = path.parent / "conv"
    provider = ok("ctx", "print", path, "agent", "--mode", "provider", "--json").data
    ran = ok("ctx", "export", path, "agent", "--gptme", out)
    assert ran.out == f"exported context 'agent' ({len(provider)} messages) to {out}\n"
    lines = [json.loads(line) for line in (out / "conversation.jsonl").read_text().splitlines()]
    assert [(line["role"], line["content"]) for line in lines] == [
        (entry["role"], entry["content"]) for entry in provider
    ]
    written = read_state(path)
    failed("ctx", "export", path, "agent", "--gptme", out, code="NOT_EMPTY")
    assert read_state(path) == written  # exporting reads only


def test_verify(path: Path, history: dict[str, str]) -> None:
    head = read_state(path)[0]
    assert ok("verify", path).out == f"ok: {head} events, chain intact\n"
    assert ok("verify", path, "--json").data == {
        "ok": True, "checked": head, "broken_seq": None, "problem": None, "detail": ""
    }  # fmt: skip


def test_every_subcommand_is_covered_here() -> None:
    """A new subcommand must come with its tests in this file."""
    parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    [ctx] = [
        a for a in commands.choices["ctx"]._actions if isinstance(a, argparse._SubParsersAction)
    ]
    source = Path(__file__).read_text()
    for name in ctx.choices:
        assert f'ok("ctx", "{name}"' in source, name
    assert 'ok("verify"' in source
    assert set(ctx.choices) == {
        "create", "list", "insert", "update", "delete", "user", "assistant",
        "advance", "seal", "select", "print", "diff", "changes", "snapshots", "fork", "story",
        "run", "import", "export",
    }  # fmt: skip


def test_help_lists_every_subcommand() -> None:
    ran = cli("ctx", "--help")
    assert ran.code == 0
    for name in ("create", "insert", "update", "delete", "advance", "seal", "diff", "snapshots"):
        assert name in ran.out
    # The article goes by the sound ("a user", never "an user"), the line as argparse wraps it.
    said = " ".join(ran.out.split())
    assert "add a user message" in said and "add an assistant message" in said
    usage = cli("ctx", "insert")
    assert usage.code == 2 and "the following arguments are required" in usage.err


def test_story(path: Path, history: dict[str, str]) -> None:
    """Issue 27: an item's story as ``ctx story WS CTX SELECTOR``, now or as of a snapshot."""
    ok("ctx", "user", path, "agent", "Again")
    lines = ok("ctx", "story", path, "agent", "#note").out.splitlines()
    assert lines[0].startswith("(1,1,0)  text  ") and lines[0].endswith('"note, revised"')
    assert [line.split(None, 3)[2:] for line in lines[1:]] == [
        ["born", "(0,1,0) · inserted"],
        ["replaced", '(0,1,0) · now "note, revised"'],
        ["moved", "d0 → d1 · a new message"],
    ]
    past = ok("ctx", "story", path, "agent", "@e1 #note", "--json").data
    assert [(e["what"], e["detail"]) for e in past[0]["story"]] == [("born", "(0,1,0) · inserted")]
    assert past[0]["id"] == history["note"]
    temporary = ok("ctx", "story", path, "agent", "@e1 d0, 2, 0").out.splitlines()
    assert temporary[-1].split() == ["ep", "2", "expires", "(due)"]
    failed("ctx", "story", path, "agent", "#nothing", code="NOT_FOUND")


def test_run(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 28: ``ctx run`` applies the JSON commands on its input in one transaction
    (``tests/cli/test_ctx_run.py`` has its refusals)."""
    import io

    lines = [
        json.dumps({"op": "message", "role": "user", "text": "batched one"}),
        json.dumps({"op": "message", "role": "assistant", "text": "batched two"}),
    ]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    results = ok("ctx", "run", path, "agent", "--json").data
    assert len(results) == 2
    printed = ok("ctx", "print", path, "agent", "--mode", "provider", "--json").data
    assert [m["content"] for m in printed][-2:] == ["batched one", "batched two"]


def test_import(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 28: ``ctx import`` makes a new context of a messages list or a gptme directory in
    one transaction (``tests/cli/test_ctx_import.py`` has the rest)."""
    monkeypatch.setenv("PACT_TUI_CACHE", str(tmp_path / "cache"))
    given = tmp_path / "messages.json"
    given.write_text(
        json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    )
    ran = ok("ctx", "import", path, "chat", "--messages", given)
    assert ran.out == f"imported 2 messages from {given} into context 'chat' in {path}\n"
    printed = ok("ctx", "print", path, "chat", "--mode", "provider", "--json").data
    assert printed == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    written = read_state(path)
    failed("ctx", "import", path, "chat", "--messages", given, code="CONTEXT_EXISTS")
    failed(
        "ctx", "import", path, "other", "--messages", tmp_path / "none.json", code="BAD_MESSAGES"
    )
    failed("ctx", "import", path, "other", "--messages", given, "--follow", code="USAGE")
    assert read_state(path) == written
