"""Identities on the command line: a reserved agent name is refused at ``tap join`` with one
line and nothing appended, and ``doc log``, ``tap poll`` and ``tap watch`` name every actor with
its kind, read from the event (an agent and a human acting under the same name are told
apart)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import cli, ok

CONTRACT = "Preamble.\n\n## Risk\n\nOld risk text.\n\n## Budget\n\nTotals.\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    source = tmp_path / "contract.md"
    source.write_text(CONTRACT, encoding="utf-8")
    path = tmp_path / "w.pact"
    ok("doc", "create", path, "contract", "--from", source, "--human", "alice")
    return path


def log_rows(ws: Path) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = ok("doc", "log", ws, "contract", "--json").data
    return rows


@pytest.mark.parametrize(
    "name", ["system", " System", "human:alice", "HUMAN:bob", "alice", "Alice"]
)
def test_a_reserved_agent_name_is_refused_with_one_line_and_nothing_appended(
    ws: Path, name: str
) -> None:
    before = log_rows(ws)
    ran = cli("tap", "join", ws, "contract", "--as", name, "--json")
    assert ran.code == 1 and ran.out == ""
    [error] = json.loads(ran.err)["errors"]
    assert error["code"] == "request.invalid"
    assert error["metadata"]["field"] == "agentName"
    plain = cli("tap", "join", ws, "contract", "--as", name)
    [line] = plain.err.splitlines()
    assert plain.code == 1 and line.startswith("pact-tui: request.invalid: agentName ")
    assert "is reserved" in line
    assert log_rows(ws) == before


def test_doc_log_poll_and_watch_name_each_actors_kind(ws: Path) -> None:
    ok("tap", "join", ws, "contract", "--as", "legal")
    ok("tap", "join", ws, "contract", "--as", "finance")
    proposed = ok(
        "tap", "propose", ws, "contract", "--agent", "finance", "--section", "sec:risk",
        "--content", "## Risk\\n\\nNew.\\n", "--json",
    ).data  # fmt: skip
    # A human acting under an agent's name is labelled, not refused.
    ok(
        "tap",
        "approve",
        ws,
        "contract",
        proposed["proposalId"],
        "--human",
        "legal",
        "--reason",
        "ok",
    )
    ok("tap", "heartbeat", ws, "contract", "--agent", "legal")

    rows = log_rows(ws)
    kinds = [(row["actor"], row["actorKind"]) for row in rows]
    assert kinds[0] == ("alice", "Individual")
    assert ("legal", "Individual") in kinds and ("legal", "AiAgent") in kinds
    ids = {row["actorId"] for row in rows if row["actor"] == "legal"}
    assert "human:legal" in ids and len(ids) == 2

    text = ok("doc", "log", ws, "contract").out.splitlines()
    assert "human alice" in text[0]
    joined = [line for line in text if "pact.agent.joined" in line]
    assert ["agent legal" in joined[0], "agent finance" in joined[1]] == [True, True]
    approved = next(line for line in text if "pact.proposal.approved" in line)
    assert "human legal" in approved and "agent legal" not in approved
    beat = next(line for line in text if "pact.agent.heartbeat" in line)
    assert "agent legal" in beat
    merged = next(line for line in text if "pact.proposal.merged" in line)
    assert "human legal" in merged

    polled = ok("tap", "poll", ws, "contract", "--agent", "finance", "--since", "evt_0").out
    assert "human alice" in polled and "agent finance" in polled and "human legal" in polled
    watched = ok(
        "tap", "watch", ws, "contract", "--agent", "finance", "--since", "evt_0", "--count", "3"
    ).out.splitlines()
    assert ["human alice" in watched[0], "agent legal" in watched[1]] == [True, True]


def test_doc_show_and_a_briefing_name_the_kind_of_who_locked_and_who_flagged(ws: Path) -> None:
    ok("tap", "join", ws, "contract", "--as", "legal")
    ok("tap", "lock", ws, "contract", "--agent", "legal", "--section", "sec:budget", "--ttl", "30")
    ok("tap", "lock", ws, "contract", "--human", "alice", "--section", "sec:risk")
    ok(
        "tap",
        "escalate",
        ws,
        "contract",
        "--agent",
        "legal",
        "--section",
        "sec:risk",
        "--reason",
        "x",
    )
    shown = ok("doc", "show", ws, "contract").out
    assert "(locked by agent legal" in shown and "(locked by human alice" in shown
    brief = ok(
        "tap", "escalation-briefing", ws, "contract", "--human", "alice", "--section", "sec:risk"
    ).out
    assert "escalated by agent legal: x" in brief
