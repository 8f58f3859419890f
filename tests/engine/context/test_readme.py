"""The README's Python example runs, and does what its comments say (issue 27: its query
``^seq +preferences`` matched nothing, the note it meant having no such tag)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parents[3] / "README.md"


def python_example() -> str:
    text = README.read_text(encoding="utf-8")
    after = text.split("Or from Python, with the engine alone:", 1)[1]
    match = re.search(r"```python\n(.*?)```", after, re.S)
    assert match is not None, "the README's Python example"
    return match.group(1)


def test_the_readme_python_example_does_what_it_says() -> None:
    namespace: dict[str, Any] = {}
    exec(compile(python_example(), "README.md", "exec"), namespace)
    context = namespace["context"]
    assert context["d1, 1, 0"].content == "User prefers formal tone"
    assert [n.key for n in context.select("^seq +preferences")] == ["prefs"]
    assert [n.content for n in context.select("d1-3, 1, *")] == ["User prefers formal tone"]
