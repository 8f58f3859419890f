"""A document's stream holding an event the fold cannot take, which the chain vouches for: the
workspace names the event when it loads the document, and ``verify --deep`` replays every
document from its first event, whatever its checkpoint says, fails, and names the event
(issue 23 §4). Each log is forged for real in the SQLite file (``tests.forged_log``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.deep_verify import DeepVerifyResult, verify_deep
from engine.documents import DOC_CHECKPOINT
from engine.store import SqliteEventStore
from engine.workspace import UnreplayableEvent, Workspace
from engine.workspace.trail import TRAIL_PREFIX
from pact_tui.demo import create_memo
from tests.cli.conftest import cli
from tests.forged_log import append_envelope, swap_events

from .conftest import ManualClock

pytestmark = pytest.mark.filterwarnings("error")

STREAM = "doc:memo"


async def memo_workspace(path: Path) -> None:
    """The demo document, with its checkpoint at its last event."""
    async with await Workspace.open(path, create=True, watch=False, clock=ManualClock()) as ws:
        await create_memo(ws)
        await ws.checkpoint()


def deep(path: Path) -> DeepVerifyResult:
    async def verified() -> DeepVerifyResult:
        async with await SqliteEventStore.open(path, watch=False, read_only=True) as store:
            return await verify_deep(store)

    return asyncio.run(verified())


def stream_events(path: Path) -> list[Any]:
    async def read() -> list[Any]:
        async with await SqliteEventStore.open(path, watch=False, read_only=True) as store:
            return list(await store.read_stream(STREAM, 0))

    return asyncio.run(read())


@pytest.fixture
def memo(tmp_path: Path) -> Path:
    path = tmp_path / "memo.pact"
    asyncio.run(memo_workspace(path))
    return path


def test_an_intact_document_is_replayed_from_its_first_event(memo: Path) -> None:
    length = len(stream_events(memo))
    result = deep(memo)
    assert result.ok
    assert [(d.name, d.events, d.error) for d in result.documents] == [("memo", length, None)]
    done = cli("verify", memo, "--deep", "--no-record")
    assert (done.code, done.err) == (0, "")
    assert done.out.splitlines()[1] == (
        f"ok: 0 context(s) and 1 document(s) rebuilt from their {length} events;"
        " 2 checkpoint(s) match"  # its checkpoint, and its audit trail's piece
    )
    data = json.loads(cli("verify", memo, "--deep", "--json", "--no-record").out)
    assert data["documents"] == [{"name": "memo", "events": length, "error": None}]


# Each forgery of an event appended after the checkpoint: (what it changes, why it fails).
APPENDED: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "payload-not-json": (
        lambda e: e.__setitem__("payloadJson", "{not json"),
        "JSONDecodeError: Expecting property name enclosed in double quotes",
    ),
    "payload-not-an-object": (
        lambda e: e.__setitem__("payloadJson", "[1, 2]"),
        "ValueError: its payloadJson is a list, not a JSON object",
    ),
    "unknown-event-type": (
        lambda e: e.__setitem__("eventType", "pact.made.up"),
        "ValueError: event forged-",
    ),
    "wrong-sequence-number": (
        lambda e: e.__setitem__("sequenceNumber", e["sequenceNumber"] + 5),
        "ValueError: event forged-",
    ),
}


@pytest.mark.parametrize("forgery", APPENDED, ids=list(APPENDED))
def test_an_appended_event_the_fold_cannot_take_is_named(memo: Path, forgery: str) -> None:
    change, why = APPENDED[forgery]
    forged = asyncio.run(append_envelope(memo, STREAM, change))
    event_type = forged.payload["eventType"]
    named = f"event {forged.seq} ({event_type}) of stream 'doc:memo' cannot be replayed: {why}"

    # The workspace names it when it loads the document (its checkpoint is before it).
    async def load() -> None:
        async with await Workspace.open(memo, watch=False, read_only=True) as ws:
            await ws.load_document("memo")

    with pytest.raises(UnreplayableEvent) as raised:
        asyncio.run(load())
    assert raised.value.message.startswith(named)
    assert raised.value.details == {"seq": forged.seq, "stream": STREAM, "event_type": event_type}
    # A reader of the events alone is refused as well (the checkpoint is not its end), and
    # ``doc log`` says so in one line, with nothing written.
    assert checked(memo) == str(raised.value)
    refused = cli("doc", "log", memo, "memo")
    assert (refused.code, refused.out) == (1, "")
    assert refused.err == f"pact-tui: UNREPLAYABLE_EVENT: {raised.value.message}\n"

    assert_named_by_deep_verification(memo, forged.seq, forged.stream_seq - 1, named)
    # The checkpoint, and the piece of the audit trail kept with it, say what the log says up
    # to its event.
    assert {f.name: f.verdict for f in deep(memo).checkpoints} == {
        DOC_CHECKPOINT + "memo": "matches",
        f"{TRAIL_PREFIX}memo:0-{len(stream_events(memo)) - 1}": "matches",
    }


def checked(path: Path, name: str = "memo") -> str | None:
    """What ``Workspace.check_document`` raises for document ``name`` (None: nothing)."""
    from engine.protocol.errors import ProtocolError
    from engine.workspace.errors import WorkspaceError

    async def check() -> str | None:
        async with await Workspace.open(path, watch=False, read_only=True) as ws:
            try:
                await ws.check_document(name)
            except (WorkspaceError, ProtocolError) as error:
                return str(error)
            return None

    return asyncio.run(check())


def test_a_checkpoint_vouches_for_the_events_up_to_it_and_no_further(memo: Path) -> None:
    """``check_document`` rests on the document's checkpoint when it is at the stream's end; an
    event the fold cannot take is found however the checkpoint stands: after it, or with no
    checkpoint at all (the whole stream replayed), and a document that is not there is named."""
    assert checked(memo) is None
    assert "no document named 'nodoc'" in (checked(memo, "nodoc") or "")
    forged = asyncio.run(append_envelope(memo, STREAM, APPENDED["unknown-event-type"][0]))
    after = checked(memo)
    assert after is not None and f"UNREPLAYABLE_EVENT: event {forged.seq} " in after

    async def without_checkpoint() -> None:
        async with await SqliteEventStore.open(memo, watch=False) as store:
            await store.delete_checkpoint(DOC_CHECKPOINT + "memo")

    asyncio.run(without_checkpoint())
    assert checked(memo) == after


def test_two_swapped_events_with_the_chain_recomputed_are_named(memo: Path) -> None:
    events = stream_events(memo)
    first, second = events[5], events[6]
    swap_events(memo, first.seq, second.seq)
    assert cli("verify", memo).code == 0  # the chain was recomputed: it verifies

    # The workspace reads the document from its checkpoint, which the log vouches for: only a
    # replay from the first event can tell.
    async def load() -> int:
        async with await Workspace.open(memo, watch=False, read_only=True) as ws:
            return (await ws.load_document("memo")).stream_seq

    assert asyncio.run(load()) == len(events)

    event_type = second.payload["eventType"]  # now at the first's place
    named = (
        f"event {first.seq} ({event_type}) of stream 'doc:memo' cannot be replayed: ValueError:"
        f" event {second.payload['id']} has sequenceNumber 6, the document expects 5"
    )
    assert_named_by_deep_verification(memo, first.seq, 5, named)
    findings = {finding.name: finding for finding in deep(memo).checkpoints}
    finding = findings.pop(DOC_CHECKPOINT + "memo")
    assert finding.verdict == "unchecked"
    assert "could not be replayed past event 5" in finding.detail
    # The audit trail's piece holds the rows of the events as they were: not the log's now.
    [piece] = findings.values()
    assert piece.name.startswith(TRAIL_PREFIX) and piece.verdict == "differs"


def assert_named_by_deep_verification(path: Path, seq: int, replayed: int, named: str) -> None:
    result = deep(path)
    assert result.chain.ok and not result.ok
    [memo] = result.documents
    assert memo.events == replayed
    assert memo.error is not None and memo.error.code == "UNREPLAYABLE_EVENT"
    assert memo.error.message.startswith(named)

    done = cli("verify", path, "--deep")
    assert (done.code, done.err) == (1, "")
    lines = done.out.splitlines()
    assert lines[0].startswith("ok: ") and lines[0].endswith(" events, chain intact")
    assert lines[1].startswith(
        f"broken: document 'memo' cannot be rebuilt from the log: UNREPLAYABLE_EVENT: {named}"
    )
    assert lines[-1].startswith(
        f"broken: 0 context(s) and 1 document(s) rebuilt from their {replayed} events"
    )
    data = json.loads(cli("verify", path, "--deep", "--json").out)
    assert data["ok"] is False
    [document] = data["documents"]
    assert (document["name"], document["events"]) == ("memo", replayed)
    assert document["error"]["code"] == "UNREPLAYABLE_EVENT"
    assert document["error"]["seq"] == seq
    assert document["error"]["message"].startswith(named)
