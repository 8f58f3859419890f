"""Export and load (spec §7), provider rendering and content hash (spec §8)."""

from __future__ import annotations

import copy
import hashlib
import json
import math
from collections.abc import Callable
from typing import Any

import pytest

from engine.context import (
    Context,
    ContextComponent,
    ContextError,
    InvalidExport,
    Pos,
    RandomIds,
    SystemClock,
    TextContent,
)
from engine.context.scenario import demo_steps

from .conftest import CountingClock, CountingIds, check_structure, load_continuing, new_context


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def rich(ctx: Context | None = None) -> Context:
    """The demo scenario (every lifecycle, keys, tags, a render lifecycle, seals) plus a few
    non-text contents."""
    ctx = ctx or new_context()
    for _description, action in demo_steps():
        action(ctx)
    ctx.pact_insert("d1, 4, 0", ContextComponent({"b": [1, 2], "a": "é"}, data_source="tool"))
    ctx.pact_insert("d0, 4, 0", TextContent('unicode ✓ \u2028 "quoted"', tags=["u"]))
    return ctx


# ------------------------------------------------------------------------------------------
# model_dump and load
# ------------------------------------------------------------------------------------------
def test_dump_shape(ctx: Context) -> None:
    ctx.add_user("a")
    dump = ctx.model_dump()
    assert sorted(dump) == [
        "counters",
        "episode",
        "format",
        "root",
        "system",
        "templates",
        "turns",
        "version",
    ]
    assert (dump["format"], dump["version"], dump["episode"]) == ("pact-context", 1, 0)
    assert dump["root"] == {"id": ctx.root_id, "node_type": "root"}
    assert dump["system"]["node_type"] == "system" and dump["system"]["depth"] == -1
    (turn,) = dump["turns"]
    assert turn["node_type"] == "turn" and turn["depth"] == 0
    assert turn["parent_id"] == ctx.root_id
    (slot,) = turn["slots"]
    assert (slot["node_type"], slot["position"], slot["parent_id"]) == ("slot", 0, turn["id"])
    (item,) = slot["items"]
    assert (item["content"], item["role"], item["coordinates"]) == ("a", "user", [0, 0, 0])


def test_dump_is_plain_json_and_excludes_history(ctx: Context) -> None:
    rich(ctx)
    assert len(ctx.history) > 3
    text = ctx.model_dump_json()
    assert json.loads(text) == ctx.model_dump()
    assert text == canonical(ctx.model_dump())
    assert "after-summary" not in text  # a seal trigger: history is not exported
    loaded = Context.load(ctx.model_dump())
    assert len(loaded.history) == 0


def test_dump_load_dump_is_byte_identical() -> None:
    ctx = rich()
    first = ctx.model_dump_json()
    loaded = Context.load(json.loads(first))
    assert loaded.model_dump_json() == first
    again = Context.load(loaded.model_dump())
    assert again.model_dump_json() == first
    check_structure(loaded)


def test_empty_context_round_trips(ctx: Context) -> None:
    assert Context.load(ctx.model_dump()).model_dump_json() == ctx.model_dump_json()


def test_same_operations_same_factories_same_bytes() -> None:
    assert rich().model_dump_json() == rich().model_dump_json()
    a, b = rich(), rich()
    assert [s.summary() for s in a.history] == [s.summary() for s in b.history]


def test_random_factories_change_only_ids_and_times() -> None:
    a = rich(Context(ids=RandomIds(), clock=SystemClock()))
    b = rich()
    assert a.render_provider_json() == b.render_provider_json()
    assert [(n.coordinates, n.content, n.lifecycle) for n in a.select("*")] == [
        (n.coordinates, n.content, n.lifecycle) for n in b.select("*")
    ]
    assert a.model_dump_json() != b.model_dump_json()


def test_loaded_context_behaves_like_the_original() -> None:
    """Load rebuilds every index: expiry, schedules, ODI bookkeeping and keys work as before."""
    ids, clock = CountingIds(), CountingClock()
    original = Context(ids=ids, clock=clock)
    rich(original)
    loaded = load_continuing(original.model_dump(), ids, clock)

    def more(ctx: Context) -> None:
        ctx.add_user("next")
        ctx.pact_insert("d0, 1, 0", TextContent("late note", ttl=2, key="late"))
        for _ in range(6):
            ctx.advance()
        ctx.add_assistant("reply")
        ctx.pact_delete(key="checkin")
        ctx.pact_update("d0, 1", TextContent("tail"), mode="append")
        for _ in range(6):
            ctx.advance()

    more(original)
    more(loaded)
    assert loaded.model_dump_json() == original.model_dump_json()

    # the loaded context started its history at the load; the snapshots it took since then
    # are the original's latest ones
    def seen(snapshots: list[Any]) -> list[tuple[str, int, str, int]]:
        return [(s.id, s.episode, s.trigger, s.created_at_ns) for s in snapshots]

    assert len(loaded.history) == 12
    assert seen(list(loaded.history)) == seen(list(original.history)[-12:])
    check_structure(loaded)


def test_schedules_due_together_rehydrate_in_the_same_order_after_a_load() -> None:
    """Two sticky schedules fall due at every advance, and the older one has just been given
    new content, which makes its prototype the newer one. The copy loaded at that moment and
    the original must rehydrate them in the same order, or the fresh instances swap ids. A
    replace used to leave the older heap entry behind in the original only, where it still
    counted (found by the property test's load-midway check)."""
    ids, clock = CountingIds(), CountingClock()
    original = Context(ids=ids, clock=clock)
    original.add_user("hello")
    older = original.pact_insert("d0, 1, 0", TextContent("older", ttl=1, cadence=1))
    newer = original.pact_insert("d0, 2, 0", TextContent("newer", ttl=1, cadence=1))
    original.advance()
    original.pact_update("d0, 1, 0", TextContent("older, again", ttl=1, cadence=1))
    loaded = load_continuing(original.model_dump(), ids, clock)
    original.advance()
    loaded.advance()
    assert loaded.model_dump_json() == original.model_dump_json()
    # the order is the prototypes' creation order: the replaced one now comes second
    fresh_newer, fresh_older = original["d0, 2, 0"], original["d0, 1, 0"]
    assert (fresh_older.template_id, fresh_newer.template_id) == (older.id, newer.id)
    assert int(fresh_newer.id[1:]) < int(fresh_older.id[1:])


def test_item_extra_fields_are_kept(ctx: Context) -> None:
    node = ctx.pact_insert("d0, 1, 0", TextContent("x", data_source="tool", note="n"))
    assert node.model_dump()["data"] == {"data_source": "tool", "note": "n"}
    loaded = Context.load(ctx.model_dump())
    assert loaded["d0, 1, 0"].model_dump()["data"] == {"data_source": "tool", "note": "n"}  # type: ignore[union-attr]


# ------------------------------------------------------------------------------------------
# damaged exports
# ------------------------------------------------------------------------------------------
def base_export() -> dict[str, Any]:
    """Turn a (depth 1): message, sticky at slot 2; turn b (depth 0): message, the temporary
    item (it kept depth 0). ``item(d)`` is the sticky: turns[0], slots[1], items[0]."""
    ctx = new_context()
    ctx.add_user("a")
    ctx.pact_insert("d0, 1, 0", TextContent("t", ttl=3))
    ctx.pact_insert("d0, 2, 0", TextContent("s", ttl=1, cadence=1))
    ctx.add_user("b")
    return ctx.model_dump()


def item(dump: dict[str, Any], turn: int = 0, slot: int = 1, index: int = 0) -> dict[str, Any]:
    return dump["turns"][turn]["slots"][slot]["items"][index]  # type: ignore[no-any-return]


Damage = Callable[[dict[str, Any]], Any]

REFUSED: list[tuple[str, Damage, str]] = [
    ("not dense", lambda d: item(d).update(offset=1), "not dense"),
    ("duplicate id", lambda d: item(d).update(id=item(d, slot=0)["id"]), "appears twice"),
    ("empty slot", lambda d: d["turns"][0]["slots"][1].update(items=[]), "empty"),
    ("two slots", lambda d: d["turns"][0]["slots"][1].update(position=0), "two slots"),
    ("no turns", lambda d: d.update(turns=[]), "at least the active turn"),
    ("format", lambda d: d.update(format="other"), "'other'"),
    ("version", lambda d: d.update(version=9), "v9"),
    ("unknown field", lambda d: d.update(extra=1), "extra"),
    ("missing field", lambda d: d.pop("episode"), "episode"),
    ("wrong type", lambda d: item(d).update(ttl="three"), "ttl"),
    # json.loads reads NaN and Infinity, but no hash can be computed over them
    ("NaN content", lambda d: item(d).update(content=math.nan), "'content'"),
    ("infinite data", lambda d: item(d).update(data={"data_x": [math.inf]}), "'data_x'"),
    ("NaN in both", lambda d: item(d).update(content=math.nan, data={"content": 1}), "'content'"),
]


@pytest.mark.parametrize(
    ("damage", "named"), [(d, n) for _, d, n in REFUSED], ids=[r[0] for r in REFUSED]
)
def test_damaged_export_is_refused(damage: Damage, named: str) -> None:
    dump = base_export()
    damage(dump)
    with pytest.raises(InvalidExport) as info:
        Context.load(dump)
    assert info.value.code == "INVALID_EXPORT"
    assert named in info.value.message


@pytest.mark.parametrize("value", ["nope", None, 3, [], {"format": "pact-context"}])
def test_non_export_is_refused(value: Any) -> None:
    with pytest.raises(InvalidExport):
        Context.load(value)


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda d: d["turns"][0].update(seq=d["turns"][1]["seq"]), id="dup-seq"),
        pytest.param(lambda d: d["turns"][0].update(seq=-1), id="system-seq"),
    ],
)
def test_export_with_clashing_turn_seq_is_refused(damage: Damage) -> None:
    dump = base_export()
    damage(dump)
    try:
        loaded = Context.load(dump)
    except InvalidExport:
        return
    loaded.pact_delete("d1, 0, 0")  # raises LookupError (not a ContextError)
    raise AssertionError("a clashing turn seq was accepted")


def test_export_with_bad_stage_selector_is_invalid_export() -> None:
    ctx = new_context()
    ctx.pact_insert("d0, 1, 0", TextContent("x").render_lifecycle([Pos("d0, 1, 0", ttl=2)]))
    dump = ctx.model_dump()
    item(dump, slot=0)["render_lifecycle"]["stages"][0]["selector"] = "d0, *, 0"
    with pytest.raises(ContextError) as info:
        Context.load(dump)
    assert info.value.code == "INVALID_EXPORT"


def sticky_id(dump: dict[str, Any]) -> str:
    return item(dump)["id"]  # type: ignore[no-any-return]


# (damage, what the message must name, whose id it must name)
INCONSISTENT: list[tuple[str, Damage, str, Callable[[dict[str, Any]], str]]] = [
    ("content_hash", lambda d: item(d).update(content_hash="0" * 64), "content_hash", sticky_id),
    ("coordinates", lambda d: item(d).update(coordinates=[9, 9, 9]), "coordinates", sticky_id),
    (
        "turn-depth",
        lambda d: d["turns"][0].update(depth=7),
        "depth field says 7",
        lambda d: d["turns"][0]["id"],
    ),
    ("parent_id", lambda d: item(d).update(parent_id="elsewhere"), "'elsewhere'", sticky_id),
    ("negative-ttl", lambda d: item(d).update(ttl=-5), "ttl=-5", sticky_id),
    ("zero-cad", lambda d: item(d).update(cad=0), "cad=0", sticky_id),
]


@pytest.mark.parametrize(
    ("damage", "named", "whose"),
    [(d, n, w) for _, d, n, w in INCONSISTENT],
    ids=[case[0] for case in INCONSISTENT],
)
def test_inconsistent_export_is_refused(
    damage: Damage, named: str, whose: Callable[[dict[str, Any]], str]
) -> None:
    dump = base_export()
    damage(dump)
    with pytest.raises(InvalidExport) as info:
        Context.load(dump)
    assert named in info.value.message
    assert repr(whose(dump)) in info.value.message
    if whose is sticky_id:
        assert "(1, 2, 0)" in info.value.message  # where it sits


def lifecycle_export() -> dict[str, Any]:
    """One render-lifecycle item at d0,1,0 (turns[0], slots[0], items[0]), stage 0 of 2,
    ``cycle=2``."""
    ctx = new_context()
    stages = [Pos("d0, 1, 0", ttl=2), Pos("d0, 1, 1", ttl=1)]
    ctx.pact_insert("d0, 1, 0", TextContent("x").render_lifecycle(stages, cycle=2))
    return ctx.model_dump()


def staged(dump: dict[str, Any]) -> dict[str, Any]:
    return item(dump, turn=0, slot=0)["render_lifecycle"]  # type: ignore[no-any-return]


def template(dump: dict[str, Any]) -> dict[str, Any]:
    return dump["templates"][0]  # type: ignore[no-any-return]


# Everything else an export repeats, or that no operation could have produced.
CONTRADICTIONS: list[tuple[str, Callable[[], dict[str, Any]], Damage, str]] = [
    ("root-type", base_export, lambda d: d["root"].update(node_type="turn"), "not 'root'"),
    ("negative-episode", base_export, lambda d: d.update(episode=-1), "episode -1"),
    ("system-seq", base_export, lambda d: d["system"].update(seq=3), "the system's is -1"),
    ("negative-seq", base_export, lambda d: d["turns"][0].update(seq=-4), "count from 0"),
    ("turn-type", base_export, lambda d: d["turns"][0].update(node_type="slot"), "'slot'"),
    ("turn-parent", base_export, lambda d: d["turns"][0].update(parent_id="x"), "not the root"),
    (
        "slot-parent",
        base_export,
        lambda d: d["turns"][0]["slots"][0].update(parent_id="x"),
        "is not its turn",
    ),
    (
        "slot-id-twice",
        base_export,
        lambda d: d["turns"][0]["slots"][1].update(id=d["turns"][0]["slots"][0]["id"]),
        "appears twice",
    ),
    ("role", base_export, lambda d: item(d, slot=0).update(role="robot"), "role"),
    ("past-ttl", base_export, lambda d: item(d, 1, 1).update(born_episode=-5), "is over"),
    ("born-later", base_export, lambda d: item(d, 1, 1).update(born_episode=2), "after"),
    (
        "next-seq",
        base_export,
        lambda d: d["counters"].update(next_turn_seq=1),
        "would repeat turn seq 1",
    ),
    ("creation-index", base_export, lambda d: d["counters"].update(creation_index=2), "below"),
    ("no-template", base_export, lambda d: d.update(templates=[]), "does not have"),
    ("live-id", base_export, lambda d: template(d).update(live_id=None), "live_id None"),
    ("template-cad", base_export, lambda d: template(d).update(cad=0), "cad 0"),
    (
        "prototype-cad",
        base_export,
        lambda d: (template(d).update(cad=0), template(d)["prototype"].update(cad=0)),
        "cad=0",
    ),
    (
        "prototype-template",
        base_export,
        lambda d: template(d)["prototype"].update(template_id="x"),
        "names template 'x'",
    ),
    ("anchor-missing", base_export, lambda d: template(d).update(anchor_seq=99), "seq 99"),
    (
        "anchor-both",
        base_export,
        lambda d: template(d).update(anchor_depth=1),
        "exactly one of",
    ),
    (
        "sticky-keeps-depth",
        base_export,
        lambda d: template(d).update(anchor_seq=None, anchor_depth=1),
        "cannot keep depth 1",
    ),
    (
        "instance-elsewhere",
        base_export,
        lambda d: template(d).update(anchor_seq=d["turns"][1]["seq"]),
        "not where the schedule is anchored",
    ),
    ("stage-index", lifecycle_export, lambda d: staged(d).update(stage=5), "stage 5"),
    ("stage-ttl", lifecycle_export, lambda d: item(d, 0, 0).update(ttl=9), "stage 0 has ttl 2"),
    ("passes", lifecycle_export, lambda d: staged(d).update(passes=2), "passes 2"),
    (
        "stage-untimed",
        lifecycle_export,
        lambda d: staged(d)["stages"][0].update(ttl=None),
        "not the last stage",
    ),
]


@pytest.mark.parametrize(
    ("build", "damage", "named"),
    [(b, d, n) for _, b, d, n in CONTRADICTIONS],
    ids=[case[0] for case in CONTRADICTIONS],
)
def test_contradictory_export_is_refused(
    build: Callable[[], dict[str, Any]], damage: Damage, named: str
) -> None:
    dump = build()
    assert Context.load(copy.deepcopy(dump)).model_dump() == dump  # undamaged, it loads
    damage(dump)
    with pytest.raises(InvalidExport) as info:
        Context.load(dump)
    assert named in info.value.message, info.value.message


def test_export_refusal_names_the_bad_stage_selector() -> None:
    dump = lifecycle_export()
    staged(dump)["stages"][1]["selector"] = "d0, 1, "
    with pytest.raises(InvalidExport) as info:
        Context.load(dump)
    assert repr(item(dump, 0, 0)["id"]) in info.value.message
    assert "'d0, 1, '" in info.value.message


# ------------------------------------------------------------------------------------------
# content hash
# ------------------------------------------------------------------------------------------
def test_content_hash_is_sha256_of_canonical_content(ctx: Context) -> None:
    text = ctx.pact_insert("d0, 1, 0", TextContent("hello"))
    data = ctx.pact_insert("d0, 2, 0", ContextComponent({"b": 1, "a": [1, "é"]}))
    assert text.content_hash == hashlib.sha256(b'"hello"').hexdigest()
    assert (
        data.content_hash == hashlib.sha256(canonical({"a": [1, "é"], "b": 1}).encode()).hexdigest()
    )
    assert text.model_dump()["content_hash"] == text.content_hash


def test_content_hash_covers_content_and_data_fields_in_canonical_bytes(ctx: Context) -> None:
    node = ctx.pact_insert(
        "d0, 1, 0", ContextComponent({"z": 1.5e16, "a": "é\x7f"}, data_src="t", note="n")
    )
    # Pinned bytes: the hash of every item ever exported depends on them.
    hashed = b'{"content":{"a":"\\u00e9\\u007f","z":1.5e+16},"data_src":"t"}'
    assert node.content_hash == hashlib.sha256(hashed).hexdigest()


def test_content_hash_ignores_id_ttl_offset_key_and_time(ctx: Context) -> None:
    a = ctx.pact_insert("d0, 1, 0", TextContent("same"))
    b = ctx.pact_insert("d-1, 3, 0", TextContent("same", ttl=4, key="k", tags=["t"], priority=3))
    assert a.id != b.id and a.content_hash == b.content_hash
    ctx.pact_insert("d0, 1, 0", TextContent("pushes a"))
    ctx.add_user("odi")
    ctx.advance()
    moved = ctx.find(a.id)
    assert moved is not None and moved.coordinates == (1, 1, 1)
    assert moved.content_hash == a.content_hash
    assert ctx.pact_insert("d0, 1, 0", TextContent("other")).content_hash != a.content_hash


def test_content_hash_includes_data_fields(ctx: Context) -> None:
    plain = ctx.pact_insert("d0, 1, 0", TextContent("x"))
    with_data = ctx.pact_insert("d0, 2, 0", TextContent("x", data_source="a"))
    other_data = ctx.pact_insert("d0, 3, 0", TextContent("x", data_source="b"))
    unrelated = ctx.pact_insert("d0, 4, 0", TextContent("x", note="not hashed"))
    assert len({plain.content_hash, with_data.content_hash, other_data.content_hash}) == 3
    assert unrelated.content_hash == plain.content_hash
    assert (
        with_data.content_hash
        == hashlib.sha256(canonical({"content": "x", "data_source": "a"}).encode()).hexdigest()
    )


def test_sticky_renewals_share_a_hash(ctx: Context) -> None:
    first = ctx.pact_insert("d0, 1, 0", TextContent("status", ttl=1, cadence=1))
    ctx.advance()
    renewed = ctx["d0, 1, 0"]
    assert renewed is not None and renewed.id != first.id
    assert renewed.content_hash == first.content_hash


# ------------------------------------------------------------------------------------------
# provider rendering
# ------------------------------------------------------------------------------------------
def test_provider_rendering_order_and_roles(ctx: Context) -> None:
    ctx.pact_insert("d-1, 1, 0", TextContent("sys component"))
    ctx.pact_insert("d-1, 0, 0", TextContent("system prompt"))
    ctx.add_user("question")
    ctx.pact_insert("d0, -1, 0", TextContent("before the question"))
    ctx.pact_insert("d0, 1, 0", TextContent("after the question"))
    ctx.add_assistant("answer")
    ctx.pact_insert("d0, 0, -1", TextContent("answer preface"))
    ctx.pact_insert("d0, 2, 0", ContextComponent({"tool": "x"}))
    assert ctx.render_provider() == [
        {"content": "system prompt", "role": "system"},
        {"content": "sys component", "role": "system"},
        {"content": "before the question", "role": "user"},
        {"content": "question", "role": "user"},
        {"content": "after the question", "role": "user"},
        {"content": "answer preface", "role": "assistant"},
        {"content": "answer", "role": "assistant"},
        {"content": '{"tool":"x"}', "role": "assistant"},
    ]
    assert ctx.render_provider_json() == canonical(ctx.render_provider())


def test_provider_rendering_is_deterministic_and_ascii() -> None:
    a, b = rich(), rich()
    assert a.render_provider_json() == b.render_provider_json()
    assert a.render_provider_json().isascii()
    assert json.loads(a.render_provider_json()) == a.render_provider()
    loaded = Context.load(copy.deepcopy(a.model_dump()))
    assert loaded.render_provider_json() == a.render_provider_json()


def test_an_items_text_length_is_the_length_of_its_text() -> None:
    """Text, JSON content (non-ASCII escaped) and a component without content: the length the
    provider view counts, worked out without building the text."""
    items = [item for item, *_where in rich().iter_items()]
    assert any(not isinstance(item.content, str) for item in items)
    items.append(items[0].evolve(content=None, data={"url": "x", "alt": "é"}))
    for item in items:
        assert item.text_length() == len(item.text()), item.id


def test_provider_role_of_a_turn_without_message_is_user(ctx: Context) -> None:
    ctx.pact_insert("d0, 1, 0", TextContent("orphan"))
    assert ctx.render_provider() == [{"content": "orphan", "role": "user"}]
