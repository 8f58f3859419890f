"""The custodian's figures (issue 24), each beside an anchor measured in the same run.

A document of ``EVENTS`` events (the workload of ``bench_protocol``'s reopen figure: 100 agents
proposing, approving, heartbeating, declaring intents, setting salience, commenting), its
checkpoint saved as on closing.

- The audit trail (``pact-tui doc audit``'s text, CSV and Markdown) of every event ≤ 2 s;
  anchor: reading the same events from the store a page at a time and parsing each payload,
  which any audit must do.
- ``pact-tui doc log`` of every event (issue 27), run as a user runs it, its lines written to a
  file, ≤ 1 s; anchor: the same reading and parsing of the events.
- The events view opening on it (``E`` sent to the document screen until the first frame drawn
  with its newest row read) ≤ 200 ms; anchor: the outline view opening (``O``) on the same
  document in the same app, timed the same way.
- A key typed after a view switch is delivered to the view shown: 1,000 of 1,000 times at
  0-200 ms spacing, on the demo's memo (``key_after_a_view_switch``, below, says how);
  anchor: 200 trials with the focus moved as before issue 24, counted the same way.

``python -m bench custodian`` runs it.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import random
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from unittest import mock

import orjson

from bench.bench_protocol import _append, _work
from bench.common import RESULTS, fmt, report_limit, report_ratio, sized
from engine.protocol.audit import EventFilter
from engine.protocol.document import Document
from engine.protocol.envelope import CountingIds
from engine.store import SqliteEventStore
from engine.workspace import Workspace, cadence
from pact_tui.keymap import ACTIONS, split_keys

EVENTS = sized(209_000, 2_000)
NEVER = 10**12
ROUNDS = sized(5, 1)


async def build(path: Path, total: int) -> None:
    """Document ``plan`` of ``total`` events, checkpointed at its end."""
    doc, ids = Document(), CountingIds()
    events = _work(doc, ids)
    async with await SqliteEventStore.open(path, create=True, watch=False) as store:
        while (head := await store.head()) < total:
            await _append(store, list(itertools.islice(events, min(20_000, total - head))))
    with mock.patch.multiple(cadence, CHECKPOINT_ON_CLOSE=NEVER):
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
    for form in ("csv", "md"):
        anchors, figures, ratios = [], [], []
        for _ in range(ROUNDS):  # in turn, so that both meet the same load
            seconds, count = asyncio.run(read_pages(path))
            assert count == EVENTS, count
            anchors.append(seconds)
            figures.append(asyncio.run(audit(path, form))[0])
            ratios.append(figures[-1] / anchors[-1])
        anchor, figure = statistics.median(anchors), statistics.median(figures)
        ratio = statistics.median(ratios)  # of each round's pair
        report_limit(
            f"audit ({form}) of {EVENTS:,} events",
            figure,
            2.0,
            "s",
            anchor_text=f"reading and parsing them {fmt(anchor)}, median ratio {ratio:.2f}",
        )
        report_ratio(
            f"audit ({form}) vs reading the events",
            ratio * anchor,  # the median of the rounds' ratios, over the median anchor
            anchor,
            2.5,  # the target proposed with the note, beside its ≤ 2 s
            anchor_label="reading and parsing them",
        )


def doc_log(path: Path, into: Path) -> float:
    """Seconds of ``pact-tui doc log`` in a new process, its lines written to ``into``."""
    with into.open("wb") as out:
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "pact_tui", "doc", "log", str(path), "plan"],
            stdout=out,
            check=True,
        )
        return time.perf_counter() - start


def bench_doc_log(path: Path) -> None:
    print(f"1b. doc log of a document of {EVENTS:,} events (a new process, lines to a file)")
    into = path.with_suffix(".log")
    anchors, figures = [], []
    for _ in range(ROUNDS):  # in turn, so that both meet the same load
        anchors.append(asyncio.run(read_pages(path))[0])
        figures.append(doc_log(path, into))
    with into.open("rb") as lines:
        assert sum(1 for _ in lines) == EVENTS
    anchor, figure = statistics.median(anchors), statistics.median(figures)
    ratio = statistics.median(f / a for f, a in zip(figures, anchors, strict=True))
    report_limit(
        f"doc log of {EVENTS:,} events",
        figure,
        1.0,
        "s",
        anchor_text=f"reading and parsing them {fmt(anchor)}, median ratio {ratio:.2f}",
    )


# -- 2. the events view opening -------------------------------------------------------------------
async def view_openings(path: Path) -> tuple[list[float], list[float]]:
    """Seconds from a view's key (``E``, and, the anchor, ``O``) reaching the app as a terminal
    sends it to the first frame drawn once the view is in front, focused and holding its newest
    row.

    The frames are the screen's own: ``App._display`` is handed each update the compositor has
    rendered (a terminal would be written then), and the time of each is kept. Pilot's
    ``press`` is not the clock: it waits until the process has been idle for a 20 ms window
    twice after every key, so a key that does nothing took 44-90 ms by it."""
    from textual import events as textual_events

    from pact_tui.app import PactApp
    from pact_tui.screens.document import DocumentScreen
    from pact_tui.widgets.events import EventList
    from pact_tui.widgets.outline import SectionOutline

    app = PactApp(path, watch=False, read_only=True)
    frames: list[float] = []
    display = app._display

    def timed(screen: Any, update: Any) -> None:
        if update is not None:
            frames.append(time.perf_counter())
        display(screen, update)

    with mock.patch.object(app, "_display", timed):  # each frame's time kept
        events_s, outline_s = [], []
        async with app.run_test(size=(160, 50)) as pilot:

            async def until(condition: Any) -> float:
                deadline = time.perf_counter() + 120  # failure guard
                while not condition():
                    assert time.perf_counter() < deadline
                    await asyncio.sleep(0.001)
                return time.perf_counter()

            async def opening(key: str, ready: Any) -> float:
                await pilot.pause()  # nothing left over from the last opening
                start = time.perf_counter()
                sent = textual_events.Key(key, key if len(key) == 1 else None)
                sent.set_sender(app)
                assert app._driver is not None
                app._driver.send_message(sent)
                held = await until(ready)
                drawn = await until(lambda: frames[-1] >= held)  # the frame that shows it
                return drawn - start

            await pilot.press("2")
            screen = app.screen
            assert isinstance(screen, DocumentScreen)
            await until(lambda: screen.shown is not None)
            events = screen.query_one(EventList)
            outline = screen.query_one(SectionOutline)
            for _ in range(ROUNDS):
                # A fresh list each round: nothing held from the last opening.
                events._held_of = None
                events_s.append(
                    await opening(
                        VIEW_KEYS["events"],
                        lambda: (
                            events.has_focus
                            and events.current_row is not None
                            and not events.current_row.loading
                        ),
                    )
                )
                newest = events.current_row
                assert newest is not None and newest.sequence == EVENTS - 1, newest
                outline_s.append(
                    await opening(
                        VIEW_KEYS["outline"],
                        lambda: outline.current_row is not None and outline.has_focus,
                    )
                )
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


# -- 3. a key after a view switch ------------------------------------------------------------------
# The keys that show each view, as the keymap has them (``pact_tui.keymap``).
VIEW_ACTIONS = {
    "outline": "outline",
    "queue": "proposals",
    "heatmap": "heatmap",
    "inbox": "inbox",
    "agents": "agents",
    "events": "events",
}
VIEW_KEYS = {view: split_keys(ACTIONS[action].keys)[0] for view, action in VIEW_ACTIONS.items()}
SPACINGS_MS = (0, 0.5, 1, 2, 5, 10, 20, 50, 100, 200)
TRIALS = sized(1_000, 10)  # tiny: one at each spacing
ANCHOR_TRIALS = sized(200, 10)  # 20 at each spacing: enough to show the count sees a key go astray
SEED = 24
SIZE = (120, 40)  # the tests' terminal


async def key_after_switch(
    path: Path, trials: int, *, as_before: bool
) -> tuple[int, dict[float, int]]:
    """How many of ``trials`` view switches followed by ``j`` moved only the shown view's
    cursor, and the misses by spacing (``as_before``: the focus moved as before the fix)."""
    from textual import events

    from pact_tui.app import PactApp
    from pact_tui.screens.document import DocumentScreen
    from pact_tui.widgets.cursor import CursorPane

    with ExitStack() as stack:
        if as_before:

            def deferred(screen: DocumentScreen) -> None:
                screen.query_one(f"#{screen.view}").focus()

            stack.enter_context(mock.patch.object(DocumentScreen, "_focus_view", deferred))
            stack.enter_context(mock.patch.object(CursorPane, "check_action", lambda *_: True))
        # Read-only: nothing is fired while the trials run (a merge falling due would re-sort
        # the queue under its cursor, and the count would take that for a key gone astray).
        app = PactApp(path, watch=False, document="memo", human="ann", read_only=True)
        rng = random.Random(SEED)
        delivered, missed = 0, dict.fromkeys(SPACINGS_MS, 0)
        said: list[str] = []  # the first misses, cursors before and after
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await app.switch_mode("document")
            screen = app.screen
            assert isinstance(screen, DocumentScreen)
            while screen.shown is None:
                await pilot.pause(0.05)
            panes = {view: screen.query_one(f"#{view}", CursorPane) for view in VIEW_KEYS}
            while any(p.line_count < 2 for p in panes.values()):
                await pilot.pause(0.05)

            def send(key: str) -> None:
                app.post_message(events.Key(key, key))

            for trial in range(trials):
                spacing = SPACINGS_MS[trial % len(SPACINGS_MS)]
                shown = rng.choice([v for v in VIEW_KEYS if v != screen.view])
                for pane in panes.values():  # room below every cursor for the j
                    if pane.cursor_line >= pane.line_count - 1:
                        pane.cursor_line = 0
                        await pilot.pause()
                before = {v: p.cursor_line for v, p in panes.items()}
                send(VIEW_KEYS[shown])
                if spacing:
                    await asyncio.sleep(spacing / 1000)
                send("j")
                deadline = time.monotonic() + 30  # a failure guard: a loaded machine lags
                while time.monotonic() < deadline and all(
                    p.cursor_line == before[v] for v, p in panes.items()
                ):
                    await asyncio.sleep(0.001)
                moved = {v for v, p in panes.items() if p.cursor_line != before[v]}
                ok = (
                    screen.view == shown
                    and app.focused is panes[shown]
                    and moved == {shown}
                    and panes[shown].cursor_line == before[shown] + 1
                )
                delivered += ok
                if not ok and len(said) < 3:
                    cursors = {v: p.cursor_line for v, p in panes.items()}
                    said.append(f"trial {trial} ({spacing:g} ms, to {shown}): {before} → {cursors}")
                missed[spacing] += not ok
    for line in said:
        print(f"  {'anchor' if as_before else 'figure'} missed: {line}", flush=True)
    return delivered, missed


def report_delivered(delivered: int, anchor: int, anchor_missed: dict[float, int]) -> bool:
    """Print the figure (every one of ``TRIALS`` delivered) next to its anchor."""
    ok = delivered == TRIALS
    astray = ", ".join(f"{n} at {s:g} ms" for s, n in anchor_missed.items() if n) or "none"
    name = "a key after a view switch is delivered to the shown view"
    print(
        f"  {name} {delivered:,} of {TRIALS:,} times at 0-200 ms spacing"
        f"  (target {TRIALS:,} of {TRIALS:,})"
        f"  [anchor, the focus moved as before issue 24: {anchor:,} of {ANCHOR_TRIALS:,};"
        f" astray: {astray}]  {'PASS' if ok else 'FAIL'}"
    )
    RESULTS.append((name, ok))
    return ok


def key_after_a_view_switch() -> None:
    """Figure 3.

    A key typed after a view switch is delivered to the view shown: 1,000 of 1,000 times at
    0-200 ms spacing. The demo's memo, headless and read-only (nothing falls due and re-sorts
    a list meanwhile). Each trial switches from the view in front to another (its key: ``O``
    ``P`` ``H`` ``I`` ``A`` ``E``, in a seeded random order), waits the spacing (0 ms: both
    keys in one go, as one terminal read holding both delivers them; then 0.5, 1, 2, 5, 10,
    20, 50, 100 and 200 ms, 100 trials each), sends ``j``, and counts it delivered when the
    view shown has the focus, its cursor moved one line and no hidden view's cursor moved.
    The anchor: 200 trials at the same spacings (20 each) with the focus moved as before
    issue 24 (``Widget.focus``, which moves it when a later message is handled, and hidden
    panes taking keys), counted the same way: it shows that the count sees a key go astray.
    """
    from pact_tui.demo import create_demo
    from pact_tui.screenshot import fixed_clock

    print(f"3. a key after a view switch, {TRIALS:,} trials")
    with tempfile.TemporaryDirectory(prefix="bench-custodian-") as scratch:
        path = Path(scratch) / "demo.pact"
        asyncio.run(create_demo(path, clock=fixed_clock()))
        start = time.perf_counter()
        delivered, _ = asyncio.run(key_after_switch(path, TRIALS, as_before=False))
        took = time.perf_counter() - start
        anchor, anchor_missed = asyncio.run(key_after_switch(path, ANCHOR_TRIALS, as_before=True))
    print(f"  ({TRIALS:,} trials in {fmt(took)})")
    report_delivered(delivered, anchor, anchor_missed)


def main() -> None:
    gc.freeze()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "custodian.pact"
        start = time.perf_counter()
        asyncio.run(build(path, EVENTS))
        print(f"  (a document of {EVENTS:,} events built in {fmt(time.perf_counter() - start)})")
        bench_audit(path)
        bench_doc_log(path)
        bench_events_view(path)
    key_after_a_view_switch()


if __name__ == "__main__":
    main()
