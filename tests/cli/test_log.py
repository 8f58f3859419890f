"""``pact-tui log …`` on the real gptme fixtures, and on bad input."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from engine.masterlog.lines import encode_message
from tests.processes import run_as_ordinary_user

from ..pipes import lines_of
from .conftest import FIXTURES, REPO_ROOT, Ran, cli, failed, ok

pytestmark = pytest.mark.usefixtures("cache")  # no test reads or writes the user's cache


@pytest.fixture
def branches(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURES / "conv-branches", tmp_path / "conv-branches"))


def test_verify_exits_zero_when_every_reference_is_ok(basic: Path) -> None:
    ran = ok("log", "verify", basic)
    assert ran.out.count("\nok ") + ran.out.startswith("ok ") == 4
    assert "4 references: 4 ok" in ran.out
    assert "resolved relative to the conversation directory" in ran.out


def test_verify_json_lists_every_reference_and_exits_one_on_a_problem(branches: Path) -> None:
    ran = cli("log", "verify", branches, "--json")
    assert ran.code == 1 and ran.err == ""
    data = ran.data
    assert data["counts"] == {"ok": 9, "mid-line": 1} and data["ok"] is False
    broken = next(r for r in data["references"] if r["status"] != "ok")
    assert broken["where"] == "views/compacted-001.jsonl:12"
    assert broken["bytes"] == [36435, 51367]
    assert broken["evidence"]["original"] == "branches/main-undo-0.jsonl:12"
    assert broken["evidence"]["lands_on_line"] == 11


def test_index_reports_lines_problems_and_a_rewrite(basic: Path) -> None:
    ran = ok("log", "index", basic, "--json")
    master = ran.data["logs"][0]
    assert (master["name"], master["lines"], master["bytes"]) == ("conversation.jsonl", 22, 61640)
    lines = (basic / "conversation.jsonl").read_bytes().splitlines(keepends=True)
    (basic / "conversation.jsonl").write_bytes(b"".join([*lines[:2], b"\n", *lines[2:]]))
    again = ok("log", "index", basic)
    assert "conversation.jsonl was rewritten" in again.out
    assert "line 3 at byte 1,040: blank" in again.out
    assert "line 3 added" in again.out and "moved by +1 bytes" in again.out


def test_recover_by_reference_text_and_by_bytes(basic: Path) -> None:
    view = (basic / "views/compacted-001.jsonl").read_bytes().splitlines()
    content = json.loads(view[6])["content"]  # a compressed message: text, blank, reference
    reference = content[content.index("[Content truncated") :]
    original = json.loads((basic / "conversation.jsonl").read_bytes().splitlines()[6])["content"]
    ran = cli("log", "recover", basic, "--ref", reference, "--json")
    assert ran.code == 0 and ran.data["content"] == original and ran.data["status"] == "ok"
    plain = cli("log", "recover", basic, "--bytes", "24165-34612")
    assert plain.code == 0 and plain.out.rstrip("\n") == original
    assert "exactly one line" in plain.err


def test_recover_takes_a_view_line_and_recovers_what_verify_finds(
    basic: Path, branches: Path
) -> None:
    # conv-branches: the reference of view line 12 is mid-line; the original is in the branch
    ran = cli("log", "recover", branches, "views/compacted-001.jsonl:12", "--json")
    assert ran.code == 0 and ran.data["source"] == "branches/main-undo-0.jsonl:12"
    undo = (branches / "branches/main-undo-0.jsonl").read_bytes().splitlines()
    assert ran.data["content"] == json.loads(undo[11])["content"]
    # a compressed message's range 5 bytes into its line: verify says the message is now line
    # 7, and recover reads it from there
    view = basic / "views/compacted-001.jsonl"
    view.write_text(view.read_text().replace("(bytes 24165-34612)", "(bytes 24170-34612)"))
    verified = cli("log", "verify", basic, "--json")
    (moved,) = [r for r in verified.data["references"] if r["status"] != "ok"]
    assert "the message it was made for is now line 7" in moved["explanation"]
    recovered = cli("log", "recover", basic, moved["where"], "--json")
    master = (basic / "conversation.jsonl").read_bytes().splitlines()
    assert recovered.code == 0 and recovered.data["source"].startswith("conversation.jsonl:7 ")
    assert recovered.data["content"] == json.loads(master[6])["content"]
    content = json.loads(view.read_bytes().splitlines()[6])["content"]
    by_text = cli("log", "recover", basic, "--ref", content[content.index("[Content trunc") :])
    assert by_text.code == 0 and by_text.out.rstrip("\n") == json.loads(master[6])["content"]


def test_recover_refuses_what_is_no_reference_and_a_range_suggests_ref(basic: Path) -> None:
    refused = failed("log", "recover", basic, "--bytes", "24165-34000", code="BAD_RANGE")
    assert "--ref" in refused.err and "views/compacted-001.jsonl:12" in refused.err
    failed("log", "recover", basic, "views/compacted-001.jsonl:1", code="BAD_REFERENCE")
    failed("log", "recover", basic, "views/nothing.jsonl:4", code="BAD_REFERENCE")
    failed("log", "recover", basic, "views/compacted-001.jsonl", code="BAD_REFERENCE")
    failed("log", "recover", basic, "views/compacted-001.jsonl:4#2", code="BAD_REFERENCE")
    failed("log", "recover", basic, code="BAD_REFERENCE")


def test_bad_input_gets_a_typed_error_and_changes_nothing(basic: Path, tmp_path: Path) -> None:
    before = {p: p.read_bytes() for p in basic.rglob("*") if p.is_file()}
    failed("log", "verify", tmp_path / "nowhere", code="NOT_A_CONVERSATION")
    failed("log", "verify", tmp_path, "--json", code="NOT_A_CONVERSATION")
    failed("log", "recover", basic, "--bytes", "24165-34000", code="BAD_RANGE")
    failed("log", "recover", basic, "--bytes", "x-y", "--json", code="BAD_REFERENCE")
    failed("log", "recover", basic, "--ref", "not a reference", code="BAD_REFERENCE")
    failed("log", "recover", basic, "--bytes", "0-99999999", code="BAD_RANGE")
    failed("log", "compact", basic, "--budget", "0", code="MASTERLOG_ERROR")
    bad_cache = tmp_path / "bad.sqlite"
    bad_cache.write_bytes(b"garbage" * 1000)
    failed("log", "verify", basic, "--cache", bad_cache, code="CACHE_ERROR")
    assert {p: p.read_bytes() for p in basic.rglob("*") if p.is_file()} == before


def test_search_prints_where_and_a_marked_snippet(basic: Path) -> None:
    ran = ok("log", "search", basic, "localize", "--json")
    assert ran.data and all("[localize]" in hit["snippet"].lower() for hit in ran.data)
    assert {hit["where"].split(":")[0] for hit in ran.data} >= {"conversation.jsonl"}
    nothing = cli("log", "search", basic, "qqqzzzx")
    assert (nothing.code, nothing.out.strip()) == (1, "no match")
    quoted = ok("log", "search", basic, "localize(")  # not valid FTS5: searched as a phrase
    assert "[localize]" in quoted.out
    capped = cli("log", "search", basic, "localize", "--limit", "2")
    assert capped.out.count("\n") == 2
    total = len(ran.data)
    assert capped.err == f"# the newest 2 of {total} matches (--limit N lists more)\n"


def test_compact_writes_a_view_that_verifies(basic: Path) -> None:
    ran = ok("log", "compact", basic, "--budget", "4000", "--json")
    assert ran.data["view"].endswith("views/compacted-002.jsonl") and ran.data["within_budget"]
    verified = cli("log", "verify", basic, "--json")
    ours = [r for r in verified.data["references"] if "compacted-002" in r["where"]]
    assert ours and all(r["status"] == "ok" for r in ours)
    assert not any(r["evidence"]["resolved_relative"] for r in ours)


def _lines(process: subprocess.Popen[str]) -> Iterator[str]:
    """Lines of a process's stdout as they come (30 s at most for each)."""
    return lines_of(process, "tail")


def test_tail_follows_the_master_as_gptme_appends(basic: Path, cache: Path) -> None:
    env = {**os.environ, "PACT_TUI_CACHE": str(cache)}
    command = [
        sys.executable,
        "-m",
        "pact_tui",
        "log",
        "tail",
        str(basic),
        "--json",
        "--lines",
        "1",
    ]
    with subprocess.Popen(
        command, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as process:
        try:
            lines = _lines(process)
            first = json.loads(next(lines))
            assert first["line"] == 22  # the newest message, then it waits
            line = encode_message({"role": "user", "content": "Ship it 🚀"})
            with (basic / "conversation.jsonl").open("ab") as log:
                log.write(line[:20])  # a partial line first, as a torn write would leave it
                log.flush()
                log.write(line[20:])
            new = json.loads(next(lines))
            assert (new["line"], new["role"], new["first_line"]) == (23, "user", "Ship it 🚀")
        finally:
            process.terminate()


def test_two_processes_on_one_conversation_see_appends_as_appends(basic: Path, cache: Path) -> None:
    """Two ``log tail`` processes share one cache file: each one's append check is against
    its own view of the log, not the record the other wrote a moment before."""
    env = {**os.environ, "PACT_TUI_CACHE": str(cache)}
    command = [sys.executable, "-m", "pact_tui", "log", "tail", str(basic), "--json"]
    command += ["--lines", "1"]
    tails = [
        subprocess.Popen(
            command,
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    try:
        outputs = [_lines(tail) for tail in tails]
        for output in outputs:
            assert json.loads(next(output))["line"] == 22
        for n in range(8):
            with (basic / "conversation.jsonl").open("ab") as log:
                log.write(encode_message({"role": "user", "content": f"append {n}"}))
            for output in outputs:
                said = json.loads(next(output))
                assert "rewritten" not in said, said
                assert (said["line"], said["first_line"]) == (23 + n, f"append {n}")
    finally:
        for tail in tails:
            tail.terminate()
            tail.communicate()  # its pipes closed too, whatever the test found


def test_tail_says_what_a_rewrite_changed(basic: Path, cache: Path) -> None:
    env = {**os.environ, "PACT_TUI_CACHE": str(cache)}
    command = [sys.executable, "-m", "pact_tui", "log", "tail", str(basic), "--json"]
    command += ["--lines", "1"]
    with subprocess.Popen(
        command, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as process:
        try:
            lines = _lines(process)
            assert json.loads(next(lines))["line"] == 22
            master = basic / "conversation.jsonl"
            kept = master.read_bytes().splitlines(keepends=True)[:19]
            master.write_bytes(b"".join(kept))  # gptme's undo of 3 messages, and its record
            with (basic / "events.jsonl").open("a") as events:
                record = {"seq": 99, "ts": "t", "type": "undo", "payload": {"n": 3}}
                events.write(json.dumps(record) + "\n")
            said = json.loads(next(lines))
            assert said["rewritten"] and said["what"] == "undo: lines 20 to 22 removed"
        finally:
            process.terminate()


def test_index_shows_its_progress_on_a_terminal(basic: Path, cache: Path) -> None:
    import pty

    env = {**os.environ, "PACT_TUI_CACHE": str(cache)}
    leader, follower = pty.openpty()
    try:
        with subprocess.Popen(
            [sys.executable, "-m", "pact_tui", "log", "index", str(basic)],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=follower,
            env=env,
        ) as process:
            out, _ = process.communicate(timeout=60)
        os.close(follower)
        follower = -1
        said = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal's other end is closed: all was read
                break
            if not chunk:
                break
            said += chunk
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    assert process.returncode == 0 and b"conversation.jsonl: 22 lines" in out
    assert b"\rcataloguing conversation.jsonl: 100% (22 of 22 lines)" in said
    assert said.endswith(b"\r\x1b[K")  # cleared at the end


def schema_and_bytes(path: Path) -> tuple[list[Any], bytes]:
    uri = path.absolute().as_uri() + "?mode=ro&immutable=1"  # makes nothing beside it
    with closing(sqlite3.connect(uri, uri=True)) as connection:
        schema = connection.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
    return schema, path.read_bytes()


def test_a_cache_that_is_another_application_s_database_is_refused_untouched(
    basic: Path, tmp_path: Path
) -> None:
    """Issue 23: `log verify --cache other.db` added 9 tables to another application's SQLite
    file (and switched it to WAL). An SQLite file that is not a cache is refused, as the
    workspace refuses one, and left as it was."""
    other = tmp_path / "other.db"
    with closing(sqlite3.connect(other)) as connection:
        connection.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner TEXT)")
        connection.execute("INSERT INTO accounts (owner) VALUES ('ann')")
        connection.commit()
    workspace = tmp_path / "w.pact"  # pact-tui's own, but a workspace: application_id 0x50414354
    ok("ctx", "create", workspace, "agent")
    for foreign, why in ((other, "it holds accounts"), (workspace, "application_id 0x50414354")):
        before = schema_and_bytes(foreign)
        for command in (["verify"], ["index"], ["search", "localize"]):
            ran = failed("log", command[0], basic, *command[1:], "--cache", foreign,
                         code="FOREIGN_DATABASE")  # fmt: skip
            assert why in ran.err and str(foreign) in ran.err
        assert schema_and_bytes(foreign) == before
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(foreign.name)) == [
            foreign.name
        ]
    # A cache an earlier version wrote (its tables, no application_id) is still a cache.
    cache = tmp_path / "mine.sqlite"
    ok("log", "verify", basic, "--cache", cache)
    with closing(sqlite3.connect(cache)) as connection:
        connection.execute("PRAGMA application_id = 0")
    assert "4 references: 4 ok" in ok("log", "verify", basic, "--cache", cache).out


def as_ordinary_user(*args: object) -> Ran:
    done = run_as_ordinary_user([sys.executable, "-m", "pact_tui", *map(str, args)])
    return Ran(done.returncode, done.stdout, done.stderr)


@pytest.mark.parametrize(
    ("locked", "said"),
    [
        ("views/compacted-001.jsonl", "this user may not read views/compacted-001.jsonl"),
        ("views", "this user may not read the folder views/"),
        ("tool-outputs", "a folder on the way to 20261123_161658-"),
        ("tool-outputs/autocompact/*", "this user may not read the saved tool output"),
    ],
)
def test_an_unreadable_view_or_tool_output_is_permission_denied(
    basic: Path, locked: str, said: str
) -> None:
    """Issue 23: an unreadable view was skipped, and `log verify` passed with 0 references; an
    unreadable tool-outputs/ was INTERNAL (PermissionError). Permissions are real: the command
    runs as a process for which they apply."""
    paths = list(basic.glob(locked))
    assert paths
    for path in paths:
        path.chmod(0o000)
    try:
        for command in (["verify"], ["index"]):
            ran = as_ordinary_user("log", command[0], basic)
            assert (ran.code, ran.out) == (1, ""), ran
            [line] = ran.err.splitlines()
            assert line.startswith("pact-tui: PERMISSION_DENIED: permission denied: "), line
            assert said in line and str(basic) in line
    finally:
        for path in paths:
            path.chmod(0o755)
    assert "4 references: 4 ok" in ok("log", "verify", basic).out
