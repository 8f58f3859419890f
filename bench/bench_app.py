"""Inspector app benchmarks (issue 4). Run: ``python -m bench app``.

Every figure is measured in this run next to its anchor:

1. cold start to the first full paint of the demo scaled to 100,000 items ÷ the cold start of a
   minimal Textual app that shows one label: ≤ 2.0 (issue 27; 2.5 before). Both are fresh
   headless processes; the time runs from spawning the process to the first frame composed
   with the tree on screen (the child reads CLOCK_MONOTONIC, one clock for every process).
   Median of 7 each, one of each in turn; both start from compiled bytecode (the first run of
   each writes it).
2. the "advance" key to the repainted screen, at 100,000 items (median ≤ 50 ms) and at
   100,000 ÷ at 1,000 (≤ 2). In-process and headless: the key is simulated, and the time runs
   to the first frame composed showing the new episode (the terminal write is not included).
3. a commit in another process to the change on screen: p95 ≤ 250 ms. A writer process
   advances the context every 150 ms and prints when each commit returned; the app (following
   the change feed, as it does live) notes when each episode is first composed on screen.

4. big items (issue 10): the provider view of a context holding two 10 MB messages, from the
   ``v`` key to the first frame composed showing it with the detail of the item under the
   cursor ÷ the same with two 10 KB messages: ≤ 2; and quitting: ``q`` is pressed a second
   after that frame (a person has looked), and the time runs from then to the parent seeing
   the process end (one clock for both): ≤ 1 s. A key pressed while the app is busy is read
   when it is free, as from a terminal, so a quit waits for whatever is being drawn. Each run
   is a fresh headless process (median of 3).

5. filter mode (issue 14): at 100,000 items, with ``+notes`` matching 16,666 of them kept in
   the selector bar, the f key (filter) to the first frame composed showing only the matches and
   their turns and slots (and the status line's count): median ≤ 100 ms. Anchor, same run: a plain
   cursor move (the down key) to its frame. In-process and headless, as figure 2.

6. selector typing (issue 27): at 100,000 items, a selector that scans every item (``.text``)
   typed a key every 60 ms: each key to the first frame composed showing it in the input,
   while the matches of what was typed before are found in a thread ÷ the same for a selector
   the key index answers at once (``#text``): median ≤ 2. Printed too: one match of
   ``.text``, which the input's path used to wait for after each pause in typing.

7. a scripted session at 100,000 items (issue 27): advances, cursor steps (the detail telling
   each item's story), selector typing, filter mode on and off, the provider view and back, and
   the story of the oldest item. Printed: the longest garbage collection (``gc.callbacks``,
   target ≤ 50 ms), the cursor step → repaint median (target ≤ 16 ms), ``v`` → the provider
   view's frame (target ≤ 100 ms), and the oldest item's story told in the detail. Anchor,
   same run: the advance → repaint median of the session.

The module is also the child processes: ``python -m bench.bench_app minimal|pact|writer|big …``;
``python -m bench.bench_app big-items`` runs benchmark 4 alone, ``… filter`` benchmark 5.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import (
    REPO_ROOT,
    fmt,
    monotonic_ns,
    percentile,
    report_limit,
    report_ratio,
    sized,
)

SMALL, LARGE = sized(1_000, 200), sized(100_000, 2_000)
# characters of each of the two messages
BIG_ITEM, SMALL_ITEM = sized(10_000_000, 100_000), sized(10_000, 1_000)
BIG_RUNS = sized(3, 1)
QUIT_AFTER = sized(1.0, 0.1)  # seconds after the provider view is drawn that q is pressed
STARTS = sized(7, 1)
WARM_STARTS = sized(1, 0)  # untimed starts before those: the file cache and bytecode warmed
ADVANCES = sized(30, 3)
COMMITS = sized(40, 3)
FILTERS = sized(15, 1)  # times filter mode is turned on (and off again between)
FILTER_WARM_UP = sized(2, 0)  # rounds of filter mode before those, untimed: they warm caches up
TYPED_WORDS = sized(3, 1)  # times each selector is typed (then cleared)
SESSION_STEPS, SESSION_VIEWS = sized(20, 3), sized(3, 1)  # figure 7's cursor steps, v presses
FILTERED = "+notes"  # one item of six in the scaled demo: 16,666 of 100,000


def on_paint(app: Any, callback: Callable[[], None]) -> None:
    """Call ``callback`` after every frame the app composes (headless: not written out)."""
    display = app._display

    def display_and_note(screen: Any, renderable: Any) -> None:
        display(screen, renderable)
        if renderable is not None:
            callback()

    app._display = display_and_note


# -- child processes ------------------------------------------------------------------------------
def child_minimal() -> None:
    from textual.app import App
    from textual.widgets import Label

    class Minimal(App[None]):
        def compose(self) -> Any:
            yield Label("hello")

    app = Minimal()

    def painted() -> None:
        print(monotonic_ns(), flush=True)
        app.exit()

    on_paint(app, painted)
    app.run(headless=True)


def child_pact(path: str, context: str = "researcher") -> None:
    from engine.heap import pause_start

    pause_start()  # before the app's imports, as the command's entry point (pact_tui/launch.py)
    from pact_tui.app import PactApp
    from pact_tui.screens.context import ContextScreen

    app = PactApp(path, watch=False, context=context)
    done = False

    def painted() -> None:
        nonlocal done
        screen = app.screen
        if not done and isinstance(screen, ContextScreen) and screen.view is not None:
            done = True
            print(monotonic_ns(), flush=True)
            app.exit()

    on_paint(app, painted)
    app.run(headless=True)


def child_big(path: str) -> None:
    """Open ``path`` on its context ``big``, press ``v``, and print when the key was pressed,
    when the provider view was first drawn with the item under the cursor described, and when
    ``q`` was pressed (``QUIT_AFTER`` later; read when the app is free)."""
    from textual.widgets import ContentSwitcher

    from pact_tui.app import PactApp
    from pact_tui.screens.context import ContextScreen
    from pact_tui.widgets.detail import NodeDetail

    app = PactApp(path, watch=False, context="big")
    stage = "opening"

    def press_v() -> None:
        print("key", monotonic_ns(), flush=True)
        app.simulate_key("v")

    def painted() -> None:
        nonlocal stage
        screen = app.screen
        if not isinstance(screen, ContextScreen) or screen.view is None:
            return
        if stage == "opening":
            stage = "switching"
            app.call_later(press_v)  # a key posted while a frame is drawn is lost
            return
        subject = screen.query_one(NodeDetail).subject
        shown = screen.query_one(ContentSwitcher).current == "provider"
        if stage == "switching" and shown and subject is not None and subject.row.item:
            stage = "quitting"
            painted_ns = monotonic_ns()
            print("painted", painted_ns, flush=True)
            print("quit", painted_ns + int(QUIT_AFTER * 1e9), flush=True)
            app.set_timer(QUIT_AFTER, lambda: app.simulate_key("q"))

    on_paint(app, painted)
    app.run(headless=True)


def child_writer(path: str, commits: int, interval: float) -> None:
    from engine.context import Advanced
    from engine.workspace import Workspace

    async def write() -> None:
        async with await Workspace.open(path, watch=False) as workspace:
            for _ in range(commits):
                await asyncio.sleep(interval)
                result = await workspace.run("researcher", {"op": "advance"})
                assert isinstance(result, Advanced)
                print(result.episode, monotonic_ns(), flush=True)

    asyncio.run(write())


# -- 1. cold start ---------------------------------------------------------------------------
def cold_start(
    args: list[str], module: str = "bench.bench_app", env: dict[str, str] | None = None
) -> float:
    """Seconds from spawning ``python -m <module> <args>`` (``env`` added to this process's
    environment) to the CLOCK_MONOTONIC reading it prints last: its first paint."""
    start = monotonic_ns()
    done = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "TEXTUAL_ANIMATIONS": "none", **(env or {})},
    )
    painted = int(done.stdout.split()[-1])
    return (painted - start) / 1e9


def bench_cold_start(large: Path) -> None:
    print(f"1. cold start to the first full paint ({STARTS} runs each, median)")
    # Warm the file cache for both, and start both from compiled bytecode, as installed
    # packages do (pip compiles them; an editable install or PYTHONDONTWRITEBYTECODE=1 would
    # make only the app compile its own modules on every start: about 90 ms at the time).
    compiled = {"PYTHONDONTWRITEBYTECODE": ""}
    for _ in range(WARM_STARTS):
        cold_start(["minimal"], env=compiled)
        cold_start(["pact", str(large)], env=compiled)
    # Alternated, so that a change in the machine's load while they run (it is shared) falls
    # on both alike rather than on one block of runs.
    starts = [(cold_start(["minimal"]), cold_start(["pact", str(large)])) for _ in range(STARTS)]
    minimal = statistics.median(m for m, _p in starts)
    pact = statistics.median(p for _m, p in starts)
    report_ratio(
        "cold start at 100k items ÷ minimal Textual app", pact, minimal, 2.0, anchor_label="minimal"
    )


# -- 2. advance to repaint ------------------------------------------------------------------------
async def advance_latencies(path: Path) -> list[float]:
    from pact_tui.app import PactApp
    from pact_tui.screens.context import ContextScreen
    from pact_tui.widgets.status import StatusBar

    app = PactApp(path, watch=False, context="researcher")
    samples: list[float] = []
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ContextScreen) and screen.view is not None
        shown = asyncio.Event()
        wanted = -1

        bar = screen.query_one(StatusBar)

        def painted() -> None:  # what the status bar drew, not the live object under it
            episode = bar.status.episode if bar.status is not None else None
            if episode is not None and episode >= wanted:
                shown.set()

        on_paint(app, painted)
        for _ in range(ADVANCES + 3):
            wanted = screen.view.current_episode + 1
            shown.clear()
            start = time.perf_counter()
            app.simulate_key("full_stop")
            await asyncio.wait_for(shown.wait(), timeout=10)
            samples.append(time.perf_counter() - start)
            await pilot.pause()
    return samples[3:]  # the first few warm caches up


def bench_advance(small: Path, large: Path) -> None:
    print(f"2. the advance key to the repainted screen ({ADVANCES} advances, median)")
    at_small = statistics.median(asyncio.run(advance_latencies(small)))
    at_large = statistics.median(asyncio.run(advance_latencies(large)))
    print(f"  at 1k items: {fmt(at_small)}   at 100k items: {fmt(at_large)}")
    report_limit(
        "advance → repaint at 100k, median", at_large * 1e3, 50, "ms", anchor_text="headless"
    )
    report_ratio("advance → repaint, 100k ÷ 1k", at_large, at_small, 2, anchor_label="at 1k")


# -- 3. another process's commit to the screen ----------------------------------------------------
async def live_latencies(path: Path) -> list[float]:
    from pact_tui.app import PactApp
    from pact_tui.screens.context import ContextScreen
    from pact_tui.widgets.status import StatusBar

    app = PactApp(path, watch=True, context="researcher")
    first_seen: dict[int, int] = {}
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ContextScreen)

        bar = screen.query_one(StatusBar)

        def painted() -> None:  # what the status bar drew, not the live object under it
            episode = bar.status.episode if bar.status is not None else None
            if episode is not None:
                first_seen.setdefault(episode, monotonic_ns())

        on_paint(app, painted)
        writer = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bench.bench_app",
            "writer",
            str(path),
            str(COMMITS),
            "0.15",
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
        )
        output, _ = await writer.communicate()
        committed = {
            int(e): int(t)
            for e, t in (line.split() for line in output.decode().split("\n") if line)
        }
        last = max(committed)
        deadline = time.monotonic() + 5
        while last not in first_seen and time.monotonic() < deadline:
            await pilot.pause(0.05)
    return [(first_seen[e] - t) / 1e9 for e, t in committed.items() if e in first_seen]


def bench_live(path: Path) -> None:
    print(f"3. a commit in another process to the screen ({COMMITS} commits)")
    samples = asyncio.run(live_latencies(path))
    print(
        f"  seen {len(samples)} of {COMMITS}: median {fmt(statistics.median(samples))}, "
        f"p95 {fmt(percentile(samples, 0.95))}, max {fmt(max(samples))}"
    )
    report_limit("commit elsewhere → on screen, p95", percentile(samples, 0.95) * 1e3, 250, "ms")


# -- 4. big items --------------------------------------------------------------------------------
async def build_big(path: Path, size: int) -> None:
    """A context ``big`` holding a user and an assistant message of ``size`` characters each,
    in lines of prose."""
    from engine.workspace import Workspace

    line = "lorem ipsum dolor sit amet, consectetur adipiscing elit " * 2 + "\n"
    body = (line * (size // len(line) + 1))[:size]
    async with await Workspace.open(path, create=True, watch=False) as workspace:
        await workspace.create_context("big")
        await workspace.run("big", {"op": "message", "role": "user", "text": body})
        await workspace.run("big", {"op": "message", "role": "assistant", "text": body})


def big_run(path: Path) -> tuple[float, float]:
    """One fresh process: (the v key to the provider view drawn, the q key to the process
    gone), in seconds."""
    child = subprocess.Popen(
        [sys.executable, "-m", "bench.bench_app", "big", str(path)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TEXTUAL_ANIMATIONS": "none"},
    )
    output, _ = child.communicate(timeout=600)
    gone = monotonic_ns()
    times = dict(line.split() for line in output.splitlines() if line)
    if child.returncode != 0 or set(times) != {"key", "painted", "quit"}:
        raise RuntimeError(f"the child failed ({child.returncode}): {output!r}")
    paint = (int(times["painted"]) - int(times["key"])) / 1e9
    return paint, (gone - int(times["quit"])) / 1e9


def bench_big_items(directory: Path) -> None:
    print(f"4. big items: the provider view with two messages ({BIG_RUNS} runs each, median)")
    paths = {}
    for size in (SMALL_ITEM, BIG_ITEM):
        paths[size] = directory / f"big-{size}.pact"
        asyncio.run(build_big(paths[size], size))
    for _ in range(WARM_STARTS):  # warm the file cache and the imports
        big_run(paths[SMALL_ITEM])
    runs = {size: [big_run(paths[size]) for _ in range(BIG_RUNS)] for size in paths}
    paint = {size: statistics.median(p for p, _ in runs[size]) for size in runs}
    quit_ = {size: statistics.median(q for _, q in runs[size]) for size in runs}
    print(f"  quit with two 10 KB items: {fmt(quit_[SMALL_ITEM])}")
    report_ratio(
        "provider view, v → first paint, two 10 MB items ÷ two 10 KB",
        paint[BIG_ITEM],
        paint[SMALL_ITEM],
        2,
        anchor_label="10 KB",
    )
    report_limit(
        "quit with two 10 MB items, q → process gone",
        quit_[BIG_ITEM] * 1e3,
        1000,
        "ms",
        anchor_text=f"10 KB items: {fmt(quit_[SMALL_ITEM])}",
    )


def big_items_only() -> None:
    """Benchmark 4 alone: ``python -m bench.bench_app big-items``."""
    print("Inspector app (pact_tui), benchmark 4 only")
    with tempfile.TemporaryDirectory(prefix="bench-app-") as scratch:
        bench_big_items(Path(scratch))


# -- 5. filter mode on to repaint -----------------------------------------------------------------
async def filter_latencies(path: Path) -> tuple[list[float], list[float], int, int]:
    """(F to the filtered frame, each time; the down key to its frame, each time; matches;
    rows shown), in seconds."""
    from pact_tui.app import PactApp
    from pact_tui.screens.context import STORY_DELAY, ContextScreen
    from pact_tui.widgets.status import StatusBar

    app = PactApp(path, watch=False, context="researcher")
    on_samples: list[float] = []
    move_samples: list[float] = []
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ContextScreen) and screen.view is not None
        tree = screen.context_tree
        bar = screen.query_one(StatusBar)
        await pilot.press("home")  # the system region's header (the cursor opened on d0's)
        screen.selector = FILTERED  # as if typed and kept: the matches are found once, here
        await pilot.pause()
        matches = len(screen.matches)
        shown = asyncio.Event()
        wanted: Callable[[], bool] = lambda: False  # noqa: E731

        def painted() -> None:  # what was drawn: the status bar's count, the cursor's line
            if wanted():
                shown.set()

        on_paint(app, painted)

        async def timed(key: str, condition: Callable[[], bool]) -> float:
            nonlocal wanted
            # As a person pauses between keys: the detail's story of the row the last key left
            # the cursor on is read by then (a worker on the loop), and not timed with this key.
            await pilot.pause(2 * STORY_DELAY)
            await app.workers.wait_for_complete()
            wanted = condition
            shown.clear()
            start = time.perf_counter()
            app.simulate_key(key)
            await asyncio.wait_for(shown.wait(), timeout=30)
            elapsed = time.perf_counter() - start
            wanted = lambda: False  # noqa: E731
            await pilot.pause()
            return elapsed

        def filtered() -> bool:
            status = bar.status
            return status is not None and status.filtered is not None

        def unfiltered() -> bool:
            status = bar.status
            return status is not None and status.filtered is None

        def at_line(line: int) -> Callable[[], bool]:
            return lambda: tree.cursor_line == line

        rows = 0
        filter_key = app.key_for("filter")  # F was filter before the one keymap (issue 25)
        for round_ in range(FILTERS + FILTER_WARM_UP):
            on = await timed(filter_key, filtered)
            rows = tree.line_count
            await timed(filter_key, unfiltered)
            # Down from a turn's header to its message's (turning the filter on and off puts
            # the cursor back on the turn's): the cursor stays on header rows, where the detail
            # reads no item's story from the log (a replay of the context that the workspace
            # keeps, whose heap every later full collection walks: not this figure's cost).
            move = await timed("down", at_line(tree.cursor_line + 1))
            row = tree.current_row
            assert row is not None and row.item is None, row
            if round_ >= FILTER_WARM_UP:
                on_samples.append(on)
                move_samples.append(move)
    return on_samples, move_samples, matches, rows


def bench_filter(large: Path) -> None:
    print(f"5. filter mode on, f to the repainted screen ({FILTERS} times, median)")
    on, move, matches, rows = asyncio.run(filter_latencies(large))
    print(
        f"  {FILTERED}: {matches:,} matches, {rows:,} rows shown;"
        f" f: median {fmt(statistics.median(on))}, max {fmt(max(on))};"
        f" a cursor move: median {fmt(statistics.median(move))}"
    )
    report_limit(
        f"filter mode on ({matches // 1000}k matches of 100k) → repaint, median",
        statistics.median(on) * 1e3,
        100,
        "ms",
        anchor_text=f"a cursor move → repaint: {fmt(statistics.median(move))}",
    )


TYPED = ".text"  # a node type: a scan of every item


async def typing_latencies(
    path: Path, typed: str = ".text"
) -> tuple[list[float], float, float, int]:
    """(each key of ``typed`` to the frame showing it in the input; one match of it; the last
    key to its matches shown; how many), in seconds."""
    from pact_tui.app import PactApp
    from pact_tui.screens.context import ContextScreen
    from pact_tui.widgets.selector_bar import SelectorBar

    app = PactApp(path, watch=False, context="researcher")
    samples: list[float] = []
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ContextScreen) and screen.view is not None
        start = time.perf_counter()
        matches = len(screen.view.select(typed))
        scan = time.perf_counter() - start
        await pilot.press("slash")
        field = screen.query_one(SelectorBar).input
        shown = asyncio.Event()
        wanted = ""

        def painted() -> None:
            if wanted and field.value == wanted:
                shown.set()

        on_paint(app, painted)
        for _ in range(TYPED_WORDS):  # three words typed, then cleared
            for count in range(1, len(typed) + 1):
                wanted = typed[:count]
                shown.clear()
                start = time.perf_counter()
                app.simulate_key(typed[count - 1])
                await asyncio.wait_for(shown.wait(), timeout=60)
                samples.append(time.perf_counter() - start)
                await asyncio.sleep(0.06)  # a quick typist
            start = time.perf_counter()
            while screen.matching or len(screen.matches) != matches:
                await pilot.pause(0.01)
            found = time.perf_counter() - start
            wanted = ""
            for _ in typed:
                await pilot.press("backspace")
            while screen.matching or screen.selection.text:
                await pilot.pause(0.01)
    return samples, scan, found, matches


INDEXED = "#text"  # as long, answered by the key index at once


def bench_typing(large: Path) -> None:
    print(f"6. typing {TYPED!r} in the selector bar, a key every 60 ms, three times")
    keys, scan, found, matches = asyncio.run(typing_latencies(large, TYPED))
    cheap, _, _, _ = asyncio.run(typing_latencies(large, INDEXED))
    print(
        f"  key → its frame: median {fmt(statistics.median(keys))}, max {fmt(max(keys))};"
        f" one match of {TYPED!r} ({matches:,} items): {fmt(scan)}, which the input's path"
        f" waited for before; last key → matches shown {fmt(found)}; typing {INDEXED!r}"
        f" (no scan): median {fmt(statistics.median(cheap))}, max {fmt(max(cheap))}"
    )
    report_ratio(
        f"a key → repaint while {TYPED!r} is matched at 100k ÷ while typing {INDEXED!r}, median",
        statistics.median(keys),
        statistics.median(cheap),
        2.0,
        anchor_label=f"typing {INDEXED!r}",
    )


def typing_only() -> None:
    """Benchmark 6 alone: ``python -m bench.bench_app typing``."""
    print("Inspector app (pact_tui), benchmark 6 only")
    with tempfile.TemporaryDirectory(prefix="bench-app-") as scratch:
        bench_typing(build(Path(scratch), LARGE))


async def session(path: Path) -> dict[str, Any]:
    """Figure 7's session; every time in seconds."""
    import gc

    from textual.widget import Widget

    from pact_tui.app import PactApp
    from pact_tui.screens.context import STORY_DELAY, ContextScreen
    from pact_tui.widgets.status import StatusBar

    pauses: list[float] = []
    started: list[tuple[float, float]] = []
    cpu: list[float] = []  # each collection's CPU time (the machine is shared: wall time waits)
    doing = ["opening"]  # the session's phase, to say where the longest collection fell
    longest: dict[str, float] = {}

    def collected(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started.append((time.perf_counter(), time.thread_time()))
        elif started:
            wall, thread = started.pop()
            pause = time.perf_counter() - wall
            pauses.append(pause)
            cpu.append(time.thread_time() - thread)
            longest[doing[0]] = max(longest.get(doing[0], 0.0), pause)

    app = PactApp(path, watch=False, context="researcher")
    times: dict[str, list[float]] = {"advance": [], "step": [], "provider": [], "story": []}
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ContextScreen) and screen.view is not None
        bar = screen.query_one(StatusBar)
        gc.callbacks.append(collected)
        try:
            shown = asyncio.Event()
            wanted: Callable[[], bool] = lambda: False  # noqa: E731

            def painted() -> None:
                if wanted():
                    shown.set()

            on_paint(app, painted)

            async def timed(key: str, condition: Callable[[], bool], label: str) -> None:
                nonlocal wanted
                wanted = condition
                shown.clear()
                start = time.perf_counter()
                app.simulate_key(key)
                await asyncio.wait_for(shown.wait(), timeout=60)
                times[label].append(time.perf_counter() - start)
                wanted = lambda: False  # noqa: E731
                await pilot.pause()

            def at_episode(episode: int) -> Callable[[], bool]:
                return lambda: bar.status is not None and bar.status.episode == episode

            def at_line(line: int) -> Callable[[], bool]:
                return lambda: tree.cursor_line == line

            def drawn(widget: Widget) -> Callable[[], bool]:
                return lambda: widget.display and widget.size.height > 0

            doing[0] = "advances"
            for _ in range(5):
                await timed("full_stop", at_episode(screen.view.current_episode + 1), "advance")
            tree = screen.context_tree
            doing[0] = "steps"
            for _ in range(SESSION_STEPS):  # up from the active turn the cursor opened on
                await timed("up", at_line(tree.cursor_line - 1), "step")
                await pilot.pause(STORY_DELAY)  # as a person reads: the story is told
            doing[0] = "typing"
            await pilot.press("slash", *TYPED)
            while screen.matching or screen.selection.text != TYPED:
                await pilot.pause(0.01)
            await pilot.press("enter")
            doing[0] = "filter"
            screen.selector = FILTERED
            await pilot.press(app.key_for("filter"))  # F was filter before the one keymap
            await pilot.pause(0.2)
            await pilot.press(app.key_for("filter"))
            doing[0] = "provider view"
            for _ in range(SESSION_VIEWS):
                await timed("v", drawn(screen.query_one("#provider")), "provider")
                await pilot.pause(0.2)
                await pilot.press("v")
                await pilot.pause(0.2)
            doing[0] = "story"
            items = [n for n in screen.workspace.context("researcher").select("*") if n.item]
            oldest = min(items, key=lambda n: n.creation_index or 0)
            start = time.perf_counter()
            await screen.workspace.item_story("researcher", oldest.id)
            times["story"].append(time.perf_counter() - start)
        finally:
            gc.callbacks.remove(collected)
    return {**{k: v for k, v in times.items()}, "pauses": pauses, "cpu": cpu, "longest": longest}


def bench_session(large: Path) -> None:
    print("7. a scripted session at 100k items: advances, steps, typing, filter, v, a story")
    got = asyncio.run(session(large))
    pauses = got["pauses"]
    step, advance = statistics.median(got["step"]), statistics.median(got["advance"])
    print(
        f"  {len(pauses)} collections, the longest {fmt(max(pauses, default=0.0))}"
        f" (the most CPU one took: {fmt(max(got['cpu'], default=0.0))});"
        f" cursor step median {fmt(step)};"
        f" v → provider view {', '.join(map(fmt, got['provider']))};"
        f" the oldest item's story {fmt(got['story'][0])}; advance median {fmt(advance)}"
    )
    print(
        "  the longest collection by phase: "
        + ", ".join(f"{phase} {fmt(pause)}" for phase, pause in got["longest"].items())
    )
    anchor = f"advance → repaint median {fmt(advance)}"
    report_limit(
        "longest garbage collection in the session",
        max(pauses, default=0.0) * 1e3,
        50,
        "ms",
        anchor_text=anchor,
    )
    report_limit("cursor step → repaint at 100k, median", step * 1e3, 16, "ms", anchor_text=anchor)
    report_limit(
        "v → provider view at 100k, median",
        statistics.median(got["provider"]) * 1e3,
        100,
        "ms",
        anchor_text=anchor,
    )


def session_only() -> None:
    """Benchmark 7 alone: ``python -m bench.bench_app session``."""
    print("Inspector app (pact_tui), benchmark 7 only")
    with tempfile.TemporaryDirectory(prefix="bench-app-") as scratch:
        bench_session(build(Path(scratch), LARGE))


def filter_only() -> None:
    """Benchmark 5 alone: ``python -m bench.bench_app filter``."""
    print("Inspector app (pact_tui), benchmark 5 only")
    with tempfile.TemporaryDirectory(prefix="bench-app-") as scratch:
        bench_filter(build(Path(scratch), LARGE))


def build(directory: Path, items: int) -> Path:
    from pact_tui.demo import create_scaled_demo

    path = directory / f"demo-{items}.pact"
    start = time.perf_counter()
    asyncio.run(create_scaled_demo(path, items))
    print(f"  built the demo at {items:,} items in {fmt(time.perf_counter() - start)}")
    return path


def main() -> None:
    print("Inspector app (pact_tui)")
    with tempfile.TemporaryDirectory(prefix="bench-app-") as scratch:
        directory = Path(scratch)
        small, large = build(directory, SMALL), build(directory, LARGE)
        bench_cold_start(large)
        bench_advance(small, large)
        bench_live(large)
        bench_big_items(directory)
        bench_filter(large)
        bench_typing(large)
        bench_session(large)


if __name__ == "__main__":
    role = sys.argv[1] if len(sys.argv) > 1 else ""
    if role == "minimal":
        child_minimal()
    elif role == "pact":
        child_pact(*sys.argv[2:4])
    elif role == "big":
        child_big(sys.argv[2])
    elif role == "big-items":
        big_items_only()
    elif role == "filter":
        filter_only()
    elif role == "typing":
        typing_only()
    elif role == "session":
        session_only()
    elif role == "writer":
        child_writer(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    else:
        main()
