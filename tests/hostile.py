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


async def build_hostile(
    path: Path, *, actor: str = PAYLOAD, payload: str = PAYLOAD, name: str = "evil"
) -> None:
    """A workspace with one context, ``name``, where every string a command can choose carries
    ``payload``: keys, tags, text, a component's type, JSON content and data, seal triggers,
    the actor; an item that expires (a diff lists it as removed), one replaced (its story),
    one deleted. Snapshots: e0 (sealed), e1 (the advance), e1 again (sealed)."""
    from engine.workspace import Workspace

    p = payload
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
        await ws.create_context(name, actor=actor)
        for command in commands:
            await ws.run(name, command, actor=actor)


def _insert(selector: str, content: str, *, op: str = "insert", **fields: Any) -> dict[str, Any]:
    component = {"type": "text", "content": content, **fields}
    return {"op": op, "selector": selector, "component": component}


# -- the custodian's screen: a document whose every text field is hostile -----------------------
# What a string read as markup would do: a closing tag with nothing to close (a MarkupError), a
# live action and a link (each naming "pwned", so a test finds them on screen), Rich and Textual
# styles, a template variable.
MARKUP = (
    "x[/] [@click=app.bell('pwned')]act[/] [link='https://pwned.example/']lnk[/link]"
    " [bold red]rich[/] [$accent]tx[/] $pwned"
)
# Sequences ended by ST (ESC \) as well as BEL: the window title (OSC 0 and 2), a hyperlink
# (OSC 8) and the clipboard (OSC 52).
ST_PAYLOAD = (
    "\x1b]2;pwned\x1b\\\x1b]0;pwned\x07\x1b]8;;https://pwned.example/\x1b\\lnk\x1b]8;;\x1b\\"
    "\x1b]52;c;cHduZWQ=\x1b\\\x1b]52;c;cHduZWQ=\x07"
)
HOSTILE = f"{MARKUP} {ST_PAYLOAD} {PAYLOAD}"
"""Every hostile thing at once: markup, escape sequences ended by BEL and by ST, bidi controls,
C0 and C1 controls (165 characters: it fits a name)."""
MARKS = ("pwned",)  # what an action, a link or a title made from the data would name
BIG_BYTES = 10 * 1024 * 1024


def big_text(heading: str = "") -> str:
    """10 MB of Markdown (after ``heading``): list items of 8 kB, each the hostile set over
    and over (long lines: a parser's cost goes by lines, and the builder's time with it)."""
    line = f"- {(HOSTILE + ' ') * 50}\n"
    return heading + line * (BIG_BYTES // len(line.encode()) + 1)


async def build_hostile_document(path: Path, *, big: bool = True) -> str:
    """A document in the workspace at ``path`` (made if need be) where every text a command can
    choose holds ``HOSTILE``: section titles and bodies, agent names and roles (one agent named
    with the markup, one with the escapes), a human named with them, a framework's levels'
    reasons, intents, constraints, proposals (summaries, contents, reasons), votes and
    objections, a conflict escalated with its reasons, a question with its context, comments,
    a lock, trust and clearance changes; and, with ``big``, a 10 MB proposal and a 10 MB merged
    section. Returns the document's name."""
    from engine.protocol.commands import Actor
    from engine.workspace import Workspace

    h = HOSTILE
    human = f"ann {MARKUP}"
    marked, escaped = f"m{MARKUP}", f"e{PAYLOAD}{ST_PAYLOAD}"
    plain_agent = "plain"
    markdown = (
        f"Preamble {h}\n\n# Risk {h}\n\nBody {h}\n\n## Mitigation {MARKUP}\n\nNone {h}\n\n"
        f"# Budget\n\n| a {h} | b |\n|---|---|\n| {h} | 2 |\n\n```{MARKUP}\ncode {h}\n```\n\n"
        f"> quote {h}\n\n[click me](https://pwned.example/) <!-- hidden {h} --> &#x202e;rev\n\n"
        f"[ref]: https://pwned.example/\n\n# Big\n\nSmall for now.\n"
    )
    name = "hostile"
    async with await Workspace.open(path, create=True, watch=False) as ws:
        await ws.create_framework("Levels", ["Public", "Secret"], human=human)
        await ws.create_document(name, markdown, human=human, policy="single")
        doc = ws.document(name)
        risk, mitigation, budget, big_section = (s.id for s in doc.sections[1:5])

        async def run(who: str, command: dict[str, Any], *, as_human: bool = False) -> Any:
            actor = Actor.human(who) if as_human else Actor.agent(who)
            return (await ws.run_document(name, command, actor)).answer()

        for agent in (marked, escaped, plain_agent):
            await run(agent, {"op": "join", "agentName": agent, "role": f"role {MARKUP}"[:100]})
        for agent, score in ((marked, 9), (escaped, 7), (plain_agent, 4)):
            await run(agent, {"op": "salience", "sectionId": risk, "score": score})
        await run(marked, {"op": "intent", "sectionId": risk, "goal": f"goal {h}", "category": h})
        await run(
            escaped,
            {
                "op": "constrain",
                "sectionId": risk,
                "boundary": f"boundary {h}",
                "category": h,
                "reasoning": f"reasoning {h}",
            },
        )
        first = await run(
            marked,
            {
                "op": "propose",
                "sectionId": mitigation,
                "newContent": f"## Mitigation {MARKUP}\n\nHedge {h}\n",
                "summary": f"summary {h}",
                "reasoning": f"reasoning {h}",
            },
        )
        await run(escaped, {"op": "object", "proposalId": first["proposalId"], "reason": h})
        await run(
            human,
            {"op": "policy", "policy": "objection-based", "strategy": "human-escalate", "why": h},
            as_human=True,
        )
        for agent in (marked, escaped):  # two proposals on one section: a conflict, escalated
            await run(
                agent,
                {
                    "op": "propose",
                    "sectionId": budget,
                    "newContent": f"# Budget\n\n{agent} says {h}\n",
                    "summary": f"{agent} {h}"[:500],
                },
            )
        await run(escaped, {"op": "escalate", "sectionId": risk, "reason": f"escalated {h}"})
        await run(
            marked,
            {
                "op": "ask-human",
                "question": f"question {h}",
                "sectionId": risk,
                "context": f"context {h}",
                "timeoutSeconds": 3600,
            },
        )
        await run(marked, {"op": "comment", "sectionId": risk, "text": f"comment {h}"})
        # A question answered with hostile text: the inbox's history, greyed, with the answer.
        asked = await run(marked, {"op": "ask-human", "question": f"settled {h}"})
        await run(
            human, {"op": "respond", "queryId": asked["queryId"], "response": h}, as_human=True
        )
        # An invite with a hostile organisation, made by the hostile human: the invites list.
        await run(human, {"op": "invite", "organisation": f"org {h}"[:200]}, as_human=True)
        # Comments addressed to a human (in the inbox), one on a proposal to a hostile name.
        await run(escaped, {"op": "comment", "sectionId": risk, "text": f"@human {h}"})
        to_proposal = {"sectionId": mitigation, "proposalId": first["proposalId"]}
        await run(marked, {"op": "comment", **to_proposal, "text": f"@human:{h} {h}"})
        await run(escaped, {"op": "lock", "sectionId": mitigation, "ttlSeconds": 60})
        trust = {"op": "trust", "agent": plain_agent, "level": "Suggester", "why": h}
        await run(human, trust, as_human=True)
        await run(
            human,
            {"op": "classify", "sectionId": budget, "level": "Secret", "framework": "Levels"},
            as_human=True,
        )
        if big:
            await run(
                plain_agent,
                {
                    "op": "propose",
                    "sectionId": big_section,
                    "newContent": big_text("# Big\n\n"),
                    "summary": "ten megabytes",
                },
            )
            edit = {"op": "edit", "sectionId": big_section, "content": big_text("# Big\n\n")}
            await run(human, {**edit, "why": h}, as_human=True)
        await ws.checkpoint()
    return name


# -- a gptme conversation whose every text field is hostile -------------------------------------
GPTME_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "gptme"
# Branch file names (no "/" can be in one, so no closing tag): a link, an action, escapes.
HOSTILE_BRANCHES = ("x[link=https:evil]q", "a[@click=app.bell('pwned')]c", f"e{PAYLOAD[:12]}")


def build_hostile_conversation(directory: Path, *, big: bool = True, odd_role: bool = True) -> Path:
    """A copy of the ``conv-basic`` fixture at ``directory`` to which hostile messages are
    appended (content, role, timestamp and an unknown key holding ``HOSTILE``; with ``big``,
    one of 10 MB), branches whose file names are markup and escapes, and a view that this
    project's compaction cuts (its references' previews quote the hostile text, a tool output
    saved whole); without ``odd_role``, every role is one gptme writes (``ctx import`` takes
    it). Returns the directory."""
    import shutil
    from datetime import datetime

    from engine.masterlog.compact import write
    from engine.masterlog.conversation import MASTER, Conversation
    from engine.masterlog.lines import encode_message

    shutil.copytree(GPTME_FIXTURES / "conv-basic", directory)
    h = HOSTILE
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": f"question {h}\n{h}", "timestamp": f"2026-03-14T10:00:0{h}"},
        {"role": MARKUP, "content": f"odd role {h}", "timestamp": "2026-03-14T10:00:01"},
        {
            "role": "assistant",
            "content": f"answer {h}\n```shell\necho {h}\n```",
            "timestamp": "2026-03-14T10:00:02",
            "metadata": {"model": h, h: h},
        },
        {"role": "system", "content": f"Ran command: `ls {h}`\n" + h * 60, "timestamp": h},
    ]
    if not odd_role:
        del messages[1]
    if big:
        messages.append({"role": "assistant", "content": big_text(), "timestamp": "2026-03-14"})
    with (directory / MASTER).open("ab") as master:
        for message in messages:
            master.write(encode_message(message))
    (directory / "branches").mkdir(exist_ok=True)
    for name in HOSTILE_BRANCHES:
        (directory / "branches" / f"{name}.jsonl").write_bytes(
            b"".join(encode_message(m) for m in messages[:3])
        )
    with Conversation.open(directory, directory.parent / "hostile-index.sqlite") as conversation:
        write(conversation, 2_000, now=datetime(2026, 3, 14, 10, 1))
    return directory
