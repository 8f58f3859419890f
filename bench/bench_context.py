"""Context-tree benchmarks (issue 2). Run: ``python -m bench.bench_context``.

The scenario is an agent conversation: every turn holds a message and components in slots 1-3
(9 items per turn besides the message), the active turn also carries a temporary reminder, a
sticky status and a cyclic check-in. Sizes are counted in live items.

``python -m bench --tiny context`` (CI's smoke run) builds 100 and 1,000 items, renders a few
hundred rounds less and checks no target: it only shows that every step still runs.
"""

from __future__ import annotations

import json
import subprocess
import sys

from bench.common import median_seconds, report_limit, report_ratio, sized
from engine.context import Context, SequentialIds, SteppingClock, TextContent
from engine.context.query import _matches_any, _walk  # the scan, as the anchor
from engine.context.selectors import parse_selector
from engine.context.tree import Node

ITEMS_PER_TURN = 10
SMALL, LARGE = sized(1_000, 100), sized(100_000, 1_000)
ROUNDS = sized(500, 5)  # timed repeats of the cheap figures
TEMPORARIES = sized(1_000, 100)  # the smaller slot of temporaries; the larger holds ten times


def build(items: int) -> Context:
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    turns = max(items // ITEMS_PER_TURN, 1)
    for turn in range(turns):
        context.add_user(f"message {turn}: " + "lorem ipsum dolor sit amet " * 3)
        for k in range(ITEMS_PER_TURN - 1):
            position = 1 + k % 3
            context.pact_insert(
                f"d0, {position}, {k // 3}",
                TextContent(
                    f"component {turn}.{k} " + "context " * 6,
                    key=f"k{turn}.{k}",
                    tags=["bench", f"p{position}"],
                ),
            )
    context.pact_insert("d0, 4, 0", TextContent("reminder", ttl=1_000_000, key="reminder"))
    context.pact_insert("d0, 5, 0", TextContent("status", ttl=1, cadence=1, key="status"))
    context.pact_insert("d0, 6, 0", TextContent("check in", ttl=2, cadence=5, key="checkin"))
    context.seal("built")
    return context


def with_temporaries(count: int) -> Context:
    """A short conversation whose active slot 1 holds ``count`` live temporary items: each new
    message lifts them all out and puts them back at their depth (spec §4)."""
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    context.add_user("hello")
    for k in range(count):
        context.pact_insert(f"d0, 1, {k}", TextContent(f"note {k}", ttl=1_000_000))
    return context


def scan(context: Context, selector: str) -> list[Node]:
    """What ``select`` did before the index of timers: every node walked and matched."""
    parsed = parse_selector(selector)
    return [node for node, chain in _walk(context) if _matches_any(parsed.alternatives, chain)]


def message_cost(context: Context, repeat: int) -> float:
    counter = iter(range(10**9))
    return median_seconds(lambda: context.add_user(f"next {next(counter)}"), repeat)


def step_cost(context: Context, repeat: int) -> float:
    counter = iter(range(10**9))

    def step() -> None:
        context.add_user(f"next {next(counter)}")
        context.advance()

    return median_seconds(step, repeat)


def high_water_mb() -> float:
    """This process's peak resident memory (VmHWM: reset by exec, unlike ru_maxrss)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def peak_memory_mb(items: int) -> float:
    code = (
        "import bench.bench_context as b\n"
        f"c = b.build({items})\n"
        "assert c.item_count() >= %d\n"
        "print(b.high_water_mb())\n" % (items - 10)
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return float(out.stdout.strip())


def baseline_memory_mb() -> float:
    code = "import bench.bench_context as b\nprint(b.high_water_mb())\n"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return float(out.stdout.strip())


def main() -> None:
    print("context tree (issue 2)")
    small, large = build(SMALL), build(LARGE)
    print(f"  built {small.item_count()} and {large.item_count()} live items")

    # 2. a coordinate range selection
    sel = "d1-3, 1, *"
    assert len(large.select(sel)) == len(small.select(sel)) > 0
    s = median_seconds(lambda: small.select(sel), ROUNDS)
    l_ = median_seconds(lambda: large.select(sel), ROUNDS)
    report_ratio(f"select({sel!r}) at 100k ÷ at 1k", l_, s, 3.0, anchor_label="at 1k")

    # 2b. a quick filter on a timer: answered from the index of the items with a ttl (issue 27)
    quick = "[remaining<=1]"
    assert [n.id for n in large.select(quick)] == [n.id for n in scan(large, quick)]
    indexed = median_seconds(lambda: large.select(quick), ROUNDS)
    scanned = median_seconds(lambda: scan(large, quick), sized(3, 1))
    report_limit(
        f"select({quick!r}) at 100k (the quick filter), median",
        indexed * 1e3,
        100.0,
        "ms",
        anchor_text=f"the scan of every node it replaced: {scanned * 1e3:.0f} ms",
    )

    # 3. seal
    s = median_seconds(lambda: small.seal("bench"), ROUNDS)
    l_ = median_seconds(lambda: large.seal("bench"), ROUNDS)
    report_ratio("seal() at 100k ÷ at 1k", l_, s, 3.0, anchor_label="at 1k")

    # 1. one add_user + advance (ODI, expiry, rehydration and the episode snapshot)
    s, l_ = step_cost(small, sized(300, 3)), step_cost(large, sized(300, 3))
    report_ratio("add_user+advance at 100k ÷ at 1k", l_, s, 3.0, anchor_label="at 1k")

    # 1b. a message over many temporary items in one slot: linear in them (10x), not quadratic
    few, many = with_temporaries(TEMPORARIES), with_temporaries(10 * TEMPORARIES)
    s, l_ = message_cost(few, sized(30, 3)), message_cost(many, sized(30, 3))
    report_ratio(
        "add_user over 10k temporary items in one slot ÷ over 1k",
        l_,
        s,
        10.0,
        anchor_label="over 1k",
    )

    # 4. peak memory of a process holding 100k items
    base = baseline_memory_mb()
    peak = peak_memory_mb(LARGE)
    report_limit(
        "peak RSS holding 100k items",
        peak,
        300.0,
        "MB",
        anchor_text=f"interpreter with the engine imported: {base:.1f} MB",
    )

    # 5. provider rendering vs json.dumps of the same contents
    contents = [item.content for item, *_ in large.iter_items()]
    rendered = large.render_provider_json()
    assert len(json.loads(rendered)) == len(contents)
    anchor = median_seconds(lambda: json.dumps(contents), 7)
    figure = median_seconds(large.render_provider_json, 7)
    report_ratio(
        f"provider rendering of {len(contents)} items ÷ json.dumps(contents)",
        figure,
        anchor,
        5.0,
        anchor_label="json.dumps",
    )


if __name__ == "__main__":
    main()
