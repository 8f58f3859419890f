"""``engine.importing.plan``: the commands it plans, run by the engine on a real context, give
exactly the messages asked for, whatever the context held before (appends, replaces in place,
an undo's tail removed, the active turn emptied and filled again)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.context import Context
from engine.context.commands import apply_command, parse_command
from engine.importing.plan import Entry, Plan

ROLE = st.sampled_from(["system", "user", "assistant"])
MESSAGES = st.lists(st.tuples(ROLE, st.sampled_from(["a", "b", "c"])), max_size=8)


def run(context: Context, plan: Plan) -> None:
    for command in plan.take():
        apply_command(context, parse_command(command)[0])


def rendered(context: Context) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in context.render_provider()]


@settings(max_examples=300, deadline=None)
@given(st.lists(MESSAGES, min_size=1, max_size=4))
def test_becoming_each_target_in_turn(targets: list[list[tuple[str, str]]]) -> None:
    context, plan = Context(), Plan()
    for target in targets:
        plan.become([Entry(role, text) for role, text in target])
        run(context, plan)
        assert rendered(context) == target
        assert plan.held == [Entry(role, text).key() for role, text in target]


def test_a_message_replaced_keeps_its_item_and_a_system_message_its_turn() -> None:
    context, plan = Context(), Plan()
    plan.become([Entry("system", "prompt"), Entry("user", "q"), Entry("assistant", "run")])
    plan.append(Entry("system", "tool output"))
    run(context, plan)
    tool = context["d0, 1, 0"]
    assert tool is not None and tool.item is not None and tool.item.role == "system"
    before = tool.id
    plan.replace(3, Entry("system", "[Large tool output removed]"))
    run(context, plan)
    after = context["d0, 1, 0"]
    assert after is not None and after.id == before
    assert rendered(context)[-1] == ("system", "[Large tool output removed]")
    plan.become([Entry("system", "prompt"), Entry("user", "q")])  # an undo of two
    commands = plan.take()
    assert [c["op"] for c in commands] == ["delete", "delete"]
    for command in commands:
        apply_command(context, parse_command(command)[0])
    assert rendered(context) == [("system", "prompt"), ("user", "q")]
