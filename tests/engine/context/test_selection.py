"""Selector evaluation (spec §6) against a context, and canonical order (spec §8).

The parser has its own tests (``test_selector_parser.py``); these check what a parsed selector
selects: coordinates with ranges and ``*``, the query subset, combinators, unions, indexing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.context import Context, InvalidSelector, Node, TextContent
from engine.context.query import FIELDS

from .conftest import new_context, unchanged


@pytest.fixture
def tree() -> Context:
    """A small conversation with every lifecycle type, keys, tags and priorities.

    Final layout (depth, position, offset):
      d-1: (-1,0,0) "sys" #sp, (-1,1,0) "concise" #ci +style
      d2:  (2,0,0) "u1" user, (2,1,0) "prefs" #user_prefs +user+preferences+important prio 5
      d1:  (1,-1,0) "st" sticky #s +important, (1,0,0) "a1" assistant
      d0:  (0,0,0) "u2" user, (0,2,0) "rem" temporary #r +user, (0,3,0) "cy" cyclic #c
    """
    ctx = new_context()
    ctx.pact_insert("d-1, 0, 0", TextContent("sys", key="sp"))
    ctx.pact_insert("d-1, 1, 0", TextContent("concise", key="ci", tags=["style"]))
    ctx.add_user("u1")
    ctx.pact_insert(
        "d0, 1, 0",
        TextContent(
            "prefs", key="user_prefs", tags=["user", "preferences", "important"], priority=5
        ),
    )
    ctx.pact_insert("d0, 2, 0", TextContent("rem", ttl=3, key="r", tags=["user"]))
    ctx.add_assistant("a1")
    ctx.pact_insert("d0, -1, 0", TextContent("st", ttl=1, cadence=1, key="s", tags=["important"]))
    ctx.pact_insert("d0, 3, 0", TextContent("cy", ttl=2, cadence=5, key="c"))
    ctx.add_user("u2")
    return ctx


ALL = ["sys", "concise", "u1", "prefs", "st", "a1", "u2", "rem", "cy"]


def picked(ctx: Context, selector: str) -> list[object]:
    with unchanged(ctx):
        return [n.content for n in ctx.select(selector)]


def test_tree_layout(tree: Context) -> None:
    assert [(n.coordinates, n.content) for n in tree.select("*")] == [
        ((-1, 0, 0), "sys"),
        ((-1, 1, 0), "concise"),
        ((2, 0, 0), "u1"),
        ((2, 1, 0), "prefs"),
        ((1, -1, 0), "st"),
        ((1, 0, 0), "a1"),
        ((0, 0, 0), "u2"),
        ((0, 2, 0), "rem"),
        ((0, 3, 0), "cy"),
    ]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("d0, 0, 0", ["u2"]),
        ("(d0, 0, 0)", ["u2"]),
        ("0, 0, 0", ["u2"]),
        ("d*, *, *", ALL),
        ("*", ALL),
        ("d2", ["u1", "prefs"]),
        ("d0, 2", ["rem"]),
        ("d0,0", ["u2"]),
        ("d-1", ["sys", "concise"]),
        ("d-1, 1, 0", ["concise"]),
        ("d1-3, 1, *", ["prefs"]),
        ("d1..2, *, 0", ["u1", "prefs", "st", "a1"]),
        ("d1-2", ["u1", "prefs", "st", "a1"]),
        ("d*, -1..0, *", ["sys", "u1", "st", "a1", "u2"]),
        ("d0, -1..1, *", ["u2"]),
        ("-2..-1", ["sys", "concise"]),
        ("d*, 0, 0", ["sys", "u1", "a1", "u2"]),
        ("d9", []),
        ("d0, 7, *", []),
        ("d0, 0, 1", []),
        ("(d0, 0, 0), (d-1, 0, 0)", ["sys", "u2"]),
        ("(d0, 0, 0), (d0, 0, 0)", ["u2"]),
        ("(d2, 1), (d1, -1, 0)", ["prefs", "st"]),
    ],
)
def test_coordinate_selectors(tree: Context, selector: str, expected: list[str]) -> None:
    assert picked(tree, selector) == expected


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("^sys", ["sys", "concise"]),
        ("^ah", ["u2", "rem", "cy"]),
        ("^seq", ["u1", "prefs", "st", "a1"]),
        ("#user_prefs", ["prefs"]),
        ("#nope", []),
        ("+user", ["prefs", "rem"]),
        ("+user+important", ["prefs"]),
        ("+important+user", ["prefs"]),
        ("+user+style", []),
        (".text", ALL),
        (".item", ALL),
        (".image", []),
        ("[ttl<=1]", ["st"]),
        ("[ttl=null]", ["sys", "concise", "u1", "prefs", "a1", "u2"]),
        ("[ttl!=null]", ["st", "rem", "cy"]),
        ("[ttl>1]", ["rem", "cy"]),
        ("[key='r']", ["rem"]),
        ("[priority>=5]", ["prefs"]),
        ("[priority<5]", ["sys", "concise", "u1", "st", "a1", "u2", "rem", "cy"]),
        ("[permanent]", ["sys", "concise", "u1", "prefs", "a1", "u2"]),
        ("[temporary]", ["rem"]),
        ("[sticky]", ["st"]),
        ("[cyclic]", ["cy"]),
        ("[cad=5]", ["cy"]),
        ("[depth=2]", ["u1", "prefs"]),
        ("[position=-1]", ["st"]),
        ("[role='assistant']", ["a1"]),
        ("[lifecycle='sticky']", ["st"]),
        ("[tags='user']", ["prefs", "rem"]),
        ("[content='u2']", ["u2"]),
        ("^seq +user", ["prefs"]),
        ("^ah[temporary]", ["rem"]),
        ("^seq .text", ["u1", "prefs", "st", "a1"]),
        ("^ah > .text", ["u2", "rem", "cy"]),
        (".turn .text", ["u1", "prefs", "st", "a1", "u2", "rem", "cy"]),
        (".system .text", ["sys", "concise"]),
        ("^sys, #r", ["sys", "concise", "rem"]),
        ("#r, ^sys", ["sys", "concise", "rem"]),
        ("+user, +important", ["prefs", "st", "rem"]),
        ("d2, 1, 0#user_prefs", ["prefs"]),
        ("d2, 1, 0#r", []),
        ("(d0, *).text+user", ["rem"]),
        ("d0, 2, 0 #r", []),  # descendant of an item: nothing (items have no children)
        ("#user_prefs, d1", ["prefs", "st", "a1"]),
        (".turn > .text", []),  # items are grandchildren of turns
        (".slot > .text", ALL),
        (".system > .slot > .text", ["sys", "concise"]),
        (".turn[depth>=1] .text+user", ["prefs"]),
        ("(d0, 2) > .text", ["rem"]),
    ],
)
def test_query_selectors(tree: Context, selector: str, expected: list[str]) -> None:
    assert picked(tree, selector) == expected


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (".turn", [("turn", (2,)), ("turn", (1,)), ("turn", (0,))]),
        (".system", [("system", (-1,))]),
        (".slot[position=1]", [("slot", (-1, 1)), ("slot", (2, 1))]),
        (".turn[depth=2] > .slot", [("slot", (2, 0)), ("slot", (2, 1))]),
        (
            "^ah > .slot",
            [("slot", (0, 0)), ("slot", (0, 2)), ("slot", (0, 3))],
        ),
    ],
)
def test_structure_subjects(tree: Context, selector: str, expected: list[tuple]) -> None:
    got = tree.select(selector)
    assert [(n.node_type, n.coordinates) for n in got] == expected
    assert all(n.content is None and n.key is None and n.tags == [] for n in got)


def test_select_returns_nodes_with_coordinates_and_content(tree: Context) -> None:
    (node,) = tree.select("#user_prefs")
    assert isinstance(node, Node)
    assert node.coordinates == (2, 1, 0)
    assert (node.depth, node.position, node.offset) == (2, 1, 0)
    assert node.content == "prefs"
    assert node.key == "user_prefs"
    assert node.tags == ["user", "preferences", "important"]
    assert node.priority == 5
    assert node.lifecycle == "permanent"
    assert node.parent_id == tree.select(".slot[depth=2][position=1]")[0].id


def test_canonical_order_is_independent_of_insertion_order() -> None:
    ctx = new_context()
    ctx.add_user("m")
    ctx.pact_insert("d0, 3, 0", TextContent("p3"))
    ctx.pact_insert("d0, -2, 0", TextContent("m2"))
    ctx.pact_insert("d0, 3, -1", TextContent("p3-1"))
    ctx.pact_insert("d-1, 5, 0", TextContent("s5"))
    ctx.pact_insert("d0, 1, 0", TextContent("p1"))
    ctx.pact_insert("d-1, -3, 0", TextContent("s-3"))
    assert [n.content for n in ctx.select("*")] == ["s-3", "s5", "m2", "m", "p1", "p3-1", "p3"]
    assert [n.content for n in ctx.select("d0, 3, *, d-1, *, *")] == ["s-3", "s5", "p3-1", "p3"]


def test_indexing_returns_first_match_or_none(tree: Context) -> None:
    assert tree["+user"].content == "prefs"  # type: ignore[union-attr]
    assert tree["#c"].coordinates == (0, 3, 0)  # type: ignore[union-attr]
    assert tree["d*, *, *"].content == "sys"  # type: ignore[union-attr]
    assert tree["#nothing"] is None
    assert tree[1, -1].content == "st"  # type: ignore[union-attr]
    assert tree[-1, 1, 0].content == "concise"  # type: ignore[union-attr]
    assert tree[5, 0] is None
    assert tree[-1, 9, 0] is None
    assert tree[0, 2, -1] is None


def test_get_by_key_and_get_by_tags(tree: Context) -> None:
    assert tree.get_by_key("r").content == "rem"  # type: ignore[union-attr]
    assert tree.get_by_key("missing") is None
    assert [n.content for n in tree.get_by_tags(["important"])] == ["prefs", "st"]
    assert [n.content for n in tree.get_by_tags(["important", "user"])] == ["prefs"]
    assert [n.content for n in tree.get_by_tags("user")] == ["prefs", "rem"]
    assert tree.get_by_tags(["user", "style"]) == []
    assert tree.get_by_tags([]) == []


def test_get_by_key_with_duplicates_returns_the_first_in_canonical_order() -> None:
    ctx = new_context()
    ctx.add_user("a")
    ctx.pact_insert("d0, 2, 0", TextContent("later", key="dup"))
    ctx.add_user("b")
    ctx.pact_insert("d0, 1, 0", TextContent("active", key="dup"))
    ctx.pact_insert("d-1, 1, 0", TextContent("system", key="dup"))
    assert ctx.get_by_key("dup").content == "system"  # type: ignore[union-attr]
    assert picked(ctx, "#dup") == ["system", "later", "active"]


def test_query_follows_changes(tree: Context) -> None:
    tree.pact_update("d2, 1, 0", TextContent("prefs v2", key="user_prefs", tags=["user"]))
    assert picked(tree, "+important") == ["st"]
    assert picked(tree, "#user_prefs") == ["prefs v2"]
    tree.pact_delete(key="r")
    assert picked(tree, "+user") == ["prefs v2"]
    tree.advance()
    tree.advance()
    # the cyclic has expired (ttl 2), the sticky came back with a new id
    assert picked(tree, "[cyclic]") == []
    assert picked(tree, "[sticky]") == ["st"]
    assert tree.select("#s")[0].born_episode == 2


def test_timer_fields_filter(tree: Context) -> None:
    tree.advance()
    assert picked(tree, "[age=0]") == ["st"]  # the sticky was reborn this episode
    assert picked(tree, "[remaining=1]") == ["st", "cy"]
    assert picked(tree, "[remaining=2]") == ["rem"]
    assert picked(tree, "[next_rehydration_episode=5]") == ["cy"]
    assert picked(tree, "[rehydrates_in=1]") == ["st"]  # every episode
    assert picked(tree, "[rehydrates_in=4]") == ["cy"]  # at 5, seen from 1
    assert picked(tree, "[rehydrates_in=null]") == [c for c in ALL if c not in ("st", "cy")]
    assert picked(tree, "[expires_at_episode<=2]") == ["st", "cy"]


def test_two_coordinate_string_index_is_the_core_like_the_tuple_form() -> None:
    ctx = new_context()
    ctx.pact_insert("d0, 1, 0", TextContent("core"))
    ctx.pact_insert("d0, 1, -1", TextContent("before"))
    assert ctx[0, 1].content == "core"  # type: ignore[union-attr]
    assert ctx["d0, 1"].content == "core"  # type: ignore[union-attr]
    ctx.seal()
    ctx.pact_insert("d0, 1, -1", TextContent("later"))
    assert ctx["@t-1 d0, 1"].content == "core"  # type: ignore[union-attr]
    assert ctx["(d0, 1)"].content == "core"  # type: ignore[union-attr]


def test_an_unknown_field_is_refused_with_the_fields_there_are() -> None:
    ctx = new_context()
    with pytest.raises(InvalidSelector) as error:
        ctx.select("[remainig<=1]")
    assert error.value.token == "remainig" and error.value.position == 1
    assert "remaining" in error.value.reason and "ttl" in error.value.reason
    for field in FIELDS:
        assert field in error.value.reason


def test_the_selector_page_documents_every_field() -> None:
    page = (Path(__file__).resolve().parents[3] / "docs" / "selectors.md").read_text()
    table = page[page.index("**Fields.**") :]
    missing = [field for field in sorted(FIELDS) if f"`{field}`" not in table]
    assert missing == []


def test_remaining_at_most_one_is_what_the_next_advance_removes() -> None:
    """The documented "about to expire" query: exactly the items the next advance takes."""
    ctx = new_context()
    ctx.add_user("m")
    for number, ttl in enumerate([1, 2, 3, None, 1]):
        ctx.pact_insert(f"d0, {number + 1}, 0", TextContent(f"x{number}", ttl=ttl))
    ctx.advance()  # ages move: the ttl=2 one now has 1 left
    doomed = {node.id for node in ctx.select("[remaining<=1]")}
    before = {node.id for node in ctx.select("*")}
    ctx.advance()
    after = {node.id for node in ctx.select("*")}
    assert doomed and before - after == doomed


def test_rehydrates_in_at_most_one_is_what_the_next_advance_renews() -> None:
    """The documented "rehydrates next episode" query: exactly the instances whose schedule
    makes a fresh one at the next advance (the fresh one has the same key and a new id)."""
    ctx = new_context()
    ctx.add_user("m")
    for number, (ttl, cadence) in enumerate([(1, 1), (3, 2), (1, 3), (5, 5)]):
        ctx.pact_insert(
            f"d0, {number + 1}, 0",
            TextContent(f"x{number}", key=f"k{number}", ttl=ttl, cadence=cadence),
        )
    for _ in range(3):
        renewing = {node.key for node in ctx.select("[rehydrates_in<=1]")}
        before = {node.key: node.id for node in ctx.select("*") if node.key}
        ctx.advance()
        after = {node.key: node.id for node in ctx.select("*") if node.key}
        renewed = {key for key in after if key in before and after[key] != before[key]}
        assert renewing and renewing == renewed, ctx.current_episode
