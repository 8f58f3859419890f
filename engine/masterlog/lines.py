"""One line of a gptme log, exactly as gptme writes it: ``json.dumps(message) + "\\n"``.

Pure functions over bytes. A line is a message (its keys kept in order, unknown ones included),
or a problem that gptme's own reader would skip: a blank line or a malformed one. Nothing is
dropped without a record of what it was.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

ROLES = ("system", "user", "assistant")
PREVIEW_CHARS = 200  # gptme cuts a reference's Preview at 200 characters


@dataclass(frozen=True, slots=True)
class Message:
    """A message of a log line: the three keys gptme always writes, and every other key kept."""

    role: str
    content: str
    timestamp: str | None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def first_line(self) -> str:
        return self.content.split("\n", 1)[0]

    @property
    def tokens(self) -> int:
        """gptme's offline count, the one its references carry: ``len(content) // 4``."""
        return len(self.content) // 4

    @property
    def preview(self) -> str | None:
        """The ``Preview:`` a gptme reference to this message carries (None: no Preview line)."""
        return preview_of(self.content)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.timestamp is not None:
            data["timestamp"] = self.timestamp
        data.update(self.extra)
        return data


@dataclass(frozen=True, slots=True)
class LineProblem:
    """A line gptme's reader would skip: what it is and why."""

    kind: Literal["blank", "malformed"]
    reason: str


def preview_of(content: str) -> str | None:
    """gptme's rule: the first line, cut at 200 characters with ``...``; None for no content."""
    if not content:
        return None
    first = content.split("\n", 1)[0]
    if not first:
        return None  # gptme writes no Preview line for an empty first line
    return first[:PREVIEW_CHARS] + ("..." if len(first) > PREVIEW_CHARS else "")


def parse_line(raw: bytes) -> Message | LineProblem:
    """The message a line holds (with or without its ``\\n``), or why it holds none."""
    body = raw[:-1] if raw.endswith(b"\n") else raw
    if not body.strip():
        return LineProblem("blank", "an empty line" if not body else "only white space")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        return LineProblem("malformed", f"not UTF-8 at byte {error.start} of the line")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        return LineProblem("malformed", f"not JSON: {error.msg} at column {error.colno}")
    except RecursionError:
        return LineProblem("malformed", "JSON nested too deeply to read")
    if not isinstance(data, dict):
        return LineProblem("malformed", f"a JSON {type(data).__name__}, not an object")
    role, content = data.get("role"), data.get("content")
    if not isinstance(role, str):
        return LineProblem("malformed", "no 'role' string")
    if not isinstance(content, str):
        return LineProblem("malformed", "no 'content' string")
    timestamp = data.get("timestamp")
    known = ("role", "content", "timestamp") if isinstance(timestamp, str) else ("role", "content")
    extra = {k: v for k, v in data.items() if k not in known}  # unknown keys are kept
    return Message(role, content, timestamp if isinstance(timestamp, str) else None, extra)


def encode_message(data: dict[str, Any]) -> bytes:
    """A line as gptme writes it: ``json.dumps`` defaults (ASCII, ``", "`` and ``": "``)."""
    return (json.dumps(data) + "\n").encode("ascii")
