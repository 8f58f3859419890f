"""``ContextExplorer``: step a context and print it (spec §9). Printing never changes state."""

from __future__ import annotations

import io
import json

import pytest

from engine.context import Context, ContextError, ContextExplorer, TextContent

from .conftest import check_structure, unchanged


@pytest.fixture
def explored(ctx: Context) -> tuple[Context, ContextExplorer]:
    explorer = ContextExplorer(ctx)
    ctx.pact_insert("d-1, 0, 0", TextContent("Be concise", key="sys"))
    assert explorer.step("user_message", "Hello") == "n6"
    ctx.pact_insert("d0, 1, 0", TextContent("note", key="n", tags=["a", "b"]))
    ctx.pact_insert("d0, 2, 0", TextContent("tick", ttl=1, cadence=1))
    ctx.pact_insert("d0, 3, 0", TextContent("cyc", ttl=2, cadence=5))
    assert explorer.step("assistant_message", "Hi") == "n16"
    assert explorer.step("render") == 1
    assert explorer.step("seal") == "n20"
    return ctx, explorer


TREE = """\
context n1  episode 1
├─ system (d-1) id=n2
│  ├─ slot (-1,0) id=n5
│  │  ├─ (-1,0,0) text id=n4 key=sys tags=[] permanent ttl=- age=1 remaining=- cad=- next=- "Be concise"
├─ turn d1 [history] role=user id=n3
│  ├─ slot (1,0) id=n7
│  │  ├─ (1,0,0) text id=n6 key=- tags=[] permanent ttl=- age=1 remaining=- cad=- next=- "Hello"
│  ├─ slot (1,1) id=n9
│  │  ├─ (1,1,0) text id=n8 key=n tags=[a,b] permanent ttl=- age=1 remaining=- cad=- next=- "note"
│  ├─ slot (1,2) id=n11
│  │  ├─ (1,2,0) text id=n18 key=- tags=[] sticky ttl=1 age=0 remaining=1 cad=1 next=2 "tick"
├─ turn d0 [active] role=assistant id=n14
│  ├─ slot (0,0) id=n17
│  │  ├─ (0,0,0) text id=n16 key=- tags=[] permanent ttl=- age=1 remaining=- cad=- next=- "Hi"
│  ├─ slot (0,3) id=n15
│  │  ├─ (0,3,0) text id=n12 key=- tags=[] cyclic ttl=2 age=1 remaining=1 cad=5 next=5 "cyc\""""  # noqa: E501


def test_steps_drive_the_context(explored: tuple[Context, ContextExplorer]) -> None:
    ctx, _ = explored
    assert ctx.current_episode == 1
    assert [(n.coordinates, n.content, n.role) for n in ctx.select("[role!=null]")] == [
        ((1, 0, 0), "Hello", "user"),
        ((0, 0, 0), "Hi", "assistant"),
    ]
    assert [(s.id, s.trigger) for s in ctx.history] == [("n19", "episode"), ("n20", "checkpoint")]
    check_structure(ctx)


def test_seal_step_with_a_trigger(ctx: Context) -> None:
    explorer = ContextExplorer(ctx)
    sid = explorer.step("seal", "before-tool")
    assert ctx.history.latest is not None
    assert (ctx.history.latest.id, ctx.history.latest.trigger) == (sid, "before-tool")


def test_print_tree(explored: tuple[Context, ContextExplorer]) -> None:
    _, explorer = explored
    out = io.StringIO()
    text = explorer.print("tree", file=out)
    assert text == TREE
    assert out.getvalue() == TREE + "\n"


def test_print_default_is_tree_on_stdout(
    explored: tuple[Context, ContextExplorer], capsys: pytest.CaptureFixture[str]
) -> None:
    _, explorer = explored
    explorer.print()
    assert capsys.readouterr().out == TREE + "\n"


def test_print_provider(explored: tuple[Context, ContextExplorer]) -> None:
    ctx, explorer = explored
    text = explorer.print("provider", file=io.StringIO())
    assert json.loads(text) == [
        {"content": "Be concise", "role": "system"},
        {"content": "Hello", "role": "user"},
        {"content": "note", "role": "user"},
        {"content": "tick", "role": "user"},
        {"content": "Hi", "role": "assistant"},
        {"content": "cyc", "role": "assistant"},
    ]
    assert json.loads(text) == ctx.render_provider()


def test_print_json(explored: tuple[Context, ContextExplorer]) -> None:
    ctx, explorer = explored
    text = explorer.print("json", file=io.StringIO())
    assert json.loads(text) == ctx.model_dump()
    assert Context.load(json.loads(text)).model_dump_json() == ctx.model_dump_json()


def test_printing_never_changes_state(explored: tuple[Context, ContextExplorer]) -> None:
    ctx, explorer = explored
    with unchanged(ctx):
        for mode in ("tree", "provider", "json", "tree"):
            explorer.print(mode, file=io.StringIO())  # type: ignore[arg-type]
            explorer.render(mode)  # type: ignore[arg-type]
    assert explorer.render("tree") == TREE


def test_long_and_multiline_content_is_shortened_in_the_tree(ctx: Context) -> None:
    explorer = ContextExplorer(ctx)
    ctx.add_user("line one\nline two " + "x" * 80)
    line = explorer.render("tree").splitlines()[-1]
    assert line.endswith('"line one line two ' + "x" * 39 + '..."')


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda e: e.step("jump"), "'jump'"),
        (lambda e: e.step("user_message"), "'user_message'"),
        (lambda e: e.step("assistant_message", None), "'assistant_message'"),
        (lambda e: e.print("xml", file=io.StringIO()), "'xml'"),
    ],
    ids=["unknown-step", "missing-user-text", "missing-assistant-text", "unknown-mode"],
)
def test_explorer_errors(explored: tuple[Context, ContextExplorer], call, named: str) -> None:  # type: ignore[no-untyped-def]
    ctx, explorer = explored
    with unchanged(ctx), pytest.raises(ContextError) as info:
        call(explorer)
    assert named in info.value.message
    assert info.value.code == "CONTEXT_ERROR"
