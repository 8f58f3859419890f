"""The salience heatmap at 1,000 agents x 500 sections (``python -m bench heatmap``).

The document: 1,000 agents joined, each setting its salience on 50 sections (50,000 cells set),
decided by the engine, appended to a workspace and checkpointed as on closing. Figures, each
next to its anchor measured in this run:

1. cold start to the heatmap's first paint ÷ cold start to the context tree's first paint at
   100,000 items (``bench_app``'s figure 1 child): ≤ 2. Both are fresh headless processes; the
   time runs from spawning the process to the first frame composed with the grid (or the tree)
   on screen. The heatmap child opens the workspace read-only, switches to the document screen
   and to the heatmap as soon as it can (median of 5 each, one of each in turn); both pause the
   collector from their first import, as the ``pact-tui`` command does.
2. a scroll step (a key moving the cell cursor: down, right, page down, in turn) to the next
   frame composed: median ≤ 30 ms; the anchor is the same step of the context tree's cursor at
   100,000 items.
3. the heatmap's own work for a change to the document shown (an agent sets its salience on a
   section in sight): its new grid and the lines it draws for the next frame, median ≤ 30 ms
   (a frame's budget, as the scroll step's). The grid is made anew for each change: the rows'
   and columns' order and the marks, none of the 500,000 cells. The anchor, in the same app, is
   the whole screen's time from learning of the change (its ``revision`` moved, as the change
   feed or its own command moves it) to that frame: every view bound to the document is in it.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.bench_app import WARM_STARTS, cold_start, on_paint
from bench.bench_protocol import sectioned
from bench.common import fmt, monotonic_ns, percentile, report_limit, report_ratio, sized

# At least 10 agents and sections: figure 3 changes the first ten's cells.
AGENTS, SECTIONS, PER_AGENT = sized(1_000, 20), sized(500, 20), sized(50, 5)
CONTEXT_ITEMS = sized(100_000, 1_000)
STARTS, STEPS, CHANGES = sized(5, 1), sized(30, 3), sized(20, 2)
KEYS = ("down", "right", "pagedown")
BUILT_MS = 1_000  # the protocol time of every event of the bench's document


async def build(
    path: Path, agents: int = AGENTS, sections: int = SECTIONS, per_agent: int = PER_AGENT
) -> None:
    """A workspace whose document ``plan`` has the heatmap's agents and cells, checkpointed
    (``agents`` x ``sections``, each agent setting ``per_agent`` scores)."""
    from engine.documents import DOC_PREFIX, creation_event
    from engine.protocol.commands import Actor
    from engine.protocol.decide import decide
    from engine.protocol.document import Document
    from engine.protocol.envelope import CountingIds
    from engine.store import NewEvent, SqliteEventStore
    from engine.workspace import Workspace

    ids, doc = CountingIds(), Document()
    now = BUILT_MS
    first = creation_event(
        name="plan",
        markdown=sectioned(sections),
        document_id=ids.uuid(),
        event_id=ids.uuid(),
        epoch_ms=now,
        human="ann",
        policy="single",
        window_s=60,
        strategy="first-wins",
        default_trust="Collaborator",
    )
    doc.apply(first)
    events: list[dict[str, Any]] = [first]
    for i in range(agents):
        me = Actor.agent(f"agent-{i:04d}")
        events += decide(doc, {"op": "join", "agentName": me.name}, me, now, ids).events
    for i in range(agents):
        me = Actor.agent(f"agent-{i:04d}")
        for j in range(per_agent):
            section = f"sec:section-{(i * 7 + j * 10) % sections}"
            command = {"op": "salience", "sectionId": section, "score": (i + j) % 11}
            events += decide(doc, command, me, now, ids).events
    async with await SqliteEventStore.open(path, create=True, watch=False) as store:
        for at in range(0, len(events), 20_000):
            batch = events[at : at + 20_000]
            await store.append(
                [
                    NewEvent(DOC_PREFIX + "plan", e["eventType"], e, e["actorDisplay"], 0)
                    for e in batch
                ]
            )
    async with await Workspace.open(path, watch=False) as workspace:
        await workspace.load_document("plan")
        await workspace.checkpoint()


def child_heatmap(path: str) -> None:
    """Open ``path`` read-only, go to its document's heatmap, print when it is first drawn."""
    from engine.heap import pause_start

    pause_start()  # before the app's imports, as the command's entry point (and the anchor's)
    from pact_tui.app import PactApp
    from pact_tui.screens.document import DocumentScreen
    from pact_tui.widgets.heatmap import SalienceHeatmap

    app = PactApp(path, watch=False, read_only=True, document="plan")
    state = {"asked": False, "done": False}

    def painted() -> None:
        screen = app.screen
        if not state["asked"]:
            state["asked"] = True
            app.call_later(app.switch_mode, "document")
            return
        if isinstance(screen, DocumentScreen) and screen.shown is not None:
            if screen.view != "heatmap":
                screen.view = "heatmap"
                return
            heatmap = screen.query_one(SalienceHeatmap)
            if not state["done"] and len(heatmap.grid.agents) == AGENTS and heatmap.display:
                state["done"] = True
                print(monotonic_ns(), flush=True)
                app.exit()

    on_paint(app, painted)
    app.run(headless=True)


async def step_latencies(path: Path, document: bool) -> list[float]:
    """Milliseconds from each cursor key to the next frame composed: the heatmap's cell cursor
    (``document``) or the context tree's."""
    from pact_tui.app import PactApp
    from pact_tui.screens.document import DocumentScreen
    from pact_tui.widgets.heatmap import SalienceHeatmap

    app = PactApp(path, watch=False, read_only=True, context=None if document else "researcher")
    samples: list[float] = []
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        if document:
            await app.switch_mode("document")
            screen = app.screen
            assert isinstance(screen, DocumentScreen)
            while screen.shown is None:
                await pilot.pause(0.05)
            screen.view = "heatmap"
            await pilot.pause()
            assert len(screen.query_one(SalienceHeatmap).grid.agents) == AGENTS
        drawn = asyncio.Event()
        on_paint(app, drawn.set)
        for n in range(STEPS + 3):
            await pilot.pause()
            drawn.clear()
            start = time.perf_counter()
            # The tree opens at its end (where it follows the active turn): its cursor goes up.
            app.simulate_key(KEYS[n % len(KEYS)] if document else "up")
            await asyncio.wait_for(drawn.wait(), timeout=10)
            samples.append((time.perf_counter() - start) * 1e3)
    return samples[3:]


async def change_latencies(path: Path) -> tuple[list[float], list[float]]:
    """For each salience change reaching the screen: the milliseconds the heatmap spent on it
    (its regrid and its lines until the next frame), and the whole time to that frame."""
    from engine.protocol.commands import Actor
    from pact_tui.app import PactApp
    from pact_tui.screens.document import DocumentScreen
    from pact_tui.widgets.heatmap import SalienceHeatmap

    # The document's own time (just after ``build``'s): the agents are not due for eviction.
    app = PactApp(path, watch=False, document="plan", clock=lambda: BUILT_MS * 1_000_000 + 1)
    own: list[float] = []
    whole: list[float] = []
    spent = [0.0]

    def timed(method: Any) -> Any:
        def run(*args: Any) -> Any:
            start = time.perf_counter()
            try:
                return method(*args)
            finally:
                spent[0] += time.perf_counter() - start

        return run

    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        await app.switch_mode("document")
        screen = app.screen
        assert isinstance(screen, DocumentScreen)
        while screen.shown is None:
            await pilot.pause(0.05)
        screen.view = "heatmap"
        await pilot.pause()
        heatmap = screen.query_one(SalienceHeatmap)
        heatmap.regrid = timed(heatmap.regrid)  # type: ignore[method-assign]
        heatmap.render_line = timed(heatmap.render_line)  # type: ignore[method-assign]
        workspace = screen.workspace
        drawn = asyncio.Event()
        on_paint(app, drawn.set)
        for n in range(CHANGES + 3):
            await pilot.pause()
            agent = heatmap.grid.agents[n % 10]
            section = heatmap.grid.sections[n % 10]
            command = {"op": "salience", "sectionId": section.id, "score": n % 11}
            await workspace.run_document("plan", command, Actor.agent(agent.name))
            await pilot.pause()
            drawn.clear()
            spent[0] = 0.0
            start = time.perf_counter()
            screen.revision = workspace.document("plan").sequence
            await asyncio.wait_for(drawn.wait(), timeout=10)
            whole.append((time.perf_counter() - start) * 1e3)
            own.append(spent[0] * 1e3)
            assert heatmap.grid.cell(agent.id, section.key)[1] == n % 11
    return own[3:], whole[3:]


def main() -> None:
    from pact_tui.demo import create_scaled_demo

    print(f"the salience heatmap: {AGENTS:,} agents x {SECTIONS} sections")
    with tempfile.TemporaryDirectory(prefix="bench-heatmap-") as scratch:
        heat, tree = Path(scratch) / "heat.pact", Path(scratch) / "tree.pact"
        start = time.perf_counter()
        asyncio.run(build(heat))
        asyncio.run(create_scaled_demo(tree, CONTEXT_ITEMS))
        print(f"  (built both workspaces in {fmt(time.perf_counter() - start)})")
        heat_child = [sys.executable, "-m", "bench.bench_heatmap", "child", str(heat)]
        for _ in range(WARM_STARTS):  # warm the file cache for both
            cold_start(["pact", str(tree)])
            cold_start_heat(heat_child)
        # One of each in turn: a change of the shared machine's load falls on both alike.
        starts = [
            (cold_start(["pact", str(tree)]), cold_start_heat(heat_child)) for _ in range(STARTS)
        ]
        trees = statistics.median(t for t, _h in starts)
        heats = statistics.median(h for _t, h in starts)
        report_ratio(
            "1. cold start to the heatmap's first paint ÷ the context tree's at 100k items",
            heats,
            trees,
            2,
            anchor_label="context tree",
        )
        heat_steps = asyncio.run(step_latencies(heat, True))
        tree_steps = asyncio.run(step_latencies(tree, False))
        report_limit(
            "2. heatmap scroll step → repaint, median",
            statistics.median(heat_steps),
            30,
            "ms",
            anchor_text=f"context tree's cursor step at 100k items, median"
            f" {statistics.median(tree_steps):.1f} ms; heatmap p95"
            f" {sorted(heat_steps)[int(0.95 * (len(heat_steps) - 1))]:.1f} ms",
        )
        own, whole = asyncio.run(change_latencies(heat))
        report_limit(
            "3. the heatmap's own work for a salience change (new grid, lines drawn), median",
            statistics.median(own),
            30,
            "ms",
            anchor_text=f"the whole screen, change → frame, median {statistics.median(whole):.1f}"
            f" ms (p95 {percentile(whole, 0.95):.1f} ms); heatmap p95"
            f" {percentile(own, 0.95):.1f} ms",
        )


def cold_start_heat(command: list[str]) -> float:
    import os
    import subprocess

    start = monotonic_ns()
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "TEXTUAL_ANIMATIONS": "none"},
    )
    return (int(done.stdout.split()[-1]) - start) / 1e9


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        child_heatmap(sys.argv[2])
    else:
        main()
