"""The app's agents view names an agent that joined over HTTP: its key's id, when it was last
seen, and that the key is dead once the agent is gone."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import Static

from engine.keys import key_hash
from engine.protocol.commands import Actor
from engine.workspace import Workspace
from pact_tui.server.activity import read_activity
from pact_tui.types import DocShown
from pact_tui.widgets.agents import AgentRoster, agent_detail
from tests.server.served import HUMAN, make_workspace, pact_server, until
from tests.tui.inspector import SIZE, inspector, wait_until
from tests.tui.test_document_inbox import cursor_to, opened
from tests.tui.test_document_queue import text_of


def detail(path: Path, *, leave: bool) -> str:
    async def shown() -> str:
        async with await Workspace.open(path, watch=False) as ws:
            hashed = key_hash("pact_example")
            joined = await ws.run_document(
                "plan",
                {"op": "join", "agentName": "legal", "keyHash": hashed},
                Actor.agent("legal"),
            )
            await ws.run_document(
                "plan", {"op": "join", "agentName": "local"}, Actor.agent("local")
            )
            if leave:
                await ws.run_document("plan", {"op": "leave"}, Actor.agent("legal"))
            doc = ws.document("plan")
            agent = doc.agents[joined.answer()["registrationId"]]
            now = agent.last_seen_ms + 90_000
            view = DocShown("plan", doc, doc.sequence, now, HUMAN)
            local = next(a.id for a in doc.agents.values() if a.name == "local")
            assert "over HTTP" not in agent_detail(view, local).plain
            return agent_detail(view, agent.id).plain

    return asyncio.run(shown())


def test_an_http_agent_shows_its_key_and_when_it_was_last_seen(tmp_path: Path) -> None:
    make_workspace(tmp_path / "ws.pact")
    text = detail(tmp_path / "ws.pact", leave=False)
    assert f"over HTTP · key {key_hash('pact_example')[:12]} · last seen 1m30s ago" in text
    assert "pact_example" not in text


def test_a_gone_agents_key_is_shown_dead(tmp_path: Path) -> None:
    make_workspace(tmp_path / "ws.pact")
    assert "(dead: agent gone)" in detail(tmp_path / "ws.pact", leave=True)


def test_a_key_hash_survives_a_checkpoint_and_is_never_shown_to_agents(tmp_path: Path) -> None:
    from engine.protocol import views

    path = tmp_path / "ws.pact"
    make_workspace(path)
    hashed = key_hash("pact_example")

    async def run() -> None:
        async with await Workspace.open(path, watch=False) as ws:
            command = {"op": "join", "agentName": "legal", "keyHash": hashed}
            await ws.run_document("plan", command, Actor.agent("legal"))
            await ws.run_document("plan", {"op": "join", "agentName": "peer"}, Actor.agent("peer"))
            await ws.checkpoint()
        async with await Workspace.open(path, watch=False, read_only=True) as ws:
            projection = await ws.load_document("plan")
            assert ws.checkpoint_problem is None
            doc = projection.doc
            assert doc.agent_named("legal").key_hash == hashed  # type: ignore[union-attr]
            peer = doc.agent_named("peer")
            events = await ws.document_events("plan")
            joined = [e for e in events if e["eventType"] == "pact.agent.joined"]
            assert hashed in joined[0]["payloadJson"]  # the custodian's log keeps it
            assert all(hashed not in str(views.redact(doc, peer, e)) for e in events)

    asyncio.run(run())


async def test_the_agents_view_shows_a_served_agents_label_and_last_request(
    tmp_path: Path,
) -> None:
    """A real server on the workspace, an agent joined and reading over HTTP, and the app open
    on the same file: the agents view shows the key's label (the join's name) and when the
    server last heard the key, from the file the server keeps beside the workspace."""
    ws = tmp_path / "ws.pact"
    await asyncio.to_thread(make_workspace, ws)
    with pact_server(ws) as served:
        key, joined = served.join("plan", "legal-bot")
        with served.client(key) as http:
            assert http.get("/api/pact/plan/sections").status_code == 200
        heard = await asyncio.to_thread(
            until, lambda: read_activity(ws).get(key_hash(key)), "the server to say what it heard"
        )
        assert heard.label == "legal-bot"
        app = inspector(ws, human=HUMAN)
        async with app.run_test(size=SIZE) as pilot:
            screen = await opened(pilot, "A")
            roster = screen.query_one(AgentRoster)
            await cursor_to(pilot, roster, lambda row: row is not None and row.name == "legal-bot")
            detail = screen.query_one("#agent-detail", Static)

            def said() -> str:
                return text_of(detail.content, 200)

            await wait_until(pilot, lambda: "last request" in said(), "the last request")
            assert f"key {joined['keyId']}" in said()
            assert "key label legal-bot · last request" in said()
    assert read_activity(ws) == {}  # the server's file goes with it
