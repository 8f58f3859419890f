"""Two ``pact-tui serve`` processes on one PostgreSQL database, 100 agents split across them,
one server killed with SIGKILL mid-load: its agents retry on the other with their idempotency
keys, and every write is in the log exactly once, in order, on an unbroken chain."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from tests.server.served import make_workspace, pact, pact_server, start, until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("processes"),  # three servers at once: one such test at a time
]

AGENTS = 100
WRITES = 6  # each agent's, one after another: comments and proposals in turn
KILL_AFTER = AGENTS * WRITES // 3  # acknowledged writes before the SIGKILL
BUDGET = "sec:plan/budget"


@dataclass
class Load:
    """What the agents were told, shared by their threads."""

    urls: list[str]
    dead: set[int] = field(default_factory=set)
    acknowledged: dict[tuple[int, int], str] = field(default_factory=dict)  # (agent, write): id
    moved: int = 0  # agents that lost their server and went on with the other
    lock: threading.Lock = field(default_factory=threading.Lock)


def write(load: Load, agent: int, n: int, http: list[httpx.Client], home: int) -> int:
    """Write ``n`` of ``agent`` until a server acknowledges it: the server it is on, or the
    other one once that one is gone (the same Idempotency-Key each time). The server it ends on."""
    if n % 2 == 0:
        route, body, named = "/api/pact/plan/comments", {"sectionId": BUDGET}, "commentId"
        body["text"] = f"agent-{agent} note {n}"
    else:
        route, named = "/api/pact/plan/proposals", "id"
        body = {"sectionId": BUDGET, "newContent": f"## Budget\n\nagent-{agent} offer {n}\n"}
    headers = {"Idempotency-Key": f"agent-{agent}-write-{n}"}
    while True:
        try:
            answer = http[home].post(route, json=body, headers=headers)
        except httpx.TransportError:
            with load.lock:
                assert home in load.dead, f"server {home + 1} failed while alive"
                load.moved += 1
            home = 1 - home  # its server is gone: the same request, on the other one
            continue
        assert answer.status_code == 201, answer.text
        made: dict[str, Any] = answer.json()
        with load.lock:
            load.acknowledged[agent, n] = made[named]
        return home


def test_a_server_killed_mid_load_loses_and_repeats_no_write(postgres_url: str) -> None:
    make_workspace(postgres_url)  # type: ignore[arg-type]
    process, url, _ = start(postgres_url, "--rate", "100000")  # type: ignore[arg-type]
    try:
        with pact_server(postgres_url, "--rate", "100000") as survivor:  # type: ignore[arg-type]
            load = Load([url, survivor.url])

            def join(number: int) -> str:
                with httpx.Client(base_url=load.urls[number % 2], timeout=30) as http:
                    joined = http.post("/api/pact/plan/join", json={"agentName": f"a{number}"})
                assert joined.status_code == 201, joined.text
                key: str = joined.json()["apiKey"]
                return key

            def agent(number: int, key: str) -> None:
                home = number % 2
                headers = {"X-Api-Key": key}
                http = [httpx.Client(base_url=u, headers=headers, timeout=30) for u in load.urls]
                try:
                    for n in range(WRITES):
                        home = write(load, number, n, http, home)
                finally:
                    for client in http:
                        client.close()

            with ThreadPoolExecutor(AGENTS) as pool:
                keys = list(pool.map(join, range(AGENTS)))  # half through each server
                agents = [pool.submit(agent, number, keys[number]) for number in range(AGENTS)]
                until(lambda: len(load.acknowledged) >= KILL_AFTER, "a third written", 120)
                with load.lock:
                    load.dead.add(0)
                os.kill(process.pid, signal.SIGKILL)
                process.wait()
                for running in agents:
                    running.result(timeout=300)  # each agent's assertions, raised here
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert load.moved > 0, "the kill came after server 1's agents had finished"
    assert len(load.acknowledged) == AGENTS * WRITES

    events = asyncio.run(logged(postgres_url))
    # The log: gapless and in order, as the database ordered it.
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
    plan = [event for event in events if event["stream"] == "doc:plan"]
    assert [event["streamSeq"] for event in plan] == list(range(1, len(plan) + 1))
    assert [event["envelope"]["sequenceNumber"] for event in plan] == list(range(len(plan)))
    assert len({event["envelope"]["id"] for event in plan}) == len(plan)
    # Every write once: its key on one event, which made what its answer named.
    keyed: dict[str, list[dict[str, Any]]] = {}
    place: dict[str, int] = {}  # each key's place in the log
    for index, event in enumerate(plan):
        data = json.loads(event["envelope"]["payloadJson"])
        if "idempotencyKey" in data:
            keyed.setdefault(data["idempotencyKey"], []).append(data)
            place[data["idempotencyKey"]] = index
    assert len(keyed) == AGENTS * WRITES
    for (number, n), made in load.acknowledged.items():
        (data,) = keyed[f"agent-{number}-write-{n}"]
        assert data["entity"] == made
    # Each agent's writes in the order it made them.
    for number in range(AGENTS):
        order = [place[f"agent-{number}-write-{n}"] for n in range(WRITES)]
        assert order == sorted(order), f"agent-{number}'s writes out of order"
    verified = pact("verify", postgres_url, "--deep")
    assert verified.returncode == 0, verified.stdout + verified.stderr


async def logged(url: str) -> list[dict[str, Any]]:
    """Every event of the workspace at ``url``, as stored."""
    from engine.store.opening import open_store

    async with await open_store(url, read_only=True, watch=False) as store:
        return [
            {"seq": e.seq, "stream": e.stream, "streamSeq": e.stream_seq, "envelope": e.payload}
            for e in await store.read()
        ]
