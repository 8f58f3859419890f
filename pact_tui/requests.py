"""A context's provider rendering as the messages of a chat request (``ctx print --mode
messages --format openai|anthropic``).

The provider rendering is one ``{"role", "content"}`` entry per item, in canonical order. A
request wants messages, not items: adjacent items of one role are joined into one message
(their texts separated by a blank line), and the system prompt goes where each API wants it:

- ``openai``: ``{"messages": [...]}``, system items as ``system`` messages where they are;
- ``anthropic``: ``{"system": "...", "messages": [...]}``: the leading system items joined
  as the top-level ``system``; a later system item (gptme's tool results are ``system``) is
  sent as ``user``, the only other role the Messages API takes besides ``assistant``.

Pure: the caller gives the rendering.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

Format = Literal["openai", "anthropic"]
FORMATS: tuple[Format, ...] = ("openai", "anthropic")
JOIN = "\n\n"


def joined(entries: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    """Adjacent entries of one role as one message."""
    messages: list[dict[str, str]] = []
    for role, text in entries:
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"] += JOIN + text
        else:
            messages.append({"role": role, "content": text})
    return messages


def request_messages(provider: Sequence[dict[str, str]], form: Format) -> dict[str, Any]:
    """The provider rendering as a request's messages in ``form``."""
    entries = [(entry["role"], entry["content"]) for entry in provider]
    if form == "openai":
        return {"messages": joined(entries)}
    head = 0
    while head < len(entries) and entries[head][0] == "system":
        head += 1
    rest = [("assistant" if role == "assistant" else "user", text) for role, text in entries[head:]]
    request: dict[str, Any] = {}
    if head:
        request["system"] = JOIN.join(text for _, text in entries[:head])
    request["messages"] = joined(rest)
    return request
