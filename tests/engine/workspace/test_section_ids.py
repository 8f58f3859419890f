"""Section ids kept across merges (issue 24, bug 9) survive the workspace: a checkpoint gives
back the ids the log's fold gives, and a checkpoint of the format before (whose fold gave the
parser's numbering) is replayed instead of trusted."""

from __future__ import annotations

from pathlib import Path

from engine.documents import DOC_PREFIX
from engine.protocol.commands import Actor
from engine.protocol.document import Document
from engine.protocol.persist import dump_document
from engine.store import SqliteEventStore
from engine.workspace import DOC_CHECKPOINT, Workspace, decode_checkpoint, encode_checkpoint
from pact_tui.demo import create_memo

from .conftest import ManualClock

# The demo's revision of Risk (pact_tui.demo.memo_step): it adds a second ``## Mitigation``.
RISK_REVISION = "# Risk\n\nRevised by the custodian.\n\n## Mitigation\n\nKept.\n"
MITIGATIONS = ["sec:risk/mitigation-2", "sec:risk/mitigation"]  # the new one comes first


def ids(doc: Document) -> list[str]:
    return [section.id for section in doc.sections]


async def replayed(path: Path) -> Document:
    async with await SqliteEventStore.open(path, watch=False, read_only=True) as store:
        events = await store.read_stream(DOC_PREFIX + "memo", 0)
    doc = Document()
    for event in events:
        doc.apply(event.payload)
    return doc


async def test_checkpoints_keep_the_ids_and_one_of_the_format_before_is_replayed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ws.pact"
    async with await Workspace.open(path, create=True, watch=False, clock=ManualClock()) as ws:
        await create_memo(ws)
        original = ws.document("memo").by_id["sec:risk/mitigation"].key
        edit = {"op": "edit", "sectionId": "sec:risk", "content": RISK_REVISION, "why": "x"}
        await ws.run_document("memo", edit, Actor.human("ann"))
        doc = ws.document("memo")
        assert ids(doc)[3:5] == MITIGATIONS
        assert doc.by_id["sec:risk/mitigation"].key == original
        expected = dump_document(doc)
        await ws.checkpoint()
    assert dump_document(await replayed(path)) == expected

    async with await Workspace.open(path, watch=False) as ws:  # from the checkpoint
        await ws.load_document("memo")
        assert ws.checkpoint_problem is None
        assert dump_document(ws.document("memo")) == expected
        saved = await ws.store.load_checkpoint(DOC_CHECKPOINT + "memo")
        assert saved is not None
        # As format 4 (the last before ids were kept) had it: the parser's numbering.
        data = decode_checkpoint(saved.data)
        data["document"]["format"] = 4
        columns = data["document"]["sections"]["id"]
        assert columns[3:5] == MITIGATIONS
        columns[3:5] = reversed(MITIGATIONS)
        await ws.store.save_checkpoint(DOC_CHECKPOINT + "memo", saved.seq, encode_checkpoint(data))

    async with await Workspace.open(path, watch=False) as ws:
        await ws.load_document("memo")
        problem = ws.checkpoint_problem
        assert problem is not None and "replayed" in problem and "found 4" in problem
        assert dump_document(ws.document("memo")) == expected
        await ws.checkpoint()
    async with await Workspace.open(path, watch=False) as ws:  # and its new one is used
        await ws.load_document("memo")
        assert ws.checkpoint_problem is None
        assert ids(ws.document("memo"))[3:5] == MITIGATIONS
