"""Document command results as values: each reads back from the JSON form an event keeps, a retry
answers with the same value, and an answer in a shape this version does not make stays as kept."""

from __future__ import annotations

import json

import pytest

from engine.canonical import canonical_json
from engine.protocol import results as r
from engine.protocol.commands import Actor

from .conftest import Session

EVERY = [
    r.Joined("reg", "doc", "legal", None, "2026-01-01T00:00:00Z"),
    r.Left("a"),
    r.Alive("a", "2026-01-01T00:00:00Z"),
    r.Finished("a", "aligned"),
    r.IntentStatus("i", "Proposed", "2026-01-01T00:00:00Z"),
    r.IntentStatus("i", "Objected"),
    r.ConstraintStatus("k", "unknown"),
    r.ConstraintWithdrawn("k"),
    r.SalienceSet("a", "sec:x", 7),
    r.ProposalStatus("p", "doc", "sec:x", "Pending", None, "t", (r.ActiveConstraint("b", ""),)),
    r.Locked("sec:x", "t", 30),
    r.Unlocked("sec:x"),
    r.DocumentLock(True),
    r.QueryStatus("q", "open", "t"),
    r.QueryStatus("q", "answered"),
    r.Escalated("sec:x"),
    r.Resolved("res", "sec:x"),
    r.Commented("c"),
    r.CommentResolved("c"),
    r.Invited(None, "h" * 64, "t", "Full"),
    r.InviteRevoked("h" * 64),
    r.Classified("sec:x", "Internal"),
    r.ClearanceSet("a", "Internal"),
    r.TrustSet("a", "Observer"),
    r.DisclosureSet("a", 1),
    r.Removed("a"),
    r.Edited("sec:x", 3),
    r.PolicyStatus("single", 30, "first-wins", 50, changed=False),
    r.Fired(2),
    r.Made("x"),
    r.Made(None),
]


@pytest.mark.parametrize("value", EVERY, ids=lambda v: type(v).__name__)
def test_a_result_reads_back_from_its_kept_json(value: r.DocumentResult) -> None:
    kept = json.loads(canonical_json(value.to_json()))
    assert r.from_json(kept) == value


def test_every_family_has_a_shape_of_its_own() -> None:
    shapes = [frozenset(v.to_json()) for v in EVERY]
    owners = {shape: type(v) for shape, v in zip(shapes, EVERY, strict=True)}
    assert all(owners[shape] is type(v) for shape, v in zip(shapes, EVERY, strict=True))


def test_an_answer_in_an_unknown_shape_stays_as_kept() -> None:
    kept = {"proposalId": "p", "status": "Merged"}  # not a shape this version makes
    value = r.from_json(kept)
    assert value == r.Recorded(canonical_json(kept)) and value.to_json() == kept
    wrong = {"agentId": "a", "left": False}  # a known shape, a value it never holds
    assert isinstance(r.from_json(wrong), r.Recorded)


def test_a_retry_answers_with_the_first_value() -> None:
    s = Session.start()
    s.join("legal")
    actor = Actor.agent("legal")
    command = {
        "op": "propose",
        "sectionId": "sec:plan/risk",
        "newContent": "## Risk\n\nNew.\n",
        "idempotencyKey": "k",
    }
    first = s.ok(command, actor)
    again = s.ok(command, actor, after_s=1)
    assert isinstance(first.result, r.ProposalStatus) and not first.retried
    assert again.retried and again.events == [] and again.result == first.result
    # The wire form of a retry keeps the kept answer's key order, as it always did.
    assert list(again.answer()) == sorted(first.answer()) != list(first.answer())
