"""Commands as typed models: the JSON form an event stores and the model built in code are one
command; a stored form parses to what ran; bad forms are named; old forms replay as they ran."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.context import (
    Context,
    ContextResult,
    InvalidCommand,
    InvalidLifecycle,
    InvalidUpdateMode,
    SequentialIds,
    SteppingClock,
)
from engine.context.commands import (
    AdvanceCommand,
    ComponentSpec,
    DeleteCommand,
    InsertCommand,
    LifecycleSpec,
    MessageCommand,
    SealCommand,
    StageSpec,
    UpdateCommand,
    apply_command,
    parse_command,
    parse_recorded,
)


def run(context: Context, command: Any) -> ContextResult:
    parsed, _stored = parse_command(command)
    return apply_command(context, parsed)


def test_a_model_and_its_json_form_are_the_same_command() -> None:
    built = InsertCommand(
        selector="d0, 1, 0",
        component=ComponentSpec(content="note", key="k", tags=("a",), ttl=3, cadence=2),
    )
    parsed, stored = parse_command(built)
    assert stored == {
        "op": "insert",
        "selector": "d0, 1, 0",
        "component": {"content": "note", "key": "k", "tags": ["a"], "ttl": 3, "cad": 2},
    }
    assert parsed == built
    assert parse_command(stored) == (parsed, stored)


def test_each_operation_runs_from_its_model() -> None:
    a, b = (Context(ids=SequentialIds(), clock=SteppingClock()) for _ in range(2))
    script: list[tuple[Any, dict[str, Any]]] = [
        (MessageCommand(role="user", text="hi"), {"op": "message", "role": "user", "text": "hi"}),
        (
            InsertCommand(selector="d0, 1, 0", component=ComponentSpec(content="x", key="k")),
            {"op": "insert", "selector": "d0, 1, 0", "component": {"content": "x", "key": "k"}},
        ),
        (
            UpdateCommand(selector="d0, 1", mode="append", component=ComponentSpec(content="y")),
            {"op": "update", "selector": "d0, 1", "mode": "append", "component": {"content": "y"}},
        ),
        (AdvanceCommand(), {"op": "advance"}),
        (SealCommand(trigger="mark"), {"op": "seal", "trigger": "mark"}),
        (DeleteCommand(key="k"), {"op": "delete", "key": "k"}),
    ]
    for model, form in script:
        assert run(a, model) == run(b, form)
    assert a.model_dump_json() == b.model_dump_json()
    assert [n.content for n in a.select("*")] == ["hi", "y"]


def test_a_render_lifecycle_in_its_json_form() -> None:
    spec = ComponentSpec(
        content="alert",
        render_lifecycle=LifecycleSpec(
            stages=(StageSpec(selector="d0, 0, 1", ttl=2), StageSpec(selector="d0, 0, -1"))
        ),
    )
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    run(context, MessageCommand(role="user", text="m"))
    placed = run(context, InsertCommand(selector="d0, 0, 1", component=spec))
    for _ in range(2):
        context.advance()
    node = context.find(placed.id)
    assert node is not None and node.coordinates == (0, 0, -1)
    assert node.stage == 1


@pytest.mark.parametrize(
    ("command", "error", "named"),
    [
        ({"op": "insert", "selector": "d0, 1, 0"}, InvalidCommand, "'component'"),
        ({"op": "message", "role": "robot", "text": "hi"}, InvalidCommand, "'robot'"),
        ({"op": "insert", "selector": "d0, 1, 0", "component": {"ttl": "soon"}}, InvalidCommand,
         "invalid component: ttl"),
        ({"op": "insert", "selector": "d0, 1, 0", "component": {"content": 5}}, InvalidCommand,
         "content must be a string"),
        ({"op": "insert", "selector": "d0, 1, 0",
          "component": {"content": "x", "data": {"ttl": 3}}}, InvalidCommand, "'data' repeats"),
        ({"op": "insert", "selector": "d0, 1, 0", "component": {"content": "x",
          "render_lifecycle": {"stages": [{"selector": "d0, 1, 0"}], "cycle": "yes"}}},
         InvalidCommand, "render_lifecycle.cycle"),
        ({"op": "update", "selector": "d0, 1, 0", "component": {}, "mode": "merge"},
         InvalidUpdateMode, "'merge'"),
        ({"op": "seal", "trigger": ""}, InvalidCommand, "non-empty"),
        ({"op": "advance", "steps": 3}, InvalidCommand, "'steps'"),
        ({"op": "fly"}, InvalidCommand, "'fly'"),
        (["op", "advance"], InvalidCommand, "JSON object"),
        ({"op": "insert", "selector": "d0, 1, 0", "component": {"content": {1, 2}}},
         InvalidCommand, "JSON"),
    ],
)  # fmt: skip
def test_a_malformed_command_names_what_is_wrong(
    command: Any, error: type[Exception], named: str
) -> None:
    with pytest.raises(error) as raised:
        parse_command(command)
    assert named in str(raised.value)


def test_a_component_without_content_is_sent_as_its_own_fields() -> None:
    """Never as the string "null": an image is its type and its fields."""
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    run(context, MessageCommand(role="user", text="look"))
    image = {"type": "image", "url": "https://example.org/a.png", "alt": "a chart"}
    placed = run(context, {"op": "insert", "selector": "d0, 1, 0", "component": image})
    node = context.find(placed.id)
    assert node is not None and node.node_type == "image"
    assert [n.id for n in context.select(".image")] == [placed.id]
    assert context.render_provider()[-1] == {
        "content": '{"alt":"a chart","type":"image","url":"https://example.org/a.png"}',
        "role": "user",
    }
    assert "null" not in context.render_provider_json()


def test_content_keeps_its_own_json_when_it_has_some() -> None:
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    component = {"type": "tool_result", "content": {"rows": 2}, "tool": "grep"}
    run(context, {"op": "insert", "selector": "d0, 1, 0", "component": component})
    assert context.render_provider()[-1]["content"] == '{"rows":2}'


def test_a_recorded_zero_ttl_replays_as_one_episode() -> None:
    """Older versions accepted ttl=0, which lived exactly as ttl=1 does; the log keeps it."""
    stored = {"op": "insert", "selector": "d0, 1, 0", "component": {"content": "x", "ttl": 0}}
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    with pytest.raises(InvalidLifecycle, match="ttl=0"):
        apply_command(context, parse_command(stored)[0])
    for version in (1, 2):
        recorded = parse_recorded(stored, version)
        assert isinstance(recorded, InsertCommand) and recorded.component.ttl == 1
    assert stored["component"]["ttl"] == 0  # the event's own payload is left as it is


@pytest.mark.parametrize(
    ("stored", "read_as"),
    [
        ({"op": "advance", "note": "x"}, AdvanceCommand()),
        ({"op": "seal", "trigger": "t", "by": "me"}, SealCommand(trigger="t")),
        ({"op": "delete", "key": "k", "why": 1}, DeleteCommand(key="k")),
        ({"op": "message", "role": "user", "text": "hi", "fields": None},
         MessageCommand(role="user", text="hi")),
        ({"op": "insert", "selector": "d0, 1, 0", "component": {"type": "image", "url": "u"}},
         InsertCommand(selector="d0, 1, 0", component=ComponentSpec(type="component", url="u"))),
        ({"op": "insert", "selector": "d0, 1, 0", "component": {"content": "a",
          "render_lifecycle": {"stages": [{"selector": "d0, 1, 0", "ttl": 1, "x": 2}],
                               "cycle": False, "y": 3}}},
         InsertCommand(selector="d0, 1, 0", component=ComponentSpec(
             content="a", render_lifecycle=LifecycleSpec(
                 stages=(StageSpec(selector="d0, 1, 0", ttl=1),), cycle=False)))),
    ],
)  # fmt: skip
def test_a_version_1_form_reads_as_it_ran(stored: dict[str, Any], read_as: Any) -> None:
    """The previous release ignored keys it did not know and read "fields": null as none, and
    gave every component whose type was not text the type "component"."""
    assert parse_recorded(stored, 1) == read_as
    component = stored.get("component", {})
    if component.get("type") == "image":  # the current form keeps the type it names
        command, _ = parse_command(stored)
        assert isinstance(command, InsertCommand) and command.component.type == "image"
    else:  # and is checked as written: a key it does not know is a mistake
        with pytest.raises(InvalidCommand):
            parse_command(stored)


names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
components = st.builds(
    ComponentSpec,
    type=st.sampled_from(["text", "image", "component"]),
    key=st.none() | names,
    tags=st.lists(names, max_size=2).map(tuple),
    ttl=st.none() | st.integers(1, 5),
    cad=st.none() | st.integers(1, 5),
    priority=st.integers(-3, 3),
).map(lambda spec: spec if spec.type != "text" else spec.model_copy(update={"content": "t"}))
commands = st.one_of(
    st.builds(InsertCommand, selector=st.just("d0, 1, 0"), component=components),
    st.builds(
        UpdateCommand,
        selector=st.just("d0, 1"),
        component=components,
        mode=st.sampled_from(["replace", "append"]),
    ),
    st.builds(DeleteCommand, key=names),
    st.builds(MessageCommand, role=st.sampled_from(["user", "assistant"]), text=names),
    st.just(AdvanceCommand()),
    st.builds(SealCommand, trigger=names.filter(str.strip)),
)


@given(commands)
def test_the_stored_form_parses_back_to_the_same_command(command: Any) -> None:
    parsed, stored = parse_command(command)
    assert parse_command(stored) == (parsed, stored)
    assert parse_command(parsed) == (parsed, stored)
