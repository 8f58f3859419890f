"""An OpenAI-style or Anthropic-style messages list as the entries of a context: pure.

Accepted: a JSON list of messages, or an object with ``messages`` (a request: what ``ctx print
--mode messages`` writes) and, Anthropic's way, a top-level ``system`` (a string or text
blocks). A message is ``{"role", "content", ...}`` with the role ``system`` (or OpenAI's
``developer``), ``user``, ``assistant`` or ``tool``; its content a string, ``null`` (an
assistant message that only calls tools) or a list of blocks (``{"type": "text", "text"}``;
Anthropic's ``tool_result`` blocks; any other block is kept, not sent as text).

Each user or assistant message is one turn; a system message before the first of them joins the
system prompt, one after it sits with the turn before it; a tool result (a ``tool`` message, or
a ``tool_result`` block of an Anthropic user message) sits with the turn that called it, as a
``system`` item, the way gptme writes tool results. Every other key of a message (``name``,
``tool_calls``, ``tool_call_id``…) and every block that is not text is kept in the item's
``source``, so nothing given is lost. A message that is none of these is a typed error naming
its index (``messages[3]``) and what is wrong.
"""

from __future__ import annotations

from typing import Any

from .errors import BadMessages
from .plan import Entry

SYSTEM_ROLES = ("system", "developer")
ROLES = (*SYSTEM_ROLES, "user", "assistant", "tool")


def message_entries(given: Any) -> list[Entry]:
    """The entries of a parsed JSON messages list or request (see the module)."""
    entries: list[Entry] = []
    if isinstance(given, dict):
        messages = given.get("messages")
        if not isinstance(messages, list):
            raise BadMessages("an object must hold 'messages', a list of messages")
        if "system" in given:
            text, _ = _text(given["system"], "system")
            entries.append(Entry("system", text, {"from": "messages", "system": True}))
    elif isinstance(given, list):
        messages = given
    else:
        raise BadMessages(
            f"a messages list is a JSON list (or an object with 'messages'), not a JSON"
            f" {_kind(given)}"
        )
    for index, message in enumerate(messages):
        entries.extend(_entries(index, message))
    return entries


def _entries(index: int, message: Any) -> list[Entry]:
    where = f"messages[{index}]"
    if not isinstance(message, dict):
        raise BadMessages(f"{where}: a message is a JSON object, not a JSON {_kind(message)}")
    role = message.get("role")
    if role not in ROLES:
        raise BadMessages(
            f"{where}: role {role!r} is not one of {', '.join(ROLES)}", index=index, field="role"
        )
    if "content" not in message and not (role == "assistant" and "tool_calls" in message):
        raise BadMessages(f"{where}: no 'content'", index=index, field="content")
    content = message.get("content")
    if content is None and role != "assistant":
        raise BadMessages(f"{where}: a {role} message's content is null", index=index)
    source: dict[str, Any] = {"from": "messages", "index": index}
    kept = {k: v for k, v in message.items() if k not in ("role", "content")}
    if role == "developer":
        kept["role"] = role
    if kept:
        source["message"] = kept
    if role in SYSTEM_ROLES or role == "tool":
        text, other = _text(content, where)
        if other:
            source["blocks"] = other
        return [Entry("system", text, source)]
    results: list[Entry] = []
    if isinstance(content, list) and role == "user":  # Anthropic's tool results
        rest: list[tuple[int, Any]] = []
        for number, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                at = f"{where}.content[{number}]"
                text, other = _text(block.get("content", ""), at)
                result = {"from": "messages", "index": index, "block": number}
                result["message"] = {k: v for k, v in block.items() if k != "content"}
                if other:
                    result["blocks"] = other
                results.append(Entry("system", text, result))
            else:
                rest.append((number, block))
        if results and not rest:
            return results
        text, other = _blocks(rest, where)
    else:
        text, other = _text(content, where)
    if other:
        source["blocks"] = other
    return [*results, Entry(role, text, source)]


def _text(content: Any, where: str) -> tuple[str, list[dict[str, Any]]]:
    """A content's text (its text blocks joined by a blank line) and its other blocks."""
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    if not isinstance(content, list):
        raise BadMessages(
            f"{where}: content is a string or a list of blocks, not a JSON {_kind(content)}",
            field="content",
        )
    return _blocks(list(enumerate(content)), where)


def _blocks(numbered: list[tuple[int, Any]], where: str) -> tuple[str, list[dict[str, Any]]]:
    texts, other = [], []
    for number, block in numbered:
        at = f"{where}.content[{number}]"
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise BadMessages(f"{at}: a block is an object with a 'type'", field="content")
        if block["type"] == "text":
            if not isinstance(block.get("text"), str):
                raise BadMessages(f"{at}: a text block's 'text' must be a string", field="text")
            texts.append(block["text"])
        else:
            other.append(block)
    return "\n\n".join(texts), other


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "object", list: "list", str: "string", bool: "boolean"}.get(type(value), "number")
