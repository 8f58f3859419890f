"""Properties of the protocol engine, under random sessions.

A session starts from random Markdown (ATX and setext headings, skipped levels, duplicate titles
and titles like a duplicate's number, ``#`` lines in code fences, indented code, HTML blocks,
quotes and lists, form feeds and line separators in the text) with a random policy, window,
strategy and default trust. Agents (joining, setting salience, declaring intents and
constraints, proposing valid content, voting, objecting, withdrawing, reverting, locking,
commenting, asking, heartbeating, leaving) and humans (approving, rejecting, editing, resolving,
force-merging, changing the policy, trust levels and clearances, classifying with a framework,
inviting, removing, answering, locking the document) then run commands, some with an
idempotency key, on a clock that moves 0-700 s between commands, so windows close, locks and
aliases expire, questions time out and silent agents are evicted. Refusals are expected; the
due work a refusal's tick fired counts as emitted. After every command:

1. the events emitted so far, folded into another ``Document``, give the live one's dump. A
   fold cannot know when the live document was ticked: a tick pops the timers that fall due
   even when they fire nothing (a lock already released, a proposal already merged), and a
   command refused with nothing due emits no event at all. So the fold is ticked at the same
   times (which must fire nothing) before the dumps are compared;
2. a command retried with its idempotency key (same actor, same command) is ``retried``, emits
   nothing but due work, and changes nothing but what that due work changes;
3. the document is valid Markdown with its structure intact: ``parse_sections(markdown())``
   gives the titles and levels of ``doc.sections`` in order, each section's content is its own
   lines, and each id is unique and fits its heading path;
4. ``sequenceNumber`` runs 0, 1, 2, ... over every event emitted;
5. every event validates against ``event.json``, every request body against its request
   schema, a proposal's and a join's result against their response schemas, a refusal against
   ``error-response.json``;

and at the end the whole log, replayed into a fresh document ticked once at the last time,
dumps what the live one does, and the checkpoint round-trips through JSON. Now and then the
session goes on from its checkpoint (a document restored from its dump, whose closed proposals
are built when read), which must change none of this.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.protocol.commands import Actor, parse_command
from engine.protocol.decide import Decision, tick
from engine.protocol.document import Document
from engine.protocol.envelope import CountingIds
from engine.protocol.errors import ProtocolError
from engine.protocol.persist import dump_document, restore_document
from engine.protocol.sections import fits, parse_sections, section_content

from .conftest import T0, Session, replay, snapshot_event, validate

AGENTS = ("a1", "a2", "a3", "a4")
HUMANS = ("carol", "dan")
TITLES = ("Plan", "Risk", "Budget", "A", "A-2", "a", "Notes", "x_y", "???", "Risk 2", "The `x`")
# Three of these nested make a section id longer than a command may name (256): such a section
# can be created, never addressed, and no event may name it.
LONG = "A title long enough that three of them nested make a section id of more than 256 chars"
# Words, with Markdown in them, and characters Python splits lines at that Markdown does not.
WORDS = ("alpha", "beta", "gamma", "#hash", "*star*", "`code`", "1.", "-", "a\x0cb", "c\u2028d")
LEVELS = ("Public", "Internal", "Confidential")
REQUESTS = {
    "propose": "proposal-request",
    "intent": "intent-request",
    "constrain": "constraint-request",
    "salience": "salience-request",
    "lock": "lock-request",
    "ask-human": "ask-human-request",
    "done": "done-request",
    "join": "join-request",
}
RESPONSES = {"propose": "proposal-response", "join": "join-response"}
# Hypothesis draws the first of a sampled_from most: the ones where agents vote come first.
POLICIES = ("single", "majority", "objection-based", "unanimous", "human-only", "auto")
STRATEGIES = ("vote", "merge-both", "human-escalate", "first-wins")


# -- Markdown ------------------------------------------------------------------------------------
def one_in(draw: st.DrawFn, n: int) -> bool:
    """True about once in ``n`` draws (hypothesis draws the ends of a range more often than
    the rest: a value in the middle is the rare one)."""
    return draw(st.integers(1, n)) == (n + 1) // 2


def words(draw: st.DrawFn) -> str:
    return " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)))


def block(draw: st.DrawFn) -> str:
    """A block of body text: some hold a ``#`` line that is not a heading."""
    kind = draw(st.sampled_from(["text", "text", "fence", "list", "quote", "code", "html", "rule"]))
    if kind == "fence":
        return f"```\n# {words(draw)}\n```\n"
    if kind == "list":
        return f"- {words(draw)}\n- # {words(draw)}\n"
    if kind == "quote":
        return f"> # {words(draw)}\n"
    if kind == "code":
        return f"    # {words(draw)}\n"
    if kind == "html":
        return f"<div>\n# {words(draw)}\n</div>\n"
    if kind == "rule":
        return "***\n"
    return words(draw) + "\n"


def body(draw: st.DrawFn) -> str:
    return "\n".join(block(draw) for _ in range(draw(st.integers(0, 2))))


def heading(draw: st.DrawFn, level: int, name: str) -> str:
    if level <= 2 and one_in(draw, 5):  # setext
        return f"{name}\n{'=-'[level - 1] * draw(st.integers(1, 5))}\n"
    return f"{'#' * level} {name}\n"


def title(draw: st.DrawFn) -> str:
    return LONG if one_in(draw, 16) else draw(st.sampled_from(TITLES))


def section_text(draw: st.DrawFn, level: int, name: str) -> str:
    text = heading(draw, level, name)
    rest = body(draw)
    return text + ("\n" + rest if rest else "")


@st.composite
def documents(draw: st.DrawFn) -> str:
    parts = [body(draw)]
    for _ in range(draw(st.integers(0, 6))):
        parts.append(section_text(draw, draw(st.integers(1, 4)), title(draw)))
    return "\n".join(part for part in parts if part)


def content_for(draw: st.DrawFn, level: int, heading_title: str) -> str:
    """Content a proposal may put in a section of ``level``: its heading first (its title kept
    or a new one), then maybe deeper headings; for the root, text without a heading."""
    if level == 0:
        return body(draw) or words(draw) + "\n"
    text = section_text(draw, level, title(draw) if draw(st.booleans()) else heading_title)
    for _ in range(draw(st.integers(0, 2)) if level < 6 else 0):
        deeper = draw(st.integers(level + 1, min(level + 2, 6)))
        text += "\n" + section_text(draw, deeper, title(draw))
    if one_in(draw, 6):
        text = text.rstrip("\n")  # no final line break
    return text


# -- commands ------------------------------------------------------------------------------------
class Run(Session):
    """A session that draws its next command from the state of its document."""

    draw: st.DrawFn
    tokens: list[str]  # invite tokens made so far

    def section_id(self) -> str:
        ids = [s.id for s in self.doc.sections]
        other = [*self.doc.aliases, "sec:nowhere"]
        return self.draw(st.sampled_from(other) if one_in(self.draw, 10) else st.sampled_from(ids))

    def proposal_id(self, author: str | None = None) -> str:
        """Mostly an open proposal (``author``'s own, if it has one), now and then any."""
        proposals = list(self.doc.proposals.values())
        live = [p for p in proposals if p.status in ("Pending", "Approved", "Conflict")]
        own = [p for p in live if p.author_name == author]
        pool = proposals if not live or one_in(self.draw, 5) else own or live
        return self.draw(st.sampled_from([p.id for p in pool])) if pool else "no-such-proposal"

    def query_id(self) -> str:
        queries = list(self.doc.queries.values())
        open_ones = [q for q in queries if q.status == "open"]
        pool = queries if not open_ones or one_in(self.draw, 5) else open_ones
        return self.draw(st.sampled_from([q.id for q in pool])) if pool else "no-such-query"

    def content(self, section_id: str) -> str:
        section = self.doc.section(section_id)
        level, title = (section.level, section.title) if section else (1, "Plan")
        return content_for(self.draw, level, title)

    def agent_command(self, name: str) -> dict[str, Any]:
        draw = self.draw
        op = draw(
            st.sampled_from(
                [
                    "propose", "approve", "propose", "salience", "intent", "constrain", "propose",
                    "propose", "approve", "approve", "salience", "reject", "object",
                    "object-intent", "object-constraint", "withdraw", "lock", "unlock", "comment",
                    "ask-human",
                    "heartbeat", "heartbeat", "leave", "done", "escalate", "revert",
                    "withdraw-constraint", "resolve-comment",
                ]
            )
        )  # fmt: skip
        if op in ("approve", "reject", "object", "withdraw", "revert") and not self.doc.proposals:
            op = "propose"
        if op == "salience":
            return {"op": op, "sectionId": self.section_id(), "score": draw(st.integers(0, 10))}
        if op == "intent":
            return {"op": op, "sectionId": self.section_id(), "goal": words(draw)}
        if op == "constrain":
            category = draw(st.sampled_from([None, "legal", "style"]))
            command = {"op": op, "sectionId": self.section_id(), "boundary": words(draw)}
            return {**command, "category": category} if category else command
        if op == "propose":
            section_id = self.section_id()
            command = {"op": op, "sectionId": section_id, "newContent": self.content(section_id)}
            section = self.doc.section(section_id)
            if section is not None and section.version > 1 and one_in(draw, 4):
                command["baseVersion"] = draw(st.integers(1, section.version))  # stale
            if one_in(draw, 4):
                command["summary"] = words(draw)
            if one_in(draw, 4):
                command["windowSeconds"] = draw(st.integers(1, 120))
            return command
        if op in ("approve", "revert"):
            return {"op": op, "proposalId": self.proposal_id()}
        if op == "withdraw":
            return {"op": op, "proposalId": self.proposal_id(author=name)}
        if op == "reject":
            return {"op": op, "proposalId": self.proposal_id(), "reason": words(draw)}
        if op == "object":
            return {"op": op, "proposalId": self.proposal_id(), "reason": words(draw)}
        if op == "object-constraint":
            constraint = draw(st.sampled_from(list(self.doc.constraints) or ["no-such"]))
            return {"op": "object", "constraintId": constraint, "reason": words(draw)}
        if op == "object-intent":
            intents = list(self.doc.intents) or ["no-such-intent"]
            intent = draw(st.sampled_from(intents))
            return {"op": "object", "intentId": intent, "reason": words(draw)}
        if op == "lock":
            command = {"op": op, "sectionId": self.section_id()}
            ttl = draw(st.sampled_from([None, 1, 30, 60]))
            return {**command, "ttlSeconds": ttl} if ttl else command
        if op in ("unlock", "escalate"):
            command = {"op": op, "sectionId": self.section_id()}
            return {**command, "reason": words(draw)} if op == "escalate" else command
        if op == "comment":
            return {"op": op, "sectionId": self.section_id(), "text": words(draw)}
        if op == "ask-human":
            command = {"op": op, "question": words(draw)}
            if draw(st.booleans()):
                command["sectionId"] = self.section_id()
            if draw(st.booleans()):
                command["timeoutSeconds"] = draw(st.integers(10, 700))
            return command
        if op == "done":
            return {"op": op, "status": draw(st.sampled_from(["aligned", "partial"]))}
        if op == "withdraw-constraint":
            agent = self.doc.agent_named(name)
            mine = [k.id for k in self.doc.constraints.values() if agent and k.author == agent.id]
            constraints = mine or list(self.doc.constraints) or ["no-such-constraint"]
            return {"op": op, "constraintId": draw(st.sampled_from(constraints))}
        if op == "resolve-comment":
            comments = list(self.doc.comments) or ["no-such-comment"]
            return {"op": op, "commentId": draw(st.sampled_from(comments))}
        return {"op": op}  # heartbeat, leave

    def human_command(self) -> dict[str, Any]:
        draw = self.draw
        op = draw(
            st.sampled_from(
                [
                    "approve", "approve", "reject", "edit", "edit", "resolve", "resolve",
                    "force-merge", "policy", "policy", "classify", "trust", "respond", "respond",
                    "unlock-document", "lock-document", "unlock-document", "unlock", "invite",
                    "clearance", "remove", "mark-constraint", "dismiss", "disclosure",
                ]
            )
        )  # fmt: skip
        if op in ("approve", "reject", "force-merge") and not self.doc.proposals:
            op = "edit"
        why = words(draw)
        if op == "approve":
            return {"op": op, "proposalId": self.proposal_id(), "why": why}
        if op == "reject":
            return {"op": op, "proposalId": self.proposal_id(), "reason": why}
        if op == "force-merge":
            return {"op": op, "proposalId": self.proposal_id(), "why": why}
        if op == "edit":
            section_id = self.section_id()
            return {
                "op": op,
                "sectionId": section_id,
                "content": self.content(section_id),
                "why": why,
            }
        if op == "resolve":
            section_id = self.section_id()
            command = {
                "op": op,
                "sectionId": section_id,
                "decision": words(draw),
                "justification": why,
                "override": draw(st.booleans()),
            }
            section = self.doc.section(section_id)
            choice = draw(st.sampled_from(["none", "proposal", "content"]))
            if choice == "proposal" and section is not None:
                here = [p.id for p in self.doc.proposals.values() if p.section == section.key]
                if here:
                    command["proposalId"] = draw(st.sampled_from(here))
            elif choice == "content":
                command["content"] = self.content(section_id)
            return command
        if op == "policy":
            command = {"op": op, "why": why}
            if draw(st.booleans()):
                command["policy"] = draw(st.sampled_from(POLICIES))
            if draw(st.booleans()):
                command["windowSeconds"] = draw(st.integers(1, 300))
            if draw(st.booleans()):
                command["strategy"] = draw(st.sampled_from(STRATEGIES))
            return command
        if op == "classify":
            level = draw(st.sampled_from([*LEVELS[:2], "Secret"]))
            command = {"op": op, "sectionId": self.section_id(), "level": level}
            if draw(st.booleans()):
                command.update(framework="corp", levels=list(LEVELS))
            return command
        if op == "trust":
            level = draw(st.sampled_from(["Observer", "Suggester", "Collaborator", "Autonomous"]))
            return {"op": op, "agent": draw(st.sampled_from(AGENTS)), "level": level, "why": why}
        if op == "respond":
            return {"op": op, "queryId": self.query_id(), "response": why}
        if op == "lock-document":
            return {"op": op, "why": why}
        if op == "unlock":
            return {"op": op, "sectionId": self.section_id(), "why": why}
        if op == "invite":
            mode = draw(st.sampled_from(["Full", "SectionScoped", "Neighbourhood", "SummaryOnly"]))
            command = {"op": op, "trust": draw(st.sampled_from(["Suggester", "Collaborator"]))}
            if mode != "Full":
                command.update(mode=mode, sections=[self.section_id()])
            if draw(st.booleans()):
                command["clearance"] = draw(st.sampled_from(LEVELS))
            return command
        if op == "clearance":
            command = {"op": op, "agent": draw(st.sampled_from(AGENTS))}
            command["level"] = draw(st.sampled_from(LEVELS))
            if draw(st.booleans()):
                command.update(framework="corp", levels=list(LEVELS))
            return command
        if op == "remove":
            return {"op": op, "agent": draw(st.sampled_from(AGENTS)), "why": why}
        if op == "disclosure":
            return {"op": op, "agent": draw(st.sampled_from(AGENTS)), "level": 2}
        if op == "mark-constraint":
            constraints = list(self.doc.constraints) or ["no-such-constraint"]
            compatibility = draw(st.sampled_from(["compatible", "conflicting", "unknown"]))
            constraint = draw(st.sampled_from(constraints))
            return {"op": op, "constraintId": constraint, "compatibility": compatibility}
        if op == "dismiss":
            return {"op": op, "queryId": self.query_id()}
        return {"op": op}  # unlock-document


# -- the checks ----------------------------------------------------------------------------------
def check_structure(run: Run) -> None:
    markdown = run.doc.markdown()
    parsed = parse_sections(markdown)
    assert len(parsed) == len(run.doc.sections), markdown
    for mine, theirs in zip(run.doc.sections, parsed, strict=True):
        assert mine.content == section_content(markdown, theirs), (mine.id, markdown)
        assert (mine.title, mine.level) == (theirs.title, theirs.level)
        # Ids are identities kept across merges (test_section_ids.py), not the parser's
        # numbering of the Markdown as it stands: each is unique and fits its heading path.
        parent = run.doc.by_key[mine.parent].id if mine.parent is not None else None
        assert mine.level == 0 or fits(mine.id, parent, mine.level, mine.title), mine.id
    assert len(run.doc.by_id) == len(run.doc.sections)


def check_events(run: Run, start: int) -> None:
    for number, event in enumerate(run.log[start:], start):
        assert event["sequenceNumber"] == number
        validate("event", event)


def check_replay(run: Run, shadow: Document, start: int) -> None:
    """``shadow`` folds the events as they come, and is ticked when the live one is: the two
    must be the same state (property 1, after every command)."""
    for event in run.log[start:]:
        shadow.apply(event)
    assert tick(shadow, run.now, CountingIds(99)).events == []
    assert dump_document(shadow) == dump_document(run.doc)


def check_wire(command: dict[str, Any], outcome: Decision | ProtocolError) -> None:
    try:
        model = parse_command(command)
    except ProtocolError:
        model = None
    if model is not None and type(model).REQUEST:
        validate(REQUESTS[model.op], model.request())
    if isinstance(outcome, ProtocolError):
        validate("error-response", {"errors": [outcome.wire()]})
    elif command["op"] in RESPONSES:
        validate(RESPONSES[command["op"]], outcome.answer())


def check_retry(run: Run, command: dict[str, Any], actor: Actor, first: Decision) -> None:
    """Run ``command`` again (same key): nothing new, the first answer exactly (an invite's
    token, shown once, is null), only due work. A command that changed nothing (a policy as it
    already is) filed no key, as a refused one does not: it is decided again, and again
    changes nothing."""
    before = dump_document(run.doc)
    again = run.draw(st.sampled_from([0, 0, 1, 45]))
    start = len(run.log)
    outcome = run.run(command, actor, after_s=again)
    assert isinstance(outcome, Decision), (command, outcome)
    assert outcome.retried is (first.answer().get("changed") is not False)
    shown_once = {"token": None} if command["op"] == "invite" else {}
    assert outcome.answer() == {**first.answer(), **shown_once}
    assert all(e["actorKind"] == "System" for e in outcome.events), outcome.events
    check_events(run, start)
    expected = restore_document(before)
    for event in outcome.events:
        expected.apply(event)
    assert tick(expected, run.now, CountingIds(99)).events == []
    assert dump_document(expected) == dump_document(run.doc)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(markdown=documents(), data=st.data())
@pytest.mark.slow
def test_random_sessions_keep_the_protocol(markdown: str, data: st.DataObject) -> None:
    options = {
        "policy": data.draw(st.sampled_from(POLICIES)),
        "strategy": data.draw(st.sampled_from(STRATEGIES)),
        "window_s": data.draw(st.sampled_from([1, 60, 300])),
        "default_trust": data.draw(st.sampled_from(["Collaborator", "Collaborator", "Suggester"])),
    }
    ids = CountingIds()
    first = snapshot_event(markdown, ids, **options)
    run, shadow = Run(replay([first]), ids, T0, [first]), replay([first])
    run.draw, run.tokens = data.draw, []
    validate("event", first)
    check_structure(run)
    for step in range(data.draw(st.integers(1, 50) | st.integers(40, 70), label="steps")):
        jump = one_in(data.draw, 8)  # now and then, long enough to be evicted
        after_s = data.draw(st.integers(0, 700) if jump else st.sampled_from([0, 0, 1, 5, 30, 61]))
        if not one_in(data.draw, 4):
            name = data.draw(st.sampled_from(AGENTS))
            actor, command = Actor.agent(name), run.agent_command(name)
            if run.doc.agent_named(name) is None and not one_in(data.draw, 6):
                role = data.draw(st.sampled_from([None, "editor"]))
                command = {"op": "join", "agentName": name} | ({"role": role} if role else {})
                if run.tokens and data.draw(st.booleans()):
                    command["token"] = data.draw(st.sampled_from(run.tokens))
        else:
            actor, command = Actor.human(data.draw(st.sampled_from(HUMANS))), run.human_command()
        if data.draw(st.booleans()):
            command["idempotencyKey"] = f"key-{step}"
        if one_in(data.draw, 4):  # it goes on from its checkpoint, closed proposals unbuilt
            run.doc = restore_document(json.loads(json.dumps(dump_document(run.doc))))
        start = len(run.log)
        outcome = run.run(command, actor, after_s=after_s)
        if isinstance(outcome, Decision) and command["op"] == "invite":
            run.tokens.append(outcome.answer()["token"])
        check_events(run, start)
        check_wire(command, outcome)
        check_structure(run)
        check_replay(run, shadow, start)
        if (
            isinstance(outcome, Decision)
            and "idempotencyKey" in command
            and data.draw(st.booleans())
        ):
            start = len(run.log)
            check_retry(run, command, actor, outcome)
            check_structure(run)
            check_replay(run, shadow, start)

    live = dump_document(run.doc)
    replayed = replay(run.log)
    assert tick(replayed, run.now, CountingIds(99)).events == []
    assert dump_document(replayed) == live
    assert dump_document(restore_document(json.loads(json.dumps(live)))) == live
