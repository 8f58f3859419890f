"""The real gptme fixtures: every reference gptme wrote is found, verifies as the fixture's own
record says, and recovers exactly the original content."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.masterlog.conversation import Conversation
from engine.masterlog.verify import Status, recover, verify_all

from .conftest import facts


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("name", ["conv-basic", "conv-branches"])
def test_every_reference_is_found_where_gptme_wrote_it(
    name: str, copy: Callable[[str], Path], opened: Callable[[Path], Conversation]
) -> None:
    conversation = opened(copy(name))
    found = {
        (str(f.where), f.reference.start, f.reference.end, f.reference.kind, f.reference.tokens)
        for f in conversation.references()
    }
    expected = {
        (r["file"] + f":{r['line']}", r["bytes"][0], r["bytes"][1], r["kind"], r["tokens"])
        for r in facts(name)["references"]
    }
    assert found == expected
    stubs = {(str(where), stub.tokens) for where, stub in conversation.stubs()}
    assert stubs == {(s["file"] + f":{s['line']}", s["tokens"]) for s in facts(name)["stubs"]}


@pytest.mark.parametrize("name", ["conv-basic", "conv-branches"])
def test_verdicts_agree_with_the_fixtures_record_and_recovery_is_exact(
    name: str, copy: Callable[[str], Path], opened: Callable[[Path], Conversation]
) -> None:
    conversation = opened(copy(name))
    record = {r["file"] + f":{r['line']}": r for r in facts(name)["references"]}
    verdicts = verify_all(conversation)
    assert len(verdicts) == len(record)
    for verdict in verdicts:
        expected = record[str(verdict.where)]
        assert verdict.ok == (expected["status"] == "ok"), (verdict.where, verdict.explanation)
        assert verdict.resolved_relative  # the generation paths do not exist here
        if verdict.ok:
            found = next(f for f in conversation.references() if f.where == verdict.where)
            recovered = recover(conversation, found)
            assert recovered.content is not None
            assert sha(recovered.content) == expected["intended"]["content_sha256"]
            assert recovered.source.startswith(
                f"conversation.jsonl:{expected['lands_on']['master_line']} "
            )


def test_the_broken_reference_of_conv_branches_is_explained_and_its_original_found(
    copy: Callable[[str], Path], opened: Callable[[Path], Conversation]
) -> None:
    conversation = opened(copy("conv-branches"))
    (broken,) = [v for v in verify_all(conversation) if not v.ok]
    assert str(broken.where) == "views/compacted-001.jsonl:12"
    assert broken.status is Status.MID_LINE
    assert "starts 147 bytes into line 11 (bytes 36288-36516)" in broken.explanation
    # the Preview names current line 12, but that is the re-run, a different message
    assert broken.preview_matches == (11,)
    assert "different message" in broken.explanation
    assert broken.original == "branches/main-undo-0.jsonl:12"
    assert any("undo of 5" in note for note in broken.notes)
    found = next(f for f in conversation.references() if f.where == broken.where)
    recovered = recover(conversation, found)
    intended = facts("conv-branches")["references"][3]["intended"]
    assert recovered.content is not None and sha(recovered.content) == intended["content_sha256"]
    assert recovered.source == "branches/main-undo-0.jsonl:12"


def test_master_lines_are_indexed_exactly(
    copy: Callable[[str], Path], opened: Callable[[Path], Conversation]
) -> None:
    for name in ("conv-basic", "conv-branches"):
        conversation = opened(copy(name), f"{name}.sqlite")
        master = facts(name)["master"]
        index = conversation.master
        assert index.lines == master["lines"] and index.size == master["bytes"]
        for message in master["messages"]:
            assert index.bounds(message["line"]) == tuple(message["bytes"])
            parsed = conversation.message("conversation.jsonl", message["line"])
            assert sha(parsed.content) == message["content_sha256"]  # type: ignore[union-attr]


def test_search_finds_messages_in_the_master_views_and_branches(
    copy: Callable[[str], Path], opened: Callable[[Path], Conversation]
) -> None:
    conversation = opened(copy("conv-branches"))
    for _ in conversation.catalogue_all():
        pass
    hits = conversation.catalogue.search("rounding", limit=100)
    names = {hit.name for hit in hits}
    assert {"conversation.jsonl", "branches/main-undo-0.jsonl"} <= names
    master_hit = next(h for h in hits if h.name == "conversation.jsonl")
    message = conversation.message("conversation.jsonl", master_hit.line)
    assert "rounding" in message.content.lower()  # type: ignore[union-attr]
    assert "\x02" in master_hit.snippet  # the match is marked
    assert conversation.catalogue.search("zzzznotthere") == []
    # non-ASCII contents are searchable as text, not as JSON escapes
    assert conversation.catalogue.search("Zürich")


def test_a_match_in_a_message_too_long_for_a_snippet_shows_its_first_line_and_size(
    copy: Callable[[str], Path], opened: Callable[[Path], Conversation]
) -> None:
    """FTS5's snippet() grows faster than the text (minutes for 10 MB): a message longer than
    SNIPPET_CHARS is found all the same, its hit naming its first line and its length."""
    from engine.masterlog.catalogue import MARK, SNIPPET_CHARS
    from engine.masterlog.lines import encode_message

    directory = copy("conv-basic")
    long = "Opening line of the long one\n" + "filler words " * (SNIPPET_CHARS // 12) + "needle"
    short = "a short needle"
    with (directory / "conversation.jsonl").open("ab") as master:
        for content in (long, short):
            master.write(encode_message({"role": "user", "content": content, "timestamp": "t"}))
    conversation = opened(directory)
    for _ in conversation.catalogue_all():
        pass
    hits = {
        conversation.message(hit.name, hit.line).content: hit  # type: ignore[union-attr]
        for hit in conversation.catalogue.search("needle")
    }
    assert set(hits) == {long, short}
    assert hits[long].snippet == f"Opening line of the long one … ({len(long):,} characters)"
    assert MARK[0] in hits[short].snippet  # a short one keeps its marked snippet
