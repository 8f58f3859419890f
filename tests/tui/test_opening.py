"""Opening never surprises (issue 24): what opening a document fires is said in one line, a
settled conflict's escalation does not keep the screen firing every second, and a read-only
workspace fires nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine.store import SqliteEventStore
from pact_tui.screens.document import DocumentScreen
from tests import first_wins_world as world

from .inspector import inspector, notifications, settle, wait_until

AGENTS = 20


def quiet_world(tmp_path: Path) -> tuple[Path, int]:
    """A first-wins document nobody has written to for more than 10 minutes; its file, and
    the time (ns) the app's clock reads."""
    path = tmp_path / "quiet.pact"
    end_ns = asyncio.run(world.build(path, agents=AGENTS, sections=5, proposals=200))
    return path, end_ns + world.QUIET_NS


async def head_of(path: Path) -> int:
    async with await SqliteEventStore.open(path, watch=False, read_only=True) as store:
        return (await store.read(0))[-1].seq


def test_opening_says_what_it_fired_and_why_in_one_line(tmp_path: Path) -> None:
    path, now_ns = quiet_world(tmp_path)

    async def run() -> None:
        app = inspector(path, human="ann", clock=lambda: now_ns)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("2")
            said = lambda: [n for n in notifications(app) if "fired on opening:" in n]  # noqa: E731
            await wait_until(pilot, lambda: bool(said()), "what opening fired")
            assert said() == [f"Due work: fired on opening: {AGENTS} agents evicted (silent > 5m)"]
            screen = app.screen
            assert isinstance(screen, DocumentScreen)
            doc = screen.workspace.document(world.NAME)
            assert not doc.active
            # Nothing else is due: the settled conflicts' escalations do not keep it firing.
            due = doc.next_due_ms()
            assert due is None or due > now_ns // 1_000_000
            head = screen.workspace.head
            screen._on_clock()
            await settle(pilot)
            assert screen.workspace.head == head
            assert len(said()) == 1

    asyncio.run(run())


def test_a_read_only_workspace_fires_nothing_on_opening(tmp_path: Path) -> None:
    path, now_ns = quiet_world(tmp_path)
    before = asyncio.run(head_of(path))

    async def run() -> None:
        app = inspector(path, human="ann", clock=lambda: now_ns, read_only=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("2")
            screen = app.screen
            assert isinstance(screen, DocumentScreen)
            await wait_until(pilot, lambda: screen.shown is not None, "the document")
            screen._on_clock()  # the clock's look for due work, as every second
            screen.action_tick()
            await settle(pilot)
            assert len(screen.workspace.document(world.NAME).active) == AGENTS
            assert not [n for n in notifications(app) if "fired" in n]

    asyncio.run(run())
    assert asyncio.run(head_of(path)) == before  # nothing appended to the store


async def test_asked_for_a_document_the_app_opens_on_it(demo: Path) -> None:
    """Issue 24: ``pact-tui WS --document NAME`` opened on the context screen."""
    app = inspector(demo, human="ann", document="memo")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, DocumentScreen), "its screen")
        screen = app.screen
        assert isinstance(screen, DocumentScreen)
        await wait_until(pilot, lambda: screen.shown is not None, "the document")
        assert screen.document_name == "memo"
