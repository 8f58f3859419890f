"""The custodian's figures (issue 24), each beside an anchor measured in the same run.

A document of ``EVENTS`` events (the workload of ``bench_protocol``'s reopen figure: 100 agents
proposing, approving, heartbeating, declaring intents, setting salience, commenting), its
checkpoint saved as on closing.

- The audit trail (``pact-tui doc audit``'s text, CSV and Markdown) of every event ≤ 2 s;
  anchor: reading the same events from the store a page at a time and parsing each payload,
  which any audit must do.
- The events view opening on it (``E`` pressed on the document screen until its newest row is
  drawn from the events read) ≤ 200 ms; anchor: the outline view opening (``o``) on the same
  document in the same app.

``python -m bench custodian`` runs it.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any
from unittest import mock

import orjson

import engine.workspace as workspace_module
from bench.bench_protocol import _append, _work
from bench.common import fmt, report_limit, report_ratio
from engine.protocol.audit import EventFilter
from engine.protocol.document import Document
from engine.protocol.envelope import CountingIds
from engine.store import SqliteEventStore
from engine.workspace import Workspace

EVENTS = 209_000
NEVER = 10**12
ROUNDS = 5


async def build(path: Path, total: int) -> None:
    """Document ``plan`` of ``total`` events, checkpointed at its end."""
    doc, ids = Document(), CountingIds()
    events = _work(doc, ids)
    async with await SqliteEventStore.open(path, create=True, watch=False) as store:
        while (head := await store.head()) < total:
            await _append(store, list(itertools.islice(events, min(20_000, total - head))))
    with mock.patch.multiple(workspace_module, CHECKPOINT_ON_CLOSE=NEVER):
        async with await Workspace.open(path, watch=False, lazy=True) as ws:
            await ws.load_document("plan")
            await ws.checkpoint()


# -- 1. the audit trail ---------------------------------------------------------------------------
async def read_pages(path: Path) -> tuple[float, int]:
    """The anchor: every event read a page at a time, each payload parsed."""
    async with await Workspace.open(path, watch=False, lazy=True, read_only=True) as ws:
        start, count = time.perf_counter(), 0
        async for page in ws.document_pages("plan"):
            for event in page:
                orjson.loads(event["payloadJson"])
                count += 1
        return time.perf_counter() - start, count


async def audit(path: Path, form: Any) -> tuple[float, int]:
    from pact_tui.audit import audit_text

    async with await Workspace.open(path, watch=False, lazy=True, read_only=True) as ws:
        start = time.perf_counter()
        text = await audit_text(ws, "plan", EventFilter(), form)
        return time.perf_counter() - start, len(text)


def bench_audit(path: Path) -> None:
    print(f"1. the audit trail of a document of {EVENTS:,} events")
    anchors, counts = [], set()
    for _ in range(ROUNDS):
        seconds, count = asyncio.run(read_pages(path))
        anchors.append(seconds)
        counts.add(count)
    assert counts == {EVENTS}, counts
    anchor = statistics.median(anchors)
    for form in ("csv", "md"):
        figure = statistics.median(asyncio.run(audit(path, form))[0] for _ in range(ROUNDS))
        report_limit(
            f"audit ({form}) of {EVENTS:,} events",
            figure,
            2.0,
            "s",
            anchor_text=f"reading and parsing them {fmt(anchor)}, ratio {figure / anchor:.2f}",
        )
        report_ratio(
            f"audit ({form}) vs reading the events",
            figure,
            anchor,
            4.0,
            anchor_label="reading and parsing them",
        )


# -- 2. the events view opening -------------------------------------------------------------------
async def view_openings(path: Path) -> tuple[list[float], list[float]]:
    """Seconds from pressing ``E`` (and, the anchor, ``o``) to the view's newest row drawn."""
    from pact_tui.app import PactApp
    from pact_tui.screens.document import DocumentScreen
    from pact_tui.widgets.events import EventList
    from pact_tui.widgets.outline import SectionOutline

    app = PactApp(path, watch=False, read_only=True)
    events_s, outline_s = [], []
    async with app.run_test(size=(160, 50)) as pilot:

        async def until(condition: Any) -> None:
            deadline = time.perf_counter() + 120  # failure guard
            while not condition():
                assert time.perf_counter() < deadline
                await asyncio.sleep(0.001)

        await pilot.press("2")
        screen = app.screen
        assert isinstance(screen, DocumentScreen)
        await until(lambda: screen.shown is not None)
        events = screen.query_one(EventList)
        outline = screen.query_one(SectionOutline)
        for _ in range(ROUNDS):
            # A fresh list each round: nothing held from the last opening.
            events._held_of = None
            start = time.perf_counter()
            await pilot.press("E")
            await until(lambda: events.current_row is not None and not events.current_row.loading)
            await pilot.pause()  # drawn
            events_s.append(time.perf_counter() - start)
            assert events.current_row.sequence == EVENTS - 1  # type: ignore[union-attr]
            start = time.perf_counter()
            await pilot.press("o")
            await until(lambda: outline.current_row is not None and outline.has_focus)
            await pilot.pause()
            outline_s.append(time.perf_counter() - start)
    return events_s, outline_s


def bench_events_view(path: Path) -> None:
    print(f"2. the events view opening on a document of {EVENTS:,} events")
    events_s, outline_s = asyncio.run(view_openings(path))
    figure, anchor = statistics.median(events_s), statistics.median(outline_s)
    report_limit(
        f"events view opening on {EVENTS:,} events",
        figure * 1000,
        200,
        "ms",
        anchor_text=f"the outline opening {fmt(anchor)}, ratio {figure / anchor:.2f}",
    )
    report_ratio(
        "events view opening vs the outline opening",
        figure,
        anchor,
        3.0,
        anchor_label="the outline opening",
    )


def main() -> None:
    gc.freeze()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "custodian.pact"
        start = time.perf_counter()
        asyncio.run(build(path, EVENTS))
        print(f"  (a document of {EVENTS:,} events built in {fmt(time.perf_counter() - start)})")
        bench_audit(path)
        bench_events_view(path)


if __name__ == "__main__":
    main()
