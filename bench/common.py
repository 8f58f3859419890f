"""Shared bits of the benchmarks: timing, printing a figure next to its anchor, and the plain
file watcher the change-feed figures use as their anchor."""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from engine.store.feed import WATCH_DEBOUNCE_MS, WATCH_STEP_MS

RESULTS: list[tuple[str, bool]] = []
T = TypeVar("T")
TINY = os.environ.get("BENCH_TINY") == "1"
"""``python -m bench --tiny``: every size the smallest that still runs each step (CI's smoke
run: a group that crashes fails it; the figures mean nothing and no target is checked)."""


def sized(full: T, tiny: T) -> T:
    """``full``, or ``tiny`` in a smoke run (:data:`TINY`)."""
    return tiny if TINY else full


REPO_ROOT = Path(__file__).resolve().parent.parent
WARM_UP = 5  # rounds before measuring: the other process's watcher is surely in place by then


def median_seconds(
    fn: Callable[[], object], repeat: int, setup: Callable[[], object] | None = None
) -> float:
    """Median wall time of ``fn`` over ``repeat`` runs (``setup`` runs untimed before each)."""
    samples = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def report_ratio(
    name: str,
    figure: float,
    anchor: float,
    limit: float,
    *,
    at_most: bool = True,
    unit: Callable[[float], str] = fmt,
    anchor_label: str = "anchor",
) -> bool:
    ratio = figure / anchor if anchor else float("inf")
    ok = ratio <= limit if at_most else ratio >= limit
    sign = "≤" if at_most else "≥"
    verdict = "PASS" if ok else "FAIL"
    print(
        f"  {name}: {unit(figure)}  ÷  {anchor_label} {unit(anchor)}  =  {ratio:.2f}"
        f"  (target {sign} {limit})  {verdict}"
    )
    RESULTS.append((name, ok))
    return ok


def monotonic_ns() -> int:
    # CLOCK_MONOTONIC is one clock for every process on a Linux machine: readings taken in two
    # processes can be subtracted.
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def percentile(samples: Sequence[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def report_feed(
    name: str,
    feed_ms: list[float],
    burst_ms: list[float],
    watch_ms: list[float],
    labels: tuple[str, str, str],
) -> None:
    """Print the feed's latency spread (one at a time, burst, and the raw watchfiles anchor, in
    the order of ``labels``) and check both p95s against 100 ms."""
    for label, samples in zip(labels, (feed_ms, watch_ms, burst_ms), strict=True):
        print(
            f"  {label}: p50 {statistics.median(samples):.1f} ms,"
            f" p95 {percentile(samples, 0.95):.1f} ms, max {max(samples):.1f} ms"
        )
    anchor = f"raw watchfiles p95 {percentile(watch_ms, 0.95):.1f} ms"
    for kind, samples in (("one at a time", feed_ms), ("burst", burst_ms)):
        report_limit(
            f"{name} p95, {kind}", percentile(samples, 0.95), 100, "ms", anchor_text=anchor
        )


def report_limit(
    name: str, figure: float, limit: float, unit: str, *, anchor_text: str = ""
) -> bool:
    ok = figure <= limit
    extra = f"  [{anchor_text}]" if anchor_text else ""
    print(
        f"  {name}: {figure:.1f} {unit}  (target ≤ {limit} {unit}){extra}"
        f"  {'PASS' if ok else 'FAIL'}"
    )
    RESULTS.append((name, ok))
    return ok


# -- other processes -------------------------------------------------------------------------------
def in_a_fresh_process(module: str, *args: object) -> Any:
    """``python -m <module> <args>`` in a new process (a clean heap, as a user's process would
    have) to its end; returns the JSON it prints last."""
    done = subprocess.run(
        [sys.executable, "-m", module, *map(str, args)],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


# -- the other process of the change-feed figures -------------------------------------------------
async def start_follower(module: str, *args: object) -> asyncio.subprocess.Process:
    """``python -m <module> <args>``, once it has printed ``ready`` (its watcher is in place)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        module,
        *map(str, args),
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    assert (await process.stdout.readline()).strip() == b"ready"
    return process


async def received_at(process: asyncio.subprocess.Process) -> tuple[int, int]:
    """The next ``<seq> <CLOCK_MONOTONIC ns>`` line the follower prints."""
    assert process.stdout is not None
    async with asyncio.timeout(30):  # failure guard
        seq, at = (await process.stdout.readline()).split()
    return int(seq), int(at)


async def raw_watch_round_trips(directory: Path, rounds: int) -> list[float]:
    """The anchor of the change-feed figures: ms from a plain file append here to a watchfiles
    watcher with the feed's settings noticing it in another process."""
    directory.mkdir()
    target = directory / "log"
    target.touch()
    follower = await start_follower("bench.common", "watch", target, WARM_UP + rounds)
    latencies = []
    for round_ in range(WARM_UP + rounds):
        writing = monotonic_ns()
        with target.open("a") as log:
            log.write(f"{round_}\n")
        _, delivered = await received_at(follower)
        if round_ >= WARM_UP:
            latencies.append((delivered - writing) / 1e6)
    await follower.wait()
    return latencies


async def watch(path: str, count: int) -> None:
    """The anchor's other process: the change feed's watcher settings, on a plain file."""
    from watchfiles import awatch

    name = os.path.basename(path)
    stop = asyncio.Event()
    received = 0
    ready = False
    async for changes in awatch(
        os.path.dirname(path),
        watch_filter=lambda _change, changed: os.path.basename(changed) == name,
        debounce=WATCH_DEBOUNCE_MS,
        step=WATCH_STEP_MS,
        stop_event=stop,
        recursive=False,
        rust_timeout=50,
        yield_on_timeout=True,
    ):
        if not ready:  # the first (empty) yield: the watcher is in place
            print("ready", flush=True)
            ready = True
        if not changes:
            continue
        received += 1
        print(received, monotonic_ns(), flush=True)
        if received == count:
            stop.set()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "watch":
        asyncio.run(watch(sys.argv[2], int(sys.argv[3])))


def pact_tui_seconds(*args: object) -> float:
    """Wall time of ``pact-tui ARGS`` (``python -m pact_tui``) as a process of its own."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pact_tui", *map(str, args)],
        cwd=REPO_ROOT,
        capture_output=True,
        check=True,
    )
    return time.perf_counter() - start
