"""Big items stay responsive: a row and the detail pane read a line's worth (a screenful) of an
item's content whatever its size; the detail says how much more there is, and the reader
(``o``, or Enter on the item) shows all of it, a screenful at a time."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.app import App

from engine.canonical import canonical_json
from engine.context.nodes import Item
from engine.workspace import Workspace
from pact_tui.screens.reader import ReaderScreen
from pact_tui.widgets.detail import CONTENT_CHARS, CONTENT_LINES
from pact_tui.widgets.reader import ContentReader

from .inspector import (
    SIZE,
    detail_text,
    inspector,
    pane_lines,
    screen_of,
    screen_text,
    settle,
    wait_until,
)

LINE = "lorem ipsum dolor\n"
BIG = LINE * 20_000 + "THE END"  # 360 KB, 20,001 short lines: the detail shows 80 of them
BIG_JSON = {"rows": [{"n": n, "text": "lorem ipsum " * 4} for n in range(2_000)], "z": "END"}


async def make(path: Path) -> None:
    async with await Workspace.open(path, create=True, watch=False) as ws:
        await ws.create_context("big")
        await ws.run("big", {"op": "message", "role": "user", "text": BIG})
        component = {"type": "table", "content": BIG_JSON}
        await ws.run("big", {"op": "insert", "selector": "d0, 1, 0", "component": component})


@pytest.fixture
def path(tmp_path: Path) -> Path:
    import asyncio

    path = tmp_path / "big.pact"
    asyncio.run(make(path))
    return path


async def test_the_detail_shows_the_start_and_the_reader_all_of_it(path: Path) -> None:
    app = inspector(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("v")  # the provider view: the message, then the table
        await settle(pilot)
        lines = pane_lines(screen.provider)
        # Each with its size: the whole content's, though a row reads only its start.
        table = len(canonical_json(BIG_JSON))
        assert lines[0].startswith(f"  (0,0,0)   user      {len(BIG):,} ch ~90,002 tok │ lorem")
        assert lines[1].startswith(
            f"  (0,1,0)   user      {table:>7,} ch ~{-(-table // 4):>6,} tok │ " + '{"rows"'
        )

        shown = " ".join(detail_text(app).split())
        assert "THE END" not in shown
        assert f"… the first {CONTENT_LINES * len(LINE) - 1:,} of {len(BIG):,} characters" in shown
        assert "o reads it all" in shown

        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, ReaderScreen), "the reader")
        reader = app.screen.query_one(ContentReader)
        await wait_until(pilot, lambda: reader.measured == 20_001, "every line measured")
        assert reader.row_count == 20_001  # a line a row: each fits the width
        await pilot.press("end")
        await wait_until(pilot, lambda: "THE END" in screen_text(app), "the reader's last line")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, "the reader to close")

        await pilot.press("down")  # the table: JSON, one line; the detail shows its start
        await settle(pilot)
        shown = " ".join(detail_text(app).split())
        assert f"… the first {CONTENT_CHARS:,} characters · o reads it all" in shown
        await pilot.press("enter")  # Enter on an item reads it too
        await wait_until(pilot, lambda: isinstance(app.screen, ReaderScreen), "the reader")
        reader = app.screen.query_one(ContentReader)
        # Its rows are counted at the width it is laid out at (one JSON line, many rows).
        await wait_until(pilot, lambda: reader.row_count > 1, "the reader's rows")
        await pilot.press("end")
        await wait_until(
            pilot,
            lambda: '"z":"END"}' in screen_text(app).replace(" ", "").replace("│", ""),
            "the table's last row",
        )


async def test_rows_and_the_detail_never_build_an_items_whole_text(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every row of both panes and the detail for each, on a diff too (its removed items),
    drawn with ``Item.text`` refusing: they read ``text_head``, a screenful."""
    app = inspector(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("full_stop")  # a snapshot, to diff against
        await settle(pilot)

        def whole_text(item: Item) -> str:
            raise AssertionError(f"the whole text of {item.id} was built")

        monkeypatch.setattr(Item, "text", whole_text)
        await pilot.press("d")
        for pane_key in ("", "v"):
            if pane_key:
                await pilot.press(pane_key)
            pane = screen.active_pane
            await pilot.press("home")
            for line in range(pane.layout_model.line_count):
                if line:
                    await pilot.press("down")
                await settle(pilot)
                assert detail_text(app)  # drawn, with no AssertionError from a worker
        assert app.is_running


class _OneReader(App[None]):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self):  # type: ignore[no-untyped-def]
        yield ContentReader(self.text)


@pytest.mark.parametrize(
    "text",
    [
        "x" * 100_000,  # one long line
        ("中文字符" * 30 + "\n") * 50 + "终",  # wide characters: 2 cells each
        "a\tb\n\n" + "é" * 250 + "\x1b[2J",  # a tab, an empty line, one-cell non-ASCII
    ],
    ids=["one long line", "wide characters", "tabs and escapes"],
)
async def test_the_reader_breaks_lines_at_the_width_and_loses_nothing(text: str) -> None:
    app = _OneReader(text)
    async with app.run_test(size=(80, 24)) as pilot:
        reader = app.query_one(ContentReader)
        # Measured a chunk at a time after the first frame: the row count is exact once all is.
        await wait_until(pilot, lambda: reader.measured == reader.line_count, "every line measured")
        width = reader.scrollable_content_region.width
        rows = [reader.row_text(row) for row in range(reader.row_count)]
        assert all(cell_len(row) <= width for row in rows)
        expected = text.replace("\t", "       ").replace("\x1b", "\\u001b").replace("\n", "")
        assert "".join(rows) == expected
        await pilot.press("end")

        def drawn() -> list[str]:
            return [reader.render_line(y).text.strip() for y in range(reader.size.height)]

        # The scroll is applied after a refresh: waited for, not one pause (CI runs loaded).
        await wait_until(pilot, lambda: rows[-1].strip() in drawn(), "the end on screen")


class _WatchedReader(ContentReader):
    """Notes how much of its text was made visible when its first screenful was drawn."""

    made_at_first_frame: int | None = None

    def render_line(self, y: int):  # type: ignore[no-untyped-def]
        strip = super().render_line(y)
        if y == self.size.height - 1 and self.made_at_first_frame is None:
            self.made_at_first_frame = MADE[0]
        return strip


MADE = [0]  # characters made visible, by the reader's module


class _OneWatchedReader(App[None]):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self):  # type: ignore[no-untyped-def]
        yield _WatchedReader(self.text)


async def test_the_reader_opens_ten_megabytes_without_making_it_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 10 MB text whose every line needs making (a tab): the first screenful is drawn
    having made a few chunks of it, the rest is read on between frames, and the end is all
    of it."""
    import pact_tui.widgets.reader as reader_module

    made = reader_module.visible

    def counted(text: str, **options):  # type: ignore[no-untyped-def]
        MADE[0] += len(text)
        return made(text, **options)

    MADE[0] = 0
    monkeypatch.setattr(reader_module, "visible", counted)
    line = "\tlorem ipsum dolor sit amet, consectetur adipiscing elit\n"
    text = line * (10_000_000 // len(line)) + "THE END"
    app = _OneWatchedReader(text)
    async with app.run_test(size=(80, 24)) as pilot:
        reader = app.query_one(_WatchedReader)
        await wait_until(pilot, lambda: reader.made_at_first_frame is not None, "a frame")
        assert reader.made_at_first_frame is not None
        assert reader.made_at_first_frame < len(text) // 50  # a few chunks, not 10 MB
        assert reader.line_count == text.count("\n") + 1
        await pilot.press("end")
        await wait_until(
            pilot,
            lambda: any("THE END" in reader.render_line(y).text for y in range(reader.size.height)),
            "the last line drawn",
        )
        assert reader.measured == reader.line_count
        assert reader.row_count == reader.line_count  # a line a row: each fits the width


def _item(content: str) -> Item:
    return Item(
        id="i",
        node_type="user",
        content=content,
        key=None,
        tags=(),
        ttl=None,
        cad=None,
        priority=0,
        role="user",
        created_at_ns=0,
        creation_index=0,
        born_episode=0,
    )


def test_only_small_content_is_hashed_as_it_is_described() -> None:
    from pact_tui.widgets.detail import HASHED_AT_ONCE, HASHING, _hash_of

    small, big = _item("x" * HASHED_AT_ONCE), _item("x" * (HASHED_AT_ONCE + 1))
    assert _hash_of(small) == small.content_hash_known is not None
    assert _hash_of(big) == HASHING
    assert big.content_hash_known is None  # not worked out on the frame's path
    assert _hash_of(big) != big.content_hash  # once worked out (elsewhere) ...
    assert _hash_of(big) == big.content_hash  # ... it is shown


async def test_a_big_items_hash_is_shown_once_worked_out_after_the_frame(path: Path) -> None:
    app = inspector(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("v")  # the provider view: the 360 KB message under the cursor
        await settle(pilot)
        subject = screen.subject
        assert subject is not None and subject.row.item is not None
        item = subject.row.item
        assert len(item.content) > 100_000
        await wait_until(pilot, lambda: item.content_hash_known is not None, "the hash")
        await wait_until(
            pilot, lambda: item.content_hash in "".join(detail_text(app).split()), "it shown"
        )
