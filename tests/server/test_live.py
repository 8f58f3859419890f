"""Live: the event stream (SSE) and long polls see commits from any process; due work fires
while nobody writes; two servers share a file; a SIGKILL loses no acknowledged write."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path
from typing import Any

import httpx

from tests.server.served import HUMAN, make_workspace, pact, pact_server, start, until

BUDGET = "sec:plan/budget"


def sse_events(response: httpx.Response, count: int) -> list[dict[str, Any]]:
    """The first ``count`` events of an SSE response: each its id, type and data."""
    events: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    for line in response.iter_lines():
        if not line:
            if "data" in current:
                events.append(current)
                if len(events) == count:
                    return events
            current = {}
            continue
        name, _, value = line.partition(":")
        current[name] = value.lstrip(" ")
    return events


def test_the_stream_carries_other_processes_commits_and_resumes(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    with pact_server(ws) as served:
        key, _ = served.join("plan", "legal")
        with served.client(key) as http:
            with http.stream("GET", "/api/pact/plan/events/stream") as stream:
                assert stream.status_code == 200
                # Committed by another process: the CLI, as the custodian.
                ran = pact("tap", "comment", ws, "plan", "--human", HUMAN,
                           "--section", BUDGET, "--text", "from the CLI")  # fmt: skip
                assert ran.returncode == 0, ran.stderr
                (event,) = sse_events(stream, 1)
            data = json.loads(event["data"])
            assert event["event"] == "pact.comment.added" == data["eventType"]
            assert int(event["id"]) == data["sequenceNumber"]
            # Resumed with Last-Event-ID: from the next event; with ?since=: from that one.
            headers = {"Last-Event-ID": str(int(event["id"]) - 1)}
            with http.stream("GET", "/api/pact/plan/events/stream", headers=headers) as again:
                (resumed,) = sse_events(again, 1)
            assert resumed["id"] == event["id"]
            with http.stream("GET", "/api/pact/plan/events/stream?since=evt_0") as whole:
                first = sse_events(whole, 2)
            assert [e["id"] for e in first] == ["0", "1"]


def test_a_long_poll_answers_when_another_process_commits(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    with pact_server(ws) as served:
        key, _ = served.join("plan", "legal")
        with served.client(key) as http:
            head = http.get("/api/pact/plan/poll", params={"since": "evt_0", "limit": 200})
            cursor = head.json()["nextCursor"]
            empty = http.get("/api/pact/plan/poll", params={"since": cursor, "wait": 0})
            assert empty.json()["items"] == [] and empty.json()["nextCursor"] == cursor
            answer: list[httpx.Response] = []
            waiting = threading.Thread(
                target=lambda: answer.append(
                    http.get("/api/pact/plan/poll", params={"since": cursor, "wait": 30})
                )
            )
            waiting.start()
            ran = pact("tap", "comment", ws, "plan", "--human", HUMAN,
                       "--section", BUDGET, "--text", "wake up")  # fmt: skip
            assert ran.returncode == 0, ran.stderr
            waiting.join(timeout=60)
        (polled,) = answer
        types = [e["eventType"] for e in polled.json()["items"]]
        assert types == ["pact.comment.added"]


def test_due_work_fires_while_nobody_writes(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws, policy="objection-based", window_s=1)
    with pact_server(ws) as served:
        author, _ = served.join("plan", "legal")
        served.join("plan", "finance")  # in the window: the proposal waits for it
        with served.client(author) as http:
            made = http.post(
                "/api/pact/plan/proposals",
                json={"sectionId": BUDGET, "newContent": "## Budget\n\nTotal: 2M.\n"},
            ).json()
            assert made["status"] == "Pending"
            until(
                lambda: (
                    http.get(f"/api/pact/plan/proposals/{made['id']}").json()["status"] == "Merged"
                ),
                "the objection window ended with no write",
            )


def test_two_servers_on_one_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    with pact_server(ws) as one, pact_server(ws) as two:
        key, _ = one.join("plan", "legal")
        with two.client(key) as http:  # the key minted by one works on the other
            until(lambda: http.get("/api/pact/plan/content").status_code == 200, "key seen")
            with http.stream("GET", "/api/pact/plan/events/stream") as stream:
                with one.client(key) as other:
                    made = other.post(
                        "/api/pact/plan/proposals",
                        json={"sectionId": BUDGET, "newContent": "## Budget\n\nTwo.\n"},
                    )
                    assert made.status_code == 201
                (event,) = sse_events(stream, 1)
        assert json.loads(event["data"])["eventType"] == "pact.proposal.created"


def test_sigkill_under_load_loses_no_acknowledged_write(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    process, url, _ = start(ws, "--rate", "1000")
    acknowledged: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()
    try:
        keys = []
        with httpx.Client(base_url=url, timeout=30) as http:
            for n in range(8):
                joined = http.post("/api/pact/plan/join", json={"agentName": f"a{n}"}).json()
                keys.append(joined["apiKey"])

        def write(key: str) -> None:
            with httpx.Client(base_url=url, headers={"X-Api-Key": key}, timeout=30) as http:
                n = 0
                while not stop.is_set():
                    n += 1
                    try:
                        answer = http.post(
                            "/api/pact/plan/comments",
                            json={"sectionId": BUDGET, "text": f"{key[-6:]} {n}"},
                        )
                    except httpx.HTTPError:
                        return  # the server is gone: this one was never acknowledged
                    if answer.status_code == 201:
                        with lock:
                            acknowledged.append(answer.json()["commentId"])

        writers = [threading.Thread(target=write, args=(k,)) for k in keys]
        for writer in writers:
            writer.start()
        until(lambda: len(acknowledged) >= 100, "100 acknowledged writes", timeout=60)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        stop.set()
        for writer in writers:
            writer.join(timeout=60)
    finally:
        stop.set()
        if process.poll() is None:
            process.kill()
            process.wait()
    log = pact("doc", "log", ws, "plan", "--json")
    assert log.returncode == 0, log.stderr  # the file opens: nothing half-written
    verified = pact("verify", ws)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    import asyncio

    from engine.workspace import Workspace

    async def stored() -> set[str]:
        async with await Workspace.open(ws, watch=False, read_only=True) as opened:
            doc = (await opened.load_document("plan")).doc
            return set(doc.comments)

    kept = asyncio.run(stored())
    missing = [c for c in acknowledged if c not in kept]
    assert not missing, f"{len(missing)} of {len(acknowledged)} acknowledged writes lost"
    assert len(acknowledged) >= 100
