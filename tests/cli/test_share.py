"""Sharing and comments on the command line: ``doc export --as AGENT | --clearance LEVEL``
writes only what that reader may read (the engine's barrier-aware ``views.content``), a bad
agent or level is a one-line typed refusal; ``tap escalation-briefing`` lists the open
comments on its section."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import barrier_world as bw

from .conftest import cli
from .test_tap import (
    CONTENT_CANARY,
    TITLE_CANARY,
    barriered,
    canary_world,
    data,
    head,
    ok,
    refused,
    ws,
)

__all__ = ["barriered", "canary_world", "ws"]  # fixtures, used by name


def test_export_as_an_agent_writes_what_it_may_read(barriered: Path) -> None:
    whole = ok("doc", "export", barriered, "b").out
    assert CONTENT_CANARY in whole  # the canary is really there
    outsider = ok("doc", "export", barriered, "b", "--as", "outsider").out
    assert TITLE_CANARY not in outsider and CONTENT_CANARY not in outsider
    assert "## Risk\n\nOld risk text.\n" in outsider
    assert outsider == ok("tap", "get", barriered, "b", "--agent", "outsider").out
    insider = ok("doc", "export", barriered, "b", "--as", "insider").out
    assert CONTENT_CANARY in insider
    shared = data("doc", "export", barriered, "b", "--as", "outsider")
    assert shared["as"] == "outsider" and shared["markdown"] == outsider


def test_export_at_a_clearance_writes_what_it_may_read(barriered: Path) -> None:
    below = ok("doc", "export", barriered, "b", "--clearance", "Internal").out
    assert TITLE_CANARY not in below and CONTENT_CANARY not in below
    assert "Preamble." in below and "Old risk text." in below
    at = ok("doc", "export", barriered, "b", "--clearance", "confidential").out  # any case
    assert CONTENT_CANARY in at
    assert data("doc", "export", barriered, "b", "--clearance", "restricted")["clearance"] == (
        "Restricted"
    )


def test_a_bad_agent_or_level_is_refused_in_one_line(barriered: Path, ws: Path) -> None:
    before = head(barriered, "b")
    error = refused("doc", "export", barriered, "b", "--as", "nobody", code="agent.not_found")
    assert "'nobody'" in error["description"]
    error = refused("doc", "export", barriered, "b", "--clearance", "Top", code="request.invalid")
    assert "'Top'" in error["description"] and "Public, Internal" in error["description"]
    assert error["metadata"]["levels"] == ["Public", "Internal", "Confidential", "Restricted"]
    both = ("--as", "insider", "--clearance", "Public")
    refused("doc", "export", barriered, "b", *both, code="request.invalid")
    refused("doc", "export", barriered, "b", "--as", " ", code="request.invalid")
    error = refused(
        "doc", "export", ws, "contract", "--clearance", "Public", code="request.invalid"
    )
    assert "no classification framework" in error["description"]
    assert head(barriered, "b") == before  # a read: nothing appended


def test_export_as_an_agent_that_left_uses_the_barriers_it_had(barriered: Path) -> None:
    ok("tap", "leave", barriered, "b", "--agent", "insider")
    assert CONTENT_CANARY in ok("doc", "export", barriered, "b", "--as", "insider").out
    ok("tap", "leave", barriered, "b", "--agent", "outsider")
    assert CONTENT_CANARY not in ok("doc", "export", barriered, "b", "--as", "outsider").out


@pytest.mark.parametrize("spec", bw.READERS, ids=lambda r: r.name)
def test_export_as_any_reader_of_the_canary_world_leaks_nothing(
    canary_world: tuple[Path, bw.World], spec: bw.Reader
) -> None:
    """Every context mode x clearance x organisation: the export is what ``tap get`` gives
    that agent, and holds no canary it may not read."""
    path, world = canary_world
    exported = cli("doc", "export", path, bw.NAME, "--as", spec.name)
    assert exported.code == 0, exported
    assert not bw.leaked(spec, exported.out, world), exported.out
    assert exported.out == ok("tap", "get", path, bw.NAME, "--agent", spec.name).out


def test_a_clearance_alone_sees_no_organisations_sections(
    canary_world: tuple[Path, bw.World],
) -> None:
    """The hidden section belongs to an organisation: a clearance with no organisation never
    sees it, however high."""
    path, _world = canary_world
    top = ok("doc", "export", path, bw.NAME, "--clearance", bw.LEVELS[-1]).out
    assert bw.found(top) == set()
    assert "Intro line." in top


def test_the_briefing_lists_open_comments(ws: Path) -> None:
    ok("tap", "join", ws, "contract", "--as", "bot")
    ok("tap", "join", ws, "contract", "--as", "checker")
    section = ("--section", "sec:risk")
    said = data(
        "tap", "comment", ws, "contract", "--agent", "bot", *section, "--text", "@human: is 2% ok?"
    )
    other = data("tap", "comment", ws, "contract", "--agent", "bot", *section, "--text", "done")
    ok(
        "tap",
        "resolve-comment",
        ws,
        "contract",
        "--agent",
        "checker",
        "--comment",
        other["commentId"],
    )
    briefing = ok("tap", "escalation-briefing", ws, "contract", "--human", "alice", *section).out
    assert f"comment {said['commentId']} by agent bot to human: @human: is 2% ok?" in briefing
    assert other["commentId"] not in briefing  # resolved: no longer bears on it
    rows = data("tap", "escalation-briefing", ws, "contract", "--agent", "checker", *section)
    [row] = rows["comments"]
    assert (row["commentId"], row["to"], row["resolvedBy"]) == (said["commentId"], ["human"], None)
