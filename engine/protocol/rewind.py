"""A document that steps back through its events as well as forward (issue 27: time travel over
a big document).

``Rewind`` holds one ``Document`` and, for each event it applied, an undo record: what that
event changed, taken just before it was applied. One step back restores the record of the last
event (its cost is that event's, not the document's); one step forward applies the event again.
The events a rewind applies are the log's, in order, so stepping back then forward gives exactly
the states a fold from the creation gives (``tests/engine/protocol/test_rewind.py`` checks it
against that fold for random sessions).

The record is built from what the event names (its agent, proposal, section, conflict, ...) and
what its fold is known to change, in ``_touched``: the objects it may change are copied field by
field (kept as the same objects, restored in place, since other parts of the document hold
them), the entries of the document's mappings it may add or change are noted with their old
values, and the lists it appends to with their lengths. A fold that changed something this does
not note would make a step back wrong: the property test is there to catch it.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from engine.protocol.document import Document
from engine.protocol.model import STATUSES

_MISSING: Any = object()
# The document's own attributes an event may set or replace (a new dict for ``positions``).
_SCALARS = (
    "id",
    "name",
    "created_ms",
    "sequence",
    "last_event_id",
    "policy",
    "window_s",
    "strategy",
    "default_trust",
    "removal_guard",
    "framework",
    "version",
    "next_key",
    "locked",
    "positions",
    "by_key",
    "by_id",
    "quiet_timers",
)


class CannotRewind(ValueError):
    """A step back the rewind cannot take: before the first event it holds a record of."""


class _Grown:
    """A list field as it was: the same list, up to its length then (the folds only append)."""

    __slots__ = ("items", "length")

    def __init__(self, items: list[Any]) -> None:
        self.items, self.length = items, len(items)


def _fields(obj: Any) -> tuple[Any, ...]:
    """An object's fields, its dicts copied and its lists as they were (``_Grown``)."""
    values = []
    for name in obj.__slots__:
        value = getattr(obj, name)
        if type(value) is dict:
            value = dict(value)
        elif type(value) is list:
            value = _Grown(value)
        values.append(value)
    return tuple(values)


def _put_fields(obj: Any, values: tuple[Any, ...]) -> None:
    for name, value in zip(obj.__slots__, values, strict=True):
        if type(value) is _Grown:
            del value.items[value.length :]
            value = value.items
        setattr(obj, name, value)


class Undo:
    """What one event changed, to put it back: taken before the event is applied."""

    __slots__ = ("copies", "entries", "lengths", "objects", "positions", "scalars", "timers")

    def __init__(self, doc: Document) -> None:
        self.scalars = tuple(getattr(doc, name) for name in _SCALARS)
        self.objects: list[tuple[Any, tuple[Any, ...]]] = []
        self.entries: list[tuple[MutableMapping[Any, Any], Any, Any]] = []
        self.lengths: list[tuple[list[Any], int]] = []
        self.copies: list[tuple[Any, Any]] = []  # (a dict or list, its contents as they were)
        # (timers popped as due, timers pushed by the fold, quiet timers waiting again)
        self.timers: tuple[list[Any], list[Any], list[Any]] = ([], [], [])
        # (a proposal's status, its id, its place among that status's; -1: none yet)
        self.positions: list[tuple[str, str, int]] = []

    def keep(self, obj: Any) -> None:
        if obj is not None and all(obj is not o for o, _ in self.objects):  # a few at most
            self.objects.append((obj, _fields(obj)))

    def entry(self, mapping: MutableMapping[Any, Any], key: Any) -> None:
        """A mapping's entry the event may add or change (not remove)."""
        self.entries.append((mapping, key, mapping.get(key, _MISSING)))

    def length(self, items: list[Any]) -> None:
        self.lengths.append((items, len(items)))

    def copy(self, container: dict[Any, Any] | list[Any] | set[Any]) -> None:
        """A small dict, list or set the event may change anyhow: its contents kept whole."""
        contents = list(container.items()) if isinstance(container, dict) else list(container)
        self.copies.append((container, contents))

    def status(self, by_status: Mapping[str, dict[str, None]], proposal: Any) -> None:
        """A proposal's place among those of its status (``Document.set_status`` moves it to
        the end of another's)."""
        ordered = by_status.get(proposal.status, {})
        if proposal.id in ordered:
            last = next(reversed(ordered))
            place = len(ordered) - 1 if last == proposal.id else list(ordered).index(proposal.id)
        else:
            place = -1
        self.positions.append((proposal.status, proposal.id, place))

    def put_back(self, doc: Document) -> None:
        for name, value in zip(_SCALARS, self.scalars, strict=True):
            setattr(doc, name, value)
        for container, contents in reversed(self.copies):
            container.clear()
            if isinstance(container, dict):
                container.update(contents)
            elif isinstance(container, list):
                container.extend(contents)
            else:
                container.update(contents)
        for items, length in reversed(self.lengths):
            del items[length:]
        for mapping, key, value in reversed(self.entries):
            if value is _MISSING:
                mapping.pop(key, None)
            else:
                mapping[key] = value
        for obj, values in reversed(self.objects):
            _put_fields(obj, values)
        for status, pid, place in reversed(self.positions):
            for held, ordered in doc.by_status.items():
                if held != status or place < 0:
                    ordered.pop(pid, None)
            if place < 0 or pid in doc.by_status[status]:
                continue
            ordered = doc.by_status[status]
            if place >= len(ordered):
                ordered[pid] = None
            else:
                keys = list(ordered)
                keys.insert(place, pid)
                ordered.clear()
                ordered.update(dict.fromkeys(keys))
        popped, pushed, waiting = self.timers
        timers = doc.timers
        for timer in pushed + waiting:
            _remove(timers, timer)
        for timer in popped:
            heapq.heappush(timers, timer)


def _remove(heap: list[tuple[int, str, str]], timer: tuple[int, str, str]) -> None:
    """Take one ``timer`` out of a heap, keeping it a heap: the last element takes its place
    and moves up or down (``heapq``'s own sifting, as ``heapq.heapify`` uses it, for the one
    place instead of the whole heap)."""
    at = heap.index(timer)
    last = heap.pop()
    if at < len(heap):
        heap[at] = last
        heapq._siftup(heap, at)  # type: ignore[attr-defined]
        heapq._siftdown(heap, 0, at)  # type: ignore[attr-defined]


def _due(timers: list[tuple[int, str, str]], at: int) -> list[tuple[int, str, str]]:
    """The timers of the heap due at ``at`` (those ``Document.apply`` pops), without popping:
    only the part of the heap above them is looked at."""
    found, stack = [], [0] if timers else []
    while stack:
        i = stack.pop()
        if timers[i][0] <= at:
            found.append(timers[i])
            stack.extend(c for c in (2 * i + 1, 2 * i + 2) if c < len(timers))
    return found


def _touched(doc: Document, undo: Undo, event: Mapping[str, Any], data: Mapping[str, Any]) -> None:
    """Note in ``undo`` everything the fold of ``event`` may change (see the module's doc)."""
    kind = event["eventType"]
    undo.length(doc.overrides)
    undo.entry(doc.humans, event["actorDisplay"])
    key = data.get("idempotencyKey")
    if key is not None:
        undo.entry(doc.idempotency, (data.get("keyOwner", event["actorId"]) or "", key))
    actor = event["actorId"]
    if actor:
        undo.keep(doc.agents.get(actor))
    agent_id = data.get("agentId")
    section_key = data.get("sectionKey")
    section = doc.by_key.get(section_key) if section_key is not None else None
    proposals = doc.proposals
    if kind == "pact.document.snapshot":
        raise CannotRewind("a document's creation is not undone: its first state is after it")
    if kind == "pact.agent.joined":
        undo.entry(doc.agents, data["agentId"])
        undo.entry(doc.active, data["agentName"])
        if data.get("inviteHash") is not None:
            undo.keep(doc.invites.get(data["inviteHash"]))
    elif kind.startswith("pact.agent."):
        agent = doc.agents.get(agent_id) if agent_id is not None else None
        undo.keep(agent)
        if kind in ("pact.agent.left", "pact.agent.evicted", "pact.agent.removed"):
            undo.copy(doc.active)
            for held in doc.sections:
                if held.lock is not None:
                    undo.keep(held)
    elif kind == "pact.proposal.created":
        pid = data["proposalId"]
        undo.entry(proposals, pid)
        undo.entry(doc.by_author, data["agentId"])
        if data["agentId"] in doc.by_author:
            undo.length(doc.by_author[data["agentId"]])
        _status_dicts(doc, undo, section_key)
        undo.positions.append(("Pending", pid, -1))
        if data.get("reverts") is not None:
            undo.keep(proposals.get(data["reverts"]))
    elif kind.startswith("pact.proposal.") or kind == "pact.section.edited":
        ids = [data.get("proposalId"), *data.get("proposalIds", ())]
        conflict = data.get("conflictId")
        if conflict is not None:
            undo.entry(doc.conflicts, conflict)
            group = doc.conflicts.get(conflict)
            if group is not None:
                undo.keep(group)
                ids.append(group.winner)
                ids.append(data.get("winner"))
        for pid in ids:
            proposal = proposals.get(pid) if pid is not None else None
            if proposal is not None:
                undo.keep(proposal)
                _status_dicts(doc, undo, proposal.section, proposal)
        if section is not None and kind in (
            "pact.proposal.merged",
            "pact.proposal.auto-merged",
            "pact.section.edited",
        ):
            _merging(doc, undo, section, data)
    elif kind.startswith("pact.section.") or kind == "pact.escalation.human":
        undo.keep(section)
        if kind == "pact.section.classified":
            undo.copy(doc.barred)
        if kind == "pact.section.alias-expired":
            undo.copy(doc.aliases)
        if data.get("conflictId") is not None:
            undo.keep(doc.conflicts.get(data["conflictId"]))
    elif kind.startswith("pact.intent."):
        for iid in (data.get("intentId"), *data.get("supersedes", ())):
            undo.keep(doc.intents.get(iid))
        undo.entry(doc.intents, data.get("intentId"))
        if kind == "pact.intent.declared":
            _list_entry(undo, doc.intents_on, section_key)
    elif kind.startswith("pact.constraint."):
        undo.keep(doc.constraints.get(data["constraintId"]))
        undo.entry(doc.constraints, data["constraintId"])
        if kind == "pact.constraint.published":
            _list_entry(undo, doc.constraints_on, section_key)
    elif kind == "pact.salience.set":
        undo.entry(doc.salience, (agent_id, section_key))
        undo.entry(doc.salience_by_section, section_key)
        if section_key in doc.salience_by_section:
            undo.entry(doc.salience_by_section[section_key], agent_id)
    elif kind.startswith("pact.comment."):
        undo.keep(doc.comments.get(data["commentId"]))
        undo.entry(doc.comments, data["commentId"])
    elif kind.startswith("pact.human."):
        if kind == "pact.human.resolved":
            undo.entry(doc.resolutions, data["resolutionId"])
            undo.keep(section)
        else:
            undo.keep(doc.queries.get(data["queryId"]))
            undo.entry(doc.queries, data["queryId"])
    elif kind.startswith("pact.invite."):
        undo.keep(doc.invites.get(data["tokenHash"]))
        undo.entry(doc.invites, data["tokenHash"])


def _list_entry(undo: Undo, lists: MutableMapping[Any, list[Any]], key: Any) -> None:
    undo.entry(lists, key)
    if key in lists:
        undo.length(lists[key])


def _status_dicts(doc: Document, undo: Undo, section_key: Any, proposal: Any = None) -> None:
    """The indexes ``Document.set_status`` changes for a proposal on section ``section_key``."""
    for status in STATUSES:
        if status not in doc.by_status:  # made by the event: to be removed again
            undo.entry(doc.by_status, status)
    if proposal is not None:
        undo.status(doc.by_status, proposal)
    undo.entry(doc.open_by_section, section_key)
    if section_key in doc.open_by_section:
        undo.copy(doc.open_by_section[section_key])


def _merging(doc: Document, undo: Undo, section: Any, data: Mapping[str, Any]) -> None:
    """What a merge into ``section`` may change besides its proposal."""
    undo.keep(section)
    for pid in doc.open_by_section.get(section.key, ()):
        undo.keep(doc.proposals[pid])
    parts = data["parts"]
    if len(parts) > 1 or parts[0]["title"] != section.title:  # the sections are renumbered
        undo.copy(doc.sections)
        undo.copy(doc.aliases)
        for other in doc.sections:
            undo.keep(other)


class Rewind:
    """A document that steps back through the events it applied, and forward again."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.first = doc.sequence  # the earliest count of events a step back reaches
        self._undo: list[tuple[Undo, Mapping[str, Any]]] = []
        self._redo: list[Mapping[str, Any]] = []  # events undone, the next one last

    @property
    def count(self) -> int:
        """Events applied: the document is after its first ``count`` events."""
        return self.doc.sequence

    @property
    def last(self) -> int:
        """The furthest count a step forward reaches without another event."""
        return self.count + len(self._redo)

    def forward(self, event: Mapping[str, Any]) -> None:
        """Apply the next event of the document's log, keeping what undoes it."""
        if self._redo:
            if self._redo[-1]["id"] != event["id"]:
                self._redo.clear()  # another event than the one undone: what followed goes
            else:
                self._redo.pop()
        self._apply(event)

    def _apply(self, event: Mapping[str, Any]) -> None:
        from engine.protocol.envelope import payload

        doc = self.doc
        undo = Undo(doc)
        if event["sequenceNumber"] != doc.sequence:
            doc.apply(event)  # raises the fold's own error
        _touched(doc, undo, event, payload(event))
        popped = _due(doc.timers, event["epochMs"])
        pushed: list[tuple[int, str, str]] = []

        def remind(due_ms: int, kind: str, ref: str) -> None:
            pushed.append((due_ms, kind, ref))
            Document.remind(doc, due_ms, kind, ref)

        at = event["epochMs"]
        waiting = [timer for timer in doc.quiet_timers if timer[0] > at]
        doc.remind = remind  # type: ignore[method-assign]
        try:
            doc.apply(event)
        finally:
            del doc.remind
        undo.timers = (popped, pushed, waiting)
        self._undo.append((undo, event))

    def back(self) -> None:
        """One event back; ``CannotRewind`` before the first this rewind holds a record of."""
        if not self._undo:
            raise CannotRewind(
                f"the document after {self.count} events is the earliest this rewind holds"
            )
        undo, event = self._undo.pop()
        undo.put_back(self.doc)
        self._redo.append(event)

    def ahead(self) -> None:
        """One event forward again, after a step back."""
        self._apply(self._redo.pop())

    def go(self, count: int) -> bool:
        """Step to the document after ``count`` events if this rewind can without another
        event (``first <= count <= last``); False, unchanged, if not."""
        if not self.first <= count <= self.last:
            return False
        while self.count > count:
            self.back()
        while self.count < count:
            self.ahead()
        return True

    def replay(self, events: Sequence[Mapping[str, Any]]) -> None:
        for event in events:
            self.forward(event)
