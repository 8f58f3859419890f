"""``pact-tui doc`` and ``pact-tui tap``: the PACT v0.3 ``tailor tap`` examples run through the
command line as written (the workspace inserted before the document), what they leave in the
document and its log, refusals in the v0.3 error shape, and the information barriers."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, get_args

import pytest

from engine.protocol.commands import AnyCommand
from pact_tui.cli import build_parser
from tests import barrier_world as bw

from .conftest import REPO_ROOT, Ran, cli, cli_process, events

# The document of the examples: sec:risk and sec:budget are level-2 sections at the top, so the
# examples' "## Risk\n\n..." content fits them.
CONTRACT = "Preamble.\n\n## Risk\n\nOld risk text.\n\n## Budget\n\nTotals.\n"


def ok(*args: object) -> Ran:
    ran = cli(*args)
    assert (ran.code, ran.err) == (0, ""), ran
    return ran


def data(*args: object) -> Any:
    return ok(*args, "--json").data


def refused(*args: object, code: str) -> dict[str, Any]:
    """The command is refused with ``code``: exit 1, nothing on stdout, one v0.3 error document
    on stderr with --json, and one ``pact-tui: CODE: …`` line without."""
    ran = cli(*args, "--json")
    assert ran.code == 1, ran
    assert ran.out == ""
    assert ran.err.count("\n") == 1, ran.err
    document = json.loads(ran.err)
    [error] = document["errors"]
    assert set(error) == {"code", "description", "metadata"}
    assert error["code"] == code, error
    plain = cli(*args)
    assert plain.code == 1 and plain.out == ""
    [line] = plain.err.splitlines()
    assert line.startswith(f"pact-tui: {code}: "), line
    return dict(error)


def types(ws: Path, doc: str, since: int = 0) -> list[str]:
    return [row["type"] for row in data("doc", "log", ws, doc, "--since", since)]


def head(ws: Path, doc: str) -> int:
    return len(data("doc", "log", ws, doc))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    source = tmp_path / "contract.md"
    source.write_text(CONTRACT, encoding="utf-8")
    path = tmp_path / "w.pact"
    ok("doc", "create", path, "contract", "--from", source, "--human", "alice")
    return path


def test_doc_create_list_show_export_log(tmp_path: Path) -> None:
    source = tmp_path / "c.md"
    source.write_text(CONTRACT, encoding="utf-8")
    path = tmp_path / "new" / "w.pact"
    path.parent.mkdir()
    created = data(
        "doc",
        "create",
        path,
        "c",
        "--from",
        source,
        "--policy",
        "objection-based",
        "--window",
        "5",
        "--strategy",
        "vote",
        "--trust",
        "Suggester",
        "--human",
        "alice",
    )
    assert created["created"] == "c"
    [row] = data("doc", "list", path)
    assert (row["name"], row["sections"], row["events"]) == ("c", 3, 1)
    assert ok("doc", "export", path, "c").out == CONTRACT
    shown = data("doc", "show", path, "c")
    assert shown["policy"] == "objection-based"
    assert [s["sectionId"] for s in shown["sections"]] == ["sec:_root", "sec:risk", "sec:budget"]
    text = ok("doc", "show", path, "c").out
    assert "sec:risk  v1  Risk" in text
    assert types(path, "c") == ["pact.document.snapshot"]


def test_doc_create_that_fails_leaves_no_file(tmp_path: Path) -> None:
    source = tmp_path / "c.md"
    source.write_text(CONTRACT, encoding="utf-8")
    path = tmp_path / "w.pact"
    refused("doc", "create", path, "bad name!", "--from", source, code="document.invalid_name")
    assert not path.exists()
    refused("doc", "create", path, "c", "--from", tmp_path / "missing.md", code="request.invalid")
    assert not path.exists()


def test_doc_queries_on_a_missing_document(ws: Path) -> None:
    refused("doc", "show", ws, "nope", code="document.not_found")
    refused("tap", "get", ws, "nope", "--human", "alice", code="document.not_found")


def test_agent_lifecycle(ws: Path) -> None:
    """The v0.3 "Complete agent lifecycle" example."""
    joined = data("tap", "join", ws, "contract", "--as", "compliance-bot", "--role", "editor")
    assert joined["agentName"] == "compliance-bot"
    ok("tap", "join", ws, "contract", "--as", "reviewer")
    me = ("--agent", "compliance-bot")
    assert ok("tap", "get", ws, "contract", *me).out == CONTRACT
    ids = [row["sectionId"] for row in data("tap", "sections", ws, "contract", *me)]
    assert ids == ["sec:_root", "sec:risk", "sec:budget"]
    intent = data(
        "tap",
        "intent",
        ws,
        "contract",
        *me,
        "--section",
        "sec:risk",
        "--goal",
        "Add currency risk language",
        "--category",
        "compliance",
    )
    assert intent["status"] == "Proposed"
    ok(
        "tap",
        "constrain",
        ws,
        "contract",
        *me,
        "--section",
        "sec:risk",
        "--boundary",
        "Must reference hedging policy",
    )
    proposal = data(
        "tap",
        "propose",
        ws,
        "contract",
        *me,
        "--section",
        "sec:risk",
        "--content",
        "## Risk\\n\\nRevised with currency risk...",
        "--summary",
        "Added currency risk allocation",
    )
    assert proposal["status"] == "Pending"
    assert proposal["activeConstraints"] == [
        {"boundary": "Must reference hedging policy", "category": ""}
    ]
    # 5. Vote (other agents): the single-approver policy merges.
    voted = data("tap", "approve", ws, "contract", proposal["proposalId"], "--agent", "reviewer")
    assert voted["status"] == "Merged"
    assert ok("doc", "export", ws, "contract").out == (
        "Preamble.\n\n## Risk\n\nRevised with currency risk...\n\n## Budget\n\nTotals.\n"
    )
    ok("tap", "done", ws, "contract", *me, "--status", "aligned", "--summary", "Review complete")
    ok("tap", "leave", ws, "contract", *me)
    assert types(ws, "contract") == [
        "pact.document.snapshot",
        "pact.agent.joined",
        "pact.agent.joined",
        "pact.intent.declared",
        "pact.constraint.published",
        "pact.proposal.created",
        "pact.proposal.approved",
        "pact.proposal.merged",
        "pact.agent.completed",
        "pact.agent.left",
    ]
    refused("tap", "leave", ws, "contract", *me, code="agent.not_joined")


def test_agent_from_the_environment(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PACT_AGENT", "env-bot")
    ok("tap", "join", ws, "contract")
    rows = data("doc", "show", ws, "contract")["agents"]
    assert [a["name"] for a in rows] == ["env-bot"]
    ok("tap", "salience", ws, "contract", "--section", "sec:risk", "--score", "3")
    monkeypatch.delenv("PACT_AGENT")
    refused(
        "tap",
        "salience",
        ws,
        "contract",
        "--section",
        "sec:risk",
        "--score",
        "3",
        code="request.invalid",
    )


def test_ics_pre_alignment(ws: Path) -> None:
    """The "ICS pre-alignment flow": intents, salience, constraints; the briefing shows them."""
    for name in ("Agent-Legal", "Agent-Finance"):
        ok("tap", "join", ws, "contract", "--as", name)
    legal, finance = ("--agent", "Agent-Legal"), ("--agent", "Agent-Finance")
    risk = ("--section", "sec:risk")
    ok(
        "tap",
        "intent",
        ws,
        "contract",
        *legal,
        *risk,
        "--goal",
        "Need currency risk language",
        "--category",
        "compliance",
    )
    ok("tap", "salience", ws, "contract", *legal, *risk, "--score", "8")
    ok(
        "tap",
        "constrain",
        ws,
        "contract",
        *legal,
        *risk,
        "--boundary",
        "Must reference hedging policy",
    )
    ok("tap", "salience", ws, "contract", *finance, *risk, "--score", "6")
    ok(
        "tap",
        "constrain",
        ws,
        "contract",
        *finance,
        *risk,
        "--boundary",
        "Must not name specific instruments",
        "--reasoning",
        "desk strategy is private",
    )
    assert types(ws, "contract", 3) == [
        "pact.intent.declared",
        "pact.salience.set",
        "pact.constraint.published",
        "pact.salience.set",
        "pact.constraint.published",
    ]
    rows = data("tap", "sections", ws, "contract", *legal)
    assert {r["sectionId"]: r["maxSalience"] for r in rows}["sec:risk"] == 8
    briefing = data("tap", "escalation-briefing", ws, "contract", *legal, *risk)
    assert [i["goal"] for i in briefing["intents"]] == ["Need currency risk language"]
    boundaries = {c["boundary"] for c in briefing["constraints"]}
    assert boundaries == {"Must reference hedging policy", "Must not name specific instruments"}
    # An agent's poll never carries a constraint's reasoning; the human's log does.
    polled = json.dumps(data("tap", "poll", ws, "contract", *legal))
    assert "desk strategy is private" not in polled
    human = json.dumps(data("tap", "poll", ws, "contract", "--human", "alice"))
    assert "desk strategy is private" in human


def tick_until_due(ws: Path, doc: str, proposal: str, *, merge: bool) -> int:
    """``tap tick`` again and again until the proposal's auto-merge is due (``merge``) or once
    (not ``merge``), checking each answer against the scheduled ``mergeAt``: a tick asked
    before it fires nothing, a tick asked after it fires the merge. Returns what fired last."""
    scheduled = [
        json.loads(event.payload["payloadJson"])
        for event in events(ws)
        if event.type == "pact.proposal.auto-merge-scheduled"
    ]
    [merge_at] = [each["mergeAt"] for each in scheduled if each["proposalId"] == proposal]
    deadline = time.monotonic() + 60
    while True:
        asked = time.time() * 1000
        fired = int(data("tap", "tick", ws, doc)["fired"])
        if fired:
            assert time.time() * 1000 >= merge_at, "merged before its window was over"
            return fired
        assert asked < merge_at, "a due merge was not fired"
        if not merge:
            return fired
        assert time.monotonic() < deadline
        time.sleep(0.05)  # polling the wall clock the CLI reads, with a deadline


def test_objection_based_merge(tmp_path: Path) -> None:
    """The "Objection-based flow", with a 3-second window. The example's content "New risk
    language..." has no heading: this engine refuses content that would not keep the section's
    heading (content.invalid), so the flow proposes "## Risk\\n\\nNew risk language...".

    The CLI reads the wall clock, so the window's end is read from the scheduled event and every
    tick is checked against it: none fires before it, the first after it fires."""
    source = tmp_path / "c.md"
    source.write_text(CONTRACT, encoding="utf-8")
    path = tmp_path / "w.pact"
    ok(
        "doc",
        "create",
        path,
        "c",
        "--from",
        source,
        "--policy",
        "objection-based",
        "--window",
        "3",
        "--human",
        "alice",
    )
    ok("tap", "join", path, "c", "--as", "legal")
    ok("tap", "join", path, "c", "--as", "finance")
    legal, risk = ("--agent", "legal"), ("--section", "sec:risk")
    before = head(path, "c")
    refused(
        "tap",
        "propose",
        path,
        "c",
        *legal,
        *risk,
        "--content",
        "New risk language...",
        "--summary",
        "Added currency risk",
        code="content.invalid",
    )
    assert head(path, "c") == before
    first = data(
        "tap",
        "propose",
        path,
        "c",
        *legal,
        *risk,
        "--content",
        "## Risk\\n\\nNew risk language...",
        "--summary",
        "Added currency risk",
    )
    assert tick_until_due(path, "c", first["proposalId"], merge=False) == 0
    objected = data(
        "tap",
        "object",
        path,
        "c",
        "--agent",
        "finance",
        "--proposal",
        first["proposalId"],
        "--reason",
        "Violates constraint: names specific instruments",
    )
    assert objected["status"] == "Objected"
    # The author revises with a new proposal; silence for the window is consent.
    revised = data(
        "tap",
        "propose",
        path,
        "c",
        *legal,
        *risk,
        "--content",
        "## Risk\\n\\nRevised risk language.",
        "--summary",
        "Revised",
    )
    assert tick_until_due(path, "c", revised["proposalId"], merge=True) == 1
    assert data("tap", "tick", path, "c") == {"fired": 0}  # nothing twice
    assert "## Risk\n\nRevised risk language.\n\n## Budget" in ok("doc", "export", path, "c").out
    assert types(path, "c", before) == [
        "pact.proposal.created",
        "pact.proposal.auto-merge-scheduled",
        "pact.proposal.objected",
        "pact.proposal.created",
        "pact.proposal.auto-merge-scheduled",
        "pact.proposal.auto-merged",
    ]


def test_section_locking(ws: Path) -> None:
    """The "Lock a section" example, with a second agent refused while the lock is held."""
    ok("tap", "join", ws, "contract", "--as", "drafter")
    ok("tap", "join", ws, "contract", "--as", "other")
    me, budget = ("--agent", "drafter"), ("--section", "sec:budget")
    locked = data("tap", "lock", ws, "contract", *me, *budget, "--ttl", "30")
    assert locked["ttlSeconds"] == 30
    [row] = [r for r in data("doc", "show", ws, "contract")["sections"] if r["title"] == "Budget"]
    assert row["lock"]["holder"] == "drafter"
    assert "locked by agent drafter" in ok("doc", "show", ws, "contract").out
    before = head(ws, "contract")
    error = refused(
        "tap",
        "propose",
        ws,
        "contract",
        "--agent",
        "other",
        *budget,
        "--content",
        "## Budget\\n\\nMine.",
        code="section.locked",
    )
    assert error["metadata"]["lockedBy"] == "drafter"
    assert head(ws, "contract") == before  # a refused command appends nothing
    proposal = data(
        "tap",
        "propose",
        ws,
        "contract",
        *me,
        *budget,
        "--content",
        "## Budget\\n\\nUpdated budget...",
        "--summary",
        "Revised totals",
    )
    assert proposal["status"] == "Pending"
    [row] = [r for r in data("tap", "sections", ws, "contract", *me) if r["title"] == "Budget"]
    assert row["pending"] == 1
    ok("tap", "unlock", ws, "contract", *me, *budget)
    assert types(ws, "contract", 3) == [
        "pact.section.locked",
        "pact.proposal.created",
        "pact.section.unlocked",
    ]
    refused("tap", "lock", ws, "contract", *me, *budget, "--ttl", "61", code="request.invalid")


def test_escalation(ws: Path) -> None:
    """The "Escalation flow": ask-human, respond, a binding resolution."""
    ok("tap", "join", ws, "contract", "--as", "legal")
    asked = data(
        "tap",
        "ask-human",
        ws,
        "contract",
        "--agent",
        "legal",
        "--question",
        "Should we include force majeure in the risk clause?",
        "--section",
        "sec:risk",
        "--timeout",
        "3600",
    )
    assert asked["status"] == "open"
    # An agent may not answer: respond is the human's.
    refused(
        "tap",
        "respond",
        ws,
        "contract",
        "--agent",
        "legal",
        "--query",
        asked["queryId"],
        "--response",
        "yes",
        code="auth.forbidden",
    )
    answered = data(
        "tap",
        "respond",
        ws,
        "contract",
        "--human",
        "alice",
        "--query",
        asked["queryId"],
        "--response",
        "Yes, include force majeure with standard wording",
    )
    assert answered["status"] == "answered"
    resolution = data(
        "tap",
        "resolve",
        ws,
        "contract",
        "--human",
        "alice",
        "--section",
        "sec:risk",
        "--decision",
        "Use standard force majeure clause from template v2",
        "--justification",
        "Per legal policy 4.3",
        "--override",
    )
    assert resolution["sectionId"] == "sec:risk"
    briefing = data(
        "tap", "escalation-briefing", ws, "contract", "--human", "alice", "--section", "sec:risk"
    )
    assert briefing["questions"][0]["status"] == "answered"
    assert types(ws, "contract", 2) == [
        "pact.human.asked",
        "pact.human.responded",
        "pact.human.resolved",
    ]


def test_errors_have_the_v03_shape_and_append_nothing(ws: Path) -> None:
    ok("tap", "join", ws, "contract", "--as", "bot")
    before = head(ws, "contract")
    refused("tap", "join", ws, "contract", "--as", "bot", code="agent.already_joined")
    refused("tap", "get", ws, "contract", "--agent", "stranger", code="agent.not_joined")
    refused(
        "tap",
        "intent",
        ws,
        "contract",
        "--agent",
        "bot",
        "--section",
        "sec:nope",
        "--goal",
        "g",
        code="section.not_found",
    )
    refused(
        "tap", "approve", ws, "contract", "no-such", "--agent", "bot", code="proposal.not_found"
    )
    refused(
        "tap",
        "policy",
        ws,
        "contract",
        "--agent",
        "bot",
        "--policy",
        "auto",
        "--why",
        "faster",
        code="auth.forbidden",
    )
    refused(
        "tap",
        "trust",
        ws,
        "contract",
        "--agent",
        "bot",
        "--level",
        "Autonomous",
        code="request.invalid",
    )  # no actor: --agent names the target
    refused(
        "tap", "poll", ws, "contract", "--agent", "bot", "--limit", "201", code="request.invalid"
    )
    refused(
        "tap", "poll", ws, "contract", "--agent", "bot", "--since", "evt_x", code="request.invalid"
    )
    refused(
        "tap",
        "propose",
        ws,
        "contract",
        "--agent",
        "bot",
        "--section",
        "sec:risk",
        code="request.invalid",
    )
    assert head(ws, "contract") == before


def test_a_cursor_or_a_limit_out_of_range_is_refused_and_appends_nothing(ws: Path) -> None:
    """Issue 23: a cursor past any sequence number was INTERNAL (OverflowError), and a negative
    --limit returned everything."""
    ok("tap", "join", ws, "contract", "--as", "bot")
    before = head(ws, "contract")
    error = refused(
        "tap", "poll", ws, "contract", "--agent", "bot", "--since",
        "evt_99999999999999999999999", code="request.invalid",
    )  # fmt: skip
    assert error["description"].startswith("--since 'evt_99999999999999999999999': ")
    assert "outside the engine's range" in error["description"]
    for option in (["--limit", "-5"], ["--limit", "0"], ["--since", "-1"]):
        error = refused("doc", "log", ws, "contract", *option, code="request.invalid")
        assert error["description"].startswith(" ".join(option) + ": ")
    assert head(ws, "contract") == before


def test_an_empty_or_blank_name_is_refused_and_appends_nothing(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 23: an empty or blank --as, --agent, --human or PACT_AGENT acted as somebody."""
    ok("tap", "join", ws, "contract", "--as", "bot")
    before = head(ws, "contract")
    for blank in ("", "  ", "\t"):
        for option, command in (
            ("--as", ["tap", "join", ws, "contract", "--as", blank]),
            ("--human", ["tap", "sections", ws, "contract", "--human", blank]),
            ("--human", ["tap", "comment", ws, "contract", "--human", blank,
                         "--section", "sec:risk", "--text", "hi"]),
            ("--agent", ["tap", "get", ws, "contract", "--agent", blank]),
        ):  # fmt: skip
            error = refused(*command, code="request.invalid")
            assert error["description"] == f"{option} {blank!r}: a name cannot be empty or blank"
        monkeypatch.setenv("PACT_AGENT", blank or " ")
        refused("tap", "get", ws, "contract", code="request.invalid")
        monkeypatch.delenv("PACT_AGENT")
    assert head(ws, "contract") == before
    new = ws.parent / "new.pact"
    source = ws.parent / "plan.md"
    source.write_text("# Plan\n")
    refused("doc", "create", new, "plan", "--from", source, "--human", " ", code="request.invalid")
    assert not new.exists()


def test_a_file_to_read_is_a_regular_file_of_at_most_16_mib(ws: Path, tmp_path: Path) -> None:
    """``/dev/zero`` as ``--from`` or ``--content-file`` was read until memory ran out, and a
    FIFO with no writer blocked the command for good: only a regular file is read, of at most
    16 MiB, and the rest is refused in one line that says what the file is."""
    ok("tap", "join", ws, "contract", "--as", "bot")
    before = head(ws, "contract")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.md"
    with big.open("wb") as file:
        file.truncate(16 * 1024 * 1024 + 1)  # sparse: no memory, no disk
    exactly = tmp_path / "exactly.md"
    with exactly.open("wb") as file:
        file.truncate(16 * 1024 * 1024)
    cases = {
        "/dev/zero": "a character device, not a regular file",
        str(fifo): "a FIFO (named pipe), not a regular file",
        str(tmp_path): "a folder, not a regular file",
        str(big): "it holds 16,777,217 bytes, more than the 16 MiB a file read here may hold",
        str(tmp_path / "missing.md"): "No such file or directory",
    }
    new = tmp_path / "new.pact"
    for name, why in cases.items():
        for option, command in (
            ("--content-file", ["tap", "propose", ws, "contract", "--agent", "bot",
                                "--section", "sec:risk"]),
            ("--from", ["doc", "create", new, "plan"]),
        ):  # fmt: skip
            # A process of its own, with a time limit: the FIFO blocked forever.
            ran = cli_process(*command, option, name)
            assert (ran.code, ran.out) == (1, ""), ran
            [line] = ran.err.splitlines()
            said = f"pact-tui: request.invalid: cannot read {option} {name!r}: {why}"
            assert line.startswith(said), line
    assert head(ws, "contract") == before
    assert not new.exists()
    # 16 MiB exactly is read, and then refused by the engine: it does not start with a heading.
    refused(
        "tap", "propose", ws, "contract", "--agent", "bot", "--section", "sec:risk",
        "--content-file", exactly, code="content.invalid",
    )  # fmt: skip
    assert head(ws, "contract") == before


def test_a_policy_that_changes_nothing_appends_nothing_and_says_so(ws: Path) -> None:
    shown = data("doc", "show", ws, "contract")["policy"]
    before = head(ws, "contract")
    for options in ([], ["--policy", shown]):
        ran = ok("tap", "policy", ws, "contract", "--human", "alice", *options, "--why", "same")
        assert ran.out.rstrip("\n").endswith("changed=false  (nothing changed: nothing appended)")
        assert head(ws, "contract") == before
    other = "majority" if shown != "majority" else "single"
    changed = data("tap", "policy", ws, "contract", "--human", "alice", "--policy", other,
                   "--why", "more voices")  # fmt: skip
    assert (changed["policy"], changed["changed"]) == (other, True)
    assert types(ws, "contract")[before:] == ["pact.document.policy-changed"]


def test_the_removal_guard_is_set_like_the_policy_and_a_bad_one_appends_nothing(
    ws: Path,
) -> None:
    before = head(ws, "contract")
    refused("tap", "policy", ws, "contract", "--human", "alice", "--removal-guard", "101",
            "--why", "x", code="request.invalid")  # fmt: skip
    assert head(ws, "contract") == before
    changed = data("tap", "policy", ws, "contract", "--human", "alice", "--removal-guard", "80",
                   "--why", "only near-total removals wait")  # fmt: skip
    assert (changed["removalGuard"], changed["changed"]) == (80, True)
    assert types(ws, "contract")[before:] == ["pact.document.policy-changed"]


def test_idempotency_key(ws: Path) -> None:
    ok("tap", "join", ws, "contract", "--as", "bot")
    args = (
        "tap",
        "comment",
        ws,
        "contract",
        "--agent",
        "bot",
        "--section",
        "sec:risk",
        "--text",
        "looks fine",
        "--idempotency-key",
        "k1",
    )
    first = data(*args)
    # The engine answers a retry of a non-proposal command with {"id": …} (the same id, under
    # another key than the first answer's "commentId"): compare the ids.
    assert list(data(*args).values()) == list(first.values())
    assert types(ws, "contract").count("pact.comment.added") == 1
    propose = (
        "tap",
        "propose",
        ws,
        "contract",
        "--agent",
        "bot",
        "--section",
        "sec:risk",
        "--content",
        "## Risk\\n\\nNew.",
        "--idempotency-key",
        "k2",
    )
    assert data(*propose) == data(*propose)
    assert types(ws, "contract").count("pact.proposal.created") == 1
    refused(
        "tap",
        "comment",
        ws,
        "contract",
        "--agent",
        "bot",
        "--section",
        "sec:risk",
        "--text",
        "other",
        "--idempotency-key",
        "k1",
        code="request.idempotency_mismatch",
    )


def test_poll_cursor(ws: Path) -> None:
    ok("tap", "join", ws, "contract", "--as", "bot")
    for score in range(5):
        ok(
            "tap",
            "salience",
            ws,
            "contract",
            "--agent",
            "bot",
            "--section",
            "sec:risk",
            "--score",
            score,
        )
    page = data("tap", "poll", ws, "contract", "--agent", "bot", "--since", "evt_0", "--limit", "3")
    assert [e["sequenceNumber"] for e in page["items"]] == [0, 1, 2]
    assert (page["nextCursor"], page["hasMore"]) == ("evt_3", True)
    page = data("tap", "poll", ws, "contract", "--agent", "bot", "--since", page["nextCursor"])
    assert [e["sequenceNumber"] for e in page["items"]] == [3, 4, 5, 6]
    assert (page["nextCursor"], page["hasMore"]) == ("evt_7", False)
    empty = data("tap", "poll", ws, "contract", "--agent", "bot", "--since", "evt_7")
    assert empty == {"items": [], "nextCursor": "evt_7", "hasMore": False}


def test_content_file_and_human_edit(ws: Path, tmp_path: Path) -> None:
    text = tmp_path / "risk.md"
    text.write_text("## Risk\n\nFrom a file, with a \\n kept.\n", encoding="utf-8")
    ok(
        "tap",
        "edit",
        ws,
        "contract",
        "--human",
        "alice",
        "--section",
        "sec:risk",
        "--content-file",
        text,
        "--why",
        "house style",
    )
    assert "From a file, with a \\n kept." in ok("doc", "export", ws, "contract").out


# -- information barriers ---------------------------------------------------------------------
TITLE_CANARY = "CANARY-TITLE-7Q"  # its slug (in the section id) is lowercase
CONTENT_CANARY = "canary-content-5z"
BARRIERED = (
    "Preamble.\n\n## Risk\n\nOld risk text.\n\n"
    f"## Financials {TITLE_CANARY}\n\nThe number is {CONTENT_CANARY}.\n"
)
SECRET_ID = "sec:financials-canary-title-7q"


@pytest.fixture
def barriered(tmp_path: Path) -> Path:
    source = tmp_path / "b.md"
    source.write_text(BARRIERED, encoding="utf-8")
    path = tmp_path / "b.pact"
    ok("doc", "create", path, "b", "--from", source, "--human", "alice")
    # The "Information barrier commands" example.
    ok(
        "tap",
        "framework",
        "create",
        path,
        "--name",
        "Sensitivity",
        "--levels",
        "Public,Internal,Confidential,Restricted",
        "--human",
        "alice",
    )
    ok(
        "tap",
        "classify",
        path,
        "b",
        "--human",
        "alice",
        "--section",
        SECRET_ID,
        "--level",
        "Confidential",
    )
    ok("tap", "join", path, "b", "--as", "outsider")
    ok("tap", "join", path, "b", "--as", "insider")
    ok(
        "tap",
        "clearance",
        path,
        "b",
        "--human",
        "alice",
        "--agent",
        "insider",
        "--level",
        "Confidential",
    )
    # Things happen in the hidden section.
    ok(
        "tap",
        "propose",
        path,
        "b",
        "--agent",
        "insider",
        "--section",
        SECRET_ID,
        "--content",
        f"## Financials {TITLE_CANARY}\\n\\nNow {CONTENT_CANARY} twice: {CONTENT_CANARY}.",
        "--summary",
        f"summary {CONTENT_CANARY}",
    )
    ok(
        "tap",
        "intent",
        path,
        "b",
        "--agent",
        "insider",
        "--section",
        SECRET_ID,
        "--goal",
        f"goal {CONTENT_CANARY}",
    )
    return path


def _no_canary(ran: Ran) -> None:
    for stream in (ran.out, ran.err):
        assert TITLE_CANARY not in stream, ran
        assert CONTENT_CANARY not in stream, ran
        assert TITLE_CANARY.lower() not in stream.replace(SECRET_ID, ""), ran


def test_barrier_holds_on_every_cli_path(barriered: Path) -> None:
    path, out = barriered, ("--agent", "outsider")
    # The insider and the human see it (the canary is really there).
    assert CONTENT_CANARY in ok("tap", "get", path, "b", "--agent", "insider").out
    assert TITLE_CANARY in ok("tap", "sections", path, "b", "--human", "alice").out
    before = head(path, "b")
    for json_flag in ((), ("--json",)):
        for args in (
            ("tap", "get", path, "b", *out),
            ("tap", "sections", path, "b", *out),
            ("tap", "poll", path, "b", *out, "--since", "evt_0", "--limit", "200"),
            ("tap", "escalation-briefing", path, "b", *out, "--section", SECRET_ID),
            (
                "tap",
                "propose",
                path,
                "b",
                *out,
                "--section",
                SECRET_ID,
                "--content",
                "## X\\n\\ny",
                "--summary",
                "s",
            ),
            ("tap", "lock", path, "b", *out, "--section", SECRET_ID, "--ttl", "10"),
            ("tap", "intent", path, "b", *out, "--section", SECRET_ID, "--goal", "g"),
        ):
            _no_canary(cli(*args, *json_flag))
    # A hidden section is refused as one that does not exist: no oracle.
    hidden = refused(
        "tap", "lock", path, "b", *out, "--section", SECRET_ID, code="section.not_found"
    )
    missing = refused(
        "tap", "lock", path, "b", *out, "--section", "sec:nope", code="section.not_found"
    )
    assert hidden["description"].replace(SECRET_ID, "X") == missing["description"].replace(
        "sec:nope", "X"
    )
    refused(
        "tap",
        "escalation-briefing",
        path,
        "b",
        *out,
        "--section",
        SECRET_ID,
        code="section.not_found",
    )
    assert head(path, "b") == before
    # The outsider's poll keeps the hidden events' envelopes, their payloads withheld.
    items = data("tap", "poll", path, "b", *out)["items"]
    withheld = [e for e in items if json.loads(e["payloadJson"]) == {"withheld": True}]
    assert {e["eventType"] for e in withheld} >= {"pact.proposal.created", "pact.intent.declared"}
    assert all(e["sectionId"] is None for e in withheld)


# -- every read verb, for every reader of tests/barrier_world.py -----------------------------
@pytest.fixture(scope="module")
def canary_world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bw.World]:
    path = tmp_path_factory.mktemp("canary") / "w.pact"
    return path, bw.build_workspace(path)


def _read_verbs(path: Path, who: tuple[str, ...], events: int) -> list[tuple[object, ...]]:
    """Every ``tap`` read verb, as ``who``: the briefing on every section of the document,
    hidden ones too (refused then; the refusal is read like any output)."""
    doc = (path, bw.NAME, *who)
    verbs: list[tuple[object, ...]] = [
        ("tap", "get", *doc),
        ("tap", "sections", *doc),
        ("tap", "poll", *doc, "--since", "evt_0", "--limit", "200"),
        ("tap", "watch", *doc, "--since", "evt_0", "--count", events),
    ]
    custodian = data("tap", "sections", path, bw.NAME, "--human", bw.HUMAN)
    verbs += [("tap", "escalation-briefing", *doc, "--section", r["sectionId"]) for r in custodian]
    return verbs


@pytest.mark.parametrize(
    "spec", [None, *bw.READERS], ids=lambda r: "custodian" if r is None else r.name
)
def test_no_read_verb_shows_the_canary_to_a_reader_that_may_not_read(
    canary_world: tuple[Path, bw.World], spec: bw.Reader | None
) -> None:
    """``tap get``, ``sections``, ``poll``, ``watch`` and ``escalation-briefing`` (on every
    section), plain and ``--json``: what a reader may not read never reaches it, whatever its
    context mode, clearance and organisation; what it may read does (the custodian: all)."""
    path, world = canary_world
    who = ("--human", bw.HUMAN) if spec is None else ("--agent", spec.name)
    events = len(data("doc", "log", path, bw.NAME))
    assert not data("tap", "poll", path, bw.NAME, *who, "--limit", "200")["hasMore"]
    seen = {row["sectionId"] for row in data("tap", "sections", path, bw.NAME, *who)}
    assert (bw.SECRET in seen) == (spec is None or spec.sees)
    everything = []
    for args in _read_verbs(path, who, events):
        for json_flag in ((), ("--json",)):
            ran = cli(*args, *json_flag)
            said = ran.out + ran.err
            if ran.code != 0:  # a briefing on a section it may not read, refused
                assert args[1] == "escalation-briefing" and ran.out == "", ran
                typed = str(args[-1])
                # one it sees but may not read (SummaryOnly), or one it does not see
                code = "classification.access_denied" if typed in seen else "section.not_found"
                assert code in ran.err, ran
                said = said.replace(typed, "ID")  # the id it typed comes back, nothing else
            assert not bw.leaked(spec, said, world), (args, json_flag, said)
            everything.append(said)
    shown = "\n".join(everything)
    assert bw.found(shown) == bw.allowed(spec)
    if spec is None or spec.reads:
        briefing = ok("tap", "escalation-briefing", path, bw.NAME, *who, "--section", bw.SECRET)
        assert f"{bw.CONTENT_CANARY} needs eyes" in briefing.out
        assert f"{bw.CONTENT_CANARY}?" in briefing.out
        assert any(f"conflict {i}: 2 proposals" in briefing.out for i in world.hidden_ids)
        assert f"invited to draft: {bw.DRAFTER}\n" in briefing.out
    else:
        assert "invited to draft" not in shown


# -- watch: a real process --------------------------------------------------------------------
def _watcher(*args: object, sigint: Any = signal.SIG_DFL) -> subprocess.Popen[str]:
    """``tap watch ARGS --ready`` once it says it watches; ``sigint``: the SIGINT disposition
    it inherits (set here, never the one the test runner happens to have)."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "pact_tui", "tap", "watch", *map(str, args), "--ready"],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, sigint),
    )
    assert process.stderr is not None
    ready = process.stderr.readline()
    assert ready == "watching\n", ready + process.stderr.read()
    return process


def test_watch_streams_new_events_and_stops_after_count(barriered: Path) -> None:
    watcher = _watcher(barriered, "b", "--agent", "outsider", "--json", "--count", "2")
    ok(
        "tap",
        "salience",
        barriered,
        "b",
        "--agent",
        "outsider",
        "--section",
        "sec:risk",
        "--score",
        "4",
    )
    ok(
        "tap",
        "comment",
        barriered,
        "b",
        "--agent",
        "insider",
        "--section",
        SECRET_ID,
        "--text",
        f"note {CONTENT_CANARY}",
    )
    out, err = watcher.communicate(timeout=30)
    assert watcher.returncode == 0, err
    lines = out.splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert first["eventType"] == "pact.salience.set"
    assert second["eventType"] == "pact.comment.added"
    assert json.loads(second["payloadJson"]) == {"withheld": True}
    assert CONTENT_CANARY not in out + err and TITLE_CANARY not in out + err


def test_watch_from_a_cursor_then_stops_on_sigterm(ws: Path) -> None:
    ok("tap", "join", ws, "contract", "--as", "bot")
    watcher = _watcher(ws, "contract", "--agent", "bot", "--since", "evt_1")
    assert watcher.stdout is not None
    line = watcher.stdout.readline()
    assert "pact.agent.joined" in line
    watcher.send_signal(signal.SIGTERM)
    _out, err = watcher.communicate(timeout=30)
    assert watcher.returncode == 0, err
    assert "Traceback" not in err


@pytest.mark.parametrize("inherited", [signal.SIG_DFL, signal.SIG_IGN], ids=["default", "ignored"])
def test_watch_stops_cleanly_on_ctrl_c(ws: Path, inherited: Any) -> None:
    """Ctrl-C stops ``tap watch`` whatever SIGINT disposition it inherited (a shell's
    background job, or a test runner's worker, starts it with SIGINT ignored)."""
    ok("tap", "join", ws, "contract", "--as", "bot")
    watcher = _watcher(ws, "contract", "--agent", "bot", sigint=inherited)
    watcher.send_signal(signal.SIGINT)
    try:
        out, err = watcher.communicate(timeout=30)
    finally:
        watcher.kill()  # a watcher that did not stop is not left behind
    assert (watcher.returncode, out) == (0, "")
    assert "Traceback" not in err


def test_invite_token_provisions_clearance(barriered: Path) -> None:
    invite = data(
        "tap",
        "invite",
        barriered,
        "b",
        "--human",
        "alice",
        "--trust",
        "Collaborator",
        "--clearance",
        "Confidential",
        "--mode",
        "Full",
    )
    token = invite["token"]
    assert token not in json.dumps(data("doc", "log", barriered, "b"))  # only its hash is kept
    ok("tap", "join", barriered, "b", "--as", "invited", "--token", token)
    assert CONTENT_CANARY in ok("tap", "get", barriered, "b", "--agent", "invited").out
    refused(
        "tap", "join", barriered, "b", "--as", "again", "--token", token, code="auth.unauthorized"
    )


def test_a_revoked_invite_lists_as_revoked_and_joins_nobody(barriered: Path) -> None:
    invite = data("tap", "invite", barriered, "b", "--human", "alice", "--trust", "Collaborator")
    listed = data("tap", "invites", barriered, "b", "--human", "alice")
    assert [(row["invite"], row["state"]) for row in listed] == [(invite["tokenHash"][:12], "open")]
    assert invite["token"] not in json.dumps(listed)
    before = head(barriered, "b")
    refused(
        "tap",
        "revoke-invite",
        barriered,
        "b",
        "zz",
        "--human",
        "alice",
        "--why",
        "x",
        code="request.invalid",
    )
    refused(
        "tap",
        "revoke-invite",
        barriered,
        "b",
        invite["tokenHash"][:8],
        "--agent",
        "bot",
        "--why",
        "x",
        code="auth.forbidden",
    )
    assert head(barriered, "b") == before
    ok(
        "tap",
        "revoke-invite",
        barriered,
        "b",
        invite["tokenHash"][:8],
        "--human",
        "alice",
        "--why",
        "sent to the wrong list",
    )
    text = ok("tap", "invites", barriered, "b", "--human", "alice").out
    assert "revoked by alice" in text
    refused(
        "tap",
        "join",
        barriered,
        "b",
        "--as",
        "late",
        "--token",
        invite["token"],
        code="auth.unauthorized",
    )
    refused("tap", "invites", barriered, "b", "--agent", "bot", code="request.invalid")


def test_an_agent_running_a_human_only_verb_is_forbidden_first(ws: Path, tmp_path: Path) -> None:
    """``tap classify`` by an agent, with no framework anywhere, said the framework was
    missing (classification.unknown_level) instead of auth.forbidden."""
    ok("tap", "join", ws, "contract", "--as", "bot")
    before = head(ws, "contract")
    classify = ("--agent", "bot", "--section", "sec:risk", "--level", "Secret")
    refused("tap", "classify", ws, "contract", *classify, code="auth.forbidden")
    refused("tap", "classify", ws, "no-such-doc", *classify, code="auth.forbidden")
    missing = tmp_path / "missing.pact"
    refused("tap", "classify", missing, "contract", *classify, code="auth.forbidden")
    assert not missing.exists()
    lock = ("--agent", "bot", "--why", "mine")
    refused("tap", "lock-document", ws, "contract", *lock, code="auth.forbidden")
    edit = ("--agent", "bot", "--section", "sec:risk", "--why", "w")
    unreadable = ("--content-file", tmp_path / "missing.md")
    refused("tap", "edit", ws, "contract", *edit, code="auth.forbidden")  # no content
    refused("tap", "edit", ws, "contract", *edit, *unreadable, code="auth.forbidden")
    assert head(ws, "contract") == before


def tap_verbs() -> set[str]:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    tap = commands.choices["tap"]
    verbs = next(a for a in tap._actions if isinstance(a, argparse._SubParsersAction))
    return set(verbs.choices)


def test_every_command_of_the_engine_has_a_tap_verb() -> None:
    """withdraw-constraint, mark-constraint, disclosure and resolve-comment had none."""
    union = get_args(get_args(AnyCommand)[0])
    ops = {model.model_fields["op"].default for model in union}
    assert ops - tap_verbs() == set()


def test_withdraw_and_mark_a_constraint(ws: Path) -> None:
    ok("tap", "join", ws, "contract", "--as", "bot")
    ok("tap", "join", ws, "contract", "--as", "other")
    since = head(ws, "contract")
    published = data(
        "tap", "constrain", ws, "contract", "--agent", "bot", "--section", "sec:risk",
        "--boundary", "at most 2M", "--category", "cost",
    )  # fmt: skip
    constraint = published["constraintId"]
    mark = ("--constraint", constraint, "--compatibility", "conflicting", "--why", "the cap")
    refused(
        "tap", "mark-constraint", ws, "contract", "--agent", "bot", *mark, code="auth.forbidden"
    )
    marked = data("tap", "mark-constraint", ws, "contract", "--human", "alice", *mark)
    assert marked == {"constraintId": constraint, "compatibility": "conflicting"}
    briefing = data(
        "tap", "escalation-briefing", ws, "contract", "--human", "alice", "--section", "sec:risk"
    )
    assert [c["compatibility"] for c in briefing["constraints"]] == ["conflicting"]
    text = ok("tap", "mark-constraint", ws, "contract", "--human", "alice", *mark).out
    assert text == f"mark-constraint: constraintId={constraint}  compatibility=conflicting\n"

    withdraw = ("withdraw-constraint", ws, "contract", "--constraint", constraint)
    refused("tap", *withdraw, "--agent", "other", code="auth.forbidden")  # only its author
    refused(
        "tap",
        "withdraw-constraint",
        ws,
        "contract",
        "--agent",
        "bot",
        "--constraint",
        "nope",
        code="entity.not_found",
    )
    first = data("tap", *withdraw, "--agent", "bot", "--idempotency-key", "w")
    assert first == {"constraintId": constraint, "withdrawn": True}
    assert data("tap", *withdraw, "--agent", "bot", "--idempotency-key", "w") == first
    refused("tap", *withdraw, "--agent", "bot", code="entity.not_found")  # withdrawn already
    assert types(ws, "contract", since) == [
        "pact.constraint.published",
        "pact.constraint.marked",
        "pact.constraint.marked",
        "pact.constraint.withdrawn",
    ]


def _constraint_categories(ws: Path, agent: str) -> list[Any]:
    polled = data("tap", "poll", ws, "contract", "--agent", agent)["items"]
    return [
        json.loads(e["payloadJson"]).get("category")
        for e in polled
        if e["eventType"] == "pact.constraint.published"
    ]


def test_disclosure(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ok("tap", "join", ws, "contract", "--as", "bot")
    ok("tap", "join", ws, "contract", "--as", "writer")
    ok(
        "tap", "constrain", ws, "contract", "--agent", "writer", "--section", "sec:risk",
        "--boundary", "no names", "--category", "privacy",
    )  # fmt: skip
    assert _constraint_categories(ws, "bot") == [None]  # level 1: the boundary only
    before = head(ws, "contract")
    level = ("disclosure", ws, "contract", "--agent", "bot", "--level")
    refused("tap", *level, "3", "--human", "alice", code="request.invalid")
    refused(
        "tap",
        "disclosure",
        ws,
        "contract",
        "--agent",
        "nobody",
        "--level",
        "2",
        "--human",
        "alice",
        code="agent.not_found",
    )
    monkeypatch.setenv("PACT_AGENT", "writer")  # an agent acting: --agent names the target
    refused("tap", *level, "2", code="auth.forbidden")
    monkeypatch.delenv("PACT_AGENT")
    assert head(ws, "contract") == before
    shown = data("tap", *level, "2", "--human", "alice")
    assert shown["disclosure"] == 2
    assert _constraint_categories(ws, "bot") == ["privacy"]
    assert types(ws, "contract", before) == ["pact.agent.disclosure-set"]


def test_resolve_a_comment(ws: Path) -> None:
    ok("tap", "join", ws, "contract", "--as", "bot")
    ok("tap", "join", ws, "contract", "--as", "helper")
    ok(
        "tap",
        "trust",
        ws,
        "contract",
        "--human",
        "alice",
        "--agent",
        "helper",
        "--level",
        "Suggester",
        "--why",
        "a second pair of eyes",
    )
    said = data(
        "tap",
        "comment",
        ws,
        "contract",
        "--agent",
        "helper",
        "--section",
        "sec:risk",
        "--text",
        "typo?",
    )
    comment = ("resolve-comment", ws, "contract", "--comment", said["commentId"])
    before = head(ws, "contract")
    refused("tap", *comment, "--agent", "helper", code="auth.forbidden")  # Suggester
    refused(
        "tap",
        "resolve-comment",
        ws,
        "contract",
        "--agent",
        "bot",
        "--comment",
        "nope",
        code="entity.not_found",
    )
    resolved = data("tap", *comment, "--agent", "bot", "--idempotency-key", "r")
    assert resolved == {"commentId": said["commentId"], "resolved": True}
    assert data("tap", *comment, "--agent", "bot", "--idempotency-key", "r") == resolved
    refused("tap", *comment, "--agent", "bot", code="request.invalid")  # already resolved
    assert types(ws, "contract", before) == ["pact.comment.resolved"]


def test_a_human_rejection_needs_a_reason(ws: Path) -> None:
    ok("tap", "join", ws, "contract", "--as", "bot")
    content = ("--section", "sec:risk", "--content", "## Risk\\n\\nNew.")
    proposal = data("tap", "propose", ws, "contract", "--agent", "bot", *content)["proposalId"]
    before = head(ws, "contract")
    error = refused(
        "tap", "reject", ws, "contract", proposal, "--human", "alice", code="request.invalid"
    )
    assert error["metadata"]["field"] == "reason"
    assert head(ws, "contract") == before
    rejected = data("tap", "reject", ws, "contract", proposal, "--human", "alice", "--reason", "no")
    assert rejected["status"] == "Rejected"


def test_a_unique_start_or_end_of_a_proposal_id_names_it(ws: Path) -> None:
    """The queue shows the end of an id and git users type its start: either names the one
    proposal; one that several ids start with is refused, naming how many, appending nothing."""
    ok("tap", "join", ws, "contract", "--as", "bot")
    made: list[str] = []
    while len({p[0] for p in made}) == len(made):  # two ids that start alike (17 at most)
        content = ("--section", "sec:risk", "--content", f"## Risk\\n\\nNew {len(made)}.")
        made.append(
            data("tap", "propose", ws, "contract", "--agent", "bot", *content)["proposalId"]
        )
    first = made[-1]
    alike = [p for p in made if first[0] in (p[0], p[-1])]  # a start or an end
    before = head(ws, "contract")
    error = refused(
        "tap",
        "reject",
        ws,
        "contract",
        first[0],
        "--human",
        "alice",
        "--reason",
        "no",
        code="request.ambiguous_id",
    )
    assert error["metadata"]["count"] == len(alike)
    assert f"names {len(alike)} proposals" in error["description"]
    refused(
        "tap",
        "reject",
        ws,
        "contract",
        "zzzz",
        "--human",
        "alice",
        "--reason",
        "no",
        code="proposal.not_found",
    )
    assert head(ws, "contract") == before
    pending = made[0]  # the others were rejected: first-wins
    end = pending[-8:]
    merged = data("tap", "force-merge", ws, "contract", end, "--human", "alice", "--why", "ok")
    assert (merged["proposalId"], merged["status"]) == (pending, "Merged")


def test_a_human_reverts_now_past_the_policy(tmp_path: Path) -> None:
    source = tmp_path / "contract.md"
    source.write_text(CONTRACT, encoding="utf-8")
    path = tmp_path / "w.pact"
    ok(
        "doc",
        "create",
        path,
        "contract",
        "--from",
        source,
        "--human",
        "alice",
        "--policy",
        "objection-based",
    )
    ok("tap", "join", path, "contract", "--as", "bot")
    ok("tap", "join", path, "contract", "--as", "reviewer")
    content = ("--section", "sec:risk", "--content", "## Risk\\n\\nNew.")
    proposal = data("tap", "propose", path, "contract", "--agent", "bot", *content)["proposalId"]
    ok("tap", "force-merge", path, "contract", proposal, "--human", "alice", "--why", "set up")
    waits = data("tap", "revert", path, "contract", proposal, "--human", "alice")
    assert waits["status"] == "Pending"  # the reviewer may object within the window
    ok("tap", "withdraw", path, "contract", waits["proposalId"], "--human", "alice")
    refused(
        "tap",
        "revert",
        path,
        "contract",
        proposal,
        "--human",
        "alice",
        "--now",
        code="request.invalid",
    )
    now = data(
        "tap",
        "revert",
        path,
        "contract",
        proposal,
        "--human",
        "alice",
        "--now",
        "--why",
        "it broke the build",
    )
    assert now["status"] == "Merged"
    assert "Old risk text." in ok("tap", "get", path, "contract", "--agent", "bot").out
