"""Starting a helper script as a separate Python process, as the multi-process tests do."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def start_script(script: Path, *args: object) -> subprocess.Popen[str]:
    """``python script args…`` from the repository root, with pipes for all three streams."""
    return subprocess.Popen(
        [sys.executable, str(script), *map(str, args)],
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
