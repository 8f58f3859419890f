"""The packed form laid out in pieces (``compact.in_pieces``): the first and last ``inline``
turns' records kept beside the checkpoint, the others in pieces cut at turns' ends, each piece
read when a turn in it is first decoded; a layout that does not fit its turns is refused."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from engine.context import Context, InvalidExport
from engine.context.compact import (
    PIECES_VERSION,
    PackedTurn,
    dump_compact,
    dump_packed,
    in_pieces,
    load_compact,
    unpacked,
)

from .conftest import new_context


class Pieces:
    """Pieces held in memory, counting the reads of each."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces
        self.reads: list[int] = []

    def piece(self, index: int) -> memoryview:
        self.reads.append(index)
        return memoryview(self.pieces[index])


def questions(count: int) -> Context:
    context = new_context()
    for n in range(count):
        context.add_user(f"question {n}")
    return context


def laid_out(
    context: Context, inline: int = 2, piece_bytes: int = 60
) -> tuple[dict[str, Any], bytes, list[bytes]]:
    data, packed = dump_packed(context)
    kept, pieces = in_pieces(data, packed, inline, piece_bytes)
    return data, kept, [bytes(piece) for piece in pieces]


def test_a_round_trip_through_pieces_keeps_the_context_and_reads_a_piece_when_needed() -> None:
    context = questions(20)
    data, kept, pieces = laid_out(context)
    assert data["version"] == PIECES_VERSION and len(pieces) > 2
    columns = 6 * 8 * 20  # the index's numeric columns, kept before the records
    assert sum(map(len, pieces)) + len(kept) - columns == len(dump_packed(context)[1])
    assert list(data["turns"]) == ["id"]
    source = Pieces(pieces)
    loaded = load_compact(data, packed=kept, pieces=source)
    assert source.reads == []  # the turns drawn first are kept beside the checkpoint
    turns = [turn for depth, turn in loaded.iter_turns() if depth >= 0]
    middle = turns[len(turns) // 2]
    assert isinstance(middle, PackedTurn) and middle.in_piece
    middle.unpack()
    assert len(set(source.reads)) == 1
    assert loaded.model_dump_json() == context.model_dump_json()
    assert unpacked(data, kept, Pieces(pieces)) == dump_compact(context)
    source = Pieces(pieces)
    fresh = load_compact(data, packed=kept, pieces=source)
    records = dump_packed(fresh)[1]  # a turn never decoded is written as it was read
    assert records == dump_packed(context)[1]
    kept_apart = [turn for depth, turn in fresh.iter_turns() if depth >= 0][2:-2]
    assert all(isinstance(turn, PackedTurn) and turn.in_piece for turn in kept_apart)


def test_turns_too_few_to_fill_a_piece_stay_beside_the_checkpoint() -> None:
    context = questions(20)
    data, packed = dump_packed(context)
    before = copy.deepcopy(data)
    assert in_pieces(data, packed, 2, 1 << 20) == (packed, [])
    assert in_pieces(data, packed, 10, 1) == (packed, [])  # none between the ends
    assert data == before


def without(pieces: list[bytes], data: dict[str, Any]) -> tuple[list[bytes], dict[str, Any]]:
    data["pieces"]["lengths"].pop()
    return pieces[:-1], data


def crossing(pieces: list[bytes], data: dict[str, Any]) -> tuple[list[bytes], dict[str, Any]]:
    lengths = data["pieces"]["lengths"]
    joined = pieces[0] + pieces[1]
    lengths[0] -= 1
    lengths[1] += 1
    return [joined[: lengths[0]], joined[lengths[0] :], *pieces[2:]], data


def extra(pieces: list[bytes], data: dict[str, Any]) -> tuple[list[bytes], dict[str, Any]]:
    data["pieces"]["lengths"].append(10)
    return [*pieces, b"[" + b" " * 8 + b"]"], data


def inline_zero(pieces: list[bytes], data: dict[str, Any]) -> tuple[list[bytes], dict[str, Any]]:
    data["pieces"]["inline"] = 0
    return pieces, data


def short_columns(pieces: list[bytes], data: dict[str, Any]) -> tuple[list[bytes], dict[str, Any]]:
    data["turns"]["id"] = data["turns"]["id"] * 40  # more turns than the columns hold
    return pieces, data


def no_lengths(pieces: list[bytes], data: dict[str, Any]) -> tuple[list[bytes], dict[str, Any]]:
    data["pieces"]["lengths"] = "3"
    return pieces, data


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (without, "go past their"),
        (crossing, "crosses the end of piece 0"),
        (extra, "fill"),
        (inline_zero, "laid out as"),
        (short_columns, "no columns of 800 turns"),
        (no_lengths, "laid out as"),
    ],
)
def test_a_layout_that_does_not_fit_its_turns_is_refused(damage: Any, says: str) -> None:
    data, kept, pieces = laid_out(questions(20))
    pieces, data = damage(pieces, data)
    with pytest.raises(InvalidExport, match=says):
        load_compact(data, packed=kept, pieces=Pieces(pieces))


def test_pieces_and_their_version_go_together() -> None:
    data, kept, pieces = laid_out(questions(20))
    with pytest.raises(InvalidExport, match="in pieces or not"):
        load_compact(data, packed=kept)
    plain, packed = dump_packed(questions(20))
    with pytest.raises(InvalidExport, match="in pieces or not"):
        load_compact(plain, packed=packed, pieces=Pieces(pieces))
