"""Shared helpers for the protocol tests: a document made from Markdown, a session that runs
commands on it with a clock the test moves and keeps every event emitted, and the v0.3 JSON
Schemas (``schemas/``, copied from the specification) as validators."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator, FormatChecker

from engine.protocol.commands import Actor
from engine.protocol.decide import Decision, decide
from engine.protocol.document import Document
from engine.protocol.envelope import CountingIds, envelope
from engine.protocol.errors import ProtocolError
from engine.protocol.sections import parse_sections, section_content

SCHEMAS = Path(__file__).resolve().parent / "schemas"
T0 = 1_700_000_000_000  # ms

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
    rows = [
        {"title": s.title, "level": s.level, "content": section_content(markdown, s)}
        for s in parse_sections(markdown)
    ]
    data = {
        "name": "doc",
        "policy": policy,
        "windowSeconds": window_s,
        "strategy": strategy,
        "defaultTrust": default_trust,
        "sections": rows,
    }
    return envelope(
        event_id=ids.uuid(),
        epoch_ms=at_ms,
        actor_id=None,
        actor_display="system",
        actor_kind="System",
        event_type="pact.document.snapshot",
        document_id=ids.uuid(),
        sequence=0,
        section_id=None,
        data=data,
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
