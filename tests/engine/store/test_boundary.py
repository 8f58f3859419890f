"""The store stands alone: no UI imports, and the file watcher is loaded only when used."""

from __future__ import annotations

import subprocess
import sys

from tests.processes import REPO_ROOT

PROBE = """
import sys
import engine.store
loaded = sorted({name.split(".")[0] for name in sys.modules})
print(" ".join(loaded))
"""


def test_importing_the_store_loads_no_ui_and_no_watcher() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    loaded = set(result.stdout.split())
    assert "engine" in loaded
    assert not loaded & {"textual", "rich", "pact_tui"}
    assert "watchfiles" not in loaded
