"""The audit trail of a document: who did what, when and why, each human override marked.

One row per event (``AuditRow``), made from its v0.3 envelope alone (``AuditTrail.row``), so a
trail of any length is read a page at a time and never held whole; the same rows feed the
events view, ``pact-tui doc audit`` and the app's export, whatever they are written as. The
trail is the custodian's: every event, unredacted (an envelope that ``views.redact`` withheld
from a reader makes a row that says so, and says nothing of its payload).

An event overrides the protocol when the document's fold records it in ``Document.overrides``
(a human choosing past the agents or the policy: a policy changed, the document locked, an
agent removed or its trust changed, a human's approval with a reason, a human's rejection or
choice in a conflict, a force-merge, an edit, a force-unlock, a resolution that overrode);
:func:`overrides` states the same rule over an envelope, and a test holds the two to it.

What an event acted on (``subject``: a proposal, a conflict, a question, an agent …), what it
said or set (``detail``) and why (``why``: a human's reason or justification, a rejection's or
objection's reason, a proposal's reasoning) are read from fields of its payload named below;
a proposal's new content is not repeated in the trail (the events view's detail pane shows the
whole payload).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple

import orjson

from engine.protocol.filters import any_section_matches
from engine.protocol.model import who

# What an event acted on: the first of these its payload holds.
SUBJECT_FIELDS = (
    "proposalId",
    "conflictId",
    "queryId",
    "intentId",
    "constraintId",
    "commentId",
    "resolutionId",
    "alias",
    "framework",
)
# What it said or set, as "field: value" pairs, in this order.
DETAIL_FIELDS = (
    "summary",
    "decision",
    "status",
    "goal",
    "boundary",
    "category",
    "compatibility",
    "text",
    "question",
    "response",
    "level",
    "trustLevel",
    "role",
    "policy",
    "strategy",
    "windowSeconds",
    "score",
    "how",
    "winner",
    "name",
)
# Why: the first of these its payload holds (a rejection records its reason twice).
WHY_FIELDS = ("why", "justification", "reason", "reasoning")


# Events every one of which is an override, and those that are when their payload says so.
_ALWAYS = frozenset(
    {
        "pact.document.policy-changed",
        "pact.document.locked",
        "pact.agent.removed",
        "pact.agent.trust-changed",
    }
)
_BY_A_HUMAN = frozenset({"pact.proposal.rejected", "pact.proposal.conflict-resolved"})
_WITH_A_REASON = frozenset(
    {"pact.proposal.merged", "pact.proposal.auto-merged", "pact.section.unlocked"}
)

# The fields of a row as JSON and CSV write them, in this order (docs/audit.md says what each
# holds).
FIELDS = (
    "sequence",
    "time",
    "epochMs",
    "actor",
    "actorName",
    "actorKind",
    "type",
    "section",
    "subject",
    "detail",
    "why",
    "override",
)


def overrides(event_type: str, actor_kind: str, data: Mapping[str, Any]) -> bool:
    """Whether an event of ``event_type`` by an actor of ``actor_kind`` with payload ``data``
    is a human overriding the protocol: exactly the events the fold adds to
    ``Document.overrides``."""
    if event_type in _ALWAYS:
        return True
    if event_type in _BY_A_HUMAN:
        return actor_kind == "Individual"
    if event_type == "pact.proposal.approved":
        return actor_kind == "Individual" and bool(data.get("why"))
    if event_type in _WITH_A_REASON:
        return bool(data.get("why"))
    if event_type == "pact.section.edited":  # by hand, or merging a proposal past its policy
        return data.get("proposalId") is None or bool(data.get("why"))
    if event_type == "pact.human.resolved":
        return bool(data.get("override"))
    return False


def iso_time(epoch_ms: int) -> str:
    """``epoch_ms`` as ISO 8601 in UTC, to the millisecond: ``2026-03-01T09:30:00.250Z``
    (a time no calendar holds is written as its number)."""
    second = _second(epoch_ms // 1000)
    return second + _MILLISECONDS[epoch_ms % 1000] if second else str(epoch_ms)


_MILLISECONDS = tuple(f".{ms:03d}Z" for ms in range(1000))  # written once: a trail has many


@functools.lru_cache(maxsize=1024)  # a trail's events come many to a second
def _second(epoch_s: int) -> str:
    try:
        return datetime.fromtimestamp(epoch_s, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return ""


who_of = functools.lru_cache(maxsize=4096)(who)  # a trail's events come from few actors


def parse_time(text: str) -> int:
    """An ISO 8601 date or date and time (UTC unless it says otherwise) as epoch
    milliseconds; ``ValueError`` naming what is wrong."""
    given = text.strip()
    try:
        moment = datetime.fromisoformat(given.removesuffix("Z").removesuffix("z"))
    except ValueError:
        raise ValueError(
            f"{text!r} is neither an event number nor an ISO 8601 date or time"
            " (2026-03-01, 2026-03-01T09:30, 2026-03-01T09:30:00+02:00)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


# The rows ``AuditTrail`` makes, by version: a stored piece of a trail (``engine.workspace.
# trail``) made by a build whose rows differ is not read. Raise it whenever a row of some
# event would come out otherwise (tests/engine/test_audit_rows.py holds a digest of the rows of
# the demo's events to remind whoever changes them).
ROWS_VERSION = 1


class AuditRow(NamedTuple):
    """One event of the trail. Immutable; a NamedTuple rather than a frozen dataclass, since an
    audit makes one per event (209,000 of them in a fifth of the time)."""

    sequence: int  # its sequenceNumber: its place in the document's stream, from 0
    at_ms: int  # its epochMs
    type: str  # its eventType without "pact.": "proposal.approved"
    actor: str  # its actorDisplay: a name
    actor_kind: str  # its actorKind: "Individual", "AiAgent", "System" …
    section: str | None  # its sectionId (None: on no section, or withheld from the reader)
    subject: str  # what it acted on: a proposal's id, an agent's name … ("" if nothing)
    detail: str  # what it said or set: "summary: …; status: Merged" ("" if nothing)
    why: str  # the reason, justification or reasoning given ("" if none)
    override: bool  # a human overriding the protocol (see ``overrides``)
    withheld: bool = False  # its payload was withheld from the reader (view-as)

    @property
    def who(self) -> str:
        """The actor as every log and view names it: ``agent legal``, ``human carol``."""
        return who_of(self.actor, self.actor_kind)

    @property
    def time(self) -> str:
        return iso_time(self.at_ms)

    def record(self) -> dict[str, Any]:
        """The row as JSON and CSV write it: ``FIELDS``, in order."""
        return dict(zip(FIELDS, self.values(), strict=True))

    def values(self) -> tuple[Any, ...]:
        """The values of ``record``, in the order of ``FIELDS``."""
        return (
            self.sequence,
            iso_time(self.at_ms),
            self.at_ms,
            who_of(self.actor, self.actor_kind),
            self.actor,
            self.actor_kind,
            self.type,
            self.section,
            self.subject,
            self.detail,
            self.why,
            self.override,
        )


class AuditTrail:
    """Makes the rows of one document's events, read oldest first: it learns the agents'
    names from their joins, so an event that names an agent by id only (a trust change, a
    removal) is shown by its name."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # agent id → name

    def row(self, event: Mapping[str, Any]) -> AuditRow:
        [row] = self.rows((event,))
        return row

    def rows(self, events: Iterable[Mapping[str, Any]]) -> list[AuditRow]:
        """The row of each of ``events``, in turn (a page of an audit: one call, not one a
        row)."""
        rows = []
        for event in events:
            event_type: str = event["eventType"]
            kind = event.get("actorKind") or ""
            data = read_payload(event.get("payloadJson"))
            withheld = len(data) == 1 and data.get("withheld") is True
            if event_type == "pact.agent.joined" and isinstance(data.get("agentName"), str):
                self.names[str(data.get("agentId"))] = data["agentName"]
            # The fields named below that the payload holds, in their orders: the same few
            # for every event of a kind, so looked up by the payload's keys, not found again.
            shape = tuple(data)
            fields = _FIELDS_OF.get(shape)
            if fields is None:
                fields = _fields_of(shape)
            subjects, details, whys = fields
            subject = ""
            for key in subjects:
                value = data[key]
                if value is not None:
                    subject = value if type(value) is str else _text(value)
                    break
            else:
                if event_type.startswith("pact.agent."):
                    subject = self._agent(data)
            rows.append(
                AuditRow(  # by position, the fields' order: a third faster than by name
                    event["sequenceNumber"],
                    event["epochMs"],
                    event_type.removeprefix("pact."),
                    event.get("actorDisplay") or "",
                    kind,
                    event.get("sectionId"),
                    subject,
                    _detail(data, details) if details else "",
                    next((_text(data[k]) for k in whys if data[k]), "") if whys else "",
                    not withheld
                    and event_type in _MAY_OVERRIDE
                    and overrides(event_type, kind, data),
                    withheld,
                )
            )
        return rows

    def _agent(self, data: Mapping[str, Any]) -> str:
        """An agent event's subject: the agent's name, else its name learned from its join,
        else its id."""
        name = data.get("agentName")
        if name is None and data.get("agentId") is not None:
            name = self.names.get(str(data["agentId"]), data["agentId"])
        return "" if name is None else _text(name)


_Fields = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
_FIELDS_OF: dict[tuple[str, ...], _Fields] = {}  # a payload's keys → their fields, in order
_SHAPES = 4096  # kept: a log's events are of few shapes (any more are found each time)
# The events that may be overrides (``overrides``): any other is not one, whatever it says.
_MAY_OVERRIDE = frozenset(
    {"pact.proposal.approved", "pact.section.edited", "pact.human.resolved"}
).union(_ALWAYS, _BY_A_HUMAN, _WITH_A_REASON)


def _fields_of(shape: tuple[str, ...]) -> _Fields:
    """The subject, detail and why fields among the keys ``shape``, each in its order."""
    found = set(shape)
    fields = (
        tuple(k for k in SUBJECT_FIELDS if k in found),
        tuple(k for k in DETAIL_FIELDS if k in found),
        tuple(k for k in WHY_FIELDS if k in found),
    )
    if len(_FIELDS_OF) < _SHAPES:
        _FIELDS_OF[shape] = fields
    return fields


def read_payload(text: object) -> dict[str, Any]:
    """An envelope's ``payloadJson`` as an object ({} if it is none). orjson reads it, as the
    trail reads it a hundred thousand times: orjson reads an integer past 64 bits as a float,
    and no field the trail shows is a number read from the payload."""
    if not isinstance(text, str):
        return {}
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        try:
            data = json.loads(text)  # what orjson refuses and json reads (a lone surrogate)
        except (ValueError, RecursionError):
            return {}
    return data if isinstance(data, dict) else {}


def _detail(data: Mapping[str, Any], fields: Iterable[str]) -> str:
    return "; ".join(
        [
            f"{key}: {value if type(value) is str else _text(value)}"
            for key in fields
            if (value := data[key]) is not None and value != "" and not isinstance(value, _NESTED)
        ]
    )


_NESTED = (dict, list)


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if type(value) is int:
        return str(value)  # as json writes it
    return json.dumps(value, ensure_ascii=False, default=str)


@dataclass(frozen=True, slots=True)
class EventFilter:
    """Which events a view or an audit keeps. In words, as the events view's filter is typed:
    ``type:proposal`` (the event type contains it), ``agent:legal`` (the actor's name is it),
    ``section:risk`` (the section's id, a section it is under, or a word of its title in
    ``titles``: ``engine.protocol.filters``, as in every view), and bare words (each in the
    type, the actor's name or the section id); case is ignored. ``since_sequence`` and
    ``since_ms`` keep the events from that number or that moment on (``doc audit --since``).
    ``titles``: each section's title by id, where the reader may read it (``section_titles``;
    None: ``section:`` matches ids only)."""

    types: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    since_sequence: int = 0
    since_ms: int | None = None
    titles: Mapping[str, str] | None = field(default=None, compare=False, hash=False)

    @classmethod
    def parse(cls, text: str) -> EventFilter:
        parts: dict[str, list[str]] = {"type": [], "agent": [], "section": [], "": []}
        for word in text.lower().split():
            field, _, value = word.partition(":")
            if value and field in parts:
                parts[field].append(value)
            else:
                parts[""].append(word)
        return cls(
            tuple(parts["type"]), tuple(parts["agent"]), tuple(parts["section"]), tuple(parts[""])
        )

    @property
    def everything(self) -> bool:
        """Whether it keeps every event."""
        return self == EventFilter()

    def keeps_event(self, event: Mapping[str, Any]) -> bool:
        """Whether it keeps the event ``event`` (a v0.3 envelope, as its reader sees it)."""
        if event["sequenceNumber"] < self.since_sequence:
            return False
        if self.since_ms is not None and event["epochMs"] < self.since_ms:
            return False
        return self.keeps(
            event["eventType"].removeprefix("pact."),
            event.get("actorDisplay") or "",
            event.get("sectionId") or "",
        )

    def keeps_row(self, row: AuditRow) -> bool:
        """Whether it keeps the event whose row is ``row`` (as ``keeps_event`` its envelope)."""
        if row.sequence < self.since_sequence:
            return False
        if self.since_ms is not None and row.at_ms < self.since_ms:
            return False
        return self.keeps(row.type, row.actor, row.section or "")

    def keeps(self, event_type: str, actor: str, section: str) -> bool:
        """Whether it keeps an event of ``event_type`` (without ``pact.``) by ``actor`` on
        ``section`` ("" for none)."""
        if self.sections:
            title = self.titles.get(section) if self.titles is not None else None
            if not section or not any_section_matches(self.sections, section, title):
                return False
        kind, actor, section = event_type.lower(), actor.lower(), section.lower()
        if self.types and not any(t in kind for t in self.types):
            return False
        if self.agents and not any(a == actor for a in self.agents):
            return False
        return all(w in kind or w in actor or w in section for w in self.words)
