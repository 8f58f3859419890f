"""The app's code never hands text to Textual as markup, read from its source.

Textual parses a ``str`` given to most things that draw text as content markup: a ``Static`` or
a ``Label`` (unless ``markup=False``), a border title or subtitle, a tooltip, a palette entry's
help, ``Content.from_markup``. Text from a workspace, a document or a conversation in such a
string is a ``MarkupError`` (an agent named ``x[/]``) or a live action (``[@click=app.quit]``).
So the app puts text on screen as ``Content``/``Text`` built from ``visible`` strings
(``pact_tui.text.plain``), and these rules keep it that way where a string would be read as
markup:

- every ``Static`` and ``Label`` is made with ``markup=False``;
- nothing calls ``from_markup`` or ``render_str`` on anything but a literal template (whose
  ``$variables`` Textual substitutes as text), and nothing passes ``markup=True``;
- a title, a subtitle, a tooltip, a widget's ``update`` and a Rich table's cell are never a
  formatted string (an f-string, a ``+``/``%`` of strings, ``.format``, ``str()``, ``visible()``
  or a ``join`` of strings), nor a name assigned one in the same function;
- Textual's ``Markdown`` widget is made in one place only (``SectionMarkdown``), which makes
  its source visible and its links inert.

Notifications and palette entries need no rule: ``PactApp.notify`` and the app's command
provider make whatever they are given plain (tested in ``test_terminal_safety``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pact_tui

PACKAGE = Path(pact_tui.__file__).parent
TEXT_WIDGETS = {"Static", "Label"}
SINK_ATTRIBUTES = {"border_title", "border_subtitle", "tooltip", "title", "sub_title"}
MARKDOWN_HOME = PACKAGE / "widgets" / "section_markdown.py"


def modules() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def called(node: ast.Call) -> str:
    """The name a call is made by: ``Static`` for ``Static(…)``, ``update`` for
    ``x.y.update(…)``."""
    function = node.func
    if isinstance(function, ast.Name):
        return function.id
    if isinstance(function, ast.Attribute):
        return function.attr
    return ""


def formatted(node: ast.expr, assigned: dict[str, list[ast.expr]]) -> bool:
    """Whether ``node`` makes a ``str`` out of other values (which would then be read as
    markup), directly or through a name assigned one in the same function."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(part, ast.FormattedValue) for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        return (
            formatted(node.left, assigned)
            or formatted(node.right, assigned)
            or (isinstance(node.left, ast.Constant) and isinstance(node.left.value, str))
        )
    if isinstance(node, ast.IfExp):
        return formatted(node.body, assigned) or formatted(node.orelse, assigned)
    if isinstance(node, ast.Call):
        name = called(node)
        if name in ("visible", "str", "format", "repr"):
            return True
        if name == "join" and isinstance(node.func, ast.Attribute):
            return isinstance(node.func.value, ast.Constant)  # " · ".join(…): a str
        return False
    if isinstance(node, ast.Name):
        return any(formatted(value, {}) for value in assigned.get(node.id, []))
    return False


def assignments(function: ast.AST) -> dict[str, list[ast.expr]]:
    found: dict[str, list[ast.expr]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, []).append(node.value)
        elif (
            isinstance(node, ast.AnnAssign | ast.AugAssign)
            and isinstance(node.target, ast.Name)
            and node.value is not None
        ):
            found.setdefault(node.target.id, []).append(node.value)
    return found


def scopes(tree: ast.Module) -> Iterator[tuple[ast.AST, dict[str, list[ast.expr]]]]:
    """Each function with what its names are assigned, and the module itself."""
    yield tree, {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield node, assignments(node)


def problems() -> list[str]:
    found: list[str] = []
    for path, tree in modules():
        where = path.relative_to(PACKAGE.parent)
        for scope, assigned in scopes(tree):
            nodes = ast.walk(scope) if scope is not tree else iter(tree.body)
            for node in nodes:
                found += [f"{where}:{node.lineno}: {p}" for p in _check(node, assigned, path)]
    return sorted(set(found))


def _check(node: ast.AST, assigned: dict[str, list[ast.expr]], path: Path) -> Iterator[str]:
    if isinstance(node, ast.Call):
        name = called(node)
        keywords = {k.arg: k.value for k in node.keywords if k.arg is not None}
        markup = keywords.get("markup")
        if isinstance(markup, ast.Constant) and markup.value is True:
            yield "markup=True"
        if name in ("from_markup", "render_str") and not (
            node.args and isinstance(node.args[0], ast.Constant)
        ):
            yield f"{name}() of something other than a literal template"
        if name in TEXT_WIDGETS:
            if not (isinstance(markup, ast.Constant) and markup.value is False):
                yield f"{name}() without markup=False"
            if node.args and formatted(node.args[0], assigned):
                yield f"{name}() of a formatted string: build Content/Text (plain())"
        if (
            name in ("update", "add_row")
            and path != MARKDOWN_HOME  # a Markdown source, made visible there
            and any(formatted(a, assigned) for a in node.args)
        ):
            yield f"{name}() of a formatted string: build Content/Text (plain())"
        if "tooltip" in keywords and formatted(keywords["tooltip"], assigned) and name != "Binding":
            yield "a tooltip of a formatted string: build Content/Text (plain())"
        if name == "Markdown" and path != MARKDOWN_HOME:
            yield "Markdown(): use SectionMarkdown (visible source, inert links)"
    elif isinstance(node, ast.Assign):
        for target in node.targets:
            if (
                isinstance(target, ast.Attribute)
                and target.attr in SINK_ATTRIBUTES
                and formatted(node.value, assigned)
            ):
                yield f"{target.attr} = a formatted string: build Content/Text (plain())"


def test_no_text_reaches_a_widget_as_markup() -> None:
    found = problems()
    assert not found, "\n".join(found)


def test_the_rules_catch_what_they_are_for(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Each rule finds the pattern it forbids (so the test above can fail)."""
    source = """
from textual.widgets import Static, Label
from engine.visible import visible
def f(widget, name, table):
    widget.border_title = visible(f"agent {name}")
    title = f"{name} · sec"
    widget.border_subtitle = title
    widget.tooltip = "Forked from " + name
    Static(name)
    Label("x", markup=False).update(visible(name))
    table.add_row(" · ".join([name]))
    widget.notify(name, markup=True)
    Content.from_markup(name)
"""
    bad = tmp_path / "pact_tui" / "bad.py"
    bad.parent.mkdir()
    bad.write_text(source)
    monkeypatch.setattr(__import__(__name__, fromlist=["x"]), "PACKAGE", bad.parent)
    found = problems()
    said = "\n".join(found)
    for line, what in [
        (5, "border_title"),
        (7, "border_subtitle"),
        (8, "tooltip"),
        (9, "Static() without markup=False"),
        (10, "update()"),
        (11, "add_row()"),
        (12, "markup=True"),
        (13, "from_markup()"),
    ]:
        assert any(f"bad.py:{line}: " in p and what in p for p in found), (line, what, said)
