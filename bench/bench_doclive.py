"""A commit by another process to the custodian's screen (``python -m bench doclive``).

The demo workspace (built with the real clock); the app follows the change feed on the document
screen of ``memo``; a writer process sends a heartbeat as the agent ``finance`` every 150 ms and
prints, after each commit, the document's event count and when the commit returned (the
CLOCK_MONOTONIC both processes share). The app notes when its status line first drew each event
count. Figure: p95 of commit → on screen ≤ 250 ms. Anchor, in the same run: the same figure for
a context (``bench_app``'s figure 3: a writer advancing ``researcher``, the status bar drawing
the episode), measured right after on the same workspace.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_app import live_latencies, on_paint
from bench.common import REPO_ROOT, fmt, monotonic_ns, percentile, report_limit, sized

COMMITS = sized(40, 3)
EVENTS = re.compile(r" (\d+) events ")


def child_writer(path: str, commits: int, interval: float) -> None:
    from engine.protocol.commands import Actor
    from engine.workspace import Workspace

    async def write() -> None:
        async with await Workspace.open(path, watch=False) as workspace:
            await workspace.load_document("memo")
            for _ in range(commits):
                await asyncio.sleep(interval)
                await workspace.run_document("memo", {"op": "heartbeat"}, Actor.agent("finance"))
                print(workspace.document("memo").sequence, monotonic_ns(), flush=True)

    asyncio.run(write())


async def document_latencies(path: Path) -> list[float]:
    from textual.widgets import Static

    from pact_tui.app import PactApp
    from pact_tui.screens.document import DocumentScreen

    app = PactApp(path, watch=True, document="memo", human="ann")
    first_seen: dict[int, int] = {}
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        await app.switch_mode("document")
        screen = app.screen
        assert isinstance(screen, DocumentScreen)
        while screen.shown is None:
            await pilot.pause(0.05)
        status = screen.query_one("#doc-status", Static)

        def painted() -> None:  # what the status line drew, not the live object under it
            found = EVENTS.search(str(status.content))
            if found is not None:
                first_seen.setdefault(int(found.group(1)), monotonic_ns())

        on_paint(app, painted)
        writer = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bench.bench_doclive",
            "writer",
            str(path),
            str(COMMITS),
            "0.15",
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
        )
        output, _ = await writer.communicate()
        committed = {
            int(n): int(t)
            for n, t in (line.split() for line in output.decode().split("\n") if line)
        }
        last = max(committed)
        deadline = time.monotonic() + 5
        while last not in first_seen and time.monotonic() < deadline:
            await pilot.pause(0.05)
    return [(first_seen[n] - t) / 1e9 for n, t in committed.items() if n in first_seen]


def main() -> None:
    from pact_tui.demo import create_demo

    print(f"a commit in another process to the custodian's screen ({COMMITS} commits)")
    with tempfile.TemporaryDirectory(prefix="bench-doclive-") as scratch:
        path = Path(scratch) / "demo.pact"
        asyncio.run(create_demo(path))
        samples = asyncio.run(document_latencies(path))
        anchor = asyncio.run(live_latencies(path))
    print(
        f"  document: seen {len(samples)} of {COMMITS}: median {fmt(statistics.median(samples))},"
        f" p95 {fmt(percentile(samples, 0.95))}, max {fmt(max(samples))}"
    )
    report_limit(
        "document commit elsewhere → on the custodian's screen, p95",
        percentile(samples, 0.95) * 1e3,
        250,
        "ms",
        anchor_text=f"a context's commit → on screen, same run: p95"
        f" {percentile(anchor, 0.95) * 1e3:.1f} ms,"
        f" median {statistics.median(anchor) * 1e3:.1f} ms",
    )
    if len(samples) < COMMITS:
        report_limit("document commits never seen on screen", COMMITS - len(samples), 0, "commits")


if __name__ == "__main__":
    if sys.argv[1:2] == ["writer"]:
        child_writer(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    else:
        main()
