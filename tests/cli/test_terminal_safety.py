"""Terminal safety on the command line: every command, on a workspace whose keys, tags,
content, types, data, seal triggers and actors carry escape sequences (and with such arguments
and paths), prints no raw control character on stdout or stderr; a line never splits where a
key holds a newline; ``--json`` documents read back as they were.

Every command runs in this process (``main(argv)``, its streams the bytes a pipe gets, encoded
as a process's own streams encode them), and one of each kind also as a real process (the
encoding the interpreter sets up, argparse's exit, the app's start): those print the same bytes
both ways."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from pact_tui.cli import main
from tests.hostile import PAYLOAD, raw_controls

from .conftest import REPO_ROOT, cli, ok

P = PAYLOAD
# Through --component, what an argument cannot hold: a NUL, and the payload in a type, in
# the keys and values of JSON content, and in the item's data.
COMPONENT = json.dumps(
    {
        "type": "img" + P,
        "content": {"k" + P: ["v" + P, "\x00"]},
        "key": "\x00key" + P,
        "note": "data" + P,
    }
)

WRITES: list[list[str]] = [
    ["ctx", "create", "{ws}", "evil", "--actor", P],
    ["ctx", "insert", "{ws}", "evil", "d-1, 0, 0", f"sys {P}\nline two\tcol", "--key", "k" + P,
     "--tag", "t" + P, "--tag", "plain", "--actor", P],
    ["ctx", "user", "{ws}", "evil", f"hello {P}", "--actor", P],
    ["ctx", "insert", "{ws}", "evil", "d0, 1, 0", "--component", COMPONENT],
    ["ctx", "insert", "{ws}", "evil", "d0, 2, 0", f"short-lived {P}", "--ttl", "1"],
    ["ctx", "insert", "{ws}", "evil", "d0, 3, 0", f"doomed {P}", "--key", "doomed"],
    ["ctx", "seal", "{ws}", "evil", f"seal {P}", "--actor", P],
    ["ctx", "advance", "{ws}", "evil"],
    ["ctx", "update", "{ws}", "evil", "d-1, 0, 0", f"replaced {P}", "--key", "k" + P],
    ["ctx", "assistant", "{ws}", "evil", f"bye {P}"],
    ["ctx", "update", "{ws}", "evil", "d0, 1", f"appended {P}", "--mode", "append"],
    ["ctx", "delete", "{ws}", "evil", "--key", "doomed"],
    ["ctx", "seal", "{ws}", "evil", f"second {P}"],
    ["ctx", "fork", "{ws}", "evil", "copy", "--at", "-1", "--actor", P],
]  # fmt: skip

READS: list[list[str]] = [
    ["ctx", "list", "{ws}"],
    ["ctx", "list", "{ws}", "--json"],
    ["ctx", "select", "{ws}", "evil", "*"],
    ["ctx", "select", "{ws}", "evil", "^seq"],
    ["ctx", "print", "{ws}", "evil"],
    ["ctx", "print", "{ws}", "evil", "--mode", "provider"],
    ["ctx", "print", "{ws}", "evil", "--mode", "json"],
    ["ctx", "print", "{ws}", "evil", "--episode", "0"],
    ["ctx", "diff", "{ws}", "evil", "e0"],
    ["ctx", "diff", "{ws}", "evil", "-2", "-1"],
    ["ctx", "changes", "{ws}", "evil"],
    ["ctx", "changes", "{ws}", "evil", "--episode", "1"],
    ["ctx", "changes", "{ws}", "evil", "--between", "-3", "-1", "--json"],
    ["ctx", "snapshots", "{ws}", "evil"],
    ["verify", "{ws}"],
    ["verify", "{ws}", "--deep"],
    ["verify", "{forged}"],
    ["backup", "{ws}", "{backup}", "--force"],  # a destination named with the payload
]

FAILURES: list[tuple[list[str], int]] = [  # each with its exit status
    (["ctx", "select", "{ws}", "evil", P], 1),
    (["ctx", "select", "{ws}", "evil", "#" + P], 1),
    (["ctx", "insert", "{ws}", "evil", P, "text"], 1),
    (["ctx", "insert", "{ws}", "evil", "d0, 1, 0", "--component", P], 1),
    (["ctx", "diff", "{ws}", "evil", P], 1),
    (["ctx", "changes", "{ws}", "evil", "--between", P, "-1"], 1),
    (["ctx", "fork", "{ws}", "evil", P], 1),
    (["ctx", "fork", "{ws}", "evil", "copy2", "--at", P], 1),
    (["ctx", "print", "{ws}", "evil", "--at", P], 1),
    (["ctx", "seal", "{ws}", P], 1),
    (["ctx", "create", "{ws}", P], 1),
    (["ctx", "list", "{missing}"], 1),
    (["ctx", "user", "{missing}", "evil", "hi"], 1),
    (["verify", "{missing}"], 1),
    (["verify", "{forged}"], 1),  # a broken chain is a result, with status 1
    (["verify", "{forged}", "--deep"], 1),
    (["backup", "{forged}", "{forged_backup}", "--force"], 1),  # a copy of a broken chain
    (["backup", "{ws}", "{missing}"], 1),
    (["{missing}"], 1),  # the app, on a workspace that is not there
    (["ctx", "advance", "{ws}", "evil", "--steps", P], 2),  # argparse refuses the value
    (["verify", "{ws}", P], 2),  # argparse: unrecognized arguments
    (["ctx", "print", "{ws}", "evil", "--mode", P], 2),  # argparse: invalid choice
]


# Run as real processes too (with and without --json), and by every other command after the
# writes: one of each kind. A write with the payload everywhere an argument can carry it; a
# read; verify's failed chain (a result, status 1); a copy to a path with the payload; a
# refusal (status 1); argparse's refusal (status 2, through SystemExit here); the app, which
# stops at the missing file before any terminal is touched; the demo's print.
IN_A_PROCESS = [
    ("ctx", "insert", "{ws}", "evil", "d-1, 0, 0", f"sys {P}\nline two\tcol", "--key", "k" + P,
     "--tag", "t" + P, "--tag", "plain", "--actor", P),
    ("ctx", "select", "{ws}", "evil", "*"),
    ("verify", "{forged}"),
    ("backup", "{ws}", "{backup}", "--force"),
    ("ctx", "select", "{ws}", "evil", P),
    ("ctx", "print", "{ws}", "evil", "--mode", P),
    ("{missing}",),
    ("demo", "--print", "--verbose"),
]  # fmt: skip
# Run here too, to compare: not the write, the app or the demo, nor the copy (which counts
# checkpoints, and the commands around it may have saved one more).
HERE_TOO = {args for args in IN_A_PROCESS[1:] if args[0] not in ("{missing}", "demo", "backup")}


def kind_of_its_own(args: tuple[str, ...]) -> bool:
    """Whether ``args`` run as a real process: one of ``IN_A_PROCESS``, or one with --json."""
    return args in IN_A_PROCESS or (args[-1] == "--json" and args[:-1] in IN_A_PROCESS)


def argv_of(args: list[str], paths: dict[str, Path]) -> list[str]:
    return [str(paths[a[1:-1]]) if a[1:-1] in paths else a for a in args]


def run(args: list[str], paths: dict[str, Path]) -> subprocess.CompletedProcess[bytes]:
    """``pact-tui ARGS`` as a real process."""
    return subprocess.run(
        [sys.executable, "-m", "pact_tui", *argv_of(args, paths)],
        cwd=REPO_ROOT,
        capture_output=True,
        timeout=120,
    )


def run_here(args: list[str], paths: dict[str, Path]) -> subprocess.CompletedProcess[bytes]:
    """``pact-tui ARGS`` in this process, its stdout and stderr the bytes a pipe would get:
    text streams encoding as a process's own do when they are pipes (UTF-8; stdout strict until
    ``main`` sets it otherwise, stderr backslashreplace)."""
    stdout, stderr = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(stdout, encoding="utf-8", errors="strict")
    err = io.TextIOWrapper(stderr, encoding="utf-8", errors="backslashreplace")
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv_of(args, paths))
        except SystemExit as exit:  # argparse: usage errors
            code = exit.code if isinstance(exit.code, int) else 1
    out.flush()
    err.flush()
    return subprocess.CompletedProcess(args, code, stdout.getvalue(), stderr.getvalue())


def assert_safe(args: list[str], done: subprocess.CompletedProcess[bytes]) -> None:
    for name, data in (("stdout", done.stdout), ("stderr", done.stderr)):
        text = data.decode("utf-8")  # strict: a lone surrogate could not have been written
        found = raw_controls(text)
        assert not found, f"{args}: raw control characters on {name}: {found[:3]}"
        assert "Traceback" not in text, f"{args}: {text}"


def forge(workspace: Path, into: Path) -> Path:
    """A copy whose last event's hash column holds the payload (verify quotes it)."""
    shutil.copy(workspace, into)
    with closing(sqlite3.connect(into)) as connection:
        connection.execute(
            "UPDATE events SET hash = ? WHERE seq = (SELECT max(seq) FROM events)", ("h" + P,)
        )
        connection.commit()
    return into


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    folder = tmp_path_factory.mktemp("hostile")
    missing = folder / f"no{P}where" / "ws.pact"
    yield {
        "ws": folder / "ws.pact",
        "forged": folder / "forged.pact",
        "missing": missing,
        "backup": folder / f"copy{P}.pact",
        "forged_backup": folder / f"forged copy{P}.pact",
    }


@pytest.mark.slow
def test_every_command_prints_no_raw_control_character(paths: dict[str, Path]) -> None:
    assert tuple(WRITES[1]) == IN_A_PROCESS[0]  # run as a process
    for write in WRITES:  # in order: they build the workspace
        for variant in (write, [*write, "--json"]) if write[1] == "seal" else (write,):
            done = (run if kind_of_its_own(tuple(variant)) else run_here)(variant, paths)
            assert done.returncode == 0, (variant, done.stderr.decode())
            assert_safe(variant, done)
    forge(paths["ws"], paths["forged"])

    expected = {tuple(args): 0 for args in READS}
    expected.update((tuple(args), code) for args, code in FAILURES)
    expected.update({(*args, "--json"): code for args, code in list(expected.items())})
    del expected[("{missing}", "--json")]  # the app takes no --json
    expected[("demo", "--print", "--verbose")] = 0
    processes = [args for args in expected if kind_of_its_own(args)]
    assert set(IN_A_PROCESS[1:]) <= set(processes)  # the first, a write, ran above
    with ThreadPoolExecutor(max_workers=2) as pool:
        in_processes = dict(pool.map(lambda args: (args, run(list(args), paths)), processes))
    said = {args: in_processes.get(args) or run_here(list(args), paths) for args in expected}
    for args, done in said.items():
        assert_safe(list(args), done)
        assert done.returncode == expected[args], (args, done.stderr.decode())
    for kind, done in in_processes.items():  # what a process prints, printed here too
        if kind in HERE_TOO or (kind[-1] == "--json" and kind[:-1] in HERE_TOO):
            here = run_here(list(kind), paths)
            assert (here.returncode, here.stdout, here.stderr) == (
                done.returncode,
                done.stdout,
                done.stderr,
            ), kind
    # What the forged hash and a failing command said, made visible rather than left out.
    verify = said[("verify", "{forged}")].stdout.decode()
    assert "h\\u001b[2J\\u001b]0;pwned\\u0007" in verify
    select = said[("ctx", "select", "{ws}", "evil", P)].stderr.decode()
    assert select.startswith("pact-tui: INVALID_SELECTOR: ") and select.count("\n") == 1


def test_json_documents_read_back_unchanged(tmp_path: Path) -> None:
    """--json escapes what it must as JSON does: every value is what the workspace holds."""
    ws = tmp_path / "ws.pact"
    ok("ctx", "create", ws, "evil")
    ok("ctx", "insert", ws, "evil", "d-1, 0, 0", f"sys {P}", "--key", "k" + P, "--tag", P)
    ran = ok("ctx", "select", ws, "evil", "*", "--json")
    [node] = ran.data
    assert (node["key"], node["tags"]) == ("k" + P, [P])
    assert not raw_controls(ran.out)
    provider = ok("ctx", "print", ws, "evil", "--mode", "provider")
    assert json.loads(provider.out)[0]["content"] == f"sys {P}"
    assert not raw_controls(provider.out)


def test_a_newline_in_a_key_cannot_forge_a_row(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    ok("ctx", "create", ws, "evil")
    forged_row = '(0,0,0)  text  n99  permanent  "approved"'
    ok("ctx", "insert", ws, "evil", "d-1, 0, 0", "x", "--key", f"k\n{forged_row}", "--tag", "t\nu")
    ran = ok("ctx", "select", ws, "evil", "*")
    [line] = ran.out.splitlines()
    assert "#k\\n(0,0,0)" in line and "+t\\nu" in line
    tree = cli("ctx", "print", ws, "evil").out
    assert not any(row.startswith("(0,0,0)") for row in tree.splitlines())
