"""The references a compacted message leaves into the master log, read and written exactly as
gptme 0.35.1 writes them (``gptme.util.master_context.create_master_context_reference``).

The four-line form, joined by ``\\n`` (the Preview line is absent when the original's first
line is empty)::

    [Content truncated - {tokens} tokens]
    Master context: {path of conversation.jsonl} (bytes {start}-{end})
    Preview: {first line, cut at 200 characters, "..." if cut}
    To recover: grep or read the master context file at the byte range above.

A tool result's reference follows gptme's summary of it (``tool-output``); a compressed
assistant message's follows its compressed text (``compressed``). A stale stub names a saved
tool output but no byte range: it is recorded as a :class:`Stub`, not a reference.

The parser reads line by line; every line of the form is checked whole, so text that merely
resembles a reference (a different fourth line, a range that is not ``A-B``) is not one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .errors import BadReference

TRUNCATED = re.compile(r"\[Content truncated - (\d+) tokens\]")
MASTER = re.compile(r"Master context: (.+) \(bytes (\d+)-(\d+)\)")
PREVIEW = "Preview: "
RECOVER = "To recover: grep or read the master context file at the byte range above."
TOOL_SUMMARY = re.compile(
    r"\[Large tool output removed - (\d+) tokens\](?: \((.*)\))?\. Full output saved to: (.+)"
)
STUB = re.compile(r"\[Stale tool output pruned - (\d+) tokens\]\. Full output saved to: (.+)")
READ_OR_GREP = "You can read or grep this file if needed."

Kind = Literal["tool-output", "compressed"]


@dataclass(frozen=True, slots=True)
class Reference:
    """One reference found in a message's content."""

    tokens: int
    master_path: str  # as written (gptme writes an absolute path)
    start: int
    end: int  # half-open: [start, end) covers the whole JSON line and its "\n"
    preview: str | None
    kind: Kind
    tool_output: str | None = None  # the saved output's path, as written (tool-output only)
    summary: str = ""  # what stands before the reference: gptme's summary, or compressed text
    offset: int = 0  # where the reference's first line starts in the content (characters)

    @property
    def text(self) -> str:
        return format_reference(self.master_path, self.start, self.end, self.tokens, self.preview)


@dataclass(frozen=True, slots=True)
class Stub:
    """A stale tool output pruned with no byte range: gptme's Phase 0 stub."""

    tokens: int
    tool_output: str


def format_reference(path: str, start: int, end: int, tokens: int, preview: str | None) -> str:
    """The reference text, byte for byte as gptme writes it."""
    parts = [
        f"[Content truncated - {tokens} tokens]",
        f"Master context: {path} (bytes {start}-{end})",
    ]
    if preview:
        parts.append(f"{PREVIEW}{preview}")
    parts.append(RECOVER)
    return "\n".join(parts)


def format_tool_summary(tokens: int, command: str | None, saved_path: str) -> str:
    """gptme's summary of a removed tool output (``create_tool_result_summary``)."""
    base = f"[Large tool output removed - {tokens} tokens]"
    if command:
        base += f" ({command})"
    return f"{base}. Full output saved to: {saved_path}\n{READ_OR_GREP}"


def find_references(content: str) -> tuple[list[Reference], list[Stub]]:
    """Every reference and stale stub in a message's content, in order."""
    lines = content.split("\n")
    offsets = [0]
    for line in lines[:-1]:
        offsets.append(offsets[-1] + len(line) + 1)
    references: list[Reference] = []
    stubs: list[Stub] = []
    for i, line in enumerate(lines):
        stub = STUB.fullmatch(line)
        if stub and i + 1 < len(lines) and lines[i + 1] == READ_OR_GREP:
            stubs.append(Stub(int(stub[1]), stub[2]))
            continue
        head = TRUNCATED.fullmatch(line)
        if head is None or i + 2 >= len(lines):
            continue
        master = MASTER.fullmatch(lines[i + 1])
        if master is None:
            continue
        preview: str | None = None
        last = i + 2
        if lines[last].startswith(PREVIEW):
            preview = lines[last][len(PREVIEW) :]
            last += 1
        if last >= len(lines) or lines[last] != RECOVER:
            continue
        start, end = int(master[2]), int(master[3])
        before = content[: offsets[i]]
        kind: Kind = "compressed"
        tool_output: str | None = None
        if i >= 3 and lines[i - 1] == "" and lines[i - 2] == READ_OR_GREP:
            summary = TOOL_SUMMARY.fullmatch(lines[i - 3])
            if summary is not None:
                kind, tool_output = "tool-output", summary[3]
        summary_text = before[:-2] if before.endswith("\n\n") else before
        references.append(
            Reference(
                tokens=int(head[1]),
                master_path=master[1],
                start=start,
                end=end,
                preview=preview,
                kind=kind,
                tool_output=tool_output,
                summary=summary_text,
                offset=offsets[i],
            )
        )
    return references, stubs


def parse_reference(text: str) -> Reference:
    """The one reference in ``text`` (as pasted by a user); :class:`BadReference` otherwise."""
    found, _ = find_references(text.strip("\n").replace("\r\n", "\n"))
    if not found:
        raise BadReference(
            "no reference in the text: expected the four lines '[Content truncated - N tokens]',"
            " 'Master context: PATH (bytes A-B)', an optional 'Preview: …', and"
            f" {RECOVER!r}"
        )
    if len(found) > 1:
        raise BadReference(f"the text holds {len(found)} references; give one")
    return found[0]


def parse_range(text: str) -> tuple[int, int]:
    """``"A-B"`` → ``(A, B)`` with ``0 <= A < B``; :class:`BadReference` naming the problem."""
    match = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", text)
    if match is None:
        raise BadReference(f"byte range {text!r} is not START-END (two whole numbers)")
    start, end = int(match[1]), int(match[2])
    if start >= end:
        raise BadReference(f"byte range {text!r} is empty: START must be less than END")
    return start, end
