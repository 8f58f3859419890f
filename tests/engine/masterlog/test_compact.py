"""This project's own compaction: gptme's reference format exactly, checked by the project's
parser, by an independent reading of the spec page's format, and by gptme's recovery rule."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine.masterlog.compact import plan, write
from engine.masterlog.conversation import MASTER, Conversation
from engine.masterlog.errors import MasterLogError
from engine.masterlog.lines import Message
from engine.masterlog.verify import Verifier

from .conftest import lines_of

NOW = datetime(2026, 11, 26, 12, 0, 0, tzinfo=UTC)

# The spec page's form (../shared/spec/masterlog.md), written out independently of the parser.
SPEC = re.compile(
    r"\[Content truncated - (\d+) tokens\]\n"
    r"Master context: ([^\n]+) \(bytes (\d+)-(\d+)\)\n"
    r"(?:Preview: ([^\n]*)\n)?"
    r"To recover: grep or read the master context file at the byte range above\."
)
TOOL = re.compile(
    r"\[Large tool output removed - (\d+) tokens\](?: \(([^\n]*)\))?\. "
    r"Full output saved to: ([^\n]+)\nYou can read or grep this file if needed\.\n\n$"
)


def gptme_recover(path: str, start: int, end: int) -> str:
    """gptme's recover_from_master_context, as its source reads."""
    with open(path, "rb") as file:
        file.seek(start)
        data = file.read(end - start)
    content: str = json.loads(data.decode("utf-8", errors="replace"))["content"]
    return content


@pytest.mark.parametrize("name", ["conv-basic", "conv-branches"])
def test_own_compaction_is_gptme_format_and_verifies(
    name: str, copy: Callable[[str], Path], opened: Callable[[Path], Conversation]
) -> None:
    directory = copy(name)
    conversation = opened(directory)
    written = write(conversation, 3000, now=NOW)
    assert written.view.name == (
        "compacted-002.jsonl" if name == "conv-basic" else "compacted-003.jsonl"
    )
    assert written.plan.within and written.plan.tokens_after <= 3000 < written.plan.tokens_before
    master = lines_of(directory / MASTER)
    view = lines_of(written.view)
    assert len(view) == len(master)  # view line i is master message i
    spec_refs = 0
    for i, raw in enumerate(view):
        content = json.loads(raw)["content"]
        original = json.loads(master[i])["content"]
        for match in SPEC.finditer(content):
            spec_refs += 1
            tokens, path, start, end, preview = match.groups()
            assert path == str(directory.resolve() / MASTER)
            assert gptme_recover(path, int(start), int(end)) == original
            assert int(tokens) == len(original) // 4
            first = original.split("\n")[0]
            assert preview == (first[:200] + ("..." if len(first) > 200 else ""))
            tool = TOOL.search(content[: match.start()])
            if tool:
                assert Path(tool[3]).read_bytes() == original.encode()
        if not SPEC.search(content):
            assert content == original  # untouched messages are copied exactly
    assert spec_refs == len(written.plan.cuts) > 0
    verifier = Verifier(conversation)
    verifier.update(conversation.refresh())
    ours = [v for v in verifier.ordered() if v.where.name == f"views/{written.view.name}"]
    assert len(ours) == spec_refs
    assert all(v.ok and not v.resolved_relative for v in ours), [v.explanation for v in ours]


def test_head_and_pinned_messages_stay_and_an_impossible_budget_says_so() -> None:
    big = "x" * 40_000
    messages = [
        Message("system", big, None, {"pinned": True}),
        Message("user", big, None),
        Message("assistant", big, None),
        Message("system", big, None, {"pinned": True}),
    ]
    chosen = plan(messages, 100)
    assert [c.position for c in chosen.cuts] == [2]
    assert not chosen.within and chosen.tokens_after > 100
    with pytest.raises(MasterLogError, match="positive number"):
        plan(messages, 0)


def test_out_writes_elsewhere_and_leaves_current_alone(
    copy: Callable[[str], Path], opened: Callable[[Path], Conversation], tmp_path: Path
) -> None:
    directory = copy("conv-basic")
    current = (directory / "views/.current").read_text()
    written = write(opened(directory), 5000, now=NOW, out=tmp_path / "mine.jsonl")
    assert written.view == tmp_path / "mine.jsonl" and written.view.exists()
    assert not (directory / "views/compacted-002.jsonl").exists()
    assert (directory / "views/.current").read_text() == current
