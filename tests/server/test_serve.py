"""``pact-tui serve``: starts, says where, serves its OpenAPI, stops cleanly; refuses in one
line what it cannot serve."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

from tests.processes import REPO_ROOT, as_ordinary_user
from tests.server.served import make_workspace, pact, pact_server

TAP_VERBS = {
    "join", "join-token", "leave", "get", "sections", "agents", "proposals", "propose",
    "approve", "reject", "object", "withdraw", "lock", "unlock", "comment", "comments",
    "escalate", "events", "intents", "intent", "object-intent", "constraints", "constrain",
    "withdraw-constraint", "salience", "heatmap", "poll", "watch", "ask-human",
    "human-responses", "respond", "done", "completions", "resolve", "escalation-briefing",
}  # fmt: skip


def test_serves_its_openapi_and_stops_on_sigterm(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    with pact_server(ws) as served, served.client() as http:
        pact_doc = http.get("/openapi.json").json()
        tap_doc = http.get("/openapi/tap.json").json()
    ops = {op["operationId"] for item in pact_doc["paths"].values() for op in item.values()}
    assert ops >= TAP_VERBS, TAP_VERBS - ops
    assert all(p.startswith("/api/pact/{documentId}/") for p in pact_doc["paths"])
    assert all(p.startswith("/api/tap/{documentId}/") for p in tap_doc["paths"])
    assert len(tap_doc["paths"]) == len(pact_doc["paths"])


def test_stops_cleanly_on_sigint(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    with pact_server(ws, stop=signal.SIGINT) as served, served.client() as http:
        assert http.get("/openapi.json").status_code == 200


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        ran = pact("serve", ws, "--port", port)
    assert ran.returncode == 1
    assert ran.stdout == ""
    assert ran.stderr.count("\n") == 1 and "PORT_IN_USE" in ran.stderr, ran.stderr
    assert f"port {port}" in ran.stderr


def test_an_unwritable_workspace_is_one_line(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    ws.chmod(0o444)
    argv = [sys.executable, "-m", "pact_tui", "serve", str(ws), "--port", "0"]
    ran = subprocess.run(
        as_ordinary_user(argv), cwd=REPO_ROOT, capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 1, (ran.stdout, ran.stderr)
    assert ran.stdout == ""
    assert ran.stderr.count("\n") == 1 and "cannot write" in ran.stderr.lower(), ran.stderr


def test_no_workspace_is_one_line(tmp_path: Path) -> None:
    ran = pact("serve", tmp_path / "missing.pact", "--port", "0")
    assert ran.returncode == 1
    assert ran.stderr.count("\n") == 1 and "no workspace" in ran.stderr, ran.stderr
    assert not (tmp_path / "missing.pact").exists()
