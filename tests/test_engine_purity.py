"""The engine must never pull in the UI: import it in a clean interpreter and look."""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = ("textual", "rich", "pact_tui")

PROBE = """
import json, sys
import engine, engine.context, engine.store
import engine.context.scenario
from engine.context import Context, ContextExplorer, TextContent
c = Context()
c.add_user("hello")
ContextExplorer(c).render("tree")
print(json.dumps(sorted(sys.modules)))
"""


def test_engine_imports_no_ui_module() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], check=True, capture_output=True, text=True
    ).stdout
    modules = json.loads(out)
    assert "engine.context" in modules  # the probe really imported the engine
    leaked = [m for m in modules if m.split(".")[0] in FORBIDDEN]
    assert leaked == []
