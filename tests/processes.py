"""Starting a helper script as a separate Python process, as the multi-process tests do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
