"""``engine.visible``: what it makes visible, how it writes it, and that it keeps JSON JSON; and
the heads a display reads of a big item (``canonical_json_head``, ``Item.text_head``)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.canonical import canonical_json, canonical_json_head
from engine.context import Context, SequentialIds, SteppingClock
from engine.context.commands import parse_component
from engine.visible import is_visible, visible
from tests.hostile import acts_or_misleads

UNSAFE = [chr(c) for c in range(0x110000) if acts_or_misleads(chr(c))]


PRINTABLE = "plain text, é, 中文, 😀, 👩\u200d💻, ❤\ufe0f"  # joiners, variation selectors: kept
JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.text()


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[2J", "\\u001b[2J"),
        ("\x1b]0;pwned\x07", "\\u001b]0;pwned\\u0007"),
        ("\x1b]52;c;aGk=\x07", "\\u001b]52;c;aGk=\\u0007"),
        ("\x9b31m", "\\u009b31m"),
        ("\x7f", "\\u007f"),
        ("abc\u202edef", "abc\\u202edef"),
        ("a\u2066b\u2069", "a\\u2066b\\u2069"),
        ("one\ntwo\tthree\r", "one\\ntwo\\tthree\\r"),
        ("\ud800", "\\ud800"),
        ("\U000e0041", "\\udb40\\udc41"),
        (
            "plain text, é, 中文, 😀, 👩\u200d💻, ❤\ufe0f",
            "plain text, é, 中文, 😀, 👩\u200d💻, ❤\ufe0f",
        ),
    ],
)
def test_each_kind_is_written_as_its_json_escape(raw: str, shown: str) -> None:
    assert visible(raw) == shown


def test_every_character_that_acts_or_misleads_is_made_visible_and_nothing_else() -> None:
    text = "".join(UNSAFE)
    assert not any(acts_or_misleads(c) for c in visible(text))
    assert not any(acts_or_misleads(c) for c in visible(text, multiline=True) if c not in "\n\t")
    others = "".join(chr(c) for c in range(0x20, 0x30000) if not acts_or_misleads(chr(c)))
    assert visible(others) == others  # printable text is left alone, however exotic


def test_multiline_keeps_line_breaks_and_tabs_only() -> None:
    assert visible("a\nb\tc\r\n\x1b", multiline=True) == "a\nb\tc\\r\n\\u001b"


def test_limit_shows_that_many_characters_then_an_ellipsis() -> None:
    assert visible("abcdef", limit=4) == "abc…"
    assert visible("abcd", limit=4) == "abcd"
    assert visible("\x1b" * 10, limit=3) == "\\u001b\\u001b…"


@given(st.text())
def test_nothing_that_acts_survives(text: str) -> None:
    assert not any(acts_or_misleads(c) for c in visible(text))


@given(
    st.text(st.characters(max_codepoint=0x7F)) | st.text(st.characters(max_codepoint=0x3000)),
    st.booleans(),
)
def test_is_visible_says_whether_visible_leaves_the_text_as_it_is(
    text: str, multiline: bool
) -> None:
    assert is_visible(text, multiline=multiline) == (visible(text, multiline=multiline) == text)


@pytest.mark.parametrize("multiline", [False, True])
def test_is_visible_of_each_ascii_character(multiline: bool) -> None:
    for c in map(chr, range(0x80)):  # alone, and in plain text
        for sample in (c, f"plain {c} text"):
            shown = visible(sample, multiline=multiline)
            assert is_visible(sample, multiline=multiline) == (shown == sample), repr(sample)


@given(
    st.recursive(
        JSON_SCALARS,
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    )
)
def test_a_json_document_made_visible_is_the_same_document(value: object) -> None:
    document = json.dumps(value, ensure_ascii=False)
    shown = visible(document)
    assert json.loads(shown) == value
    pretty = json.dumps(value, ensure_ascii=False, indent=2)
    assert json.loads(visible(pretty, multiline=True)) == value


@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    ),
    st.integers(min_value=0, max_value=300),
)
def test_canonical_json_head_is_the_start_of_canonical_json(value: object, limit: int) -> None:
    assert canonical_json_head(value, limit) == canonical_json(value)[:limit]


def test_an_items_text_head_is_the_start_of_its_text() -> None:
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    context.add_user("hello\nworld")
    json_item = {"type": "json", "content": {"b": [1, 2], "a": "é\x1b"}}
    context.pact_insert("d0, 1, 0", parse_component(json_item).build())
    no_content = {"type": "image", "url": "x"}  # shown as its own fields
    context.pact_insert("d0, 2, 0", parse_component(no_content).build())
    items = [item for item, *_ in context.iter_items()]
    assert len(items) == 3
    for item in items:
        for limit in range(len(item.text()) + 2):
            assert item.text_head(limit) == item.text()[:limit]
