"""Shared helpers for the protocol tests.

- ``Sim``: a document on a simulated clock (integer ms, advanced by hand) that runs commands
  through ``decide`` and keeps every event decided in ``sim.log``, as a store would append it
  (due work fired before a refusal included); the ``sim`` fixture replays the log at the end.
- ``Session``: the same idea for tests that build their own document and want refusals
  returned rather than raised (the checkpoint, property and regression tests).
- The v0.3 JSON Schemas (``schemas/``, copied from the specification) as validators.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator, FormatChecker

from engine.documents import creation_event
from engine.protocol.commands import Actor
from engine.protocol.decide import Decision, decide, tick
from engine.protocol.document import Document
from engine.protocol.envelope import CountingIds, payload
from engine.protocol.errors import ProtocolError
from engine.protocol.model import Agent, Section

SCHEMAS = Path(__file__).resolve().parent / "schemas"
START_MS = 1_700_000_000_000
T0 = START_MS  # ms


PLAN = """\
# Plan

Intro line.

## Budget

Total: 1M.

## Scope

Scope line one.
Scope line two.
Scope line three.

## Risks

Risk text.
"""


class Sim:
    def __init__(
        self,
        markdown: str = PLAN,
        *,
        policy: str = "single",
        window_s: int = 60,
        strategy: str = "first-wins",
        default_trust: str = "Collaborator",
        human: str = "carol",
    ) -> None:
        self.ids = CountingIds()
        self.now = START_MS
        self.human_name = human
        self.doc = Document()
        event = creation_event(
            name="plan",
            markdown=markdown,
            document_id=self.ids.uuid(),
            event_id=self.ids.uuid(),
            epoch_ms=self.now,
            human=human,
            policy=policy,
            window_s=window_s,
            strategy=strategy,
            default_trust=default_trust,
        )
        self.doc.apply(event)
        self.log: list[dict[str, Any]] = [event]

    # -- the clock -------------------------------------------------------------------------------
    def advance(self, seconds: float) -> None:
        self.now += round(seconds * 1000)

    def at(self, ms: int) -> None:
        assert ms >= self.now, "the simulated clock only goes forward"
        self.now = ms

    def tick(self) -> list[dict[str, Any]]:
        fired = tick(self.doc, self.now, self.ids).events
        self.log.extend(fired)
        return fired

    # -- commands --------------------------------------------------------------------------------
    def decide(self, actor: Actor, op: str, **fields: Any) -> Decision:
        try:
            decision = decide(self.doc, {"op": op, **fields}, actor, self.now, self.ids)
        except ProtocolError as refused:
            self.log.extend(refused.fired)
            raise
        self.log.extend(decision.events)
        return decision

    def agent(self, name: str, op: str, **fields: Any) -> dict[str, Any]:
        return self.decide(Actor.agent(name), op, **fields).answer()

    def human_actor(self) -> Actor:
        return Actor.human(self.human_name)

    def human(self, op: str, **fields: Any) -> dict[str, Any]:
        return self.decide(Actor.human(self.human_name), op, **fields).answer()

    def refused(self, actor: Actor | str, op: str, code: str, **fields: Any) -> ProtocolError:
        """Run a command that must be refused with ``code`` and change nothing."""
        if isinstance(actor, str):
            actor = Actor.agent(actor)
        self.tick()  # due work is appended whatever the command: compare after it
        before = self.snapshot()
        with pytest.raises(ProtocolError) as caught:
            self.decide(actor, op, **fields)
        error = caught.value
        assert error.code == code, f"{op}: {error.code} ({error.description}), wanted {code}"
        assert error.fired == []
        assert self.snapshot() == before, f"refused {op} changed the document"
        return error

    def snapshot(self) -> tuple[Any, ...]:
        doc = self.doc
        return (
            doc.sequence,
            doc.markdown(),
            {
                p.id: (p.status, sorted(p.approvals), sorted(p.objections))
                for p in doc.proposals.values()
            },
            {s.id: (s.version, s.lock is not None, s.escalated is not None) for s in doc.sections},
            sorted(doc.active),
        )

    def join(self, *names: str, trust: str | None = None) -> list[str]:
        ids = []
        for name in names:
            ids.append(self.agent(name, "join", agentName=name)["registrationId"])
            if trust is not None:
                self.human("trust", agent=name, level=trust, why="set up by the test")
        return ids

    def propose(self, name: str, section_id: str, text: str, **fields: Any) -> str:
        """An agent's proposal; returns its id."""
        result = self.agent(name, "propose", sectionId=section_id, newContent=text, **fields)
        return str(result["proposalId"])

    # -- looking ---------------------------------------------------------------------------------
    def a(self, name: str) -> Agent:
        found = self.doc.agent_named(name)
        assert found is not None, name
        return found

    def s(self, section_id: str) -> Section:
        found = self.doc.section(section_id, self.now)
        assert found is not None, section_id
        return found

    def status(self, proposal_id: str) -> str:
        return self.doc.proposals[proposal_id].status

    def types(self, since: int = 0) -> list[str]:
        return [e["eventType"] for e in self.log[since:]]

    def events(self, event_type: str) -> list[dict[str, Any]]:
        return [payload(e) for e in self.log if e["eventType"] == event_type]

    def replayed(self) -> Document:
        """The document folded again from the log: the fold must agree with the decisions."""
        doc = Document()
        for event in self.log:
            doc.apply(json.loads(json.dumps(event)))
        return doc

    def mark(self) -> int:
        return len(self.log)


def body(title: str, text: str, level: int = 2) -> str:
    """A section's whole new content: its heading line and a body."""
    return f"{'#' * level} {title}\n\n{text}\n\n"


@pytest.fixture
def sim() -> Iterator[Sim]:
    made = Sim()
    yield made
    # Whatever a test did, replaying its log gives the same document.
    again = made.replayed()
    assert again.markdown() == made.doc.markdown()
    assert again.sequence == made.doc.sequence
    assert {p.id: p.status for p in again.proposals.values()} == {
        p.id: p.status for p in made.doc.proposals.values()
    }


# -- sessions that return refusals ------------------------------------------------------------
MARKDOWN = """Some words before the first heading.

# Plan

The plan, in short.

## Risk

What could go wrong.

## Budget

Money.

# Notes

Loose ends.
"""


def snapshot_event(
    markdown: str,
    ids: CountingIds,
    *,
    at_ms: int = T0,
    policy: str = "single",
    window_s: int = 60,
    strategy: str = "first-wins",
    default_trust: str = "Collaborator",
) -> dict[str, Any]:
    """The event that creates a document holding ``markdown``."""
    return creation_event(
        name="doc",
        markdown=markdown,
        document_id=ids.uuid(),
        event_id=ids.uuid(),
        epoch_ms=at_ms,
        human="carol",
        policy=policy,
        window_s=window_s,
        strategy=strategy,
        default_trust=default_trust,
    )


@dataclass
class Session:
    """A document, its ids and clock, and every event emitted so far (refusals' fired due
    work included), in order."""

    doc: Document
    ids: CountingIds
    now: int = T0
    log: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def start(cls, markdown: str = MARKDOWN, **options: Any) -> Session:
        ids = CountingIds()
        event = snapshot_event(markdown, ids, **options)
        doc = Document()
        doc.apply(event)
        return cls(doc, ids, T0, [event])

    def run(
        self, command: dict[str, Any], actor: Actor, *, after_s: float = 0
    ) -> Decision | ProtocolError:
        """Decide ``command`` ``after_s`` seconds on; a refusal is returned, not raised."""
        self.now += int(after_s * 1000)
        try:
            decision = decide(self.doc, command, actor, self.now, self.ids)
        except ProtocolError as refused:
            self.log.extend(refused.fired)
            return refused
        self.log.extend(decision.events)
        return decision

    def ok(self, command: dict[str, Any], actor: Actor, *, after_s: float = 0) -> Decision:
        """``run``, which must not be refused."""
        outcome = self.run(command, actor, after_s=after_s)
        if isinstance(outcome, ProtocolError):
            raise AssertionError(f"{command} by {actor} refused: {outcome.code} {outcome}")
        return outcome

    def join(self, *names: str) -> None:
        for name in names:
            self.ok({"op": "join", "agentName": name}, Actor.agent(name))


def replay(events: list[dict[str, Any]]) -> Document:
    doc = Document()
    for event in events:
        doc.apply(event)
    return doc


# -- the v0.3 schemas ----------------------------------------------------------------------------
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")


def _format_checker() -> FormatChecker:
    """``FormatChecker()`` checks ``uuid``; ``date-time`` needs a package this project does
    not install (rfc3339-validator), so it is checked here: RFC 3339, a real date and time."""
    checker = FormatChecker()

    @checker.checks("date-time", raises=ValueError)
    def date_time(value: object) -> bool:
        if not isinstance(value, str):
            return True
        if _RFC3339.fullmatch(value) is None:
            return False
        datetime.fromisoformat(value.replace("Z", "+00:00"))
        return True

    return checker


def _validators() -> dict[str, Draft7Validator]:
    checker = _format_checker()
    validators = {}
    for path in sorted(SCHEMAS.glob("*.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        Draft7Validator.check_schema(schema)
        validators[path.stem] = Draft7Validator(schema, format_checker=checker)
    return validators


VALIDATORS = _validators()
Validate = Callable[[str, Any], None]


def validate(schema: str, instance: Any) -> None:
    """Raise an AssertionError naming every way ``instance`` breaks ``schemas/<schema>.json``."""
    errors = sorted(VALIDATORS[schema].iter_errors(instance), key=lambda e: list(e.path))
    if errors:
        found = "; ".join(f"{list(e.path)}: {e.message}" for e in errors)
        raise AssertionError(f"not a valid {schema}: {found}\n{instance!r}")


@pytest.fixture(scope="session")
def schema() -> Validate:
    """``schema(name, instance)`` checks ``instance`` against ``schemas/<name>.json``."""
    assert len(VALIDATORS) == 12
    return validate
