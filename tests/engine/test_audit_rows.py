"""The rows an audit trail makes are versioned (``ROWS_VERSION``): a workspace keeps them in
pieces beside a document's checkpoint (``engine/workspace/trail.py``), and a build whose rows
differ must not read another's. This test holds a digest of the rows of the demo memo's events
for each version: if it fails, the rows changed; raise ``ROWS_VERSION`` and add its digest
(an old build's pieces are then read from the log again, not shown as this build's)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

from engine.documents import DOC_PREFIX
from engine.protocol.audit import ROWS_VERSION, AuditTrail
from engine.workspace import Workspace
from pact_tui.demo import create_demo
from pact_tui.screenshot import fixed_clock

DIGESTS = {1: "9fd3a82d5dd1ce24673a06bff17d8343ba032659c66fe6361c4b6afdf71bf45e"}


def test_the_rows_of_the_demo_memo_are_those_of_their_version(tmp_path: Path) -> None:
    path = tmp_path / "demo.pact"

    async def rows() -> list[list[object]]:
        await create_demo(path, clock=fixed_clock())
        async with await Workspace.open(path, watch=False, read_only=True) as ws:
            events = await ws.store.read_stream(DOC_PREFIX + "memo", 0)
        return [list(row) for row in AuditTrail().rows([e.payload for e in events])]

    made = json.dumps(asyncio.run(rows()), ensure_ascii=False).encode()
    digest = hashlib.sha256(made).hexdigest()
    assert digest == DIGESTS.get(ROWS_VERSION), (
        f"the trail's rows changed (digest {digest}): raise ROWS_VERSION to"
        f" {ROWS_VERSION + 1} and add its digest to DIGESTS"
    )
