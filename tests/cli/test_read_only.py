"""Looking never writes, and works where writing cannot (issue 10 §3); what the file system
refuses is said in one line (§4). Permissions are real: the commands run in a separate process
for which file permissions apply (``tests.processes.as_ordinary_user``): each a process of its
own, or, where a test runs many, one after another in a process of that user
(``commands_process.py``), with a command of each test still a process of its own."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from engine.workspace import Workspace, cadence
from tests import processes
from tests.engine.workspace.bad_files import state
from tests.processes import (
    OWNER_UID,
    READER_UID,
    run_as_ordinary_user,
    run_as_user,
    start_as_ordinary_user,
    start_as_user,
)

from .conftest import Ran, failed, ok

pytestmark = pytest.mark.filterwarnings("error")

FIXTURES = Path(__file__).resolve().parents[1] / "engine" / "workspace" / "fixtures"
V2_CHECKPOINT = FIXTURES / "v2-checkpoint.pact"  # written by the previous release (schema 1)
HOLDER = Path(__file__).resolve().parent / "holder_process.py"
COMMANDS = Path(__file__).resolve().parent / "commands_process.py"

LOOKING = [
    ("verify", "{path}"),
    ("ctx", "list", "{path}"),
    ("ctx", "print", "{path}", "agent"),
    ("ctx", "print", "{path}", "agent", "--mode", "provider", "--episode", "1"),
    ("ctx", "select", "{path}", "agent", "*"),
    ("ctx", "snapshots", "{path}", "agent"),
    ("ctx", "diff", "{path}", "agent", "-1"),
    ("ctx", "changes", "{path}", "agent"),
    ("ctx", "changes", "{path}", "agent", "--episode", "1"),
    ("ctx", "story", "{path}", "agent", "*"),
]


def looking(path: Path) -> list[list[str]]:
    return [[str(path) if part == "{path}" else part for part in command] for command in LOOKING]


async def workspace_with_a_long_tail(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A context whose log runs 300 events past any checkpoint: a process that closes it
    read-write saves one (more than CHECKPOINT_ON_CLOSE), so looking must not."""
    with monkeypatch.context() as patch:
        patch.setattr(cadence, "CHECKPOINT_ON_CLOSE", 10**9)
        patch.setitem(cadence.INTERVALS, "context", cadence.Intervals(10**9, 10**9))
        patch.setattr(cadence, "INDEX_EVERY", 10**9)
        async with await Workspace.open(path, create=True, watch=False) as ws:
            await ws.create_context("agent")
            await ws.run("agent", {"op": "message", "role": "user", "text": "hi"})
            for n in range(150):
                await ws.run("agent", {"op": "advance"})
                await ws.run("agent", {"op": "message", "role": "user", "text": f"m{n}"})


def checkpoint_rows(path: Path) -> list[tuple[object, ...]]:
    uri = path.absolute().as_uri() + "?mode=ro&immutable=1"  # makes no -wal, -shm beside it
    with closing(sqlite3.connect(uri, uri=True)) as connection:
        return connection.execute("SELECT * FROM checkpoints ORDER BY name").fetchall()


@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_looking_writes_nothing_not_even_a_switch_to_wal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, journal: str
) -> None:
    """In rollback-journal mode (as a backup, or another tool, leaves a file), opening it for
    writing switches it to WAL, which rewrites its header. In WAL mode, a reader makes the
    -wal and -shm files beside it: they are gone again when it is done."""
    path = tmp_path / "agents.pact"
    asyncio.run(workspace_with_a_long_tail(path, monkeypatch))
    with closing(sqlite3.connect(path)) as connection:
        connection.execute(f"PRAGMA journal_mode = {journal}")
    before, checkpoints = state(path), checkpoint_rows(path)
    for command in looking(path):
        ok(*command)
    assert state(path) == before
    assert checkpoint_rows(path) == checkpoints


def cli_as_ordinary_user(*args: object) -> Ran:
    done = run_as_ordinary_user([sys.executable, "-m", "pact_tui", *map(str, args)])
    return Ran(done.returncode, done.stdout, done.stderr)


class Commands:
    """``pact-tui`` commands run one after another in a process of their own
    (``commands_process.py``), started as the user that runs them."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process

    def __call__(self, *args: object) -> Ran:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(json.dumps([str(arg) for arg in args]) + "\n")
        stdin.flush()
        line = stdout.readline()
        assert line, self.process.communicate(timeout=60)[1]  # it ended: what it said
        said = json.loads(line)
        return Ran(said["code"], said["out"], said["err"])


@contextmanager
def commands_in(process: subprocess.Popen[str]) -> Iterator[Commands]:
    """Run commands in ``process`` (started from ``commands_process.py``), which must end well
    once it is told no more."""
    with process:
        try:
            yield Commands(process)
            _out, err = process.communicate(timeout=60)
            assert process.returncode == 0, err
        finally:
            if process.poll() is None:
                process.kill()


def test_looking_works_in_a_folder_this_user_cannot_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    path = folder / "agents.pact"
    asyncio.run(workspace_with_a_long_tail(path, monkeypatch))
    expected = [ok(*command).out for command in looking(path)]  # as the owner sees it
    path.chmod(0o444)
    folder.chmod(0o555)
    try:
        before = state(path)
        ran = cli_as_ordinary_user(*looking(path)[0])  # a process of its own
        assert (ran.code, ran.err, ran.out) == (0, "", expected[0])
        with commands_in(start_as_ordinary_user(COMMANDS)) as looker:
            for command, out in zip(looking(path), expected, strict=True):
                ran = looker(*command)
                assert (ran.code, ran.err, ran.out) == (0, "", out), command
            # Writing is refused in one line that says why; nothing was made beside it.
            for writing in (["user", "hello"], ["fork", "copy"], ["fork", "copy", "--at", "-1"]):
                ran = looker("ctx", writing[0], path, "agent", *writing[1:])
                assert (ran.code, ran.out) == (1, "")
                [line] = ran.err.splitlines()
                assert line.startswith("pact-tui: READ_ONLY: this user cannot write"), line
                assert state(path) == before
    finally:
        folder.chmod(0o755)


@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_workspace_this_user_cannot_read_is_one_line(tmp_path: Path, what: str) -> None:
    folder = tmp_path / "private"
    folder.mkdir()
    path = folder / "agents.pact"
    ok("ctx", "create", path, "agent")
    locked = path if what == "file" else folder
    locked.chmod(0o000)
    try:
        for command in (["ctx", "list", path], ["verify", path], ["ctx", "user", path, "a", "x"]):
            ran = cli_as_ordinary_user(*command)
            assert (ran.code, ran.out) == (1, ""), ran
            [line] = ran.err.splitlines()  # not a PermissionError traceback
            assert line.startswith("pact-tui: PERMISSION_DENIED: permission denied"), line
            assert str(path) in line
    finally:
        locked.chmod(0o755)
    assert ok("ctx", "list", path).out.splitlines()[1].startswith("agent")  # untouched


@pytest.mark.parametrize("blocked", ["-wal", "-shm"])
def test_a_create_that_fails_leaves_no_file_behind(tmp_path: Path, blocked: str) -> None:
    """SQLite cannot make its write-ahead log (or shared memory) file: a folder of that name is
    in the way. The workspace file was made first, and was left behind, empty or half made."""
    path = tmp_path / "agents.pact"
    (tmp_path / f"agents.pact{blocked}").mkdir()
    before = sorted(p.name for p in tmp_path.iterdir())
    ran = failed("ctx", "create", path, "agent", code="STORAGE_FAILURE")
    assert str(path) in ran.err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_create_into_an_empty_file_that_fails_leaves_it_empty(tmp_path: Path) -> None:
    path = tmp_path / "agents.pact"
    path.touch()
    (tmp_path / "agents.pact-wal").mkdir()
    failed("ctx", "create", path, "agent", code="STORAGE_FAILURE")
    assert path.stat().st_size == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agents.pact", "agents.pact-wal"]


def test_looking_at_a_workspace_of_the_previous_schema_does_not_upgrade_it(tmp_path: Path) -> None:
    """The previous release's files are schema 1: an upgrade is a write, which looking does not
    make; its checkpoint is used as the upgrade would vouch for it."""
    path = tmp_path / "old.pact"
    shutil.copy(V2_CHECKPOINT, path)
    before = state(path)
    assert schema_version(path) == 1
    assert ok("verify", path, "--json").data["ok"] is True
    listed = ok("ctx", "list", path)
    assert listed.err == ""  # no note: the checkpoint was used
    assert "agent" in listed.out
    assert ok("verify", path, "--deep", "--json", "--no-record").data["ok"] is True
    assert state(path) == before
    assert schema_version(path) == 1
    ok("ctx", "user", path, "agent", "hello")  # writing upgrades it
    assert schema_version(path) == 2


def schema_version(path: Path) -> int:
    uri = path.absolute().as_uri() + "?mode=ro&immutable=1"  # makes no -wal, -shm beside it
    with closing(sqlite3.connect(uri, uri=True)) as connection:
        return int(connection.execute("PRAGMA user_version").fetchone()[0])


# -- one user's look at another user's workspace (issue 23 §5) ---------------------------------

OTHERS_LOOKING = [
    ("verify", "{path}"),
    ("verify", "{path}", "--deep"),
    ("backup", "{path}", "{folder}/copy-{n}.pact"),
    ("ctx", "list", "{path}"),
    ("ctx", "print", "{path}", "agent"),
    ("ctx", "select", "{path}", "agent", "*"),
    ("ctx", "snapshots", "{path}", "agent"),
    ("doc", "list", "{path}"),
    ("doc", "show", "{path}", "plan"),
    ("doc", "export", "{path}", "plan"),
    ("doc", "log", "{path}", "plan"),
    ("tap", "sections", "{path}", "plan", "--agent", "alice"),
]


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    with processes.shared_folder() as folder:
        yield folder


def as_user(uid: int, *args: object) -> Ran:
    done = run_as_user(uid, [sys.executable, "-m", "pact_tui", *map(str, args)])
    return Ran(done.returncode, done.stdout, done.stderr)


def owned_beside(path: Path) -> dict[str, int]:
    """The files beside the workspace that SQLite makes (-wal, -shm, -journal), and whose."""
    return {
        p.name: p.stat().st_uid
        for p in path.parent.iterdir()
        if p.name.startswith(path.name) and p.name != path.name
    }


def others_looking(path: Path) -> list[list[str]]:
    return [
        [part.format(path=path, folder=path.parent, n=n) for part in command]
        for n, command in enumerate(OTHERS_LOOKING)
    ]


def owners_workspace(folder: Path, owner: Commands) -> Path:
    """A workspace made by OWNER_UID (``owner``) in ``folder``: 0644, so others may read it, not
    write it; a context and a document in it."""
    path = folder / "agents.pact"
    source = folder / "plan.md"
    source.write_text("# Plan\n\n## Risk\n\nLow.\n")
    source.chmod(0o644)
    for command in (
        ["ctx", "create", path, "agent"],
        ["ctx", "user", path, "agent", "hello"],
        ["doc", "create", path, "plan", "--from", source],
        ["tap", "join", path, "plan", "--as", "alice"],
    ):
        ran = owner(*command)
        assert ran.code == 0, ran
    assert path.stat().st_uid == OWNER_UID and path.stat().st_mode & 0o777 == 0o644
    assert owned_beside(path) == {}  # the owner's last connection removed its -wal and -shm
    return path


def said_to(command: list[object]) -> str:
    """What a look says on stderr to a user who cannot write: only that a deep verification's
    pass is not recorded."""
    if "--deep" in command:
        return "pact-tui: note: this user cannot write the workspace: the pass is not recorded\n"
    return ""


@pytest.mark.slow
def test_another_user_s_look_leaves_nothing_and_never_blocks_the_owner(
    shared_folder: Path,
) -> None:
    """Looking at a 0644 workspace of another user in a sticky folder left a -wal and a -shm
    that the looker owned: the owner could neither write them nor remove them, and every
    command of the owner's failed with STORAGE_FAILURE until someone did."""
    with (
        commands_in(start_as_user(OWNER_UID, COMMANDS)) as owner,
        commands_in(start_as_user(READER_UID, COMMANDS)) as reader,
    ):
        path = owners_workspace(shared_folder, owner)
        events = as_user(OWNER_UID, "verify", path, "--json").data["checked"]
        for command in others_looking(path):
            ran = reader(*command)
            assert (ran.code, ran.err) == (0, said_to(command)), (command, ran)
            assert owned_beside(path) == {}, command
            ran = owner("ctx", "user", path, "agent", f"after {command[:2]}")
            assert (ran.code, ran.err) == (0, ""), (command, ran)
    events += len(OTHERS_LOOKING)
    assert as_user(READER_UID, "verify", path).out == f"ok: {events} events, chain intact\n"
    assert "after ['verify', " in as_user(READER_UID, "ctx", "print", path, "agent").out


@pytest.mark.slow
def test_another_user_looks_through_the_files_of_an_owner_at_work(shared_folder: Path) -> None:
    """While the owner has the workspace open, its -wal and -shm are there: the other user
    reads through them, sees what the owner committed, and makes nothing beside them."""
    with commands_in(start_as_user(OWNER_UID, COMMANDS)) as making:
        path = owners_workspace(shared_folder, making)
    with (
        start_as_user(OWNER_UID, HOLDER, path) as owner,
        commands_in(start_as_user(READER_UID, COMMANDS)) as reader,
    ):
        assert owner.stdin is not None and owner.stdout is not None
        assert owner.stdout.readline() == "appended 1\n"
        assert owned_beside(path) == {"agents.pact-wal": OWNER_UID, "agents.pact-shm": OWNER_UID}
        for command in others_looking(path):
            ran = reader(*command)
            assert (ran.code, ran.err) == (0, said_to(command)), (command, ran)
            assert set(owned_beside(path).values()) == {OWNER_UID}, command
        # The owner's commit is in its -wal, not yet in the file: seen all the same.
        assert as_user(READER_UID, "verify", path).out == "ok: 5 events, chain intact\n"
        owner.stdin.write("again\n")
        owner.stdin.flush()
        assert owner.stdout.readline() == "appended 1\n"
        owner.stdin.close()
        assert owner.wait(timeout=60) == 0
    assert owned_beside(path) == {}
    assert as_user(READER_UID, "verify", path).out == "ok: 6 events, chain intact\n"
