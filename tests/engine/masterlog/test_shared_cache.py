"""Two processes on one conversation share one cache file: each one's view of it stays its own,
so an append one of them indexed first is an append for the other too, never a rewrite, and the
search holds each line once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from engine.masterlog.conversation import MASTER, Conversation
from engine.masterlog.lines import encode_message

from .conftest import lines_of, write_lines


def _append(directory: Path, text: str) -> None:
    with (directory / MASTER).open("ab") as log:
        log.write(encode_message({"role": "user", "content": text, "timestamp": "t"}))


def test_an_append_the_other_process_indexed_first_is_an_append(
    copy: Callable[[str], Path], opened: Callable[..., Conversation]
) -> None:
    directory = copy("conv-basic")
    screen, tail = opened(directory), opened(directory)  # one cache file, as two processes
    for n in range(8):
        _append(directory, f"appended {n}")
        first, second = (screen, tail) if n % 2 else (tail, screen)
        for conversation in (first, second):
            (master,) = [r for r in conversation.refresh() if r.name == MASTER]
            assert not master.rewritten, (n, master.reason)
            assert master.new_lines == 1
    assert screen.master.lines == tail.master.lines == 30


def test_two_processes_cataloguing_one_log_index_each_line_once(
    copy: Callable[[str], Path], opened: Callable[..., Conversation]
) -> None:
    directory = copy("conv-basic")
    one, other = opened(directory), opened(directory)
    # one starts cataloguing, the other catalogues everything meanwhile, one goes on
    building = one.catalogue.build(one.master, batch=5)
    next(building)
    for _ in other.catalogue_all():
        pass
    for _ in building:
        pass
    for _ in one.catalogue_all():
        pass
    hits = one.catalogue.search("localize", limit=1_000, name=MASTER)
    assert hits and len({hit.line for hit in hits}) == len(hits)


def test_a_process_behind_keeps_the_catalogue_of_the_one_ahead(
    copy: Callable[[str], Path], opened: Callable[..., Conversation]
) -> None:
    directory = copy("conv-basic")
    behind, ahead = opened(directory), opened(directory)
    _append(directory, "one more")
    ahead.refresh()
    for _ in ahead.catalogue_all():
        pass
    for _ in behind.catalogue_all():  # it has not seen the new line yet
        pass
    assert ahead.catalogue.count(MASTER) == 23
    assert [h.line for h in ahead.catalogue.search('"one more"', name=MASTER)] == [22]


def test_a_rewrite_both_processes_see_is_compared_in_each(
    copy: Callable[[str], Path], opened: Callable[..., Conversation]
) -> None:
    directory = copy("conv-basic")
    one, other = opened(directory), opened(directory)
    for _ in one.catalogue_all():
        pass
    write_lines(directory / MASTER, lines_of(directory / MASTER)[:19])
    for conversation in (one, other):
        (master,) = [r for r in conversation.refresh() if r.name == MASTER]
        assert master.rewritten
        assert [c.describe() for c in conversation.changes] == ["lines 20 to 22 removed"]


def test_an_undo_keeps_the_catalogue_of_the_lines_before_it(
    copy: Callable[[str], Path], opened: Callable[..., Conversation]
) -> None:
    directory = copy("conv-basic")
    conversation = opened(directory)
    for _ in conversation.catalogue_all():
        pass
    write_lines(directory / MASTER, lines_of(directory / MASTER)[:20])
    conversation.refresh()
    assert [c.describe() for c in conversation.changes] == ["lines 21 to 22 removed"]
    assert conversation.catalogue.count(MASTER) == 20  # nothing to catalogue again
    assert not conversation.catalogue.pending(conversation.master)
    hits = conversation.catalogue.search("localize", limit=1_000, name=MASTER)
    assert hits and all(hit.line < 20 for hit in hits)


def test_a_rewrite_of_a_log_of_repeated_lines_is_compared_by_its_ends(
    tmp_path: Path, opened: Callable[..., Conversation]
) -> None:
    """difflib over 30,000 equal lines (autojunk off) does not finish: the shared start and end
    are trimmed first, and only what lies between is compared."""
    directory = tmp_path / "repeated"
    directory.mkdir()
    line = encode_message({"role": "user", "content": "again", "timestamp": "t"})
    write_lines(directory / MASTER, [line] * 30_000)
    conversation = opened(directory)
    for _ in conversation.catalogue_all():
        pass
    other = encode_message({"role": "user", "content": "edited", "timestamp": "t"})
    write_lines(directory / MASTER, [line] * 14_000 + [other] + [line] * 15_997)
    conversation.refresh()
    shift = len(other) - 3 * len(line)
    assert [c.describe() for c in conversation.changes] == [
        "lines 14001 to 14003 changed (now line 14001)",
        f"lines 14002 to 29998 moved by {shift:+,} bytes",
    ]
    assert conversation.master.lines == 29_998


def test_a_second_undo_after_appends_is_compared_with_what_was_kept(
    copy: Callable[[str], Path], opened: Callable[..., Conversation]
) -> None:
    directory = copy("conv-basic")
    conversation = opened(directory)
    for _ in conversation.catalogue_all():
        pass
    lines = lines_of(directory / MASTER)
    write_lines(directory / MASTER, lines[:18])
    conversation.refresh()
    for n in range(3):
        _append(directory, f"after the undo {n}")
    conversation.refresh()
    for _ in conversation.catalogue_all():
        pass
    now = lines_of(directory / MASTER)
    write_lines(directory / MASTER, [*now[:17], *now[18:20]])  # line 18 and the last go
    conversation.refresh()
    assert [c.describe() for c in conversation.changes] == [
        "line 18 removed",
        f"lines 18 to 19 moved by {-len(now[17]):+,} bytes",  # now lines 18 and 19
        "line 21 removed",
    ]
