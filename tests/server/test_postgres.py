"""Two ``pact-tui serve`` processes on one PostgreSQL database: agents joining through either at
once are each recorded once, in one gapless order, and each server sees the other's commits."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tests.server.served import make_workspace, pact, pact_server, until

AGENTS = 20
BUDGET = "sec:plan/budget"


def test_two_servers_on_one_database_record_every_join_once(postgres_url: str) -> None:
    make_workspace(postgres_url)  # type: ignore[arg-type]
    with pact_server(postgres_url) as one, pact_server(postgres_url) as two:  # type: ignore[arg-type]
        servers = (one, two)

        def join(n: int) -> str:
            key, _ = servers[n % 2].join("plan", f"agent-{n}")
            return key

        with ThreadPoolExecutor(8) as pool:
            keys = list(pool.map(join, range(AGENTS)))

        def events(n: int) -> list[dict[str, Any]]:
            with servers[n].client(keys[n]) as http:
                answer = http.get("/api/pact/plan/events", params={"limit": 200})
            assert answer.status_code == 200, answer.text
            rows: list[dict[str, Any]] = answer.json()
            return rows

        def joined(rows: list[dict[str, Any]]) -> list[str]:
            return sorted(
                json.loads(row["payloadJson"])["agentName"]
                for row in rows
                if row["eventType"] == "pact.agent.joined"
            )

        everyone = sorted(f"agent-{n}" for n in range(AGENTS))

        def all_joins_seen(n: int) -> list[dict[str, Any]] | None:
            rows = events(n)
            return rows if joined(rows) == everyone else None

        seen = [until(lambda n=n: all_joins_seen(n), f"server {n + 1} sees every join")
                for n in (0, 1)]  # fmt: skip
    assert seen[0] == seen[1]  # the same log, in the same order, from either server
    assert [row["sequenceNumber"] for row in seen[0]] == list(range(len(seen[0])))
    ran = pact("verify", postgres_url, "--json")
    assert ran.returncode == 0, ran.stderr


def test_a_write_retried_on_the_other_server_is_made_once(postgres_url: str) -> None:
    """A client that lost the answer of a write made through one server retries it through the
    other with its Idempotency-Key: the first write's answer, and nothing new in the log."""
    make_workspace(postgres_url)  # type: ignore[arg-type]
    with pact_server(postgres_url) as one, pact_server(postgres_url) as two:  # type: ignore[arg-type]
        key, _ = one.join("plan", "legal")
        sent = {"sectionId": BUDGET, "newContent": "## Budget\n\nTwo.\n"}
        retry = {"Idempotency-Key": "offer-1"}
        with one.client(key, retry) as first, two.client(key, retry) as second:
            made = first.post("/api/pact/plan/proposals", json=sent)
            assert made.status_code == 201, made.text
            again = second.post("/api/pact/plan/proposals", json=sent)
            assert again.status_code == 201, again.text
            assert again.json()["id"] == made.json()["id"] and again.json()["retried"] is True
            other = {**sent, "newContent": "## Budget\n\nThree.\n"}
            reused = second.post("/api/pact/plan/proposals", json=other)
            assert reused.status_code == 409, reused.text
            listed = second.get("/api/pact/plan/proposals")
        assert [p["id"] for p in listed.json()] == [made.json()["id"]]
