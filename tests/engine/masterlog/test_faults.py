"""Faults made from the real fixtures, each detected and named."""

from __future__ import annotations

import itertools
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.masterlog.conversation import MASTER, Conversation
from engine.masterlog.lines import encode_message
from engine.masterlog.references import find_references
from engine.masterlog.verify import Status, Verifier, recover, verify_all

from .conftest import lines_of, write_lines

VIEW = "views/compacted-001.jsonl"


def by_line(conversation: Conversation) -> dict[int, Status]:
    return {v.where.line + 1: v.status for v in verify_all(conversation)}


def reindex_view_as_gptme(directory: Path) -> None:
    """What gptme would have written over this master: each reference of view line i gets the
    range of master *line* i, counting blank and malformed lines (build_master_context_index)."""
    bounds, offset = [], 0
    for raw in lines_of(directory / MASTER):
        bounds.append((offset, offset + len(raw)))
        offset += len(raw)
    view = directory / VIEW
    out = []
    for i, raw in enumerate(lines_of(view)):
        data = json.loads(raw)
        for ref in find_references(data["content"])[0]:
            start, end = bounds[i]
            data["content"] = data["content"].replace(
                f"(bytes {ref.start}-{ref.end})", f"(bytes {start}-{end})"
            )
        out.append(encode_message(data))
    write_lines(view, out)


def insert_line(directory: Path, after: int, raw: bytes) -> None:
    lines = lines_of(directory / MASTER)
    write_lines(directory / MASTER, [*lines[:after], raw, *lines[after:]])


def test_a_blank_line_gptme_counted_shifts_every_later_reference(
    copy: Callable[[str], Path], opened: Callable[[Path], Conversation]
) -> None:
    directory = copy("conv-basic")
    insert_line(directory, 2, b"\n")  # after the first assistant message, at byte 1040
    reindex_view_as_gptme(directory)
    conversation = opened(directory)
    verdicts = verify_all(conversation)
    assert {v.status for v in verdicts} == {Status.SHIFTED}
    first = verdicts[0]  # view line 4: the range is now file line 4, the Preview's is line 5
    assert first.lands_on == 3 and first.preview_matches == (4,)
    assert "line 3 at byte 1,040" in first.explanation
    assert "the message the Preview names is line 5" in first.explanation
    for _ in conversation.catalogue_all():
        pass
    (blank,) = conversation.catalogue.problems(MASTER)
    assert (blank.line, blank.start, blank.kind) == (2, 1040, "blank")


def test_a_malformed_line_is_recorded_and_named_in_the_shift(
    copy: Callable[[str], Path], opened: Callable[[Path], Conversation]
) -> None:
    directory = copy("conv-basic")
    insert_line(directory, 2, b'{"role": "user", "content": "half a mess\n')
    reindex_view_as_gptme(directory)
    conversation = opened(directory)
    verdicts = verify_all(conversation)
    assert {v.status for v in verdicts} == {Status.SHIFTED}
    assert "gptme's index counted line(s) 3" in verdicts[0].explanation
    for _ in conversation.catalogue_all():
        pass
    (bad,) = conversation.catalogue.problems(MASTER)
    assert bad.kind == "malformed" and bad.start == 1040 and "not JSON" in bad.first_line


def test_an_undo_that_rewrote_the_master_is_noticed_compared_and_explained(
    copy: Callable[[str], Path], opened: Callable[[Path], Conversation]
) -> None:
    directory = copy("conv-basic")
    conversation = opened(directory)
    for _ in conversation.catalogue_all():  # what was indexed before the undo
        pass
    lines = lines_of(directory / MASTER)
    # gptme's undo: the master saved as a branch, then rewritten without its last 8 messages
    (directory / "branches").mkdir()
    shutil.copy(directory / MASTER, directory / "branches" / "main-undo-0.jsonl")
    write_lines(directory / MASTER, lines[:14])
    with (directory / "events.jsonl").open("a") as events:
        events.write(json.dumps({"seq": 99, "ts": "t", "type": "undo", "payload": {"n": 8}}) + "\n")
    refreshes = conversation.refresh()
    master = next(r for r in refreshes if r.name == MASTER)
    assert master.rewritten and "an undo of 8" in master.reason
    assert [c.describe() for c in conversation.changes] == ["lines 15 to 22 removed"]
    statuses = by_line(conversation)
    assert statuses == {4: Status.OK, 6: Status.OK, 7: Status.OK, 16: Status.REWRITTEN}
    broken = next(v for v in verify_all(conversation) if not v.ok)
    assert "runs past the end of conversation.jsonl" in broken.explanation
    assert broken.original == "branches/main-undo-0.jsonl:16"
    found = next(f for f in conversation.references() if f.where == broken.where)
    assert recover(conversation, found).content == json.loads(lines[15])["content"]


def test_a_rewrite_without_a_record_is_noticed_and_the_changes_named(
    copy: Callable[[str], Path], opened: Callable[[Path], Conversation]
) -> None:
    directory = copy("conv-basic")
    conversation = opened(directory)
    for _ in conversation.catalogue_all():
        pass
    lines = lines_of(directory / MASTER)
    edited = json.loads(lines[7])
    edited["content"] += " (and the rest of the week)"
    write_lines(directory / MASTER, [*lines[:7], encode_message(edited), *lines[8:]])
    (master,) = [r for r in conversation.refresh() if r.name == MASTER]
    assert master.rewritten and master.reason == "its last indexed line changed"
    described = [c.describe() for c in conversation.changes]
    assert described[0] == "line 8 changed (now line 8)"
    assert described[1] == f"lines 9 to 22 moved by +{len(' (and the rest of the week)')} bytes"
    # every later reference now lands mid-line
    assert by_line(conversation) == {
        4: Status.OK,
        6: Status.OK,
        7: Status.OK,
        16: Status.MID_LINE,
    }


def test_a_torn_last_line_is_left_unindexed_then_picked_up(
    copy: Callable[[str], Path], opened: Callable[[Path], Conversation]
) -> None:
    directory = copy("conv-basic")
    whole = (directory / MASTER).read_bytes()
    (directory / MASTER).write_bytes(whole[:55_000])  # into line 16 (bytes 49040-59993)
    conversation = opened(directory)
    assert conversation.master.lines == 15 and conversation.master.partial == 55_000 - 49_040
    verifier = Verifier(conversation)
    verifier.update()
    torn = [v for v in verifier.ordered() if not v.ok]
    assert [(v.where.line + 1, v.status) for v in torn] == [(16, Status.TORN)]
    assert "unfinished last line" in torn[0].explanation
    with (directory / MASTER).open("ab") as file:
        file.write(whole[55_000:59_993])  # gptme finishes the line
    refreshes = conversation.refresh()
    assert next(r for r in refreshes if r.name == MASTER).new_lines == 1
    changed = verifier.update(refreshes)
    assert [(v.where.line + 1, v.status) for v in changed] == [(16, Status.OK)]


def test_a_moved_directory_resolves_relative_and_says_so(
    copy: Callable[[str], Path], opened: Callable[[Path], Conversation], tmp_path: Path
) -> None:
    directory = copy("conv-basic")
    moved = tmp_path / "elsewhere" / "renamed"
    shutil.move(directory, moved)
    verdicts = verify_all(opened(moved))
    assert all(v.ok and v.resolved_relative for v in verdicts)
    assert all(v.master == str(moved.resolve() / MASTER) for v in verdicts)
    assert all("does not exist here: resolved relative" in v.notes[0] for v in verdicts)


def test_a_reference_to_a_master_that_exists_nowhere_is_missing_file(
    copy: Callable[[str], Path], opened: Callable[[Path], Conversation]
) -> None:
    directory = copy("conv-basic")
    view = directory / VIEW
    text = view.read_text().replace("conv-basic/conversation.jsonl", "conv-basic/other.jsonl")
    view.write_text(text)
    verdicts = verify_all(opened(directory))
    assert {v.status for v in verdicts} == {Status.MISSING_FILE}
    assert "does not exist" in verdicts[0].explanation


def test_an_edited_tool_output_file_is_named(
    copy: Callable[[str], Path], opened: Callable[[Path], Conversation]
) -> None:
    directory = copy("conv-basic")
    saved = directory / "tool-outputs/autocompact/20261123_161658-65359169.txt"
    saved.write_bytes(saved.read_bytes().replace(b"FAILED", b"PASSED", 1))
    (directory / "tool-outputs/autocompact/20261123_161658-7fb94b73.txt").unlink()
    conversation = opened(directory)
    statuses = by_line(conversation)
    assert statuses == {
        4: Status.TOOL_OUTPUT_DIFFERS,
        6: Status.TOOL_OUTPUT_DIFFERS,
        7: Status.OK,
        16: Status.OK,
    }
    verdicts = {v.where.line + 1: v for v in verify_all(conversation)}
    assert "20261123_161658-65359169.txt differs" in verdicts[4].explanation
    missing = verdicts[6].explanation
    assert "is missing" in missing
    # the path gptme recorded, and the one checked here (the recorded one is another machine's)
    assert verdicts[6].reference.tool_output in missing
    assert f"{directory}/tool-outputs/autocompact/20261123_161658-7fb94b73.txt" in missing
    # the master log still recovers the original, and says what is wrong with the copy
    found = next(f for f in conversation.references() if f.where.line == 3)
    recovered = recover(conversation, found)
    master = conversation.message(MASTER, 3)
    assert recovered.content == master.content  # type: ignore[union-attr]
    assert "differs" in recovered.evidence


def test_a_reference_starting_mid_line(
    copy: Callable[[str], Path], opened: Callable[[Path], Conversation]
) -> None:
    directory = copy("conv-basic")
    view = directory / VIEW
    view.write_text(view.read_text().replace("(bytes 12082-24165)", "(bytes 12087-24165)"))
    verdicts = {v.where.line + 1: v for v in verify_all(opened(directory))}
    assert verdicts[6].status is Status.MID_LINE
    assert "starts 5 bytes into line 6 (bytes 12082-24165)" in verdicts[6].explanation
    assert verdicts[6].preview_matches == (5,)
    assert "the message it was made for is now line 6" in verdicts[6].explanation
    assert [v.status for k, v in sorted(verdicts.items()) if k != 6] == [Status.OK] * 3


def test_a_reference_appended_to_a_view_is_verified_on_the_next_update(
    copy: Callable[[str], Path], opened: Callable[[Path], Conversation]
) -> None:
    """The update after an append looks only at what the view gained (and at what was not ok):
    a line gptme appends with a reference in it gets its verdict, the rest keep theirs."""
    directory = copy("conv-basic")
    conversation = opened(directory)
    verifier = Verifier(conversation)
    verifier.update()
    before = dict(verifier.verdicts)
    view = next(f for f in conversation.references()).where.name
    lines = (directory / view).read_bytes().splitlines(keepends=True)
    with_reference = next(i for i, line in enumerate(lines) if b"Master context:" in line)
    with (directory / view).open("ab") as file:
        file.write(lines[with_reference])  # the same reference again, on a new last line
    changed = verifier.update(conversation.refresh())
    assert [(v.where.name, v.where.line, v.status) for v in changed] == [
        (view, len(lines), Status.OK)
    ]
    assert {k: v for k, v in verifier.verdicts.items() if k in before} == before
    assert len(verifier.verdicts) == len(before) + 1


def test_a_tool_output_edited_while_followed_is_checked_again(
    copy: Callable[[str], Path], opened: Callable[[Path], Conversation]
) -> None:
    """Following: watchfiles names the saved output that changed, and the references to it are
    verified again, though no log gained a line."""
    directory = copy("conv-basic")
    conversation = opened(directory)
    verifier = Verifier(conversation)
    verifier.update()
    assert all(v.ok for v in verifier.verdicts.values())
    saved = directory / "tool-outputs/autocompact/20261123_161658-65359169.txt"
    saved.write_bytes(saved.read_bytes().replace(b"FAILED", b"PASSED", 1))
    changed = verifier.update(conversation.refresh(), touched={saved})
    assert [(v.where.line + 1, v.status) for v in changed] == [(4, Status.TOOL_OUTPUT_DIFFERS)]
    # An append that names only the logs does not look at the outputs again, nor lose this.
    assert verifier.update(conversation.refresh(), touched={directory / MASTER}) == []
    assert sum(not v.ok for v in verifier.verdicts.values()) == 1


def renamed_over(path: Path, lines: list[bytes]) -> None:
    """As gptme 0.35.1 writes a log again: a new file renamed over it."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(b"".join(lines))
    os.replace(temporary, path)


def test_an_undo_renamed_over_the_master_is_indexed_from_its_cut_alone(
    copy: Callable[[str], Path], opened: Callable[[Path], Conversation]
) -> None:
    directory = copy("conv-basic")
    conversation = opened(directory)
    for _ in conversation.catalogue_all():
        pass
    lines = lines_of(directory / MASTER)
    renamed_over(directory / MASTER, lines[:14])
    with (directory / "events.jsonl").open("a") as events:
        events.write(json.dumps({"seq": 99, "ts": "t", "type": "undo", "payload": {"n": 8}}) + "\n")
    (master,) = [r for r in conversation.refresh() if r.name == MASTER]
    assert master.rewritten and "an undo of 8" in master.reason
    assert master.bytes_read == 0  # the 14 lines kept were compared byte for byte, not indexed
    assert [c.describe() for c in conversation.changes] == ["lines 15 to 22 removed"]
    assert conversation.master.lines == 14
    assert conversation.unchanged == sum(map(len, lines[:14]))


def test_an_edit_renamed_over_the_master_is_indexed_and_compared_from_the_line_edited(
    copy: Callable[[str], Path], opened: Callable[[Path], Conversation]
) -> None:
    directory = copy("conv-basic")
    conversation = opened(directory)
    for _ in conversation.catalogue_all():
        pass
    lines = lines_of(directory / MASTER)
    edited = json.loads(lines[7])
    edited["content"] += " (and the rest of the week)"
    now = [*lines[:7], encode_message(edited), *lines[8:]]
    renamed_over(directory / MASTER, now)
    (master,) = [r for r in conversation.refresh() if r.name == MASTER]
    assert master.rewritten
    assert master.bytes_read == sum(map(len, now[7:]))  # from line 8 on
    described = [c.describe() for c in conversation.changes]
    assert described[0] == "line 8 changed (now line 8)"
    assert all(c.old[0] >= 7 for c in conversation.changes)
    assert list(conversation.master.ends) == list(itertools.accumulate(map(len, now)))


@pytest.mark.parametrize("saved_as", ["the master before", "another log"])
def test_an_undo_re_indexes_the_master_first_then_its_branch_as_a_fresh_index_does(
    copy: Callable[[str], Path], opened: Callable[[Path], Conversation], saved_as: str
) -> None:
    """The branch gptme saves on an undo is new to the index: it is staged after the master
    was applied (1 GiB read and searched for references, the master's rows shown before),
    and then indexed as a fresh cache indexes it, whether or not it holds the master's bytes."""
    directory = copy("conv-basic")
    conversation = opened(directory)
    for _ in conversation.catalogue_all():
        pass
    lines = lines_of(directory / MASTER)
    saved = list(lines)
    if saved_as == "another log":  # a reference among the lines, a line changed, one added
        referring = next(raw for raw in lines_of(directory / VIEW) if b"Master context: " in raw)
        saved = [*lines[:5], referring, lines[6].rstrip(b"\n") + b" \n", *lines[7:], referring]
    name = "branches/main-undo-0.jsonl"
    (directory / "branches").mkdir()
    (directory / name).write_bytes(b"".join(saved))
    renamed_over(directory / MASTER, lines[:14])
    with (directory / "events.jsonl").open("a") as events:
        events.write(json.dumps({"seq": 99, "ts": "t", "type": "undo", "payload": {"n": 8}}) + "\n")
    conversation.prepare()
    new = conversation.unindexed()
    assert new == [name]
    refreshes = conversation.apply(conversation.stage(skip=new))
    assert [r.name for r in refreshes] == [MASTER, VIEW]
    master = refreshes[0]
    assert master.rewritten and "an undo of 8" in master.reason
    assert [c.describe() for c in conversation.changes] == ["lines 15 to 22 removed"]
    assert conversation.index(name).lines == 0  # not read yet
    (branch,) = conversation.apply(conversation.stage(only=new))
    assert (branch.name, branch.lines, branch.rewritten) == (name, len(saved), False)
    fresh = opened(directory, "fresh.sqlite")
    assert list(conversation.index(name).ends) == list(fresh.index(name).ends)
    assert list(fresh.index(name).ends) == list(itertools.accumulate(map(len, saved)))
    found = conversation.references_of(name)[1]
    assert found == fresh.references_of(name)[1]
    assert [f.where.line for f in found] == (
        [5, len(saved) - 1] if saved_as != "the master before" else []
    )
    assert conversation.unindexed() == []
