"""Bad input: typed errors with a code and a message naming the offending selector, coordinate or
value, and no partial change (the export is byte-identical afterwards, and the next successful
operation gets exactly the ids and times it would have got without the failed call)."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest

from engine.context import (
    Context,
    ContextComponent,
    ContextError,
    InvalidComponent,
    InvalidCoordinate,
    InvalidLifecycle,
    InvalidSelector,
    InvalidUpdateMode,
    NoSuchDepth,
    NotAComponent,
    NotFound,
    Pos,
    ReadOnlySelector,
    SelectorOrKey,
    TextContent,
    UnknownKey,
)

from .conftest import new_context, raises_unchanged


def populated() -> Context:
    ctx = new_context()
    ctx.pact_insert("d-1, 0, 0", TextContent("system"))
    ctx.add_user("a")
    ctx.pact_insert("d0, 1, 0", TextContent("note", key="k", tags=["t"]))
    ctx.pact_insert("d0, 2, 0", TextContent("status", ttl=1, cadence=1, key="s"))
    ctx.add_assistant("b")
    ctx.pact_insert("d0, 1, 0", TextContent("temp", ttl=3))
    ctx.advance()
    ctx.seal("mark")
    return ctx


def lifecycle(stages: list[Pos], cycle: bool | int = False, **fields: Any) -> TextContent:
    return TextContent("x", **fields).render_lifecycle(stages, cycle)


Call = Callable[[Context], Any]

# (id, call, error class, code, strings the message must contain)
CASES: list[tuple[str, Call, type[ContextError], str, tuple[str, ...]]] = [
    # malformed selectors, in every entry point
    (
        "insert-malformed",
        lambda c: c.pact_insert("d0, 1, ", TextContent("x")),
        InvalidSelector,
        "INVALID_SELECTOR",
        ("'d0, 1, '", "position 7"),
    ),
    (
        "update-malformed",
        lambda c: c.pact_update("d0,, 1, 0", TextContent("x")),
        InvalidSelector,
        "INVALID_SELECTOR",
        ("'d0,, 1, 0'",),
    ),
    (
        "delete-malformed",
        lambda c: c.pact_delete("d0, 1, 0)"),
        InvalidSelector,
        "INVALID_SELECTOR",
        ("'d0, 1, 0)'", "')'"),
    ),
    (
        "select-malformed",
        lambda c: c.select("^nowhere"),
        InvalidSelector,
        "INVALID_SELECTOR",
        ("'^nowhere'",),
    ),
    (
        "index-malformed",
        lambda c: c["#"],
        InvalidSelector,
        "INVALID_SELECTOR",
        ("'#'",),
    ),
    (
        "unknown-field",
        lambda c: c.select("[colour='red']"),
        InvalidSelector,
        "INVALID_SELECTOR",
        ("'colour'", "[colour='red']"),
    ),
    # non-integer coordinates
    (
        "fractional-position",
        lambda c: c.pact_insert("d0, 0.5, 0", TextContent("x")),
        InvalidSelector,
        "INVALID_SELECTOR",
        ("'0.5'", "'d0, 0.5, 0'"),
    ),
    (
        "word-offset",
        lambda c: c.pact_insert("d0, 1, x", TextContent("x")),
        InvalidSelector,
        "INVALID_SELECTOR",
        ("'d0, 1, x'",),
    ),
    (
        "index-string-part",
        lambda c: c[0, "1"],
        InvalidCoordinate,
        "INVALID_COORDINATE",
        ("(0, '1')",),
    ),
    (
        "index-float-part",
        lambda c: c[0, 1.5],
        InvalidCoordinate,
        "INVALID_COORDINATE",
        ("(0, 1.5)",),
    ),
    (
        "index-bool-part",
        lambda c: c[True, 1],
        InvalidCoordinate,
        "INVALID_COORDINATE",
        ("(True, 1)",),
    ),
    (
        "index-four-parts",
        lambda c: c[0, 1, 0, 0],
        InvalidCoordinate,
        "INVALID_COORDINATE",
        ("(0, 1, 0, 0)",),
    ),
    # writes need exact coordinates
    (
        "insert-range",
        lambda c: c.pact_insert("d0, 1-2, 0", TextContent("x")),
        InvalidCoordinate,
        "INVALID_COORDINATE",
        ("'d0, 1-2, 0'", "position"),
    ),
    (
        "insert-star",
        lambda c: c.pact_insert("d0, 1, *", TextContent("x")),
        InvalidCoordinate,
        "INVALID_COORDINATE",
        ("'d0, 1, *'", "offset"),
    ),
    (
        "insert-depth-range",
        lambda c: c.pact_insert("d0-1, 1, 0", TextContent("x")),
        InvalidCoordinate,
        "INVALID_COORDINATE",
        ("'d0-1, 1, 0'", "depth"),
    ),
    (
        "insert-query",
        lambda c: c.pact_insert("#k", TextContent("x")),
        InvalidCoordinate,
        "INVALID_COORDINATE",
        ("'#k'",),
    ),
    (
        "insert-two-parts",
        lambda c: c.pact_insert("d0, 1", TextContent("x")),
        InvalidCoordinate,
        "INVALID_COORDINATE",
        ("'d0, 1'",),
    ),
    (
        "replace-two-parts",
        lambda c: c.pact_update("d0, 1", TextContent("x"), mode="replace"),
        InvalidCoordinate,
        "INVALID_COORDINATE",
        ("'d0, 1'",),
    ),
    (
        "append-three-parts",
        lambda c: c.pact_update("d0, 1, 0", TextContent("x"), mode="append"),
        InvalidCoordinate,
        "INVALID_COORDINATE",
        ("'d0, 1, 0'",),
    ),
    (
        "append-star",
        lambda c: c.pact_update("d0, *", TextContent("x"), mode="append"),
        InvalidCoordinate,
        "INVALID_COORDINATE",
        ("'d0, *'",),
    ),
    (
        "update-union",
        lambda c: c.pact_update("(d0, 1, 0), (d1, 0, 0)", TextContent("x")),
        InvalidCoordinate,
        "INVALID_COORDINATE",
        ("'(d0, 1, 0), (d1, 0, 0)'",),
    ),
    # depths
    (
        "depth-below-system",
        lambda c: c.pact_insert("d-2, 1, 0", TextContent("x")),
        InvalidCoordinate,
        "INVALID_COORDINATE",
        ("'d-2, 1, 0'", "-2"),
    ),
    (
        "missing-history-depth",
        lambda c: c.pact_insert("d5, 1, 0", TextContent("x")),
        NoSuchDepth,
        "NO_SUCH_DEPTH",
        ("'d5, 1, 0'", "depth 5", "1 turn(s)"),
    ),
    (
        "just-past-history",
        lambda c: c.pact_insert("d2, 0, 0", TextContent("x")),
        NoSuchDepth,
        "NO_SUCH_DEPTH",
        ("'d2, 0, 0'",),
    ),
    (
        "append-missing-depth",
        lambda c: c.pact_update("d4, 1", TextContent("x"), mode="append"),
        NoSuchDepth,
        "NO_SUCH_DEPTH",
        ("'d4, 1'",),
    ),
    # lifecycles
    (
        "negative-ttl",
        lambda c: c.pact_insert("d0, 1, 0", TextContent("x", ttl=-1)),
        InvalidLifecycle,
        "INVALID_LIFECYCLE",
        ("ttl=-1",),
    ),
    (
        "zero-ttl",  # alive at no episode: ttl=1 is "this episode only"
        lambda c: c.pact_insert("d0, 1, 0", TextContent("x", ttl=0)),
        InvalidLifecycle,
        "INVALID_LIFECYCLE",
        ("ttl=0", ">= 1"),
    ),
    (
        "zero-ttl-sticky",
        lambda c: c.pact_insert("d0, 1, 0", TextContent("x", ttl=0, cadence=1)),
        InvalidLifecycle,
        "INVALID_LIFECYCLE",
        ("ttl=0",),
    ),
    (
        "message-zero-ttl",
        lambda c: c.add_user("x", ttl=0),
        InvalidLifecycle,
        "INVALID_LIFECYCLE",
        ("ttl=0",),
    ),
    (
        "zero-cadence",
        lambda c: c.pact_insert("d0, 1, 0", TextContent("x", ttl=2, cadence=0)),
        InvalidLifecycle,
        "INVALID_LIFECYCLE",
        ("cad=0",),
    ),
    (
        "negative-cadence",
        lambda c: c.pact_insert("d0, 1, 0", TextContent("x", cadence=-4)),
        InvalidLifecycle,
        "INVALID_LIFECYCLE",
        ("cad=-4",),
    ),
    (
        "replace-negative-ttl",
        lambda c: c.pact_update("d0, 1, 0", TextContent("x", ttl=-2)),
        InvalidLifecycle,
        "INVALID_LIFECYCLE",
        ("ttl=-2",),
    ),
    (
        "append-zero-cadence",
        lambda c: c.pact_update("d0, 1", TextContent("x", ttl=1, cadence=0), mode="append"),
        InvalidLifecycle,
        "INVALID_LIFECYCLE",
        ("cad=0",),
    ),
    (
        "message-negative-ttl",
        lambda c: c.add_user("x", ttl=-3),
        InvalidLifecycle,
        "INVALID_LIFECYCLE",
        ("ttl=-3",),
    ),
    (
        "lifecycle-empty",
        lambda c: c.pact_insert("d0, 1, 0", lifecycle([])),
        InvalidLifecycle,
        "INVALID_LIFECYCLE",
        ("Pos",),
    ),
    (
        "lifecycle-untimed-middle",
        lambda c: c.pact_insert("d0, 1, 0", lifecycle([Pos("d0, 1, 0"), Pos("d0, 2, 0", ttl=1)])),
        InvalidLifecycle,
        "INVALID_LIFECYCLE",
        ("stage 0", "'d0, 1, 0'"),
    ),
    (
        "lifecycle-negative-stage-ttl",
        lambda c: c.pact_insert("d0, 1, 0", lifecycle([Pos("d0, 1, 0", ttl=-1)])),
        InvalidLifecycle,
        "INVALID_LIFECYCLE",
        ("ttl=-1", "'d0, 1, 0'"),
    ),
    (
        "lifecycle-zero-stage-ttl",
        lambda c: c.pact_insert("d0, 1, 0", lifecycle([Pos("d0, 1, 0", ttl=0), Pos("d0, 2, 0")])),
        InvalidLifecycle,
        "INVALID_LIFECYCLE",
        ("ttl=0", "'d0, 1, 0'"),
    ),
    (
        "lifecycle-cycle-zero",
        lambda c: c.pact_insert("d0, 1, 0", lifecycle([Pos("d0, 1, 0", ttl=1)], cycle=0)),
        InvalidLifecycle,
        "INVALID_LIFECYCLE",
        ("got 0",),
    ),
    (
        "lifecycle-with-cadence",
        lambda c: c.pact_insert("d0, 1, 0", lifecycle([Pos("d0, 1, 0", ttl=1)], cadence=2)),
        InvalidLifecycle,
        "INVALID_LIFECYCLE",
        ("cadence",),
    ),
    (
        "lifecycle-with-ttl",
        lambda c: c.pact_insert("d0, 1, 0", lifecycle([Pos("d0, 1, 0", ttl=1)], ttl=2)),
        InvalidLifecycle,
        "INVALID_LIFECYCLE",
        ("ttl",),
    ),
    (
        "lifecycle-stage-below-system",
        lambda c: c.pact_insert("d0, 1, 0", lifecycle([Pos("d-3, 1, 0", ttl=1)])),
        InvalidLifecycle,
        "INVALID_LIFECYCLE",
        ("'d-3, 1, 0'",),
    ),
    # time-qualified selectors are read-only
    (
        "insert-past",
        lambda c: c.pact_insert("@t-1 d0, 1, 0", TextContent("x")),
        ReadOnlySelector,
        "READ_ONLY",
        ("'@t-1 d0, 1, 0'",),
    ),
    (
        "replace-past",
        lambda c: c.pact_update("@e1 d0, 1, 0", TextContent("x")),
        ReadOnlySelector,
        "READ_ONLY",
        ("'@e1 d0, 1, 0'",),
    ),
    (
        "append-past",
        lambda c: c.pact_update("@t-2 d0, 1", TextContent("x"), mode="append"),
        ReadOnlySelector,
        "READ_ONLY",
        ("'@t-2 d0, 1'",),
    ),
    (
        "delete-past",
        lambda c: c.pact_delete("@t-1 d0, 1, 0"),
        ReadOnlySelector,
        "READ_ONLY",
        ("'@t-1 d0, 1, 0'",),
    ),
    (
        "delete-past-query",
        lambda c: c.pact_delete("@t-1 #k"),
        ReadOnlySelector,
        "READ_ONLY",
        ("'@t-1 #k'",),
    ),
    # keys and missing items
    (
        "unknown-key",
        lambda c: c.pact_delete(key="nope"),
        UnknownKey,
        "UNKNOWN_KEY",
        ("'nope'",),
    ),
    (
        "delete-nothing-there",
        lambda c: c.pact_delete("d0, 7, 0"),
        NotFound,
        "NOT_FOUND",
        ("'d0, 7, 0'",),
    ),
    (
        "delete-past-offset-end",
        lambda c: c.pact_delete("d0, 0, 3"),
        NotFound,
        "NOT_FOUND",
        ("'d0, 0, 3'",),
    ),
    (
        "delete-missing-depth",
        lambda c: c.pact_delete("d9, 0, 0"),
        NotFound,
        "NOT_FOUND",
        ("'d9, 0, 0'",),
    ),
    (
        "replace-empty",
        lambda c: c.pact_update("d1, 5, 0", TextContent("x")),
        NotFound,
        "NOT_FOUND",
        ("'d1, 5, 0'",),
    ),
    (
        "replace-missing-depth",
        lambda c: c.pact_update("d3, 0, 0", TextContent("x")),
        NotFound,
        "NOT_FOUND",
        ("'d3, 0, 0'",),
    ),
    # arguments
    (
        "update-mode",
        lambda c: c.pact_update("d0, 1, 0", TextContent("x"), mode="merge"),
        InvalidUpdateMode,
        "INVALID_UPDATE_MODE",
        ("'merge'",),
    ),
    (
        "delete-both",
        lambda c: c.pact_delete("d0, 1, 0", key="k"),
        SelectorOrKey,
        "SELECTOR_OR_KEY",
        ("key=",),
    ),
    (
        "delete-neither",
        lambda c: c.pact_delete(),
        SelectorOrKey,
        "SELECTOR_OR_KEY",
        ("key=",),
    ),
    (
        "not-a-component",
        lambda c: c.pact_insert("d0, 1, 0", "plain text"),
        NotAComponent,
        "NOT_A_COMPONENT",
        ("str",),
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "code", "names"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_bad_input_is_typed_named_and_changes_nothing(
    call: Call, error: type[ContextError], code: str, names: tuple[str, ...]
) -> None:
    ctx = populated()
    raised = raises_unchanged(ctx, error, code, lambda: call(ctx), *names)
    assert raised.to_dict()["code"] == code
    # no id or clock reading was spent either: the next operation matches a clean twin
    twin = populated()
    for context in (ctx, twin):
        context.pact_insert("d0, 3, 0", TextContent("after", ttl=2))
        context.add_user("next")
        context.advance()
    assert ctx.model_dump_json() == twin.model_dump_json()
    assert [s.summary() for s in ctx.history] == [s.summary() for s in twin.history]


def test_selector_error_carries_position_and_token() -> None:
    ctx = populated()
    error = raises_unchanged(
        ctx,
        InvalidSelector,
        "INVALID_SELECTOR",
        lambda: ctx.pact_insert("d0, 1, ", TextContent("x")),
    )
    assert isinstance(error, InvalidSelector)
    assert (error.position, error.token, error.selector) == (7, "", "d0, 1, ")
    fractional = raises_unchanged(
        ctx, InvalidSelector, "INVALID_SELECTOR", lambda: ctx.select("d0, 0.5, 0")
    )
    assert isinstance(fractional, InvalidSelector)
    assert (fractional.position, fractional.token) == (4, "0.5")
    field = raises_unchanged(
        ctx, InvalidSelector, "INVALID_SELECTOR", lambda: ctx.select("[colour='red']")
    )
    assert isinstance(field, InvalidSelector)
    assert (field.position, field.token) == (1, "colour")


def test_error_details_name_the_input() -> None:
    ctx = populated()
    depth = raises_unchanged(
        ctx, NoSuchDepth, "NO_SUCH_DEPTH", lambda: ctx.pact_insert("d5, 1, 0", TextContent("x"))
    )
    assert depth.details == {"selector": "d5, 1, 0", "depth": 5}
    ttl = raises_unchanged(
        ctx,
        InvalidLifecycle,
        "INVALID_LIFECYCLE",
        lambda: ctx.pact_insert("d0, 1, 0", TextContent("x", ttl=-1)),
    )
    assert ttl.details == {"field": "ttl", "value": -1}
    key = raises_unchanged(ctx, UnknownKey, "UNKNOWN_KEY", lambda: ctx.pact_delete(key="nope"))
    assert key.to_dict() == {
        "code": "UNKNOWN_KEY",
        "message": "no item or schedule has key 'nope'",
        "key": "nope",
    }


def test_now_prefix_addresses_the_working_state() -> None:
    # @t0 is the working state (the default), so it is not a write into the past
    ctx, twin = populated(), populated()
    ctx.pact_insert("@t0 d0, 1, 0", TextContent("x"))
    twin.pact_insert("d0, 1, 0", TextContent("x"))
    assert ctx.model_dump_json() == twin.model_dump_json()


def test_pos_with_a_range_is_refused_when_built() -> None:
    with pytest.raises(InvalidCoordinate) as info:
        Pos("d0, 1-2, 0", ttl=1)
    assert info.value.code == "INVALID_COORDINATE"
    assert "'d0, 1-2, 0'" in info.value.message


def test_unknown_key_after_the_last_item_is_gone() -> None:
    ctx = populated()
    ctx.pact_delete(key="k")
    raises_unchanged(ctx, UnknownKey, "UNKNOWN_KEY", lambda: ctx.pact_delete(key="k"), "'k'")


def test_a_delete_that_matches_nothing_is_refused() -> None:
    ctx = populated()
    for query in ("#nothing", "d0-1, 9, *", "+no-such-tag"):
        raises_unchanged(
            ctx, NotFound, "NOT_FOUND", lambda q=query: ctx.pact_delete(q), f"matches {query!r}"
        )


def test_single_integer_index_is_a_typed_error() -> None:
    ctx = populated()
    with pytest.raises(InvalidCoordinate):
        ctx[0]  # type: ignore[index]


@pytest.mark.parametrize(
    ("text", "fields", "field"),
    [
        (123, {}, "text"),
        (None, {}, "text"),
        ("hi", {"ttl": "x"}, "ttl"),
        ("hi", {"cadence": [1]}, "cadence"),
        ("hi", {"role": "system"}, "role"),
        ("hi", {"tags": "not-a-list"}, "tags"),
    ],
)
def test_bad_message_fields_are_a_typed_error_and_change_nothing(
    text: object, fields: dict[str, object], field: str
) -> None:
    ctx = new_context()
    ctx.add_user("hello")
    before = ctx.model_dump_json()
    with pytest.raises(InvalidComponent) as caught:
        ctx.add_user(text, **fields)  # type: ignore[arg-type]
    assert caught.value.code == "INVALID_COMPONENT"
    assert caught.value.details["field"] == field
    assert ctx.model_dump_json() == before


@pytest.mark.parametrize("selector", [123, None, ["d0, 0, 0"], b"d0, 0, 0"])
def test_a_selector_that_is_not_a_string_is_refused_everywhere(selector: object) -> None:
    ctx = new_context()
    ctx.add_user("hello")
    before = ctx.model_dump_json()
    with pytest.raises(InvalidSelector):
        ctx.select(selector)  # type: ignore[arg-type]
    with pytest.raises(InvalidSelector):
        ctx.pact_insert(selector, TextContent("x"))  # type: ignore[arg-type]
    with pytest.raises(ContextError):  # None means "no selector": the other typed error
        ctx.pact_delete(selector)  # type: ignore[arg-type]
    assert ctx.model_dump_json() == before


NOT_JSON = [
    pytest.param(lambda: ContextComponent(math.nan), "content", id="NaN"),
    pytest.param(lambda: ContextComponent({"score": [-math.inf]}), "content", id="infinity"),
    pytest.param(lambda: ContextComponent({"ids": {1, 2}}), "content", id="set"),
    pytest.param(lambda: ContextComponent([object()]), "content", id="object"),
    pytest.param(lambda: ContextComponent({1: "a", "b": 2}), "content", id="unsortable keys"),
    pytest.param(lambda: TextContent("x", data_score=math.nan), "data_score", id="data field"),
    pytest.param(lambda: TextContent("x", note={"at": math.inf}), "note", id="other field"),
]


@pytest.mark.parametrize(("component", "field"), NOT_JSON)
def test_a_component_canonical_json_cannot_write_is_refused_where_it_comes_in(
    component: Callable[[], ContextComponent], field: str
) -> None:
    # Its content hash (and every export) would fail later, far from the call that let it in.
    ctx = populated()
    calls: list[Call] = [
        lambda c: c.pact_insert("d0, 1, 0", component()),
        lambda c: c.pact_update("d0, 1, 0", component()),
        lambda c: c.pact_update("d0, 1", component(), mode="append"),
    ]
    for call in calls:
        error = raises_unchanged(
            ctx, InvalidComponent, "INVALID_COMPONENT", partial(call, ctx), repr(field), "not JSON"
        )
        assert error.details == {"field": field}


def test_a_message_with_a_field_canonical_json_cannot_write_is_refused() -> None:
    ctx = populated()
    error = raises_unchanged(
        ctx, InvalidComponent, "INVALID_COMPONENT", lambda: ctx.add_user("hi", data_x=math.nan)
    )
    assert error.details == {"field": "data_x"}
