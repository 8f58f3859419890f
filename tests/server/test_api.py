"""Every v0.3 route over HTTP: the flows of seed 004, the TailorAU example agents' flows
rewritten as our own, bodies checked against the v0.3 schemas, the robustness limits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests.server.served import custodian_key, make_workspace, pact, pact_server, valid

BUDGET, RISK = "sec:plan/budget", "sec:plan/risk"
LIABILITY = "sec:contract/liability"
CONTRACT = "# Contract\n\nTerms.\n\n## Liability\n\nUncapped.\n"


def ok(answer: httpx.Response, status: int = 200) -> Any:
    assert answer.status_code == status, (answer.request.url, answer.text)
    return answer.json()


def test_the_seed_004_lifecycle(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    doc_id = make_workspace(ws)
    human = custodian_key(ws)
    with pact_server(ws) as served:
        legal_key, joined = served.join("plan", "legal", role="editor")
        finance_key, _ = served.join(doc_id, "finance")  # by id as well as by name
        assert joined["documentId"] == doc_id
        legal, finance, carol = (
            served.client(legal_key),
            served.client(finance_key),
            served.client(human),
        )
        with legal, finance, carol:
            base = "/api/pact/plan"
            content = ok(legal.get(f"{base}/content"))
            assert content["content"].startswith("# Plan") and content["documentId"] == doc_id
            sections = ok(legal.get(f"{base}/sections"))
            assert [s["sectionId"] for s in sections] == ["sec:plan", BUDGET, RISK]
            assert all(s["heading"] == s["title"] for s in sections)
            # Intend: intent, constraint, salience (bodies as v0.3's schemas have them).
            intent = {"sectionId": RISK, "goal": "Add currency risk", "category": "compliance"}
            valid("intent-request", intent)
            intent_id = ok(legal.post(f"{base}/intents", json=intent), 201)["intentId"]
            constraint = {"sectionId": RISK, "boundary": "Must reference hedging policy"}
            valid("constraint-request", constraint)
            ok(legal.post(f"{base}/constraints", json=constraint), 201)
            for who, score in ((legal, 8), (finance, 6)):
                body = {"sectionId": RISK, "score": score}
                valid("salience-request", body)
                ok(who.post(f"{base}/salience", json=body))
            heat = {r["sectionId"]: r for r in ok(finance.get(f"{base}/salience"))}
            assert heat[RISK]["max"] == 8
            assert sorted(s["score"] for s in heat[RISK]["scores"]) == [6, 8]
            assert [i["intentId"] for i in ok(finance.get(f"{base}/intents"))] == [intent_id]
            listed = ok(finance.get(f"{base}/constraints", params={"sectionId": RISK}))
            assert [c["boundary"] for c in listed] == ["Must reference hedging policy"]
            # Propose; the other agent approves; it merges (policy single).
            proposal = {
                "sectionId": RISK,
                "newContent": "## Risk\n\nRevised with currency risk.\n",
                "summary": "Added currency risk allocation",
            }
            valid("proposal-request", proposal)
            made = ok(legal.post(f"{base}/proposals", json=proposal), 201)
            valid("proposal-response", made, extra=True)
            assert made["id"] == made["proposalId"]
            assert made["activeConstraints"] == [
                {"boundary": "Must reference hedging policy", "category": ""}
            ]
            ok(finance.post(f"{base}/proposals/{made['id']}/approve"))
            after = ok(legal.get(f"{base}/proposals/{made['id']}"))
            assert after["status"] == "Merged"
            assert "currency risk" in ok(finance.get(f"{base}/content"))["content"]
            rows = ok(legal.get(f"{base}/proposals"))
            assert isinstance(rows, list) and [r["id"] for r in rows] == [made["id"]]
            for row in rows:
                valid("proposal-response", row, extra=True)
            # Lock, propose into another's lock (refused), unlock.
            lock = {"ttlSeconds": 30}
            valid("lock-request", lock)
            ok(legal.post(f"{base}/sections/{BUDGET}/lock", json=lock))
            locked = finance.post(
                f"{base}/proposals",
                json={"sectionId": BUDGET, "newContent": "## Budget\n\nMine.\n"},
            )
            assert locked.status_code == 409
            valid("error-response", locked.json())
            assert locked.json()["errors"][0]["code"] == "section.locked"
            ok(legal.delete(f"{base}/sections/{BUDGET}/lock"))
            # Object, reject, withdraw.
            second = ok(
                finance.post(
                    f"{base}/proposals",
                    json={"sectionId": BUDGET, "newContent": "## Budget\n\nTotal: 2M.\n"},
                ),
                201,
            )
            ok(legal.post(f"{base}/proposals/{second['id']}/object", json={"reason": "cap"}))
            assert ok(legal.get(f"{base}/proposals/{second['id']}"))["status"] == "Objected"
            third = ok(
                finance.post(
                    f"{base}/proposals",
                    json={"sectionId": BUDGET, "newContent": "## Budget\n\nTotal: 3M.\n"},
                ),
                201,
            )
            ok(finance.post(f"{base}/proposals/{third['id']}/withdraw", json={"reason": "no"}))
            assert ok(legal.get(f"{base}/proposals/{third['id']}"))["status"] == "Withdrawn"
            fourth = ok(
                finance.post(
                    f"{base}/proposals",
                    json={"sectionId": BUDGET, "newContent": "## Budget\n\nTotal: 4M.\n"},
                ),
                201,
            )
            ok(legal.post(f"{base}/proposals/{fourth['id']}/reject", json={"reason": "no"}))
            assert ok(legal.get(f"{base}/proposals/{fourth['id']}"))["status"] == "Rejected"
            # Comments.
            said = ok(legal.post(f"{base}/comments", json={"sectionId": RISK, "text": "hi"}), 201)
            ok(finance.post(f"{base}/comments/{said['commentId']}/resolve"))
            assert [c["text"] for c in ok(finance.get(f"{base}/comments"))] == ["hi"]
            # Escalate (``message``, as the clients send it), ask, the human answers.
            ok(finance.post(f"{base}/escalate", json={"sectionId": RISK, "message": "look"}))
            ask = {"question": "Force majeure?", "sectionId": RISK, "timeoutSeconds": 3600}
            valid("ask-human-request", ask)
            query = ok(legal.post(f"{base}/ask-human", json=ask), 201)["queryId"]
            refused = legal.post(f"{base}/human-responses/{query}", json={"response": "y"})
            assert refused.status_code == 403
            ok(carol.post(f"{base}/human-responses", json={"queryId": query, "response": "Yes"}))
            answers = ok(legal.get(f"{base}/human-responses"))
            assert [(a["queryId"], a["response"]) for a in answers] == [(query, "Yes")]
            assert ok(finance.get(f"{base}/human-responses")) == []  # legal's question
            briefing = ok(carol.get(f"{base}/escalation-briefing", params={"sectionId": RISK}))
            assert briefing["escalated"]["reason"] == "look"
            resolution = {
                "sectionId": RISK,
                "decision": "Use the template",
                "justification": "Policy 4.3",
                "override": True,
            }
            ok(carol.post(f"{base}/resolve", json=resolution))
            assert ok(carol.get(f"{base}/overrides"))  # the human's decision, recorded
            # Done and completions.
            done = {"status": "aligned", "summary": "Review complete"}
            valid("done-request", done)
            ok(legal.post(f"{base}/done", json=done))
            assert [
                (c["agentName"], c["status"]) for c in ok(carol.get(f"{base}/completions"))
            ] == [("legal", "aligned")]
            # Events: every one a v0.3 envelope; poll answers in both shapes.
            events = ok(carol.get(f"{base}/events", params={"limit": 200}))
            for event in events:
                valid("event", event)
            assert [e["sequenceNumber"] for e in events] == list(range(len(events)))
            polled = ok(legal.get(f"{base}/poll", params={"since": "evt_0", "limit": 5}))
            assert polled["items"] == polled["changes"] and len(polled["items"]) == 5
            assert polled["hasMore"] and polled["nextCursor"] == polled["cursor"] == "evt_5"
            rest = ok(legal.get(f"{base}/poll", params={"cursor": "evt_5", "limit": 200}))
            assert rest["items"][0]["sequenceNumber"] == 5 and not rest["hasMore"]
            # The /api/tap alias is the same API.
            assert ok(legal.get("/api/tap/plan/sections")) == ok(legal.get(f"{base}/sections"))
            ok(legal.delete(f"{base}/leave"))


def test_the_example_agents_flows(tmp_path: Path) -> None:
    """consensus-bot and multi-agent-negotiation (TailorAU/pact/examples), rewritten: invite
    tokens, join-token, ``apiKey``, ``heading``, ``id``, fields the clients add."""
    ws = tmp_path / "ws.pact"
    make_workspace(ws, CONTRACT, name="contract", policy="objection-based", window_s=3600)
    human = custodian_key(ws)
    with pact_server(ws) as served, served.client(human) as carol:
        base = "/api/pact/contract"
        tokens = [
            ok(carol.post(f"{base}/invites", json={"trust": "Collaborator"}), 201)["token"]
            for _ in range(3)
        ]
        # consensus-bot
        bot_key, joined = served.join("contract", "consensus-bot", token=tokens[0])
        assert joined["contextMode"] == "Full"
        with served.client(bot_key) as bot:
            sections = ok(bot.get(f"{base}/sections"))
            assert [s["heading"] for s in sections] == ["Contract", "Liability"]
            target = sections[0]
            for section in sections:
                assert (
                    ok(bot.get(f"{base}/constraints", params={"sectionId": section["sectionId"]}))
                    == []
                )
            ok(
                bot.post(
                    f"{base}/intents",
                    json={"sectionId": target["sectionId"], "goal": "clarity", "category": "e"},
                ),
                201,
            )
            made = ok(
                bot.post(
                    f"{base}/proposals",
                    json={
                        "sectionId": target["sectionId"],
                        "newContent": f"# {target['heading']}\n\nImproved content here.",
                        "summary": "Improved clarity",
                        "authorization_proof": {"sig": "x"},  # a client's own field: ignored
                    },
                ),
                201,
            )
            assert made["id"] and made["status"] == "Merged"  # nobody else to wait for
            ok(bot.post(f"{base}/done", json={"status": "aligned", "summary": "Review complete"}))
        # multi-agent-negotiation
        commercial_key, _ = served.join("contract", "commercial-agent", token=tokens[1])
        legal_key, _ = served.join("contract", "legal-agent", token=tokens[2])
        with served.client(commercial_key) as commercial, served.client(legal_key) as legal:
            for boundary in (
                "Total liability cap must not exceed $2M AUD",
                "No uncapped indemnity",
            ):
                body = {"sectionId": LIABILITY, "boundary": boundary, "category": "commercial"}
                ok(commercial.post(f"{base}/constraints", json=body), 201)
            ok(commercial.post(f"{base}/salience", json={"sectionId": LIABILITY, "score": 9}))
            found = ok(legal.get(f"{base}/constraints", params={"sectionId": LIABILITY}))
            assert len(found) == 2 and all("boundary" in c for c in found)
            ok(
                legal.post(
                    f"{base}/intents",
                    json={"sectionId": LIABILITY, "goal": "mutual indemnity", "category": "legal"},
                ),
                201,
            )
            proposal = ok(
                legal.post(
                    f"{base}/proposals",
                    json={
                        "sectionId": LIABILITY,
                        "newContent": "## Liability\n\nCapped at $2M AUD in aggregate.",
                        "summary": "Mutual indemnity with $2M aggregate cap",
                    },
                ),
                201,
            )
            ok(
                commercial.post(
                    f"{base}/proposals/{proposal['id']}/object", json={"reason": "cap per incident"}
                )
            )
            ok(
                commercial.post(
                    f"{base}/escalate", json={"sectionId": LIABILITY, "message": "cannot converge"}
                )
            )
            for who in (legal, commercial):
                ok(who.post(f"{base}/done", json={"status": "aligned", "summary": "done"}))
        done = {c["agentName"] for c in ok(carol.get(f"{base}/completions"))}
        assert done == {"consensus-bot", "commercial-agent", "legal-agent"}


def test_idempotency_key_answers_a_retry_as_the_first(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    with pact_server(ws) as served:
        key, _ = served.join("plan", "legal")
        body = {"sectionId": BUDGET, "newContent": "## Budget\n\nTotal: 2M.\n"}
        with served.client(key, headers={"Idempotency-Key": "k-1"}) as http:
            first = ok(http.post("/api/pact/plan/proposals", json=body), 201)
            again = ok(http.post("/api/pact/plan/proposals", json=body), 201)
            other = http.post(
                "/api/pact/plan/proposals", json={**body, "newContent": "## Budget\n\nX.\n"}
            )
            assert again["proposalId"] == first["proposalId"]
            assert other.status_code == 409
            assert other.json()["errors"][0]["code"] == "request.idempotency_mismatch"
            assert len(ok(http.get("/api/pact/plan/proposals"))) == 1


def test_bad_requests_are_v03_errors_and_change_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    with pact_server(ws, "--rate", "5") as served:
        key, _ = served.join("plan", "legal")
        before = json.loads(pact("doc", "log", ws, "plan", "--json").stdout)
        with served.client(key) as http:
            cases = [
                http.post("/api/pact/plan/proposals", json={"sectionId": BUDGET}),
                http.post("/api/pact/plan/proposals", content=b"{not json"),
                http.post("/api/pact/plan/salience", json={"sectionId": BUDGET, "score": 11}),
                http.post("/api/pact/plan/proposals", json={"sectionId": "sec:nope",
                                                            "newContent": "x"}),
                http.get("/api/pact/plan/poll", params={"limit": 0}),
                http.get("/api/pact/plan/poll", params={"since": "evt_x"}),
                http.get("/api/pact/plan/nothing-here"),
            ]  # fmt: skip
            for answer in cases:
                assert 400 <= answer.status_code < 500, answer.text
                valid("error-response", answer.json())
            big = http.post(
                "/api/pact/plan/proposals",
                json={"sectionId": BUDGET, "newContent": "## Budget\n\n" + "x" * 2_000_000},
            )
            assert big.status_code == 413
            valid("error-response", big.json())
            statuses = [http.get("/api/pact/plan/sections").status_code for _ in range(30)]
            assert 429 in statuses
            limited = http.get("/api/pact/plan/sections")
            if limited.status_code == 429:
                assert int(limited.headers["Retry-After"]) >= 1
                assert limited.json()["errors"][0]["code"] == "rate.limited"
        after = json.loads(pact("doc", "log", ws, "plan", "--json").stdout)
    assert len(after) == len(before)
