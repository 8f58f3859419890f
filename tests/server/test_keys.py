"""Identities over HTTP: an agent is its API key, a custodian a custodian key; nothing a body
or a query says makes a request act as anyone else; a revoked key stops at once."""

from __future__ import annotations

import json
from pathlib import Path

from tests.server.served import (
    HUMAN,
    custodian_key,
    make_workspace,
    pact,
    pact_server,
    until,
    valid,
)

BUDGET = "sec:plan/budget"


def test_join_mints_a_key_shown_once_and_kept_as_its_hash(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    with pact_server(ws) as served:
        with served.client(headers={"Idempotency-Key": "join-1"}) as http:
            first = http.post("/api/pact/plan/join", json={"agentName": "legal", "role": "r"})
            again = http.post("/api/pact/plan/join", json={"agentName": "legal", "role": "r"})
        assert first.status_code == 201
        data = first.json()
        valid("join-response", data, extra=True)
        key = data["apiKey"]
        assert key.startswith("pact_") and len(key) > 40
        # A retried join answers as the first did, but the key is not shown again.
        assert again.json()["registrationId"] == data["registrationId"]
        assert again.json()["apiKey"] is None
        with served.client(key) as http:
            assert http.get("/api/pact/plan/content").status_code == 200
        with served.client() as http:  # Authorization: Bearer works as well
            bearer = {"Authorization": f"Bearer {key}"}
            assert http.get("/api/pact/plan/content", headers=bearer).status_code == 200
    assert key.encode() not in ws.read_bytes()
    assert all(key.encode() not in p.read_bytes() for p in tmp_path.iterdir() if p.is_file())


def test_no_unknown_or_foreign_key_is_401_with_the_v03_error(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    make_workspace(ws, name="other")
    with pact_server(ws) as served:
        key, _ = served.join("plan", "legal")
        with served.client() as http:
            for headers in ({}, {"X-Api-Key": "pact_nope"}, {"Authorization": "Bearer x"}):
                answer = http.get("/api/pact/plan/sections", headers=headers)
                assert answer.status_code == 401, answer.text
                valid("error-response", answer.json())
                assert answer.json()["errors"][0]["code"] == "auth.unauthorized"
            # An agent's key is its document's only.
            foreign = http.get("/api/pact/other/sections", headers={"X-Api-Key": key})
            assert foreign.status_code == 401
            # An unknown document says 401 before it says 404, to an unknown key.
            assert http.get("/api/pact/nothing/sections").status_code == 401
            missing = http.get("/api/pact/nothing/sections", headers={"X-Api-Key": key})
            assert missing.status_code == 401


def test_nothing_in_a_body_or_query_acts_as_another(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    with pact_server(ws) as served:
        mallory, _ = served.join("plan", "mallory")
        served.join("plan", "legal")
        body = {
            "sectionId": BUDGET,
            "newContent": "## Budget\n\nAll to mallory.\n",
            "agentName": "legal",
            "agentId": "legal",
            "actor": "human:carol",
            "human": HUMAN,
        }
        with served.client(mallory) as http:
            made = http.post("/api/pact/plan/proposals?agent=legal&human=carol", json=body)
            assert made.status_code == 201, made.text
            row = http.get(f"/api/pact/plan/proposals/{made.json()['id']}").json()
            assert row["authorName"] == "mallory" and row["authorKind"] == "AiAgent"
            # Human routes refuse an agent's key, whatever it says it is.
            for route, payload in (
                ("/api/pact/plan/agents/legal/trust", {"level": "Observer", "human": HUMAN}),
                ("/api/pact/plan/resolve", {"sectionId": BUDGET, "decision": "d",
                                            "justification": "j"}),
                ("/api/pact/plan/invites", {}),
                ("/api/pact/plan/agents/legal/remove", {"why": "x"}),
            ):  # fmt: skip
                refused = http.post(route, json=payload)
                assert refused.status_code == 403, (route, refused.text)
                valid("error-response", refused.json())
                assert refused.json()["errors"][0]["code"] == "auth.forbidden"
            assert http.get("/api/pact/plan/invites").status_code == 403
    log = pact("doc", "log", ws, "plan", "--json")
    events = json.loads(log.stdout)
    assert not any(e["type"] == "pact.agent.trust-changed" for e in events)
    assert [e["actor"] for e in events if e["type"] == "pact.proposal.created"] == ["mallory"]


def test_a_custodian_key_acts_as_its_human_until_revoked(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    key = custodian_key(ws)
    listed = json.loads(pact("key", "list", ws, "--json").stdout)
    assert [(r["kind"], r["human"], r["state"]) for r in listed] == [("custodian", HUMAN, "active")]
    assert key.encode() not in ws.read_bytes()
    with pact_server(ws) as served, served.client(key) as http:
        agent, _ = served.join("plan", "legal")
        trust = http.post(
            "/api/pact/plan/agents/legal/trust", json={"level": "Observer", "why": "t"}
        )
        assert trust.status_code == 200, trust.text
        agents = http.get("/api/pact/plan/agents").json()
        assert [(a["agentName"], a["trustLevel"]) for a in agents] == [("legal", "Observer")]
        # Revoked by another process (the CLI): refused here at once.
        revoked = pact("key", "revoke", ws, listed[0]["keyId"], "--human", HUMAN, "--why", "t")
        assert revoked.returncode == 0, revoked.stderr
        answer = http.get("/api/pact/plan/agents")
        assert answer.status_code == 401
        assert answer.json()["errors"][0]["metadata"]["reason"] == "revoked"
        # An agent's key revoked: its agent is removed, and the key opens nothing.
        listed = json.loads(pact("key", "list", ws, "--json").stdout)
        agent_key = next(r for r in listed if r["kind"] == "agent")
        ran = pact("key", "revoke", ws, agent_key["keyId"], "--human", HUMAN)
        assert ran.returncode == 0, ran.stderr
        with served.client(agent) as as_agent:
            until(
                lambda: as_agent.get("/api/pact/plan/content").status_code == 401,
                "the removed agent's key refused",
            )
    states = {r["kind"]: r["state"] for r in json.loads(pact("key", "list", ws, "--json").stdout)}
    assert states == {"custodian": "revoked", "agent": "removed"}


def test_a_key_of_an_agent_that_left_opens_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    with pact_server(ws) as served:
        key, _ = served.join("plan", "legal")
        with served.client(key) as http:
            assert http.delete("/api/pact/plan/leave").status_code == 200
            gone = http.get("/api/pact/plan/content")
        assert gone.status_code == 401
        assert gone.json()["errors"][0]["metadata"]["reason"] == "left"


def test_key_revoke_refuses_what_names_no_key(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    before = ws.read_bytes()
    for given in ("abc", "zzzzzzzz", "abcdef123456"):
        ran = pact("key", "revoke", ws, given, "--human", HUMAN)
        assert ran.returncode == 1 and ran.stderr.count("\n") == 1, ran.stderr
    assert ws.read_bytes() == before
