"""This project's own compaction: any conversation, cut to a token budget, written as a view
whose references are exactly gptme's, so gptme's recovery (and :mod:`.verify`) reads them.

Tokens are gptme's offline count, ``len(content) // 4``. Like gptme, the first ``keep_head``
messages (the system prompt and the first user message) and pinned messages stay whole, and
the largest messages go first:

1. tool results (``system`` messages): saved whole to ``tool-outputs/pact-tui/<time>-<sha8>.txt``
   and replaced by gptme's summary and a reference (``tool-output``);
2. then other messages: replaced by their opening (the first lines, up to a quarter of the
   text, at most :data:`OPENING_CHARS`) and a reference (``compressed``),

until the view is within the budget. The plan is pure (:func:`plan`); :func:`write` does the
I/O with the time it is given.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .conversation import MASTER, Conversation
from .errors import MasterLogError
from .lines import LineProblem, Message, encode_message, parse_line, preview_of
from .references import Kind, format_reference, format_tool_summary

KEEP_HEAD = 2
MIN_TOKENS = 64  # smaller messages are not worth a reference (it is about 60 tokens itself)
OPENING_CHARS = 400
REFERENCE_TOKENS = 70  # a reference and gptme's summary line, roughly, in len/4 tokens
TOOL = "pact-tui"


@dataclass(frozen=True, slots=True)
class Cut:
    position: int  # index among the master's messages (and the view's lines)
    kind: Kind
    tokens: int


@dataclass(frozen=True, slots=True)
class Plan:
    cuts: tuple[Cut, ...]
    tokens_before: int
    tokens_after: int
    budget: int

    @property
    def within(self) -> bool:
        return self.tokens_after <= self.budget


@dataclass(frozen=True, slots=True)
class Written:
    plan: Plan
    view: Path
    tool_outputs: tuple[Path, ...]
    skipped: tuple[int, ...]  # master lines (0-based) that hold no message: not in the view


def tokens(text: str) -> int:
    return len(text) // 4


def opening(content: str) -> str:
    """The compressed text: whole first lines, up to a quarter of the text (at most 400)."""
    limit = min(OPENING_CHARS, max(40, len(content) // 4))
    kept: list[str] = []
    used = 0
    for line in content.split("\n"):
        if used + len(line) > limit:
            if not kept:
                kept.append(line[:limit].rstrip() + " …")
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join(kept).rstrip()


def plan(messages: list[Message], budget: int, *, keep_head: int = KEEP_HEAD) -> Plan:
    """Which messages to cut, largest first (tool results before the rest)."""
    if budget < 1:
        raise MasterLogError(f"the budget must be a positive number of tokens, not {budget}")
    sizes = [tokens(m.content) for m in messages]
    total = sum(sizes)
    cuttable = [
        i
        for i, m in enumerate(messages)
        if i >= keep_head and not m.extra.get("pinned") and sizes[i] >= MIN_TOKENS
    ]
    tool_results = sorted(
        (i for i in cuttable if messages[i].role == "system"), key=lambda i: -sizes[i]
    )
    others = sorted((i for i in cuttable if messages[i].role != "system"), key=lambda i: -sizes[i])
    cuts: list[Cut] = []
    now = total
    passes: tuple[tuple[Kind, list[int]], ...] = (
        ("tool-output", tool_results),
        ("compressed", others),
    )
    for kind, candidates in passes:
        for i in candidates:
            if now <= budget:
                break
            estimate = REFERENCE_TOKENS + (
                tokens(opening(messages[i].content)) if kind == "compressed" else 0
            )
            if estimate >= sizes[i]:
                continue
            cuts.append(Cut(i, kind, sizes[i]))
            now -= sizes[i] - estimate
    return Plan(tuple(sorted(cuts, key=lambda c: c.position)), total, now, budget)


def write(
    conversation: Conversation, budget: int, *, now: datetime, out: Path | None = None
) -> Written:
    """Plan and write the compacted view (``views/compacted-NNN.jsonl``, the next number, or
    ``out``) and the tool outputs it saves; ``views/.current`` is left alone."""
    master = conversation.master
    master.refresh()
    positions: list[int] = []  # master line of each message
    messages: list[Message] = []
    skipped: list[int] = []
    for line in range(master.lines):
        parsed = parse_line(master.read_line(line))
        if isinstance(parsed, LineProblem):
            skipped.append(line)
            continue
        positions.append(line)
        messages.append(parsed)
    chosen = plan(messages, budget)
    master_path = str(conversation.directory / MASTER)
    saved: list[Path] = []
    cut_at = {cut.position: cut for cut in chosen.cuts}
    lines: list[bytes] = []
    for position, message in enumerate(messages):
        data = message.to_json()
        cut = cut_at.get(position)
        if cut is not None:
            start, end = master.bounds(positions[position])
            reference = format_reference(
                master_path, start, end, cut.tokens, preview_of(message.content)
            )
            if cut.kind == "tool-output":
                path = _save_output(conversation.directory, message.content, now)
                saved.append(path)
                command = _command(message.content)
                data["content"] = format_tool_summary(cut.tokens, command, str(path)) + (
                    "\n\n" + reference
                )
            else:
                data["content"] = opening(message.content) + "\n\n" + reference
        lines.append(encode_message(data))
    target = out if out is not None else _next_view(conversation.directory)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(target.name + ".tmp")
    temporary.write_bytes(b"".join(lines))
    os.replace(temporary, target)
    return Written(chosen, target, tuple(saved), tuple(skipped))


def _command(content: str) -> str | None:
    """gptme's ``command_info``: a ``Ran command:`` (or similar) line among the first ten."""
    for line in content.split("\n")[:10]:
        if line.startswith(("Ran command:", "Executed:", "Command:")):
            return line.strip()
    return None


def _save_output(directory: Path, content: str, now: datetime) -> Path:
    digest = hashlib.sha256(content.encode()).hexdigest()[:8]
    path = directory / "tool-outputs" / TOOL / f"{now:%Y%m%d_%H%M%S}-{digest}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode())  # bytes: no newline translation
    return path


def _next_view(directory: Path) -> Path:
    numbers = [0]
    for path in (directory / "views").glob("compacted-*.jsonl"):
        number = path.stem.removeprefix("compacted-")
        if number.isdigit():
            numbers.append(int(number))
    return directory / "views" / f"compacted-{max(numbers) + 1:03d}.jsonl"
