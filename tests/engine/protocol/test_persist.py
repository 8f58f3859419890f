"""A document's checkpoint (``engine.protocol.persist``): JSON-native, lossless, strict.

A story document touches every record the projection holds (agents of every fate, proposals in
every state with votes, a conflict group, intents, constraints, comments, questions, a
resolution, an invite, overrides, locks, an alias, a framework, idempotency records, timers).
Its dump goes through ``json`` and back, is restored, and must dump the same; the restored
document, given the same next commands at the same times with the same ids, must emit exactly
what the original does. Malformed checkpoints are refused with a ``CheckpointError``.
"""

from __future__ import annotations

import copy
import json
import pickle
import random
from collections.abc import Callable
from typing import Any

import pytest

from engine.protocol import persist
from engine.protocol.commands import Actor
from engine.protocol.decide import Decision
from engine.protocol.document import Document
from engine.protocol.envelope import CountingIds
from engine.protocol.errors import ProtocolError
from engine.protocol.model import OPEN_STATUSES
from engine.protocol.persist import (
    DERIVED,
    FORMAT,
    CheckpointError,
    Restored,
    dump_document,
    restore_document,
)

from .conftest import Session, replay

HUMAN = Actor.human("carol")
A1, A2, A3, A4 = (Actor.agent(n) for n in ("a1", "a2", "a3", "a4"))


def story() -> Session:
    """A document with something in every table and most optional fields set."""
    s = Session.start(policy="single", strategy="vote")
    s.ok({"op": "join", "agentName": "a1", "role": "writer", "idempotencyKey": "j1"}, A1)
    s.join("a2", "a3")
    levels = ["Public", "Internal", "Confidential"]
    s.ok(
        {
            "op": "classify",
            "sectionId": "sec:notes",
            "level": "Internal",
            "framework": "corp",
            "levels": levels,
            "organisation": "acme",
        },
        HUMAN,
    )
    invite = s.ok(
        {
            "op": "invite",
            "trust": "Collaborator",
            "clearance": "Internal",
            "organisation": "acme",
            "mode": "SectionScoped",
            "sections": ["sec:plan"],
        },
        HUMAN,
    ).answer()
    s.ok({"op": "join", "agentName": "a4", "token": invite["token"]}, A4)
    s.ok({"op": "salience", "sectionId": "sec:_root", "score": 2}, A3)
    s.ok({"op": "salience", "sectionId": "sec:plan", "score": 0}, A3)
    s.ok({"op": "intent", "sectionId": "sec:plan/risk", "goal": "name the risks"}, A1)
    s.ok({"op": "intent", "sectionId": "sec:plan", "goal": "shorter", "category": "style"}, A2)
    s.ok({"op": "object", "intentId": _last(s, "intents"), "reason": "no"}, A1)
    s.ok(
        {
            "op": "constrain",
            "sectionId": "sec:plan/budget",
            "boundary": "under $2M",
            "category": "money",
            "reasoning": "the board said so",
        },
        A2,
    )
    s.ok({"op": "comment", "sectionId": "sec:plan", "text": "Needs dates."}, A1)
    s.ok({"op": "ask-human", "sectionId": "sec:plan/risk", "question": "Which risks?"}, A1)
    asked = s.ok({"op": "ask-human", "question": "Deadline?", "context": "Q3?"}, A2).answer()
    s.ok({"op": "respond", "queryId": asked["queryId"], "response": "October"}, HUMAN)
    merged = s.ok(
        {
            "op": "propose",
            "sectionId": "sec:plan/risk",
            "newContent": "## Risks\n\nLate delivery.\n\n### Mitigation\n\nStart early.\n",
            "summary": "rename and add a mitigation",
            "reasoning": "clearer",
            "idempotencyKey": "p1",
        },
        A1,
    ).answer()
    s.ok({"op": "approve", "proposalId": merged["proposalId"]}, A2, after_s=5)
    assert s.doc.section("sec:plan/risks") is not None  # renamed: the old id is an alias
    budget = {"op": "propose", "sectionId": "sec:plan/budget"}
    first = s.ok({**budget, "newContent": "## Budget\n\nOne million.\n"}, A2).answer()
    s.ok({**budget, "newContent": "## Budget\n\nTwo million.\n"}, A3)  # a conflict (vote)
    s.ok({"op": "approve", "proposalId": first["proposalId"]}, A1)
    gone = s.ok({"op": "propose", "sectionId": "sec:plan", "newContent": "# Plan\n\nx\n"}, A1)
    s.ok({"op": "withdraw", "proposalId": gone.answer()["proposalId"], "reason": "oops"}, A1)
    s.ok({"op": "lock", "sectionId": "sec:plan", "ttlSeconds": 30}, A2)
    s.ok({"op": "trust", "agent": "a3", "level": "Suggester", "why": "too eager"}, HUMAN)
    s.ok({"op": "disclosure", "agent": "a2", "level": 2}, HUMAN)
    s.ok({"op": "done", "status": "partial", "summary": "half"}, A3)
    s.ok({"op": "resolve-comment", "commentId": _last(s, "comments")}, A2)
    s.ok({"op": "policy", "policy": "objection-based", "windowSeconds": 90, "why": "faster"}, HUMAN)
    s.ok({"op": "propose", "sectionId": "sec:_root", "newContent": "Before it all.\n"}, A1)
    s.ok({"op": "escalate", "sectionId": "sec:plan/budget", "reason": "stuck"}, A2)
    s.ok({"op": "leave"}, A3)
    s.ok(
        {"op": "resolve", "sectionId": "sec:plan", "decision": "as is", "justification": "ok"},
        HUMAN,
    )
    s.ok({"op": "lock-document", "why": "review day"}, HUMAN)
    return s


def _last(s: Session, table: str) -> str:
    return list(getattr(s.doc, table))[-1]


def json_round_trip(data: Any) -> Any:
    return json.loads(json.dumps(data))


def restored(s: Session) -> Session:
    """A twin of ``s``: its document restored from a JSON checkpoint, the same ids to come."""
    ids = CountingIds(s.ids.namespace)
    ids.next = s.ids.next
    doc = restore_document(json_round_trip(dump_document(s.doc)))
    return Session(doc, ids, s.now, [])


def is_json_native(value: Any) -> bool:
    if isinstance(value, dict):
        return all(type(k) is str and is_json_native(v) for k, v in value.items())
    if type(value) is list:
        return all(is_json_native(v) for v in value)
    return value is None or type(value) in (str, int, bool)


# -- round trips ---------------------------------------------------------------------------------
def test_the_story_fills_every_table() -> None:
    doc = story().doc
    data = dump_document(doc)
    for table in (
        "agents",
        "proposals",
        "conflicts",
        "intents",
        "constraints",
        "comments",
        "queries",
        "resolutions",
        "invites",
    ):
        assert data[table]["id" if table != "invites" else "token_hash"], table
    for name in (
        *("salience", "aliases", "overrides", "idempotency", "timers", "open_by_section"),
        "humans",
    ):
        assert data[name], name
    assert data["framework"] == ["corp", ["Public", "Internal", "Confidential"]]
    assert data["locked"] is not None
    statuses = set(data["proposals"]["status"])
    assert {"Merged", "Withdrawn", "Conflict", "Pending"} <= statuses
    assert any(data["sections"]["lock"]) and any(data["sections"]["escalated"])
    assert {a.gone for a in doc.agents.values()} == {None, "left"}


def test_a_dump_is_json_native_and_survives_json() -> None:
    data = dump_document(story().doc)
    assert data["format"] == FORMAT
    assert is_json_native(data)
    assert json_round_trip(data) == data


def test_restore_gives_the_same_state() -> None:
    doc = story().doc
    data = dump_document(doc)
    back = restore_document(json_round_trip(data))
    assert dump_document(back) == data
    assert back.markdown() == doc.markdown()
    # The indexes left out of the dump are rebuilt as the fold keeps them, order included.
    assert list(back.by_key) == list(doc.by_key)
    assert list(back.by_id) == list(doc.by_id)
    assert all(back.by_key[s.key] is s and back.by_id[s.id] is s for s in back.sections)
    assert back.active == doc.active and list(back.active) == list(doc.active)
    assert dict(back.by_author) == dict(doc.by_author)
    assert list(back.by_author) == list(doc.by_author)
    assert {k: list(v) for k, v in back.by_status.items()} == {
        k: list(v) for k, v in doc.by_status.items()
    }
    assert {k: list(v) for k, v in back.open_by_section.items()} == {
        k: list(v) for k, v in doc.open_by_section.items()
    }
    assert back.timers == sorted(doc.timers)
    assert back.positions == doc.positions and back.barred == doc.barred
    assert doc.intents_on and doc.constraints_on  # the story has both
    assert dict(back.intents_on) == dict(doc.intents_on)
    assert dict(back.constraints_on) == dict(doc.constraints_on)


def test_every_field_of_a_document_is_dumped_or_derived() -> None:
    data = dump_document(Document())
    assert set(vars(Document())) == (set(data) - {"format", "layout"}) | DERIVED


def test_an_empty_document_round_trips() -> None:
    data = dump_document(Document())
    assert dump_document(restore_document(json_round_trip(data))) == data


def test_replaying_the_log_gives_the_dump_of_the_live_document() -> None:
    s = story()
    assert dump_document(replay(s.log)) == dump_document(s.doc)


def test_a_dump_shares_nothing_with_its_document_nor_a_restore_with_its_dump() -> None:
    s = story()
    data = dump_document(s.doc)
    kept = copy.deepcopy(data)
    twin = restored(s)
    source = dump_document(s.doc)
    twin_source = copy.deepcopy(source)
    twin.doc = restore_document(source)
    for session in (s, twin):
        session.ok({"op": "unlock-document"}, HUMAN, after_s=1)
        session.ok(
            {"op": "approve", "proposalId": _last(session, "proposals"), "why": "test"}, HUMAN
        )
        session.ok({"op": "propose", "sectionId": "sec:plan/budget", "newContent": "## B\n"}, A2)
    assert data == kept
    assert source == twin_source


# -- a restored document goes on as the original would -----------------------------------------
STEPS: list[tuple[float, dict[str, Any], Actor]] = [
    (1, {"op": "unlock-document"}, HUMAN),
    (0, {"op": "heartbeat"}, A1),
    (0, {"op": "approve", "proposalId": "$conflict0"}, A4),
    (
        0,
        {
            "op": "resolve",
            "sectionId": "sec:plan/budget",
            "decision": "one",
            "justification": "cheaper",
            "proposalId": "$conflict0",
        },
        HUMAN,
    ),
    (5, {"op": "propose", "sectionId": "sec:plan", "newContent": "# Plan\n\nNew plan.\n"}, A2),
    (31, {"op": "lock", "sectionId": "sec:plan/risks"}, A4),  # a2's lock has expired
    (95, {"op": "heartbeat"}, A2),  # objection windows end: auto-merges
    (0, {"op": "join", "agentName": "a3"}, A3),
    (0, {"op": "propose", "sectionId": "sec:plan/budget", "newContent": "## Budget\n\n3\n"}, A1),
    (301, {"op": "heartbeat"}, A4),  # evictions, the alias expires, the question times out
    (0, {"op": "join", "agentName": "a1"}, A1),
    (0, {"op": "propose", "sectionId": "sec:plan/budget", "newContent": "## Budget\n\n4\n"}, A1),
    (700, {"op": "heartbeat"}, A1),  # what is left falls due
]


def conflict_side(doc: Document) -> str:
    return next(p.id for p in doc.proposals.values() if p.status == "Conflict")


def test_a_restored_document_continues_exactly_as_the_original() -> None:
    original = story()
    twin = restored(original)
    side = conflict_side(original.doc)
    for after_s, command, actor in STEPS:
        filled = {k: side if v == "$conflict0" else v for k, v in command.items()}
        outcomes = [s.run(filled, actor, after_s=after_s) for s in (original, twin)]
        mine, its = outcomes
        assert type(mine) is type(its), command
        if isinstance(mine, ProtocolError):
            assert isinstance(its, ProtocolError)
            assert (mine.code, mine.fired) == (its.code, its.fired)
        else:
            assert isinstance(mine, Decision) and isinstance(its, Decision)
            assert (mine.events, mine.answer()) == (its.events, its.answer()), command
        assert dump_document(twin.doc) == dump_document(original.doc), command
    assert twin.log == original.log[-len(twin.log) :]
    kinds = {e["eventType"] for e in twin.log}
    assert {"pact.proposal.auto-merged", "pact.agent.evicted", "pact.human.timed-out"} <= kinds
    assert {"pact.section.alias-expired", "pact.section.unlocked"} <= kinds


# -- malformed checkpoints -----------------------------------------------------------------------
Mutation = Callable[[dict[str, Any]], Any]


def _set(path: str, value: Any) -> Mutation:
    """Put ``value`` at ``path`` (keys and indexes, dot-separated) of the checkpoint."""

    def mutate(data: dict[str, Any]) -> Any:
        *parents, last = path.split(".")
        target: Any = data
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if value is _DELETE:
            del target[last]
        elif isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
        return data

    return mutate


_DELETE = object()


def _first_open(data: dict[str, Any]) -> int:
    return data["proposals"]["status"].index("Conflict")


MALFORMED: dict[str, Mutation] = {
    "not an object": lambda data: [data],
    "nothing": lambda data: None,
    "no format": _set("format", _DELETE),
    "a later format": _set("format", FORMAT + 1),
    "an older format": _set("format", FORMAT - 1),
    "format as text": _set("format", str(FORMAT)),
    "format true": _set("format", True),
    "no layout": _set("layout", _DELETE),
    "a record with a field more": lambda data: data["layout"]["Vote"].append("weight") or data,
    "a missing field": _set("sequence", _DELETE),
    "an unknown field": _set("colour", "blue"),
    "a missing column": _set("proposals.status", _DELETE),
    "a column too short": lambda data: data["proposals"]["status"].pop() and data,
    "a column that is no array": _set("agents.name", "a1"),
    "a number as text": _set("sequence", "3"),
    "a float": _set("window_s", 60.0),
    "a bool for an int": _set("next_key", True),
    "an int for a bool": _set("agents.active.0", 1),
    "null for a str": _set("proposals.content.0", None),
    "a status that is none": _set("proposals.status.0", "Lost"),
    "a trust level that is none": _set("agents.trust.0", "Root"),
    "a list in a str column": _set("sections.title.1", ["Plan"]),
    "a vote of two values": lambda data: _votes(data).__setitem__("x", ["x", 1]) or data,
    "a vote with a text time": lambda data: _votes(data).__setitem__("x", ["x", "1", None]) or data,
    "votes that are no object": _set("proposals.approvals.0", [["x", 1, None]]),
    "a tuple too long": _set("framework", ["corp", ["Public"], "extra"]),
    "a str for an array": _set("proposals.quorum.0", "a2"),
    "a timer of an unknown kind": lambda data: data["timers"].append([1, "alarm", "x"]) or data,
    "a timer with a text time": lambda data: data["timers"].append(["1", "lock", "1"]) or data,
    "two proposals with one id": lambda data: _duplicate_id(data),
    "a proposal on no section": _set("proposals.section.0", 999),
    "a section whose parent is not one": _set("sections.parent.1", 999),
    "two sections with one key": _set("sections.key.1", 0),
    "a next key already given": _set("next_key", 0),
    "a negative sequence": _set("sequence", -1),
    "by_status that forgets one": lambda data: data["by_status"]["Merged"].pop() and data,
    "by_status that lists one twice": lambda data: _list_twice(data),
    "by_status that lists one under another status": lambda data: _list_elsewhere(data),
    "a section whose history misses a version": lambda data: (
        data["sections"]["history"][2].pop() and data
    ),
    "by_status with a status that is none": _set("by_status.Lost", []),
    "an open proposal not listed open": lambda data: _unlist_open(data),
    "an alias of no section": _set("aliases.sec:x", [999, 1]),
    "two joined agents with one name": _set("agents.name.1", "a1"),
    "a lock of two values": _set("sections.lock.1", ["x", "y"]),
    "an idempotency record of three values": lambda data: (
        data["idempotency"].append(["a", "k", "h"]) or data
    ),
}


def _votes(data: dict[str, Any]) -> dict[str, Any]:
    votes: dict[str, Any] = data["proposals"]["approvals"][0]
    return votes


def _duplicate_id(data: dict[str, Any]) -> dict[str, Any]:
    ids = data["proposals"]["id"]
    ids[1] = ids[0]
    return data


def _list_twice(data: dict[str, Any]) -> dict[str, Any]:
    data["by_status"]["Pending"].append(data["by_status"]["Merged"][0])
    return data


def _list_elsewhere(data: dict[str, Any]) -> dict[str, Any]:
    data["by_status"]["Pending"].append(data["by_status"]["Merged"].pop())
    return data


def _unlist_open(data: dict[str, Any]) -> dict[str, Any]:
    for _, ids in data["open_by_section"]:
        ids.clear()
    return data


@pytest.fixture(scope="module")
def checkpoint() -> dict[str, Any]:
    return dump_document(story().doc)


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_checkpoint_is_refused(name: str, checkpoint: dict[str, Any]) -> None:
    data = MALFORMED[name](copy.deepcopy(checkpoint))
    with pytest.raises(CheckpointError) as refused:
        restore_document(data)
    assert str(refused.value).startswith("checkpoint: ")
    assert isinstance(refused.value, ValueError)


def test_the_untouched_checkpoint_is_accepted(checkpoint: dict[str, Any]) -> None:
    """The mutations above break a checkpoint that restores: each refusal is their doing."""
    assert dump_document(restore_document(copy.deepcopy(checkpoint))) == checkpoint


def test_a_refusal_names_where() -> None:
    data = dump_document(story().doc)
    data["proposals"]["status"][0] = "Lost"
    with pytest.raises(
        CheckpointError, match=r"proposals\.status: 'Lost' is not one of \['Approved'"
    ):
        restore_document(data)
    data = dump_document(story().doc)
    data["proposals"]["approvals"][1]["x"] = ["x", "AiAgent", "soon", None]
    with pytest.raises(CheckpointError, match=r"proposals\.approvals\{\}\.at_ms: expected int"):
        restore_document(data)
    data = dump_document(story().doc)
    data["proposals"]["approvals"][1]["x"] = ["x", "Robot", 1, None]
    with pytest.raises(CheckpointError, match=r"proposals\.approvals\{\}\.kind: 'Robot' is not"):
        restore_document(data)


# -- closed proposals, built when read -----------------------------------------------------------
def closed_story() -> Session:
    """A document whose closed proposals have every field of a proposal set somewhere (votes of
    each kind, a quorum, salience-10 reviewers, an override, a revert, approvals dismissed, a
    conflict merged into a proposal that supersedes its sides, ...), and a few open ones."""
    s = Session.start(policy="majority", strategy="merge-both")
    s.join("a1", "a2", "a3", "a4")
    s.ok({"op": "salience", "sectionId": "sec:notes", "score": 10}, A4)

    def propose(actor: Actor, where: str, text: str, **more: Any) -> str:
        command = {"op": "propose", "sectionId": where, "newContent": text, **more}
        proposal_id: str = s.ok(command, actor).answer()["proposalId"]
        return proposal_id

    def vote(op: str, proposal_id: str, *actors: Actor, **more: Any) -> None:
        for actor in actors:
            s.ok({"op": op, "proposalId": proposal_id, **more}, actor)

    merged = propose(A1, "sec:plan/budget", "## Budget\n\nTwo.\n", summary="two", reasoning="r")
    vote("approve", merged, A2, A3)
    rejected = propose(A2, "sec:plan/risk", "## Risk\n\nNone.\n")
    vote("reject", rejected, A1, A3, reason="too rosy")
    vote("withdraw", propose(A3, "sec:plan/risk", "## Risk\n\nSome.\n"), A3, reason="later")
    vote("force-merge", propose(A1, "sec:notes", "# Notes\n\nTidy.\n"), HUMAN, why="urgent")
    stale = propose(A2, "sec:notes", "# Notes\n\nTidier.\n")
    vote("approve", stale, A1)
    edit = {"op": "edit", "sectionId": "sec:notes", "content": "# Notes\n\nEdited.\n", "why": "x"}
    s.ok(edit, HUMAN)  # the approval of the open one is dismissed
    vote("withdraw", stale, A2)
    vote("approve", s.ok({"op": "revert", "proposalId": merged}, A4).answer()["proposalId"], A1, A3)
    s.ok({"op": "policy", "policy": "objection-based", "why": "faster"}, HUMAN)
    vote("object", propose(A3, "sec:plan/budget", "## Budget\n\nThree.\n"), A1, reason="no")
    propose(A4, "sec:plan/budget", "## Budget\n\nFour.\n")
    s.ok({"op": "heartbeat"}, A1, after_s=61)  # its window ends: auto-merged
    # Two at once on a section, merged into one that supersedes them, which merges in turn.
    propose(A1, "sec:plan", "# Plan\n\nFirst.\n\nThe plan, in short.\n\n")
    propose(A2, "sec:plan", "# Plan\n\nThe plan, in short.\n\nLast.\n\n")
    s.ok({"op": "heartbeat"}, A1, after_s=61)
    propose(A3, "sec:plan/risk", "## Risk\n\nOpen.\n")
    propose(A4, "sec:notes", "# Notes\n\nOpen too.\n")
    return s


CLOSED_FIELDS = [
    *("summary", "reasoning", "quorum", "reviewers", "approvals", "rejections", "objections"),
    *("dismissed", "stale", "conflict", "merge_at_ms", "must_act", "supersedes", "reverts"),
    *("reverted_by", "merged_version", "closed_ms", "reason", "override"),
]


def _closed(doc: Document) -> list[str]:
    return [p.id for p in doc.proposals.values() if p.status not in OPEN_STATUSES]


def test_the_closed_story_sets_every_field_of_a_closed_proposal() -> None:
    doc = closed_story().doc
    closed = [doc.proposals[pid] for pid in _closed(doc)]
    assert {p.status for p in closed} == {"Merged", "Rejected", "Withdrawn", "Objected"}
    for name in CLOSED_FIELDS:
        assert any(getattr(p, name) for p in closed), name
    assert len(doc.proposals) - len(closed) == 2


def test_only_the_open_proposals_are_built_on_restoring() -> None:
    s = closed_story()
    back = restore_document(json_round_trip(dump_document(s.doc)))
    proposals = back.proposals
    assert isinstance(proposals, Restored)
    closed = _closed(s.doc)
    assert proposals.unbuilt == len(closed) > 0
    # Keys, membership and size build nothing, and are the dict's.
    assert list(proposals) == list(s.doc.proposals) == list(proposals.keys())
    assert list(reversed(proposals)) == list(reversed(s.doc.proposals))
    assert len(proposals) == len(s.doc.proposals)
    assert all(pid in proposals for pid in closed) and "no-such-id" not in proposals
    assert proposals.unbuilt == len(closed)
    proposals[closed[0]]
    assert proposals.unbuilt == len(closed) - 1
    list(proposals.values())
    assert proposals.unbuilt == 0


def _in_order(proposals: Any, ids: list[str]) -> dict[str, Any]:
    return {pid: proposals[pid] for pid in ids}


ORDERS: dict[str, Callable[[Any, list[str]], dict[str, Any]]] = {
    "one by one, in order": _in_order,
    "one by one, last first": lambda proposals, ids: _in_order(proposals, ids[::-1]),
    "one by one, shuffled": lambda proposals, ids: _in_order(
        proposals, random.Random(7).sample(ids, len(ids))
    ),
    "some one by one, then the values": lambda proposals, ids: {
        **_in_order(proposals, ids[1::3]),
        **{p.id: p for p in proposals.values()},
    },
    "the values": lambda proposals, ids: {p.id: p for p in proposals.values()},
    "the items, reversed": lambda proposals, ids: dict(reversed(proposals.items())),
    "get": lambda proposals, ids: {pid: proposals.get(pid) for pid in ids},
    "nothing": lambda proposals, ids: {},
}


@pytest.mark.parametrize("alone", [None, 2], ids=["", "all built after 2 alone"])
@pytest.mark.parametrize("order", list(ORDERS))
def test_closed_proposals_read_in_any_order_are_the_replayed_ones(
    order: str, alone: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if alone is not None:
        monkeypatch.setattr(persist, "BUILT_ALONE", alone)
    s = closed_story()
    replayed = replay(s.log)
    back = restore_document(json_round_trip(dump_document(s.doc)))
    closed = _closed(s.doc)
    seen = ORDERS[order](back.proposals, closed)
    if alone is not None and len(seen) >= alone:
        assert isinstance(back.proposals, Restored) and back.proposals.unbuilt == 0
    for pid, proposal in replayed.proposals.items():
        assert back.proposals[pid] == proposal, pid
        assert back.proposals[pid] is seen.setdefault(pid, back.proposals[pid])  # kept
    assert all(p is seen[pid] for pid, p in back.proposals.items())
    assert dump_document(back) == dump_document(replayed) == dump_document(s.doc)
    assert back.proposals == replayed.proposals


def test_a_closed_proposal_built_late_goes_on_as_the_original() -> None:
    """Commands on closed proposals (a revert marks the one it reverts; votes are refused)
    after a restore: the same events, answers and state as the original's."""
    original = closed_story()
    twin = restored(original)
    merged = [p.id for p in original.doc.proposals.values() if p.status == "Merged"]
    rejected = next(p.id for p in original.doc.proposals.values() if p.status == "Rejected")
    steps = [
        ({"op": "revert", "proposalId": merged[-1]}, A2),
        ({"op": "approve", "proposalId": rejected}, A4),
        ({"op": "withdraw", "proposalId": merged[0]}, A1),
        ({"op": "heartbeat"}, A3),
    ]
    for command, actor in steps:
        mine, its = (s.run(command, actor, after_s=1) for s in (original, twin))
        if isinstance(mine, ProtocolError):
            assert isinstance(its, ProtocolError) and mine.code == its.code, command
        else:
            assert isinstance(its, Decision) and (mine.events, mine.answer()) == (
                its.events,
                its.answer(),
            )
    assert twin.doc.proposals[merged[-1]].reverted_by is not None
    assert dump_document(twin.doc) == dump_document(original.doc)


def test_a_restored_table_is_a_mapping_like_the_dict() -> None:
    s = closed_story()
    back = restore_document(json_round_trip(dump_document(s.doc)))
    proposals = back.proposals
    closed = _closed(s.doc)
    copied = copy.deepcopy(proposals)
    assert type(copied) is dict and copied == s.doc.proposals
    assert copied[closed[0]] is not proposals[closed[0]]
    assert pickle.loads(pickle.dumps(proposals)) == s.doc.proposals
    assert proposals == s.doc.proposals and s.doc.proposals == proposals
    back = restore_document(json_round_trip(dump_document(s.doc)))
    proposals = back.proposals
    assert isinstance(proposals, Restored)
    del proposals[closed[0]]
    new = copy.deepcopy(s.doc.proposals[closed[1]])
    new.id = "new"
    proposals["new"] = new
    proposals[closed[2]] = new
    assert list(proposals) == [pid for pid in s.doc.proposals if pid != closed[0]] + ["new"]
    assert proposals.unbuilt == len(closed) - 2
    assert proposals["new"] is new and proposals[closed[2]] is new
    assert list(proposals.values())[-1] is new and proposals.unbuilt == 0
    for pid, proposal in proposals.items():
        assert proposal == (new if pid in ("new", closed[2]) else s.doc.proposals[pid]), pid
    with pytest.raises(KeyError):
        proposals[closed[0]]
    assert proposals.get(closed[0]) is None


CORRUPT_CLOSED: dict[str, tuple[str, Any]] = {
    "a vote with a text time": ("approvals", {"x": ["x", "soon", None]}),
    "a vote of two values": ("approvals", {"x": ["x", 1]}),
    "votes that are no object": ("rejections", [["x", 1, None]]),
    "an objection with a number for its reason": ("objections", {"x": ["x", 1, 2]}),
    "a vote keyed by a number": ("objections", {1: ["x", 1, None]}),
    "a quorum of numbers": ("quorum", [1]),
    "salience-10 reviewers as text": ("must_act", "a1"),
    "superseded ones as an object": ("supersedes", {"a": 1}),
    "an override of two values": ("override", ["carol", "why"]),
    "an override with a text time": ("override", ["carol", "why", "now"]),
    "null content": ("content", None),
    "a text closing time": ("closed_ms", "1"),
    "a number for a reason": ("reason", 3),
    "stale as text": ("stale", "yes"),
    "a number for the reverting proposal": ("reverted_by", 3),
    "a policy that is none": ("policy", "anarchy"),
    "a status that is none": ("status", "Lost"),
}


@pytest.mark.parametrize("name", list(CORRUPT_CLOSED))
def test_a_corrupt_closed_proposal_is_refused_on_restoring(name: str) -> None:
    """Checked with the rest when restored, though built only when read: a bad value in a
    closed proposal is a ``CheckpointError`` from ``restore_document``, not a failure later."""
    s = closed_story()
    data = json_round_trip(dump_document(s.doc))
    column, value = CORRUPT_CLOSED[name]
    table = data["proposals"]
    for row, status in enumerate(table["status"]):
        if status in OPEN_STATUSES:
            continue
        broken = copy.deepcopy(data)
        broken["proposals"][column][row] = value
        with pytest.raises(CheckpointError, match=rf"^checkpoint: proposals\.{column}"):
            restore_document(broken)
    restore_document(data)  # untouched, it restores


def _outcome(run: Callable[[], Any]) -> Any:
    try:
        return run()
    except CheckpointError as refused:
        return str(refused)


@pytest.mark.parametrize("name", ["untouched", *sorted(MALFORMED)])
def test_every_codec_checks_and_builds_in_halves_as_it_decodes(
    name: str, checkpoint: dict[str, Any]
) -> None:
    """``verify`` refuses what ``decode`` refuses, with the same words, and ``build`` (all at
    once) and ``one`` (a value at a time) give what it gives, for every field of a checkpoint:
    the halves a table built when read relies on."""
    data = copy.deepcopy(checkpoint)
    if name != "untouched":
        data = MALFORMED[name](data)
    if type(data) is not dict:
        return
    for field, codec in persist._CODECS.items():
        if field not in data:
            continue
        column = [data[field]]
        decoded = _outcome(lambda: codec.decode(copy.deepcopy(column), field))  # noqa: B023
        verified = _outcome(lambda: codec.verify(copy.deepcopy(column), field))  # noqa: B023
        if isinstance(decoded, str):
            assert verified == decoded, field
            continue
        assert verified is None, field
        assert codec.build(copy.deepcopy(column)) == decoded, field
        assert codec.one(copy.deepcopy(column[0])) == decoded[0], field
