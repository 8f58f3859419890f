"""Revoking an invite: a custodian takes back a token no one has used; its token joins nobody,
and only an open invite can be revoked."""

from __future__ import annotations

import dataclasses
import json

from engine.protocol import views
from engine.protocol.commands import Actor

from .conftest import Sim


def test_a_revoked_invite_joins_nobody_and_says_so() -> None:
    sim = Sim()
    made = sim.human("invite", trust="Collaborator", ttlSeconds=600)
    token, hashed = made["token"], made["tokenHash"]
    result = sim.human("revoke-invite", invite=hashed[:8], why="sent to the wrong address")
    assert result == {"tokenHash": hashed, "revoked": True}
    error = sim.refused("eve", "join", "auth.unauthorized", agentName="eve", token=token)
    assert error.metadata["reason"] == "revoked"
    [row] = views.invite_rows(sim.doc, sim.now)
    assert (row["invite"], row["state"], row["revokedBy"]) == (
        hashed[:12],
        "revoked",
        sim.human_name,
    )
    assert token not in json.dumps(sim.log)  # revoking keeps the token as unknown as before


def test_only_an_open_invite_can_be_revoked() -> None:
    sim = Sim()
    used = sim.human("invite", ttlSeconds=600)
    sim.agent("a", "join", agentName="a", token=used["token"])
    error = sim.refused(
        sim.human_actor(), "revoke-invite", "request.invalid", invite=used["tokenHash"], why="x"
    )
    assert "already used" in error.description
    expiring = sim.human("invite", ttlSeconds=60)
    sim.advance(61)
    error = sim.refused(
        sim.human_actor(), "revoke-invite", "request.invalid", invite=expiring["tokenHash"], why="x"
    )
    assert "expired" in error.description
    open_one = sim.human("invite", ttlSeconds=600)["tokenHash"]
    sim.human("revoke-invite", invite=open_one, why="changed my mind")
    error = sim.refused(
        sim.human_actor(), "revoke-invite", "request.invalid", invite=open_one, why="again"
    )
    assert "revoked" in error.description
    states = [row["state"] for row in views.invite_rows(sim.doc, sim.now)]
    assert states == ["already used", "expired", "revoked"]


def test_a_bad_invite_id_is_refused_by_name() -> None:
    sim = Sim()
    sim.human("invite", ttlSeconds=600)
    sim.refused(sim.human_actor(), "revoke-invite", "entity.not_found", invite="ffffff0", why="x")
    sim.refused(sim.human_actor(), "revoke-invite", "request.invalid", invite="ab", why="x")
    error = sim.refused(
        sim.human_actor(), "revoke-invite", "request.invalid", invite="NOT-HEX!", why="x"
    )
    assert error.metadata["field"].endswith("invite")
    sim.refused(sim.human_actor(), "revoke-invite", "request.invalid", invite="abcdef", why="")


def test_an_ambiguous_prefix_is_refused_with_the_count() -> None:
    sim = Sim()
    hashed = sim.human("invite", ttlSeconds=600)["tokenHash"]
    # A second invite whose hash shares the first ten digits (as a 6-digit id would, one day,
    # among thousands of invites): built from the first, under its own hash.
    twin = hashed[:10] + ("0" if hashed[10] != "0" else "1") + hashed[11:]
    sim.doc.invites[twin] = dataclasses.replace(sim.doc.invites[hashed], token_hash=twin)
    error = sim.refused(
        sim.human_actor(), "revoke-invite", "request.invalid", invite=hashed[:10], why="x"
    )
    assert error.metadata["matches"] == 2
    sim.human("revoke-invite", invite=hashed[:11], why="one more digit tells them apart")
    assert sim.doc.invites[hashed].revoked_by == sim.human_name
    assert sim.doc.invites[twin].revoked_by is None


def test_an_agent_may_not_revoke() -> None:
    sim = Sim()
    made = sim.human("invite", ttlSeconds=600)
    sim.agent("a", "join", agentName="a")
    sim.refused(
        Actor.agent("a"), "revoke-invite", "auth.forbidden", invite=made["tokenHash"], why="x"
    )
