"""The real thing: ``pact-tui`` in a tmux pane of fixed size, keys sent with ``send-keys``, the
screen read with ``capture-pane``. A private tmux server per test; every wait is a bounded
poll of the screen (or of the pane's exit status), never a fixed sleep."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine.visible import visible
from tests.hostile import (
    HOSTILE_BRANCHES,
    TITLE,
    build_hostile,
    build_hostile_conversation,
    build_hostile_document,
)

GPTME = Path(__file__).resolve().parents[1] / "fixtures" / "gptme"

TMUX = shutil.which("tmux")
pytestmark = [
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed"),
    pytest.mark.e2e,
    pytest.mark.xdist_group("tmux"),  # one at a time: each starts a tmux server and the app
]

DEADLINE = 60.0  # seconds; start-up on a loaded machine is slow
EXITED = "pact-tui-test: exited with"


class Terminal:
    """One tmux server (its own socket) with one session running a command."""

    def __init__(self, socket: str, env: dict[str, str]) -> None:
        self.socket, self.env = socket, env

    def tmux(self, *args: str) -> str:
        assert TMUX is not None
        done = subprocess.run(
            [TMUX, "-L", self.socket, *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=30,
            check=True,
        )
        return done.stdout

    def start(self, command: list[str], size: tuple[int, int] = (120, 40)) -> None:
        """Run ``command`` in the pane; a shell around it prints its exit status when it ends
        (tmux's own #{pane_dead_status} is not always filled in)."""
        width, height = size
        wrapped = f"{shlex.join(command)}; printf '\\n{EXITED} %s\\n' $?"
        self.tmux(
            "new-session", "-d", "-s", "app", "-x", str(width), "-y", str(height),
            wrapped, ";", "set-option", "-t", "app", "remain-on-exit", "on",
        )  # fmt: skip

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "app", *keys)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "app")

    def everything(self) -> str:
        """The screen and the lines scrolled off it (where a message printed on exit ends)."""
        return self.tmux("capture-pane", "-p", "-S", "-", "-t", "app")

    def exit_status(self) -> int | None:
        """The command's exit status once it has ended, else None."""
        found = re.search(rf"^{EXITED} (\d+)$", self.everything(), re.MULTILINE)
        return int(found.group(1)) if found else None

    def wait_for(self, condition: Callable[[str], bool], what: str) -> str:
        """Poll the screen until ``condition(screen)`` holds; fail after the deadline."""
        deadline = time.monotonic() + DEADLINE
        while True:
            screen = self.screen()
            if condition(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"gave up waiting for {what}; the screen:\n{screen}")
            time.sleep(0.05)  # between polls, not as synchronisation

    def wait_for_exit(self) -> int:
        deadline = time.monotonic() + DEADLINE
        while (status := self.exit_status()) is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"the app did not exit; the screen:\n{self.screen()}")
            time.sleep(0.05)
        return status


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "PACT_TUI_CACHE": str(tmp_path / "cache"),  # a conversation's index, not in ~/.cache
        "TERM": "xterm-256color",
    }
    env.pop("TMUX", None)
    for size in ("COLUMNS", "LINES"):  # pytest-xdist's workers set 80x24: the pane's size rules
        env.pop(size, None)
    terminal = Terminal(f"pact-tui-test-{os.getpid()}-{tmp_path.name}", env)
    try:
        yield terminal
    finally:
        subprocess.run(
            [TMUX or "tmux", "-L", terminal.socket, "kill-server"], capture_output=True, env=env
        )


def _pact_tui() -> list[str]:
    script = Path(sys.executable).parent / "pact-tui"
    return [str(script)] if script.exists() else [sys.executable, "-m", "pact_tui"]


def test_the_app_in_a_real_terminal(terminal: Terminal, tmp_path: Path) -> None:
    workspace = tmp_path / "demo.pact"
    subprocess.run(
        [sys.executable, "-m", "pact_tui.demo", "create", str(workspace)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    terminal.start([*_pact_tui(), str(workspace)])

    # tmux may be read half-way through a frame, so each wait is for everything it then checks
    # (the status bar is drawn at the top, the scrubber near the bottom).
    first = (
        "researcher   EPISODE 6   ● LIVE",
        "context tree · live",
        "turn d0  assistant · active",
    )
    terminal.wait_for(lambda s: all(part in s for part in first), "the inspector")

    terminal.keys(".")
    # the step's changelog in one line, on the tree's lower border
    advanced = ("researcher   EPISODE 7   ● LIVE", "LIVE · 8 snapshots", "step to n", ": expired #")
    terminal.wait_for(lambda s: all(part in s for part in advanced), "episode 7 after '.'")
    terminal.keys("C")
    terminal.wait_for(
        lambda s: "changes · live" in s and "− expired" in s and "↻ rehydrated" in s,
        "the changelog pane",
    )
    terminal.keys("C")
    terminal.wait_for(lambda s: "changes · live" not in s, "the changelog pane to close")

    terminal.keys("?")
    terminal.wait_for(
        lambda s: "pact-tui keys" in s and "advance one episode (expire, rehydrate)" in s,
        "the help screen",
    )
    terminal.keys("Escape")
    terminal.wait_for(lambda s: "pact-tui keys" not in s, "the help screen to close")

    terminal.keys("q")
    assert terminal.wait_for_exit() == 0


def test_a_bad_workspace_in_a_real_terminal_says_why_and_exits_1(
    terminal: Terminal, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.pact"
    notes.write_text("not a workspace\n")
    terminal.start([*_pact_tui(), str(notes)])
    assert terminal.wait_for_exit() == 1
    screen = " ".join(terminal.everything().split())
    assert "pact-tui: NOT_A_DATABASE: the file does not start with the SQLite header" in screen
    assert notes.read_text() == "not a workspace\n"


def test_a_hostile_workspace_leaves_the_terminal_alone(terminal: Terminal, tmp_path: Path) -> None:
    """Keys, tags, content and triggers that set the window title, write the clipboard (OSC 52,
    which tmux turns into a paste buffer when set-clipboard is on) and clear the screen: shown
    made visible by ``ctx print``, ``ctx select`` and the app (tree, provider view, reader),
    while the pane keeps its title, no buffer appears and the screen is not cleared."""
    workspace = tmp_path / "evil.pact"
    asyncio.run(build_hostile(workspace))
    cli = shlex.join(_pact_tui())
    script = (
        "tmux wait-for go && "  # the options below are set before anything is printed
        f"{cli} ctx print {workspace} evil && {cli} ctx select {workspace} evil '*' && "
        f"{cli} {workspace}"
    )
    terminal.start(["sh", "-c", script])
    terminal.tmux("set-option", "-s", "set-clipboard", "on")
    title = terminal.tmux("display-message", "-p", "-t", "app", "#{pane_title}")
    terminal.tmux("wait-for", "-S", "go")

    def untouched(what: str) -> bool:
        """The pane's title as it was, and no paste buffer (else fail at once, saying where)."""
        now = terminal.tmux("display-message", "-p", "-t", "app", "#{pane_title}")
        assert now == title and TITLE not in now, f"{what}: the title is now {now!r}"
        assert terminal.tmux("list-buffers") == "", f"{what}: a paste buffer appeared"
        return True

    def shows(*parts: str, where: str) -> Callable[[str], bool]:
        return lambda screen: untouched(where) and all(part in screen for part in parts)

    first = ("evil   EPISODE 1   ● LIVE", "context tree · live", "#k\\u001b[2J\\u001b]0;pwned")
    terminal.wait_for(shows(*first, where="the tree"), "the inspector")
    terminal.keys("v")
    provider = shows("provider rendering · live", where="the provider view")
    terminal.wait_for(provider, "the provider view")
    terminal.keys("g", "o")
    reader = shows("replaced \\u001b[2J", "Esc closes", where="the reader")
    terminal.wait_for(reader, "the reader")
    terminal.keys("Escape")  # apart from the next key: ESC q would be read as Alt+q
    terminal.wait_for(lambda s: "Esc closes" not in s, "the reader to close")
    terminal.keys("q")
    assert terminal.wait_for_exit() == 0
    untouched("the end")
    before_the_app = terminal.everything()
    assert "key=k\\u001b[2J" in before_the_app  # ctx print, made visible


def test_a_custodian_approves_and_answers_in_a_real_terminal(
    terminal: Terminal, tmp_path: Path
) -> None:
    """The custodian's flow end to end: the demo's memo on the document screen, a proposal
    approved from the queue, the open question answered from the inbox; then a second process
    (``pact-tui tap``) sees both in the workspace."""
    workspace = tmp_path / "demo.pact"
    subprocess.run(
        [sys.executable, "-m", "pact_tui.demo", "create", str(workspace)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    terminal.start([*_pact_tui(), str(workspace), "--human", "ann"])
    terminal.wait_for(lambda s: "researcher   EPISODE 6" in s, "the inspector")

    terminal.keys("2")
    terminal.wait_for(lambda s: " memo · v" in s and "as ann" in s, "the document screen")
    terminal.keys("P")

    def row(status: str, what: str) -> Callable[[str], bool]:
        return lambda s: any(status in line and what in line for line in s.splitlines())

    # The conflict's sides wait for a human (no window ends under them): approve legal's.
    terminal.wait_for(
        lambda s: "proposals (4)" in s and row("Conflict", "Risk · agent legal")(s),
        "the queue",
    )
    terminal.wait_for(lambda s: "Summary: Added currency risk allocation" in s, "its detail")
    terminal.keys("a")
    terminal.wait_for(lambda s: "It merges at once: why?" in s, "the approval's question")
    terminal.keys("-l", "numbers checked")
    terminal.keys("Enter")
    terminal.wait_for(row("Merged", "Risk · agent legal"), "the proposal merged")

    terminal.keys("I")
    terminal.wait_for(lambda s: "Include force majeure in the risk clause?" in s, "the inbox")
    terminal.keys("Home", "e")  # what waits is above what was settled (the conflict)
    terminal.wait_for(lambda s: "Answer: Include force majeure" in s, "the answer's prompt")
    terminal.keys("-l", "Yes, add it")
    terminal.keys("Enter")
    terminal.wait_for(lambda s: "escalation inbox (0)" in s, "the question answered")

    def tap(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "pact_tui", "tap", *args, str(workspace), "memo"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "Currency exposure is hedged under policy H-2." in tap("get", "--human", "ann")
    polled = json.loads(tap("poll", "--human", "ann", "--json", "--limit", "200"))
    answers = [
        json.loads(e["payloadJson"])
        for e in polled["items"]
        if e["eventType"] == "pact.human.responded"
    ]
    assert [a.get("response") for a in answers] == ["Yes, add it"]
    approvals = [e for e in polled["items"] if e["eventType"] == "pact.proposal.approved"]
    assert any(json.loads(e["payloadJson"]).get("why") == "numbers checked" for e in approvals)

    terminal.keys("q")
    assert terminal.wait_for_exit() == 0


def _right_pane(screen: str) -> str:
    """The text of the right-hand pane (the master-log screen's detail), its wrapped lines
    joined by single spaces: a phrase is found wherever the pane broke it."""
    parts = []
    for line in screen.splitlines():
        # the left pane's right border meets the detail's left border: "││", "╮╭", "╯│", ...
        found = re.search(r"[│╮╯][│╭╰](.*)$", line)
        if found:
            parts.append(found.group(1).rstrip(" │╮╯─▁▂▃▄▅▆▇█▌▏"))
    return " ".join(" ".join(parts).split())


def _conversation(tmp_path: Path) -> Path:
    directory = tmp_path / "conv-branches"
    shutil.copytree(GPTME / "conv-branches", directory)
    return directory


VERIFIED = "10 references: 9 ok, 1 not ok"


def test_a_broken_reference_in_a_gptme_conversation_in_a_real_terminal(
    terminal: Terminal, tmp_path: Path
) -> None:
    """``pact-tui DIR`` on a real gptme conversation: the references are verified, ``n`` walks
    to the one that is not ok (a range that starts mid-line), the detail says why and where the
    original still is, and ``o`` reads that original whole."""
    directory = _conversation(tmp_path)
    terminal.start([*_pact_tui(), str(directory)], size=(100, 30))
    opened = ("conv-branches · master 24 lines", VERIFIED)
    terminal.wait_for(lambda s: all(part in s for part in opened), "the references verified")

    terminal.keys("n")
    problem = ("mid-line", "147 bytes into line 11", "branches/main-undo-0.jsonl:12")
    screen = terminal.wait_for(
        lambda s: "views/compacted-001:12" in s and all(p in _right_pane(s) for p in problem),
        "the broken reference after 'n'",
    )
    assert "the original is still in branches/main-undo-0.jsonl:12" in _right_pane(screen)

    # The original as gptme wrote it before the undo: line 12 of the branch it saved.
    branch = (directory / "branches" / "main-undo-0.jsonl").read_text().splitlines()
    original = json.loads(branch[11])["content"]
    lines = original.splitlines()[:12]
    shown = [line for line in lines if len(line.strip()) > 20 and line.isascii()][:3]
    assert len(shown) == 3 and all(len(line) < 90 for line in shown)  # drawn unwrapped
    terminal.keys("o")
    screen = terminal.wait_for(
        lambda s: "Next problem" not in s and all(line in s for line in shown),
        "the original in the reader",
    )
    assert "branches/main-undo-0.jsonl:12" in screen  # the reader's title: where it came from
    terminal.keys("Escape")  # apart from the next key: ESC q would be read as Alt+q
    terminal.wait_for(
        lambda s: "Next problem" in s and "147 bytes into line 11" in _right_pane(s),
        "the reader to close",
    )
    terminal.keys("q")
    assert terminal.wait_for_exit() == 0


def test_a_message_gptme_appends_is_shown_in_a_real_terminal(
    terminal: Terminal, tmp_path: Path
) -> None:
    """The app follows the directory (watch is on by default): a message appended to the master
    log the way gptme writes it is counted, and with ``F`` the master list shows it."""
    directory = _conversation(tmp_path)
    terminal.start([*_pact_tui(), str(directory)])
    terminal.wait_for(lambda s: "master 24 lines" in s and VERIFIED in s, "the conversation")
    terminal.keys("F")
    terminal.wait_for(lambda s: "FOLLOWING · conv-branches" in s, "follow mode")

    message = {
        "role": "user",
        "content": "Now port the CSV importer as well.",
        "timestamp": "2026-11-23T16:20:07.123456",
    }
    with (directory / "conversation.jsonl").open("a") as log:  # as gptme appends (LogManager)
        log.write(json.dumps(message) + "\n")
    terminal.wait_for(lambda s: "master 25 lines" in s, "the appended message counted")
    terminal.wait_for(
        lambda s: any(
            "25 user" in line and "16:20:07" in line and "Now port the" in line
            for line in s.splitlines()
        ),
        "the appended message in the master list",
    )
    terminal.keys("q")
    assert terminal.wait_for_exit() == 0


def _untouched(terminal: Terminal) -> Callable[[str], None]:
    """With tmux turning OSC 52 into paste buffers, a check that the pane keeps the title it has
    now and that no buffer appears (failing at once, saying where)."""
    terminal.tmux("set-option", "-s", "set-clipboard", "on")
    title = terminal.tmux("display-message", "-p", "-t", "app", "#{pane_title}")

    def untouched(where: str) -> None:
        now = terminal.tmux("display-message", "-p", "-t", "app", "#{pane_title}")
        assert now == title and TITLE not in now, f"{where}: the title is now {now!r}"
        assert terminal.tmux("list-buffers") == "", f"{where}: a paste buffer appeared"

    return untouched


def test_a_hostile_document_leaves_the_terminal_alone(terminal: Terminal, tmp_path: Path) -> None:
    """The custodian's screen over a document whose agents wrote OSC 0/2/8/52 (ended by BEL
    and by ST), markup and 10 MB into every field they could: each view shown, each section's
    Markdown rendered, while the pane keeps its title and no paste buffer appears."""
    workspace = tmp_path / "evil.pact"
    name = asyncio.run(build_hostile_document(workspace))
    terminal.start(["sh", "-c", f"tmux wait-for go && {shlex.join(_pact_tui())} {workspace}"])
    untouched = _untouched(terminal)
    terminal.tmux("wait-for", "-S", "go")

    def shows(part: str, where: str) -> Callable[[str], bool]:
        return lambda screen: (untouched(where), part in screen)[1]

    terminal.wait_for(shows("LIVE", "the inspector"), "the inspector")
    terminal.keys("2")
    terminal.wait_for(shows(f" {name} · v", "the document screen"), "the document screen")
    for down in range(6):  # every section's Markdown, the 10 MB one last
        terminal.keys("Down")
        terminal.wait_for(shows("Body" if down == 0 else "", f"section {down + 1}"), "a section")
    terminal.wait_for(shows("Enter reads the whole section", "the big section"), "its start")
    for key, title in [("P", "proposals ("), ("H", "salience ("), ("I", "escalation inbox")]:
        terminal.keys(key)
        terminal.wait_for(shows(title, f"view {key}"), f"view {key}")
        terminal.keys("Down", "Down")
    for key, title in [("A", "x[/] [@click=app.bell("), ("E", "events (")]:
        terminal.keys(key)
        terminal.wait_for(shows(title, f"view {key}"), f"view {key}")
    terminal.keys("q")
    assert terminal.wait_for_exit() == 0
    untouched("the end")


def test_a_hostile_conversation_leaves_the_terminal_alone(
    terminal: Terminal, tmp_path: Path
) -> None:
    """``pact-tui DIR`` on a gptme conversation with hostile messages, roles and branch file
    names (markup and escapes): every log opened and its last lines drawn, the title and the
    clipboard untouched."""
    directory = build_hostile_conversation(tmp_path / "conversation")
    terminal.start(["sh", "-c", f"tmux wait-for go && {shlex.join(_pact_tui())} {directory}"])
    untouched = _untouched(terminal)
    terminal.tmux("wait-for", "-S", "go")
    terminal.wait_for(lambda s: "references: " in s, "the conversation verified")
    logs = ["conversation", "views/compacted-001", "views/compacted-002"]
    logs += [f"branches/{visible(name)}" for name in sorted(HOSTILE_BRANCHES)]
    terminal.keys("BTab", "Home")  # the list of logs
    for number, log in enumerate(logs):
        terminal.keys("Enter")
        terminal.wait_for(lambda s, log=log: f"╭─ {log} " in s, f"log {log} opened")
        untouched(f"log {log}")
        terminal.keys("Tab", "End")  # its last lines: the hostile messages
        if log != "views/compacted-001":  # (gptme's own view, from before them)
            terminal.wait_for(lambda s: "x[/] [@cl" in s, f"{log}'s last lines")
            untouched(f"log {log}'s last lines")
        terminal.keys("BTab", "Down") if number + 1 < len(logs) else None
    terminal.keys("q")
    assert terminal.wait_for_exit() == 0
    untouched("the end")
