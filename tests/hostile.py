"""Text that tries to act on the operator's terminal, and the test's own account of what must
never reach it raw (written apart from ``engine.visible``, so the two can disagree)."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

# Clear the screen, set the window title, write the clipboard (OSC 52), an 8-bit CSI, bidi
# overrides and isolates, DEL, a carriage return and a backspace, a tag character.
PAYLOAD = (
    "\x1b[2J\x1b]0;pwned\x07\x1b]52;c;aGk=\x07\x9b31m\u202eevil\u2066x\u2069\x7f\r\x08\U000e0041"
)
TITLE = "pwned"  # what the payload would name the window

_BIDI_CLASSES = {"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}


def acts_or_misleads(character: str) -> bool:
    """A control character (C0, DEL, C1), a surrogate, a line or paragraph separator, a
    bidirectional control, or a tag character."""
    code = ord(character)
    return (
        unicodedata.category(character) in ("Cc", "Cs", "Zl", "Zp")
        or unicodedata.bidirectional(character) in _BIDI_CLASSES
        or character in "\u200e\u200f\u061c"  # the bidi marks
        or 0xE0000 <= code <= 0xE007F
    )


def raw_controls(text: str, allowed: str = "\n") -> list[str]:
    """The characters of ``text`` that must not reach a terminal raw, each with its context."""
    return [
        f"{ch!r} at {i}: {text[max(0, i - 30) : i + 30]!r}"
        for i, ch in enumerate(text)
        if ch not in allowed and acts_or_misleads(ch)
    ]


async def build_hostile(path: Path, *, actor: str = PAYLOAD) -> None:
    """A workspace with one context, ``evil``, where every string a command can choose carries
    the payload: keys, tags, text, a component's type, JSON content and data, seal triggers,
    the actor; an item that expires (a diff lists it as removed), one replaced (its story),
    one deleted. Snapshots: e0 (sealed), e1 (the advance), e1 again (sealed)."""
    from engine.workspace import Workspace

    p = PAYLOAD
    commands: list[dict[str, Any]] = [
        _insert("d-1, 0, 0", f"sys {p}\nline two\tcol", key="k" + p, tags=["t" + p, "plain"]),
        {"op": "message", "role": "user", "text": f"hello {p}"},
        {
            "op": "insert",
            "selector": "d0, 1, 0",
            "component": {
                "type": "img" + p,
                "content": {"k" + p: ["v" + p, "\x00"]},
                "key": "\x00key" + p,
                "note": "data" + p,
            },
        },
        _insert("d0, 2, 0", f"short-lived {p}", ttl=1),
        _insert("d0, 3, 0", f"doomed {p}", key="doomed"),
        {"op": "seal", "trigger": f"seal {p}"},
        {"op": "advance"},
        _insert("d-1, 0, 0", f"replaced {p}", op="update", key="k" + p),
        {"op": "message", "role": "assistant", "text": f"bye {p}"},
        {"op": "delete", "key": "doomed"},
        {"op": "seal", "trigger": f"second {p}"},
    ]
    async with await Workspace.open(path, create=True, watch=False) as ws:
        await ws.create_context("evil", actor=actor)
        for command in commands:
            await ws.run("evil", command, actor=actor)


def _insert(selector: str, content: str, *, op: str = "insert", **fields: Any) -> dict[str, Any]:
    component = {"type": "text", "content": content, **fields}
    return {"op": op, "selector": selector, "component": component}
