"""``ctx print --mode messages --format openai|anthropic``: the provider rendering as a
request's messages (adjacent items of one role joined, the system prompt where each API wants
it), worked out here from the provider rendering itself."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import failed, ok


def test_the_provider_rendering_as_openai_and_anthropic_messages(tmp_path: Path) -> None:
    ws = tmp_path / "ws.db"
    ok("ctx", "create", ws, "agent")
    ok("ctx", "insert", ws, "agent", "d-1, 0, 0", "You are careful.")
    ok("ctx", "insert", ws, "agent", "d-1, 0, 1", "Answer briefly.")
    ok("ctx", "user", ws, "agent", "Hello")
    ok("ctx", "insert", ws, "agent", "d0, 1, 0", "User prefers a formal tone")
    ok("ctx", "assistant", ws, "agent", "Good day.")
    provider = ok("ctx", "print", ws, "agent", "--mode", "provider", "--json").data
    roles = [entry["role"] for entry in provider]
    assert roles == ["system", "system", "user", "user", "assistant"]  # what is joined below
    texts = [entry["content"] for entry in provider]
    openai = json.loads(ok("ctx", "print", ws, "agent", "--mode", "messages").out)
    assert openai == {
        "messages": [
            {"role": "system", "content": "\n\n".join(texts[:2])},
            {"role": "user", "content": "\n\n".join(texts[2:4])},
            {"role": "assistant", "content": texts[4]},
        ]
    }
    anthropic = json.loads(
        ok("ctx", "print", ws, "agent", "--mode", "messages", "--format", "anthropic").out
    )
    assert anthropic == {"system": "\n\n".join(texts[:2]), "messages": openai["messages"][1:]}
    failed("ctx", "print", ws, "agent", "--format", "openai", code="USAGE")


def test_a_later_system_item_is_a_user_message_for_anthropic() -> None:
    from pact_tui.requests import request_messages

    provider = [
        {"role": "system", "content": "prompt"},
        {"role": "user", "content": "run ls"},
        {"role": "assistant", "content": "ok"},
        {"role": "system", "content": "tool output"},  # gptme's tool results are system
        {"role": "user", "content": "thanks"},
    ]
    assert request_messages(provider, "anthropic") == {
        "system": "prompt",
        "messages": [
            {"role": "user", "content": "run ls"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "tool output\n\nthanks"},
        ],
    }
    assert request_messages(provider, "openai")["messages"][3] == {
        "role": "system",
        "content": "tool output",
    }
