"""The CLI on a workspace in PostgreSQL: ``ctx``, ``tap``, ``verify`` and ``verify --deep`` take
a ``postgresql://`` URL where they take a path, and due work fires once however many processes
tick at the same moment."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .conftest import REPO_ROOT, Ran, cli

CONTRACT = "Preamble.\n\n## Risk\n\nOld risk text.\n\n## Budget\n\nTotals.\n"


def ok(*args: object) -> Ran:
    ran = cli(*args)
    assert (ran.code, ran.err) == (0, ""), ran
    return ran


def data(*args: object) -> Any:
    return ok(*args, "--json").data


def test_ctx_and_verify_take_a_url(postgres_url: str) -> None:
    ok("ctx", "create", postgres_url, "agent")
    ok("ctx", "insert", postgres_url, "agent", "d0, 1, 0", "prefs", "--key", "prefs")
    ok("ctx", "user", postgres_url, "agent", "hello")
    ok("ctx", "advance", postgres_url, "agent")
    assert [c["name"] for c in data("ctx", "list", postgres_url)] == ["agent"]
    assert '"hello"' in ok("ctx", "print", postgres_url, "agent").out

    checked = data("verify", postgres_url)
    assert checked["ok"] and checked["checked"] > 0
    deep = data("verify", "--deep", postgres_url)
    assert deep["ok"] and deep["recorded"]
    assert [c["name"] for c in deep["contexts"]] == ["agent"]
    assert ok("verify", postgres_url).out.startswith(f"ok: {checked['checked']} events")


def test_a_database_that_is_not_a_workspace_is_one_line_with_a_code(postgres_url: str) -> None:
    with_password = postgres_url.replace("postgres@", "postgres:hunter2@")
    ran = cli("verify", with_password)
    assert ran.code == 1 and ran.out == ""
    [line] = ran.err.splitlines()
    assert line.startswith("pact-tui: WORKSPACE_NOT_FOUND: "), line
    assert "hunter2" not in line


def test_due_work_fires_once_when_several_processes_tick_at_once(
    postgres_url: str, tmp_path: Path
) -> None:
    source = tmp_path / "c.md"
    source.write_text(CONTRACT, encoding="utf-8")
    url = postgres_url
    ok("doc", "create", url, "c", "--from", source, "--policy", "objection-based",
       "--window", "1", "--human", "alice")  # fmt: skip
    ok("tap", "join", url, "c", "--as", "legal")
    ok("tap", "join", url, "c", "--as", "finance")  # who could object: the window is started
    data("tap", "propose", url, "c", "--agent", "legal", "--section", "sec:risk",
         "--content", "## Risk\\n\\nNew risk language.", "--summary", "Revised")  # fmt: skip
    time.sleep(1.2)  # the objection window (1 s, the shortest there is) runs out
    tickers = [
        subprocess.Popen(
            [sys.executable, "-m", "pact_tui", "tap", "tick", url, "c", "--json"],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    fired = []
    for ticker in tickers:
        out, err = ticker.communicate(timeout=60)
        assert ticker.returncode == 0, err
        fired.append(json.loads(out)["fired"])
    assert sorted(fired) == [0, 0, 0, 1]
    log = [row["type"] for row in data("doc", "log", url, "c")]
    assert log.count("pact.proposal.auto-merged") == 1
    assert "## Risk\n\nNew risk language.\n\n## Budget" in ok("doc", "export", url, "c").out
    assert data("verify", url)["ok"]
