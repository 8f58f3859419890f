"""The demo workspace: two agents whose contexts use every lifecycle type, keys and tags.

``create_demo(path)`` writes it through ordinary workspace commands; ``drive(path)`` keeps the
agents talking (``pact-tui demo --live`` runs it in a separate process, so the app follows
another process live); ``create_scaled_demo(path, items)`` repeats the researcher's
conversation until the context holds ``items`` items, for the benchmarks.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.workspace import Workspace

if TYPE_CHECKING:
    from engine.protocol.document import Document

Command = dict[str, Any]


def text(content: str, **fields: Any) -> dict[str, Any]:
    return {"type": "text", "content": content, **fields}


def insert(selector: str, component: dict[str, Any]) -> Command:
    return {"op": "insert", "selector": selector, "component": component}


def user(message: str) -> Command:
    return {"op": "message", "role": "user", "text": message}


def assistant(message: str) -> Command:
    return {"op": "message", "role": "assistant", "text": message}


ADVANCE: Command = {"op": "advance"}

RESEARCHER: list[Command] = [
    insert("d-1, 0, 0", text("You are a careful research assistant.", key="system_prompt")),
    insert("d-1, 1, 0", text("Always be concise", key="concise_instruction", tags=["style"])),
    user("Find me recent papers on context compaction for LLM agents."),
    insert(
        "d0, 1, 0",
        text("User prefers formal tone", key="user_prefs", tags=["user", "preferences"]),
    ),
    insert("d0, 2, 0", text("Ask about the time range in 3 turns", key="reminder", ttl=3)),
    insert("d0, 3, 0", text("Current mode: research", key="current_mode", ttl=1, cad=1)),
    insert("d0, -1, 0", text("Check if the user needs help", key="checkin", ttl=2, cad=5)),
    assistant("Here are three surveys on context compaction, with summaries."),
    ADVANCE,
    insert(
        "d0, 0, 1",
        text(
            "Important: sources older than 2023 may be outdated",
            key="alert",
            tags=["alert"],
            render_lifecycle={
                "stages": [
                    {"selector": "d0, 0, 1", "ttl": 2},
                    {"selector": "d0, 0, -1", "ttl": 3},
                    {"selector": "d0, 0, -2", "ttl": None},
                ],
                "cycle": False,
            },
        ),
    ),
    user("Summarise the second one."),
    ADVANCE,
    assistant("The second survey compares summarisation and retrieval-based compaction."),
    insert(
        "d0, 1, 0", text("Survey #2: Master log + byte-range refs", key="finding", tags=["notes"])
    ),
    {"op": "seal", "trigger": "after-summary"},
    ADVANCE,
    user("Which approach keeps the early goals?"),
    insert("d0, 2, 0", text("Cite the master-context post", key="todo_cite", ttl=2, tags=["todo"])),
    ADVANCE,
    assistant("The append-only master log: compaction can always be undone by reading it."),
    ADVANCE,
    ADVANCE,
]

WRITER: list[Command] = [
    insert("d-1, 0, 0", text("You write clear technical prose.", key="system_prompt")),
    user("Draft an outline for the compaction report."),
    insert("d0, 1, 0", text("Audience: agent developers", key="audience", tags=["brief"])),
    insert("d0, 2, 0", text("Draft due in 4 episodes", key="deadline", ttl=4)),
    assistant("1. Context rot  2. Master log  3. Byte-range references  4. Recovery"),
    ADVANCE,
    insert("d0, 1, 0", text("Status: outlining", key="status", ttl=1, cad=1)),
    user("Expand section 2."),
    ADVANCE,
]

CONTEXTS: dict[str, list[Command]] = {"researcher": RESEARCHER, "writer": WRITER}


MEMO = """\
Prepared for the board.

# Summary

The project is on budget and on time.

# Risk

Currency exposure is unhedged.

## Mitigation

None yet.

# Budget

Total: $1.8M.

## Line Items

- Personnel: $1.2M
- Cloud: $0.6M

# Financials

Quarterly figures, board only.
"""

# The demo document: four agents and a custodian, each step as (actor, command); "ann" is the
# human; two Collaborators, a Suggester and an Observer. It leaves a merged proposal, one waiting
# out its objection window, a conflict escalated to the custodian, an open question, a lock, and
# a Confidential section.
MEMO_SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("legal", {"op": "join", "agentName": "legal", "role": "compliance"}),
    ("finance", {"op": "join", "agentName": "finance", "role": "reviewer"}),
    ("editor", {"op": "join", "agentName": "editor", "role": "editor"}),
    ("intern", {"op": "join", "agentName": "intern", "role": "observer"}),
    ("ann", {"op": "trust", "agent": "intern", "level": "Observer", "why": "new on the team"}),
    ("legal", {"op": "salience", "sectionId": "sec:risk", "score": 9}),
    ("finance", {"op": "salience", "sectionId": "sec:risk", "score": 6}),
    ("editor", {"op": "salience", "sectionId": "sec:risk", "score": 2}),
    ("finance", {"op": "salience", "sectionId": "sec:budget", "score": 10}),
    ("intern", {"op": "salience", "sectionId": "sec:summary", "score": 3}),
    (
        "legal",
        {
            "op": "intent",
            "sectionId": "sec:risk",
            "goal": "Add currency risk language",
            "category": "compliance",
        },
    ),
    (
        "legal",
        {
            "op": "constrain",
            "sectionId": "sec:risk",
            "boundary": "Must reference hedging policy",
            "category": "legal",
            "reasoning": "Regulator letter of March",
        },
    ),
    (
        "finance",
        {
            "op": "constrain",
            "sectionId": "sec:risk",
            "boundary": "Must not name specific instruments",
        },
    ),
    (
        "editor",
        {
            "op": "propose",
            "sectionId": "sec:summary",
            "newContent": "# Summary\n\nThe project is on budget, on time, and hedged.\n",
            "summary": "Say we hedge",
        },
    ),
    ("legal", {"op": "approve", "proposalId": "@last"}),
    (
        "ann",
        {
            "op": "policy",
            "policy": "objection-based",
            "strategy": "human-escalate",
            "why": "let silence count from here",
        },
    ),
    (
        "legal",
        {
            "op": "propose",
            "sectionId": "sec:risk",
            "newContent": "# Risk\n\nCurrency exposure is hedged under policy H-2.\n",
            "summary": "Added currency risk allocation",
        },
    ),
    (
        "finance",
        {
            "op": "propose",
            "sectionId": "sec:risk",
            "newContent": "# Risk\n\nCurrency exposure is capped at 10%.\n",
            "summary": "Cap exposure",
        },
    ),
    (
        "editor",
        {
            "op": "propose",
            "sectionId": "sec:budget/line-items",
            "newContent": "## Line Items\n\n- Personnel: $1.1M\n- Cloud: $0.7M\n",
            "summary": "Move $0.1M to cloud",
        },
    ),
    ("finance", {"op": "lock", "sectionId": "sec:budget", "ttlSeconds": 60}),
    (
        "legal",
        {
            "op": "ask-human",
            "question": "Include force majeure in the risk clause?",
            "sectionId": "sec:risk",
            "timeoutSeconds": 3600,
        },
    ),
    ("ann", {"op": "classify", "sectionId": "sec:financials", "level": "Confidential"}),
    ("ann", {"op": "trust", "agent": "editor", "level": "Suggester", "why": "drafts, not votes"}),
]


async def create_demo(path: Path, clock: Callable[[], int] | None = None) -> None:
    """A fresh workspace at ``path`` holding the demo contexts and the demo document."""
    kwargs: dict[str, Any] = {"create": True, "watch": False}
    if clock is not None:
        from engine.protocol.envelope import CountingIds

        kwargs["clock"] = clock
        kwargs["ids"] = CountingIds()  # a fixed clock makes a fixed workspace: ids too
    async with await Workspace.open(path, **kwargs) as workspace:
        for name, commands in CONTEXTS.items():
            await workspace.create_context(name, actor="demo")
            for command in commands:
                await workspace.run(name, command, actor=name)
        await create_memo(workspace)


async def create_memo(workspace: Workspace) -> None:
    """The demo document ``memo`` (see ``MEMO_SCRIPT``)."""
    from engine.protocol.commands import Actor
    from engine.protocol.results import ProposalStatus

    await workspace.create_framework(
        "Sensitivity", ["Public", "Internal", "Confidential", "Restricted"], human="ann"
    )
    await workspace.create_document("memo", MEMO, human="ann", policy="single")
    last = ""
    for who, command in MEMO_SCRIPT:
        if command.get("proposalId") == "@last":
            command = {**command, "proposalId": last}
        actor = Actor.human(who) if who == "ann" else Actor.agent(who)
        decision = await workspace.run_document("memo", command, actor)
        if isinstance(decision.result, ProposalStatus):
            last = decision.result.proposal_id


def live_script() -> Iterator[tuple[str, Command]]:
    """What the live demo's agents keep doing, forever: one command a step."""
    for round_ in itertools.count(1):
        yield "researcher", user(f"Next question, round {round_}: what else should I read?")
        yield (
            "researcher",
            insert(
                "d0, 2, 0", text(f"Follow up on round {round_}", key=f"followup_{round_}", ttl=2)
            ),
        )
        yield (
            "researcher",
            insert("d0, 1, 0", text(f"Note from round {round_}", tags=["notes", f"r{round_}"])),
        )
        yield "researcher", assistant(f"Round {round_}: two more papers, summarised.")
        yield "researcher", ADVANCE
        if round_ % 3 == 0:
            yield "researcher", {"op": "seal", "trigger": f"round-{round_}"}
        if round_ % 2 == 0:
            yield "writer", user(f"Revise section {round_ % 4 + 1}.")
            yield "writer", ADVANCE


MEMO_AGENTS = ("legal", "finance", "editor", "intern")  # intern is an Observer: it watches
# The sections the live agents write, and what each agent says there.
LIVE_SECTIONS = ("sec:summary", "sec:risk/mitigation", "sec:budget/line-items", "sec:risk")


def memo_step(doc: Document, round_: int, beat: int) -> tuple[str, dict[str, Any]] | None:
    """What the memo's agents do at ``beat`` (0-7) of ``round_``, given the document as it is
    now (the custodian acts meanwhile): heartbeats, salience, a proposal on a quiet section, a
    vote on the oldest open proposal of another, now and then a conflict, a lock, a question.
    None: nothing this beat."""
    gone = [name for name in MEMO_AGENTS if name not in doc.active]
    if gone:  # evicted while nobody drove them (or removed by the custodian): back they come
        return gone[0], {"op": "join", "agentName": gone[0], "role": "returning"}
    active = list(MEMO_AGENTS)
    writers = [name for name in ("editor", "legal", "finance") if name in doc.active]
    if not writers:
        return None
    author = writers[round_ % len(writers)]
    if beat == 0:  # everyone still here says so: nobody is evicted while the demo runs
        return (active[round_ % len(active)], {"op": "heartbeat"}) if active else None
    if beat == 1:
        section = LIVE_SECTIONS[round_ % len(LIVE_SECTIONS)]
        return author, {"op": "salience", "sectionId": section, "score": (round_ * 3) % 11}
    if beat == 2:  # a proposal: on a quiet section, or, every fifth round, on a busy one
        busy = round_ % 5 == 4
        for section_id in LIVE_SECTIONS:
            found = doc.by_id.get(section_id)
            if found is None or found.escalated is not None:
                continue
            if bool(doc.open_by_section.get(found.key)) == busy:
                heading = found.content.split("\n", 1)[0]
                body = f"{heading}\n\nRevised in round {round_} by {author}.\n"
                if section_id == "sec:risk":
                    body += "\n## Mitigation\n\nKept.\n"  # a proposal keeps the subsections
                return author, {
                    "op": "propose",
                    "sectionId": section_id,
                    "newContent": body,
                    "summary": f"Round {round_}: {author}'s revision",
                }
        return None
    if beat in (3, 4):  # a vote on the oldest open proposal someone else wrote
        voter = writers[(round_ + beat) % len(writers)]
        me = doc.active.get(voter)
        for status in ("Pending", "Approved"):
            for pid in doc.by_status.get(status, {}):
                proposal = doc.proposals[pid]
                if proposal.author != me and me not in proposal.approvals:
                    if beat == 4 and round_ % 3 == 0:
                        why = f"{voter} wants more detail"
                        return voter, {"op": "object", "proposalId": pid, "reason": why}
                    return voter, {"op": "approve", "proposalId": pid}
        return None
    if beat == 5 and round_ % 4 == 1:
        return "finance", {"op": "lock", "sectionId": "sec:budget", "ttlSeconds": 30}
    if beat == 6 and round_ % 12 == 2:
        return "legal", {
            "op": "ask-human",
            "question": f"Round {round_}: should the risk section name the hedging bank?",
            "sectionId": "sec:risk",
            "timeoutSeconds": 600,
        }
    if beat == 7 and round_ % 4 == 3:
        return "intern", {"op": "heartbeat"}
    return None


async def drive(path: Path, interval: float, steps: int | None = None) -> None:
    """Keep the demo agents working on ``path`` until stopped (or for ``steps`` commands): the
    context agents and, in turn with them, the memo's agents, through the same commands agents
    use. A command the document refuses (the custodian acted first: a proposal already merged,
    a section locked) is skipped; the agents go on."""
    from engine.protocol.commands import Actor
    from engine.protocol.errors import ProtocolError

    parent = os.getppid()
    document_steps = ((r, beat) for r in itertools.count(1) for beat in range(8))
    async with await Workspace.open(path, watch=False) as workspace:
        names = await workspace.document_names()
        memo = "memo" if "memo" in names else None
        if memo is not None:
            await workspace.load_document(memo)
        for count, (name, command) in enumerate(live_script()):
            if steps is not None and count >= steps:
                return
            if os.getppid() != parent:
                return  # the app that started us is gone
            await workspace.run(name, command, actor=f"{name}-live")
            if memo is not None:
                for round_, beat in itertools.islice(document_steps, 8):  # a round at most
                    step = memo_step(workspace.document(memo), round_, beat)
                    if step is not None:
                        who, doc_command = step
                        with contextlib.suppress(ProtocolError):
                            await workspace.run_document(memo, doc_command, Actor.agent(who))
                        break
            await asyncio.sleep(interval)


ITEMS_PER_ROUND = 6  # what a round of scaled_commands leaves behind for good


def scaled_commands(rounds: int) -> Iterator[Command]:
    """The researcher's conversation repeated: six items a round stay, a reminder expires."""
    yield from RESEARCHER[:2]
    for round_ in range(rounds):
        yield user(f"Question {round_}: what does the literature say about topic {round_}?")
        yield insert("d0, 1, 0", text(f"Finding {round_}", key=f"finding_{round_}", tags=["notes"]))
        yield insert("d0, 1, 1", text(f"Source for finding {round_}", tags=["source"]))
        yield insert("d0, 2, 0", text(f"Reminder {round_}", ttl=3))
        yield assistant(f"Answer {round_}: a summary of three papers on topic {round_}.")
        yield insert("d0, 1, 0", text(f"Quote {round_}", tags=["quote"]))
        yield insert("d0, -1, 0", text(f"Plan step {round_}", key=f"plan_{round_}"))
        if round_ % 4 == 0:
            yield ADVANCE


async def create_scaled_demo(
    path: Path, items: int, clock: Callable[[], int] | None = None
) -> None:
    """A workspace whose ``researcher`` context holds about ``items`` items, written in batches
    of commands (one transaction each) and checkpointed, as a long-lived workspace would be."""
    kwargs: dict[str, Any] = {"create": True, "watch": False}
    if clock is not None:
        kwargs["clock"] = clock
    async with await Workspace.open(path, **kwargs) as workspace:
        await workspace.create_context("researcher", actor="demo")
        commands = list(scaled_commands(rounds=max(1, items // ITEMS_PER_ROUND)))
        for start in range(0, len(commands), 2_000):
            await workspace.run_many("researcher", commands[start : start + 2_000], actor="demo")
        await workspace.checkpoint()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pact_tui.demo")
    sub = parser.add_subparsers(dest="command", required=True)
    driving = sub.add_parser("drive", help="keep the demo agents working on a workspace")
    driving.add_argument("workspace", type=Path)
    driving.add_argument("--interval", type=float, default=1.0)
    driving.add_argument("--steps", type=int)
    create = sub.add_parser("create", help="write the demo workspace")
    create.add_argument("workspace", type=Path)
    create.add_argument("--items", type=int, help="scale the researcher to this many items")
    args = parser.parse_args(argv)
    if args.command == "drive":
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(drive(args.workspace, args.interval, args.steps))
        return 0
    if args.items:
        asyncio.run(create_scaled_demo(args.workspace, args.items))
    else:
        asyncio.run(create_demo(args.workspace))
    print(json.dumps({"created": str(args.workspace)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
