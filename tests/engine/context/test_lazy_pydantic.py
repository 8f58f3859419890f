"""Opening and reading a workspace must not load pydantic: it is a quarter of the app's start-up.

Components (the pydantic models callers build) load on first use instead.
"""

from __future__ import annotations

import subprocess
import sys


def modules_after(code: str) -> set[str]:
    program = f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    return set(done.stdout.split())


def test_reading_contexts_and_workspaces_loads_no_pydantic() -> None:
    loaded = modules_after(
        "import engine.context, engine.workspace, engine.context.compact\n"
        "from engine.context import Context\n"
        "c = Context(); c.advance(); c.select('d0, *, *'); c.render_provider()"
    )
    assert "engine.workspace" in loaded
    assert not any(name == "pydantic" or name.startswith("pydantic.") for name in loaded)


def test_components_still_import_from_the_package() -> None:
    loaded = modules_after("from engine.context import TextContent, ContextComponent, Pos")
    assert "pydantic" in loaded
    assert "engine.context.components" in loaded
