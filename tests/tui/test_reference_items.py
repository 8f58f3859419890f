"""A context imported from a real gptme conversation (``ctx import --gptme``, the conv-branches
fixture): its reference items carry the master-log verifier's verdict as a badge, ``o`` reads
the recovered original beside what the model was shown, and ``J`` goes from a reference item
to its line on the master-log screen and back to the item made from a line there.

What each test expects is the engine's own verifier and recovery on the same folder, never
typed in as the answer."""

from __future__ import annotations

import asyncio
import io
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from engine.context.nodes import Item
from engine.masterlog.conversation import Conversation, Found
from engine.masterlog.verify import recover, verify_all
from pact_tui.cli import main
from pact_tui.reference_items import reference_of, worst
from pact_tui.screens.masterlog import MasterLogScreen
from pact_tui.screens.original import OriginalScreen
from pact_tui.widgets.context_tree import ContextTree
from pact_tui.widgets.reader import ContentReader

from .inspector import SIZE, inspector, notifications, pane_lines, screen_of, settle, wait_until

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gptme"
NAME = "conv-branches"
BROKEN = ("views/compacted-001.jsonl", 11)  # the fixture's broken reference (README.md)


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index caches go to the test's folder, never the user's."""
    monkeypatch.setenv("PACT_TUI_CACHE", str(tmp_path / "cache"))


async def imported(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the fixture, imported into a new workspace with ``pact-tui ctx import``
    (in a thread: it runs its own event loop): (workspace, folder)."""
    folder = tmp_path / "logs" / NAME
    shutil.copytree(FIXTURES / NAME, folder)
    ws = tmp_path / "ws.pact"
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()) as err:
        code = await asyncio.to_thread(
            main, ["ctx", "import", str(ws), NAME, "--gptme", str(folder)]
        )
    assert code == 0, err.getvalue()
    return ws, folder


def statuses(folder: Path, tmp_path: Path) -> dict[tuple[str, int], list[str]]:
    """The verifier's statuses of every reference, by (log, 0-based line)."""
    found: dict[tuple[str, int], list[str]] = {}
    with Conversation.open(folder, tmp_path / "expected.sqlite") as conversation:
        for verdict in verify_all(conversation):
            key = (verdict.where.name, verdict.where.line)
            found.setdefault(key, []).append(verdict.status.value)
    return found


def reference_items(app: object) -> list[Item]:
    screen = screen_of(app)  # type: ignore[arg-type]
    assert screen.view is not None
    return [item for item, *_ in screen.view.iter_items() if reference_of(item) is not None]


def expected_badges(items: list[Item], found: dict[tuple[str, int], list[str]]) -> dict[str, str]:
    badges = {}
    for item in items:
        source = reference_of(item)
        assert source is not None
        badges[item.id] = worst(found[(source.log, source.line)])
    return badges


async def test_reference_items_show_their_verdict_and_open_both_ways(tmp_path: Path) -> None:
    ws, folder = await imported(tmp_path)
    found = statuses(folder, tmp_path)
    app = inspector(ws, context=NAME)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        live = reference_items(app)
        assert len(live) == 6  # compacted-002's references, all ok (the fixture's README)
        await wait_until(pilot, lambda: screen.badges != {}, "the badges of the live view")
        assert screen.badges == expected_badges(live, found)
        assert set(screen.badges.values()) == {"ok"}
        tree = screen.query_one(ContextTree)
        assert tree.badges == screen.badges
        # the first snapshot, compacted-001: one reference no longer verifies
        await pilot.press("left_curly_bracket")
        await settle(pilot)
        await wait_until(
            pilot, lambda: "ok" in screen.badges.values() and len(set(screen.badges.values())) > 1
            , "the badges of compacted-001"
        )  # fmt: skip
        past = reference_items(app)
        assert screen.badges == expected_badges(past, found)
        [broken] = [item for item in past if screen.badges[item.id] != "ok"]
        source = reference_of(broken)
        assert source is not None and (source.log, source.line) == BROKEN
        status = screen.badges[broken.id]
        assert status == worst(found[BROKEN]) and status != "ok"
        screen.go_to_item(broken.id)
        await pilot.pause()
        assert screen.highlighted is not None and screen.highlighted.item is broken
        row = next(line for line in pane_lines(tree) if f"✗ {status}" in line)
        assert "(" in row  # an item's row, with its coordinates

        # o: what the model was shown beside the original the reference recovers
        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, OriginalScreen), "the original")
        original_screen = app.screen
        assert isinstance(original_screen, OriginalScreen)
        with Conversation.open(folder, tmp_path / "expected.sqlite") as conversation:
            [verdict] = [
                v for v in verify_all(conversation) if (v.where.name, v.where.line) == BROKEN
            ]
            recovery = recover(conversation, Found(verdict.where, verdict.reference))
        assert recovery.content is not None  # the fixture keeps it in a branch and a saved file
        assert original_screen.original_text == recovery.content
        assert original_screen.shown_text == broken.text()
        assert original_screen.source == recovery.source
        assert status in original_screen.verdict and not original_screen.ok
        readers = original_screen.query(ContentReader)
        assert [r.id for r in readers] == ["shown", "original"]
        assert app.screen.focused is original_screen.query_one("#original")
        await pilot.press("escape")
        assert app.screen is screen

        # J: to its line on the master-log screen, and J there back to the item
        await pilot.press("J")
        await wait_until(pilot, lambda: isinstance(app.screen, MasterLogScreen), "the log")
        log_screen = app.screen
        assert isinstance(log_screen, MasterLogScreen)
        await settle(pilot)
        assert (log_screen.log_name, log_screen.line) == BROKEN
        subject = log_screen.subject
        assert subject is not None and subject.verdict is not None
        assert subject.verdict.status.value == status
        screen.go_to_item(live[0].id if live[0].id != broken.id else live[1].id)
        await pilot.press("J")
        await pilot.pause()
        assert app.screen is screen
        assert screen.highlighted is not None and screen.highlighted.item is broken

        # J on an item that is no reference says so, and stays
        plain_item = next(
            item
            for item, *_ in screen.view.iter_items()  # type: ignore[union-attr]
            if reference_of(item) is None
        )
        screen.go_to_item(plain_item.id)
        await pilot.press("J")
        await pilot.pause()
        assert app.screen is screen
        assert any("put the cursor on a reference item" in n for n in notifications(app))


async def test_j_on_a_line_no_item_was_made_from_stays_and_says_so(tmp_path: Path) -> None:
    """The master log's line of a message the context shown does not hold (compacted-001's
    broken reference was made for a message the undo removed): J says so."""
    ws, _folder = await imported(tmp_path)
    app = inspector(ws, context=NAME)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        await wait_until(pilot, lambda: screen.badges != {}, "the badges")
        screen.go_to_item(reference_items(app)[0].id)
        await pilot.press("J")
        await wait_until(pilot, lambda: isinstance(app.screen, MasterLogScreen), "the log")
        log_screen = app.screen
        assert isinstance(log_screen, MasterLogScreen)
        await settle(pilot)
        log_screen.go_to("branches/main-undo-0.jsonl", 0)
        await pilot.press("J")
        await pilot.pause()
        assert app.screen is log_screen
        assert any(
            "no item of the context shown was made from branches/main-undo-0.jsonl:1" in n
            for n in notifications(app)
        )


async def test_j_on_the_master_log_opened_alone_says_how_to_reach_a_context(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "logs" / NAME
    shutil.copytree(FIXTURES / NAME, folder)
    app = inspector(folder)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, MasterLogScreen)
        await pilot.press("J")
        await pilot.pause()
        assert isinstance(app.screen, MasterLogScreen)
        assert any("opened on the conversation alone" in n for n in notifications(app))


async def test_the_badges_follow_a_rewrite_of_the_master_log(tmp_path: Path) -> None:
    """The badges are judged again when the view shown changes, from the conversation as it is
    now: an undo renamed over the master after the badges were first judged is verified (only
    the references that may have changed), not shown as it was."""
    ws, folder = await imported(tmp_path)
    app = inspector(ws, context=NAME)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        await wait_until(pilot, lambda: screen.badges != {}, "the badges of the live view")
        assert set(screen.badges.values()) == {"ok"}
        # gptme's undo of every message but the first: the master saved, then renamed over
        master = folder / "conversation.jsonl"
        (folder / "branches").mkdir(exist_ok=True)
        shutil.copy(master, folder / "branches" / "main-undo-9.jsonl")
        first = master.read_bytes().splitlines(keepends=True)[0]
        (folder / "undone.tmp").write_bytes(first)
        (folder / "undone.tmp").replace(master)
        with (folder / "events.jsonl").open("a") as events:
            events.write('{"seq": 999, "ts": "t", "type": "undo", "payload": {"n": 99}}\n')
        found = statuses(folder, tmp_path)
        live = reference_items(app)
        expected = expected_badges(live, found)
        assert set(expected.values()) != {"ok"}  # the undo broke some of them
        await pilot.press("left_curly_bracket")  # another view shown, then the live one again
        await settle(pilot)
        await pilot.press("right_curly_bracket")
        await settle(pilot)
        await wait_until(pilot, lambda: screen.badges == expected, "the badges after the undo")


def test_the_badge_of_all_ok_is_the_verifiers_ok_and_a_problem_wins() -> None:
    from engine.masterlog.verify import Status
    from pact_tui.reference_items import OK

    assert Status.OK.value == OK
    assert worst([OK, OK]) == Status.OK.value
    statuses = [s.value for s in Status if s != Status.OK]
    assert worst([OK, statuses[-1], statuses[0]]) == statuses[0]  # the first in precedence
