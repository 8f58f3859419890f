"""Starting a helper script as a separate Python process, as the multi-process tests do."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def start_script(script: Path, *args: object) -> subprocess.Popen[str]:
    """``python script args…`` from the repository root, with pipes for all three streams."""
    return _started([sys.executable, str(script), *map(str, args)])


def _started(argv: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        argv,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


# The capabilities that let root read and write whatever the permission bits say.
_BYPASS = "dac_override,dac_read_search"


def as_ordinary_user(argv: list[str]) -> list[str]:
    """``argv`` run so that file permissions apply to it. Root ignores them (chmod 000 reads
    fine), so as root the command runs without the two capabilities that let it, which
    ``setpriv`` (util-linux) removes; any other user needs nothing."""
    if os.geteuid() != 0:
        return argv
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: file permissions cannot apply here")
    drop = ",".join(f"-{cap}" for cap in _BYPASS.split(","))
    return [setpriv, f"--inh-caps={drop}", f"--bounding-set={drop}", *argv]


def start_as_ordinary_user(script: Path, *args: object) -> subprocess.Popen[str]:
    """``python script args…`` (see :func:`as_ordinary_user`) from the repository root, with
    pipes for all three streams."""
    return _started(as_ordinary_user([sys.executable, str(script), *map(str, args)]))


def run_as_ordinary_user(argv: list[str], **options: object) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` (see :func:`as_ordinary_user`) to its end from the repository root, with
    its output captured as text."""
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        as_ordinary_user(argv),
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        **options,
    )


# Two users who are neither root nor each other, for what one user's process leaves for another
# (issue 23 §5): `nobody`, and a user id no account has.
OWNER_UID = 61_234
READER_UID = 65_534


@contextlib.contextmanager
def shared_folder() -> Iterator[Path]:
    """A folder every user may write in, sticky as /tmp is (a file in it may be removed only
    by its owner), under the system's temporary folder, which every user can reach."""
    folder = Path(tempfile.mkdtemp(prefix="pact-shared-"))
    try:
        folder.chmod(0o1777)
        yield folder
    finally:
        shutil.rmtree(folder)


def as_user(uid: int, argv: list[str]) -> list[str]:
    """``argv`` run as the user (and group) ``uid``, with no supplementary groups: only root
    can switch to another user, so elsewhere the test is skipped."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("running a command as two other users needs root and setpriv (util-linux)")
    return [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv]


def run_as_user(uid: int, argv: list[str], **options: object) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` as the user ``uid`` (see :func:`as_user`) to its end from the repository
    root, with its output captured as text."""
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        as_user(uid, argv),
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        **options,
    )


def start_as_user(uid: int, script: Path, *args: object) -> subprocess.Popen[str]:
    """``python script args…`` as the user ``uid``, from the repository root, with pipes for
    all three streams."""
    return _started(as_user(uid, [sys.executable, str(script), *map(str, args)]))
