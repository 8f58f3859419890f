"""A big context's checkpoint keeps the turns between the first and last ``DRAWN_FIRST`` in
pieces of their own, and its story index in another (``engine/workspace/pieces.py``): opening
reads the checkpoint alone, a turn in a piece reads it when first decoded (or every piece is
read as the context is restored, by a store that cannot read in the calling thread), and a
piece missing or not the one listed has the context rebuilt from its log."""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from engine.context.compact import DRAWN_FIRST, PackedTurn
from engine.deep_verify import verify_deep
from engine.store import Checkpoint, EventStore
from engine.workspace import CONTEXT_CHECKPOINT, Workspace
from engine.workspace import pieces as pieces_module
from engine.workspace.keys import PIECE_PREFIX
from tests.engine.workspace.test_packed_turns import many_turns, stored

TURNS = 2 * DRAWN_FIRST + 60
PREFIX = PIECE_PREFIX + "agent:"


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    # The 60 turns between the first and last 64 (about 170 bytes each) in pieces of 2,000.
    monkeypatch.setattr(pieces_module, "PIECE_BYTES", 2_000)


def read_names(monkeypatch: pytest.MonkeyPatch, store: type[EventStore]) -> list[str]:
    """The checkpoints ``store`` reads from now on, as it awaits or blocking, in order."""
    names: list[str] = []
    awaited, blocking = store.load_checkpoint, store.load_checkpoint_blocking

    async def load(self: EventStore, name: str) -> Checkpoint | None:
        names.append(name)
        return await awaited(self, name)

    def load_blocking(self: EventStore, name: str) -> Checkpoint | None:
        names.append("blocking " + name)
        return blocking(self, name)

    monkeypatch.setattr(store, "load_checkpoint", load)
    monkeypatch.setattr(store, "load_checkpoint_blocking", load_blocking)
    return names


def saved_names(monkeypatch: pytest.MonkeyPatch, store: type[EventStore]) -> list[str]:
    """The checkpoints ``store`` saves from now on, in order."""
    names: list[str] = []
    real = store.save_checkpoint

    async def save(self: EventStore, name: str, seq: int, data: bytes, **kw: Any) -> None:
        names.append(name)
        await real(self, name, seq, data, **kw)

    monkeypatch.setattr(store, "save_checkpoint", save)
    return names


async def piece_names(ws: Workspace) -> list[str]:
    return sorted(name for name in await ws.store.checkpoints() if name.startswith(PREFIX))


def pending(ws: Workspace) -> list[str]:
    """The turns of ``agent`` whose record is in a piece not read yet."""
    return [
        turn.id
        for _depth, turn in ws.context("agent").iter_turns()
        if isinstance(turn, PackedTurn) and turn.in_piece
    ]


async def test_opening_reads_the_checkpoint_alone_and_a_turn_its_piece_when_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.store.sqlite import SqliteEventStore

    path = tmp_path / "w.pact"
    export = await many_turns(path, TURNS)
    async with await Workspace.open(path, watch=False) as ws:
        listed = await piece_names(ws)
    assert len(listed) >= 3  # pieces of turns, and the story index's
    names = read_names(monkeypatch, SqliteEventStore)
    async with await Workspace.open(path, watch=False) as ws:
        assert ws.checkpoint_problem is None
        assert not [name for name in names if name.startswith(PIECE_PREFIX)]
        assert len(pending(ws)) == TURNS - 2 * DRAWN_FIRST
        middle = ws.context("agent")[f"d{TURNS // 2}, 1, 0"]  # one turn decoded: its piece read
        assert middle is not None and middle.content == f"note {TURNS - 1 - TURNS // 2}"
        read = [name.removeprefix("blocking ") for name in names if name.startswith("blocking")]
        assert len(read) == 1 and read[0] in listed
        assert [left async for left in ws.unpacking("agent")] == [0]
        assert pending(ws) == []
        awaited = {name for name in names if name.startswith(PIECE_PREFIX)}
        assert awaited == set(listed) - set(read)  # the others, the story index's among them
        assert ws.context("agent").model_dump_json() == export
        story = await ws.item_story("agent", middle.id)
        assert [event.seq for event in story]  # told from the index the piece holds ...
        assert not ws._projection("agent").stories_unsaved  # ... not indexed from the log again
        assert ws.checkpoint_problem is None


async def test_every_piece_is_read_as_the_context_is_restored_where_reads_are_awaited(
    where: str,
) -> None:
    export = await many_turns(where, TURNS)
    async with await Workspace.open(where, watch=False, read_only=where.endswith(".pact")) as ws:
        assert ws.checkpoint_problem is None
        assert len(await piece_names(ws)) >= 3
        projection = ws._projection("agent")
        pieces = projection.pieces
        assert pieces is not None and pieces.complete
        assert ws.context("agent").model_dump_json() == export  # every turn decoded
        assert [left async for left in ws.unpacking("agent")] == []  # and indexed
        story_index = await ws.store.load_checkpoint(pieces.names[-1])
        assert story_index is not None
        assert pieces.held == len(story_index.data)  # the turns' pieces let go of; this kept ...
        middle = ws.context("agent")[f"d{TURNS // 2}, 1, 0"]
        assert middle is not None
        assert [event.seq for event in await ws.item_story("agent", middle.id)]
        assert pieces.held == 0 and not projection.stories_unsaved  # ... until decoded


async def test_a_checkpoint_saved_again_writes_only_the_pieces_that_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "w.pact"
    await many_turns(path, TURNS)
    async with await Workspace.open(path, watch=False) as ws:
        before = await piece_names(ws)
        saved = saved_names(monkeypatch, type(ws.store))
        commands: list[dict[str, Any]] = []
        for n in range(40):  # forty turns more: the history's middle grows at its newer end
            commands += [
                {"op": "message", "role": "user", "text": f"more {n}"},
                {"op": "insert", "selector": "d0, 1, 0", "component": {"content": f"m{n}"}},
            ]
        await ws.run_many("agent", commands)
        await ws.checkpoint()
        after = await piece_names(ws)
        export = ws.context("agent").model_dump_json()
    written = [name for name in saved if name.startswith(PREFIX)]
    kept = set(before) & set(after)
    assert kept and not kept & set(written)  # the older pieces stayed as they were
    assert set(after) - kept == set(written)  # the new ones written, once each
    assert len(written) == len(set(written))
    async with await Workspace.open(path, watch=False) as ws:
        assert await piece_names(ws) == after  # the pieces no checkpoint lists are forgotten
        assert [left async for left in ws.unpacking("agent")] == [0]
        assert ws.context("agent").model_dump_json() == export
        assert ws.checkpoint_problem is None


def forge_piece(path: Path, piece: str, how: str) -> None:
    """Take away piece ``piece``, or give it other bytes with the store's digest fixed (as
    someone who can write the file could)."""
    with closing(sqlite3.connect(path)) as connection:
        if how == "missing":
            connection.execute("DELETE FROM checkpoint_chunks WHERE name = ?", (piece,))
            connection.execute("DELETE FROM checkpoints WHERE name = ?", (piece,))
        else:
            [(data,)] = connection.execute(
                "SELECT data FROM checkpoint_chunks WHERE name = ?", (piece,)
            ).fetchall()
            forged = data.replace(b"note", b"NOTE")
            assert forged != data and len(forged) == len(data)
            connection.execute(
                "UPDATE checkpoint_chunks SET data = ? WHERE name = ?", (forged, piece)
            )
            connection.execute(
                "UPDATE checkpoints SET sha256 = ? WHERE name = ?",
                (hashlib.sha256(forged).hexdigest(), piece),
            )
        connection.commit()


async def first_piece(path: Path) -> str:
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        projection = ws._projection("agent")
        assert projection.pieces is not None
        return projection.pieces.names[0]


@pytest.mark.parametrize("how", ["missing", "other bytes"])
@pytest.mark.parametrize("read_only", [False, True])
async def test_a_piece_missing_or_not_the_one_listed_rebuilds_the_context_from_its_log(
    tmp_path: Path, how: str, read_only: bool
) -> None:
    path = tmp_path / "w.pact"
    export = await many_turns(path, TURNS)
    piece = await first_piece(path)
    forge_piece(path, piece, how)
    before = stored(path)
    async with await Workspace.open(path, watch=False, read_only=read_only) as ws:
        # Read only: every piece read as the context is restored; else when it is drawn.
        assert (ws.checkpoint_problem is not None) == read_only
        async for _left in ws.unpacking("agent"):
            pass
        assert ws.context("agent").model_dump_json() == export  # the log's state
        problem = ws.checkpoint_problem
        assert problem is not None and repr(piece) in problem and "replayed" in problem
    if read_only:
        assert stored(path) == before


async def test_a_query_reading_a_turn_whose_piece_is_missing_fails_naming_it(
    tmp_path: Path,
) -> None:
    from engine.context.errors import MalformedPackedTurns

    path = tmp_path / "w.pact"
    await many_turns(path, TURNS)
    piece = await first_piece(path)
    forge_piece(path, piece, "missing")
    async with await Workspace.open(path, watch=False) as ws:
        assert ws.checkpoint_problem is None  # no piece read at opening
        with pytest.raises(MalformedPackedTurns, match=repr(piece)):
            ws.context("agent").model_dump_json()


async def test_verify_deep_judges_the_pieces_with_the_checkpoint_that_lists_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.pact"
    await many_turns(path, TURNS)
    async with await Workspace.open(path, watch=False) as ws:
        listed = await piece_names(ws)
        seq = ws.head
        await ws.store.save_checkpoint(PREFIX + "0" * 64, seq, b"[]")  # listed by none
        verdicts = {f.name: f.verdict for f in (await verify_deep(ws.store)).checkpoints}
    assert {verdicts[name] for name in listed} == {"matches"}
    assert verdicts[CONTEXT_CHECKPOINT + "agent"] == "matches"
    assert verdicts[PREFIX + "0" * 64] == "ignored"
    forge_piece(path, listed[0], "other bytes")
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        result = await verify_deep(ws.store)
    verdicts = {f.name: f.verdict for f in result.checkpoints}
    assert verdicts[CONTEXT_CHECKPOINT + "agent"] == "ignored"
    assert {verdicts[name] for name in listed} == {"ignored"}


async def test_a_second_save_in_the_process_that_wrote_the_pieces_writes_only_new_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "w.pact"
    async with await Workspace.open(path, create=True, watch=False) as ws:
        await ws.create_context("agent")
        commands: list[dict[str, Any]] = []
        for n in range(TURNS):
            commands += [
                {"op": "message", "role": "user", "text": f"question {n}"},
                {"op": "insert", "selector": "d0, 1, 0", "component": {"content": f"n{n}"}},
            ]
        await ws.run_many("agent", commands)
        await ws.checkpoint()  # a context built here, never restored: its pieces written
        first = await piece_names(ws)
        saved = saved_names(monkeypatch, type(ws.store))
        await ws.run_many("agent", [{"op": "message", "role": "user", "text": "one more"}])
        await ws.checkpoint()
        second = await piece_names(ws)
    written = {name for name in saved if name.startswith(PREFIX)}
    assert written == set(second) - set(first)  # not the pieces it wrote the first time
    assert len(set(second) & set(first)) >= 2


async def test_a_checkpoint_in_pieces_is_not_decoded_as_plain_data_without_its_store(
    tmp_path: Path,
) -> None:
    from engine.store import InvalidCheckpoint
    from engine.workspace import decode_checkpoint

    path = tmp_path / "w.pact"
    await many_turns(path, TURNS)
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        checkpoint = await ws.store.load_checkpoint(CONTEXT_CHECKPOINT + "agent")
    assert checkpoint is not None
    with pytest.raises(InvalidCheckpoint, match="in pieces, and nothing to read them from"):
        decode_checkpoint(checkpoint.data)
