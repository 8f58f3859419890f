"""The master-log screen on real gptme 0.35.1 conversations (tests/fixtures/gptme), driven with
Pilot: what it lists, the broken reference found with ``n`` and explained, the original
recovered and copied, the search and its jump, following gptme's appends, and bad input.

What each test expects is worked out from the files themselves or from the engine's own
verifier, never typed in as the answer."""

from __future__ import annotations

import io
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.binding import Binding
from textual.widgets import Static

from engine.masterlog.conversation import MASTER, Conversation
from engine.masterlog.lines import encode_message
from engine.masterlog.verify import Status, verify_all
from pact_tui.app import PactApp
from pact_tui.screens.help import HelpScreen
from pact_tui.screens.masterlog import MasterLogScreen
from pact_tui.screens.reader import ReaderScreen
from pact_tui.widgets.loglines import HitList, LogLines, LogList
from pact_tui.widgets.reference import ReferenceDetail, describe

from .inspector import inspector, notifications, settle, wait_until

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gptme"
SIZE = (120, 40)


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index caches go to the test's folder, never the user's."""
    monkeypatch.setenv("PACT_TUI_CACHE", str(tmp_path / "cache"))


def copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / "logs" / name
    shutil.copytree(FIXTURES / name, target)
    return target


def line_content(path: Path, line: int) -> str:
    """The content of the message on 0-based line ``line`` of a log, read with json."""
    raw = path.read_bytes().splitlines()[line]
    content: str = json.loads(raw)["content"]
    return content


def expected_verdicts(directory: Path, tmp_path: Path) -> list[Any]:
    with Conversation.open(directory, tmp_path / "expected.sqlite") as conversation:
        return verify_all(conversation)


def master_line_at(directory: Path, tmp_path: Path, offset: int) -> int | None:
    with Conversation.open(directory, tmp_path / "check.sqlite") as conversation:
        return conversation.master.line_at(offset)


def screen(app: PactApp) -> MasterLogScreen:
    assert isinstance(app.screen, MasterLogScreen), app.screen
    return app.screen


async def opened(pilot: Any) -> MasterLogScreen:
    """The screen once every reference is verified and every line catalogued."""
    app: PactApp = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, MasterLogScreen), "the screen")
    shown = screen(app)
    await wait_until(
        pilot,
        lambda: (
            shown.shown is not None
            and shown.shown.verified
            and shown.catalogued[0] == shown.catalogued[1]
        ),
        "verification and the catalogue",
    )
    await pilot.pause()  # not settle(): with watching on, the follower never completes
    return shown


def status(app: PactApp) -> str:
    return str(screen(app).query_one("#log-status").render())


def detail(app: PactApp, width: int | None = None) -> str:
    """The whole detail pane as text, at its width or ``width`` (it scrolls: not all of it is
    in sight)."""
    shown = screen(app)
    pane = shown.query_one("#reference", ReferenceDetail)
    assert pane.subject == shown.subject and shown.subject is not None
    width = width or pane.content_region.width
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(describe(shown.subject))
    return console.export_text()


async def test_lists_every_log_with_its_references_by_status(tmp_path: Path) -> None:
    directory = copy(tmp_path, "conv-branches")
    verdicts = expected_verdicts(directory, tmp_path)
    async with inspector(directory).run_test(size=SIZE) as pilot:
        shown = await opened(pilot)
        entries = shown.query_one("#logs", LogList).rows
        names = [e.name for e in entries]
        assert names[0] == MASTER
        assert sorted(names[1:]) == sorted(
            f"{folder}/{p.name}"
            for folder in ("views", "branches")
            for p in (directory / folder).glob("*.jsonl")
        )
        for entry in entries:
            expected = Counter(v.status.value for v in verdicts if v.where.name == entry.name)
            assert dict(entry.counts) == dict(expected), entry.name
            assert entry.lines == len((directory / entry.name).read_bytes().splitlines())
        problems = sum(not v.ok for v in verdicts)
        assert problems == 1  # the fixture's one broken reference (see its README)
        text = status(pilot.app)
        assert f"{len(verdicts)} references: {len(verdicts) - problems} ok, 1 not ok" in text
        # It opens on the view gptme has current, as .current names it.
        current = (directory / "views" / ".current").read_text().strip()
        assert shown.log_name == f"views/{current}.jsonl"
        assert shown.query_one("#messages", LogLines).log_name == shown.log_name


async def test_n_finds_the_broken_reference_and_explains_it(tmp_path: Path) -> None:
    directory = copy(tmp_path, "conv-branches")
    broken = next(v for v in expected_verdicts(directory, tmp_path) if not v.ok)
    async with inspector(directory).run_test(size=SIZE) as pilot:
        shown = await opened(pilot)
        await pilot.press("n")
        await settle(pilot)
        subject = shown.subject
        assert subject is not None and subject.verdict is not None
        assert (subject.log, subject.line) == (broken.where.name, broken.where.line)
        assert subject.verdict.status == broken.status
        assert shown.query_one("#messages", LogLines).cursor_line == broken.where.line
        # The range is highlighted in the master list, its first line under the cursor.
        first = master_line_at(directory, tmp_path, broken.reference.start)
        last = master_line_at(directory, tmp_path, broken.reference.end - 1)
        assert shown.span == (first, last)
        assert shown.query_one("#master", LogLines).cursor_line == first
        # The explanation in words, and the original recovered from where it still is.
        words = " ".join(detail(pilot.app).split())
        assert broken.status.value in words
        assert "starts 147 bytes into line 11" in words
        assert broken.original is not None
        name, _, line = broken.original.rpartition(":")
        original = line_content(directory / name, int(line) - 1)
        assert subject.recovery is not None and subject.recovery.content == original
        assert subject.recovery.source == broken.original and "the original (" in words
        # Paths inside the directory are shown relative to it.
        assert str(directory) not in detail(pilot.app)
        # y copies the recovered original, o reads it whole.
        await pilot.press("y")
        assert pilot.app.clipboard == original
        await pilot.press("o")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ReaderScreen)
        assert pilot.app.screen.text == original
        await pilot.press("escape")
        await settle(pilot)
        # n again wraps to the same one problem; N from it too.
        await pilot.press("n", "N")
        await settle(pilot)
        assert shown.subject is not None and shown.subject.line == broken.where.line
        assert notifications(pilot.app)[-1] == "problem 1 of 1"


async def test_an_ok_reference_shows_the_original_beside_the_compacted_text(
    tmp_path: Path,
) -> None:
    directory = copy(tmp_path, "conv-basic")
    verdicts = expected_verdicts(directory, tmp_path)
    ok = next(v for v in verdicts if v.ok)
    async with inspector(directory).run_test(size=SIZE) as pilot:
        shown = await opened(pilot)
        shown.go_to(ok.where.name, ok.where.line)
        await settle(pilot)
        subject = shown.subject
        assert subject is not None and subject.verdict == ok
        line = master_line_at(directory, tmp_path, ok.reference.start)
        assert line is not None
        assert subject.recovery is not None
        assert subject.recovery.content == line_content(directory / MASTER, line)
        words = " ".join(detail(pilot.app).split())
        assert " ok " in words and "what the model was shown" in words
        # Wide enough that neither column wraps: the shown text's first line, beside the
        # original's.
        wide = detail(pilot.app, width=1_000)
        assert ok.reference.summary.split("\n")[0][:60] in wide
        assert subject.recovery.content.split("\n")[0][:60] in wide
        assert all(v.ok for v in verdicts)  # conv-basic: gptme's references all hold
        await pilot.press("n")
        assert notifications(pilot.app)[-1] == "Problems: every reference is ok"


async def test_search_lists_matches_and_enter_jumps_to_one(tmp_path: Path) -> None:
    directory = copy(tmp_path, "conv-branches")
    async with inspector(directory).run_test(size=SIZE) as pilot:
        shown = await opened(pilot)
        await pilot.press("slash", *"rounding", "enter")
        await settle(pilot)
        hits = shown.query_one("#hits", HitList)
        assert hits.display and hits.has_focus
        assert hits.hits, "the fixture's messages mention rounding"
        for hit in hits.hits:
            assert "rounding" in line_content(directory / hit.name, hit.line).lower()
        await pilot.press("down", "enter")
        await settle(pilot)
        chosen = hits.hits[1] if len(hits.hits) > 1 else hits.hits[0]
        assert (shown.log_name, shown.line) == (chosen.name, chosen.line)
        assert shown.query_one("#messages", LogLines).has_focus
        # A query FTS5 cannot parse is searched as a phrase, and says how many it found.
        await pilot.press("slash", *'"rounding', "enter")
        await settle(pilot)
        assert notifications(pilot.app)[-1].startswith(f"{len(hits.hits)} found for")
        await pilot.press("escape")
        assert shown.query_one("#messages", LogLines).has_focus


async def test_a_search_past_its_cap_says_how_many_it_found(tmp_path: Path) -> None:
    directory = copy(tmp_path, "conv-basic")
    with (directory / MASTER).open("ab") as log:
        for n in range(250):
            log.write(encode_message({"role": "user", "content": f"needle {n}"}))
    async with inspector(directory).run_test(size=SIZE) as pilot:
        shown = await opened(pilot)
        await pilot.press("slash", *"needle", "enter")
        await settle(pilot)
        hits = shown.query_one("#hits", HitList)
        assert len(hits.hits) == 200 and hits.hits[0].line == 22 + 249  # the newest first
        assert notifications(pilot.app)[-1] == (
            "250 found for 'needle': the newest 200 listed (the cap)"
        )
        assert "newest 200 of 250" in str(hits.border_title)


async def test_lists_keep_the_cursor_in_sight_on_a_resize(tmp_path: Path) -> None:
    directory = copy(tmp_path, "conv-basic")
    with (directory / MASTER).open("ab") as log:
        for n in range(300):
            log.write(encode_message({"role": "user", "content": f"line {n}"}))
    async with inspector(directory).run_test(size=SIZE) as pilot:
        shown = await opened(pilot)
        shown.go_to(MASTER, 250)
        await settle(pilot)
        listed = shown.query_one("#messages", LogLines)

        def in_sight() -> bool:
            top = int(listed.scroll_offset.y)
            return top <= listed.cursor_line < top + listed.scrollable_content_region.height

        assert listed.cursor_line == 250 and in_sight()
        for size in ((120, 16), (80, 24), (200, 60), (100, 14)):
            await pilot.resize_terminal(*size)
            await settle(pilot)
            assert listed.cursor_line == 250 and in_sight(), size


async def test_colon_goes_to_a_line_or_a_byte_and_a_stub_is_no_message(tmp_path: Path) -> None:
    directory = copy(tmp_path, "conv-basic")
    async with inspector(directory).run_test(size=SIZE) as pilot:
        shown = await opened(pilot)
        listed = shown.query_one("#messages", LogLines)
        listed.focus()
        await pilot.press("colon", *"12", "enter")
        await settle(pilot)
        assert (shown.log_name, shown.line, listed.cursor_line) == (
            "views/compacted-001.jsonl",
            11,
            11,
        )
        # gptme's Phase 0 stub on view line 12: listed as a stub, not as a system message
        row = listed.rows[11]
        assert row.stub and row.role == "system"
        assert "(stub)" in listed.render_line(11 - int(listed.scroll_offset.y)).text
        offset = 30_000
        expected = master_line_at(directory, tmp_path, offset)
        await pilot.press("colon", *f"b{offset}", "enter")
        await settle(pilot)
        assert (shown.log_name, shown.line) == (MASTER, expected)
        await pilot.press("colon", *"999", "enter")  # past the end: said, and the prompt stays
        await settle(pilot)
        assert "give a line from 1 to 22" in str(
            pilot.app.screen.query_one("#prompt-problem").render()
        )
        await pilot.press("escape")
        await pilot.press("tab")
        assert shown.query_one("#master", LogLines).has_focus


async def test_follows_what_gptme_appends(tmp_path: Path) -> None:
    directory = copy(tmp_path, "conv-basic")
    master = directory / MASTER
    lines = len(master.read_bytes().splitlines())
    app = inspector(directory, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        shown = await opened(pilot)
        await pilot.press("F")
        assert "FOLLOWING" in status(app)
        message = {
            "role": "user",
            "content": "one more question",
            "timestamp": "2026-11-26T10:00:00",
        }
        with master.open("ab") as log:
            log.write(encode_message(message))
        listed = shown.query_one("#master", LogLines)
        await wait_until(pilot, lambda: listed.line_count == lines + 1, "the appended line")
        await wait_until(pilot, lambda: listed.cursor_line == lines, "following it")
        assert f"master {lines + 1} lines" in status(app)
        assert listed.rows[lines].head == "one more question"
        # Half a line is not listed until gptme finishes it.
        half = encode_message({**message, "content": "and another"})
        with master.open("ab") as log:
            log.write(half[:10])
        with master.open("ab") as log:
            log.write(half[10:])
        await wait_until(pilot, lambda: listed.line_count == lines + 2, "the finished line")
        await wait_until(pilot, lambda: listed.cursor_line == lines + 1, "following it")

        # And the search finds it once catalogued.
        # (Waiting for the search itself: "everything catalogued" also holds just before the
        # cataloguing of the new line starts.)
        def found() -> list[tuple[str, int]]:
            return [(hit.name, hit.line) for hit in shown.session.search("another")]

        await wait_until(pilot, lambda: found() == [(MASTER, lines + 1)], "the search to find it")


async def test_a_malformed_line_is_listed_and_explained(tmp_path: Path) -> None:
    directory = copy(tmp_path, "conv-basic")
    master = directory / MASTER
    with master.open("ab") as log:
        log.write(b'{"role": "user", "content": \n')
    lines = len(master.read_bytes().splitlines())
    async with inspector(directory).run_test(size=SIZE) as pilot:
        shown = await opened(pilot)
        shown.go_to(MASTER, lines - 1)
        await settle(pilot)
        row = shown.query_one("#messages", LogLines).rows[lines - 1]
        assert row.role is None and row.head.startswith("malformed")
        assert f"{MASTER.removesuffix('.jsonl')}:{lines}: a malformed line" in detail(pilot.app)


async def test_a_directory_that_is_not_a_conversation_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    app = inspector(tmp_path / "empty")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.return_code is not None, "the app to exit")
    assert app.return_code == 1
    assert not list((tmp_path / "empty").iterdir())  # nothing was written into it


async def test_help_and_palette_list_the_screen_s_actions(tmp_path: Path) -> None:
    directory = copy(tmp_path, "conv-branches")
    async with inspector(directory).run_test(size=SIZE) as pilot:
        shown = await opened(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(pilot.app.screen, HelpScreen)
        console = Console(width=140, record=True, file=io.StringIO())
        for static in pilot.app.screen.query(Static):
            console.print(static.content)
        text = console.export_text()
        assert "Master log" in text
        for verdict_status in Status:  # every status the verifier gives is explained
            assert verdict_status.value in text
        assert "Selectors" not in text and "Contexts" not in text  # not for this screen
        for binding in MasterLogScreen.BINDINGS:
            assert isinstance(binding, Binding)
            assert binding.tooltip and binding.tooltip in text
        await pilot.press("escape")
        await settle(pilot)
        titles = [c.title for c in shown.system_commands()]
        assert "Show views/compacted-001" in titles
        # The workspace's screens are not for a conversation: 1 says so and stays.
        await pilot.press("1")
        assert pilot.app.screen is shown


async def test_a_master_rewritten_shorter_while_shown(tmp_path: Path) -> None:
    """gptme rewrites the master (an undo) while the screen shows it: the lists shrink with it,
    the references into the removed lines turn not ok, and nothing crashes on the way."""
    directory = copy(tmp_path, "conv-branches")
    master = directory / MASTER
    kept = master.read_bytes().splitlines(keepends=True)[:5]
    app = inspector(directory, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        shown = await opened(pilot)
        listed = shown.query_one("#master", LogLines)
        await pilot.press("F")  # the cursor on the last line, which is about to go
        master.write_bytes(b"".join(kept))
        await wait_until(pilot, lambda: listed.line_count == 5, "the shorter master")
        await wait_until(pilot, lambda: listed.cursor_line == 4, "the cursor on its last line")
        expected = expected_verdicts(directory, tmp_path)
        await wait_until(
            pilot,
            lambda: (
                sum(not v.ok for v in shown.session.problems()) == sum(not v.ok for v in expected)
            ),
            "the verdicts of the rewritten master",
        )
        assert sum(not v.ok for v in expected) > 1  # more broken now than the one before
        assert "master 5 lines" in status(app)


async def test_a_rewrite_is_said_in_a_banner(tmp_path: Path) -> None:
    """An undo while the screen shows the log: a banner says what it removed (the line count
    going from 22 to 19 is not left to be noticed); Escape puts it away."""
    directory = copy(tmp_path, "conv-basic")
    master = directory / MASTER
    kept = master.read_bytes().splitlines(keepends=True)[:19]
    app = inspector(directory, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        shown = await opened(pilot)
        banner = shown.query_one("#log-banner", Static)
        assert not banner.display
        master.write_bytes(b"".join(kept))
        with (directory / "events.jsonl").open("a") as events:
            events.write(json.dumps({"seq": 99, "ts": "t", "type": "undo", "payload": {}}) + "\n")
        await wait_until(pilot, lambda: banner.display, "the banner")
        said = str(banner.render())
        assert "conversation.jsonl was rewritten: undo: lines 20 to 22 removed" in said
        shown.query_one("#messages", LogLines).focus()
        await pilot.press("escape")
        assert not banner.display


def test_a_row_the_index_no_longer_has_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pact_tui.logsession import LogSession

    directory = copy(tmp_path, "conv-basic")
    session = LogSession.open(directory, tmp_path / "cache.sqlite")
    try:
        lines = session.lines(MASTER)
        row = session.row(MASTER, lines + 3)
        assert (
            row.role is None and row.head.startswith("unreadable:") and str(lines + 4) in row.head
        )
        assert (
            session.row(MASTER, 0).role
            == json.loads((directory / MASTER).read_bytes().splitlines()[0])["role"]
        )
    finally:
        session.close()


def test_the_rows_kept_are_the_most_recently_drawn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows are kept parsed up to ``ROWS_KEPT`` (``textual.cache.LRUCache``): drawing one again
    keeps it, and the one drawn longest ago is read again from the file."""
    import pact_tui.logsession
    from pact_tui.logsession import LogSession

    monkeypatch.setattr(pact_tui.logsession, "ROWS_KEPT", 3)
    directory = copy(tmp_path, "conv-basic")
    session = LogSession.open(directory, tmp_path / "cache.sqlite")
    try:
        assert session.lines(MASTER) >= 4
        first, second, _third = (session.row(MASTER, line) for line in range(3))
        assert session.row(MASTER, 1) is second  # kept, and now the most recently drawn
        session.row(MASTER, 3)  # one more than are kept: the row drawn longest ago goes
        assert session.row(MASTER, 1) is second
        again = session.row(MASTER, 0)
        assert again == first and again is not first  # read again from the file
    finally:
        session.close()


async def test_choosing_another_log_shows_its_first_line(tmp_path: Path) -> None:
    """Every gptme log starts with the same system prompt (the same bytes at the same offsets):
    choosing another log in the list shows that log's first line, not the last log's."""
    directory = copy(tmp_path, "conv-branches")
    async with inspector(directory).run_test(size=SIZE) as pilot:
        shown = await opened(pilot)
        current = shown.log_name
        shown.query_one("#logs").focus()
        await pilot.press("down")
        names = [entry.name for entry in shown.query_one("#logs", LogList).rows]
        after = names[names.index(current) + 1]
        await wait_until(pilot, lambda: shown.log_name == after, "the next log")
        await pilot.pause()
        subject = shown.subject
        assert subject is not None and (subject.log, subject.line) == (after, 0)
        assert detail(pilot.app).startswith(f"{after.removesuffix('.jsonl')}:1 · system")


def test_rows_are_read_while_a_verification_holds_the_lock(tmp_path: Path) -> None:
    """An undo, then ``LogSession.update`` verifying the references again (held inside its
    first batch, the session's lock taken): a list's rows and line count are answered at once,
    from the lines the update published (the master after the undo), not after the lock."""
    import threading

    from pact_tui.logsession import LogSession

    directory = copy(tmp_path, "conv-basic")
    master = directory / MASTER
    kept = master.read_bytes().splitlines(keepends=True)[:19]
    session = LogSession.open(directory, tmp_path / "cache.sqlite")
    inside, release = threading.Event(), threading.Event()
    real = session.verifier.updating

    def gated(*args: Any, **kwargs: Any) -> Any:
        parts = real(*args, **kwargs)
        inside.set()  # in the verification's first batch, under the session's lock
        release.wait(60)
        yield from parts

    session.verifier.updating = gated  # type: ignore[method-assign]
    read: list[Any] = []

    def read_rows() -> None:
        read.append(session.lines(MASTER))
        read.extend(session.row(MASTER, line) for line in (0, 18, 19))

    try:
        assert session.lines(MASTER) == 22
        master.write_bytes(b"".join(kept))
        with (directory / "events.jsonl").open("a") as events:
            events.write(json.dumps({"seq": 99, "ts": "t", "type": "undo", "payload": {}}) + "\n")
        updating = threading.Thread(target=session.update)
        updating.start()
        assert inside.wait(60), "the verification never started"
        assert not session.lock.acquire(blocking=False)  # the verification holds it
        reader = threading.Thread(target=read_rows)
        reader.start()
        reader.join(30)  # a deadline, not a measure: a reader waiting for the lock never ends
        answered = not reader.is_alive()
        release.set()
        updating.join()
        reader.join()
        assert answered, "a row waited for the verification's lock"
        lines, first, last, gone = read
        assert lines == 19  # the master after the undo, published before the verification
        assert first.role == json.loads(kept[0])["role"]
        assert last.head == json.loads(kept[18])["content"].split("\n")[0][:200]
        assert gone.role is None and gone.head.startswith("unreadable:")
    finally:
        release.set()
        session.close()
