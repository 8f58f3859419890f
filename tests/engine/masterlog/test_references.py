"""The reference parser and writer, against gptme's exact text."""

from __future__ import annotations

import pytest

from engine.masterlog.errors import BadReference
from engine.masterlog.references import (
    find_references,
    format_reference,
    format_tool_summary,
    parse_range,
    parse_reference,
)

PATH = "/home/dev/logs/a (copy)/conversation.jsonl"


def test_round_trip_with_and_without_a_preview() -> None:
    for preview in ("Ran command: `ls`", None, "x" * 200 + "..."):
        text = format_reference(PATH, 10, 20, 7, preview)
        ref = parse_reference(text)
        assert (ref.master_path, ref.start, ref.end, ref.tokens, ref.preview) == (
            PATH,
            10,
            20,
            7,
            preview,
        )
        assert ref.text == text
    assert "Preview" not in format_reference(PATH, 1, 2, 3, None)


def test_kinds_follow_what_stands_before_the_reference() -> None:
    reference = format_reference(PATH, 0, 9, 5, "first")
    summary = format_tool_summary(5, "Ran command: `x (y)`", "/t/tool-outputs/a/b.txt")
    tool = summary + "\n\n" + reference
    compressed = "Short version.\n\n" + reference
    (a,), _ = find_references(tool)
    (b,), _ = find_references(compressed)
    assert (a.kind, a.tool_output, a.offset) == (
        "tool-output",
        "/t/tool-outputs/a/b.txt",
        len(summary) + 2,
    )
    assert (b.kind, b.tool_output, b.summary) == ("compressed", None, "Short version.")


def test_look_alikes_are_not_references() -> None:
    good = format_reference(PATH, 0, 9, 5, "first")
    assert find_references(good.replace("To recover:", "To restore:"))[0] == []
    assert find_references(good.replace("(bytes 0-9)", "(bytes 0 to 9)"))[0] == []
    assert find_references(good.replace("5 tokens", "five tokens"))[0] == []
    stub = (
        "[Stale tool output pruned - 744 tokens]. Full output saved to: /t/x.txt\n"
        "You can read or grep this file if needed."
    )
    refs, stubs = find_references(stub)
    assert refs == [] and [(s.tokens, s.tool_output) for s in stubs] == [(744, "/t/x.txt")]


def test_bad_input_is_a_typed_error_naming_the_problem() -> None:
    with pytest.raises(BadReference, match="no reference"):
        parse_reference("Master context: x (bytes 1-2)")
    two = format_reference(PATH, 0, 9, 5, "a") + "\n" + format_reference(PATH, 9, 19, 5, "b")
    with pytest.raises(BadReference, match="holds 2 references"):
        parse_reference(two)
    with pytest.raises(BadReference, match="not START-END"):
        parse_range("12")
    with pytest.raises(BadReference, match="empty"):
        parse_range("20-10")
    assert parse_range(" 3 - 40 ") == (3, 40)
