"""Bad input through the command line: a typed error with a code (one line, or the error object
with ``--json``), exit status 1 (2 for argparse's usage errors), and nothing changed: the event
head, every export and every snapshot index are as they were."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import cli, failed, ok, read_state

pytestmark = pytest.mark.filterwarnings("error")


@pytest.fixture
def path(tmp_path: Path) -> Path:
    path = tmp_path / "agents.pact"
    ok("ctx", "create", path, "agent")
    ok("ctx", "user", path, "agent", "Hello")
    ok("ctx", "insert", path, "agent", "d0, 1, 0", "prefs", "--key", "prefs", "--tag", "p")
    ok("ctx", "advance", path, "agent")
    ok("ctx", "assistant", path, "agent", "Hi")
    return path


def write(selector: str, *options: str) -> list[str]:
    return ["insert", "{path}", "agent", selector, "text", *options]


@pytest.mark.parametrize(
    ("command", "position", "token"),
    [
        (write("d0, x, 0"), 4, "x"),
        (write("(d0, 1, 0"), 0, "(d0, 1, 0"),
        (write("d0, 1, 0)"), 8, ")"),
        (write("d0, 1.5, 0"), 4, "1.5"),
        (write("d-2-1, 0, 0"), 1, "-2-1"),
        (["update", "{path}", "agent", "d0,, 1", "text"], 3, ","),
        (["delete", "{path}", "agent", "d0, 3..1, 0"], 4, "3..1"),
        (["select", "{path}", "agent", "#"], 1, ""),
        (["select", "{path}", "agent", "d0, 1, 0 &"], 9, "&"),
    ],
)
def test_a_malformed_selector_names_position_and_token(
    path: Path, command: list[str], position: int, token: str
) -> None:
    before = read_state(path)
    args = ["ctx", *(str(path) if part == "{path}" else part for part in command)]
    ran = failed(*args, code="INVALID_SELECTOR")
    assert f"at position {position} (token {token!r})" in ran.err
    ran = failed(*args, "--json", code="INVALID_SELECTOR")
    assert (ran.error["position"], ran.error["token"]) == (position, token)
    assert read_state(path) == before


@pytest.mark.parametrize(
    ("command", "code", "named"),
    [
        # coordinates that are no place to write, and depths that do not exist
        (write("d0, *, 0"), "INVALID_COORDINATE", "d0, *, 0"),
        (write("d0, 1"), "INVALID_COORDINATE", "d0, 1"),
        (write("d-2, 0, 0"), "INVALID_COORDINATE", "depth -2"),
        (write("d2, 1, 0"), "NO_SUCH_DEPTH", "depth 2"),
        (["update", "{path}", "agent", "d5, 1", "x", "--mode", "append"], "NO_SUCH_DEPTH",
         "depth 5"),
        # lifecycles
        (write("d0, 1, 0", "--ttl", "-1"), "INVALID_LIFECYCLE", "ttl=-1"),
        (write("d0, 1, 0", "--cad", "0"), "INVALID_LIFECYCLE", "cad=0"),
        (write("d0, 1, 0", "--ttl", "1", "--cadence", "-3"), "INVALID_LIFECYCLE", "cad=-3"),
        (write("d0, 1, 0", "--stage", "d0, 1, 0:-2"), "INVALID_LIFECYCLE", "ttl=-2"),
        (write("d0, 1, 0", "--stage", "d0, 1, 0", "--cycle", "0"), "INVALID_LIFECYCLE", "cycle"),
        # writes through the past
        (write("@t-1 d0, 1, 0"), "READ_ONLY", "@t-1 d0, 1, 0"),
        (["update", "{path}", "agent", "@e1 d1, 1, 0", "x"], "READ_ONLY", "@e1 d1, 1, 0"),
        (["delete", "{path}", "agent", "@t-1 *"], "READ_ONLY", "@t-1 *"),
        # nothing there
        (["delete", "{path}", "agent", "--key", "nope"], "UNKNOWN_KEY", "'nope'"),
        (["update", "{path}", "agent", "d0, 7, 0", "x"], "NOT_FOUND", "d0, 7, 0"),
        (["delete", "{path}", "agent", "d0, 7, 0"], "NOT_FOUND", "d0, 7, 0"),
        (["user", "{path}", "ghost", "hi"], "UNKNOWN_CONTEXT", "'ghost'"),
        (["print", "{path}", "ghost"], "UNKNOWN_CONTEXT", "'ghost'"),
        (["create", "{path}", "bad name"], "INVALID_NAME", "'bad name'"),
        (["create", "{path}", "_under"], "INVALID_NAME", "'_under'"),
        (["create", "{path}", "agent\n"], "INVALID_NAME", "'agent\\n'"),
        (["create", "{path}", "agent"], "CONTEXT_EXISTS", "'agent'"),
        (["print", "{path}", "agent", "--at", "n404"], "UNKNOWN_SNAPSHOT", "n404"),
        # components that are not what a command needs
        (["insert", "{path}", "agent", "d0, 1, 0", "--component", '{"content": 1'], "USAGE",
         "not JSON"),
        (["insert", "{path}", "agent", "d0, 1, 0", "--component", "[1, 2]"], "USAGE",
         "JSON object"),
        (["insert", "{path}", "agent", "d0, 1, 0", "--component",
          '{"type": "component", "content": NaN}'], "INVALID_COMMAND", "JSON"),
        (["insert", "{path}", "agent", "d0, 1, 0", "--component", '{"content": 5}'],
         "INVALID_COMMAND", "string"),
        (["insert", "{path}", "agent", "d0, 1, 0", "--component",
          '{"content": "x", "ttl": "soon"}'], "INVALID_COMMAND", "ttl"),
        (["insert", "{path}", "agent", "d0, 1, 0"], "USAGE", "TEXT or --component"),
        (write("d0, 1, 0", "--stage", "d0, 1, 0:soon"), "USAGE", "whole number"),
        (write("d0, 1, 0", "--stage", "d0, 1, 0", "--cycle", "often"), "USAGE", "often"),
        (write("d0, 1, 0", "--cycle", "2"), "USAGE", "--cycle needs --stage"),
        (["diff", "{path}", "agent", "-5"], "USAGE", "-5"),
        # issue 23: 100,000,000 steps appended 216,703 events before it was killed
        (["advance", "{path}", "agent", "--steps", "1001"], "USAGE", "from 1 to 1,000, got 1001"),
        # input the engine does not take in (issue 10: each was accepted, or an INTERNAL error)
        (["insert", "{path}", "agent", "d0, 1, 0", "--component", '{"content": "a\\ud800"}'],
         "INVALID_COMMAND", "lone surrogate"),
        (["insert", "{path}", "agent", "d0, 1, 0", "--component",
          '{"type": "x", "content": ' + "[" * 65 + "]" * 65 + "}"], "INVALID_COMMAND",
         "nested more than 64 levels"),
        (["insert", "{path}", "agent", "d0, 1, 0", "--component",
          '{"type": "x", "content": ' + "[" * 100_000 + "]" * 100_000 + "}"], "USAGE",
         "nests too deeply"),
        (["insert", "{path}", "agent", "d0, 1, 0", "--component",
          '{"type": "x", "content": {"n": 1180591620717411303424}}'], "INVALID_COMMAND",
         "outside the engine's range"),
        (write("d0, 1, 9223372036854775808"), "INVALID_SELECTOR", "outside the engine's range"),
        (write("d0, 99999999999999999999999, 0"), "INVALID_SELECTOR", "engine's range"),
        (write("d0, 1, 0", "--stage", "d0, 1, 0:\u0661"), "USAGE", "ASCII digits"),
        (write("d0, 1, 0", "--stage", "d0, 1, 0", "--cycle", "\u0662"), "USAGE", "passes"),
        (["diff", "{path}", "agent", "-\u0661"], "UNKNOWN_SNAPSHOT", "-\u0661"),
        (["delete", "{path}", "agent", "+no-such-tag"], "NOT_FOUND", "nothing matches"),
        (["delete", "{path}", "agent", "[ttl>5]"], "NOT_FOUND", "nothing matches"),
        (["user", "{path}", "agent", "hi", "--actor", "a\udcffb"], "USAGE", "--actor"),
        (["user", "{path}", "agent", "half \udcc3"], "USAGE", "not valid UTF-8"),
        (["select", "{path}", "agent", "#k\udcff"], "USAGE", "not valid UTF-8"),
    ],
)  # fmt: skip
def test_a_refused_command_changes_nothing(
    path: Path, command: list[str], code: str, named: str
) -> None:
    before = read_state(path)
    args = ["ctx", *(str(path) if part == "{path}" else part for part in command)]
    ran = failed(*args, code=code)
    assert named in ran.err
    ran = failed(*args, "--json", code=code)
    assert named in ran.error["message"]
    assert read_state(path) == before


@pytest.mark.parametrize(
    "command",
    [
        write("d0, 1, 0", "--ttl", "three"),
        write("d0, 1, 0", "--cad", "1.5"),
        ["advance", "{path}", "agent", "--steps", "x"],
        ["print", "{path}", "agent", "--episode", "first"],
        ["print", "{path}", "agent", "--mode", "poster"],
        ["update", "{path}", "agent", "d0, 1, 0", "x", "--mode", "sideways"],
        ["print", "{path}", "agent", "--at", "n1", "--episode", "1"],
        write("d0, 1, 0", "--ttl", "\u0663"),  # int() reads other scripts' digits
        write("d0, 1, 0", "--ttl", "99999999999999999999"),
        ["advance", "{path}", "agent", "--steps", "\u0662"],
    ],
)
def test_a_usage_error_is_argparse_exit_2_and_changes_nothing(
    path: Path, command: list[str]
) -> None:
    before = read_state(path)
    ran = cli("ctx", *(str(path) if part == "{path}" else part for part in command))
    assert (ran.code, ran.out) == (2, "")
    assert "error:" in ran.err.splitlines()[-1] and "Traceback" not in ran.err
    assert read_state(path) == before


def test_a_refused_create_leaves_no_new_file(tmp_path: Path) -> None:
    path = tmp_path / "never.pact"
    failed("ctx", "create", path, "bad name", code="INVALID_NAME")
    assert not path.exists()
