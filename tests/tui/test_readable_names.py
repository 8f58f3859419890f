"""Names a custodian can read: the agents view on a crowd of 1,000 ``agent-NNNN`` agents (its
columns as wide as what they hold), the heatmap's column headers and the queue's rows by
section title, one filter meaning for ``section:`` in every view, the agent detail pane and
the inbox's history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pact_tui.widgets.agents import AgentRoster

from .crowd import agent_name, build_crowd
from .inspector import inspector
from .test_document_inbox import opened


@pytest.fixture(scope="module")
def crowd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import asyncio

    path = tmp_path_factory.mktemp("crowd") / "crowd.pact"
    asyncio.run(build_crowd(path))
    return path


def drawn(rows: Any, count: int) -> list[str]:
    return [rows.render_line(y).text.rstrip() for y in range(count)]


@pytest.mark.parametrize("width", [80, 120, 200])
async def test_the_agents_view_shows_whole_names_in_a_crowd(crowd: Path, width: int) -> None:
    """Bug 4: at 120 columns, with 1,000 agents, every name was cut to "age"."""
    app = inspector(crowd, human="ann")
    async with app.run_test(size=(width, 30)) as pilot:
        screen = await opened(pilot, "A")
        roster = screen.query_one(AgentRoster)
        assert len(roster.rows) == 1_000
        for number, line in enumerate(drawn(roster, 20)):
            assert line.startswith(agent_name(number) + " "), line
