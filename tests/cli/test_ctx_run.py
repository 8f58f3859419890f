"""``pact-tui ctx run WS NAME < commands.jsonl``: a batch of context commands in one
transaction (``Workspace.run_many``): all of them, or none, and an error naming its line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import REPO_ROOT, ok


def run(workspace: Path, lines: list[str], *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pact_tui", "ctx", "run", str(workspace), "agent", *extra],
        cwd=REPO_ROOT,
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_batch_runs_in_one_transaction(tmp_path: Path) -> None:
    workspace = tmp_path / "ws.db"
    ok("ctx", "create", workspace, "agent")
    commands = [
        json.dumps({"op": "message", "role": "user", "text": "first"}),
        "",
        json.dumps({"op": "message", "role": "assistant", "text": "second"}),
        json.dumps({"op": "seal", "trigger": "after two"}),
    ]
    done = run(workspace, commands, "--json")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert len(results) == 3 and results[2]["snapshot"]
    printed = ok("ctx", "print", workspace, "agent", "--mode", "provider", "--json").data
    assert [m["content"] for m in printed if m["role"] != "system"][-2:] == ["first", "second"]


def test_a_bad_line_is_named_and_nothing_runs(tmp_path: Path) -> None:
    workspace = tmp_path / "ws.db"
    ok("ctx", "create", workspace, "agent")
    before = ok("ctx", "print", workspace, "agent", "--mode", "json", "--json").data
    good = json.dumps({"op": "message", "role": "user", "text": "kept?"})
    for bad, said in (
        ("{not json", "stdin line 2: not JSON"),
        ("[1, 2]", "stdin line 2: a command is a JSON object"),
        (json.dumps({"op": "message", "role": "robot", "text": "x"}), "stdin line 2:"),
    ):
        done = run(workspace, [good, bad])
        assert done.returncode == 1 and done.stdout == ""
        [line] = done.stderr.splitlines()
        assert line.startswith("pact-tui: INVALID_COMMAND: ") and said in line, line
    # refused by the context itself after the first command applied: the first is undone too
    done = run(workspace, [good, json.dumps({"op": "delete", "selector": "d9, 9, 9"})])
    assert done.returncode == 1 and done.stdout == ""
    assert ok("ctx", "print", workspace, "agent", "--mode", "json", "--json").data == before
    empty = run(workspace, [""])
    assert empty.returncode == 1 and "pact-tui: USAGE: no commands on stdin" in empty.stderr
