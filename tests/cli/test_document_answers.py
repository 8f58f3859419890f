"""The answers of every document command, as ``tap … --json`` and ``tap …`` print them and as the
HTTP server sends them, compared with the ones captured before command results became typed values
(``tests/fixtures/document_answers.json``): a scripted session over a fresh workspace each time,
and the events it appended (each answer an event keeps beside an idempotency key).

What changes from run to run (ids, times, tokens, API keys) is numbered by first appearance, so the
comparison is of every byte that is decided by the command and the state, in order."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.cli.conftest import cli

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "document_answers.json"
CONTRACT = "Preamble.\n\n## Risk\n\nOld risk text.\n\n## Budget\n\nTotals.\n"
VARYING = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"  # ids
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z"  # times
    r"|pact_[A-Za-z0-9_-]{20,}"  # tokens and API keys
    r"|\b[0-9a-f]{64}\b|\b[0-9a-f]{12}\b"  # token hashes, key ids
    r"|\b1\d{12}\b"  # times in milliseconds
)


class Numbered:
    """Each varying value replaced by ``<N>``, N its order of first appearance."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def __call__(self, text: str) -> str:
        return VARYING.sub(lambda m: self.seen.setdefault(m.group(), f"<{len(self.seen)}>"), text)


Step = tuple[str, ...]


def _script(ws: Path, run: Callable[..., dict[str, Any]]) -> None:
    """Every tap write, in an order where each is accepted; ``run`` runs one and returns its
    answer's fields (for the ids the next ones name)."""
    d = ("contract",)
    run("join", ws, *d, "--as", "legal", "--role", "editor", "--idempotency-key", "kj")
    run("join", ws, *d, "--as", "finance")
    run("join", ws, *d, "--as", "ops")
    legal, finance = ("--agent", "legal"), ("--agent", "finance")
    human = ("--human", "alice")
    run("heartbeat", ws, *d, *legal, "--idempotency-key", "kh")
    intent = run(
        "intent",
        ws,
        *d,
        *legal,
        "--section",
        "sec:risk",
        "--goal",
        "hedge",
        "--idempotency-key",
        "ki",
    )
    run("object", ws, *d, *finance, "--intent", intent["intentId"], "--reason", "no")
    made = run("constrain", ws, *d, *legal, "--section", "sec:risk", "--boundary", "at most 2M")
    kept = run("constrain", ws, *d, *legal, "--section", "sec:budget", "--boundary", "in EUR")
    run("object", ws, *d, *finance, "--constraint", made["constraintId"], "--reason", "no")
    run("withdraw-constraint", ws, *d, *legal, "--constraint", made["constraintId"])
    run(
        "mark-constraint",
        ws,
        *d,
        *human,
        "--constraint",
        kept["constraintId"],
        "--compatibility",
        "compatible",
        "--why",
        "fine",
    )
    run("salience", ws, *d, *legal, "--section", "sec:risk", "--score", "7")
    new = ("--content", "## Risk\\n\\nNew risk text.\\n")
    first = run(
        "propose",
        ws,
        *d,
        *legal,
        "--section",
        "sec:risk",
        *new,
        "--summary",
        "s1",
        "--idempotency-key",
        "k1",
    )
    run(
        "propose",
        ws,
        *d,
        *legal,
        "--section",
        "sec:risk",
        *new,
        "--summary",
        "s1",
        "--idempotency-key",
        "k1",
    )  # a retry: the first answer again
    run("approve", ws, *d, *finance, "--proposal", first["proposalId"])
    budget = ("--section", "sec:budget", "--content", "## Budget\\n\\nMore.\\n")
    second = run("propose", ws, *d, *finance, *budget, "--summary", "s2")
    run("reject", ws, *d, *legal, "--proposal", second["proposalId"], "--reason", "no")
    third = run("propose", ws, *d, *finance, *budget, "--summary", "s3")
    run("object", ws, *d, *legal, "--proposal", third["proposalId"], "--reason", "why")
    run("withdraw", ws, *d, *finance, "--proposal", third["proposalId"], "--reason", "gone")
    fourth = run("propose", ws, *d, *finance, *budget, "--summary", "s4")
    run("force-merge", ws, *d, *human, "--proposal", fourth["proposalId"], "--why", "now")
    run("revert", ws, *d, *legal, "--proposal", fourth["proposalId"], "--summary", "undo")
    run("lock", ws, *d, *legal, "--section", "sec:risk", "--ttl", "20", "--idempotency-key", "kl")
    run("unlock", ws, *d, *legal, "--section", "sec:risk")
    asked = run("ask-human", ws, *d, *legal, "--question", "Q?", "--section", "sec:risk")
    run("respond", ws, *d, *human, "--query", asked["queryId"], "--response", "yes")
    asked = run("ask-human", ws, *d, *legal, "--question", "Q2?")
    run("dismiss", ws, *d, *human, "--query", asked["queryId"], "--why", "no")
    run("escalate", ws, *d, *legal, "--section", "sec:risk", "--reason", "stuck")
    run(
        "resolve",
        ws,
        *d,
        *human,
        "--section",
        "sec:risk",
        "--decision",
        "keep",
        "--justification",
        "fine",
    )
    comment = run("comment", ws, *d, *legal, "--section", "sec:risk", "--text", "hm")
    run("resolve-comment", ws, *d, *finance, "--comment", comment["commentId"])
    run("trust", ws, *d, *human, "--agent", "ops", "--level", "Observer", "--why", "w")
    run("disclosure", ws, *d, *human, "--agent", "ops", "--level", "1")
    for _ in range(2):  # the retry answers the token null: it is shown once
        invite = run("invite", ws, *d, *human, "--trust", "Collaborator", "--idempotency-key", "kv")
    invite = run("invite", ws, *d, *human, "--trust", "Collaborator")
    run("join", ws, *d, "--as", "guest", "--token", invite["token"])
    other = run("invite", ws, *d, *human)
    run("revoke-invite", ws, *d, *human, other["tokenHash"][:12], "--why", "w")
    run("remove", ws, *d, *human, "--agent", "ops", "--why", "w")
    run(
        "edit",
        ws,
        *d,
        *human,
        "--section",
        "sec:budget",
        "--content",
        "## Budget\\n\\nE.\\n",
        "--why",
        "w",
    )
    run("policy", ws, *d, *human, "--window", "30", "--why", "w", "--idempotency-key", "kp")
    run("policy", ws, *d, *human, "--window", "30", "--why", "w")  # changes nothing
    run("lock-document", ws, *d, *human, "--why", "w")
    run("unlock-document", ws, *d, *human)
    run("done", ws, *d, *finance, "--status", "aligned")
    run("leave", ws, *d, *finance)


def tap_session(tmp_path: Path, form: str) -> list[str]:
    """The script's answers as ``tap`` prints them: ``json`` (``--json``) or ``text``."""
    source = tmp_path / f"contract-{form}.md"
    source.write_text(CONTRACT, encoding="utf-8")
    ws = tmp_path / f"{form}.pact"
    ran = cli("doc", "create", ws, "contract", "--from", source, "--human", "alice")
    assert ran.code == 0, ran
    printed: list[str] = []

    def run(op: str, *args: object) -> dict[str, Any]:
        ran = cli("tap", op, *args, *(("--json",) if form == "json" else ()))
        assert (ran.code, ran.err) == (0, ""), (op, ran)
        printed.append(ran.out)
        if form == "json":
            answer: dict[str, Any] = json.loads(ran.out)
            return answer
        line = ran.out.split(": ", 1)[1].split("  (")[0]
        return dict(pair.split("=", 1) for pair in line.strip().split("  "))

    _script(ws, run)
    if form == "json":  # and the events, each answer kept beside its idempotency key as it was
        ran = cli("tap", "poll", ws, "contract", "--human", "alice", "--limit", "200", "--json")
        assert (ran.code, ran.err) == (0, "") and '"hasMore": false' in ran.out, ran
        printed.append(ran.out)
    return printed


def golden() -> dict[str, Any]:
    known: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return known


def test_tap_json_answers_are_as_captured(tmp_path: Path) -> None:
    numbered = Numbered()
    assert [numbered(out) for out in tap_session(tmp_path, "json")] == golden()["tap --json"]


def test_tap_text_answers_are_as_captured(tmp_path: Path) -> None:
    numbered = Numbered()
    assert [numbered(out) for out in tap_session(tmp_path, "text")] == golden()["tap"]


def server_session(tmp_path: Path) -> list[str]:
    """The script's answers as ``pact-tui serve`` sends them: each write route's status and
    body bytes (and the reads of proposals, which share the proposal answer's shape)."""
    from tests.server.served import custodian_key, make_workspace, pact_server

    ws = tmp_path / "served.pact"
    make_workspace(ws)
    human = custodian_key(ws)
    sent: list[str] = []
    with pact_server(ws) as served:
        keys: dict[str, str] = {}
        with served.client() as anyone:
            for name, body in (("legal", {"role": "editor"}), ("finance", {}), ("ops", {})):
                joined = anyone.post("/api/pact/plan/join", json={"agentName": name, **body})
                sent.append(f"{joined.status_code} {joined.text}")
                keys[name] = joined.json()["apiKey"]
            for _ in range(2):  # a retried join: the key is not shown again
                joined = anyone.post(
                    "/api/pact/plan/join",
                    json={"agentName": "late"},
                    headers={"Idempotency-Key": "j1"},
                )
                sent.append(f"{joined.status_code} {joined.text}")
        clients = {name: served.client(key) for name, key in keys.items()}
        clients["carol"] = served.client(human)
        base = "/api/pact/plan"

        def call(who: str, method: str, path: str, **options: Any) -> Any:
            answer = clients[who].request(method, base + path, **options)
            sent.append(f"{answer.status_code} {answer.text}")
            assert answer.status_code < 300, (path, answer.text)
            return answer.json()

        budget, risk = "sec:plan/budget", "sec:plan/risk"
        try:
            call("legal", "POST", "/heartbeat")
            intent = call("legal", "POST", "/intents", json={"sectionId": risk, "goal": "g"})
            call("finance", "POST", f"/intents/{intent['intentId']}/object", json={"reason": "n"})
            made = call("legal", "POST", "/constraints", json={"sectionId": risk, "boundary": "b"})
            kept = call(
                "legal", "POST", "/constraints", json={"sectionId": budget, "boundary": "c"}
            )
            call("legal", "DELETE", f"/constraints/{made['constraintId']}")
            call("legal", "POST", f"/constraints/{kept['constraintId']}/withdraw")
            call("legal", "POST", "/salience", json={"sectionId": risk, "score": 7})
            new = {"sectionId": risk, "newContent": "## Risk\n\nNew.\n", "summary": "s1"}
            retry = {"headers": {"Idempotency-Key": "k1"}}
            first = call("legal", "POST", "/proposals", json=new, **retry)
            call("legal", "POST", "/proposals", json=new, **retry)  # a retry
            call("finance", "GET", f"/proposals/{first['proposalId']}")
            call("finance", "POST", f"/proposals/{first['proposalId']}/approve")
            more = {"sectionId": budget, "newContent": "## Budget\n\nMore.\n"}
            second = call("finance", "POST", "/proposals", json={**more, "summary": "s2"})
            call("legal", "POST", f"/proposals/{second['id']}/reject", json={"reason": "no"})
            third = call("finance", "POST", "/proposals", json={**more, "summary": "s3"})
            call("legal", "POST", f"/proposals/{third['id']}/object", json={"reason": "why"})
            call("finance", "POST", f"/proposals/{third['id']}/withdraw", json={"reason": "x"})
            fourth = call("finance", "POST", "/proposals", json={**more, "summary": "s4"})
            call("carol", "POST", f"/proposals/{fourth['id']}/force-merge", json={"why": "now"})
            call("legal", "GET", "/proposals")
            call("legal", "POST", f"/sections/{risk}/lock", json={"ttlSeconds": 20})
            call("legal", "DELETE", f"/sections/{risk}/lock")
            call("legal", "POST", f"/sections/{risk}/lock")
            call("legal", "POST", f"/sections/{risk}/unlock")
            asked = call("legal", "POST", "/ask-human", json={"question": "Q?", "sectionId": risk})
            call(
                "carol",
                "POST",
                "/human-responses",
                json={"queryId": asked["queryId"], "response": "yes"},
            )
            asked = call("legal", "POST", "/ask-human", json={"question": "Q2?"})
            call("carol", "POST", f"/human-responses/{asked['queryId']}", json={"response": "y"})
            call("legal", "POST", "/escalate", json={"sectionId": risk, "reason": "stuck"})
            call(
                "carol",
                "POST",
                "/resolve",
                json={"sectionId": risk, "decision": "keep", "justification": "fine"},
            )
            comment = call("legal", "POST", "/comments", json={"sectionId": risk, "text": "hm"})
            call("finance", "POST", f"/comments/{comment['commentId']}/resolve")
            call("carol", "POST", "/agents/ops/trust", json={"level": "Observer", "why": "w"})
            invite = call("carol", "POST", "/invites", json={"trust": "Collaborator"})
            with served.client() as anyone:
                joined = anyone.post(
                    f"{base}/join-token", json={"agentName": "guest", "token": invite["token"]}
                )
                sent.append(f"{joined.status_code} {joined.text}")
            call("carol", "POST", "/agents/ops/remove", json={"why": "w"})
            call("finance", "POST", "/done", json={"status": "aligned"})
            call("finance", "POST", "/leave")
            call("legal", "DELETE", "/leave")
        finally:
            for client in clients.values():
                client.close()
    return sent


def test_server_answers_are_as_captured(tmp_path: Path) -> None:
    numbered = Numbered()
    assert [numbered(out) for out in server_session(tmp_path)] == golden()["serve"]
