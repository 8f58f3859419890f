"""The changelog's values: JSON round trip, the summary's wording, the text lines, bad JSON."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from engine.context import ContextError
from engine.context.changelog import (
    LIST_LIMIT,
    PREVIEW_CHARS,
    SUMMARY_NAMES,
    ChangeEntry,
    Changelog,
    InvalidChangelog,
    Shift,
    lines_of,
    preview,
    summary_of,
)


def entry(kind: Any, id: str = "i1", key: str | None = None, **fields: Any) -> ChangeEntry:
    base: dict[str, Any] = {
        "node_type": "text",
        "preview": "hello",
        "before": (1, 1, 0),
        "after": None,
    }
    base.update(fields)
    return ChangeEntry(kind=kind, id=id, key=key, **base)


EXPIRED = entry("expired", "e1", "deadline", age=3, ttl=3)
REHYDRATED = entry(
    "rehydrated",
    "r2",
    "current_mode",
    before=(0, 2, 0),
    after=(0, 2, 0),
    template="r1",
    replaced="r1",
)
STAGE = entry("stage", "s1", "alert", before=(0, 1, 0), after=(0, 1, 1), stage=(1, 2), stages=3)
SHIFT = Shift(by=1, turns=3, items=10, depths=(0, 2))
EXAMPLE = Changelog(op="advance", episode=4, entries=(EXPIRED, REHYDRATED, STAGE), shifts=(SHIFT,))


# ------------------------------------------------------------------------------------------
# round trip
# ------------------------------------------------------------------------------------------
def every_kind() -> Changelog:
    listed = tuple(entry("moved", f"m{i}", before=(i, 0, 0), after=(i + 1, 0, 0)) for i in range(3))
    return Changelog(
        op="message",
        episode=7,
        entries=(
            entry("inserted", "n1", before=None, after=(0, 0, 0)),
            entry("deleted", "d1", "gone"),
            entry("deleted", "t9", "sched", before=None, template="t9"),
            entry("replaced", "p1", before=(2, 1, 0), after=(2, 1, 0)),
            EXPIRED,
            REHYDRATED,
            entry("rehydrated", "r4", template="r3", replaced=None, before=None, after=(0, 1, 0)),
            entry("moved", "f1", before=(9, 1, 0), after=(7, 1, 0)),
            STAGE,
            entry("stage", "s2", stage=(3, None), stages=3, age=2, ttl=2),
            entry("stage", "s3", stage=(2, 1), stages=2, cycled=True, after=(0, 1, 0)),
            entry("turn_removed", "turn7", node_type="turn", preview="", before=(4,)),
        ),
        shifts=(
            Shift(by=1, turns=3, items=3, depths=(0, 2), listed=listed),
            Shift(by=-2, turns=5, items=400, depths=(6, 10)),
        ),
    )


def test_round_trip_through_json_text_is_equal() -> None:
    log = every_kind()
    text = json.dumps(log.to_json())
    assert Changelog.from_json(json.loads(text)) == log


def test_json_form_leaves_out_reasons_a_kind_has_not() -> None:
    data = every_kind().to_json()
    inserted = data["entries"][0]
    assert inserted == {
        "kind": "inserted",
        "id": "n1",
        "key": None,
        "node_type": "text",
        "preview": "hello",
        "before": None,
        "after": [0, 0, 0],
    }
    assert data["entries"][4]["age"] == 3 and data["entries"][4]["ttl"] == 3
    assert data["entries"][9]["stage"] == [3, None]
    assert data["entries"][10]["cycled"] is True
    assert data["shifts"][1] == {
        "by": -2,
        "turns": 5,
        "items": 400,
        "depths": [6, 10],
        "listed": [],
    }


def test_combined_joins_ops_and_keeps_the_order() -> None:
    first = Changelog(op="message", episode=3, entries=(entry("inserted", "a"),), shifts=(SHIFT,))
    second = Changelog(op="advance", episode=4, entries=(EXPIRED,))
    both = Changelog.combined([first, second])
    assert both.op == "message+advance" and both.episode == 4
    assert both.entries == (first.entries[0], EXPIRED) and both.shifts == (SHIFT,)
    assert Changelog.combined([second]) is second
    with pytest.raises(ValueError):
        Changelog.combined([])


# ------------------------------------------------------------------------------------------
# wording
# ------------------------------------------------------------------------------------------
def test_summary_reads_as_the_issue_says() -> None:
    assert EXAMPLE.summary() == (
        "expired #deadline (ttl 3) · rehydrated #current_mode · ODI: 10 items one deeper"
        " · #alert stage 1→2"
    )


def test_summary_names_a_keyless_item_by_type_and_coordinates() -> None:
    log = Changelog(op="delete", episode=0, entries=(entry("deleted", before=(2, 1, 0)),))
    assert log.summary() == "deleted text (2,1,0)"


def test_summary_counts_many_of_a_kind() -> None:
    many = tuple(entry("expired", f"e{i}", ttl=1, age=1) for i in range(40))
    log = Changelog(op="advance", episode=2, entries=many)
    assert log.summary() == "expired 40 items"
    few = Changelog(op="advance", episode=2, entries=many[:SUMMARY_NAMES])
    assert few.summary().count("(ttl 1)") == SUMMARY_NAMES


def test_summary_of_stage_endings_cycles_turns_and_shallower_shifts() -> None:
    log = Changelog(
        op="advance",
        episode=5,
        entries=(
            entry("stage", "a", "a", stage=(3, None), stages=3),
            entry("stage", "b", "b", stage=(2, 1), stages=2, cycled=True),
            entry("turn_removed", "t", node_type="turn", before=(4,)),
        ),
        shifts=(Shift(by=-1, turns=2, items=1, depths=(5, 6)),),
    )
    assert log.summary() == (
        "ODI: 1 item one shallower · #a stage 3 ended · #b stage 2→1 (cycled) · turn d4 removed"
    )


def test_summary_sums_shifts_of_several_logs_and_says_when_nothing_changed() -> None:
    logs = [Changelog(op="message", episode=1, shifts=(SHIFT,))] * 2
    assert summary_of(logs) == "ODI: 20 item moves one deeper (2 mass moves)"
    assert summary_of(logs[:1]) == "ODI: 10 items one deeper"
    assert Changelog(op="seal", episode=1).summary() == "no changes"
    assert not Changelog(op="seal", episode=1)


def test_lines_name_coordinates_key_preview_and_reasons() -> None:
    lines = EXAMPLE.lines()
    assert len(lines) == 4
    assert lines[0].split() == [
        "expired",
        "(1,1,0)",
        "→",
        "—",
        "#deadline",
        '"hello"',
        "(age",
        "3,",
        "ttl",
        "3)",
    ]
    assert "(0,2,0) → (0,2,0)" in lines[1] and "replaced r1" in lines[1]
    assert "stage 1→2 of 3" in lines[2]
    assert lines[3] == "ODI: 10 items in 3 turns moved one deeper (d0\u2013d2 → d1\u2013d3)"


def test_shift_line_formats_thousands_and_lists_its_items_indented() -> None:
    big = Shift(by=1, turns=3333, items=9999, depths=(0, 3332))
    assert big.line() == (
        "ODI: 9,999 items in 3,333 turns moved one deeper (d0\u2013d3332 → d1\u2013d3333)"
    )
    one = Shift(by=-1, turns=1, items=2, depths=(4, 4))
    assert one.line() == "ODI: 2 items in 1 turn moved one shallower (d4 → d3)"
    listed = (entry("moved", "m", before=(0, 0, 0), after=(1, 0, 0)),)
    small = Changelog(op="message", episode=0, shifts=(Shift(1, 1, 1, (0, 0), listed),))
    assert lines_of([small])[1].startswith("  moved")
    assert LIST_LIMIT >= 1


def test_lines_make_hostile_text_visible() -> None:
    hostile = entry("inserted", key="k\x1b[2J\nforged", preview="a\x07b")
    line = Changelog(op="insert", episode=0, entries=(hostile,)).lines()[0]
    assert "\x1b" not in line and "\n" not in line and "\x07" not in line
    assert "#k\\u001b[2J\\nforged" in line


def test_preview_takes_the_first_line_and_cuts_with_an_ellipsis() -> None:
    assert preview("short") == "short"
    assert preview("first\nsecond") == "first…"
    cut = preview("x" * (PREVIEW_CHARS + 5))
    assert len(cut) == PREVIEW_CHARS and cut.endswith("…")
    assert preview("y" * PREVIEW_CHARS) == "y" * PREVIEW_CHARS


# ------------------------------------------------------------------------------------------
# bad JSON
# ------------------------------------------------------------------------------------------
def broken(change: Any) -> dict[str, Any]:
    data = copy.deepcopy(every_kind().to_json())
    change(data)
    return data


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.pop("op"), "op"),
        (lambda d: d.update(episode="4"), "episode"),
        (lambda d: d.update(episode=True), "episode"),
        (lambda d: d.update(entries={}), "entries"),
        (lambda d: d["entries"][2].update(kind="vanished"), "entries[2].kind"),
        (lambda d: d["entries"][0].update(before=[1, 2]), "entries[0].before"),
        (lambda d: d["entries"][0].update(after=["0", 0, 0]), "entries[0].after"),
        (lambda d: d["entries"][0].pop("preview"), "entries[0].preview"),
        (lambda d: d["entries"][9].update(stage=[3]), "entries[9].stage"),
        (lambda d: d["entries"][4].update(ttl=1.5), "entries[4].ttl"),
        (lambda d: d["entries"][4].update(surprise=1), "entries[4].surprise"),
        (lambda d: d["shifts"][0].update(depths=[0]), "shifts[0].depths"),
        (lambda d: d["shifts"][0]["listed"][1].update(id=7), "shifts[0].listed[1].id"),
        (lambda d: d.update(extra=1), "extra"),
    ],
)
def test_bad_json_raises_a_typed_error_naming_the_field(mutate: Any, field: str) -> None:
    with pytest.raises(InvalidChangelog) as caught:
        Changelog.from_json(broken(mutate))
    assert caught.value.details["field"] == field
    assert field in caught.value.message
    assert isinstance(caught.value, ContextError) and caught.value.code == "INVALID_CHANGELOG"


@pytest.mark.parametrize("data", [None, [], "changelog", 3])
def test_not_an_object_is_refused(data: Any) -> None:
    with pytest.raises(InvalidChangelog):
        Changelog.from_json(data)
