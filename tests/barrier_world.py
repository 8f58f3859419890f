"""The barrier canary world, shared by the leak tests of the engine's views, of ``pact-tui tap``'s
read verbs and of the app's view-as: one document whose Confidential section, owned by one
organisation, holds a canary in everything said in or about it, and a reader for every context
mode x clearance x organisation (x invited to the section or elsewhere, for the modes that have a
scope), with what each may see of that section worked out here, apart from the engine.

Two canaries, because a ``SummaryOnly`` reader may know a section exists (its title, and so the
title's slug in its id) but read nothing said in or about it:
- ``TITLE_CANARY`` is in the hidden section's heading, so in its id and its subsections' ids;
- ``CONTENT_CANARY`` is in its content, its proposals (content, summary, reasoning), its
  subsection's content, an intent's goal, a constraint's boundary, category and reasoning, a
  comment, a question and its context, and the escalation's reason.
The ids of the things in it (proposals, the conflict, the question, the intent, the constraint,
the comment) are collected by ``build`` in ``World.hidden_ids``: a reader that may not read the
section must not get those either.

Nobody sets a salience above the default on the hidden section, so its intents, once accepted,
invite the first agent to register among those the engine picks from; the first to register
(``public``) may not even see it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

TITLE_CANARY = "TitleCanary7f3a"
CONTENT_CANARY = "ContentCanary5z9q"
LEVELS = ["Public", "Internal", "Confidential"]
ORG = "acme"  # the organisation that owns the hidden section
SECRET = "sec:plan/secret-titlecanary7f3a"
DETAIL = SECRET + "/detail"
MORE = DETAIL + "/more"  # a subsection a merged proposal added
ELSEWHERE = "sec:plan/risks/far"  # neither the hidden section, nor its neighbour
DRAFTER = "peer"  # the agent invited to draft the hidden section: the first that may read it
NAME = "plan"  # the document, in a workspace file
HUMAN = "carol"  # its custodian
START_NS = 1_795_000_000_000_000_000  # the workspace's clock when it is made
END_NS = START_NS + 61 * 1_000_000_000  # ... and when it is filled (nothing due then)
MODES = ("Full", "SectionScoped", "Neighbourhood", "SummaryOnly")
SCOPED_MODES = ("SectionScoped", "Neighbourhood")

DOC = f"""\
# Plan

Intro line.

## Budget

Total: 1M.

## Secret {TITLE_CANARY}

Hidden {CONTENT_CANARY} figures.

### Detail

Sub detail.

## Risks

Risk text.

### Far

Far away.
"""


def section_body(title: str, text: str, level: int = 2) -> str:
    return f"{'#' * level} {title}\n\n{text}\n\n"


@dataclass(frozen=True)
class Reader:
    """An agent that joins with an invite (``organisation`` may be None: an invite naming
    none), or, ``invited=False``, without one (Full, its clearance set by the human)."""

    mode: str
    clearance: str
    organisation: str | None
    on_secret: bool = False  # SectionScoped/Neighbourhood: invited to the hidden section
    invited: bool = True

    @property
    def name(self) -> str:
        if not self.invited:
            return "public"
        org = self.organisation or "no-org"
        scope = ("-on" if self.on_secret else "-off") if self.mode in SCOPED_MODES else ""
        return f"{self.mode}-{self.clearance}-{org}{scope}".lower()

    @property
    def sections(self) -> list[str]:
        if self.mode not in SCOPED_MODES:
            return []
        return [SECRET if self.on_secret else ELSEWHERE]

    @property
    def sees(self) -> bool:
        """May know the hidden section exists: its clearance reaches Confidential, it is of the
        section's organisation, and its mode reaches the section."""
        in_mode = self.mode in ("Full", "SummaryOnly") or self.on_secret
        return self.clearance == "Confidential" and self.organisation == ORG and in_mode

    @property
    def reads(self) -> bool:
        return self.sees and self.mode != "SummaryOnly"


READERS: list[Reader] = [Reader("Full", "Public", None, invited=False)] + [
    Reader(mode, clearance, org, on_secret)
    for mode in MODES
    for clearance in ("Public", "Confidential")
    for org in (ORG, "globex", None)
    for on_secret in ((False, True) if mode in SCOPED_MODES else (False,))
]
BY_NAME = {reader.name: reader for reader in READERS}


class Runner(Protocol):
    """Runs commands on the document (the engine's ``Sim``, or a workspace file)."""

    def human(self, op: str, **fields: Any) -> dict[str, Any]: ...
    def agent(self, name: str, op: str, **fields: Any) -> dict[str, Any]: ...
    def advance(self, seconds: float) -> None: ...
    def tick(self) -> Any: ...


@dataclass
class World:
    refs: dict[str, str] = field(default_factory=dict)  # what the tests act on, by role
    hidden_ids: set[str] = field(default_factory=set)  # ids of things in the hidden section


def build(run: Runner, document_conflicts: Any) -> World:
    """Fill the document (created from ``DOC`` with the ``single`` policy and the
    ``human-escalate`` strategy); ``document_conflicts()`` gives the document's conflict ids."""
    world = World()
    c = CONTENT_CANARY
    run.human("classify", sectionId=SECRET, level="Confidential", organisation=ORG, levels=LEVELS)
    run.agent("public", "join", agentName="public")  # the first to register
    run.human("clearance", agent="public", level="Public")
    for name in ("cleared", DRAFTER):
        token = run.human(
            "invite", trust="Collaborator", clearance="Confidential", organisation=ORG
        )["token"]
        run.agent(name, "join", agentName=name, token=token)
    secret = f"Secret {TITLE_CANARY}"
    refs = world.refs
    refs["proposal"] = run.agent(
        "cleared",
        "propose",
        sectionId=SECRET,
        newContent=section_body(secret, f"More {c}."),
        summary=f"summary {c}",
        reasoning=f"reasoning {c}",
    )["proposalId"]
    # A rival: both sides wait in Conflict, escalated to the custodian at once.
    refs["rival"] = run.agent(
        DRAFTER, "propose", sectionId=SECRET, newContent=section_body(secret, f"Other {c}.")
    )["proposalId"]
    refs["intent"] = run.agent("cleared", "intent", sectionId=SECRET, goal=f"hide {c}")["intentId"]
    refs["constraint"] = run.agent(
        "cleared",
        "constrain",
        sectionId=SECRET,
        boundary=f"never {c}",
        category=f"cat {c}",
        reasoning=f"because {c}",
    )["constraintId"]
    refs["comment"] = run.agent("cleared", "comment", sectionId=SECRET, text=f"@human see {c}")[
        "commentId"
    ]
    refs["query"] = run.agent(
        "cleared",
        "ask-human",
        question=f"{c}?",
        context=f"context {c}",
        sectionId=SECRET,
        timeoutSeconds=3600,
    )["queryId"]
    run.agent("cleared", "lock", sectionId=SECRET, ttlSeconds=60)
    run.agent("cleared", "salience", sectionId=SECRET, score=3)  # below the default
    # A merge in the hidden section, adding a subsection.
    refs["merged"] = run.agent(
        "cleared",
        "propose",
        sectionId=DETAIL,
        newContent=section_body("Detail", f"{c} detail.", 3) + section_body("More", "x", 4),
    )["proposalId"]
    run.agent(DRAFTER, "approve", proposalId=refs["merged"])
    run.agent("cleared", "escalate", sectionId=SECRET, reason=f"{c} needs eyes")
    run.advance(61)  # the intent's window ends: it is accepted, the intents align
    run.tick()
    world.hidden_ids = {*refs.values(), *document_conflicts()}
    assert len(world.hidden_ids) == len(refs) + 1, "one conflict, in the hidden section"
    for reader in READERS:
        if not reader.invited:
            continue
        token = run.human(
            "invite",
            trust="Collaborator",
            clearance=reader.clearance,
            organisation=reader.organisation,
            mode=reader.mode,
            sections=reader.sections,
        )["token"]
        run.agent(reader.name, "join", agentName=reader.name, token=token)
    return world


def found(text: str) -> set[str]:
    """Which canaries ``text`` holds: "title" (the heading, or its slug), "content"."""
    low = text.lower()
    return {
        name
        for name, canary in (("title", TITLE_CANARY), ("content", CONTENT_CANARY))
        if canary.lower() in low
    }


def allowed(reader: Reader | None) -> set[str]:
    """The canaries ``reader`` (None: the custodian) may get."""
    if reader is None or reader.reads:
        return {"title", "content"}
    return {"title"} if reader.sees else set()


def leaked(reader: Reader | None, text: str, world: World) -> list[str]:
    """What ``text`` holds that ``reader`` may not get: canaries, and ids of things in the
    hidden section."""
    wrong = sorted(found(text) - allowed(reader))
    if reader is not None and not reader.reads:
        wrong += sorted(i for i in world.hidden_ids if i in text)
    return wrong


def build_workspace(path: Path) -> World:
    """The world as document ``plan`` of a new workspace file at ``path``, made through the
    workspace's commands on a clock of its own (``START_NS`` to ``END_NS``), with counted ids."""
    from engine.protocol.commands import Actor
    from engine.protocol.envelope import CountingIds
    from engine.workspace import Workspace

    now = [START_NS]
    loop = asyncio.new_event_loop()
    ws = loop.run_until_complete(
        Workspace.open(path, create=True, watch=False, clock=lambda: now[0], ids=CountingIds())
    )

    class Run:
        def human(self, op: str, **fields: Any) -> dict[str, Any]:
            return self._run(Actor.human(HUMAN), op, fields)

        def agent(self, name: str, op: str, **fields: Any) -> dict[str, Any]:
            return self._run(Actor.agent(name), op, fields)

        def _run(self, actor: Actor, op: str, fields: dict[str, Any]) -> dict[str, Any]:
            command = {"op": op, **fields}
            return loop.run_until_complete(ws.run_document(NAME, command, actor)).answer()

        def advance(self, seconds: float) -> None:
            now[0] += round(seconds * 1_000_000_000)

        def tick(self) -> Any:
            return loop.run_until_complete(ws.tick_document(NAME))

    try:
        loop.run_until_complete(
            ws.create_document(NAME, DOC, human=HUMAN, policy="single", strategy="human-escalate")
        )
        world = build(Run(), lambda: list(ws.document(NAME).conflicts))
        assert now[0] == END_NS
    finally:
        loop.run_until_complete(ws.close())
        loop.close()
    return world
