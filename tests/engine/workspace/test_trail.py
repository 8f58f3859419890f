"""A document's audit trail kept in pieces beside its checkpoint (``engine/workspace/trail.py``):
the rows read from the pieces and the log after them are the rows a trail made from the first
event gives, in both stores; a piece that cannot be used is noted and the log read instead;
the pieces are merged as they grow."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from engine.documents import DOC_PREFIX
from engine.protocol.audit import ROWS_VERSION, AuditRow, AuditTrail
from engine.workspace import Workspace, cadence
from engine.workspace.trail import (
    MERGE_AT,
    TRAIL_PREFIX,
    InvalidTrailPiece,
    TrailPiece,
    chain_of,
    decode_piece,
    encode_piece,
    piece_name,
    piece_names,
)
from pact_tui.demo import create_memo

from .conftest import ManualClock

NEVER = 10**9


async def memo(where: str, monkeypatch: pytest.MonkeyPatch, every: int = 7) -> None:
    """The demo memo, checkpointed every ``every`` events: a piece of its trail each time."""
    monkeypatch.setitem(cadence.INTERVALS, "document", cadence.Intervals(every, None))
    async with await Workspace.open(where, create=True, watch=False, clock=ManualClock()) as ws:
        await create_memo(ws)


async def log_rows(ws: Workspace, name: str) -> list[AuditRow]:
    """The oracle: a trail made from every event of the log."""
    events = await ws.store.read_stream(DOC_PREFIX + name, 0)
    return AuditTrail().rows([event.payload for event in events])


async def trail_rows(
    ws: Workspace, name: str, after: int = 0, until: int | None = None, size: int = 5
) -> list[AuditRow]:
    return [row async for page in ws.audit_rows(name, after, until, size) for row in page]


async def pieces(ws: Workspace, name: str) -> list[tuple[int, int, str]]:
    return chain_of(name, await ws.store.checkpoints())


async def test_the_pieces_and_the_log_after_them_give_the_logs_rows(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await memo(where, monkeypatch)
    async with await Workspace.open(where, watch=False, read_only=True) as ws:
        expected = await log_rows(ws, "memo")
        chain = await pieces(ws, "memo")
        assert len(chain) >= 3  # a piece a checkpoint; the log's last events after them
        assert len(chain) < MERGE_AT  # merged as they grew
        assert chain[-1][1] < len(expected)
        total = len(expected)
        for after in (0, 1, 6, 7, total // 2, total - 1, total):
            for until in (None, after, after + 1, total // 2 + 3, total):
                if until is not None and until < after:
                    continue
                got = await trail_rows(ws, "memo", after, until)
                assert got == expected[after:until], (after, until)
        assert ws.checkpoint_problem is None


async def test_only_the_events_after_the_pieces_are_read_from_the_log(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pieces stop short of the log's end (its last events came after the last checkpoint):
    those are read from the log and made rows, nothing before them."""
    await memo(where, monkeypatch)
    monkeypatch.setattr(cadence, "CHECKPOINT_ON_CLOSE", NEVER)
    monkeypatch.setitem(cadence.INTERVALS, "document", cadence.Intervals(NEVER, None))
    async with await Workspace.open(where, watch=False, clock=ManualClock()) as ws:
        covered = (await pieces(ws, "memo"))[-1][1]
        await create_memo_tail(ws)
    async with await Workspace.open(where, watch=False, read_only=True) as ws:
        expected = await log_rows(ws, "memo")
        assert len(expected) > covered
        read: list[int] = []
        document_pages = ws.document_pages

        def spied(name: str, after: int = 0, *rest: Any) -> AsyncIterator[Any]:
            read.append(after)
            return document_pages(name, after, *rest)

        monkeypatch.setattr(ws, "document_pages", spied)
        assert await trail_rows(ws, "memo") == expected
        assert read == [covered]


async def create_memo_tail(ws: Workspace) -> None:
    """Four more events on the memo: an agent joins, a human trusts it and an agent that
    joined long before (each trail row names its agent by the name it joined with: the
    second's from the names a piece kept), and the new agent leaves."""
    from engine.protocol.commands import Actor

    await ws.run_document("memo", {"op": "join", "agentName": "late"}, Actor.agent("late"))
    for agent in ("late", "intern"):
        trust = {"op": "trust", "agent": agent, "level": "Observer", "why": "again"}
        await ws.run_document("memo", trust, Actor.human("ann"))
    await ws.run_document("memo", {"op": "leave"}, Actor.agent("late"))


def test_a_piece_round_trips_whatever_its_text_holds() -> None:
    rows = [
        AuditRow(0, 1, "agent.joined", "a", "AiAgent", None, "a", "", "", False),
        AuditRow(1, 2**70, "x", "\ud800 lone", "Individual", "s", "", "d", "why", True, True),
        AuditRow(2, 3, "x", "a", "AiAgent", "s", "p", "", "", False),
    ]
    piece = TrailPiece(4, 7, {"id": "name"}, rows)
    data = encode_piece(piece)
    assert data[:1] == b"J"  # json's, for what orjson refuses
    assert decode_piece(data, 4, 7) == piece
    assert piece_names(data, 4, 7) == {"id": "name"}
    plain = TrailPiece(4, 5, {"a": "legal"}, rows[:1])
    assert decode_piece(encode_piece(plain), 4, 5) == plain
    assert piece_names(encode_piece(plain), 4, 5) == {"a": "legal"}  # its header alone read
    assert decode_piece(encode_piece(TrailPiece(0, 0, {}, [])), 0, 0).rows == []


def _header_and_columns(data: bytes) -> tuple[dict[str, Any], list[Any]]:
    head, _, body = data.partition(b"\n")
    header: dict[str, Any] = json.loads(head)
    columns: list[Any] = json.loads(body)
    return header, columns


def _forged(data: bytes, change: str) -> bytes:
    header, columns = _header_and_columns(data)
    if change == "not json":
        return b"[" + data[1:]
    if change == "another version":
        header["rows"] = ROWS_VERSION + 1
    elif change == "another range":
        header["upto"] += 1
    elif change == "a column too short":
        columns[0] = columns[0][:-1]
    elif change == "a value of the wrong type":
        columns[1][0] = "noon"
    elif change == "a place past the values":
        columns[2][1][0] = len(columns[2][0])
    elif change == "a column of text not shared":
        columns[3] = columns[3][0]
    elif change == "names that are not names":
        header["names"] = {"a": 1}
    return json.dumps(header).encode() + b"\n" + json.dumps(columns).encode()


HEADER_FORGERIES = ["not json", "another version", "another range", "names that are not names"]
FORGERIES = [
    "not json",
    "another version",
    "another range",
    "a column too short",
    "a value of the wrong type",
    "a place past the values",
    "a column of text not shared",
    "names that are not names",
]


@pytest.mark.parametrize("change", FORGERIES)
def test_a_malformed_piece_is_refused_with_what_is_wrong(change: str) -> None:
    rows = [AuditRow(n, n, "x", "a", "AiAgent", None, "", "", "", False) for n in range(3)]
    data = encode_piece(TrailPiece(0, 3, {}, rows))
    with pytest.raises(InvalidTrailPiece):
        decode_piece(_forged(data, change), 0, 3)
    if change in HEADER_FORGERIES:  # what a new piece reads of the last: its header
        with pytest.raises(InvalidTrailPiece):
            piece_names(_forged(data, change), 0, 3)


@pytest.mark.parametrize("change", FORGERIES)
async def test_a_piece_that_cannot_be_used_is_noted_and_the_log_read_instead(
    where: str, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """Written through the store (its digest is right): only reading what it holds can tell."""
    await memo(where, monkeypatch)
    async with await Workspace.open(where, watch=False, read_only=True) as ws:
        expected = await log_rows(ws, "memo")
    async with await Workspace.open(where, watch=False) as ws:
        chain = await pieces(ws, "memo")
        key = chain[len(chain) // 2][2]
        checkpoint = await ws.store.load_checkpoint(key)
        assert checkpoint is not None
        await ws.store.save_checkpoint(key, checkpoint.seq, _forged(checkpoint.data, change))
    async with await Workspace.open(where, watch=False, read_only=True) as ws:
        assert await trail_rows(ws, "memo") == expected
        assert ws.checkpoint_problem is not None
        assert "audit trail of document 'memo'" in ws.checkpoint_problem


async def test_a_workspace_without_pieces_reads_the_log(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await memo(where, monkeypatch)
    async with await Workspace.open(where, watch=False) as ws:
        for _after, _upto, key in await pieces(ws, "memo"):
            await ws.store.delete_checkpoint(key)
        assert not [n for n in await ws.store.checkpoints() if n.startswith(TRAIL_PREFIX)]
    async with await Workspace.open(where, watch=False, read_only=True) as ws:
        assert await trail_rows(ws, "memo") == await log_rows(ws, "memo")
        assert ws.checkpoint_problem is None


async def test_the_next_checkpoint_adds_a_piece_from_where_the_last_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "ws.pact")
    monkeypatch.setattr(cadence, "CHECKPOINT_ON_CLOSE", 1)
    await memo(path, monkeypatch, every=NEVER)  # one piece, on closing
    async with await Workspace.open(path, watch=False, clock=ManualClock()) as ws:
        [(after, first_upto, _key)] = await pieces(ws, "memo")
        assert after == 0
        await create_memo_tail(ws)
        await ws.checkpoint()
        chain = await pieces(ws, "memo")
        assert chain[0][:2] == (0, first_upto)
        assert chain[-1][:2] == (first_upto, first_upto + 4)
        assert await trail_rows(ws, "memo") == await log_rows(ws, "memo")


def test_only_names_of_pieces_of_that_document_make_its_chain() -> None:
    names = [
        piece_name("memo", 0, 5),
        piece_name("memo", 5, 9),
        piece_name("memo", 5, 7),  # the shorter of two from one place
        piece_name("memo", 12, 20),  # after a gap
        piece_name("memo:x", 0, 99),  # another document's
        TRAIL_PREFIX + "memo:3-3",
        TRAIL_PREFIX + "memo:a-b",
        "workspace:doc:memo",
    ]
    assert chain_of("memo", names) == [
        (0, 5, piece_name("memo", 0, 5)),
        (5, 9, piece_name("memo", 5, 9)),
    ]
    assert [u for _a, u, _n in chain_of("memo:x", names)] == [99]


async def test_verify_deep_judges_each_piece_against_the_log(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A piece whose rows are well formed but not the log's (saved through the store, so its
    digest is right) differs; the others match; a malformed one is ignored, as reading it is."""
    from engine.deep_verify import verify_deep

    await memo(where, monkeypatch)
    async with await Workspace.open(where, watch=False) as ws:
        chain = await pieces(ws, "memo")
        verdicts = {f.name: f.verdict for f in (await verify_deep(ws.store)).checkpoints}
        assert [verdicts[key] for _a, _u, key in chain] == ["matches"] * len(chain)
        (_a, _u, wrong), (_b, _v, broken) = chain[0], chain[1]
        for key, change in ((wrong, "why"), (broken, "a value of the wrong type")):
            checkpoint = await ws.store.load_checkpoint(key)
            assert checkpoint is not None
            header, columns = _header_and_columns(checkpoint.data)
            if change == "why":
                values, index = columns[8]
                columns[8] = [[*values, "a reason nobody gave"], [len(values), *index[1:]]]
                data = json.dumps(header).encode() + b"\n" + json.dumps(columns).encode()
            else:
                data = _forged(checkpoint.data, change)
            await ws.store.save_checkpoint(key, checkpoint.seq, data)
        result = await verify_deep(ws.store)
        verdicts = {f.name: f.verdict for f in result.checkpoints}
        assert verdicts[wrong] == "differs" and verdicts[broken] == "ignored"
        assert [verdicts[key] for _a, _u, key in chain[2:]] == ["matches"] * (len(chain) - 2)
        assert not result.ok


async def test_a_checkpoint_after_a_piece_that_cannot_be_used_keeps_the_trail_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "ws.pact")
    await memo(path, monkeypatch)
    async with await Workspace.open(path, watch=False, clock=ManualClock()) as ws:
        chain = await pieces(ws, "memo")
        # The last: the piece a checkpoint reads (for its names) when it adds one (a piece
        # before it is found, and the trail kept again, when the pieces are merged).
        broken_upto = chain[-1][1]
        checkpoint = await ws.store.load_checkpoint(chain[-1][2])
        assert checkpoint is not None
        await ws.store.save_checkpoint(chain[-1][2], checkpoint.seq, b"not a piece")
        await create_memo_tail(ws)
        await ws.checkpoint()
        kept = [n for n in await ws.store.checkpoints() if n.startswith(TRAIL_PREFIX)]
        chain = await pieces(ws, "memo")
        assert sorted(kept) == sorted(key for _a, _u, key in chain)  # every old one replaced
        # One from the first event past the broken one's end, then on to the log's end.
        assert chain[0][0] == 0 and chain[0][1] > broken_upto
        assert chain[-1][1] == len(await log_rows(ws, "memo"))
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        assert await trail_rows(ws, "memo") == await log_rows(ws, "memo")
        assert ws.checkpoint_problem is None
