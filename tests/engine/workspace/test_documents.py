"""Documents in the workspace: their checkpoints, and two processes writing one document.

A document's checkpoint (``workspace:doc:<name>``) is a cache: a reopening from it must arrive
at exactly the state a full replay of the stream gives, catch up with events appended after it
(by this process or another), and one that cannot be used is replayed instead, said so in
``checkpoint_problem``, and changes nothing in the log.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import engine.workspace as workspace_module
from engine.deep_verify import verify_deep
from engine.documents import DOC_CHECKPOINT, DOC_PREFIX, DocumentProjection
from engine.protocol.commands import Actor
from engine.protocol.document import Document
from engine.protocol.errors import ProtocolError
from engine.protocol.persist import FORMAT, dump_document
from engine.store import SqliteEventStore
from engine.workspace import Workspace, cadence, encode_checkpoint
from pact_tui.demo import create_memo

from .conftest import ManualClock, start_helper

GUARD_S = 120  # failure guard for a process that hangs; never reached when things work


async def full_replay(path: Path, name: str) -> Document:
    """The document folded from its whole stream, checkpoints ignored."""
    async with await SqliteEventStore.open(path, watch=False, read_only=True) as store:
        events = await store.read_stream(DOC_PREFIX + name, 0)
    doc = Document()
    for event in events:
        doc.apply(event.payload)
    return doc


async def memo_workspace(path: Path) -> ManualClock:
    clock = ManualClock()
    async with await Workspace.open(path, create=True, watch=False, clock=clock) as ws:
        await create_memo(ws)
        await ws.checkpoint()
    return clock


async def stored_checkpoint(path: Path, name: str) -> tuple[int, Any] | None:
    async with await SqliteEventStore.open(path, watch=False, read_only=True) as store:
        found = await store.load_checkpoint(DOC_CHECKPOINT + name)
    if found is None:
        return None
    return found.seq, workspace_module.decode_checkpoint(found.data)


async def test_a_reopened_document_comes_from_its_checkpoint_and_equals_a_full_replay(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ws.pact"
    await memo_workspace(path)
    saved = await stored_checkpoint(path, "memo")
    assert saved is not None
    seq, data = saved
    async with await Workspace.open(path, watch=False) as ws:
        projection = await ws.load_document("memo")
        assert ws.checkpoint_problem is None
        # Restored, not replayed: it starts where the checkpoint says it was saved.
        assert projection.checkpointed == data["streamSeq"] == projection.stream_seq
        assert projection.seq == seq
        assert dump_document(ws.document("memo")) == dump_document(await full_replay(path, "memo"))


async def test_a_restored_document_catches_up_with_events_after_its_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ws.pact"
    clock = await memo_workspace(path)
    monkeypatch.setattr(cadence, "CHECKPOINT_ON_CLOSE", 10_000)  # none saved on close
    async with await Workspace.open(path, watch=False, clock=clock) as ws:
        for n in range(3):
            clock.tick()
            command = {"op": "comment", "sectionId": "sec:summary", "text": f"later {n}"}
            await ws.run_document("memo", command, Actor.agent("editor"))
        after = ws.document("memo").sequence
    saved = await stored_checkpoint(path, "memo")
    assert saved is not None and saved[1]["streamSeq"] == after - 3  # the tail is not in it
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        projection = await ws.load_document("memo")
        assert ws.checkpoint_problem is None
        assert projection.checkpointed == after - 3 and projection.stream_seq == after
        assert [c.text for c in ws.document("memo").comments.values()][-3:] == [
            "later 0",
            "later 1",
            "later 2",
        ]
        assert dump_document(ws.document("memo")) == dump_document(await full_replay(path, "memo"))


async def test_a_running_workspace_checkpoints_a_document_every_so_many_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(cadence.INTERVALS, "document", cadence.Intervals(5, None))
    monkeypatch.setattr(cadence, "CHECKPOINT_ON_CLOSE", 10_000)
    path = tmp_path / "ws.pact"
    async with await Workspace.open(path, create=True, watch=False) as ws:
        await ws.create_document("plan", "# Plan\n\nText.\n", human="ann")
        assert await stored_checkpoint(path, "plan") is None
        for name in ("a", "b", "c", "d", "e", "f"):
            await ws.run_document("plan", {"op": "join", "agentName": name}, Actor.agent(name))
        # The creation and four joins: five events since none, and 4 agents make it no sooner.
        saved = await stored_checkpoint(path, "plan")
        assert saved is not None and saved[1]["streamSeq"] == 5
        # Now six agents: the next one is six events on (the spacing grows with the document).
        for beat in range(4):
            await ws.run_document("plan", {"op": "heartbeat"}, Actor.agent("a"))
            saved = await stored_checkpoint(path, "plan")
            assert saved is not None
            assert saved[1]["streamSeq"] == (5 if beat < 3 else 11), beat
        assert ws.checkpoint_problem is None


async def test_a_read_only_workspace_uses_a_checkpoint_but_saves_none(tmp_path: Path) -> None:
    path = tmp_path / "ws.pact"
    async with await Workspace.open(path, create=True, watch=False) as ws:
        await ws.create_document("plan", "# Plan\n\nText.\n", human="ann")
    async with await SqliteEventStore.open(path, watch=False) as store:
        before = await store.checkpoints()
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        await ws.load_document("plan")
        with pytest.raises(workspace_module.ReadOnlyWorkspace):
            await ws.checkpoint()
    async with await SqliteEventStore.open(path, watch=False) as store:
        assert await store.checkpoints() == before
    assert DOC_CHECKPOINT + "plan" not in before  # one event is less than the close's tail


def _broken(data: dict[str, Any], how: str) -> bytes:
    if how == "garbage":
        return b"\x00not json"
    if how == "a list":
        return encode_checkpoint([1, 2])  # type: ignore[arg-type]
    if how == "another document":
        return encode_checkpoint({**data, "name": "other"})
    if how == "another version":
        return encode_checkpoint({**data, "version": 99})
    if how == "a wrong place":
        return encode_checkpoint({**data, "streamSeq": data["streamSeq"] - 1})
    if how == "a wrong last event":
        return encode_checkpoint({**data, "lastEventId": "00000000-0000-4000-8000-000000000000"})
    if how == "a column missing":
        document = {k: v for k, v in data["document"].items() if k != "proposals"}
        return encode_checkpoint({**data, "document": document})
    if how == "a wrong column":
        return encode_checkpoint({**data, "document": {**data["document"], "sections": 7}})
    if how == "a closed proposal's vote broken":  # built only when read, checked at once
        proposals = data["document"]["proposals"]
        merged = proposals["status"].index("Merged")
        approvals = [*proposals["approvals"]]
        approvals[merged] = {"x": ["x", "AiAgent", "soon", None]}
        document = {**data["document"], "proposals": {**proposals, "approvals": approvals}}
        return encode_checkpoint({**data, "document": document})
    if how == "format 3, without the names humans acted under":  # as the release before wrote
        document = {k: v for k, v in data["document"].items() if k != "humans"}
        return encode_checkpoint({**data, "document": {**document, "format": 3}})
    raise AssertionError(how)


BROKEN = [
    ("garbage", "could not be used"),
    ("a list", "not a document's checkpoint"),
    ("another document", "of document 'other'"),
    ("another version", "version 99"),
    ("a wrong place", "events, ending at"),
    ("a wrong last event", "events, ending at"),
    ("a column missing", "missing ['proposals']"),
    ("a wrong column", "sections"),
    ("a closed proposal's vote broken", "proposals.approvals{}.at_ms: expected int"),
    ("format 3, without the names humans acted under", f"format: expected {FORMAT}, found 3"),
]


@pytest.mark.parametrize(("how", "said"), BROKEN, ids=[how for how, _ in BROKEN])
async def test_a_checkpoint_that_cannot_be_used_is_replayed_instead_and_said(
    tmp_path: Path, how: str, said: str
) -> None:
    path = tmp_path / "ws.pact"
    await memo_workspace(path)
    saved = await stored_checkpoint(path, "memo")
    assert saved is not None
    seq, data = saved
    async with await SqliteEventStore.open(path, watch=False) as store:
        await store.save_checkpoint(DOC_CHECKPOINT + "memo", seq, _broken(data, how))
        events = await store.read()
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        projection = await ws.load_document("memo")
        problem = ws.checkpoint_problem
        assert problem is not None
        assert "checkpoint of document 'memo'" in problem and "replayed its stream" in problem
        assert said in problem
        assert projection.checkpointed == 0  # replayed from the start
        assert dump_document(ws.document("memo")) == dump_document(await full_replay(path, "memo"))
    async with await SqliteEventStore.open(path, watch=False) as store:
        assert await store.read() == events  # nothing was written
        assert (await store.verify()).ok


async def test_a_checkpoint_of_another_stream_place_does_not_match_the_log(tmp_path: Path) -> None:
    """A checkpoint whose recorded event is not its document's (saved at another event of the
    log, which the store vouches for) is noticed by the anchor check and replayed."""
    path = tmp_path / "ws.pact"
    await memo_workspace(path)
    saved = await stored_checkpoint(path, "memo")
    assert saved is not None
    data = saved[1]
    async with await Workspace.open(path, watch=False) as ws:
        await ws.create_context("elsewhere")
        other_seq = ws.head
    moved = {**data, "seq": other_seq}
    async with await SqliteEventStore.open(path, watch=False) as store:
        await store.save_checkpoint(DOC_CHECKPOINT + "memo", other_seq, encode_checkpoint(moved))
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        await ws.load_document("memo")
        assert ws.checkpoint_problem is not None
        assert "does not match the log" in ws.checkpoint_problem
        assert f"not {other_seq}" in ws.checkpoint_problem
        assert dump_document(ws.document("memo")) == dump_document(await full_replay(path, "memo"))


def test_a_projection_restores_only_its_own_checkpoint() -> None:
    projection = DocumentProjection()
    with pytest.raises(ValueError, match="not a document's checkpoint"):
        DocumentProjection.restore("memo", 3, "text")
    with pytest.raises(ValueError, match="it was saved at event 3"):
        DocumentProjection.restore("memo", 3, {**projection.dump("memo"), "seq": 4})


# -- two processes ---------------------------------------------------------------------------------


async def test_two_processes_proposing_on_one_section_at_once(tmp_path: Path) -> None:
    """Both load the document, then propose on the same section together, so whichever lands
    second decided on a projection that had not seen the first (it catches up inside the write
    transaction): one proposal comes first, the other meets it as a conflict; the lock both find
    expired is released once; every command each process was told succeeded is in the log
    exactly once, in its order, and the document's sequence is gapless."""
    path = tmp_path / "ws.pact"
    rounds = 20
    markdown = "## Intro\n\nIntro.\n\n## Shared\n\nOld text.\n"
    async with await Workspace.open(path, create=True, watch=False) as ws:
        await ws.create_document("plan", markdown, human="ann", strategy="vote")
        for name in ("alpha", "beta", "holder"):
            await ws.run_document("plan", {"op": "join", "agentName": name}, Actor.agent(name))
        lock = {"op": "lock", "sectionId": "sec:intro", "ttlSeconds": 30}
        await ws.run_document("plan", lock, Actor.agent("holder"))
        start = ws.document("plan").sequence

    # Their clocks run 120 s ahead: the lock, and no heartbeat's eviction, is due for both.
    writers = {
        name: start_helper("document_writer_process.py", path, name, rounds, "--later-s", 120)
        for name in ("alpha", "beta")
    }
    for writer in writers.values():  # both open and load, then both go
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "ready"
    for writer in writers.values():
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    told: dict[str, list[dict[str, Any]]] = {}
    for name, writer in writers.items():
        out, err = writer.communicate(timeout=GUARD_S)
        assert writer.returncode == 0, out + err
        told[name] = [json.loads(line) for line in out.splitlines()]

    async with await SqliteEventStore.open(path, watch=False) as store:
        assert (await store.verify()).ok
        events = [e.payload for e in await store.read_stream(DOC_PREFIX + "plan", 0)]
    assert [e["sequenceNumber"] for e in events] == list(range(len(events)))
    assert len({e["id"] for e in events}) == len(events)
    later = events[start:]

    # Exactly one lock expiry, whoever fired it.
    unlocked = [e for e in later if e["eventType"] == "pact.section.unlocked"]
    assert len(unlocked) == 1 and json.loads(unlocked[0]["payloadJson"])["reason"] == "expired"
    # Two proposals on the section; the second to land is in conflict with the first.
    created = [e for e in later if e["eventType"] == "pact.proposal.created"]
    conflicts = [e for e in later if e["eventType"] == "pact.proposal.conflict"]
    assert len(created) == 2 and len(conflicts) == 1
    proposals = {told[n][0]["result"]["proposalId"]: n for n in told}
    assert {json.loads(e["payloadJson"])["proposalId"] for e in created} == set(proposals)
    document = Document()
    for event in events:
        document.apply(event)
    assert sorted(document.proposals[p].status for p in proposals) == ["Conflict", "Conflict"]
    groups = {document.proposals[p].conflict for p in proposals}
    assert len(groups) == 1 and None not in groups
    # Every intent each was told of is in the log once, in its order.
    for name, lines in told.items():
        results = [line["result"] for line in lines[1:-1]]
        assert len(results) == rounds
        declared = [
            json.loads(e["payloadJson"])["goal"]
            for e in later
            if e["eventType"] == "pact.intent.declared" and e["actorDisplay"] == name
        ]
        assert declared == [f"{name} goal {n}" for n in range(rounds)]
        assert all(document.intents[r["intentId"]].goal.startswith(name) for r in results)
        # What each process ended with is the log's state at that point.
        final = lines[-1]
        prefix = Document()
        for event in events[: final["sequence"]]:
            prefix.apply(event)
        assert final["markdown"] == prefix.markdown()


# -- verify --deep ---------------------------------------------------------------------------------


async def test_deep_verify_finds_a_document_checkpoint_matching_the_log(tmp_path: Path) -> None:
    path = tmp_path / "ws.pact"
    await memo_workspace(path)
    async with await SqliteEventStore.open(path, watch=False, read_only=True) as store:
        result = await verify_deep(store)
    [finding] = [f for f in result.checkpoints if f.name == DOC_CHECKPOINT + "memo"]
    assert (finding.verdict, finding.detail) == ("matches", "")
    assert result.ok


async def test_deep_verify_finds_a_document_checkpoint_whose_content_is_not_the_log(
    tmp_path: Path,
) -> None:
    """A well-formed checkpoint the workspace would use, with a proposal's summary changed:
    the chain vouches for its place, not its content; deep verification says it differs, and
    where."""
    path = tmp_path / "ws.pact"
    await memo_workspace(path)
    saved = await stored_checkpoint(path, "memo")
    assert saved is not None
    seq, data = saved
    document = DocumentProjection.restore("memo", seq, data)
    proposal = next(iter(document.doc.proposals.values()))
    proposal.summary = "forged"
    forged = document.dump("memo")
    async with await SqliteEventStore.open(path, watch=False) as store:
        await store.save_checkpoint(DOC_CHECKPOINT + "memo", seq, encode_checkpoint(forged))
    async with await Workspace.open(path, watch=False, read_only=True) as ws:
        await ws.load_document("memo")  # the workspace uses it: only deep verification can tell
        assert ws.checkpoint_problem is None
        assert ws.document("memo").proposals[proposal.id].summary == "forged"
    async with await SqliteEventStore.open(path, watch=False, read_only=True) as store:
        result = await verify_deep(store)
    [finding] = [f for f in result.checkpoints if f.name == DOC_CHECKPOINT + "memo"]
    assert finding.verdict == "differs"
    assert "document 'memo'" in finding.detail and "differ in proposals" in finding.detail
    assert not result.ok


async def test_deep_verify_ignores_a_document_checkpoint_the_workspace_would_not_use(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ws.pact"
    await memo_workspace(path)
    saved = await stored_checkpoint(path, "memo")
    assert saved is not None
    seq, data = saved
    async with await SqliteEventStore.open(path, watch=False) as store:
        await store.save_checkpoint(DOC_CHECKPOINT + "memo", seq, _broken(data, "another version"))
        result = await verify_deep(store)
    [finding] = [f for f in result.checkpoints if f.name == DOC_CHECKPOINT + "memo"]
    assert finding.verdict == "ignored" and "version 99" in finding.detail
    assert result.ok


async def test_an_agent_classifying_is_forbidden_before_anything_else_is_looked_at(
    tmp_path: Path,
) -> None:
    """A classify by an agent on a document with no framework (and none in the workspace) was
    answered classification.unknown_level: the workspace looked for a framework before the
    engine checked who was asking."""
    path = tmp_path / "ws.pact"
    async with await Workspace.open(path, create=True, watch=False) as ws:
        await ws.create_document("plan", "# Plan\n\nText.\n", human="ann")
        await ws.run_document("plan", {"op": "join", "agentName": "bot"}, Actor.agent("bot"))
        before = len(await ws.document_events("plan"))
        for command in (
            {"op": "classify", "sectionId": "sec:plan", "level": "Secret"},
            {"op": "clearance", "agent": "bot", "level": "Secret"},
            {"op": "classify", "sectionId": "sec:nope", "level": "Secret", "bad": 1},
        ):
            for name in ("plan", "no-such-document"):
                with pytest.raises(ProtocolError) as refused:
                    await ws.run_document(name, command, Actor.agent("bot"))
                assert refused.value.code == "auth.forbidden", (name, command)
        assert len(await ws.document_events("plan")) == before


async def test_a_workspace_of_documents_keeps_its_index_up_to_date(tmp_path: Path) -> None:
    """The index records where the log was when it was saved, and opening reads only the
    streams' ends after it. Only a context's change made it save, so a workspace of
    documents never had one, and every opening went over the whole log to find its streams."""
    path = tmp_path / "ws.pact"
    async with await Workspace.open(path, create=True, watch=False) as ws:
        await ws.create_document("plan", "# Plan\n\nText.\n", human="ann")
        for n in range(cadence.INDEX_EVERY):
            await ws.run_document(
                "plan", {"op": "join", "agentName": f"a{n}"}, Actor.agent(f"a{n}")
            )
        head = ws.head
    async with await SqliteEventStore.open(path, watch=False, read_only=True) as store:
        index = await store.load_checkpoint(workspace_module.INDEX_CHECKPOINT)
    assert index is not None and index.seq == head
    async with await Workspace.open(path, watch=False, lazy=True) as ws:
        assert ws.head == head  # what the index says, and nothing after it
        assert [info.name for info in await ws.list_documents()] == ["plan"]


async def test_the_document_at_any_event_is_the_fold_of_its_stream_up_to_it(
    tmp_path: Path,
) -> None:
    """Time travel: ``document_at(name, n)`` is the first ``n`` events folded, every n; the
    live projection is left as it was; a count past the end is the document now."""
    from engine.protocol.errors import DocumentNotFound

    path = tmp_path / "ws.pact"
    await memo_workspace(path)
    async with await SqliteEventStore.open(path, watch=False, read_only=True) as store:
        events = await store.read_stream(DOC_PREFIX + "memo", 0)
    async with await Workspace.open(path, watch=False) as ws:
        live = await ws.load_document("memo")
        live_state = dump_document(live.doc)
        folded = Document()
        for n, event in enumerate(events, start=1):
            folded.apply(event.payload)
            past = await ws.document_at("memo", n)
            assert past is not live.doc
            assert dump_document(past) == dump_document(folded), f"event {n}"
        assert dump_document(await ws.document_at("memo", len(events) + 10)) == live_state
        assert dump_document(live.doc) == live_state  # untouched by the travels
        with pytest.raises(ValueError, match="the first is 1"):
            await ws.document_at("memo", 0)
        with pytest.raises(DocumentNotFound, match="nope"):
            await ws.document_at("nope", 3)
